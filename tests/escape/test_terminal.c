/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The caller's process group and the user's other terminals (issue 11, SPEC 3.7, 3.8), attacked
 * from inside `dshbox run` under both Linux backends by name, with a host-side oracle:
 *   - kill(0) inside must not reach a host process in dshbox's process group (the oracle counts
 *     the signals it gets);
 *   - another pty of the user (opened here, host side, with keystrokes waiting in its input)
 *     must be neither read nor written from inside: afterwards the keystrokes are still there
 *     and nothing new came out of it.
 * A control run of each attack outside any sandbox shows that the oracle sees the attack.
 * Runs as root and as an unprivileged user.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "tests/lib/harness.h"

TestSuite(terminal, .timeout = 120);

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL };

/* ---- kill(0): the host process sharing dshbox's group ---- */

static int oracle_pipe[2];

static void oracle_hit(int sig)
{
	(void)sig;
	(void)!write(oracle_pipe[1], "!", 1);
}

static void kill_zero_attack(const char *backend)
{
	char *ws = dsh_test_mkdtemp();
	cr_assert_eq(pipe2(oracle_pipe, O_CLOEXEC), 0);
	int ready[2];
	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	pid_t oracle = fork();
	cr_assert_geq(oracle, 0);
	if (oracle == 0) {
		setpgid(0, 0);
		struct sigaction sa = { .sa_handler = oracle_hit };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		(void)!write(ready[1], "r", 1);
		for (;;)
			pause();
	}
	setpgid(oracle, oracle);
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1);
	close(ready[0]), close(ready[1]);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setpgid(0, oracle); /* dshbox shares the oracle's process group, as a host's job does */
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0), dup2(null, 1);
		signal(SIGUSR1, SIG_DFL);
		char *helper = dsh_test_helper("sig_count");
		char *sandboxed[] = { (char *)dsh_test_dshbox(), "run", "--backend", (char *)(backend ? backend : ""),
				      "--workspace", ws, "--", helper, ws, "300", "kill0", NULL };
		char *bare[] = { helper, ws, "300", "kill0", NULL };
		execve(backend ? sandboxed[0] : bare[0], backend ? sandboxed : bare, env);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	usleep(100000);
	kill(oracle, SIGKILL);
	waitpid(oracle, NULL, 0);
	close(oracle_pipe[1]);
	char hits[16];
	ssize_t n = read(oracle_pipe[0], hits, sizeof(hits));
	close(oracle_pipe[0]);
	char *count_path = NULL;
	cr_assert(asprintf(&count_path, "%s/count", ws) > 0);
	char *count = access(count_path, F_OK) == 0 ? dsh_test_read_file(count_path) : strdup("");
	const char *what = backend ? backend : "control";
	cr_log_info("%s: status %#x, oracle hits %zd, the command counted '%s'", what, st, n, count);
	dsh_test_rmtree(ws);
	free(ws), free(count_path);
	if (backend && WIFEXITED(st) && WEXITSTATUS(st) == 125) {
		free(count);
		DSH_SKIP("%s cannot run here", backend);
	}
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x", what, st);
	cr_expect_str_eq(count, "USR1\n", "%s: the command's own kill(0) did not reach it once", what);
	if (backend)
		cr_expect_eq(n, 0, "%s: kill(0) inside reached a host process in dshbox's group", what);
	else
		cr_expect_eq(n, 1, "control: the oracle missed the kill(0)");
	free(count);
}

Test(terminal, kill_zero_stays_in_the_sandbox_linux_ns) { kill_zero_attack("linux-ns"); }
Test(terminal, kill_zero_stays_in_the_sandbox_landlock) { kill_zero_attack("landlock"); }
Test(terminal, kill_zero_control_without_sandbox) { kill_zero_attack(NULL); }

/* ---- another terminal of the user ---- */

#define KEYS "SECRET-KEYS-TYPED-ELSEWHERE"

static int open_pty(int *master, char **slave_path)
{
	*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(*master, 0);
	cr_assert_eq(grantpt(*master), 0);
	cr_assert_eq(unlockpt(*master), 0);
	*slave_path = strdup(ptsname(*master));
	int slave = open(*slave_path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	cr_assert_geq(slave, 0);
	struct termios t;
	cr_assert_eq(tcgetattr(slave, &t), 0);
	cfmakeraw(&t); /* no echo: whatever comes out of the master was written to the slave */
	cr_assert_eq(tcsetattr(slave, TCSANOW, &t), 0);
	return slave;
}

static size_t read_now(int fd, char *buf, size_t size)
{
	size_t len = 0;
	struct pollfd pf = { fd, POLLIN, 0 };
	while (len < size - 1 && poll(&pf, 1, 200) == 1 && (pf.revents & POLLIN)) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return len;
}

static void other_pty_attack(const char *backend)
{
	char *ws = dsh_test_mkdtemp();
	/* The caller's own terminal: the command's stdin and controlling terminal. */
	int own_master;
	char *own_path;
	int own_slave = open_pty(&own_master, &own_path);
	/* The victim: another terminal of the same user, keystrokes waiting in its input. */
	int master;
	char *victim;
	int slave = open_pty(&master, &victim);
	cr_assert_eq(write(master, KEYS, strlen(KEYS)), (ssize_t)strlen(KEYS));
	int out[2];
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	/* The inner shell exits when the open fails (a redirection on exec). */
	const char *script = "if sh -c 'exec 3<>\"$1\" && echo open=ok && echo INJECTED >&3 && "
			     "dd bs=256 count=1 iflag=nonblock <&3 2>/dev/null; echo' sh \"$1\" 2>/dev/null; then :; "
			     "else echo open=denied; fi";
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setsid();
		int tty = open(own_path, O_RDWR);
		ioctl(tty, TIOCSCTTY, 0);
		dup2(tty, 0), dup2(out[1], 1), dup2(out[1], 2);
		char *sandboxed[] = { (char *)dsh_test_dshbox(), "run", "--backend", (char *)(backend ? backend : ""),
				      "--workspace", ws, "--", "/bin/sh", "-c", (char *)script, "sh", victim, NULL };
		char *bare[] = { "/bin/sh", "-c", (char *)script, "sh", victim, NULL };
		execve(backend ? sandboxed[0] : bare[0], backend ? sandboxed : bare, env);
		_exit(127);
	}
	close(out[1]);
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) - 1 && (n = read(out[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	int st;
	waitpid(pid, &st, 0);
	const char *what = backend ? backend : "control";
	/* The oracle: what is still waiting in the victim's input, what came out of it. */
	char left[256], came[256];
	read_now(slave, left, sizeof(left));
	read_now(master, came, sizeof(came));
	cr_log_info("%s: status %#x, victim %s\n%s\nleft in its input: '%s'\nwritten to it: '%s'", what, st, victim, buf,
		    left, came);
	close(slave), close(master), close(own_slave), close(own_master), close(out[0]);
	free(own_path), free(victim);
	dsh_test_rmtree(ws);
	free(ws);
	if (backend && WIFEXITED(st) && WEXITSTATUS(st) == 125)
		DSH_SKIP("%s cannot run here: %s", backend, buf);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x: %s", what, st, buf);
	if (backend) {
		cr_expect(strstr(buf, "open=denied"), "%s: another terminal of the user was opened: %s", what, buf);
		cr_expect_str_eq(left, KEYS, "%s: the other terminal's keystrokes were read from inside", what);
		cr_expect(!strstr(came, "INJECTED"), "%s: text was written into the other terminal", what);
		cr_expect(!strstr(buf, KEYS), "%s: the keystrokes reached the command", what);
	} else {
		cr_expect(strstr(buf, "open=ok"), "control: %s", buf);
		cr_expect(strstr(came, "INJECTED"), "control: the oracle missed the write");
		cr_expect(strstr(buf, KEYS), "control: the oracle's keystrokes were not readable");
	}
}

Test(terminal, other_pty_unreachable_linux_ns) { other_pty_attack("linux-ns"); }
Test(terminal, other_pty_unreachable_landlock) { other_pty_attack("landlock"); }
Test(terminal, other_pty_control_without_sandbox) { other_pty_attack(NULL); }
