/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_BROKER_SUBTREE_H
#define DSH_BROKER_SUBTREE_H

#include "dshbox/dshbox.h"

/*
 * Limits of one walk (docs/security.md).  Only entries of directories some r-/-- rule may reach
 * count (dsh_policy_may_protect_below prunes the rest unread).
 */
#define DSH_SUBTREE_MAX_ENTRIES 100000
#define DSH_SUBTREE_MAX_DEPTH 256

/*
 * Whether the directory name (in the directory pfd) may take the new name canonical (spelled: the
 * same as the caller wrote it, or NULL): a rename moves every descendant with it, and none of them
 * may land on a name an r-/-- rule covers (SPEC 3.12).  The tree is read through descriptors from
 * pfd down, symlinks never followed.  0: nothing below would be covered.  -EACCES: a descendant
 * would be, or a directory a rule may reach could not be read.  -EXDEV: the tree is beyond the walk's
 * bounds; like a rename across mounts, the caller copies instead, and the broker checks each copy.
 */
int dsh_broker_subtree_check(const struct dsh_policy *p, int pfd, const char *name, const char *canonical,
			     const char *spelled);

#endif
