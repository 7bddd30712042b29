/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_BROKER_SUBTREE_H
#define DSH_BROKER_SUBTREE_H

#include <stddef.h>

#include "dshbox/dshbox.h"

/*
 * Limits of one walk (docs/security.md).  Only entries of directories some r-/-- rule may reach
 * count (dsh_policy_may_protect_below prunes the rest unread).  A million entries take 0.3-0.5 s
 * here, during which the command's other brokered calls wait; a copy of as many, each brokered,
 * takes far longer.  The depth bounds the descriptors held at once.
 */
#define DSH_SUBTREE_MAX_ENTRIES 1000000
#define DSH_SUBTREE_MAX_DEPTH 256

/*
 * Whether a symlink with the text link at canonical would lead an r-/-- rule around
 * (dsh_policy_redirected): its target resolved as the kernel would from canonical's directory, in
 * this process's view (the sandbox's).  A target where the command can write nothing, at it or below
 * (outside the writable roots, or protected by a rule, and no writable root beneath), leads only to
 * the host's own files and is let be.
 * 1 with *ret_rule, 0, or -ENOMEM.
 */
int dsh_broker_link_redirects(const struct dsh_policy *p, const char *canonical, const char *link,
			      const struct dsh_rule **ret_rule);

/*
 * Whether the directory name (in the directory pfd) may take the new name canonical (spelled: the
 * same as the caller wrote it, or NULL): a rename moves every descendant with it, and none of them
 * may land on a name an r-/-- rule covers (SPEC 3.12), nor anything but a directory on a name on the
 * way to an r-/-- target (dsh_policy_guarded), nor a symlink that would lead a rule around from its
 * new place (dsh_broker_link_redirects).  The tree is read through descriptors from pfd down, symlinks
 * never followed.  0: nothing below would be covered.  -EACCES: a descendant would be, or a directory
 * a rule may reach could not be read.  -EXDEV: the tree is beyond the walk's bounds (max_entries,
 * DSH_SUBTREE_MAX_DEPTH, PATH_MAX); like a rename across mounts, the caller copies instead, and the
 * broker checks each copy.
 */
int dsh_broker_subtree_check(const struct dsh_policy *p, int pfd, const char *name, const char *canonical,
			     const char *spelled, size_t max_entries);

#endif
