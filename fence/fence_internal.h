/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_FENCE_FENCE_INTERNAL_H
#define DSH_FENCE_FENCE_INTERNAL_H

/*
 * Entry points the library's own tests use and callers do not: kept out of fence.h, and taking
 * what they need as arguments rather than through a mutable global, so that two callers (or two
 * threads) never see each other's settings.
 */

#include "fence/fence.h"

/* A function dsh_fence_edit_hooked calls between the edit's read and its commit. */
typedef void (*dsh_fence_edit_hook_fn)(void *userdata);

/*
 * dsh_fence_edit, with hook (if not NULL) called after the file was read and the new content
 * computed, before the re-check and the rename: lets a test interleave a concurrent writer
 * deterministically.  dsh_fence_edit is this with a NULL hook.
 */
int dsh_fence_edit_hooked(const struct dsh_policy *p, const char *path, const char *old_s, size_t old_len,
			  const char *new_s, size_t new_len, bool all, const struct dsh_fence_write_opts *opts,
			  dsh_fence_edit_hook_fn hook, void *hook_data, struct dsh_fence_write_result *ret,
			  struct dsh_error **err);

#endif
