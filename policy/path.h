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

#endif
