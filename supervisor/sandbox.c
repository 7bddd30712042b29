/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "common/write_all.h"
#include "supervisor/sandbox.h"

/* What the child side tells the supervisor: one record, one write (< PIPE_BUF, so atomic). */
enum { REC_SETUP = 1, REC_EXEC = 2, REC_WARN = 3 };
struct record {
	int32_t kind;
	int32_t code;      /* errno */
	int32_t exit_code; /* REC_EXEC: 126 or 127 */
	char msg[2560];
	char hint[512];
};

/* The signals that reach the command (SPEC 3.8), plus SIGCHLD for the waiting. */
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

static void signal_set(sigset_t *s)
{
	sigemptyset(s);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(s, forwarded[i]);
	sigaddset(s, SIGCHLD);
}

static void send_record(int fd, int kind, int exit_code, const char *stage, const struct dsh_error *e)
{
	struct record rec;
	memset(&rec, 0, sizeof(rec));
	rec.kind = kind;
	rec.code = e ? e->code : EIO;
	rec.exit_code = exit_code;
	if (kind == REC_SETUP || kind == REC_WARN)
		snprintf(rec.msg, sizeof(rec.msg), "setup stage '%s': %s", stage, e && e->msg ? e->msg : "failed");
	else
		snprintf(rec.msg, sizeof(rec.msg), "%s", e && e->msg ? e->msg : "exec failed");
	if (e && e->hint)
		snprintf(rec.hint, sizeof(rec.hint), "%s", e->hint);
	/* Smaller than PIPE_BUF: one write, never interleaved with another record. */
	(void)dsh_write_all(fd, &rec, sizeof(rec));
}

static _Noreturn void command_main(struct dsh_stage_ctx *c)
{
	for (const struct dsh_stage *s = dsh_stages; s->name; s++) {
		if (s->where != DSH_STAGE_COMMAND || (s->needs_ns && c->spec->no_namespaces))
			continue;
		struct dsh_error *e = NULL;
		if (s->run(c, &e) < 0) {
			if (c->exec_exit) {
				send_record(c->report_fd, REC_EXEC, c->exec_exit, s->name, e);
				_exit(c->exec_exit);
			}
			send_record(c->report_fd, REC_SETUP, 0, s->name, e);
			_exit(125);
		}
	}
	/* The table always ends in exec, which returns only on failure. */
	_exit(125);
}

struct command_arg {
	struct dsh_stage_ctx *c;
	int sfd, status_fd;
};

static int command_fn(void *p)
{
	struct command_arg *a = p;
	close(a->sfd);
	close(a->status_fd);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	command_main(a->c);
}

/*
 * Without a pid namespace nothing ends the command's leftovers for us: init is a child subreaper,
 * so orphans come to it; kill every child, reap one, repeat until there is none.
 */
static void kill_descendants(void)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	for (;;) {
		FILE *f = fopen(path, "re");
		if (!f)
			return; /* no CONFIG_PROC_CHILDREN: documented limit */
		int pid;
		while (fscanf(f, "%d", &pid) == 1)
			kill(pid, SIGKILL);
		fclose(f);
		pid_t w;
		do
			w = waitpid(-1, NULL, 0);
		while (w < 0 && errno == EINTR);
		if (w < 0)
			return; /* ECHILD: nothing left */
	}
}

static _Noreturn void init_main(struct dsh_stage_ctx *c, int status_fd)
{
	/* Die with the supervisor; if it is already gone (its end of the pipe closed), stop now. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(125);
	struct pollfd pf = { .fd = c->report_fd, .events = POLLOUT };
	if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLERR))
		_exit(125);
	/*
	 * dshbox's own processes dump no core (SPEC 3.7).  Only the soft limit for now: the command is
	 * cloned from init and must get the caller's hard limit back, which no one can raise again.
	 */
	struct rlimit nocore = { 0, c->caller_core.rlim_max };
	if (setrlimit(RLIMIT_CORE, &nocore) < 0) {
		struct dsh_error *e = NULL;
		dsh_err_sys(&e, errno, "setrlimit(RLIMIT_CORE)");
		send_record(c->report_fd, REC_SETUP, 0, "init", e);
		_exit(125);
	}
	/* Dumpable while the stages run (the sandbox's root process must own its /proc files to map
	   ids); nothing untrusted runs before it is made non-dumpable below. */
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	for (const struct dsh_stage *s = dsh_stages; s->name; s++) {
		if (s->where != DSH_STAGE_INIT || (s->needs_ns && c->spec->no_namespaces))
			continue;
		struct dsh_error *e = NULL;
		if (s->run(c, &e) < 0) {
			send_record(c->report_fd, REC_SETUP, 0, s->name, e);
			_exit(125);
		}
	}
	if (c->mount_outcome.proc_fallback) {
		struct dsh_error *w = NULL;
		dsh_err(&w, DSH_ERR_UNSUPPORTED, EPERM, "the kernel refused a fresh procfs; the host's /proc is bound "
							 "instead (host processes are visible inside)");
		send_record(c->report_fd, REC_WARN, 0, "mounts", w);
		dsh_error_free(w);
	}
	/* Nothing inside may ptrace init.  Entering the nested user namespace keeps PDEATHSIG; said again. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(125);

	sigset_t set;
	signal_set(&set);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		struct dsh_error *e = NULL;
		dsh_err_sys(&e, errno, "signalfd");
		send_record(c->report_fd, REC_SETUP, 0, "init", e);
		_exit(125);
	}
	if (c->spec->no_namespaces && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		struct dsh_error *e = NULL;
		dsh_err_sys(&e, errno, "prctl(PR_SET_CHILD_SUBREAPER)");
		send_record(c->report_fd, REC_SETUP, 0, "init", e);
		_exit(125);
	}
	/*
	 * The command shares init's memory until it execs (CLONE_VM|CLONE_VFORK, its own stack): no page
	 * tables copied on the way to exec, and init waits, suspended, until the exec or the failure.
	 */
	static char stack[256 * 1024] __attribute__((aligned(16)));
	struct command_arg arg = { .c = c, .sfd = sfd, .status_fd = status_fd };
	pid_t cmd = clone(command_fn, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &arg);
	if (cmd < 0) {
		struct dsh_error *e = NULL;
		dsh_err_sys(&e, errno, "clone");
		send_record(c->report_fd, REC_SETUP, 0, "init", e);
		_exit(125);
	}
	/* The command has its copy of the limits: init's hard limit can go to 0 as well. */
	nocore.rlim_max = 0;
	(void)setrlimit(RLIMIT_CORE, &nocore); /* lowering a limit cannot fail */
	close(c->report_fd);
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si))
			_exit(125);
		if (si.ssi_signo != SIGCHLD) {
			/* A terminal's interrupt, quit or resize went to the whole foreground group, the command
			   included: passing it on again would deliver it twice. */
			if (si.ssi_code != SI_KERNEL)
				kill(cmd, (int)si.ssi_signo);
			continue;
		}
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
			if (w != cmd)
				continue; /* an orphan re-parented to us: reaped, nothing more */
			/* Everything left in the sandbox dies and is reaped before the status goes out.  Without
			   a pid namespace kill(-1) would reach every process of the user: kill our own only. */
			if (c->spec->no_namespaces) {
				kill_descendants();
			} else {
				kill(-1, SIGKILL);
				while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
					;
			}
			int32_t status = st;
			(void)dsh_write_all(status_fd, &status, sizeof(status));
			_exit(0);
		}
	}
}

static int check_preserved(const struct dsh_run_request *req, struct dsh_error **err)
{
	for (size_t i = 0; i < req->n_preserve_fds; i++) {
		int fd = req->preserve_fds[i];
		if (fd < 3 || fcntl(fd, F_GETFD) < 0)
			return dsh_err(err, DSH_ERR_USAGE, EBADF, "--preserve-fd %d: not an open descriptor above 2", fd);
	}
	return 0;
}

int dsh_sandbox_run(const struct dsh_sandbox_spec *spec, struct dsh_run_result *ret, struct dsh_error **err)
{
	char **warnings = NULL; /* before every goto below */
	int r = check_preserved(spec->req, err);
	if (r < 0)
		return r;
	/*
	 * The library never changes its caller's process state: the core limit and the dumpable flag
	 * are set in init (supervisor/stages.c gives the command the caller's limit back).  Read here,
	 * before the clone, so that the command gets what its caller has.
	 */
	struct rlimit core;
	if (getrlimit(RLIMIT_CORE, &core) < 0)
		return dsh_err_sys(err, errno, "getrlimit(RLIMIT_CORE)");

	int report[2], status[2];
	if (pipe2(report, O_CLOEXEC) < 0)
		return dsh_err_sys(err, errno, "pipe");
	if (pipe2(status, O_CLOEXEC) < 0) {
		int e = errno;
		close(report[0]);
		close(report[1]);
		return dsh_err_sys(err, e, "pipe");
	}
	sigset_t set, old;
	signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		r = dsh_err_sys(err, errno, "signalfd");
		goto out_pipes;
	}

	struct dsh_stage_ctx ctx = { .spec = spec, .caller_mask = old, .caller_core = core, .report_fd = report[1] };
	unsigned long flags = spec->no_namespaces ? 0
			      : CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (spec->new_net ? CLONE_NEWNET : 0);
	pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0 && spec->no_namespaces) {
		r = dsh_err_sys(err, errno, "fork");
		goto out_sfd;
	}
	if (pid < 0) {
		r = dsh_err_sys(err, errno, "clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID%s)",
				spec->new_net ? "|CLONE_NEWNET" : "");
		dsh_err_hint(err, "this host forbids unprivileged user namespaces; try --backend landlock");
		goto out_sfd;
	}
	if (pid == 0) {
		close(report[0]);
		close(status[0]);
		close(sfd);
		init_main(&ctx, status[1]);
	}
	close(report[1]);
	report[1] = -1;
	close(status[1]);
	status[1] = -1;

	struct record rec;
	bool have_rec = false, have_status = false, reaped = false;
	int init_status = 0;
	int32_t cmd_status = 0;
	for (bool done = false; !done;) {
		struct pollfd pf[3] = { { sfd, POLLIN, 0 }, { status[0], POLLIN, 0 }, { report[0], POLLIN, 0 } };
		if (poll(pf, report[0] >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = dsh_err_sys(err, errno, "poll");
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			goto out_sfd;
		}
		if (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			/* The command's status, sent once everything in the sandbox is dead and reaped.  init's
			   own exit (tearing the namespaces down) is not waited for. */
			ssize_t n = read(status[0], &cmd_status, sizeof(cmd_status));
			if (n < 0 && errno == EINTR)
				continue;
			have_status = n == (ssize_t)sizeof(cmd_status);
			done = true;
		}
		if (report[0] >= 0 && (pf[2].revents & (POLLIN | POLLHUP | POLLERR))) {
			struct record tmp;
			ssize_t n = read(report[0], &tmp, sizeof(tmp));
			if (n == (ssize_t)sizeof(tmp) && tmp.kind == REC_WARN) {
				tmp.msg[sizeof(tmp.msg) - 1] = '\0';
				(void)dsh_strv_push(&warnings, tmp.msg);
			} else if (n == (ssize_t)sizeof(tmp) && !have_rec) {
				rec = tmp;
				have_rec = true;
			} else if (n <= 0 && !(n < 0 && errno == EINTR)) {
				close(report[0]); /* EOF: the command exec'd, or everything that could write died */
				report[0] = -1;
			}
		}
		if (pf[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
				continue;
			if (si.ssi_signo != SIGCHLD) {
				if (si.ssi_code != SI_KERNEL) /* the terminal told the command itself */
					kill(pid, (int)si.ssi_signo);
				continue;
			}
			if (waitpid(pid, &init_status, WNOHANG) == pid) {
				reaped = true;
				/* init is gone; its status (if any) is in the pipe, which now reads to the end. */
				if (!have_status)
					have_status = read(status[0], &cmd_status, sizeof(cmd_status)) == (ssize_t)sizeof(cmd_status);
				done = true;
			}
		}
	}
	if (!reaped && waitpid(pid, &init_status, WNOHANG) == pid)
		reaped = true;
	/* A record may still sit in the pipe when init went first. */
	for (struct record tmp; report[0] >= 0 && read(report[0], &tmp, sizeof(tmp)) == (ssize_t)sizeof(tmp);) {
		if (tmp.kind == REC_WARN) {
			tmp.msg[sizeof(tmp.msg) - 1] = '\0';
			(void)dsh_strv_push(&warnings, tmp.msg);
		} else if (!have_rec) {
			rec = tmp;
			have_rec = true;
		}
	}

	if (have_rec && rec.kind == REC_SETUP) {
		rec.msg[sizeof(rec.msg) - 1] = '\0';
		rec.hint[sizeof(rec.hint) - 1] = '\0';
		r = dsh_err(err, DSH_ERR_SYSTEM, rec.code, "%s", rec.msg);
		if (rec.hint[0])
			dsh_err_hint(err, "%s", rec.hint);
		goto out_sfd;
	}
	if (!have_status) {
		if (!reaped)
			waitpid(pid, &init_status, 0);
		if (WIFSIGNALED(init_status))
			r = dsh_err(err, DSH_ERR_SYSTEM, EIO, "the sandbox's init was killed by signal %d",
				    WTERMSIG(init_status));
		else
			r = dsh_err(err, DSH_ERR_SYSTEM, EIO, "the sandbox's init exited with %d before the command ended",
				    WEXITSTATUS(init_status));
		goto out_sfd;
	}
	memset(ret, 0, sizeof(*ret));
	if (WIFSIGNALED(cmd_status)) {
		ret->signal = WTERMSIG(cmd_status);
		ret->exit_code = 128 + ret->signal;
	} else {
		ret->exit_code = WEXITSTATUS(cmd_status);
	}
	ret->warnings = TAKE_PTR(warnings);
	if (have_rec && rec.kind == REC_EXEC) {
		rec.msg[sizeof(rec.msg) - 1] = '\0';
		ret->message = strdup(rec.msg);
	}
	r = 0;
out_sfd:
	dsh_strv_free(warnings);
	close(sfd);
out_pipes:
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < 2; i++) {
		if (report[i] >= 0)
			close(report[i]);
		if (status[i] >= 0)
			close(status[i]);
	}
	return r;
}
