/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/path_search.h"

void dsh_path_search_init(struct dsh_path_search *s, const char *path, const char *name)
{
	s->next = path ? path : DSH_DEFAULT_PATH;
	s->name = name;
}

int dsh_path_search_next(struct dsh_path_search *s, char *buf, size_t size)
{
	if (!s->next)
		return 0;
	const char *p = s->next, *colon = strchr(p, ':');
	size_t len = colon ? (size_t)(colon - p) : strlen(p);
	s->next = colon ? colon + 1 : NULL;
	/* "./name" rather than "name": the same file for execve, and a runner path that reads as one. */
	int n = len ? snprintf(buf, size, "%.*s/%s", (int)len, p, s->name) : snprintf(buf, size, "./%s", s->name);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 1;
}
