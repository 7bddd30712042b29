/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A sandbox inside the sandbox (SPEC 1.5 `nestedSandbox`, issue 12): with `nestedSandbox: true` a
 * `dshbox run` inside `dshbox run` uses linux-ns and the outer rules still hold inside it; with the
 * default it fails with one error line that says what to change.  The locked mounts themselves are
 * the escape suite's (tests/escape: nested_sandbox_keeps_the_mounts_locked).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL };

struct fx {
	char *top, *ws, *secret, *ro, *cfg;
	char *deny, *readonly;
};

static char *join(const char *a, const char *b)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", a, b) > 0);
	return s;
}

static void fx_init(struct fx *f, const char *config)
{
	f->top = dsh_test_mkdtemp();
	f->ws = join(f->top, "ws");
	/* Outside the workspace: with the broker off (below) nothing of the rules is lost then. */
	f->secret = join(f->top, "secret/key");
	f->ro = join(f->top, "ro/file");
	f->cfg = join(f->top, "outer.yml");
	dsh_test_write_file(f->secret, "SECRET-NESTED\n");
	dsh_test_write_file(f->ro, "orig\n");
	dsh_test_write_file(f->cfg, config);
	cr_assert(mkdir(f->ws, 0755) == 0);
	cr_assert(asprintf(&f->deny, "-- %s/secret", f->top) > 0);
	cr_assert(asprintf(&f->readonly, "r- %s/ro", f->top) > 0);
}

static void fx_free(struct fx *f)
{
	_cleanup_free_ char *s = dsh_test_read_file(f->secret), *r = dsh_test_read_file(f->ro);
	cr_expect_str_eq(s ? s : "", "SECRET-NESTED\n", "host oracle: the masked file changed");
	cr_expect_str_eq(r ? r : "", "orig\n", "host oracle: the r- file changed");
	dsh_test_rmtree(f->top);
	free(f->top), free(f->ws), free(f->secret), free(f->ro), free(f->cfg), free(f->deny), free(f->readonly);
}

/* The outer `dshbox run` with the fixture's rules, running an inner `dshbox run ARGS...`. */
static void outer_inner(struct dsh_proc *r, const struct fx *f, const char *inner_cmd)
{
	char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
			 (char *)dsh_test_dshbox(), "run", "--config", f->cfg, "--workspace", f->ws, "--cwd", f->ws,
			 "--access", f->deny, "--access", f->readonly, "--", "/bin/sh", "-c", (char *)inner_cmd, NULL };
	/* Linux 5.12+ lets a user namespace map uid 0 only when its creator had CAP_SETFCAP, which the
	   command never has: so root runs the scenario as nobody, over a tree nobody owns. */
	char **run = argv + 5;
	if (geteuid() == 0) {
		_cleanup_free_ char *own = NULL;
		cr_assert(asprintf(&own, "chown -R 65534:65534 '%s' && chmod 755 '%s'", f->top, f->top) > 0);
		cr_assert_eq(system(own), 0);
		run = argv;
	}
	cr_assert_eq(dsh_proc_run(run, env, NULL, r), 0);
}

Test(run_nested, dshbox_inside_dshbox_with_nested_sandbox)
{
	struct fx f;
	/* runtimeBroker: off works around a broker limitation, reported: the broker answers openat2
	   for the command and cannot hand back an O_PATH descriptor (SECCOMP_IOCTL_NOTIF_ADDFD
	   refuses those with EBADF), and the inner dshbox opens its tree with O_PATH.  No default-
	   protected names and rules outside the workspace, so that the broker's absence loses none. */
	fx_init(&f, "nestedSandbox: true\nruntimeBroker: off\nprotectDefaults: false\n");
	/* The outer sandbox's /proc has read-only mounts on /proc/sys and friends, so the kernel refuses
	   the inner one a fresh procfs: the inner run refuses unless allowed to bind the outer
	   sandbox's own /proc (its processes are the outer sandbox's), and then says so. */
	_cleanup_free_ char *cmd = NULL;
	cr_assert(asprintf(&cmd,
			   "'%s' run --dry-run -- true | head -1; "
			   "'%s' run -- true 2>/dev/null || echo refused-without-allow-degraded; "
			   "'%s' run --allow-degraded -- sh -c 'cat %s 2>/dev/null || echo masked; "
			   "(echo x > %s) 2>/dev/null || echo read-only; echo inner-ran'",
			   dsh_test_dshbox(), dsh_test_dshbox(), dsh_test_dshbox(), f.secret, f.ro) > 0);
	struct dsh_proc r;
	outer_inner(&r, &f, cmd);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "dshbox: warning:") && strstr(r.err, "/proc"), "the fallback is said: %s", r.err);
	cr_expect_str_eq(r.out, "backend: linux-ns\nrefused-without-allow-degraded\nmasked\nread-only\ninner-ran\n",
			 "stderr: %s", r.err);
	cr_expect_null(strstr(r.out, "SECRET-NESTED"), "the secret leaked");
	dsh_proc_clear(&r);
	fx_free(&f);
}

Test(run_nested, dshbox_inside_dshbox_by_default_says_why_not)
{
	struct fx f;
	fx_init(&f, "protectSockets: true\n");
	_cleanup_free_ char *cmd = NULL;
	cr_assert(asprintf(&cmd, "'%s' run --backend linux-ns -- echo inner-ran", dsh_test_dshbox()) > 0);
	struct dsh_proc r;
	outer_inner(&r, &f, cmd);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect_str_eq(r.out, "", "the inner command must not run");
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "nestedSandbox: true") != NULL, "the message does not say what to change: %s", r.err);
	dsh_proc_clear(&r);
	fx_free(&f);
}
