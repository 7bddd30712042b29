/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/write_all.h"
#include "supervisor/child.h"
#include "supervisor/forked_run.h"

/* The signals that reach the command (SPEC 3.8). */
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

/* The most watches one wait takes: a status and a report pipe (sandbox), a stderr (runner). */
#define MAX_WATCHES 4

/* Without a pidfd (before 5.3), how often the wait looks whether the child ended: SIGCHLD may
   have gone to a host's thread that leaves it unblocked. */
#define REAP_POLL_MS 100

void dsh_child_signal_set(sigset_t *ret)
{
	sigemptyset(ret);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(ret, forwarded[i]);
	sigaddset(ret, SIGCHLD);
}

void dsh_child_forward(pid_t pid, const struct signalfd_siginfo *si)
{
	if (si->ssi_signo != SIGCHLD && si->ssi_code != SI_KERNEL)
		kill(pid, (int)si->ssi_signo);
}

/* The mark on what a supervisor passes on to its own_group child ("dshb"). */
#define PASSED_ON 0x64736862

bool dsh_child_passed_on(const struct signalfd_siginfo *si)
{
	return si->ssi_code == SI_QUEUE && si->ssi_int == PASSED_ON;
}

static void pass_on(struct dsh_child *c, const struct signalfd_siginfo *si)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (now.tv_sec - c->last.at.tv_sec) * 1000 + (now.tv_nsec - c->last.at.tv_nsec) / 1000000;
	if (si->ssi_code == SI_USER && si->ssi_pid && si->ssi_signo == c->last.signo && si->ssi_pid == c->last.pid &&
	    ms < 100)
		return;
	c->last.signo = si->ssi_signo;
	c->last.pid = si->ssi_code == SI_USER ? si->ssi_pid : 0;
	c->last.at = now;
	(void)sigqueue(c->pid, (int)si->ssi_signo, (union sigval){ .sival_int = PASSED_ON });
}

int dsh_child_begin(struct dsh_child *c, struct dsh_error **err)
{
	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->sfd = -1;
	c->pidfd = -1;
	sigset_t set;
	dsh_child_signal_set(&set);
	/*
	 * SIGCHLD ignored (SIG_IGN, or SA_NOCLDWAIT) makes the kernel reap the child itself: no status
	 * to wait for, and a sandbox's init, which inherits the disposition, would lose its command's.
	 * A process started so (SIG_IGN survives exec) waits with the default action meanwhile.  Only
	 * where the process has one thread: the disposition is the whole process's, and a host's own
	 * children would become zombies nobody waits for (a threaded host's run is made in a child of
	 * it, forked_run.h, which is where this happens then).
	 */
	struct sigaction chld;
	if (sigaction(SIGCHLD, NULL, &chld) == 0 && (chld.sa_handler == SIG_IGN || (chld.sa_flags & SA_NOCLDWAIT)) &&
	    !dsh_process_is_threaded()) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		if (sigaction(SIGCHLD, &dfl, NULL) < 0)
			return dsh_err_sys(err, errno, "sigaction(SIGCHLD)");
		c->caller_chld = chld;
		c->chld_reset = true;
	}
	if (sigprocmask(SIG_BLOCK, &set, &c->caller_mask) < 0) {
		int e = errno;
		if (c->chld_reset)
			sigaction(SIGCHLD, &c->caller_chld, NULL);
		c->chld_reset = false;
		return dsh_err_sys(err, e, "sigprocmask");
	}
	/* Non-blocking: one wake-up reads every signal queued, and the end drains them. */
	c->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (c->sfd < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, &c->caller_mask, NULL);
		if (c->chld_reset)
			sigaction(SIGCHLD, &c->caller_chld, NULL);
		c->chld_reset = false;
		return dsh_err_sys(err, e, "signalfd");
	}
	return 0;
}

/* "clone(CLONE_NEWUSER|CLONE_NEWNS|...)", as the error names the call. */
static void clone_call_name(unsigned long flags, char *buf, size_t size)
{
	static const struct {
		unsigned long flag;
		const char *name;
	} names[] = {
		{ CLONE_NEWUSER, "CLONE_NEWUSER" }, { CLONE_NEWNS, "CLONE_NEWNS" },   { CLONE_NEWPID, "CLONE_NEWPID" },
		{ CLONE_NEWNET, "CLONE_NEWNET" },   { CLONE_NEWIPC, "CLONE_NEWIPC" }, { CLONE_NEWUTS, "CLONE_NEWUTS" },
	};
	size_t len = (size_t)snprintf(buf, size, "clone(");
	const char *sep = "";
	for (size_t i = 0; i < ARRAY_SIZE(names) && len < size; i++)
		if (flags & names[i].flag) {
			len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, names[i].name);
			sep = "|";
		}
	if (len < size)
		snprintf(buf + len, size - len, ")");
}

int dsh_child_spawn(struct dsh_child *c, unsigned long clone_flags, int (*fn)(void *arg), void *arg,
		    struct dsh_error **err)
{
	/* fork() runs the atfork handlers a plain copy of the caller needs (malloc's locks); a new
	   namespace needs the raw clone, which takes flags and, without CLONE_VM, no stack. */
	pid_t pid = clone_flags ? (pid_t)syscall(SYS_clone, clone_flags | SIGCHLD, NULL, NULL, NULL, NULL) : fork();
	if (pid < 0) {
		if (!clone_flags)
			return dsh_err_sys(err, errno, "fork");
		int e = errno;
		char call[128];
		clone_call_name(clone_flags, call, sizeof(call));
		return dsh_err_sys(err, e, "%s", call);
	}
	if (pid == 0) {
		close(c->sfd);
		_exit(fn(arg));
	}
	c->pid = pid;
	/* Opened before the child is reaped, so the pid is still the child's (and close-on-exec). */
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

static long long monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long dsh_child_deadline(long long ms)
{
	return monotonic_ms() + ms;
}

/*
 * -ECHILD when the child is gone without its status: another wait of this process took it.  It
 * counts as reaped then (its pid may already be another process's: never signalled again), and
 * the wait fails instead of looking for it for ever.
 */
static int reap_if_ended(struct dsh_child *c)
{
	if (c->reaped || c->pid < 0)
		return 0;
	pid_t w;
	while ((w = waitpid(c->pid, &c->status, WNOHANG)) < 0 && errno == EINTR)
		;
	if (w == c->pid)
		c->reaped = true;
	if (w < 0 && errno == ECHILD) {
		c->reaped = true;
		return -ECHILD;
	}
	return 0;
}

static int reaped_elsewhere(const struct dsh_child *c, struct dsh_error **err)
{
	return dsh_err(err, DSH_ERR_SYSTEM, ECHILD,
		       "wait: child %d ended and another wait of this process took its status", (int)c->pid);
}

void dsh_child_reap(struct dsh_child *c)
{
	if (c->reaped || c->pid < 0)
		return;
	pid_t w;
	while ((w = waitpid(c->pid, &c->status, 0)) < 0 && errno == EINTR)
		;
	c->reaped = true;
}

void dsh_child_kill(struct dsh_child *c)
{
	if (c->reaped || c->pid < 0)
		return;
	kill(c->pid, SIGKILL);
	dsh_child_reap(c);
}

/* Every signal queued: passed on, or (SIGCHLD) a reason to look whether the child ended. */
static int take_signals(struct dsh_child *c)
{
	struct signalfd_siginfo si;
	bool chld = false;
	while (read(c->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			chld = true;
		else if (c->own_group)
			pass_on(c, &si);
		else
			dsh_child_forward(c->pid, &si);
	}
	return chld ? reap_if_ended(c) : 0;
}

static void drain(struct dsh_child_watch *w)
{
	if (w->fd < 0)
		return;
	int fl = fcntl(w->fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(w->fd, F_SETFL, fl | O_NONBLOCK);
	while (w->ready(w->data, w->fd) == DSH_CHILD_GO_ON)
		;
	w->fd = -1;
}

int dsh_child_wait(struct dsh_child *c, struct dsh_child_watch *watches, size_t n, struct dsh_error **err)
{
	if (n > MAX_WATCHES)
		return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "wait: %zu descriptors to watch, at most %d", n, MAX_WATCHES);
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	sigaction(SIGPIPE, &ign, &old_pipe);
	int r = 0;
	bool done = false;
	while (!done && !c->reaped) {
		struct pollfd pf[2 + MAX_WATCHES] = { { c->sfd, POLLIN, 0 }, { c->pidfd, POLLIN, 0 } };
		size_t which[2 + MAX_WATCHES], npf = 2;
		for (size_t i = 0; i < n; i++)
			if (watches[i].fd >= 0) {
				pf[npf] = (struct pollfd){ watches[i].fd, POLLIN, 0 };
				which[npf++] = i;
			}
		int timeout = c->pidfd >= 0 ? -1 : REAP_POLL_MS;
		if (c->deadline_ms) {
			long long left = c->deadline_ms - monotonic_ms();
			if (left <= 0) {
				r = dsh_err(err, DSH_ERR_SYSTEM, ETIMEDOUT, "no answer by the deadline: killed");
				dsh_child_kill(c);
				break;
			}
			if (timeout < 0 || left < timeout)
				timeout = left > 60000 ? 60000 : (int)left;
		}
		if (poll(pf, npf, timeout) < 0) {
			if (errno == EINTR)
				continue;
			r = dsh_err_sys(err, errno, "poll");
			dsh_child_kill(c);
			break;
		}
		/* The descriptors first: a status written before the child ended is read as such. */
		for (size_t k = 2; k < npf && !done; k++) {
			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			struct dsh_child_watch *w = &watches[which[k]];
			int v = w->ready(w->data, w->fd);
			if (v != DSH_CHILD_GO_ON)
				w->fd = -1; /* finished: not read again, not even by the drain */
			if (v == DSH_CHILD_DONE)
				done = true;
		}
		if ((!done && (pf[0].revents & POLLIN) && take_signals(c) < 0) ||
		    (!done && (c->pidfd < 0 || (pf[1].revents & POLLIN)) && reap_if_ended(c) < 0)) {
			r = reaped_elsewhere(c, err);
			break;
		}
	}
	if (r == 0) {
		for (size_t i = 0; i < n; i++)
			drain(&watches[i]);
		if (reap_if_ended(c) < 0)
			r = reaped_elsewhere(c, err);
	}
	sigaction(SIGPIPE, &old_pipe, NULL);
	return r;
}

void dsh_child_end(struct dsh_child *c)
{
	if (c->sfd >= 0) {
		struct signalfd_siginfo si;
		while (read(c->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		close(c->sfd);
		c->sfd = -1;
	}
	if (c->pidfd >= 0) {
		close(c->pidfd);
		c->pidfd = -1;
	}
	sigprocmask(SIG_SETMASK, &c->caller_mask, NULL);
	if (c->chld_reset) {
		sigaction(SIGCHLD, &c->caller_chld, NULL);
		c->chld_reset = false;
	}
}

void dsh_child_decode(int status, struct dsh_run_result *ret)
{
	if (WIFSIGNALED(status)) {
		ret->signal = WTERMSIG(status);
		ret->exit_code = 128 + ret->signal;
	} else {
		ret->signal = 0;
		ret->exit_code = WEXITSTATUS(status);
	}
}

int dsh_child_relay_ready(void *relay, int fd)
{
	struct dsh_child_relay *rl = relay;
	char buf[65536];
	ssize_t got = read(fd, buf, sizeof(buf));
	if (got < 0 && errno == EINTR)
		return DSH_CHILD_GO_ON;
	if (got <= 0)
		return DSH_CHILD_CLOSE;
	(void)dsh_write_all(rl->to, buf, (size_t)got);
	if (rl->tap)
		rl->tap(rl->tap_data, buf, (size_t)got);
	return DSH_CHILD_GO_ON;
}
