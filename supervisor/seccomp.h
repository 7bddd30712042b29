/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_SECCOMP_H
#define DSH_SUPERVISOR_SECCOMP_H

/*
 * The seccomp filter: the one chokepoint for libseccomp and the seccomp() syscall.
 *
 * Compiled with libseccomp before clone (dsh_seccomp_compile exports the BPF program into memory),
 * loaded by the child as the last stage before execve (dsh_seccomp_load: one syscall, nothing
 * allocated).  Default action: allow.  Every refusal is an errno (EPERM; clone3 ENOSYS so that
 * libc falls back to clone(), whose flags a filter can read), never a kill, so programs fail with
 * a readable error.  Hot syscalls carry no argument check, so the kernel's per-syscall action
 * cache (Linux 5.11) answers them without running the filter.
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

struct dsh_seccomp_rule {
	const char *name;   /* syscall name */
	int nr;             /* native (x86-64 / host) number */
	enum dsh_seccomp_cond cond;
	uint64_t datum;
	int errno_value;    /* EPERM, or ENOSYS for clone3 */
	const char *why;
};

/* The fixed refusal table (SPEC 3.7 and more); *ret_n entries. */
const struct dsh_seccomp_rule *dsh_seccomp_rules(size_t *ret_n);
const char *dsh_seccomp_cond_to_string(enum dsh_seccomp_cond c);

struct dsh_seccomp_opts {
	/* Refuse socket() for every family but AF_UNIX: the landlock backend's "network: off",
	   where no network namespace can be made. */
	bool deny_inet;
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

#endif
