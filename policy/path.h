/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_PATH_H
#define DSH_POLICY_PATH_H

#include <stdbool.h>

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
 * A directory as the kernel's chdir reaches it: absolute against base, each existing component
 * canonicalised *before* the next '..' applies (SPEC 1.3: `X/link/..` is the link target's parent);
 * past the first missing component the rest is lexical.  For the workspace, cwd and TMPDIR, never
 * for rules (their '..' is lexical, as the conformance vectors say).
 */
int dsh_path_resolve_physical(const char *base, const char *path, char **ret, struct dsh_error **err);

/*
 * The same, remembering the last parent directory it canonicalised: a policy of a thousand rules
 * in one directory then costs one lstat per rule, not a readlink per component per rule.
 */
/* Every parent canonicalised during one load (a hash table that only grows): rules spread over
   many directories must not cost one realpath each (200,000 rules over 1,000 directories). */
struct dsh_canon_slot {
	char *dir;   /* a normalised parent asked for, or NULL: empty */
	char *canon; /* its canonical form */
	bool exists; /* it is a directory now: a name in it may be a symlink to resolve */
	unsigned lookups; /* names looked at in it so far */
	int handle;  /* dsh_path_dir_handle() of canon once it served two names, or -1 */
};
struct dsh_canon_cache {
	struct dsh_canon_slot *slots; /* open addressing, a power of two; NULL until first used */
	size_t n, cap;
	size_t n_handles; /* at most DSH_CANON_HANDLES open at once: the rest look names up by path */
};
#define DSH_CANON_HANDLES 64
int dsh_path_canonicalize_cached(const char *path, struct dsh_canon_cache *cache, char **ret,
				 struct dsh_error **err);
void dsh_canon_cache_clear(struct dsh_canon_cache *cache);

/*
 * The per-platform seam under dsh_path_canonicalize (policy/realpath.c on POSIX, realpath_win.c on
 * Windows); everything else in policy/ is portable.  dsh_path_real(): the canonical form of an
 * existing absolute path in a new string, or -errno; -ENOENT, -ENOTDIR, -EACCES and -ELOOP mean
 * "cut the last component and try its parent".  dsh_path_is_link(): whether the last component is
 * a symbolic link (or on Windows any reparse point), so that the cache must not be trusted for it.
 */
int dsh_path_real(const char *path, char **ret);

/* a then b in one new string, NULL when out of memory: the loader's joins, without a printf each. */
char *dsh_str_cat(const char *a, const char *b);
bool dsh_path_is_link(const char *path);
/*
 * A handle on the existing directory dir, or -1 (none: the open failed, or the platform has no
 * lookups relative to a directory).  dsh_path_is_link_in() asks dsh_path_is_link(path) for path,
 * name in that directory, looking name up in it: one component for the kernel to walk, not the
 * whole path (200,000 rules in a directory six levels down).
 */
int dsh_path_dir_handle(const char *dir);
bool dsh_path_is_link_in(int handle, const char *name, const char *path);
void dsh_path_dir_handle_close(int handle);

#endif
