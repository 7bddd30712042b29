/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_CHILD_H
#define DSH_SUPERVISOR_CHILD_H

/*
 * Supervising one child process (SPEC 3.8): the linux-ns and landlock backends' init
 * (supervisor/sandbox.c) and the runner backend's runner (supervisor/runner_exec.c).
 *
 *   dsh_child_begin   block the passed-on signals and SIGCHLD, and read them from a signalfd, so
 *                     that none is lost between the spawn and the wait; an ignored SIGCHLD gets
 *                     its default action meanwhile (single-threaded processes only)
 *   dsh_child_spawn   fork, or clone with namespace flags; the child runs fn
 *   dsh_child_wait    pass signals on, reap the child, hand readable descriptors (a status pipe,
 *                     a stderr to relay) to their callbacks
 *   dsh_child_end     drop the signals that came for the child; the caller's mask and SIGCHLD
 *                     action come back
 *
 * The caller's process is left as it was found: its signal mask and its SIGPIPE and SIGCHLD
 * dispositions are restored, nothing else is touched.  No threads: a multithreaded host's run is
 * supervised from a single-threaded child of it (supervisor/forked_run.h), since the signals the
 * wait reads are blocked in the calling thread only, and a host's other threads may take them.
 * A child reaped by another wait of the process fails the wait (ECHILD) instead of hanging it.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/signalfd.h>
#include <sys/types.h>

#include "dshbox/backend.h"
#include "dshbox/error.h"

struct dsh_child {
	pid_t pid;              /* -1 until spawned */
	int sfd;                /* the signalfd, CLOEXEC and non-blocking; -1 before begin */
	/* The child's pidfd, -1 before spawn or where pidfd_open fails (before 5.3).  A host's other
	   thread that leaves SIGCHLD unblocked takes the signal the signalfd would have read: the
	   pidfd tells of the end whatever the host's threads block. */
	int pidfd;
	sigset_t caller_mask;   /* the mask before begin: the child's command gets it back at exec */
	/* SIGCHLD's action before begin, when begin set the default for the wait (chld_reset): an
	   ignored SIGCHLD leaves no status to wait for. */
	struct sigaction caller_chld;
	bool chld_reset;
	bool reaped;
	int status;             /* the wait status, once reaped */
	/*
	 * Set by the caller once spawned: the child leads a process group of its own (the sandbox's
	 * init), so a signal reaching us reached only us, the terminal's included; it is passed on
	 * with sigqueue, marked (dsh_child_passed_on), and the same signal from the same sender again
	 * within 100 ms is passed on once: GNU timeout sends it to our pid and then to our group.
	 */
	bool own_group;
	/* CLOCK_MONOTONIC milliseconds after which dsh_child_wait kills the child and fails with
	   ETIMEDOUT; 0: none.  A watch may clear it (the sandbox's start, once the command runs). */
	long long deadline_ms;
	struct {
		uint32_t signo, pid;
		struct timespec at;
	} last;
};

/* SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH (SPEC 3.8), and SIGCHLD. */
void dsh_child_signal_set(sigset_t *ret);

/*
 * Pass a signal read from a signalfd on to pid; SIGCHLD stays ours.  A signal the terminal made
 * (SI_KERNEL) already went to the whole foreground group, pid's included: it is not sent twice.
 */
void dsh_child_forward(pid_t pid, const struct signalfd_siginfo *si);

/* In the child of an own_group supervisor: the signal came from the supervisor, to be passed on
   (a signal sent to the group or by the terminal already reached everyone it was for). */
bool dsh_child_passed_on(const struct signalfd_siginfo *si);

int dsh_child_begin(struct dsh_child *c, struct dsh_error **err);

/*
 * Start the child: fork() when clone_flags is 0, else a clone with those flags (plus SIGCHLD).  In
 * the child the signalfd is closed and fn(arg) runs; its return value is the child's exit status
 * (the signals stay blocked there: c->caller_mask is what to restore before exec).
 */
int dsh_child_spawn(struct dsh_child *c, unsigned long clone_flags, int (*fn)(void *arg), void *arg,
		    struct dsh_error **err);

/* What a watch's callback returns. */
enum {
	DSH_CHILD_GO_ON = 0, /* read something; call again when there is more */
	DSH_CHILD_CLOSE,     /* this descriptor is finished (end of file, or nothing more to read) */
	DSH_CHILD_DONE,      /* the run is over: stop waiting, even if the child is not reaped yet */
};

/* A descriptor to read while the child runs.  fd -1: none; set to -1 once finished (not closed). */
struct dsh_child_watch {
	int fd;
	int (*ready)(void *data, int fd); /* EINTR: GO_ON; end of file or EAGAIN: CLOSE */
	void *data;
};

/*
 * Wait until the child is reaped or a callback says DONE, passing signals on.  Then every watch
 * still open is read (made non-blocking, so that a descendant holding a pipe cannot hold us) until
 * its callback says CLOSE or DONE; and a child not reaped yet is reaped if it has already ended.
 * SIGPIPE is ignored meanwhile (a relay's reader may be gone).  On failure the child is killed.
 */
int dsh_child_wait(struct dsh_child *c, struct dsh_child_watch *watches, size_t n, struct dsh_error **err);

/* Kill the child (SIGKILL) if it is not reaped yet, and reap it. */
void dsh_child_kill(struct dsh_child *c);

/* Wait for the child to end, however long that takes (it is not killed). */
void dsh_child_reap(struct dsh_child *c);

/*
 * Drop the passed-on signals and SIGCHLD still pending (they came for the child; the caller
 * would otherwise get them when its mask comes back), close the signalfd, restore the mask.
 */
void dsh_child_end(struct dsh_child *c);

/* The command's wait status as a run result: its exit code, or its signal and 128+N. */
void dsh_child_decode(int status, struct dsh_run_result *ret);

/*
 * A watch that relays what it reads to another descriptor, byte for byte, and shows it to tap.
 * What `to` refuses (its reader is gone) is dropped; reading goes on, so that the child never
 * blocks on a full pipe, and so does the tap.
 */
struct dsh_child_relay {
	int to;
	void (*tap)(void *tap_data, const char *buf, size_t n); /* NULL: none */
	void *tap_data;
};
int dsh_child_relay_ready(void *relay, int fd);

/* The deadline_ms value for ms milliseconds from now. */
long long dsh_child_deadline(long long ms);

#endif
