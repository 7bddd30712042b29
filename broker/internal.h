/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_BROKER_INTERNAL_H
#define DSH_BROKER_INTERNAL_H

/*
 * Between the broker's files: the call being served, the caller as the broker reaches it
 * (caller.c), and a name resolved in the caller's view (resolve.c).  Not part of the library's API.
 */

#include <stdbool.h>
#include <stdint.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "broker/broker.h"

/* One notification being served. */
struct call {
	struct dsh_broker *b;
	int listener;
	struct seccomp_notif *req;
};

#define ARG(i) (c->req->data.args[i])

/* Whether the notification is still pending: its caller is alive and blocked in the call. */
int dsh_call_valid(struct call *c);

/* ---- caller.c: the caller's memory, descriptors, cwd, root and /proc entry ---- */

/* len bytes of the caller's memory at addr: 0, -EFAULT (not all mapped), -ENOENT (caller gone). */
int dsh_caller_read(struct call *c, uint64_t addr, void *buf, size_t len);
/* A NUL-terminated string of at most cap - 1 bytes; -too_long (an errno) past that. */
int dsh_caller_string(struct call *c, uint64_t addr, char *buf, size_t cap, int too_long);
/* bytes written into the caller's memory (sendmmsg's msg_len): 0 or -errno. */
int dsh_caller_write(struct call *c, uint64_t addr, const void *buf, size_t len);

/* A descriptor of the caller, duplicated into the broker (the same open file description where
   pidfd_getfd is allowed; else the same file, reopened O_PATH through /proc: not a socket). */
int dsh_caller_fd(struct call *c, int fd);
/* The caller's cwd, O_PATH. */
int dsh_caller_cwd(struct call *c);
/* The caller's root, O_PATH, or AT_FDCWD where it is the broker's own (no nested sandbox). */
int dsh_caller_root(struct call *c);
/* The inode of the caller's mount namespace; 0 when it cannot be read. */
ino_t dsh_caller_mntns(struct call *c);
/* The caller's umask (kept per process: see caller.c). */
mode_t dsh_caller_umask(struct call *c);
/* The caller's umask(um), about to be applied by the kernel: what its creates use from now on. */
void dsh_caller_umask_set(struct call *c, mode_t um);
/* Create with um as the broker's umask from here on (one umask() only when it changes). */
void dsh_broker_use_umask(struct dsh_broker *b, mode_t um);

/*
 * The caller as the procfs instance at proc_root numbers it: its thread group and thread ids, as
 * decimal text.  0, or -EACCES when the broker cannot tell with certainty which entry there is the
 * caller's (a procfs of a pid namespace the broker cannot see into, a thread on a kernel without
 * PIDFD_THREAD where /proc numbers processes differently).
 */
int dsh_caller_in_proc(struct call *c, int proc_root, char tgid[16], char tid[16]);

/* Whether dev, the device of name in dirfd, is a procfs (cached per device). */
bool dsh_broker_is_proc(struct dsh_broker *b, dev_t dev, int dirfd, const char *name);

/* Drop the caller cache (the broker's clear). */
void dsh_caller_cache_clear(struct dsh_broker *b);

/* ---- resolve.c: a name in the caller's view ---- */

/* A name resolved in the caller's view: held as (parent directory, last component). */
struct target {
	int pfd;          /* the parent directory, O_PATH */
	char *name;       /* the last component ("." for a directory reached as a whole) */
	char *canonical;  /* the parent's canonical path (the broker's view) joined with name; NULL: own_fs */
	char *spelled;    /* the path as the caller spelled it, lexically normal */
	bool exists;
	struct stat st;   /* lstat of the name when it exists */
	/* A descriptor of the caller's reached through its own /proc entry (/proc/self/fd/N): the
	   object itself, no name to make or remove; -1 otherwise. */
	int obj;
	/* The name lies in the caller's own /proc entry (the only part of procfs the broker acts on). */
	bool proc_own;
	/* The name lies on a file system the command mounted itself (nested sandbox): canonical and
	   spelled are NULL, and no rule is asked. */
	bool own_fs;
};

void dsh_target_clear(struct target *t);

/*
 * Resolve path (relative to the caller's dirfd or cwd) into t the way the kernel would for the
 * caller: from its root and cwd, /proc/self meaning the caller, every symlink on the way followed
 * as the caller would follow it, the last one too when follow.  A magic link of any process but
 * the caller, or a name on procfs outside the caller's own entry, is -EACCES (the broker never acts
 * as itself).  b->denial says why.
 */
int dsh_resolve(struct call *c, int dirfd, const char *path, bool follow, struct target *t);

/* The path the kernel holds for a descriptor of the caller's (our duplicate), in the broker's view:
   0 with *ret NULL when it names nothing a rule could (a pipe, a deleted file). */
int dsh_resolve_fd_path(struct call *c, int fd, char **ret);

/* ---- decide.c: what a rule refuses, and what the kernel refuses by itself ---- */

/* Keep why the call being served is refused, for the run's note (b->denial). */
void dsh_broker_note_denial(struct dsh_broker *b, const char *path, const char *what, bool is_rule);
/* The rule (or plan target) that keeps a name from being removed, renamed, replaced or changed. */
const char *dsh_broker_guard(struct dsh_broker *b, const char *canonical, const char *spelled);
/* The mount id of name in dirfd ("" for dirfd itself); 0 when unknown. */
uint64_t dsh_broker_mnt_id(int dirfd, const char *name);
/* Whether fd lies on a read-only mount. */
bool dsh_broker_ro_fd(int fd);
/* A change of this name (create, remove, rename) the kernel refuses anyway (read-only, mount point). */
bool dsh_broker_kernel_refuses_name(const struct target *t);
/* A metadata change of this name's inode the kernel refuses anyway (its mount is read-only). */
bool dsh_broker_kernel_refuses_meta(const struct target *t);
/* Whether a change of this inode's metadata (mode, owner, times, xattrs, attribute flags) is refused:
   a rule's, the mode's (outside the writable roots), or a device node of the host's. */
bool dsh_broker_meta_denied(struct dsh_broker *b, const char *canonical, const char *spelled, const struct stat *st);
/* Whether a rule forbids writing (creating) this name; the mode's own limits are the kernel's. */
bool dsh_broker_create_denied(struct dsh_broker *b, const struct target *t);
/* Whether a new name that is not a directory is refused: it lies on the way to an r-/-- target. */
bool dsh_broker_nondir_denied(struct dsh_broker *b, const struct target *t);
/* Whether a symlink with the text link may not take the name t (it would lead a rule around). */
bool dsh_broker_link_denied(struct dsh_broker *b, const struct target *t, const char *link);
/* The same for the symlink from, when it takes the name to (renamed, or linked). */
bool dsh_broker_moved_link_denied(struct dsh_broker *b, const struct target *from, const struct target *to);

/* ---- broker.c: the answers; files.c and sockets.c: the calls ---- */

/* Answer the call: val, or the error (a positive errno). */
int dsh_call_respond(struct call *c, int64_t val, int error);
/* Answer with r: its value, or -errno. */
int dsh_call_answer(struct call *c, int r);
/* Install fd (the broker's, closed here) in the caller as the call's result. */
int dsh_call_respond_fd(struct call *c, int fd, bool cloexec);
/* r, or -errno when r < 0 (a libc call's result as an answer). */
int dsh_call_sys_result(int r);

int dsh_broker_file_call(struct call *c);
int dsh_broker_socket_call(struct call *c);

#endif
