/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SECCOMP_SECCOMP_H
#define DSH_SECCOMP_SECCOMP_H

/*
 * The seccomp filter: the one chokepoint for libseccomp and the seccomp() syscall.
 *
 * Generated with libseccomp at build time, one program per combination of the options
 * (dsh_seccomp_compile copies the run's into memory before clone; see dsh_seccomp_prebuilt),
 * loaded by the child as the last stage before execve (dsh_seccomp_load: one syscall, nothing
 * allocated).  Default action: allow.  Every refusal is an errno (EPERM; clone3 ENOSYS so that
 * libc falls back to clone(), whose flags a filter can read), never a kill, so programs fail with
 * a readable error.  Hot syscalls carry no argument check, so the kernel's per-syscall action
 * cache (Linux 5.11) answers them without running the filter.
 *
 * Every syscall number above DSH_SECCOMP_NEWEST_NR answers ENOSYS (SPEC 3.7): a call added to the
 * kernel after this table was reviewed may be a new way around it (open_tree_attr was a new way to
 * clone a mount), so it looks absent until someone reviews it.  Programs already cope with ENOSYS
 * from older kernels.  That test is one compare on the syscall number, prepended to libseccomp's
 * program, so the action cache still answers every allowed call.
 *
 * The table below is the documentation too: docs/security.md lists it, --dry-run can print it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>

#include "dshbox/error.h"

enum dsh_seccomp_cond {
	DSH_SC_ALWAYS,        /* every call */
	DSH_SC_CLONE_NS,      /* clone(): any namespace flag in arg 0 */
	DSH_SC_UNSHARE_NS,    /* unshare(): any namespace flag in arg 0 */
	DSH_SC_IOCTL_REQ,     /* ioctl(): arg 1 equals datum in its low 32 bits (the kernel ignores the rest) */
	DSH_SC_SOCKET_FAMILY, /* socket(): arg 0 equals datum */
	DSH_SC_SOCKET_NOT_UNIX, /* socket(): arg 0 is not AF_UNIX (only with deny_inet) */
	DSH_SC_PERSONALITY,   /* personality(): arg 0 neither PER_LINUX (0) nor the query 0xffffffff */
};

/* Which runs a rule is in: some refusals stand in for a namespace only linux-ns can make. */
enum dsh_seccomp_when {
	DSH_SC_EVERY_RUN,     /* every backend */
	DSH_SC_NO_NETNS,      /* opts.deny_inet: network off without a network namespace */
	DSH_SC_NO_IPCNS,      /* opts.deny_sysv_ipc: no IPC namespace, the host's SysV objects and POSIX queues are reachable */
	DSH_SC_NOT_NESTED,    /* unless opts.nested_sandbox: new user namespaces and their mounts (nestedSandbox) */
};

struct dsh_seccomp_rule {
	const char *name;   /* syscall name */
	int nr;             /* native (x86-64 / host) number */
	enum dsh_seccomp_cond cond;
	uint64_t datum;
	int errno_value;    /* EPERM, or ENOSYS for clone3 */
	const char *why;
	enum dsh_seccomp_when when;
};

/*
 * The newest syscall number the table was reviewed against: open_tree_attr, Linux 6.15 (467 on
 * every architecture with the unified numbering, x86-64 and aarch64 among them).  Raising it means
 * reviewing every call in between first; file_getattr/file_setattr (468/469, Linux 6.17) are above
 * it on purpose: they change inode attributes by path, a metadata change the table has not
 * weighed, and the FS_IOC_FS[GS]ETXATTR ioctls do the same job on a descriptor.
 */
#define DSH_SECCOMP_NEWEST_NR 467

/* The ioctl requests the runtime broker serves (they change an inode's attributes). */
extern const uint32_t dsh_seccomp_attr_ioctls[6];

/* The fixed refusal table (SPEC 3.7 and more); *ret_n entries. */
const struct dsh_seccomp_rule *dsh_seccomp_rules(size_t *ret_n);
const char *dsh_seccomp_cond_to_string(enum dsh_seccomp_cond c);
const char *dsh_seccomp_when_to_string(enum dsh_seccomp_when w);

struct dsh_seccomp_opts {
	/* Refuse socket() for every family but AF_UNIX: the landlock backend's "network: off",
	   where no network namespace can be made. */
	bool deny_inet;
	/* Refuse SysV IPC (shm, msg, sem) and opening or removing POSIX message queues by name: the
	   landlock backend, where no IPC namespace can be made, so every segment, queue and semaphore
	   set of the host is one key, id or name away. */
	bool deny_sysv_ipc;
	/* nestedSandbox (SPEC 1.5): new user namespaces allowed, with the mount calls a sandbox in
	   the sandbox needs.  The kernel keeps every mount dshbox made locked in a further user
	   namespace (umount, remount, clearing RDONLY, a non-recursive bind that would uncover a
	   mask all fail), and the command has no capability where those mounts live. */
	bool nested_sandbox;
};

struct dsh_seccomp_prog {
	struct sock_filter *insns;
	unsigned short len;
};

int dsh_seccomp_compile(const struct dsh_seccomp_opts *o, struct dsh_seccomp_prog *ret,
			struct dsh_error **err);
/* Install the program on the calling thread.  Needs no_new_privs (or CAP_SYS_ADMIN). */
int dsh_seccomp_load(const struct dsh_seccomp_prog *p, struct dsh_error **err);
void dsh_seccomp_prog_clear(struct dsh_seccomp_prog *p);

/* The runtime broker's filter (SPEC 3.12): the names it sends to the broker (always; open and
   openat go only when they create). */
const char *const *dsh_seccomp_notified(size_t *ret_n);
/* sockets: connect, bind, sendmsg, sendmmsg and sendto with a destination go too (SPEC 3.11). */
int dsh_seccomp_compile_notify(struct dsh_seccomp_prog *ret, bool sockets, struct dsh_error **err);
/* Install it on the calling thread; *ret_fd is the listener the broker serves (CLOEXEC). */
int dsh_seccomp_load_listener(const struct dsh_seccomp_prog *p, int *ret_fd, struct dsh_error **err);

/*
 * The kernel's own question when it fills its action cache (seccomp_is_const_allow, Linux 5.11):
 * does the program allow this number of this architecture whatever the arguments?  It runs the
 * program on the number and architecture alone and knows only these instructions: loads of the two,
 * jumps on constants, AND, return of a constant; anything else, an argument load above all, is
 * "no".  Stacked filters share one cache, so each must pass alone.
 */
bool dsh_seccomp_const_allow(const struct dsh_seccomp_prog *p, uint32_t arch, uint32_t nr);

/*
 * The deny program and the broker's as one (issue 10): an open that creates nothing was run
 * through both, since the broker's looks at its flags and so no cache answers it; joined, it
 * passes four compares.  The deny program's "allow" becomes a jump to the broker's, which is what
 * two stacked filters decide (a refusal outranks a notification, which outranks "allow").  Returns
 * 1 with *ret set, or 0 when they cannot be joined (too long, or a verdict the deny program
 * computes): then each is loaded on its own.
 */
int dsh_seccomp_join(const struct dsh_seccomp_prog *deny, const struct dsh_seccomp_prog *notify,
		     struct dsh_seccomp_prog *ret, struct dsh_error **err);

/*
 * The programs depend on nothing but these options, so the build generates each once with
 * libseccomp (tools/gen_seccomp.c writes $(BUILD)/gen/seccomp_prebuilt.c) and a run copies one
 * instead of generating it again (issue 14: the generation was most of the supervisor's own
 * start-up).  dsh_seccomp_generate*() are that generation, for the tool and the test holding the
 * tables equal to it; dsh_seccomp_compile*() fall back on them for a key the tables lack.
 */
enum { DSH_SECCOMP_KIND_DENY, DSH_SECCOMP_KIND_NOTIFY, DSH_SECCOMP_KIND_BROKER };
struct dsh_seccomp_prebuilt {
	int kind;
	unsigned key; /* deny: deny_inet | deny_sysv_ipc << 1 | nested_sandbox << 2; notify: sockets */
	unsigned short len;
	const struct sock_filter *insns;
};
extern const struct dsh_seccomp_prebuilt dsh_seccomp_prebuilt[];
extern const size_t dsh_seccomp_n_prebuilt;
/* The SCMP_ARCH_* the tables were generated for: a run elsewhere generates its own. */
extern const uint32_t dsh_seccomp_prebuilt_arch;
unsigned dsh_seccomp_opts_key(const struct dsh_seccomp_opts *o);
/* arch: an SCMP_ARCH_* (0: the native one); a cross build generates the target's. */
int dsh_seccomp_generate(const struct dsh_seccomp_opts *o, uint32_t arch, struct dsh_seccomp_prog *ret,
			 struct dsh_error **err);
int dsh_seccomp_generate_notify(uint32_t arch, struct dsh_seccomp_prog *ret, bool sockets, struct dsh_error **err);
int dsh_seccomp_generate_broker(uint32_t arch, struct dsh_seccomp_prog *ret, struct dsh_error **err);

/*
 * The runtime broker's own filter (init while it serves): an allow-list of what serving needs, every
 * other call EPERM — no exec, no ptrace, no mount, no namespace.  Loaded by init with
 * dsh_seccomp_load once the command has exec'd.
 */
int dsh_seccomp_compile_broker(struct dsh_seccomp_prog *ret, struct dsh_error **err);

#endif
