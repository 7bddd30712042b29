/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `dshbox bwrap` as a host sees it (SPEC 8): the dsh host's read-only and workspace-write argv,
 * run through dshbox — writes outside the workspace fail with "Read-only file system", the
 * command's exit status passes through, "bwrap: " appears only when dshbox itself failed — and the
 * same argv under the real bubblewrap: the same paths readable and writable, the same exit codes
 * and the same failure lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/bin:/bin", NULL };

static char *ws, *out;

static void setup(void)
{
	ws = dsh_test_mkdtemp();
	out = dsh_test_mkdtemp();
	char p[4096];
	snprintf(p, sizeof(p), "%s/file", ws);
	dsh_test_write_file(p, "in the workspace\n");
	snprintf(p, sizeof(p), "%s/sub/deeper", ws);
	dsh_test_write_file(p, "below\n");
	snprintf(p, sizeof(p), "%s/file", out);
	dsh_test_write_file(p, "outside\n");
}

static void teardown(void)
{
	dsh_test_rmtree(ws);
	dsh_test_rmtree(out);
	free(ws);
	free(out);
}

TestSuite(bwrap, .init = setup, .fini = teardown);

enum shape { READ_ONLY, WORKSPACE_WRITE };

/*
 * The dsh host's argv: --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent
 * [--tmpfs /tmp --bind WS WS] [--unshare-net] -- sh -c SCRIPT.  runner NULL: dshbox bwrap.
 */
static void run_shape(const char *runner, enum shape s, bool net_off, const char *script, struct dsh_proc *r)
{
	_cleanup_strv_ char **argv = NULL;
	if (runner)
		dsh_strv_push(&argv, runner);
	else {
		dsh_strv_push(&argv, dsh_test_dshbox());
		dsh_strv_push(&argv, "bwrap");
	}
	const char *fixed[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
				"--die-with-parent" };
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		dsh_strv_push(&argv, fixed[i]);
	if (s == WORKSPACE_WRITE) {
		dsh_strv_push(&argv, "--tmpfs");
		dsh_strv_push(&argv, "/tmp");
		dsh_strv_push(&argv, "--bind");
		dsh_strv_push(&argv, ws);
		dsh_strv_push(&argv, ws);
	}
	if (net_off)
		dsh_strv_push(&argv, "--unshare-net");
	dsh_strv_push(&argv, "--");
	dsh_strv_push(&argv, "/bin/sh");
	dsh_strv_push(&argv, "-c");
	dsh_strv_push(&argv, script);
	cr_assert_eq(dsh_proc_run(argv, env, NULL, r), 0);
}

static void run_args(const char *runner, char *const *args, struct dsh_proc *r)
{
	_cleanup_strv_ char **argv = NULL;
	if (runner)
		dsh_strv_push(&argv, runner);
	else {
		dsh_strv_push(&argv, dsh_test_dshbox());
		dsh_strv_push(&argv, "bwrap");
	}
	for (size_t i = 0; args[i]; i++)
		dsh_strv_push(&argv, args[i]);
	cr_assert_eq(dsh_proc_run(argv, env, NULL, r), 0);
}

/* The same argv under bubblewrap (bw) and dshbox bwrap: the same status, output and errors; and
   ours shows want (when given). */
static void same_as_bubblewrap(const char *bw, char *const *args, const char *want)
{
	struct dsh_proc theirs, ours;
	run_args(bw, args, &theirs);
	run_args(NULL, args, &ours);
	cr_expect_eq(ours.exit_code, theirs.exit_code, "%s", ours.err);
	cr_expect_str_eq(ours.out, theirs.out);
	if (want)
		cr_expect(strstr(ours.out, want), "%s", ours.out);
	cr_expect_str_eq(ours.err, theirs.err);
	dsh_proc_clear(&theirs);
	dsh_proc_clear(&ours);
}

/* Whether this machine can build a linux-ns sandbox at all (dshbox probe says). */
static void require_sandbox(void)
{
	struct dsh_proc r;
	char *argv[] = { (char *)dsh_test_dshbox(), "bwrap", "--ro-bind", "/", "/", "--proc", "/proc", "--",
			 "/bin/true", NULL };
	cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
	bool ok = r.exit_code == 0;
	_cleanup_free_ char *why = strdup(r.err);
	dsh_proc_clear(&r);
	if (!ok)
		DSH_SKIP("dshbox bwrap cannot build a sandbox here: %s", why);
}

Test(bwrap, workspace_write_argv)
{
	require_sandbox();
	char script[8192], tmpname[64];
	snprintf(tmpname, sizeof(tmpname), "/tmp/dshbox-bwrap-probe.%d", (int)getpid());
	snprintf(script, sizeof(script),
		 "echo new > '%s/new' && echo ws-ok; echo x > '%s/file' || echo out-refused;"
		 "echo x > /etc/dshbox-bwrap-probe || echo etc-refused; echo t > %s && echo tmp-ok; exit 42",
		 ws, out, tmpname);
	struct dsh_proc r;
	run_shape(NULL, WORKSPACE_WRITE, false, script, &r);
	cr_expect_eq(r.exit_code, 42, "exit status %d, stderr: %s", r.exit_code, r.err);
	cr_expect(strstr(r.out, "ws-ok\n"), "the workspace is writable: %s / %s", r.out, r.err);
	cr_expect(strstr(r.out, "out-refused\n") && strstr(r.out, "etc-refused\n"), "%s", r.out);
	cr_expect(strstr(r.out, "tmp-ok\n"), "the private /tmp is writable: %s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "/bin/sh:"), 2, "two refusals: %s", r.err);
	cr_expect(strstr(r.err, "Read-only file system"), "%s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "bwrap: "), 0, "%s", r.err);
	dsh_proc_clear(&r);
	char p[4096];
	snprintf(p, sizeof(p), "%s/new", ws);
	_cleanup_free_ char *got = dsh_test_read_file(p);
	cr_expect_str_eq(got, "new\n");
	snprintf(p, sizeof(p), "%s/file", out);
	_cleanup_free_ char *kept = dsh_test_read_file(p);
	cr_expect_str_eq(kept, "outside\n");
	struct stat st;
	cr_expect(stat(tmpname, &st) < 0 && errno == ENOENT, "a write to the private /tmp reached the host");
}

Test(bwrap, read_only_argv)
{
	require_sandbox();
	char script[8192];
	snprintf(script, sizeof(script), "cat '%s/file'; echo x > '%s/file' || echo ws-refused; exit 3", ws, ws);
	struct dsh_proc r;
	run_shape(NULL, READ_ONLY, true, script, &r);
	cr_expect_eq(r.exit_code, 3, "exit status %d, stderr: %s", r.exit_code, r.err);
	cr_expect_str_eq(r.out, "in the workspace\nws-refused\n");
	cr_expect(strstr(r.err, "Read-only file system"), "%s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "bwrap: "), 0, "%s", r.err);
	dsh_proc_clear(&r);
}

Test(bwrap, exit_status_and_signal_pass_through)
{
	require_sandbox();
	static const char *scripts[] = { "exit 0", "exit 1", "exit 125", "kill -TERM $$", "kill -KILL $$" };
	static const int want[] = { 0, 1, 125, 128 + 15, 128 + 9 };
	for (size_t i = 0; i < 5; i++) {
		struct dsh_proc r;
		run_shape(NULL, WORKSPACE_WRITE, false, scripts[i], &r);
		cr_expect_eq(r.exit_code, want[i], "%s: exit %d signal %d (%s)", scripts[i], r.exit_code, r.signal, r.err);
		cr_expect_str_eq(r.err, "", "%s: nothing of dshbox's own", scripts[i]);
		dsh_proc_clear(&r);
	}
}

Test(bwrap, dshbox_failures_are_one_bwrap_line_and_exit_1)
{
	char *cases[][14] = {
		{ "--frobnicate", "true", NULL },
		{ "--bind", "/a", NULL },
		{ "--ro-bind", "/", "/", "--hostname", "h", "--unshare-uts", "true", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--unshare-user", "--cap-add", "CAP_SYS_ADMIN", "true", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--unshare-user", "--unshare-net", "--cap-add", "ALL",
		  "--cap-drop", "CAP_SYS_ADMIN", "true", NULL },
		{ "--ro-bind", "/", "/", "--mqueue", "/dev/mqueue", "true", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--bind", "/var/tmp", "/", "true", NULL },
		{ "--ro-bind", "/", "/", "true", NULL },
		{ "--ro-bind", "/", "/", "--bind", "/nonexistent-dshbox", "/nonexistent-dshbox", "true", NULL },
		{ "--perms", "0700", "--bind", "/", "/", "true", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dsh_proc r;
		run_args(NULL, cases[i], &r);
		cr_expect_eq(r.exit_code, 1, "case %zu: exit %d (%s)", i, r.exit_code, r.err);
		cr_expect_eq(dsh_count_lines_with_prefix(r.err, "bwrap: "), 1, "case %zu: %s", i, r.err);
		cr_expect_eq(strchr(r.err, '\n') - r.err + 1, (long)strlen(r.err), "case %zu: one line: %s", i, r.err);
		cr_expect_str_eq(r.out, "");
		dsh_proc_clear(&r);
	}
}

Test(bwrap, command_not_found_is_bwraps_line)
{
	require_sandbox();
	char *args[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "dshbox-no-such-command", NULL };
	struct dsh_proc r;
	run_args(NULL, args, &r);
	cr_expect_eq(r.exit_code, 1);
	cr_expect_str_eq(r.err, "bwrap: execvp dshbox-no-such-command: No such file or directory\n");
	dsh_proc_clear(&r);
}

Test(bwrap, invoked_as_bwrap)
{
	require_sandbox();
	char link[4096];
	snprintf(link, sizeof(link), "%s/bwrap", out);
	cr_assert_eq(symlink(dsh_test_dshbox(), link), 0);
	char *args[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--", "/bin/sh", "-c", "exit 9", NULL };
	struct dsh_proc r;
	run_args(link, args, &r);
	cr_expect_eq(r.exit_code, 9, "%s", r.err);
	dsh_proc_clear(&r);
	char *bad[] = { "--frob", NULL };
	run_args(link, bad, &r);
	cr_expect_eq(r.exit_code, 1);
	cr_expect_str_eq(r.err, "bwrap: Unknown option --frob\n");
	dsh_proc_clear(&r);
	char *none[] = { NULL };
	run_args(link, none, &r);
	cr_expect_eq(r.exit_code, 1, "no command: bubblewrap's usage and exit 1");
	cr_expect(strncmp(r.err, "usage: ", 7) == 0 && strncmp(r.err + 7, link, strlen(link)) == 0, "%s", r.err);
	dsh_proc_clear(&r);
}

Test(bwrap, dry_run_lists_additions_and_strict_drops_them)
{
	char *args[] = { "--dry-run", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
			 "--tmpfs", "/tmp", "--bind", ws, ws, "--", "true", NULL };
	struct dsh_proc r;
	run_args(NULL, args, &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "dshbox adds: seccomp"), "%s", r.out);
	cr_expect(strstr(r.out, "dshbox adds: runtime broker"), "%s", r.out);
	cr_expect(strstr(r.out, "dshbox adds: namespace: ipc"), "%s", r.out);
	cr_expect(strstr(r.out, "ro-root      /"), "%s", r.out);
	cr_expect(strstr(r.out, "--bind "), "%s", r.out);
	cr_expect(strstr(r.out, "then in argv order:"), "%s", r.out);
	cr_expect(strstr(r.out, "--tmpfs /tmp\n"), "a 0755 tmpfs, as bubblewrap's, in argv order: %s", r.out);
	dsh_proc_clear(&r);
	char *strict[] = { "--dry-run", "--dshbox-compat=strict", "--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc",
			   "true", NULL };
	run_args(NULL, strict, &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_null(strstr(r.out, "dshbox adds: seccomp"), "%s", r.out);
	cr_expect_null(strstr(r.out, "dshbox adds: runtime broker"), "%s", r.out);
	cr_expect_null(strstr(r.out, " ipc"), "%s", r.out);
	cr_expect_null(strstr(r.out, "Landlock"), "%s", r.out);
	dsh_proc_clear(&r);
}

/* ---- the differential test: the same argv under the real bubblewrap ---- */

TestSuite(bwrap_vs_bubblewrap, .init = setup, .fini = teardown);

static const char *real_bwrap(void)
{
	if (access("/usr/bin/bwrap", X_OK) != 0)
		DSH_SKIP("bubblewrap is not installed (tools/install-deps.sh installs it)");
	struct dsh_proc r;
	char *argv[] = { "/usr/bin/bwrap", "--ro-bind", "/", "/", "/bin/true", NULL };
	cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
	bool ok = r.exit_code == 0;
	dsh_proc_clear(&r);
	if (!ok)
		DSH_SKIP("bubblewrap cannot run here (no unprivileged user namespaces?)");
	return "/usr/bin/bwrap";
}

/* A probe set: for each path, r when it can be read (listed), w when a new file can be made in it
   (a directory) or it can be opened for appending (a file); then the loopback-only check. */
static char *probe_script(void)
{
	char *s = NULL;
	cr_assert(asprintf(&s,
			   "for p in '%s' '%s/sub' '%s/sub/deeper' '%s/file' '%s' '%s/file' '%s/d' '%s/l' /etc /etc/passwd "
			   "/tmp /var/tmp /dev/null /dev/shm /proc/self /; do r=-; w=-;"
			   " if [ -d \"$p\" ]; then ls \"$p\" >/dev/null 2>&1 && r=r;"
			   "  f=\"$p/.dshbox-bwrap-probe.$$\"; if ( : > \"$f\" ) 2>/dev/null; then w=w; rm -f \"$f\"; fi;"
			   " elif [ -e \"$p\" ]; then cat \"$p\" >/dev/null 2>&1 && r=r; ( : >> \"$p\" ) 2>/dev/null && w=w; fi;"
			   " m=$(stat -c %%A \"$p\" 2>/dev/null); l=;"
			   " case \"$p\" in /dev/shm) m=;; /proc/self) ;; *) l=$(readlink \"$p\");; esac;"
			   " echo \"$p $r$w $m $l\"; done;"
			   " echo net $(grep -c : /proc/net/dev);"
			   " exit 5",
			   ws, ws, ws, ws, out, out, out, out) > 0);
	return s;
}

/* args, then `-- /bin/sh -c script`, under bubblewrap bw (theirs) and dshbox bwrap (ours). */
static void run_both(const char *bw, char ***args, const char *script, struct dsh_proc *theirs,
		     struct dsh_proc *ours)
{
	dsh_strv_push(args, "--");
	dsh_strv_push(args, "/bin/sh");
	dsh_strv_push(args, "-c");
	dsh_strv_push(args, script);
	run_args(bw, *args, theirs);
	run_args(NULL, *args, ours);
}

/* The same exit status, output and error output; what names the comparison in a failure. */
static void expect_same(const struct dsh_proc *theirs, const struct dsh_proc *ours, const char *what)
{
	cr_expect_eq(ours->exit_code, theirs->exit_code, "%s: exit: dshbox %d, bwrap %d (%s)", what, ours->exit_code,
		     theirs->exit_code, ours->err);
	cr_expect_str_eq(ours->out, theirs->out, "%s differs:\n--- bwrap\n%s--- dshbox bwrap\n%s", what, theirs->out,
			 ours->out);
	cr_expect_str_eq(ours->err, theirs->err, "%s", what);
}

/* Run argv (ws and out substituted for the words WS and OUT) under both, and compare. */
static void compare_argv(const char *const *words)
{
	const char *bw = real_bwrap();
	require_sandbox();
	_cleanup_free_ char *script = probe_script();
	_cleanup_strv_ char **args = NULL;
	for (size_t i = 0; words[i]; i++) {
		if (strncmp(words[i], "WS", 2) == 0)
			dsh_strv_pushf(&args, "%s%s", ws, words[i] + 2);
		else if (strncmp(words[i], "OUT", 3) == 0)
			dsh_strv_pushf(&args, "%s%s", out, words[i] + 3);
		else
			dsh_strv_push(&args, words[i]);
	}
	struct dsh_proc theirs, ours;
	run_both(bw, &args, script, &theirs, &ours);
	expect_same(&theirs, &ours, "probe");
	dsh_proc_clear(&theirs);
	dsh_proc_clear(&ours);
}

static void compare_shape(enum shape s, bool net_off)
{
	const char *bw = real_bwrap();
	require_sandbox();
	_cleanup_free_ char *script = probe_script();
	struct dsh_proc theirs, ours;
	run_shape(bw, s, net_off, script, &theirs);
	run_shape(NULL, s, net_off, script, &ours);
	cr_expect_eq(ours.exit_code, theirs.exit_code, "exit: dshbox %d, bwrap %d", ours.exit_code, theirs.exit_code);
	cr_expect_str_eq(ours.out, theirs.out, "probe differs:\n--- bwrap\n%s--- dshbox bwrap\n%s", theirs.out, ours.out);
	cr_expect_str_eq(ours.err, theirs.err);
	dsh_proc_clear(&theirs);
	dsh_proc_clear(&ours);
}

Test(bwrap_vs_bubblewrap, read_only)
{
	compare_shape(READ_ONLY, false);
}

Test(bwrap_vs_bubblewrap, read_only_network_off)
{
	compare_shape(READ_ONLY, true);
}

Test(bwrap_vs_bubblewrap, workspace_write)
{
	compare_shape(WORKSPACE_WRITE, false);
}

Test(bwrap_vs_bubblewrap, workspace_write_network_off)
{
	compare_shape(WORKSPACE_WRITE, true);
}

Test(bwrap_vs_bubblewrap, failure_lines_and_exit_codes)
{
	const char *bw = real_bwrap();
	require_sandbox();
	char *cases[][14] = {
		{ "--frobnicate", "true", NULL },
		{ "--bind", "/a", NULL },
		{ "--perms", "0700", "--bind", "/", "/", "true", NULL },
		{ "--size", "0", "--tmpfs", "/tmp", "true", NULL },
		{ "--ro-bind", "/", "/", "--bind", "/nonexistent-dshbox", "/nonexistent-dshbox", "true", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "dshbox-no-such-command", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--bind-try", "/nonexistent-dshbox", "/nonexistent-dshbox",
		  "/bin/sh", "-c", "exit 4", NULL },
		{ "--ro-bind", "/", "/", "--hostname", "h", "true", NULL },
		{ "--ro-bind", "/", "/", "--as-pid-1", "true", NULL },
		{ "--ro-bind", "/", "/", "--chmod", "99", "/x", "true", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--bind", "/nonexistent-dshbox", "/nonexistent-dshbox", "true",
		  NULL },
		{ "--bind", "/nonexistent-dshbox", "/x", "--ro-bind", "/", "/", "--proc", "/proc", "true", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--seccomp", "299", "true", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--uid", "5", "--gid", "6", "/bin/sh", "-c", "id -u; id -g",
		  NULL },
		{ "--cap-add", "setfcap", "true", NULL },
		{ "--ro-bind", "/", "/", "--cap-drop", "cap_frob", "true", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dsh_proc theirs, ours;
		run_args(bw, cases[i], &theirs);
		run_args(NULL, cases[i], &ours);
		cr_expect_eq(ours.exit_code, theirs.exit_code, "case %zu: dshbox %d, bwrap %d", i, ours.exit_code,
			     theirs.exit_code);
		cr_expect_str_eq(ours.err, theirs.err, "case %zu", i);
		dsh_proc_clear(&theirs);
		dsh_proc_clear(&ours);
	}
}

/* sandbox-runtime's shape: writable workspace, a denied directory as an empty tmpfs, a denied file
   covered by /dev/null, a new session. */
Test(bwrap_vs_bubblewrap, deny_read_with_tmpfs_and_dev_null)
{
	const char *argv[] = { "--new-session", "--die-with-parent", "--ro-bind", "/", "/", "--bind", "WS", "WS",
			       "--tmpfs", "OUT", "--ro-bind", "/dev/null", "WS/file", "--dev", "/dev", "--unshare-pid",
			       "--proc", "/proc", "--unshare-net", NULL };
	compare_argv(argv);
}

/* Codex's shape: read-only root, writable roots, read-only subpaths inside them. */
Test(bwrap_vs_bubblewrap, writable_root_with_read_only_subpath)
{
	const char *argv[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--bind", "WS", "WS", "--ro-bind", "WS/sub",
			       "WS/sub", "--unshare-user", "--unshare-pid", "--proc", "/proc", "--unshare-net", NULL };
	compare_argv(argv);
}

/* Order: a later bind over an earlier one's parent uncovers it, as in bubblewrap. */
Test(bwrap_vs_bubblewrap, later_mount_over_earlier_parent)
{
	const char *argv[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--ro-bind", "WS/sub", "WS/sub", "--bind",
			       "WS", "WS", "--ro-bind", "WS/sub/deeper", "WS/sub/deeper", NULL };
	compare_argv(argv);
}

/* sandbox-runtime's order: binds first, then --ro-bind / /, which covers them (the writable bind
   and the tmpfs are gone again); what follows it counts. */
Test(bwrap_vs_bubblewrap, ro_bind_root_after_other_operations)
{
	const char *argv[] = { "--bind", "WS", "WS", "--tmpfs", "OUT", "--bind-try", "/nonexistent-dshbox", "/x",
			       "--ro-bind", "/", "/", "--bind", "WS/sub", "WS/sub", "--dev", "/dev", "--proc", "/proc",
			       NULL };
	compare_argv(argv);
}

/* Names made inside a tmpfs: --perms for the next operation only, --dir, --symlink, --chmod,
   --size, then --remount-ro. */
Test(bwrap_vs_bubblewrap, names_inside_a_tmpfs)
{
	const char *argv[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--size", "1048576", "--perms", "0750",
			       "--tmpfs", "OUT", "--perms", "0700", "--dir", "OUT/d", "--dir", "OUT/d2",
			       "--symlink", "/etc/passwd", "OUT/l", "--chmod", "0711", "OUT/d2", "--remount-ro", "OUT",
			       NULL };
	compare_argv(argv);
}

/* A bind from another source, and --dev-bind. */
Test(bwrap_vs_bubblewrap, bind_from_another_source)
{
	const char *argv[] = { "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", "--bind",
			       "WS", "OUT", "--ro-bind", "WS/sub", "OUT/sub", NULL };
	compare_argv(argv);
}

/* bubblewrap's manual's shape: a root built from nothing, /usr bound read-only, the usual symlinks,
   a tmpfs /tmp and the workspace bound at another name. */
Test(bwrap_vs_bubblewrap, new_root_from_nothing)
{
	const char *argv[] = { "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/lib",
			       "/lib", "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin", "--proc", "/proc",
			       "--dev", "/dev", "--tmpfs", "/tmp", "--bind", "WS", "WS", "--ro-bind", "OUT", "OUT",
			       "--unshare-pid", "--unshare-net", "--chdir", "/", NULL };
	compare_argv(argv);
}

/* The same, with the current directory absent inside and no --chdir: $HOME or "/", as bubblewrap. */
Test(bwrap_vs_bubblewrap, new_root_without_the_current_directory)
{
	const char *argv[] = { "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib",
			       "/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", NULL };
	char *args[40];
	size_t n = 0;
	for (; argv[n]; n++)
		args[n] = (char *)argv[n];
	char *tail[] = { "--", "/bin/sh", "-c", "pwd; ls /; exit 8", NULL };
	for (size_t k = 0; tail[k]; k++)
		args[n++] = tail[k];
	args[n] = NULL;
	const char *bw = real_bwrap();
	require_sandbox();
	same_as_bubblewrap(bw, args, NULL);
}

/*
 * --cap-add/--cap-drop in order, as bubblewrap leaves them to the command (every set, the ambient
 * one included, in the command's user namespace), and a user namespace made inside with them
 * (sandbox-runtime's seccomp helper maps uid 0 there, which needs CAP_SETFCAP when the caller is
 * root).  Without a cap option root keeps every capability under bubblewrap and none under
 * dshbox (docs/bwrap.md): not compared.
 */
Test(bwrap_vs_bubblewrap, capabilities_and_nested_user_namespaces)
{
	const char *bw = real_bwrap();
	require_sandbox();
	const char *script = "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status;"
			     " unshare -Ur cat /proc/self/uid_map | grep -q . && echo nested-ok; exit 3";
	char *cases[][24] = {
		{ "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-user", "--cap-drop", "ALL",
		  "--cap-add", "CAP_SETFCAP", "--proc", "/proc", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--unshare-user", "--cap-add", "cap_chown", "--cap-add", "5",
		  "--cap-drop", "ALL", "--cap-add", "Cap_Kill", "--cap-add", "cap_dac_override", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--unshare-user", "--cap-add", "ALL", "--cap-drop",
		  "CAP_SYS_ADMIN", NULL },
		{ "--ro-bind", "/", "/", "--proc", "/proc", "--unshare-user", "--cap-drop", "ALL", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_strv_ char **args = dsh_strv_copy(cases[i]);
		struct dsh_proc theirs, ours;
		run_both(bw, &args, script, &theirs, &ours);
		char what[32];
		snprintf(what, sizeof(what), "case %zu", i);
		expect_same(&theirs, &ours, what);
		if (i == 0) /* sandbox-runtime's argv: its helper's namespace must work, for root too */
			cr_expect(strstr(ours.out, "nested-ok\n"), "no user namespace inside: %s", ours.err);
		dsh_proc_clear(&theirs);
		dsh_proc_clear(&ours);
	}
}

/*
 * --cap-add without --unshare-user: bubblewrap leaves root the capabilities in the host's user
 * namespace, which dshbox bwrap cannot give (refused); every other caller gets a user namespace
 * from bubblewrap anyway, and the capability in it.
 */
Test(bwrap, cap_add_without_unshare_user)
{
	require_sandbox();
	char *args[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--cap-add", "CAP_SETFCAP", "--", "/bin/sh", "-c",
			 "grep ^CapEff: /proc/self/status", NULL };
	struct dsh_proc r;
	run_args(NULL, args, &r);
	if (getuid() == 0) {
		cr_expect_eq(r.exit_code, 1, "%s", r.err);
		cr_expect_eq(dsh_count_lines_with_prefix(r.err, "bwrap: "), 1, "%s", r.err);
		cr_expect(strstr(r.err, "--unshare-user"), "%s", r.err);
	} else {
		cr_expect_eq(r.exit_code, 0, "%s", r.err);
		cr_expect_str_eq(r.out, "CapEff:\t0000000080000000\n");
	}
	dsh_proc_clear(&r);
}

/* The caller's descriptors reach the command, as bubblewrap passes them on; those the argv's
   options consume (--file FD) do not. */
Test(bwrap_vs_bubblewrap, inherited_descriptors)
{
	const char *bw = real_bwrap();
	require_sandbox();
	char p[4096];
	snprintf(p, sizeof(p), "%s/file", ws);
	struct dsh_proc theirs, ours;
	for (int k = 0; k < 2; k++) {
		/* Numbers far above what the test runner holds. */
		int f = open(p, O_RDONLY), d = open(p, O_RDONLY);
		cr_assert(f >= 0 && d >= 0);
		int pass = fcntl(f, F_DUPFD, 300), data = fcntl(d, F_DUPFD, 310);
		cr_assert(pass >= 0 && data >= 0);
		close(f);
		close(d);
		char datafd[16], script[256];
		snprintf(datafd, sizeof(datafd), "%d", data);
		snprintf(script, sizeof(script),
			 "cat /proc/self/fd/%d; cat /tmp/data; [ -e /proc/self/fd/%d ] && echo data-fd-open || echo data-fd-closed", pass,
			 data);
		char *args[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--file",
				 datafd, "/tmp/data", "--", "/bin/sh", "-c", script, NULL };
		run_args(k == 0 ? bw : NULL, args, k == 0 ? &theirs : &ours);
		close(pass);
		close(data);
	}
	cr_expect_eq(ours.exit_code, theirs.exit_code, "%s", ours.err);
	cr_expect_str_eq(ours.out, theirs.out);
	cr_expect_str_eq(ours.out, "in the workspace\nin the workspace\ndata-fd-closed\n", "%s", ours.err);
	cr_expect_str_eq(ours.err, theirs.err);
	dsh_proc_clear(&theirs);
	dsh_proc_clear(&ours);
}

/* A program refusing the calls of mkdir with errno e, exported by libseccomp, on a descriptor at
   or above `at` (the caller's own filter language: bubblewrap takes compiled BPF). */
static int seccomp_program_fd(int e, int at)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	cr_assert_not_null(ctx);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(e), SCMP_SYS(mkdirat), 0), 0);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(e), SCMP_SYS(mkdir), 0), 0);
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	cr_assert_eq(seccomp_export_bpf(ctx, fileno(f)), 0);
	seccomp_release(ctx);
	int fd = fcntl(fileno(f), F_DUPFD, at);
	fclose(f);
	cr_assert(fd >= 0);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* --seccomp FD and --add-seccomp-fd FD: the caller's programs apply to the command (on top of
   dshbox's list), and bad data fails with bubblewrap's line. */
Test(bwrap_vs_bubblewrap, seccomp_programs)
{
	const char *bw = real_bwrap();
	require_sandbox();
	const char *script = "mkdir /tmp/made 2>&1 | sed 's/^[^:]*: //'; ls /tmp; exit 6";
	for (int variant = 0; variant < 3; variant++) {
		struct dsh_proc res[2];
		for (int k = 0; k < 2; k++) {
			int a = seccomp_program_fd(EXFULL, 330), b = seccomp_program_fd(ENOTNAM, 340);
			if (variant == 2) { /* five bytes: not a program */
				cr_assert_eq(ftruncate(a, 5), 0);
			}
			char fa[16], fb[16];
			snprintf(fa, sizeof(fa), "%d", a);
			snprintf(fb, sizeof(fb), "%d", b);
			char *one[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--tmpfs", "/tmp", "--seccomp", fa, "--",
					"/bin/sh", "-c", (char *)script, NULL };
			char *two[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--tmpfs", "/tmp", "--add-seccomp-fd", fb,
					"--add-seccomp-fd", fa, "--", "/bin/sh", "-c", (char *)script, NULL };
			run_args(k == 0 ? bw : NULL, variant == 1 ? two : one, &res[k]);
			close(a);
			close(b);
		}
		cr_expect_eq(res[1].exit_code, res[0].exit_code, "variant %d: %s", variant, res[1].err);
		cr_expect_str_eq(res[1].out, res[0].out, "variant %d", variant);
		cr_expect_str_eq(res[1].err, res[0].err, "variant %d", variant);
		if (variant == 0)
			cr_expect(strstr(res[1].out, ": Exchange full\n"), "%s", res[1].out);
		dsh_proc_clear(&res[0]);
		dsh_proc_clear(&res[1]);
	}
}

/* --unshare-uts and --hostname: a UTS namespace of the sandbox's own, with the name in it. */
Test(bwrap_vs_bubblewrap, hostname_in_its_own_uts_namespace)
{
	const char *bw = real_bwrap();
	require_sandbox();
	char host_uts[64] = "";
	cr_assert(readlink("/proc/self/ns/uts", host_uts, sizeof(host_uts) - 1) > 0);
	char script[256];
	snprintf(script, sizeof(script), "hostname; [ \"$(readlink /proc/self/ns/uts)\" = '%s' ] || echo own-uts",
		 host_uts);
	char *with_name[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--unshare-uts", "--hostname", "dshbox-box",
			      "--", "/bin/sh", "-c", script, NULL };
	char *without[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--unshare-uts", "--", "/bin/sh", "-c", script,
			    NULL };
	char **cases[] = { with_name, without };
	for (size_t i = 0; i < 2; i++) {
		struct dsh_proc theirs, ours;
		run_args(bw, cases[i], &theirs);
		run_args(NULL, cases[i], &ours);
		cr_expect_eq(ours.exit_code, theirs.exit_code, "%s", ours.err);
		cr_expect_str_eq(ours.out, theirs.out);
		cr_expect(strstr(ours.out, "own-uts\n"), "%s", ours.out);
		cr_expect_str_eq(ours.err, theirs.err);
		if (i == 0)
			cr_expect(strncmp(ours.out, "dshbox-box\n", 11) == 0, "%s", ours.out);
		dsh_proc_clear(&theirs);
		dsh_proc_clear(&ours);
	}
}

/* --uid/--gid: the command's ids in its user namespace, mapped to the caller's; files show them. */
Test(bwrap_vs_bubblewrap, uid_and_gid_inside)
{
	const char *bw = real_bwrap();
	require_sandbox();
	char *args[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-user", "--uid", "1234",
			 "--gid", "4321", "--", "/bin/sh", "-c",
			 "id -u; id -g; stat -c '%u %g' /etc/passwd; touch /tmp/x && stat -c '%u %g' /tmp/x;"
			 " echo x > /tmp/y; cat /proc/self/uid_map /proc/self/gid_map",
			 NULL };
	same_as_bubblewrap(bw, args, "1234\n4321\n");
}

/*
 * --info-fd and --json-status-fd: bubblewrap's JSON — the same keys; the namespaces reported are
 * the command's; the info descriptor reaches its end while the command still runs (hosts read it
 * to the end before going on); the exit status last.
 */
Test(bwrap_vs_bubblewrap, info_and_json_status)
{
	const char *bw = real_bwrap();
	require_sandbox();
	for (int k = 0; k < 2; k++) {
		_cleanup_free_ char *runner = NULL, *sh = NULL, *log = NULL, *info = NULL, *status = NULL;
		cr_assert(asprintf(&runner, "%s", k == 0 ? bw : dsh_test_dshbox()) > 0);
		cr_assert(asprintf(&log, "%s/order.%d", out, k) > 0);
		cr_assert(asprintf(&info, "%s/info.%d", out, k) > 0);
		cr_assert(asprintf(&status, "%s/status.%d", out, k) > 0);
		/* A fifo, opened by a subshell that becomes the runner: only the runner holds its writing
		   end (dash keeps a copy of a redirection's descriptor when it runs the command itself). */
		cr_assert(asprintf(&sh,
				   "mkfifo '%s.fifo' || exit 9; { cat '%s.fifo' > '%s'; echo info-eof >> '%s'; } &"
				   " ( exec '%s' %s --ro-bind / / --proc /proc --bind '%s' '%s' --unshare-pid --unshare-net --unshare-uts"
				   " --info-fd 3 --json-status-fd 4 -- /bin/sh -c 'for n in ipc mnt net pid uts; do"
				   " readlink /proc/self/ns/$n; done > %s.seen; sleep 1; echo command-done >> %s; exit 7'"
				   " 3>'%s.fifo' 4>'%s' ); echo exit=$? >> '%s'; wait",
				   info, info, info, log, runner, k == 0 ? "" : "bwrap", out, out, info, log, info, status,
				   log) > 0);
		char *argv[] = { "/bin/sh", "-c", sh, NULL };
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
		cr_expect_eq(r.exit_code, 0, "%s", r.err);
		dsh_proc_clear(&r);
		_cleanup_free_ char *order = dsh_test_read_file(log), *i = dsh_test_read_file(info),
				    *st = dsh_test_read_file(status);
		_cleanup_free_ char *seen_path = NULL;
		cr_assert(asprintf(&seen_path, "%s.seen", info) > 0);
		_cleanup_free_ char *seen = dsh_test_read_file(seen_path);
		cr_expect_str_eq(order, "info-eof\ncommand-done\nexit=7\n", "runner %d: %s", k, order);
		/* The keys, and each reported namespace is the one the command saw. */
		int pid = 0;
		cr_expect_eq(sscanf(i, "{\n    \"child-pid\": %d,", &pid), 1, "%s", i);
		cr_expect(pid > 1, "%s", i);
		const char *keys[] = { "mnt", "net", "pid", "uts" };
		for (size_t n = 0; n < 4; n++) {
			char key[64], *at;
			snprintf(key, sizeof(key), "\"%s-namespace\": ", keys[n]);
			cr_expect((at = strstr(i, key)) != NULL, "runner %d: no %s in %s", k, key, i);
			if (!at)
				continue;
			char want[64];
			snprintf(want, sizeof(want), "%s:[%llu]\n", keys[n], strtoull(at + strlen(key), NULL, 10));
			cr_expect(strstr(seen, want), "runner %d: %s not the command's (%s)", k, want, seen);
			cr_expect(strstr(st, key), "runner %d: %s", k, st);
		}
		cr_expect_null(strstr(i, "ipc-namespace"), "not unshared by the argv: %s", i);
		cr_expect(strncmp(st, "{ \"child-pid\": ", 15) == 0 && strstr(st, " }\n{ \"exit-code\": 7 }\n"), "%s", st);
	}
}

/* --argv0 (bubblewrap 0.9; Debian 12's 0.8 has none to compare with): the program is looked up by
   its own name and told another; a missing one fails under its own name. */
Test(bwrap, argv0_renames_the_command)
{
	require_sandbox();
	char *args[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--argv0", "renamed", "--", "sh", "-c",
			 "tr '\\0' ' ' < /proc/$$/cmdline", NULL };
	struct dsh_proc r;
	run_args(NULL, args, &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strncmp(r.out, "renamed -c ", 11) == 0, "%s", r.out);
	dsh_proc_clear(&r);
	char *missing[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--argv0", "renamed", "--", "dshbox-no-such-command",
			    NULL };
	run_args(NULL, missing, &r);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect_str_eq(r.err, "bwrap: execvp dshbox-no-such-command: No such file or directory\n");
	dsh_proc_clear(&r);
}

/* --unshare-cgroup and --unshare-cgroup-try: a cgroup namespace rooted where the sandbox starts. */
Test(bwrap_vs_bubblewrap, cgroup_namespace)
{
	const char *bw = real_bwrap();
	require_sandbox();
	char host[64] = "";
	cr_assert(readlink("/proc/self/ns/cgroup", host, sizeof(host) - 1) > 0);
	char script[256];
	snprintf(script, sizeof(script),
		 "cat /proc/self/cgroup; [ \"$(readlink /proc/self/ns/cgroup)\" = '%s' ] || echo own-cgroup-namespace", host);
	const char *opts[] = { "--unshare-cgroup", "--unshare-cgroup-try" };
	for (size_t i = 0; i < 2; i++) {
		char *args[] = { "--ro-bind", "/", "/", "--proc", "/proc", (char *)opts[i], "--", "/bin/sh", "-c", script, NULL };
		same_as_bubblewrap(bw, args, "own-cgroup-namespace\n");
	}
}

/* --mqueue with --unshare-ipc: the IPC namespace's message queues, mounted as bubblewrap mounts
   them (on /dev/mqueue in dshbox's /dev, and inside a tmpfs of the argv). */
Test(bwrap_vs_bubblewrap, mqueue)
{
	const char *bw = real_bwrap();
	require_sandbox();
	/* Sorted: the order of sibling mounts in mountinfo differs between kernels (6.1 lists the
	   later-attached one first for dshbox), and is not what bubblewrap's semantics promise. */
	const char *script = "grep ' mqueue ' /proc/self/mountinfo | cut -d' ' -f5- | sort; ls -ld /dev/mqueue /tmp/q/mq | "
			     "cut -d' ' -f1,3,4";
	char *args[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-ipc", "--mqueue",
			 "/dev/mqueue", "--tmpfs", "/tmp", "--mqueue", "/tmp/q/mq", "--", "/bin/sh", "-c", (char *)script,
			 NULL };
	same_as_bubblewrap(bw, args, "/dev/mqueue rw,relatime - mqueue mqueue rw\n");
	/* Without --unshare-ipc bubblewrap shows root the host's queues: refused by dshbox bwrap. */
	char *host[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--mqueue", "/dev/mqueue", "true",
			 NULL };
	struct dsh_proc ours;
	run_args(NULL, host, &ours);
	cr_expect_eq(ours.exit_code, 1, "%s", ours.err);
	cr_expect_eq(dsh_count_lines_with_prefix(ours.err, "bwrap: "), 1, "%s", ours.err);
	dsh_proc_clear(&ours);
}

/*
 * A .git/hooks that is a symlink to a tracked directory, masked as older sandbox-runtimes did:
 * /dev/null onto it fails under both, with bubblewrap's line; a name absent beneath it is made on
 * the host (in the tracked directory) by bubblewrap, and held absent by dshbox (stricter), both
 * refusing the command's write.
 */
Test(bwrap_vs_bubblewrap, hooks_symlink_to_a_tracked_directory)
{
	const char *bw = real_bwrap();
	require_sandbox();
	char hooks[4096], link[4096], made[4096], git[4096];
	snprintf(git, sizeof(git), "%s/.git", ws);
	snprintf(hooks, sizeof(hooks), "%s/tools/hooks", ws);
	snprintf(link, sizeof(link), "%s/.git/hooks", ws);
	snprintf(made, sizeof(made), "%s/tools/hooks/post-commit", ws);
	cr_assert_eq(mkdir(git, 0755), 0);
	char p[4200];
	snprintf(p, sizeof(p), "%s/pre-commit", hooks);
	dsh_test_write_file(p, "#!/bin/sh\n");
	cr_assert_eq(symlink("../tools/hooks", link), 0);
	char *onto[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--bind", ws, ws, "--ro-bind", "/dev/null", link,
			 "true", NULL };
	struct dsh_proc theirs, ours;
	run_args(bw, onto, &theirs);
	run_args(NULL, onto, &ours);
	cr_expect_eq(theirs.exit_code, 1, "%s", theirs.err);
	cr_expect_eq(ours.exit_code, 1, "%s", ours.err);
	const char *msg = strstr(theirs.err, "Can't create file at");
	cr_expect(msg && strstr(ours.err, msg), "bubblewrap: %s dshbox: %s", theirs.err, ours.err);
	dsh_proc_clear(&theirs);
	dsh_proc_clear(&ours);
	char script[8192];
	snprintf(script, sizeof(script), "echo x > '%s' || echo refused", made);
	char *beneath[] = { "--ro-bind", "/", "/", "--proc", "/proc", "--bind", ws, ws, "--ro-bind", "/dev/null",
			    made, "/bin/sh", "-c", script, NULL };
	struct stat st;
	run_args(bw, beneath, &theirs);
	cr_expect(strstr(theirs.out, "refused"), "%s %s", theirs.out, theirs.err);
	cr_expect_eq(lstat(made, &st), 0, "bubblewrap made no name on the host: the comparison shows nothing");
	unlink(made);
	run_args(NULL, beneath, &ours);
	cr_expect_eq(ours.exit_code, 0, "%s", ours.err);
	cr_expect(strstr(ours.out, "refused"), "%s %s", ours.out, ours.err);
	cr_expect(lstat(made, &st) < 0 && errno == ENOENT, "dshbox made %s on the host", made);
	dsh_proc_clear(&theirs);
	dsh_proc_clear(&ours);
}

/*
 * --as-pid-1 (Codex passes it on every run): the command is pid 1 of its pid namespace, so a
 * signal it sends itself without a handler is dropped, as for any init; its exit status passes
 * through; a fault kills it (128+N).  The same under both.
 */
Test(bwrap_vs_bubblewrap, as_pid_1)
{
	const char *bw = real_bwrap();
	require_sandbox();
	char *self[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--as-pid-1",
			 "--", "/bin/sh", "-c", "echo $$; kill -TERM $$; sh -c 'sleep 0.1 &'; echo survived; exit 7",
			 NULL };
	same_as_bubblewrap(bw, self, "1\nsurvived\n");
	if (access("/usr/bin/python3", X_OK) != 0)
		DSH_SKIP("python3 is not installed (tools/install-deps.sh installs it): no fault to compare");
	char *fault[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--as-pid-1",
			  "--", "/usr/bin/python3", "-c", "import ctypes; ctypes.string_at(0)", NULL };
	struct dsh_proc ours;
	run_args(NULL, fault, &ours);
	cr_expect_eq(ours.exit_code, 128 + SIGSEGV, "%s", ours.err);
	dsh_proc_clear(&ours);
	same_as_bubblewrap(bw, fault, NULL);
}

/*
 * Codex 0.171.0's probe (tests/codex/run.sh prints it): a root built from nothing that starts with
 * --tmpfs /, the system directories bound read-only, every namespace, pid 1, no capabilities.
 */
Test(bwrap_vs_bubblewrap, codex_probe_new_root_with_tmpfs_first)
{
	const char *argv[] = { "--as-pid-1", "--new-session", "--die-with-parent", "--tmpfs", "/", "--dev", "/dev",
			       "--ro-bind", "/bin", "/bin", "--ro-bind", "/etc", "/etc", "--ro-bind", "/lib", "/lib",
			       "--ro-bind", "/usr", "/usr", "--unshare-user", "--unshare-pid", "--unshare-ipc",
			       "--unshare-net", "--proc", "/proc", "--cap-drop", "ALL", "--chdir", "/", NULL };
	compare_argv(argv);
}

/*
 * Codex's workspace-write run: --perms before --tmpfs (a mode-000 mask on an existing directory
 * outside, an empty mode-555 tmpfs on one inside), --remount-ro on each, every namespace, pid 1,
 * --cap-drop ALL, a new session.  (Its absent names held absent differ by design: docs/bwrap.md.)
 */
Test(bwrap_vs_bubblewrap, codex_workspace_write)
{
	const char *argv[] = { "--as-pid-1", "--new-session", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev",
			       "--perms", "000", "--tmpfs", "OUT", "--remount-ro", "OUT", "--bind", "WS", "WS",
			       "--perms", "555", "--tmpfs", "WS/sub", "--remount-ro", "WS/sub", "--unshare-user",
			       "--unshare-pid", "--unshare-ipc", "--unshare-net", "--proc", "/proc", "--cap-drop", "ALL",
			       NULL };
	compare_argv(argv);
}

/*
 * --as-pid-1 with --die-with-parent: a signal sent to the runner ends the run as a death by it
 * (bubblewrap passes nothing on to a pid-1 command: it dies of the signal, and the command with
 * it), whether the command would ignore the signal or catches it.  The command says it runs
 * through a fifo before the signal is sent.
 */
Test(bwrap_vs_bubblewrap, as_pid_1_signal_to_the_runner_ends_the_run)
{
	const char *bw = real_bwrap();
	require_sandbox();
	_cleanup_free_ char *fifo = NULL;
	cr_assert(asprintf(&fifo, "%s/up", out) > 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	const char *scripts[] = { "echo up > \"$0\"; sleep 30; echo not-ended",
				  "trap 'echo caught; exit 3' TERM; echo up > \"$0\"; sleep 30 & wait; echo not-ended" };
	for (size_t i = 0; i < 2; i++) {
		struct dsh_proc res[2];
		for (size_t k = 0; k < 2; k++) {
			char *argv[] = { "/bin/sh", "-c", "f=$1; shift; \"$@\" & p=$!; read x < \"$f\"; kill -TERM $p; "
					 "wait $p; echo status $?", "sh", fifo, (char *)(k ? dsh_test_dshbox() : bw),
					 k ? "bwrap" : "--die-with-parent", "--as-pid-1", "--die-with-parent",
					 "--unshare-pid", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--",
					 "/bin/sh", "-c", (char *)scripts[i], fifo, NULL };
			cr_assert_eq(dsh_proc_run(argv, env, NULL, &res[k]), 0);
		}
		cr_expect_str_eq(res[1].out, "status 143\n", "case %zu: %s", i, res[1].err);
		cr_expect_str_eq(res[1].out, res[0].out, "case %zu", i);
		for (size_t k = 0; k < 2; k++)
			dsh_proc_clear(&res[k]);
	}
}
