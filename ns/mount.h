/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_MOUNT_H
#define DSH_NS_MOUNT_H

/*
 * Applying the mount plan (SPEC 3.3, 3.4, 3.6) inside a fresh user + mount namespace, with the new
 * mount API only.  Every mount in dshbox goes through the few wrappers in ns/mount.c.
 */

#include <stdbool.h>

#include "dshbox/error.h"
#include "ns/plan.h"

struct dsh_mount_outcome {
	bool proc_fallback;  /* the fresh procfs was refused; the host's /proc is bound instead */
	/* Mounts the apply still holds (the masks' sources, device node clones, an unused clone of
	   /proc): closing the last reference to a detached mount waits for an RCU grace period, so
	   they are handed to a process that outlives the start (the keeper) rather than closed. */
	int held[12];
	size_t n_held;
};

/*
 * Apply plan in rounds: private propagation; writable roots cloned (open_tree CLONE|RECURSIVE);
 * the whole tree made read-only (mount_setattr "/" RECURSIVE RDONLY); then every entry in plan
 * order, each target opened once with openat2 (no symlinks, no magic links) right before its mount
 * and its device and inode re-checked against the plan.  An error names the entry:
 *   mount 3/7 '/home/u/.ssh' (mask-dir, rule "-- {{ env.HOME }}/.ssh"): open_tree: Permission denied
 */
int dsh_mount_plan_apply(const struct dsh_mount_plan *plan, struct dsh_mount_outcome *ret,
			 struct dsh_error **err);

/* Make every mount private, recursively (nothing propagates to or from the host). */
int dsh_mount_make_private(struct dsh_error **err);

#endif
