/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/die_with.h"
#include "common/fdpass.h"
#include "common/strbuf.h"
#include "ns/remask.h"
#include "ns/userns.h"
#include "common/strv.h"
#include "common/write_all.h"
#include "supervisor/child.h"
#include "supervisor/forked_run.h"
#include "supervisor/probe.h"
#include "supervisor/sandbox.h"
#include "supervisor/terminal.h"

/*
 * Under AddressSanitizer the command's own stack (below) is announced as a fiber switch: ASan
 * otherwise takes the static array for a main stack gigabytes long and, at the first noreturn
 * call, prints a warning on the command's stderr that a user of the sanitizer build would see.
 * In every other build these are nothing.
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define stack_switch_start(bottom, size) __sanitizer_start_switch_fiber(NULL, (bottom), (size))
#define stack_switch_finish(old_bottom, old_size) __sanitizer_finish_switch_fiber(NULL, (old_bottom), (old_size))
#else
#define stack_switch_start(bottom, size) ((void)(bottom), (void)(size))
#define stack_switch_finish(old_bottom, old_size) ((void)(old_bottom), (void)(old_size))
#endif

/* What the child side tells the supervisor: one record, one write (< PIPE_BUF, so atomic). */
enum { REC_SETUP = 1, REC_EXEC = 2, REC_WARN = 3, REC_TIMING = 4 };

/* init to the supervisor, on the status pipe: a job-control stop, or the command's end with what
   the broker refused.  One write each, below PIPE_BUF, so never split or interleaved. */
struct status_frame {
	int32_t status;
	int32_t net_service_end; /* the network service's wait status if it ended before the command, or -1 */
	uint32_t refused;
	char refusal[DSH_REFUSAL_MAX];
};
_Static_assert(sizeof(struct status_frame) <= PIPE_BUF, "one atomic write");
struct record {
	int32_t kind;
	int32_t code;      /* errno */
	int32_t exit_code; /* REC_EXEC: 126 or 127 */
	char msg[2560];
	char hint[512];
};

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

/* ---- the timing view: stage ends noted in init and the command, sent to the supervisor once ---- */

static void clock_note(struct dsh_stage_ctx *c, const char *stage)
{
	if (!c->plan->opts || !c->plan->opts->timing || c->n_clock >= ARRAY_SIZE(c->clock))
		return;
	c->clock[c->n_clock].stage = stage;
	c->clock[c->n_clock++].end_ns = dsh_timing_now();
}

/* One record of "STAGE\tEND_NS" lines, sent by init once the command has exec'd. */
static void clock_send(const struct dsh_stage_ctx *c)
{
	if (!c->n_clock)
		return;
	struct record rec;
	memset(&rec, 0, sizeof(rec));
	rec.kind = REC_TIMING;
	size_t len = 0;
	for (size_t i = 0; i < c->n_clock && len < sizeof(rec.msg); i++)
		len += (size_t)snprintf(rec.msg + len, sizeof(rec.msg) - len, "%s\t%lld\n", c->clock[i].stage,
					c->clock[i].end_ns);
	(void)dsh_write_all(c->report_fd, &rec, sizeof(rec));
}

static void clock_receive(struct dsh_timing *t, struct record *rec)
{
	rec->msg[sizeof(rec->msg) - 1] = '\0';
	char *save = NULL;
	for (char *line = strtok_r(rec->msg, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		dsh_timing_mark(t, line, strtoll(tab + 1, NULL, 10));
	}
}

/*
 * A start the host refused where auto's linux-ns probe would have refused it (SPEC 4): the clone of
 * the namespaces, the id maps, the first mount in them (an AppArmor-restricted namespace holds no
 * capability), the loopback, a kernel without the mount API.  Nothing of the command has run: said
 * as DSH_ERR_UNSUPPORTED, so that auto, which lets the start decide (no throw-away namespace made
 * to probe on every run), moves on to the next backend.
 */
static bool refused_by_host(const char *stage, int code)
{
	if (!stage)
		return code == EPERM || code == EINVAL || code == ENOSPC || code == EUSERS || code == ENOSYS ||
		       code == EACCES;
	static const char *const ns_stages[] = { "id maps", "propagation", "network" };
	for (size_t i = 0; i < ARRAY_SIZE(ns_stages); i++) {
		char head[64];
		snprintf(head, sizeof(head), "setup stage '%s':", ns_stages[i]);
		if (strncmp(stage, head, strlen(head)) == 0)
			return true;
	}
	return strncmp(stage, "setup stage 'mounts':", 21) == 0 && code == ENOSYS;
}

static struct dsh_timing *timing_of(const struct dsh_sandbox_plan *plan)
{
	return plan->opts ? plan->opts->timing : NULL;
}

static _Noreturn void command_main(struct dsh_stage_ctx *c)
{
	for (const struct dsh_stage *s = dsh_stages; s->name; s++) {
		if (s->where != DSH_STAGE_COMMAND || (s->needs_ns && c->plan->ns.none))
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
		clock_note(c, s->name);
	}
	/* The table always ends in exec, which returns only on failure. */
	_exit(125);
}

struct command_arg {
	struct dsh_stage_ctx *c;
	int sfd, status_fd;
	pid_t init; /* to check it still lives; 0 in a pid namespace, whose end takes the command too */
	const void *init_stack; /* init's stack, for the switch back (sanitizer builds) */
	size_t init_stack_size;
};

static int command_fn(void *p)
{
	struct command_arg *a = p;
	stack_switch_finish(&a->init_stack, &a->init_stack_size);
	close(a->sfd);
	close(a->status_fd);
	clock_note(a->c, "fork");
	/* init killed before this (the supervisor's death took it): stop before any stage, or the
	   command would run on with no one to serve its brokered calls, for ever.  (Run as pid 1 of
	   a namespace of its own, its parent's pid would read 0 here.) */
	if (!dsh_die_with(a->init, SIGKILL))
		_exit(125);
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

/* The run is over with status st: everything left in the sandbox dies and is reaped, then the
   status goes out with what the broker refused. */
static _Noreturn void finish(struct dsh_stage_ctx *c, int st, int status_fd)
{
	/* Without a pid namespace kill(-1) would reach every process of the user: kill our own only. */
	if (c->plan->ns.none) {
		kill_descendants();
	} else {
		kill(-1, SIGKILL);
		while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			;
	}
	struct status_frame status = { .status = st, .net_service_end = c->net_service_end };
	if (c->plan->broker) {
		/* With the timing view (--timing, DSHBOX_TIMING=1): how many calls the broker served, for
		   measuring it (issue 25); never said unasked.  A count, not microseconds, though the line
		   has the timing view's form. */
		if (c->plan->opts && c->plan->opts->timing)
			dprintf(2, "dshbox: timing: brokered calls %lu\n", c->plan->broker->served);
		status.refused = c->plan->broker->refused;
		memcpy(status.refusal, c->plan->broker->first_refusal, DSH_REFUSAL_MAX);
	}
	(void)dsh_write_all(status_fd, &status, sizeof(status));
	_exit(0);
}

/*
 * dshbox bwrap --as-pid-1: bubblewrap's process outside the command passes no signal on; one sent
 * to it (or to its process group) ends it, and the command with it (--die-with-parent).  So a
 * signal from outside the sandbox — passed on by the supervisor, or sent to the sandbox's group by
 * the terminal or a host process (no sender pid in the sandbox's namespace) — ends the run as a
 * death by that signal.  A signal whose default is to be ignored, or sent from inside, does not.
 */
/*
 * Without a pid namespace (the landlock backend) nothing kills the command when the supervisor is
 * killed: init's PDEATHSIG=SIGKILL would end init alone, and orphan the command.  So once the
 * command runs, init's death signal is one it catches (through its signalfd) and answers by
 * killing everything it started.  The supervisor's pid tells the real one from a forged one.
 */
static int death_signal(void)
{
	return SIGRTMIN + 3;
}

static pid_t supervisor_pid;

static bool supervisor_gone(void)
{
	return getppid() != supervisor_pid;
}

static bool ends_pid_1_run(const struct dsh_stage_ctx *c, const struct signalfd_siginfo *si)
{
	return c->plan->proc.as_pid_1 && si->ssi_signo != SIGWINCH && (dsh_child_passed_on(si) || si->ssi_pid == 0);
}

/*
 * init once the command has exec'd: confine itself, then serve the broker's listener, pass signals
 * on, reap, and when the command ends hand its status to the supervisor and exit.
 */
static _Noreturn void serve(struct dsh_stage_ctx *c, int sfd, int listener, pid_t cmd, int status_fd)
{
	/* Serving from now on: init confines itself to what serving needs (seccomp/seccomp.c).
	   Under AddressSanitizer its runtime makes calls of its own that no list can foresee. */
#if !defined(__SANITIZE_ADDRESS__)
	if (listener >= 0 && c->broker_filter.insns) {
		struct dsh_error *e = NULL;
		if (dsh_broker_start(c->plan->broker, &e) < 0 || dsh_seccomp_load(&c->broker_filter, &e) < 0) {
			close(listener); /* fail closed: every brokered call fails */
			listener = -1;
		}
		dsh_error_free(e);
	}
#endif
	for (;;) {
		struct pollfd pfs[2] = { { sfd, POLLIN, 0 }, { listener, POLLIN, 0 } };
		if (poll(pfs, listener >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(125);
		}
		if (listener >= 0 && (pfs[1].revents & POLLIN)) {
			/* One call at a time: no check is separated from its act by another call. */
			struct dsh_error *e = NULL;
			if (dsh_broker_serve_one(c->plan->broker, listener, &e) < 0) {
				/* A broken listener: every notified call fails from now on (fail closed). */
				close(listener);
				listener = -1;
			}
			dsh_error_free(e);
		} else if (listener >= 0 && dsh_broker_hung_up(pfs[1].revents)) {
			close(listener); /* no process uses the filter any more */
			listener = -1;
		}
		if (!(pfs[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si))
			_exit(125);
		if (c->plan->ns.none && (int)si.ssi_signo == death_signal()) {
			if (supervisor_gone()) {
				kill_descendants();
				_exit(125);
			}
			continue; /* sent by someone else while the supervisor lives: nothing */
		}
		if (si.ssi_signo != SIGCHLD && ends_pid_1_run(c, &si))
			finish(c, (int)si.ssi_signo, status_fd); /* a wait status: killed by that signal */
		if (si.ssi_signo != SIGCHLD) {
			/* Only what the supervisor passes on: a signal sent to the sandbox's group, by
			   the terminal or from inside already reached the command itself. */
			if (dsh_child_passed_on(&si))
				kill(cmd, (int)si.ssi_signo);
			continue;
		}
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
			if (w == cmd && WIFSTOPPED(st)) {
				/* A job-control stop: the supervisor follows it, and continues the sandbox */
				struct status_frame stopped = { .status = st, .net_service_end = -1 };
				(void)dsh_write_all(status_fd, &stopped, sizeof(stopped));
				continue;
			}
			if (w == c->net_service && !WIFSTOPPED(st))
				c->net_service_end = st; /* the command's network is cut from here on */
			if (w != cmd)
				continue; /* an orphan re-parented to us (or stopped): nothing more */
			finish(c, st, status_fd);
		}
	}
}

/*
 * SPEC 9: while it serves, init holds no descriptor the command may not have.  It was cloned with
 * every descriptor dshbox had — the caller's (a host's report file, whatever it leaked), the
 * start's pipes, the terminal — and keeps its standard three, what serving needs (the signalfd,
 * the listener, the status pipe, the directories of the allowed sockets the broker holds) and
 * nothing else.  The command has its own copies of what it keeps.
 */
static void keep_only_serving(const struct dsh_stage_ctx *c, int sfd, int listener, int status_fd)
{
	const struct dsh_broker *b = c->plan->broker;
	size_t n = 3 + (b ? b->n_held : 0) + c->n_lock_fds, k = 0;
	int *keep = calloc(n, sizeof(*keep));
	if (!keep)
		_exit(125);
	keep[k++] = sfd;
	keep[k++] = listener;
	keep[k++] = status_fd;
	for (size_t i = 0; b && i < b->n_held; i++)
		keep[k++] = b->held[i].dir;
	for (size_t i = 0; i < c->n_lock_fds; i++)
		keep[k++] = c->lock_fds[i];
	struct dsh_error *e = NULL;
	int r = dsh_fds_close_except(keep, k, &e);
	free(keep);
	dsh_error_free(e);
	if (r < 0)
		_exit(125); /* fail closed: the command's status is lost, the run ends as dshbox's failure */
}

static _Noreturn void init_main(struct dsh_stage_ctx *c, pid_t supervisor, int status_fd)
{
	clock_note(c, "clone");
	/* Die with the supervisor; if it is already gone, stop now.  In a pid namespace its pid is
	   not ours to compare (getppid() is 0 there): its end of the report pipe closed says it. */
	supervisor_pid = supervisor;
	if (!dsh_die_with(c->plan->ns.none ? supervisor : 0, SIGKILL))
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
	clock_note(c, "init");
	for (const struct dsh_stage *s = dsh_stages; s->name; s++) {
		if (s->where != DSH_STAGE_INIT || (s->needs_ns && c->plan->ns.none))
			continue;
		struct dsh_error *e = NULL;
		if (s->run(c, &e) < 0) {
			send_record(c->report_fd, REC_SETUP, 0, s->name, e);
			_exit(125);
		}
		clock_note(c, s->name);
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
	dsh_child_signal_set(&set);
	if (c->plan->ns.none) {
		sigset_t death;
		sigemptyset(&death);
		sigaddset(&death, death_signal());
		sigaddset(&set, death_signal());
		(void)sigprocmask(SIG_BLOCK, &death, NULL); /* the command gets the caller's mask back */
	}
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		struct dsh_error *e = NULL;
		dsh_err_sys(&e, errno, "signalfd");
		send_record(c->report_fd, REC_SETUP, 0, "init", e);
		_exit(125);
	}
	if (c->plan->ns.none && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
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
	struct command_arg arg = { .c = c, .sfd = sfd, .status_fd = status_fd,
				    .init = c->plan->ns.none ? getpid() : 0 };
	/* The sandbox is a process group of its own, in the terminal's foreground if dshbox was (SPEC 3.8). */
	dsh_terminal_enter(c->fg_tty);
	/* The broker's listener comes back from the command over this pair (SPEC 3.12). */
	int bsock[2] = { -1, -1 };
	c->broker_sock = -1;
	if (c->plan->notify) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, bsock) < 0) {
			struct dsh_error *e = NULL;
			dsh_err_sys(&e, errno, "socketpair");
			send_record(c->report_fd, REC_SETUP, 0, "broker", e);
			_exit(125);
		}
		c->broker_sock = bsock[1];
	}
	stack_switch_start(stack, sizeof(stack));
	pid_t cmd = clone(command_fn, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &arg);
	if (cmd > 0) { /* back on init's own stack, which the command told us */
		stack_switch_start(arg.init_stack, arg.init_stack_size);
		stack_switch_finish(NULL, NULL);
	}
	/* The command runs: from now on the supervisor's death kills what it started (death_signal). */
	if (cmd > 0 && c->plan->ns.none &&
	    (prctl(PR_SET_PDEATHSIG, death_signal(), 0, 0, 0) < 0 || supervisor_gone())) {
		kill_descendants();
		_exit(125);
	}
	if (cmd < 0) {
		struct dsh_error *e = NULL;
		dsh_err_sys(&e, errno, "clone");
		send_record(c->report_fd, REC_SETUP, 0, "init", e);
		_exit(125);
	}
	/* The command has exec'd (or failed): what it handed over is in the socket already. */
	clock_note(c, "exec");
	clock_send(c);
	int listener = bsock[0] >= 0 ? dsh_fd_recv(bsock[0], MSG_DONTWAIT) : -1;
	if (listener < 0)
		listener = -1; /* the command sent none: it failed before its broker stage */
	if (bsock[0] >= 0) {
		close(bsock[0]);
		close(bsock[1]);
	}
	/* The command has its copy of the limits: init's hard limit can go to 0 as well. */
	nocore.rlim_max = 0;
	(void)setrlimit(RLIMIT_CORE, &nocore); /* lowering a limit cannot fail */
	close(c->report_fd);
	keep_only_serving(c, sfd, listener, status_fd);
	serve(c, sfd, listener, cmd, status_fd);
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

/* SPEC 3.14: host events passed on to the keeper; without a keeper the run cannot go on. */
struct remask_state {
	struct dsh_remask_watch w;
	struct dsh_child *ch;
	bool keeper_gone;
};

static int remask_ready(void *data, int fd)
{
	struct remask_state *s = data;
	(void)fd;
	int r = dsh_remask_watch_events(&s->w);
	if (r == -EPIPE) {
		s->keeper_gone = true;
		dsh_child_kill(s->ch);
		return DSH_CHILD_CLOSE;
	}
	/* Nothing pending: the end-of-run drain asks until a watch says it is done. */
	return r > 0 ? DSH_CHILD_GO_ON : DSH_CHILD_CLOSE;
}

/*
 * The host-side watches of the plan's protected entries, and the keeper's request pipe when there
 * is one to watch (without, init starts no keeper, only a holder of the mounts: stages.c).
 */
static int watch_begin(const struct dsh_sandbox_plan *plan, struct dsh_remask_watch *w, int keeper_fds[2],
		       char ***warnings, struct dsh_error **err)
{
	int r = dsh_remask_watch_init(w, plan->mounts, -1, err);
	if (r < 0)
		return r;
	if (w->fd >= 0) {
		if (pipe2(keeper_fds, O_CLOEXEC) < 0)
			return dsh_err_sys(err, errno, "pipe");
		w->keeper = keeper_fds[1];
	}
	if (w->unwatched && dsh_strv_pushf(warnings, "%zu glob matches are not watched for replacement on the host "
				       "(the inotify watch limit, fs.inotify.max_user_watches, was reached): one the "
				       "host replaces during this run is readable until the next", w->unwatched) < 0)
		return dsh_err_sys(err, ENOMEM, "run");
	return 0;
}

/* What the supervisor gathers from init's two pipes while it waits. */
struct gathered {
	struct dsh_terminal *term;
	struct dsh_child *ch;      /* its deadline (auto's unprobed start) ends when the command runs */
	struct status_frame frame; /* the last one init sent: the command's status, what the broker refused */
	bool have_status;
	struct record rec;
	bool have_rec;
	char **warnings;
	struct dsh_timing *timing;
	long long status_ns; /* when the status came: the command's end, for the timing view */
	struct dsh_net_tally net; /* a filtered network's refusals */
};

/* The command's status, sent once everything in the sandbox is dead and reaped: the run is over
   (init's own exit, tearing the namespaces down, is not waited for). */
static int status_ready(void *data, int fd)
{
	struct gathered *g = data;
	ssize_t n = read(fd, &g->frame, sizeof(g->frame));
	if (n < 0 && errno == EINTR)
		return DSH_CHILD_GO_ON;
	g->have_status = n == (ssize_t)sizeof(g->frame);
	if (g->timing)
		g->status_ns = dsh_timing_now();
	if (g->have_status && WIFSTOPPED(g->frame.status)) {
		g->have_status = false;
		dsh_terminal_stopped(g->term, WSTOPSIG(g->frame.status));
		return DSH_CHILD_GO_ON;
	}
	return DSH_CHILD_DONE;
}

/* A filtered network's refusal lines, counted as they come (the service drops what a full pipe
   cannot take rather than stall a connection). */
static int net_events_ready(void *data, int fd)
{
	struct gathered *g = data;
	/* The status comes once everything inside is dead, the service too: the wait's drain reads
	   all it wrote, up to -EAGAIN. */
	return dsh_net_tally_read(&g->net, fd) < 0 ? DSH_CHILD_CLOSE : DSH_CHILD_GO_ON;
}

/* Setup records: warnings gathered, the first failure kept.  End of file: the command exec'd, or
   everything that could write died. */
static int report_ready(void *data, int fd)
{
	struct gathered *g = data;
	struct record tmp;
	ssize_t n = read(fd, &tmp, sizeof(tmp));
	if (n < 0 && errno == EINTR)
		return DSH_CHILD_GO_ON;
	if (n != (ssize_t)sizeof(tmp)) {
		g->ch->deadline_ms = 0; /* EOF: the command exec'd (or init failed): the start is over */
		return DSH_CHILD_CLOSE;
	}
	if (tmp.kind == REC_WARN) {
		tmp.msg[sizeof(tmp.msg) - 1] = '\0';
		(void)dsh_strv_push(&g->warnings, tmp.msg);
	} else if (tmp.kind == REC_TIMING) {
		clock_receive(g->timing, &tmp);
	} else if (!g->have_rec) {
		g->rec = tmp;
		g->have_rec = true;
	}
	return DSH_CHILD_GO_ON;
}

struct init_arg {
	struct dsh_stage_ctx *ctx;
	int report_r, status_r, status_w, ids_w;
	pid_t supervisor;
};

static int init_fn(void *p)
{
	struct init_arg *a = p;
	close(a->report_r);
	close(a->status_r);
	if (a->ids_w >= 0)
		close(a->ids_w);
	init_main(a->ctx, a->supervisor, a->status_w);
}

char *dsh_sandbox_plan_render(const struct dsh_sandbox_plan *plan, char *const *adds)
{
	struct dsh_buf b = { 0 };
	dsh_buf_addf(&b, "namespaces: user mount pid%s%s%s%s%s%s\n", plan->ns.share_ipc ? "" : " ipc",
		     plan->ns.net_filter ? " net (loopback only; dshbox serves the allowed names)"
		     : plan->ns.net ? " net (loopback only)" : "", plan->ns.cgroup ? " cgroup" : "", plan->ns.uts ? " uts" : "",
		     plan->ns.hostname ? " hostname " : "", plan->ns.hostname ? plan->ns.hostname : "");
	dsh_root_caps_render(plan->proc.keep_caps, &b);
	for (size_t i = 0; adds && adds[i]; i++)
		dsh_buf_addf(&b, "dshbox adds: %s\n", adds[i]);
	dsh_buf_addf(&b, "mounts: %zu\n", plan->mounts->n);
	_cleanup_free_ char *m = dsh_mount_plan_render(plan->mounts);
	if (!m) {
		dsh_buf_free(&b);
		return NULL;
	}
	dsh_buf_add(&b, m);
	return dsh_buf_steal(&b);
}

/*
 * ids.range: the maps of init's user namespace, written from here (a map of more than one id needs
 * CAP_SETUID in the namespace above it, which init, inside, does not have), then the errno, 0 for
 * done, on the pipe init waits on before its first stage.
 */
static void map_ranges(pid_t pid, int ids_w)
{
	char uid_map[1024], gid_map[1024], dir[32];
	struct dsh_error *e = NULL;
	int r = dsh_userns_range_map("uid_map", false, uid_map, sizeof(uid_map), &e);
	if (r >= 0)
		r = dsh_userns_range_map("gid_map", false, gid_map, sizeof(gid_map), &e);
	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	/* Our unreaped child: the pid names it until we wait for it. */
	_cleanup_close_ int fd = r >= 0 ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (r >= 0 && fd < 0)
		r = -errno;
	if (r >= 0)
		r = dsh_userns_write_maps(fd, uid_map, gid_map, true, &e);
	int code = r < 0 ? (e && e->code ? e->code : -r) : 0;
	dsh_error_free(e);
	(void)dsh_write_all(ids_w, &code, sizeof(code));
}

/* What the run came to, from what init sent (a setup failure, the command's status) and how it ended. */
static int decode_outcome(struct gathered *g, struct dsh_child *ch, struct dsh_run_result *ret, struct dsh_error **err)
{
	int r;
	if (g->have_rec && g->rec.kind == REC_SETUP) {
		g->rec.msg[sizeof(g->rec.msg) - 1] = '\0';
		g->rec.hint[sizeof(g->rec.hint) - 1] = '\0';
		r = dsh_err(err, refused_by_host(g->rec.msg, g->rec.code) ? DSH_ERR_UNSUPPORTED : DSH_ERR_SYSTEM,
			    g->rec.code, "%s", g->rec.msg);
		if (g->rec.hint[0])
			dsh_err_hint(err, "%s", g->rec.hint);
		return r;
	}
	if (!g->have_status) {
		dsh_child_reap(ch);
		if (WIFSIGNALED(ch->status))
			r = dsh_err(err, DSH_ERR_SYSTEM, EIO, "the sandbox's init was killed by signal %d",
				    WTERMSIG(ch->status));
		else
			r = dsh_err(err, DSH_ERR_SYSTEM, EIO, "the sandbox's init exited with %d before the command ended",
				    WEXITSTATUS(ch->status));
		return r;
	}
	memset(ret, 0, sizeof(*ret));
	dsh_child_decode(g->frame.status, ret);
	ret->refused = g->frame.refused;
	memcpy(ret->refusal, g->frame.refusal, DSH_REFUSAL_MAX);
	ret->refusal[DSH_REFUSAL_MAX - 1] = '\0';
	int end = g->frame.net_service_end;
	if (end >= 0) {
		/* Fail closed already (its listeners went with it), but the user should know why. */
		char how[48];
		if (WIFSIGNALED(end))
			snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(end));
		else
			snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(end));
		(void)dsh_strv_pushf(&g->warnings, "the network service ended during the run (%s): from then on every "
						   "connection and lookup of the command was refused", how);
	}
	ret->warnings = TAKE_PTR(g->warnings);
	if (g->have_rec && g->rec.kind == REC_EXEC) {
		g->rec.msg[sizeof(g->rec.msg) - 1] = '\0';
		ret->message = strdup(g->rec.msg);
	}
	return 0;
}

static int ids_pipe(int ids[2], struct dsh_stage_ctx *ctx, struct dsh_error **err)
{
	if (pipe2(ids, O_CLOEXEC) < 0)
		return dsh_err_sys(err, errno, "pipe");
	ctx->ids_fd = ids[0];
	return 0;
}

/* auto's unprobed start past probeTimeoutMs.  Fails closed: not DSH_ERR_UNSUPPORTED, which would let
   auto fall back to a weaker backend on a host whose kernel calls hang. */
static int start_timed_out(long long bound, struct dsh_error **err)
{
	dsh_error_free(TAKE_PTR(*err));
	int r = dsh_err(err, DSH_ERR_SYSTEM, ETIMEDOUT, "backend 'linux-ns' (auto): its start, which stands for its "
			"probe, gave no answer within probeTimeoutMs (%lld ms) and was killed", bound);
	dsh_err_hint(err, "a kernel call hung or this host is slow: raise probeTimeoutMs, or choose --backend");
	return r;
}

static int sandbox_run(const struct dsh_sandbox_plan *plan, const struct dsh_run_request *req, struct dsh_run_result *ret,
		       struct dsh_error **err)
{
	int r = check_preserved(req, err);
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
	struct dsh_child ch;
	r = dsh_child_begin(&ch, err);
	if (r < 0)
		goto out_pipes;

	int ids[2] = { -1, -1 }; /* ids.range: the supervisor's word to init (map_ranges) */
	int net_events[2] = { -1, -1 }; /* ns.net_filter: the service's refusals, to us */
	struct dsh_terminal term;
	dsh_terminal_begin(&term);
	struct gathered g = { .timing = timing_of(plan), .term = &term, .ch = &ch };
	struct dsh_stage_ctx ctx = { .plan = plan, .req = req, .caller_mask = ch.caller_mask, .caller_core = core,
				     .report_fd = report[1], .keeper_fds = { -1, -1 }, .ids_fd = -1, .net_events_fd = -1,
				     .net_service_end = -1,
				     .fg_tty = term.handed ? term.fd : -1 };
	/* SPEC 3.14: the keeper inside re-mounts what the host replaces; we watch, it acts. */
	struct remask_state rm = { .w = { .fd = -1 } };
	if (!plan->ns.none && plan->mounts && (r = watch_begin(plan, &rm.w, ctx.keeper_fds, &g.warnings, err)) < 0)
		goto out;
	if (plan->broker && (r = dsh_seccomp_compile_broker(&ctx.broker_filter, err)) < 0)
		goto out;
	/* One filter for the command where the two join (issue 10): an open then runs one program. */
	if (plan->seccomp && plan->notify && (r = dsh_seccomp_join(plan->seccomp, plan->notify, &ctx.joined, err)) < 0)
		goto out;
	if (plan->ids.range && !plan->ns.none && (r = ids_pipe(ids, &ctx, err)) < 0)
		goto out;
	if (plan->ns.net_filter && pipe2(net_events, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = dsh_err_sys(err, errno, "pipe for the network service's refusals");
		goto out;
	}
	ctx.net_events_fd = net_events[1];
	struct init_arg arg = { &ctx, report[0], status[0], status[1], ids[1], getpid() };
	unsigned long flags = plan->ns.none ? 0
			      : CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (plan->ns.share_ipc ? 0 : CLONE_NEWIPC) |
				/* a filtered network's namespace is made by init, once its service is forked */
				(plan->ns.net && !plan->ns.net_filter ? CLONE_NEWNET : 0);
	dsh_timing_mark(g.timing, "prepare", g.timing ? dsh_timing_now() : 0);
	r = dsh_child_spawn(&ch, flags, init_fn, &arg, err);
	if (r < 0) {
		if (flags && r == -EPERM && dsh_probe_inside_dshbox())
			dsh_err_hint(err, "this runs inside a dshbox sandbox, which refuses new user namespaces: give "
					  "the outer one nestedSandbox: true");
		else if (flags)
			dsh_err_hint(err, "this host forbids unprivileged user namespaces; try --backend landlock");
		if (flags && *err && refused_by_host(NULL, (*err)->code))
			(*err)->kind = DSH_ERR_UNSUPPORTED;
		goto out;
	}
	if (net_events[1] >= 0) {
		close(net_events[1]); /* the service's copy is the one left: its end is the read's */
		net_events[1] = -1;
	}
	if (ids[1] >= 0) {
		map_ranges(ch.pid, ids[1]);
		close(ids[1]);
		ids[1] = -1;
	}
	/* auto's linux-ns chosen unprobed (issue 14): the start is its probe, bounded as one (issue 24). */
	const struct dsh_run_options *o = plan->opts;
	long long bound = o && o->start_decides && o->backend == DSH_BACKEND_AUTO && !plan->ns.none ? o->probe_timeout_ms : 0;
	if (bound > 0)
		ch.deadline_ms = dsh_child_deadline(bound);
	term.pgid = ch.pid; /* init makes its group before it clones the command */
	ch.own_group = true;
	close(report[1]);
	report[1] = -1;
	close(status[1]);
	status[1] = -1;
	for (size_t i = 0; i < plan->hooks.n_close_after_spawn; i++)
		close(plan->hooks.close_after_spawn[i]);
	if (ctx.keeper_fds[0] >= 0) {
		close(ctx.keeper_fds[0]);
		ctx.keeper_fds[0] = -1;
	}

	rm.ch = &ch;
	struct dsh_child_watch w[] = { { status[0], status_ready, &g }, { report[0], report_ready, &g },
				       { rm.w.fd, remask_ready, &rm }, { net_events[0], net_events_ready, &g } };
	r = dsh_child_wait(&ch, w, ARRAY_SIZE(w), err);
	if (r == -ETIMEDOUT)
		r = start_timed_out(bound, err);
	if (r < 0)
		goto out;
	if (rm.keeper_gone) {
		r = dsh_err(err, DSH_ERR_SYSTEM, EPIPE, "a protected file was replaced on the host during the run and "
							"could not be protected again: the run was stopped");
		goto out;
	}
	if (g.status_ns)
		dsh_timing_mark(g.timing, "command", g.status_ns);
	/* init killed (no status) without a pid namespace: the command died with it (PDEATHSIG), but
	   not what the command started.  They are still in the sandbox's process group, whose id no
	   new process can take while one of them lives. */
	if (!g.have_status && plan->ns.none)
		(void)kill(-ch.pid, SIGKILL);

	r = decode_outcome(&g, &ch, ret, err);
	if (r < 0)
		goto out;
	dsh_net_tally_take(&g.net, ret);
	r = 0;
out:
	for (int i = 0; i < 2; i++)
		if (ids[i] >= 0)
			close(ids[i]);
	for (int i = 0; i < 2; i++)
		if (net_events[i] >= 0)
			close(net_events[i]);
	dsh_net_tally_clear(&g.net);
	dsh_seccomp_prog_clear(&ctx.joined);
	dsh_seccomp_prog_clear(&ctx.broker_filter);
	dsh_remask_watch_clear(&rm.w);
	for (int i = 0; i < 2; i++)
		if (ctx.keeper_fds[i] >= 0)
			close(ctx.keeper_fds[i]);
	dsh_strv_free(g.warnings);
	dsh_terminal_end(&term);
	dsh_child_end(&ch);
out_pipes:
	for (int i = 0; i < 2; i++) {
		if (report[i] >= 0)
			close(report[i]);
		if (status[i] >= 0)
			close(status[i]);
	}
	return r;
}

struct run_args {
	const struct dsh_sandbox_plan *plan;
	const struct dsh_run_request *req;
};

static int run_forked(const void *arg, struct dsh_run_result *ret, struct dsh_error **err)
{
	const struct run_args *a = arg;
	return sandbox_run(a->plan, a->req, ret, err);
}

int dsh_sandbox_run(const struct dsh_sandbox_plan *plan, const struct dsh_run_request *req, struct dsh_run_result *ret,
		    struct dsh_error **err)
{
	/* supervisor/forked_run.h: from a multithreaded caller, the raw clone happens in a
	   single-threaded child of it. */
	if (dsh_process_is_threaded()) {
		struct run_args a = { plan, req };
		return dsh_forked_run(run_forked, &a, timing_of(plan), ret, err);
	}
	return sandbox_run(plan, req, ret, err);
}
