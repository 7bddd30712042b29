/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_ORDERED_MOUNT_H
#define DSH_NS_ORDERED_MOUNT_H

/*
 * Mount operations applied in the order given, after the mount plan (ns/plan.h) and before the
 * lock: `dshbox bwrap` uses them for bubblewrap's operations that have no plan entry, where
 * bubblewrap's "a later mount covers an earlier one" must hold exactly.  Through the same
 * wrappers as the plan (ns/mount.c).  Mount points and files are made only beneath a tmpfs this
 * run mounted (the roots listed in creatable, then every tmpfs operation): never on the host.
 */

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/error.h"

enum dsh_omount_kind {
	DSH_OMOUNT_BIND,        /* source (host path) onto dest, recursively */
	DSH_OMOUNT_TMPFS,       /* a new tmpfs, mode perms, size bytes (0: the kernel's default) */
	DSH_OMOUNT_REMOUNT_RO,  /* dest read-only, that mount only */
	DSH_OMOUNT_DIR,         /* mkdir dest (perms) */
	DSH_OMOUNT_SYMLINK,     /* symlink dest -> source */
	DSH_OMOUNT_FILE,        /* a file at dest with fd's data (perms) */
	DSH_OMOUNT_BIND_DATA,   /* fd's data in a file of a private tmpfs, bound onto dest */
	DSH_OMOUNT_CHMOD,       /* chmod dest perms */
	DSH_OMOUNT_ATTR,        /* mount attributes set/cleared on dest, recursively (MOUNT_ATTR_*) */
	DSH_OMOUNT_NEWROOT,     /* a fresh tmpfs (mode 0755) becomes "/": pivot_root, the old tree detached */
	DSH_OMOUNT_PROC,        /* a fresh procfs on dest */
	DSH_OMOUNT_DEV,         /* a minimal /dev on dest (only "/dev"), as the plan's dev entry */
	DSH_OMOUNT_MQUEUE,      /* a new mqueue filesystem (the current IPC namespace's) on dest */
};

struct dsh_omount {
	enum dsh_omount_kind kind;
	const char *source;
	const char *dest;
	const char *why;        /* the operation as the argv spelled it, for errors */
	bool readonly;          /* bind, bind-data: read-only */
	bool devices;           /* bind: device nodes usable (bubblewrap's --dev-bind) */
	bool try_;              /* bind: a missing source is skipped */
	int fd;                 /* file, bind-data */
	int perms;
	unsigned long long size;
	unsigned long long attr_set, attr_clr;
	bool dev_mqueue;        /* dev: with an empty mqueue directory (a later --mqueue /dev/mqueue) */
};

/*
 * Before the plan is applied: clone every bind's source as the host shows it (bubblewrap binds
 * from the old root, never from what the argv already mounted), and the host's device nodes when
 * a dev operation needs them.  *ret_fds is owned by the caller until dsh_omounts_apply.
 */
int dsh_omounts_prepare(const struct dsh_omount *ops, size_t n, int **ret_fds, struct dsh_error **err);
/* Apply ops in order; fds from dsh_omounts_prepare (closed here). */
int dsh_omounts_apply(const struct dsh_omount *ops, size_t n, int *fds, char *const *creatable,
		      struct dsh_error **err);

#endif
