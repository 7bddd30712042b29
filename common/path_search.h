/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_PATH_SEARCH_H
#define DSH_COMMON_PATH_SEARCH_H

#include <stddef.h>

/* The list searched when the environment has no PATH (glibc's default plus /usr/local/bin). */
#define DSH_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/*
 * The candidates for a program NAME (no '/') along a PATH value, in order, the way execvp walks
 * them; an empty entry is the current directory.  It allocates nothing: the command's exec runs in
 * a CLONE_VM child that shares init's heap.
 */
struct dsh_path_search {
	const char *next; /* the rest of the list; NULL when done */
	const char *name;
};

/* path NULL: DSH_DEFAULT_PATH. */
void dsh_path_search_init(struct dsh_path_search *s, const char *path, const char *name);

/*
 * Put the next candidate, "dir/name", in buf.  Returns 1 when buf holds one, 0 when the list is
 * done, -ENAMETOOLONG when this candidate does not fit in size (the caller goes on to the next).
 */
int dsh_path_search_next(struct dsh_path_search *s, char *buf, size_t size);

#endif
