/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "supervisor/terminal.h"



/* tcsetpgrp and tcsetattr from a background group would stop us with SIGTTOU: blocked meanwhile. */
static void without_ttou(int fd, pid_t pgid, const struct termios *modes)
{
	sigset_t ttou, old;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	if (modes)
		(void)tcsetattr(fd, TCSANOW, modes);
	else
		(void)tcsetpgrp(fd, pgid);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* A process's parent and group, from /proc/PID/stat; false when it is gone or unreadable. */
static bool stat_of(const char *pid, pid_t *ppid, pid_t *pgrp)
{
	char path[300], buf[512];
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp ...": comm may hold anything, the last ')' ends it */
	const char *p = strrchr(buf, ')');
	int pp, pg;
	if (!p || sscanf(p + 1, " %*c %d %d", &pp, &pg) != 2)
		return false;
	*ppid = pp;
	*pgrp = pg;
	return true;
}

/*
 * Whether a process other than our ancestors is in our process group.  In `dshbox run -- cmd |
 * less` the shell puts less in dshbox's group; giving the foreground to the sandbox would stop
 * less at its first read of the terminal, so then the foreground stays where it is (the command
 * gets the terminal's signals through dshbox).  Ancestors (`sh -c`, make) only wait for us.
 * Unknown (no /proc): alone.
 */
static bool alone_in_group(void)
{
	pid_t ancestors[64];
	size_t n_anc = 0;
	for (pid_t p = getppid(); p > 1 && n_anc < ARRAY_SIZE(ancestors);) {
		ancestors[n_anc++] = p;
		char name[24];
		pid_t pg;
		snprintf(name, sizeof(name), "%d", (int)p);
		if (!stat_of(name, &p, &pg))
			break;
	}
	DIR *d = opendir("/proc");
	if (!d)
		return true;
	pid_t self = getpid(), pgrp = getpgrp();
	bool alone = true;
	struct dirent *de;
	while (alone && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t pid = atoi(de->d_name), ppid, pg;
		if (pid == self || !stat_of(de->d_name, &ppid, &pg) || pg != pgrp)
			continue;
		alone = false;
		for (size_t i = 0; i < n_anc; i++)
			if (ancestors[i] == pid)
				alone = true;
	}
	closedir(d);
	return alone;
}

void dsh_terminal_begin(struct dsh_terminal *t)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	/* The controlling terminal first: job control happens there. */
	for (int fd = 0; fd <= 2; fd++) {
		if (!isatty(fd))
			continue;
		bool ctty = tcgetpgrp(fd) >= 0;
		if (t->fd < 0 || (ctty && !t->ctty)) {
			t->fd = fd;
			t->ctty = ctty;
		}
	}
	if (t->fd < 0)
		return;
	t->have_modes = tcgetattr(t->fd, &t->modes) == 0;
	t->handed = t->ctty && tcgetpgrp(t->fd) == getpgrp() && alone_in_group();
}

void dsh_terminal_enter(int fd)
{
	(void)setpgid(0, 0);
	/* init never stops for job control (it must see the command stop and tell the supervisor);
	   the command gets the caller's mask back at exec. */
	sigset_t jc;
	sigemptyset(&jc);
	sigaddset(&jc, SIGTSTP);
	sigaddset(&jc, SIGTTIN);
	sigaddset(&jc, SIGTTOU);
	sigprocmask(SIG_BLOCK, &jc, NULL);
	if (fd >= 0)
		(void)tcsetpgrp(fd, getpgrp()); /* SIGTTOU is blocked: allowed from the background */
}

void dsh_terminal_stopped(struct dsh_terminal *t, int sig)
{
	/* Job control exists only on a controlling terminal; a stop by anyone's SIGSTOP is theirs to end. */
	if (!t->ctty || t->pgid <= 0 || (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU))
		return;
	struct termios cmd_modes;
	bool have_cmd_modes = false;
	if (t->handed) {
		/* What the command set (an editor's raw mode) comes back with the foreground, as a shell
		   keeps a stopped job's settings. */
		have_cmd_modes = tcgetattr(t->fd, &cmd_modes) == 0;
		without_ttou(t->fd, getpgrp(), NULL);
		t->handed = false;
		if (t->have_modes)
			without_ttou(t->fd, 0, &t->modes);
	}
	/* Stopped here until a SIGCONT (the shell's fg or bg); an orphaned group does not stop. */
	kill(getpid(), sig);
	if (tcgetpgrp(t->fd) == getpgrp() && alone_in_group()) {
		if (have_cmd_modes)
			without_ttou(t->fd, 0, &cmd_modes);
		without_ttou(t->fd, t->pgid, NULL);
		t->handed = true;
	}
	kill(-t->pgid, SIGCONT);
}

void dsh_terminal_end(struct dsh_terminal *t)
{
	if (t->fd < 0)
		return;
	/* Whoever has the foreground now is in the sandbox (its group, or one a shell inside made), and
	   everything there is dead: it comes back to dshbox's group. */
	if (t->handed && tcgetpgrp(t->fd) != getpgrp())
		without_ttou(t->fd, getpgrp(), NULL);
	t->handed = false;
	/* In the background, the terminal is the foreground job's: its settings are left alone. */
	if (t->have_modes && (!t->ctty || tcgetpgrp(t->fd) == getpgrp()))
		without_ttou(t->fd, 0, &t->modes);
	t->fd = -1;
}
