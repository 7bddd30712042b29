/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run lifecycle as a user sees it (SPEC 2, 3.8): exit status passed through, a signal death
 * reproduced, signals forwarded, nothing left behind when the command or the supervisor dies,
 * 126/127 like env(1), 125 with one error line for a setup failure, descriptors above 2 closed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/backend.h"
#include "dshbox/dshbox.h"
#include "policy/options.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/bin:/bin", NULL };

static void run(struct dsh_proc *r, const char *stdin_data, const char *shell)
{
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--", "/bin/sh", "-c", (char *)shell, NULL };
	cr_assert_eq(dsh_proc_run(argv, env, stdin_data, r), 0);
}

Test(run_lifecycle, exit_codes_pass_through)
{
	static const int codes[] = { 0, 1, 42 };
	for (size_t i = 0; i < 3; i++) {
		char cmd[32];
		snprintf(cmd, sizeof(cmd), "exit %d", codes[i]);
		struct dsh_proc r;
		run(&r, NULL, cmd);
		cr_expect_eq(r.exit_code, codes[i], "exit %d came back as %d (%s)", codes[i], r.exit_code, r.err);
		cr_expect_str_eq(r.err, "", "nothing of dshbox's own on stderr");
		dsh_proc_clear(&r);
	}
}

Test(run_lifecycle, signal_deaths_reproduced)
{
	static const int sigs[] = { SIGKILL, SIGSEGV };
	for (size_t i = 0; i < 2; i++) {
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "kill -%d $$", sigs[i]);
		struct dsh_proc r;
		run(&r, NULL, cmd);
		cr_expect_eq(r.signal, sigs[i], "the command died of %d; dshbox ended with exit %d signal %d", sigs[i],
			     r.exit_code, r.signal);
		cr_expect_str_eq(r.err, "");
		dsh_proc_clear(&r);
	}
}

Test(run_lifecycle, stdin_stdout_are_the_callers)
{
	struct dsh_proc r;
	run(&r, "hello through\n", "cat");
	cr_expect_str_eq(r.out, "hello through\n");
	cr_expect_eq(r.exit_code, 0);
	dsh_proc_clear(&r);
}

/* dshbox with its stdout on a pipe we keep reading; extra_fd (if >= 0) stays open in it as fd 7. */
static pid_t spawn(char *const argv[], int *ret_out, int extra_fd)
{
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(p[1], 1);
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 2);
		if (extra_fd >= 0)
			dup2(extra_fd, 7);
		execve(argv[0], argv, env);
		_exit(127);
	}
	close(p[1]);
	*ret_out = p[0];
	return pid;
}

/* Read from fd until the text contains needle (or EOF / 10 s). */
static bool read_until(int fd, const char *needle, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	while (!strstr(buf, needle)) {
		struct pollfd pf = { fd, POLLIN, 0 };
		if (poll(&pf, 1, 10000) != 1)
			return false;
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			return false;
		len += (size_t)n;
		buf[len] = '\0';
	}
	return true;
}

/* Whether fd reaches EOF within ms: every process holding the pipe's write end is gone. */
static bool eof_within(int fd, int ms)
{
	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		if (poll(&pf, 1, ms) != 1)
			return false;
		char b[256];
		ssize_t n = read(fd, b, sizeof(b));
		if (n == 0)
			return true;
		if (n < 0)
			return false;
	}
}

Test(run_lifecycle, sigterm_reaches_the_command)
{
	dsh_test_require_backend();
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--", "/bin/sh", "-c",
			 "trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.05; done", NULL };
	int out;
	pid_t pid = spawn(argv, &out, -1);
	char buf[256];
	cr_assert(read_until(out, "ready", buf, sizeof(buf)), "no 'ready' from the command: %s", buf);
	kill(pid, SIGTERM);
	cr_expect(read_until(out, "got-term", buf, sizeof(buf)), "the command's TERM trap did not run: %s", buf);
	int st;
	waitpid(pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 7, "exit status of the trap (7) not passed through: %#x", st);
	close(out);
}

Test(run_lifecycle, background_child_dies_with_the_command)
{
	dsh_test_require_backend();
	/* The background sleep holds our pipe: EOF comes only when it is gone. */
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--", "/bin/sh", "-c", "sleep 1000 & echo started", NULL };
	int out;
	pid_t pid = spawn(argv, &out, -1);
	int st;
	waitpid(pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_expect(eof_within(out, 5000), "a background child of the command outlived it");
	close(out);
}

Test(run_lifecycle, sandbox_dies_with_the_supervisor)
{
	dsh_test_require_backend();
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--", "/bin/sh", "-c", "echo ready; sleep 1000", NULL };
	int out;
	pid_t pid = spawn(argv, &out, -1);
	char buf[256];
	cr_assert(read_until(out, "ready", buf, sizeof(buf)));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_expect(eof_within(out, 5000), "the sandbox outlived its SIGKILLed supervisor");
	close(out);
}

Test(run_lifecycle, missing_command_127_unrunnable_126)
{
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--", "no-such-command-dshbox", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 127, "exit %d: %s", r.exit_code, r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "no-such-command-dshbox"), "%s", r.err);
	dsh_proc_clear(&r);

	char *argv2[] = { (char *)dsh_test_dshbox(), "run", "--", "/etc/hostname", NULL };
	cr_assert_eq(dsh_proc_run(argv2, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 126, "exit %d: %s", r.exit_code, r.err);
	dsh_proc_clear(&r);
}

Test(run_lifecycle, setup_failure_is_125_with_one_line)
{
	/* A cwd in the host's /dev/shm does not exist inside: linux-ns makes a minimal /dev of its own. */
	char dir[] = "/dev/shm/dshbox-cwd.XXXXXX";
	cr_assert_not_null(mkdtemp(dir), "/dev/shm: %s", strerror(errno));
	chmod(dir, 0755);
	char *cfgdir = dsh_test_mkdtemp(), *cfg = NULL;
	cr_assert(asprintf(&cfg, "%s/linux-ns.yml", cfgdir) > 0);
	dsh_test_write_file(cfg, "backend: linux-ns\n");
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--config", cfg, "--cwd", dir, "--", "/bin/echo", "ran", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
	rmdir(dir);
	dsh_test_rmtree(cfgdir);
	free(cfgdir);
	free(cfg);
	cr_expect_eq(r.exit_code, 125, "exit %d: %s", r.exit_code, r.err);
	cr_expect_str_eq(r.out, "", "the command must not have run");
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "setup stage 'chdir'"), "the error names the stage: %s", r.err);
	dsh_proc_clear(&r);
}

Test(run_lifecycle, descriptors_closed_unless_preserved)
{
	dsh_test_require_backend();
	char *dir = dsh_test_mkdtemp();
	_cleanup_free_ char *file = NULL;
	cr_assert(asprintf(&file, "%s/fd7", dir) > 0);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);

	char *kept[] = { (char *)dsh_test_dshbox(), "run", "--preserve-fd", "7", "--", "/bin/sh", "-c",
			 "echo through-7 >&7 && echo ok", NULL };
	int out;
	pid_t pid = spawn(kept, &out, fd);
	int st;
	waitpid(pid, &st, 0);
	char buf[256];
	read_until(out, "ok", buf, sizeof(buf));
	close(out);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--preserve-fd 7: status %#x", st);
	_cleanup_free_ char *content = dsh_test_read_file(file);
	cr_expect_str_eq(content ? content : "", "through-7\n");

	char *closed[] = { (char *)dsh_test_dshbox(), "run", "--", "/bin/sh", "-c", "echo leak >&7", NULL };
	pid = spawn(closed, &out, fd);
	waitpid(pid, &st, 0);
	close(out);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) != 0, "fd 7 was open in the command without --preserve-fd");
	close(fd);
	dsh_test_rmtree(dir);
	free(dir);
}

/* The sandbox's init: the child of dshbox's process named dshbox (the command is its child). */
static pid_t init_of(pid_t supervisor)
{
	char path[64], comm[32];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)supervisor, (int)supervisor);
	_cleanup_free_ char *children = dsh_test_read_file(path);
	for (char *save = NULL, *t = children ? strtok_r(children, " \n", &save) : NULL; t; t = strtok_r(NULL, " \n", &save)) {
		snprintf(path, sizeof(path), "/proc/%s/comm", t);
		_cleanup_free_ char *c = dsh_test_read_file(path);
		snprintf(comm, sizeof(comm), "%s", c ? c : "");
		if (strcmp(comm, "dshbox\n") == 0)
			return (pid_t)atoi(t);
	}
	return -1;
}

/*
 * SPEC 9: while it serves, init holds no descriptor the command may not have.  A file the caller
 * leaves open (fd 7, not preserved: the command has only 0-2) is not among init's descriptors,
 * looked at from the host while the command waits.  Only root may look: init is non-dumpable, so
 * to its owner, a user, its descriptors are out of reach altogether (EACCES), which is checked then.
 */
Test(run_lifecycle, init_holds_none_of_the_callers_descriptors)
{
	dsh_test_require_backend();
	char *dir = dsh_test_mkdtemp();
	_cleanup_free_ char *file = NULL, *stop = NULL, *script = NULL;
	cr_assert(asprintf(&file, "%s/fd7", dir) > 0);
	cr_assert(asprintf(&stop, "%s/stop", dir) > 0);
	cr_assert(asprintf(&script, "echo up; while [ ! -e %s ]; do sleep 0.05; done", stop) > 0);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--", "/bin/sh", "-c", script, NULL };
	int out;
	pid_t pid = spawn(argv, &out, fd);
	char buf[256];
	cr_assert(read_until(out, "up", buf, sizeof(buf)), "the command did not start: %s", buf);
	pid_t init = init_of(pid);
	cr_assert_gt(init, 0, "no init among dshbox's children");
	char fds[64];
	snprintf(fds, sizeof(fds), "/proc/%d/fd", (int)init);
	if (geteuid() != 0) {
		DIR *d = opendir(fds);
		cr_expect(!d && errno == EACCES, "init's descriptors are open to its owner: %s", d ? "listed" : strerror(errno));
		if (d)
			closedir(d);
	} else {
		/* Serving the command's calls, init holds a descriptor or two for the length of one (a
		   pidfd, the file it fetched): the fewest over a few listings is what it keeps. */
		size_t fewest = SIZE_MAX;
		for (int sample = 0; sample < 20 && fewest > 7; sample++) {
			DIR *d = opendir(fds);
			cr_assert_not_null(d, "%s: %s", fds, strerror(errno));
			size_t n = 0;
			for (struct dirent *de; (de = readdir(d));) {
				if (de->d_name[0] == '.')
					continue;
				char link[PATH_MAX], target[PATH_MAX] = "";
				snprintf(link, sizeof(link), "%s/%s", fds, de->d_name);
				ssize_t k = readlink(link, target, sizeof(target) - 1);
				if (k <= 0)
					continue; /* closed since the listing */
				target[k] = '\0';
				cr_log_info("init's %s -> %s", de->d_name, target);
				cr_expect(strcmp(target, file) != 0, "init holds the caller's fd 7 (%s) as its %s", file, de->d_name);
				n++;
			}
			closedir(d);
			fewest = n < fewest ? n : fewest;
			usleep(50 * 1000);
		}
		/* 0-2, the signalfd, the listener, the status pipe and, serving, /proc. */
		cr_expect_leq(fewest, 7, "init holds %zu descriptors", fewest);
	}
	dsh_test_write_file(stop, "");
	int st;
	waitpid(pid, &st, 0);
	close(out);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	close(fd);
	dsh_test_rmtree(dir);
	free(dir);
}

/*
 * SPEC 3.7: dshbox's own processes dump no core, the command keeps the caller's limits.  A soft
 * core limit the caller chose (in 512-byte blocks for ulimit) must reach the command unchanged,
 * the hard one as well.
 */
static rlim_t set_soft_core_limit(void)
{
	struct rlimit rl;
	cr_assert_eq(getrlimit(RLIMIT_CORE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 512 * 1000)
		DSH_SKIP("the hard core limit (%llu) is below the test's soft one", (unsigned long long)rl.rlim_max);
	rl.rlim_cur = 512 * 1000;
	cr_assert_eq(setrlimit(RLIMIT_CORE, &rl), 0);
	return rl.rlim_max;
}

static void expect_limits(const char *out, rlim_t hard, const char *what)
{
	char want[64];
	if (hard == RLIM_INFINITY)
		snprintf(want, sizeof(want), "1000 unlimited\n");
	else
		snprintf(want, sizeof(want), "1000 %llu\n", (unsigned long long)(hard / 512));
	cr_expect_str_eq(out, want, "%s: the command's core limits (soft hard)", what);
}

Test(run_lifecycle, the_command_keeps_the_callers_core_limit)
{
	rlim_t hard = set_soft_core_limit();
	/* AddressSanitizer sets a sanitized dshbox's own soft limit to 0 at start unless told not to. */
	char *asan_env[] = { "PATH=/usr/bin:/bin", "ASAN_OPTIONS=disable_coredump=0", NULL };
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--", "/bin/sh", "-c", "echo $(ulimit -c) $(ulimit -Hc)", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, asan_env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	expect_limits(r.out, hard, "dshbox run");
	dsh_proc_clear(&r);
}

/* The library leaves its caller's process as it found it: core limit, dumpable flag. */
Test(run_lifecycle, confine_leaves_the_callers_process_state)
{
	rlim_t hard = set_soft_core_limit();
	char *ws = dsh_test_mkdtemp();
	_cleanup_free_ char *out = NULL, *shell = NULL;
	cr_assert(asprintf(&out, "%s/limits", ws) > 0);
	cr_assert(asprintf(&shell, "echo $(ulimit -c) $(ulimit -Hc) > '%s'", out) > 0);

	struct dsh_config c;
	dsh_config_init(&c);
	c.mode = DSH_MODE_WORKSPACE_WRITE;
	c.workspace = strdup(ws);
	struct dsh_policy *p = NULL;
	struct dsh_run_options o;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_policy_new(&c, env, ws, &p, &err), 0, "%s", err ? err->msg : "");
	cr_assert_eq(dsh_run_options_init(&o, &c, env, &err), 0, "%s", err ? err->msg : "");
	dsh_config_clear(&c);

	static const enum dsh_backend_id ids[] = { DSH_BACKEND_LINUX_NS, DSH_BACKEND_LANDLOCK };
	int ran = 0;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const struct dsh_backend *b = dsh_backend_get(ids[i]);
		if (!b || b->probe(p, &o, NULL) < 0) {
			cr_log_info("%s: not usable here, not run", b ? b->name : "?");
			continue;
		}
		void *plan = NULL;
		cr_assert_eq(b->compile(p, &o, &plan, &err), 0, "%s: %s", b->name, err ? err->msg : "");
		char *argv[] = { "/bin/sh", "-c", shell, NULL };
		struct dsh_run_request req = { .argv = argv, .envp = env };
		struct dsh_run_result res;
		int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
		struct rlimit before, after;
		cr_assert_eq(getrlimit(RLIMIT_CORE, &before), 0);
		cr_assert_eq(b->confine(p, plan, &req, &res, &err), 0, "%s: %s", b->name, err ? err->msg : "");
		cr_assert_eq(getrlimit(RLIMIT_CORE, &after), 0);
		cr_expect_eq(res.exit_code, 0, "%s", b->name);
		cr_expect(before.rlim_cur == after.rlim_cur && before.rlim_max == after.rlim_max,
			  "%s: the caller's core limit changed from %llu/%llu to %llu/%llu", b->name,
			  (unsigned long long)before.rlim_cur, (unsigned long long)before.rlim_max,
			  (unsigned long long)after.rlim_cur, (unsigned long long)after.rlim_max);
		cr_expect_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), dumpable, "%s: the caller's dumpable flag changed", b->name);
		_cleanup_free_ char *got = dsh_test_read_file(out);
		expect_limits(got, hard, b->name);
		free(res.message);
		dsh_strv_free(res.warnings);
		b->free(plan);
		unlink(out);
		ran++;
	}
	if (ran == 0)
		DSH_SKIP("neither linux-ns nor landlock can run on this machine");
	dsh_run_options_clear(&o);
	dsh_policy_free(p);
	dsh_test_rmtree(ws);
	free(ws);
}
