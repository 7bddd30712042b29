/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "policy/strpool.h"

#define CHUNK (64 * 1024)

struct dsh_strpool_chunk {
	struct dsh_strpool_chunk *next;
	char room[];
};

char *dsh_strpool_dup(struct dsh_strpool *pool, const char *s)
{
	size_t n = strlen(s) + 1;
	if (!pool->head || pool->cap - pool->used < n) {
		/* A string longer than a chunk gets one of its own size; the one being filled stays
		   the head only when it still has room worth keeping. */
		size_t cap = n > CHUNK / 4 ? n : CHUNK;
		struct dsh_strpool_chunk *c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		if (cap == n && pool->head) {
			c->next = pool->head->next;
			pool->head->next = c;
			memcpy(c->room, s, n);
			return c->room;
		}
		c->next = pool->head;
		pool->head = c;
		pool->used = 0;
		pool->cap = cap;
	}
	char *out = pool->head->room + pool->used;
	memcpy(out, s, n);
	pool->used += n;
	return out;
}

void dsh_strpool_clear(struct dsh_strpool *pool)
{
	for (struct dsh_strpool_chunk *c = pool->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	*pool = (struct dsh_strpool){ 0 };
}
