/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Dropping every capability, in a forked child that first becomes root of its own user namespace. */
#include <sched.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <linux/securebits.h>

#include "seccomp/caps.h"
#include "tests/unit/child_check.h"

static void drop_child(void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWUSER) < 0)
		fail("unshare(CLONE_NEWUSER): %s", strerror(errno));
	if (dsh_caps_none_left(false))
		fail("a fresh user namespace should hold every capability");
	struct dsh_caps_result res;
	struct dsh_error *err = NULL;
	if (dsh_caps_drop_all(&res, &err) < 0)
		fail("drop: %s", err->msg);
	if (!res.securebits_locked || !res.bounding_cleared)
		fail("with CAP_SETPCAP both steps must happen");
	if (!dsh_caps_none_left(true))
		fail("capabilities left");
	int bits = prctl(PR_GET_SECUREBITS);
	if (!(bits & SECBIT_NOROOT_LOCKED) || !(bits & SECBIT_NOROOT) ||
	    !(bits & SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) || !(bits & SECBIT_KEEP_CAPS_LOCKED))
		fail("securebits %#x not locked", bits);
	EXPECT_ERRNO(prctl(PR_SET_SECUREBITS, 0, 0, 0, 0), EPERM);
	EXPECT_ERRNO(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN, 0, 0), EPERM);
	/* a second user namespace would give everything back: that is seccomp's and the lock's job,
	   but setuid(0) must not restore anything either */
}

Test(caps, drop_all_in_a_user_namespace)
{
	/* Where user namespaces are refused (a host that forbids them, or inside a sandbox that does,
	   as dshbox run does without nestedSandbox), there is nothing to drop into. */
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) < 0 ? errno : 0);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		DSH_SKIP("user namespaces are refused here (unshare: %s)", strerror(WEXITSTATUS(status)));
	in_child(drop_child, NULL);
}

static void unpriv_child(void *arg)
{
	(void)arg;
	struct dsh_caps_result res;
	struct dsh_error *err = NULL;
	if (dsh_caps_drop_all(&res, &err) < 0)
		fail("drop: %s", err->msg);
	if (!dsh_caps_none_left(res.bounding_cleared))
		fail("capabilities left");
	if (geteuid() != 0 && (res.securebits_locked || res.bounding_cleared))
		fail("an unprivileged caller cannot lock securebits or clear the bounding set");
}

Test(caps, drop_all_in_the_callers_namespace)
{
	in_child(unpriv_child, NULL);
}
