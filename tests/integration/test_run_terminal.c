/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command, its process group and the caller's terminal (SPEC 3.6, 3.8), as a user sees them: a
 * signal reaches the command exactly once however it was sent (to dshbox, to dshbox's group as GNU
 * timeout and agent hosts do, by the terminal); Ctrl-C, Ctrl-Z and fg work under a pty; `stty`
 * inside does not outlive the run; `tty` names the terminal.  Each under both Linux backends.  The
 * command counts deliveries by appending a line to a file per signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/harness.h"

TestSuite(run_terminal, .timeout = 120);

static char *env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The signals the tests send arrive with their default action, whatever the runner set. */
static void default_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1 };
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

/* The helper that appends a line per delivery to WS/count, for 2.5 s; WS/ready once it counts. */
static char **counting_argv(const char *backend, const char *ws, const char *extra)
{
	static char *argv[16];
	size_t n = 0;
	argv[n++] = (char *)dsh_test_dshbox();
	argv[n++] = "run";
	argv[n++] = "--backend";
	argv[n++] = (char *)backend;
	argv[n++] = "--workspace";
	argv[n++] = (char *)ws;
	argv[n++] = "--";
	argv[n++] = dsh_test_helper("sig_count");
	argv[n++] = (char *)ws;
	argv[n++] = "2500";
	if (extra)
		argv[n++] = (char *)extra;
	argv[n] = NULL;
	return argv;
}

static char *read_count(const char *ws)
{
	char *p = dsh_test_fmt("%s/count", ws);
	char *c = access(p, F_OK) == 0 ? dsh_test_read_file(p) : strdup("");
	free(p);
	return c;
}

static bool wait_for_file(const char *ws, const char *name, int ms)
{
	char *p = dsh_test_fmt("%s/%s", ws, name);
	long end = now_ms() + ms;
	bool ok;
	while (!(ok = access(p, F_OK) == 0) && now_ms() < end)
		usleep(20000);
	free(p);
	return ok;
}

static void skip_125(const char *backend, int st, const char *what)
{
	if (WIFEXITED(st) && WEXITSTATUS(st) == 125)
		DSH_SKIP("%s cannot run here: %s", backend, what);
}

/* ---- exactly once: GNU timeout (our pid, then our group) ---- */

/*
 * timeout's timer is its SIGALRM: sent once the command counts, it is the timer expiring, with no
 * race against a start slower than any fixed duration (under TCG a landlock start can take over
 * the second a `timeout 1` gave it, and the SIGINT then met dshbox's setup, not the command).
 */
static void timeout_once(const char *backend)
{
	default_signals();
	char *ws = dsh_test_mkdtemp();
	char *errpath = dsh_test_fmt("%s/stderr", ws);
	char *argv[20] = { "timeout", "-s", "INT", "600" };
	char **run = counting_argv(backend, ws, NULL);
	for (size_t i = 0; run[i]; i++)
		argv[4 + i] = run[i];
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(null, 0);
		dup2(null, 1);
		dup2(err, 2);
		execvpe(argv[0], argv, env);
		_exit(127);
	}
	bool ready = wait_for_file(ws, "ready", 20000);
	int st;
	if (!ready) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		char *err = dsh_test_read_file(errpath);
		if (strstr(err, "dshbox: error:"))
			DSH_SKIP("%s cannot run here: %s", backend, err);
		cr_assert_fail("%s: the command never started (status %#x): %s", backend, st, err);
	}
	kill(pid, SIGALRM);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	char *count = read_count(ws);
	cr_expect_str_eq(count, "INT\n", "%s: timeout's SIGINT reached the command other than once: '%s'", backend,
			 count);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 124, "%s: timeout's own status: %#x", backend, st);
	free(count);
	free(errpath);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_terminal, timeout_sigint_reaches_the_command_once_linux_ns) { timeout_once("linux-ns"); }
Test(run_terminal, timeout_sigint_reaches_the_command_once_landlock) { timeout_once("landlock"); }

/* ---- exactly once: kill -INT -PGID, kill -TERM -PGID (a host killing the job's group) ---- */

static void group_kill_once(const char *backend)
{
	default_signals();
	char *ws = dsh_test_mkdtemp();
	char **argv = counting_argv(backend, ws, NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		execve(argv[0], argv, env);
		_exit(127);
	}
	setpgid(pid, pid);
	bool ready = wait_for_file(ws, "ready", 20000);
	int st;
	if (!ready) {
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
		skip_125(backend, st, "no ready");
		cr_assert_fail("%s: the command never started (status %#x)", backend, st);
	}
	kill(-pid, SIGINT);
	usleep(400000);
	kill(-pid, SIGTERM);
	waitpid(pid, &st, 0);
	char *count = read_count(ws);
	cr_expect_str_eq(count, "INT\nTERM\n", "%s: signals to dshbox's group reached the command other than once: '%s'",
			 backend, count);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x", backend, st);
	free(count);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_terminal, group_signals_reach_the_command_once_linux_ns) { group_kill_once("linux-ns"); }
Test(run_terminal, group_signals_reach_the_command_once_landlock) { group_kill_once("landlock"); }

/* ---- kill(0) inside: the sandbox's own group, the command once ---- */

static void kill_zero_once(const char *backend)
{
	default_signals();
	char *ws = dsh_test_mkdtemp();
	char **argv = counting_argv(backend, ws, "kill0");
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
	if (r.exit_code == 125)
		DSH_SKIP("%s cannot run here: %s", backend, r.err);
	char *count = read_count(ws);
	cr_expect_str_eq(count, "USR1\n", "%s: the command's own kill(0) reached it other than once: '%s'", backend,
			 count);
	cr_expect_eq(r.exit_code, 0, "%s: exit %d: %s", backend, r.exit_code, r.err);
	free(count);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_terminal, kill_zero_inside_reaches_the_command_once_linux_ns) { kill_zero_once("linux-ns"); }
Test(run_terminal, kill_zero_inside_reaches_the_command_once_landlock) { kill_zero_once("landlock"); }

/* ---- under a pty ---- */

struct pty {
	pid_t pid;
	int master;
	char out[65536];
	size_t len, seen; /* seen: where the next wait starts looking */
};

/* argv runs as the session leader of a new pty: its stdin, stdout, stderr and controlling terminal. */
static void pty_start(struct pty *p, char *const argv[])
{
	memset(p, 0, sizeof(*p));
	default_signals();
	p->pid = forkpty(&p->master, NULL, NULL, NULL);
	cr_assert_geq(p->pid, 0, "forkpty: %s", strerror(errno));
	if (p->pid == 0) {
		execve(argv[0], argv, env);
		_exit(127);
	}
}

/* Read what the terminal shows for up to ms; false at end of file. */
static bool pty_read(struct pty *p, int ms)
{
	struct pollfd pf = { p->master, POLLIN, 0 };
	if (poll(&pf, 1, ms) <= 0)
		return true;
	ssize_t n = read(p->master, p->out + p->len, sizeof(p->out) - 1 - p->len);
	if (n <= 0)
		return false; /* EIO: every slave descriptor is closed */
	p->len += (size_t)n;
	p->out[p->len] = '\0';
	return true;
}

static bool pty_wait_for(struct pty *p, const char *text, int ms)
{
	long end = now_ms() + ms;
	for (;;) {
		char *at = strstr(p->out + p->seen, text);
		if (at) {
			p->seen = (size_t)(at - p->out) + strlen(text);
			return true;
		}
		if (now_ms() >= end || !pty_read(p, (int)(end - now_ms())))
			return strstr(p->out + p->seen, text) != NULL;
	}
}

static void pty_send(struct pty *p, const char *s)
{
	cr_assert_eq(write(p->master, s, strlen(s)), (ssize_t)strlen(s));
}

/* Everything to the end, and the status. */
static int pty_finish(struct pty *p)
{
	long end = now_ms() + 30000;
	bool open = true;
	int st;
	while (now_ms() < end) {
		if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
			while (open && poll(&(struct pollfd){ p->master, POLLIN, 0 }, 1, 0) > 0)
				open = pty_read(p, 0);
			close(p->master);
			return st;
		}
		if (!open || !(open = pty_read(p, 100)))
			usleep(20000);
	}
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &st, 0);
	close(p->master);
	cr_log_info("the terminal showed:\n%s", p->out);
	cr_assert_fail("the run under the pty did not end");
	return st;
}

static void ctrl_c_once(const char *backend)
{
	char *ws = dsh_test_mkdtemp();
	char **argv = counting_argv(backend, ws, NULL);
	struct pty p;
	pty_start(&p, argv);
	bool ready = wait_for_file(ws, "ready", 20000);
	if (ready)
		pty_send(&p, "\003"); /* the terminal's Ctrl-C: SIGINT to its foreground group */
	int st = pty_finish(&p);
	cr_log_info("%s: status %#x, the terminal showed:\n%s", backend, st, p.out);
	skip_125(backend, st, p.out);
	cr_assert(ready, "%s: the command never started", backend);
	char *count = read_count(ws);
	cr_expect_str_eq(count, "INT\n", "%s: Ctrl-C reached the command other than once: '%s'", backend, count);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x", backend, st);
	free(count);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_terminal, ctrl_c_reaches_the_command_once_linux_ns) { ctrl_c_once("linux-ns"); }
Test(run_terminal, ctrl_c_reaches_the_command_once_landlock) { ctrl_c_once("landlock"); }

/*
 * An interactive bash runs dshbox as a job: Ctrl-Z stops the command, and dshbox with it (bash
 * says so); fg continues both, and the command, back in the foreground, reads the terminal.
 */
static void ctrl_z_fg(const char *backend)
{
	if (access("/bin/bash", X_OK) != 0)
		DSH_SKIP("no /bin/bash to play the interactive shell");
	char *ws = dsh_test_mkdtemp();
	char *argv[] = { "/bin/bash", "--norc", "--noprofile", "-i", NULL };
	struct pty p;
	pty_start(&p, argv);
	pty_send(&p, "PS1='PROMPT> '\n");
	cr_assert(pty_wait_for(&p, "PROMPT> ", 10000), "no prompt from bash:\n%s", p.out);
	char *line = dsh_test_fmt("%s run --backend %s --workspace %s -- /bin/sh -c 'echo RE''ADY; read x; echo GOT:$x'\n",
			 dsh_test_dshbox(), backend, ws);
	pty_send(&p, line);
	bool ready = pty_wait_for(&p, "READY", 20000);
	if (!ready && strstr(p.out, "dshbox: error:")) {
		pty_send(&p, "exit\n");
		pty_finish(&p);
		DSH_SKIP("%s cannot run here: %s", backend, p.out);
	}
	cr_assert(ready, "%s: the command never started:\n%s", backend, p.out);
	usleep(200000);
	pty_send(&p, "\032"); /* Ctrl-Z */
	cr_expect(pty_wait_for(&p, "Stopped", 10000), "%s: bash did not see the job stop:\n%s", backend, p.out);
	cr_expect(pty_wait_for(&p, "PROMPT> ", 10000), "%s: no prompt after the stop:\n%s", backend, p.out);
	pty_send(&p, "fg\n");
	usleep(500000);
	pty_send(&p, "hello\n");
	cr_expect(pty_wait_for(&p, "GOT:hello", 10000), "%s: after fg the command did not read the terminal:\n%s",
		  backend, p.out);
	cr_expect(pty_wait_for(&p, "PROMPT> ", 10000), "%s: no prompt after the job:\n%s", backend, p.out);
	pty_send(&p, "echo STATUS:$?\n");
	cr_expect(pty_wait_for(&p, "STATUS:0", 10000), "%s: the job did not end well:\n%s", backend, p.out);
	pty_send(&p, "exit\n");
	int st = pty_finish(&p);
	cr_log_info("%s: the terminal showed:\n%s", backend, p.out);
	cr_expect(WIFEXITED(st), "bash: status %#x", st);
	free(line);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_terminal, ctrl_z_and_fg_linux_ns) { ctrl_z_fg("linux-ns"); }
Test(run_terminal, ctrl_z_and_fg_landlock) { ctrl_z_fg("landlock"); }

/* ---- the terminal's settings, and its name ---- */

static void stty_restored(const char *backend)
{
	int master, slave;
	cr_assert_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
	struct termios before, after;
	cr_assert_eq(tcgetattr(slave, &before), 0);
	cr_assert(before.c_lflag & ECHO);
	default_signals();
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, 0), dup2(slave, 1), dup2(slave, 2);
		close(master);
		/* A workspace without .git: the landlock backend refuses to lose its protected names. */
		char *argv[] = { (char *)dsh_test_dshbox(), "run", "--backend", (char *)backend, "--workspace", "/var/tmp",
				 "--", "/bin/sh", "-c", "stty -echo -icanon raw && echo STTY-DONE", NULL };
		execve(argv[0], argv, env);
		_exit(127);
	}
	/* The output is read as it comes, so that the run never blocks on a full terminal. */
	struct pty p = { .pid = pid, .master = master };
	long end = now_ms() + 30000;
	int st = 0;
	while (now_ms() < end && waitpid(pid, &st, WNOHANG) == 0)
		pty_read(&p, 100);
	cr_log_info("%s: status %#x, the terminal showed:\n%s", backend, st, p.out);
	skip_125(backend, st, p.out);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x: %s", backend, st, p.out);
	cr_assert_eq(tcgetattr(slave, &after), 0);
	cr_expect(after.c_lflag & ECHO, "%s: stty -echo inside outlived the run", backend);
	cr_expect(after.c_lflag & ICANON, "%s: stty raw inside outlived the run", backend);
	cr_expect_eq(after.c_iflag, before.c_iflag, "%s: input flags changed", backend);
	cr_expect_eq(after.c_oflag, before.c_oflag, "%s: output flags changed", backend);
	close(slave), close(master);
}

Test(run_terminal, stty_inside_does_not_persist_linux_ns) { stty_restored("linux-ns"); }
Test(run_terminal, stty_inside_does_not_persist_landlock) { stty_restored("landlock"); }

static void tty_named(const char *backend)
{
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--backend", (char *)backend, "--workspace", "/var/tmp",
			 "--", "/bin/sh", "-c", "tty && echo TTY-OK", NULL };
	struct pty p;
	pty_start(&p, argv);
	int st = pty_finish(&p);
	cr_log_info("%s: status %#x, the terminal showed:\n%s", backend, st, p.out);
	skip_125(backend, st, p.out);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: tty failed (status %#x): %s", backend, st, p.out);
	cr_expect(strstr(p.out, "/dev/") && strstr(p.out, "TTY-OK"), "%s: tty named no terminal: %s", backend, p.out);
	cr_expect(!strstr(p.out, "not a tty"), "%s: %s", backend, p.out);
}

Test(run_terminal, tty_names_the_terminal_linux_ns) { tty_named("linux-ns"); }
Test(run_terminal, tty_names_the_terminal_landlock) { tty_named("landlock"); }
