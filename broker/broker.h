/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_BROKER_BROKER_H
#define DSH_BROKER_BROKER_H

/*
 * The runtime broker (SPEC 3.12): serves the seccomp user notifications of the calls that create,
 * remove, rename or link a name or change an inode's metadata.  For each call it copies the
 * arguments out of the caller once, resolves the target in the sandbox's view (the caller's cwd or
 * dirfd, fetched with pidfd_getfd) the way the file fence does, asks the policy, and then either
 * refuses (EACCES) or performs the call itself on its own copy and returns the result — a created
 * descriptor is injected with SECCOMP_IOCTL_NOTIF_ADDFD.  It never lets the caller's own call go on
 * after a check (no SECCOMP_USER_NOTIF_FLAG_CONTINUE): the caller could rewrite what was checked.
 *
 * The broker runs with the command's rights (same uid, no capabilities, same Landlock domain, same
 * mount tree) and is an ancestor of it (Yama's ptrace scope and Landlock's domain rule both need
 * that for pidfd_getfd and /proc/PID/mem).  It serves one call at a time, so a check and its act
 * are never separated by another name-changing call of the command.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dshbox/backend.h"
#include "dshbox/dshbox.h"

struct dsh_broker {
	const struct dsh_policy *policy;
	/* Paths the plan protects beyond the rules' own (the matches of r-/-- globs found at start):
	   each is guarded like a literal target, with the directories on the way to it. */
	char *const *targets;
	/* Host sockets (SPEC 3.11): with sockets, connect, bind and sends with a destination come here
	   too.  A pathname unix socket is reached only when it is one this run bound (bound, filled
	   by the broker) or one of allowed_sockets (absolute paths, as configured). */
	bool sockets;
	char *const *allowed_sockets;
	char **bound;
	size_t n_bound;
	/* Each allowed socket's directory, held from before the sandbox was built (the private /tmp
	   and /run/user hide the host's), with the socket's name in it and both its paths. */
	struct dsh_held_socket {
		int dir;
		char *name, *path, *canonical;
	} *held;
	size_t n_held;
	/* Counters, for tests and the report. */
	unsigned long served, refused;
	/* The first call refused by a rule's word, as `PATH (rule "TEXT")` (the run names it after a
	   failure); denial: what the call being served was refused for, while it is decided. */
	char first_refusal[DSH_REFUSAL_MAX], denial[DSH_REFUSAL_MAX];
	/* The command may have a root or a mount namespace other than the broker's (nestedSandbox:
	   new user namespaces inside, or capabilities kept): paths then start at the caller's root,
	   and a name reached in its own mount namespace is judged by where the broker sees it. */
	bool nested;
	/* The routes to the caller the kernel (or a seccomp profile around dshbox) refuses, found by
	   dsh_broker_check_routes or at start: the broker takes /proc's instead. */
	bool no_vm_readv, no_getfd;
	/* /dev is the sandbox's minimal one (linux-ns, bwrap's --dev /dev): its tmpfs, devpts and shm
	   hold no host file, so the command changes what it likes there (a pty's mode, a shm object's). */
	bool own_dev;

	/* Filled when serving starts (the process that serves, inside the sandbox). */
	bool started;
	size_t notif_size; /* the kernel's struct seccomp_notif */
	int proc;          /* its /proc, O_PATH */
	dev_t proc_dev;
	bool proc_own_ns;  /* /proc numbers processes as the notifications do */
	ino_t mntns;       /* its mount namespace (nested only) */
	dev_t *mount_devs; /* the devices its mounts show (nested only) */
	size_t n_mount_devs;
	dev_t own_devs[3]; /* with own_dev: those of /dev, /dev/pts and /dev/shm */
	size_t n_own_devs;
	/* Devices seen on the way, and whether each is a procfs. */
	struct {
		dev_t dev;
		bool proc;
	} devs[16];
	size_t n_devs;
	/* The callers' pidfds, kept between calls by the process that serves (pid 0: a free slot),
	   with the caller's number in /proc where that differs (0: not read yet), and what only the
	   caller's own calls change: its umask (read once from /proc, then followed through the
	   umask() calls the filter sends here: caller.c says why that is exact). */
	struct dsh_broker_pidfd {
		pid_t pid;
		int fd;
		pid_t proc_tid;
		pid_t tgid;          /* 0: not read yet */
		bool has_umask;
		mode_t umask;
		/* The notification for which this pidfd was proven to be the caller's (proven_set). */
		bool proven_set;
		uint64_t proven;
	} pidfds[32];
	unsigned pidfd_next;
	/* The broker's own umask while it creates for a caller (umask_set: it was set once). */
	bool umask_set;
	mode_t umask_now;
};

/*
 * Before the sandbox is built (in the supervisor, under the same seccomp profile as the sandbox):
 * which routes to the caller the host refuses.  Fails (DSH_ERR_UNSUPPORTED, the refused call
 * named) when the broker could not serve what the plan asks of it.
 */
int dsh_broker_check_routes(struct dsh_broker *b, struct dsh_error **err);

/*
 * Receive one notification on listener and answer it.  0 when one was served (or its caller was
 * gone); -ENOENT when no process uses the filter any more (the listener hung up); another -errno
 * on a broken listener.
 */
int dsh_broker_serve_one(struct dsh_broker *b, int listener, struct dsh_error **err);

/* Whether a notification waits (poll on the listener reported POLLIN). Helper for event loops. */
bool dsh_broker_hung_up(short revents);

/*
 * Hold the directory of each of b->allowed_sockets that exists now, before the sandbox is built:
 * a socket allowUnixSockets names stays reachable where the sandbox's tree hides it (an ssh agent
 * under the host's /tmp).  Call in the backend's compile, outside the sandbox.
 */
int dsh_broker_hold_sockets(struct dsh_broker *b, struct dsh_error **err);

/*
 * Ready the process that serves (inside the sandbox): its /proc, the kernel's notification size,
 * the routes to the caller.  Called by the first dsh_broker_serve_one, or before, by a server that
 * confines itself next (init loads the broker's own seccomp filter after it).
 */
int dsh_broker_start(struct dsh_broker *b, struct dsh_error **err);

/* Free what the broker holds and gathered while serving (the sockets it bound). */
void dsh_broker_clear(struct dsh_broker *b);

#endif
