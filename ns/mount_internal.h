/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_MOUNT_INTERNAL_H
#define DSH_NS_MOUNT_INTERNAL_H

/*
 * What the two halves of the one applier share: ns/mount.c (the wrappers every mount goes
 * through, the sorted entries, the rounds) and ns/mount_ordered.c (the operations applied in the
 * order given, plan->ordered).  Nothing outside ns/ includes this.
 */

#include <stdbool.h>
#include <stddef.h>

#include "ns/mount.h"

struct applier {
	const struct dsh_mount_plan *plan;
	/* Per entry, then per ordered operation: the writable root's clone, a bind's source or a
	   fresh procfs, all taken before anything is mounted (the tree as the host shows it). */
	int *clones;
	int dev_nodes[6];     /* host device nodes, cloned before the read-only pass */
	int console;          /* the caller's terminal, cloned for /dev/console; -1: none */
	int proc_clone;       /* the host's /proc, for the fallback */
	int mask_file;        /* the first file mask: the one empty mode-000 file, attached */
	int mask_dir;         /* the first directory mask: a read-only tmpfs of mode 000, attached */
	bool mask_owned;      /* plan->masks_unmapped: the masks belong to mask_uid/mask_gid */
	uid_t mask_uid;
	gid_t mask_gid;
	char **roots;         /* ordered: tmpfs mounted by this run, where names may be made */
	char **binds;         /* ordered: host trees bound by this run, where no name is made */
	struct dsh_mount_outcome *out;
};

extern const char *const dsh_mount_dev_node_names[6];

/* The chokepoint: every mount-family call of dshbox is one of these.  Each returns a descriptor
   or 0, or fills err with the call's name ("open_tree: Permission denied"). */
int dsh_m_open_tree(int dfd, const char *path, unsigned flags, struct dsh_error **err);
int dsh_m_move(int from, int to_dfd, const char *to_path, struct dsh_error **err);
int dsh_m_setattr(int dfd, const char *path, bool recursive, unsigned long long set, unsigned long long clr,
		  struct dsh_error **err);
int dsh_m_fsmount(const char *type, const char *const *opts, unsigned attrs, struct dsh_error **err);

/* The entry's target, opened without following a symlink and checked against the plan. */
int dsh_mount_open_target(const struct dsh_mount_entry *e, struct dsh_error **err);
/* A minimal /dev on e's path; console: the terminal bound on /dev/console, or -1. */
int dsh_mount_apply_dev(struct applier *a, const struct dsh_mount_entry *e, int console, struct dsh_error **err);

/* Ordered operation i's source (a bind's clone, a fresh procfs), before anything is mounted. */
int dsh_mount_prepare_ordered(struct applier *o, size_t i, const struct dsh_mount_entry *op, struct dsh_error **err);
/* Every ordered operation, in order (the last round). */
int dsh_mount_apply_ordered(struct applier *o, struct dsh_error **err);

#endif
