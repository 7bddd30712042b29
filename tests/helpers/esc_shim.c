/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A seccomp shim around dshbox for the fallback tests (STYLE 15): `esc_shim MODES -- CMD ARGS...`
 * installs a filter that makes the kernel look as if it lacked a feature, then execs CMD.  MODES is
 * a comma-separated list of:
 *   userns     unshare/clone with CLONE_NEWUSER fail with EPERM (Ubuntu's AppArmor, containers),
 *              clone3 with ENOSYS (so every namespace request goes through a filtered clone)
 *   userns-nosys  the same with ENOSYS
 *   netns      unshare/clone with CLONE_NEWNET fail with EPERM, clone3 with ENOSYS: user namespaces
 *              work, network namespaces do not (a container runtime that forbids them)
 *   pidfd      pidfd_open fails with ENOSYS (a kernel before 5.3, or a runtime that filters it)
 *   landlock   landlock_create_ruleset fails with ENOSYS (a kernel without Landlock)
 *   landlock-off  ... with EOPNOTSUPP (Landlock built in, not enabled at boot)
 *   seccomp    seccomp() and prctl(PR_SET_SECCOMP) fail with EINVAL (no CONFIG_SECCOMP_FILTER)
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <seccomp.h>

/* Namespace requests with flag set fail with err; clone3 hides its flags in memory a filter cannot
   read, so it fails with ENOSYS and callers fall back to a filtered clone. */
static int refuse_ns(scmp_filter_ctx ctx, unsigned long flag, int err)
{
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), SCMP_SYS(unshare), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* Two modes may both ask for the clone3 rule: libseccomp refuses a duplicate with EEXIST. */
	return rc == -EEXIST ? 0 : rc;
}

static int userns(scmp_filter_ctx ctx, int err)
{
	return refuse_ns(ctx, CLONE_NEWUSER, err);
}

int main(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: esc_shim MODES -- CMD [ARGS...]\n");
		return 2;
	}
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc = 0;
	char modes[256];
	snprintf(modes, sizeof(modes), "%s", argv[1]);
	for (char *save = NULL, *m = strtok_r(modes, ",", &save); m && rc == 0; m = strtok_r(NULL, ",", &save)) {
		if (strcmp(m, "userns") == 0)
			rc = userns(ctx, EPERM);
		else if (strcmp(m, "userns-nosys") == 0)
			rc = userns(ctx, ENOSYS);
		else if (strcmp(m, "netns") == 0)
			rc = refuse_ns(ctx, CLONE_NEWNET, EPERM);
		else if (strcmp(m, "pidfd") == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(pidfd_open), 0);
		else if (strcmp(m, "landlock") == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), __NR_landlock_create_ruleset, 0);
		else if (strcmp(m, "landlock-off") == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), __NR_landlock_create_ruleset, 0);
		else if (strcmp(m, "seccomp") == 0) {
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(seccomp), 0);
			if (rc == 0)
				rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(prctl), 1,
						      SCMP_A0(SCMP_CMP_EQ, PR_SET_SECCOMP));
		} else {
			fprintf(stderr, "esc_shim: unknown mode '%s'\n", m);
			return 2;
		}
	}
	if (rc == 0)
		rc = seccomp_load(ctx); /* sets no_new_privs itself */
	if (rc < 0) {
		fprintf(stderr, "esc_shim: %s\n", strerror(-rc));
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[3], argv + 3);
	perror("esc_shim: exec");
	return 127;
}
