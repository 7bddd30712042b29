/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_PATH_H
#define DSH_POLICY_PATH_H

#include "dshbox/error.h"

/*
 * Lexical normalisation (pure): absolute against base (NULL: path must be absolute), '//' and '.'
 * removed, '..' pops a component ('/..' stays '/'), no trailing slash.  Returns a new string.
 */
char *dsh_path_normalize(const char *base, const char *path);
/*
 * Canonicalise the longest existing prefix of an absolute, normalised path (symlinks resolved by
 * the kernel through realpath), the missing rest appended.
 */
int dsh_path_canonicalize(const char *path, char **ret, struct dsh_error **err);

/*
 * The same, remembering the last parent directory it canonicalised: a policy of a thousand rules
 * in one directory then costs one lstat per rule, not a readlink per component per rule.
 */
struct dsh_canon_cache {
	char *dir;   /* normalised parent asked for last */
	char *canon; /* its canonical form */
};
int dsh_path_canonicalize_cached(const char *path, struct dsh_canon_cache *cache, char **ret,
				 struct dsh_error **err);
void dsh_canon_cache_clear(struct dsh_canon_cache *cache);

#endif
