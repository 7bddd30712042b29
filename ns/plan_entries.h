/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_PLAN_ENTRIES_H
#define DSH_NS_PLAN_ENTRIES_H

/*
 * A mount plan built entry by entry rather than from a policy: `dshbox bwrap` (SPEC 8) translates
 * bubblewrap's operations into the entry kinds of ns/plan.h (sorted entries, then operations in
 * argv order) and hands the result to the same applier (ns/mount.c).  The caller decides the flags (ro_root, proc, dev, private_tmp,
 * tmp_writable); pushing an entry records the identity of its target for the applier's re-check.
 */

#include "ns/plan.h"

struct dsh_mount_plan *dsh_mount_plan_new(void);
/*
 * Append an entry.  Binds (bind-rw, bind-ro) and masks record the target's device and inode now
 * (lstat); a missing target is -ENOENT with nothing appended, so the caller can skip a -try.
 */
int dsh_mount_plan_push(struct dsh_mount_plan *plan, const char *path, enum dsh_mount_action action,
			const char *why, struct dsh_error **err);
int dsh_mount_plan_note(struct dsh_mount_plan *plan, const char *line);
/* Append a copy of op (its strings copied; fd borrowed) to the operations applied in order. */
int dsh_mount_plan_push_ordered(struct dsh_mount_plan *plan, const struct dsh_mount_entry *op, struct dsh_error **err);
/* Sort parents first (component-wise), the action order of ns/plan.h breaking ties. */
void dsh_mount_plan_sort(struct dsh_mount_plan *plan);

#endif
