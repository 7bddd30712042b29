/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ordinary work that depends on the runtime broker resolving a call in the caller's view (issue
 * 20): a program's own /proc/self (oom_score_adj, comm, mem), /dev/stderr, chattr in the
 * workspace, a host that refuses the broker's process_vm_readv or pidfd_getfd, a /proc bound from
 * another pid namespace, and sandboxes inside the sandbox.  The escapes themselves are
 * tests/escape/test_broker_caller.c's.  Each test runs against both backends where the host has
 * them (linux-ns alone where the question is about a pid or mount namespace).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *top, *ws, *nested_cfg;

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

static char *at(const char *dir, const char *rel)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", dir, rel) > 0);
	return s;
}

static void setup(void)
{
	top = dsh_test_mkdtemp();
	ws = at(top, "ws");
	cr_assert_eq(mkdir(ws, 0755), 0);
	nested_cfg = at(top, "nested.yml");
	dsh_test_write_file(nested_cfg, "nestedSandbox: true\n");
}

static void teardown(void)
{
	dsh_test_rmtree(top);
	free(ws), free(top), free(nested_cfg);
}

TestSuite(broker_caller_work, .init = setup, .fini = teardown, .timeout = 90);

static const char *const backends[] = { "linux-ns", "landlock" };

/*
 * Where the command's own writes to /proc/self must work: linux-ns in the default mode (a procfs of
 * the sandbox's own, where Landlock grants writes beneath /proc), danger-full-access with either
 * backend, nestedSandbox (Landlock's file layer dropped) and a kernel made Landlock-less.  The
 * landlock backend's /proc is the host's, where Landlock grants no write (docs/security.md).
 */

static const struct dsh_test_setting proc_settings[] = {
	{ "linux-ns, workspace-write", "linux-ns", NULL, false, false },
	{ "linux-ns, danger-full-access", "linux-ns", "danger-full-access", false, false },
	{ "landlock, danger-full-access", "landlock", "danger-full-access", false, false },
	{ "linux-ns, nestedSandbox: true", "linux-ns", NULL, true, false },
	{ "linux-ns, no Landlock", "linux-ns", NULL, false, true },
};

/* dshbox run in setting s (tests/lib/harness.h). */
static void run_in(struct dsh_proc *r, const struct dsh_test_setting *s, const char *const *cmd)
{
	dsh_test_run_setting(r, env, s, NULL, ws, nested_cfg, NULL, cmd);
}


/* `echo N > /proc/self/oom_score_adj` in a shell sets the shell's score, not init's. */
Test(broker_caller_work, shell_sets_its_own_oom_score_adj)
{
	/* Raised from the shell's own value: lowering it would need CAP_SYS_RESOURCE. */
	const char *script = "v=$(cat /proc/$$/oom_score_adj); n=$((v < 987 ? v + 13 : 1000)); "
			     "echo init_before=$(cat /proc/$PPID/oom_score_adj); echo want=$n; "
			     "echo $n > /proc/self/oom_score_adj; echo rc=$?; "
			     "echo shell=$(cat /proc/$$/oom_score_adj); echo init_after=$(cat /proc/$PPID/oom_score_adj)";
	const char *cmd[] = { "sh", "-c", script, NULL };
	for (size_t i = 0; i < sizeof(proc_settings) / sizeof(proc_settings[0]); i++) {
		const struct dsh_test_setting *s = &proc_settings[i];
		if (!dsh_test_require_backend_named(s->backend))
			continue;
		struct dsh_proc r;
		run_in(&r, s, cmd);
		bool own = dsh_out_is(r.out, "rc", "0") && *dsh_out_val(r.out, "want") && dsh_out_is(r.out, "shell", dsh_out_val(r.out, "want"));
		bool inits = *dsh_out_val(r.out, "init_before") && dsh_out_is(r.out, "init_after", dsh_out_val(r.out, "init_before"));
		cr_expect(own && inits, "[%s] want the shell's own score written and init's unchanged:\n%s%s", s->name,
			  r.out, r.err);
		dsh_proc_clear(&r);
	}
}

/* A program renames itself through /proc/self/comm opened as a shell redirect opens (O_CREAT). */
Test(broker_caller_work, program_renames_itself_through_proc_self_comm)
{
	_cleanup_free_ char *helper = dsh_test_helper("caller_attack");
	const char *cmd[] = { helper, "comm", "renamed-by-self", NULL };
	for (size_t i = 0; i < sizeof(proc_settings) / sizeof(proc_settings[0]); i++) {
		const struct dsh_test_setting *s = &proc_settings[i];
		if (!dsh_test_require_backend_named(s->backend))
			continue;
		struct dsh_proc r;
		run_in(&r, s, cmd);
		cr_expect(dsh_out_is(r.out, "open", "ok") && dsh_out_is(r.out, "write", "ok") && dsh_out_is(r.out, "comm", "renamed-by-self"),
			  "[%s] writing /proc/self/comm did not rename the program itself:\n%s%s", s->name, r.out, r.err);
		dsh_proc_clear(&r);
	}
}

/* A program opens /proc/self/mem O_RDWR|O_CREAT: its own memory, read and written. */
Test(broker_caller_work, program_writes_its_own_memory_through_proc_self_mem)
{
	_cleanup_free_ char *helper = dsh_test_helper("caller_attack");
	const char *cmd[] = { helper, "mem", "creat", NULL };
	for (size_t i = 0; i < sizeof(proc_settings) / sizeof(proc_settings[0]); i++) {
		const struct dsh_test_setting *s = &proc_settings[i];
		if (!dsh_test_require_backend_named(s->backend))
			continue;
		struct dsh_proc r;
		run_in(&r, s, cmd);
		cr_expect(dsh_out_is(r.out, "self_open", "ok") && dsh_out_is(r.out, "self_same", "1") && dsh_out_is(r.out, "self_write", "ok") &&
				  dsh_out_is(r.out, "self_changed", "1"),
			  "[%s] /proc/self/mem (O_RDWR|O_CREAT): want it open, the program's own marker read back, and a "
			  "byte written showing in its variable:\n%s%s",
			  s->name, r.out, r.err);
		dsh_proc_clear(&r);
	}
}

/* `echo > /dev/stderr` (a link to /proc/self/fd/2, opened with O_CREAT) writes to the command's
   own stderr, and /dev/stdout to its stdout: here both are pipes to this test. */
Test(broker_caller_work, echo_to_dev_stderr_and_dev_stdout)
{
	const char *cmd[] = { "sh", "-c", "echo to-stderr > /dev/stderr; echo rc1=$?; echo to-stdout > /dev/stdout; echo rc2=$?",
			      NULL };
	for (size_t b = 0; b < 2; b++) {
		if (!dsh_test_require_backend_named(backends[b]))
			continue;
		struct dsh_test_setting s = { backends[b], backends[b], NULL, false, false };
		struct dsh_proc r;
		run_in(&r, &s, cmd);
		cr_expect(dsh_out_is(r.out, "rc1", "0") && strstr(r.err, "to-stderr\n") && dsh_out_is(r.out, "rc2", "0") &&
				  strstr(r.out, "to-stdout\n"),
			  "[%s] echo > /dev/stderr, > /dev/stdout:\n%s%s", s.name, r.out, r.err);
		dsh_proc_clear(&r);
	}
}

static unsigned host_xflags(const char *path, int *ret_flags)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	struct fsxattr fx = { 0 };
	cr_assert_eq(ioctl(fd, FS_IOC_GETFLAGS, ret_flags), 0, "FS_IOC_GETFLAGS %s: %s", path, strerror(errno));
	cr_assert_eq(ioctl(fd, FS_IOC_FSGETXATTR, &fx), 0, "FS_IOC_FSGETXATTR %s: %s", path, strerror(errno));
	return fx.fsx_xflags;
}


/* chattr's ioctls still work on a file in the workspace (FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR). */
Test(broker_caller_work, chattr_in_the_workspace_still_works)
{
	_cleanup_free_ char *helper = dsh_test_helper("caller_attack"), *f = at(ws, "w.txt");
	dsh_test_write_file(f, "mine\n");
	dsh_test_require_chattr(f);
	for (size_t b = 0; b < 2; b++) {
		if (!dsh_test_require_backend_named(backends[b]))
			continue;
		int flags = 0;
		(void)host_xflags(f, &flags);
		cr_assert_eq(flags & (FS_NODUMP_FL | FS_NOATIME_FL), 0, "+d or +A already set");
		const char *cmd[] = { helper, "chattr", f, NULL };
		struct dsh_test_setting s = { backends[b], backends[b], NULL, false, false };
		struct dsh_proc r;
		run_in(&r, &s, cmd);
		cr_expect(dsh_out_is(r.out, "fssetxattr", "ok") && dsh_out_is(r.out, "setflags", "ok"),
			  "[%s] chattr's ioctls on a workspace file failed:\n%s%s", s.name, r.out, r.err);
		unsigned xflags = host_xflags(f, &flags);
		cr_expect((flags & (FS_NODUMP_FL | FS_NOATIME_FL)) == (FS_NODUMP_FL | FS_NOATIME_FL),
			  "[%s] +d +A not set on the host: flags %#x", s.name, (unsigned)flags);
		cr_expect(xflags & FS_XFLAG_NODUMP, "[%s] the fsxattr NODUMP flag is not set on the host", s.name);
		/* back to plain for the next backend */
		_cleanup_close_ int fd = open(f, O_RDONLY | O_CLOEXEC);
		int clear = flags & ~(FS_NODUMP_FL | FS_NOATIME_FL);
		cr_assert_eq(ioctl(fd, FS_IOC_SETFLAGS, &clear), 0);
		dsh_proc_clear(&r);
	}
}

/*
 * A host that refuses process_vm_readv or pidfd_getfd (Docker's default seccomp profile without
 * CAP_SYS_PTRACE), simulated by refuse_calls around dshbox: brokered creates either work (and land
 * on the host) or the run refuses with 125 and one error line naming the refused call — never a
 * command whose every create fails with "Bad address".  create-at creates relative to a directory
 * descriptor, which the broker must fetch from the caller.
 */
Test(broker_caller_work, brokered_creates_where_the_host_refuses_process_vm_readv_or_pidfd_getfd)
{
	_cleanup_free_ char *refuse = dsh_test_helper("refuse_calls"), *helper = dsh_test_helper("caller_attack");
	_cleanup_free_ char *script = NULL;
	cr_assert(asprintf(&script, "echo x > f; mkdir d; '%s' create-at", helper) > 0);
	const char *sets[][3] = { { "process_vm_readv", "pidfd_getfd", NULL },
				  { "process_vm_readv", NULL, NULL },
				  { "pidfd_getfd", NULL, NULL } };
	for (size_t b = 0; b < 2; b++) {
		if (!dsh_test_require_backend_named(backends[b]))
			continue;
		for (size_t k = 0; k < 3; k++) {
			const char *argv[32];
			size_t n = 0;
			argv[n++] = refuse;
			argv[n++] = "--errno";
			argv[n++] = "EPERM";
			for (size_t i = 0; sets[k][i]; i++)
				argv[n++] = sets[k][i];
			const char *rest[] = { "--", dsh_test_dshbox(), "run", "--backend", backends[b], "--workspace", ws, "--cwd",
					       ws, "--", "sh", "-c", script, NULL };
			for (size_t i = 0; rest[i]; i++)
				argv[n++] = rest[i];
			argv[n] = NULL;
			struct dsh_proc r;
			cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
			const char *name = sets[k][1] ? "process_vm_readv and pidfd_getfd" : sets[k][0];
			_cleanup_free_ char *f = at(ws, "f"), *d = at(ws, "d"), *af = at(ws, "at-file"), *ad = at(ws, "at-dir");
			cr_expect_null(strstr(r.err, "Bad address"), "[%s, %s refused] %s", backends[b], name, r.err);
			if (r.exit_code == 125) {
				cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "[%s, %s refused] %s",
					     backends[b], name, r.err);
				bool named = strstr(r.err, sets[k][0]) || (sets[k][1] && strstr(r.err, sets[k][1]));
				cr_expect(named, "[%s, %s refused] the error does not name the refused call: %s", backends[b],
					  name, r.err);
				cr_expect_str_eq(r.out, "", "[%s, %s refused] the command ran", backends[b], name);
				cr_expect_eq(access(f, F_OK), -1, "[%s, %s refused] f was created", backends[b], name);
			} else {
				_cleanup_free_ char *got = dsh_test_read_file(f);
				struct stat sd, sad;
				bool landed = got && strcmp(got, "x\n") == 0 && stat(d, &sd) == 0 && S_ISDIR(sd.st_mode) &&
					      access(af, F_OK) == 0 && stat(ad, &sad) == 0 && S_ISDIR(sad.st_mode);
				cr_expect(r.exit_code == 0 && dsh_out_is(r.out, "openat_dirfd", "ok") && dsh_out_is(r.out, "mkdirat_dirfd", "ok") &&
						  landed,
					  "[%s, %s refused] want every create done and on the host (f, d, at-file, at-dir: %s), "
					  "or exit 125; exit %d:\n%s%s",
					  backends[b], name, landed ? "there" : "not all there", r.exit_code, r.out, r.err);
			}
			unlink(f), rmdir(d), unlink(af), rmdir(ad);
			dsh_proc_clear(&r);
		}
	}
}

/*
 * A /proc from another pid namespace: inside `unshare --user --mount --pid` with a fresh /proc
 * whose /proc/sys is bound read-only over itself and /proc/timer_list masked (as container
 * runtimes do), and another user namespace around dshbox so those mounts are locked, the kernel
 * refuses dshbox a fresh procfs and dshbox binds the one it has.  Its pids are not the sandbox's.
 * A create relative to the command's cwd must still land in the cwd (or the run refuses, naming
 * /proc).
 */
Test(broker_caller_work, relative_create_with_a_proc_of_another_pid_namespace)
{
	if (!dsh_test_require_backend_named("linux-ns"))
		return;
	_cleanup_free_ char *sub = at(ws, "sub"), *rel = at(ws, "sub/rel"), *script = NULL;
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert(asprintf(&script,
			   "set -e; mount -o bind,ro /proc/sys /proc/sys; "
			   "if [ -e /proc/timer_list ]; then mount --bind /dev/null /proc/timer_list; fi; echo setup=ok; "
			   "exec unshare --user --map-root-user --mount '%s' run --allow-degraded --backend linux-ns "
			   "--workspace '%s' --cwd '%s' -- sh -c 'cd sub && echo x > rel; echo rc=$?'",
			   dsh_test_dshbox(), ws, ws) > 0);
	const char *argv[] = { "unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc",
			       "sh", "-c", script, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	if (!strstr(r.out, "setup=ok"))
		DSH_SKIP("cannot build the scene (unshare --user --mount --pid, mounts on /proc): exit %d: %s", r.exit_code,
			 r.err);
	if (r.exit_code == 125) {
		cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
		cr_expect(strstr(r.err, "/proc"), "the refusal does not name /proc: %s", r.err);
		cr_expect_null(strstr(r.out, "rc="), "the command ran: %s", r.out);
	} else {
		/* The scene is the one meant: dshbox said it bound /proc instead of a fresh one. */
		cr_expect(strstr(r.err, "dshbox: warning: ") && strstr(r.err, "proc"), "no word of a bound /proc: %s",
			  r.err);
		cr_expect_eq(r.exit_code, 0, "exit %d:\n%s%s", r.exit_code, r.out, r.err);
		cr_expect(dsh_out_is(r.out, "rc", "0"), "the create failed:\n%s%s", r.out, r.err);
		_cleanup_free_ char *got = dsh_test_read_file(rel);
		cr_expect(got && strcmp(got, "x\n") == 0, "sub/rel is not on the host (%s):\n%s%s", got ? got : "missing",
			  r.out, r.err);
	}
	dsh_proc_clear(&r);
}

/*
 * `dshbox run CMD` with `nestedSandbox: true` and the broker on (the default), as nobody when the
 * test is root: Linux 5.12+ lets a nested user namespace map uid 0 only for a creator with
 * CAP_SETFCAP, which the command never has.  The tree is then nobody's.
 */
static void outer(struct dsh_proc *r, const char *script)
{
	_cleanup_free_ char *cfg = at(top, "outer.yml");
	dsh_test_write_file(cfg, "nestedSandbox: true\nprotectDefaults: false\n");
	const char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
			       dsh_test_dshbox(), "run", "--config", cfg, "--workspace", ws, "--cwd", ws, "--",
			       "/bin/sh", "-c", script, NULL };
	const char *const *run = argv + 5;
	if (geteuid() == 0) {
		_cleanup_free_ char *own = NULL;
		cr_assert(asprintf(&own, "chown -R 65534:65534 '%s' && chmod 755 '%s'", top, top) > 0);
		cr_assert_eq(system(own), 0);
		run = argv;
	}
	cr_assert_eq(dsh_proc_run((char *const *)run, env, NULL, r), 0);
}

/*
 * dshbox run inside dshbox run, the outer broker on: the kernel allows one seccomp listener per
 * process, so the inner run has no broker of its own.  By default it refuses, saying so, since its
 * default rules need one; with --allow-degraded its command writes in the workspace, every call
 * served by the outer broker (through the inner sandbox's own /dev and /proc).
 */
Test(broker_caller_work, dshbox_inside_dshbox_with_the_broker_on)
{
	if (!dsh_test_require_backend_named("linux-ns"))
		return;
	_cleanup_free_ char *script = NULL, *f = at(ws, "inner.txt");
	cr_assert(asprintf(&script,
			   "'%s' run -- true 2>&1; echo default_exit=$?; "
			   "'%s' run --allow-degraded -- sh -c 'echo inner > inner.txt && echo e >/dev/stderr && echo inner=ok' "
			   "2>/dev/null; echo inner_exit=$?",
			   dsh_test_dshbox(), dsh_test_dshbox()) > 0);
	struct dsh_proc r;
	outer(&r, script);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(dsh_out_is(r.out, "default_exit", "125"), "the inner run without a broker of its own did not refuse:\n%s",
		  r.out);
	cr_expect(strstr(r.out, "runs under another sandbox's runtime broker") != NULL,
		  "the refusal does not say why:\n%s", r.out);
	cr_expect(dsh_out_is(r.out, "inner", "ok") && dsh_out_is(r.out, "inner_exit", "0"), "the inner command failed:\n%s%s", r.out,
		  r.err);
	_cleanup_free_ char *got = dsh_test_read_file(f);
	cr_expect(got && strcmp(got, "inner\n") == 0, "inner.txt is not on the host");
	dsh_proc_clear(&r);
}

/* bubblewrap inside dshbox run (nestedSandbox, broker on): its own /dev and /proc, a bound workspace. */
Test(broker_caller_work, bwrap_inside_dshbox_with_the_broker_on)
{
	if (!dsh_test_require_backend_named("linux-ns"))
		return;
	if (access("/usr/bin/bwrap", X_OK) != 0)
		DSH_SKIP("bubblewrap is not installed (/usr/bin/bwrap)");
	_cleanup_free_ char *script = NULL, *f = at(ws, "f");
	cr_assert(asprintf(&script,
			   "bwrap --ro-bind / / --dev /dev --proc /proc --bind '%s' '%s' -- sh -c 'echo x > %s/f && echo bwrap=ok'; "
			   "echo bwrap_exit=$?",
			   ws, ws, ws) > 0);
	struct dsh_proc r;
	outer(&r, script);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(dsh_out_is(r.out, "bwrap", "ok") && dsh_out_is(r.out, "bwrap_exit", "0"), "bubblewrap's command failed:\n%s%s", r.out,
		  r.err);
	_cleanup_free_ char *got = dsh_test_read_file(f);
	cr_expect(got && strcmp(got, "x\n") == 0, "f is not on the host");
	dsh_proc_clear(&r);
}
