/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_STRPOOL_H
#define DSH_POLICY_STRPOOL_H

#include <stddef.h>

/*
 * Strings that live as long as the policy, packed into large chunks and freed together.  A policy
 * of 200,000 rules holds about a million small strings: one malloc() and one free() each, and a
 * walk over all of them at exit, were a fifth of loading it.
 */
struct dsh_strpool_chunk;
struct dsh_strpool {
	struct dsh_strpool_chunk *head; /* the chunk being filled; earlier ones follow it */
	size_t used, cap;               /* bytes of head's room in use, and its size */
};

/* A copy of s in the pool, or NULL when out of memory. */
char *dsh_strpool_dup(struct dsh_strpool *pool, const char *s);
void dsh_strpool_clear(struct dsh_strpool *pool);

#endif
