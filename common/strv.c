/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"
/* dsh_strv_free is public: its definition must see the DSH_PUBLIC declaration, or the library
   compiled with -fvisibility=hidden keeps it to itself. */
#include "dshbox/dshbox.h"

size_t dsh_strv_len(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

int dsh_strv_push_take(char ***v, char *s)
{
	if (!s)
		return -ENOMEM;
	size_t n = dsh_strv_len(*v);
	char **nv = realloc(*v, (n + 2) * sizeof(char *));
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[n] = s;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

int dsh_strv_push_take_n(char ***v, size_t *n, char *s)
{
	if (!s)
		return -ENOMEM;
	/* Sized in powers of two: realloc to the size a block already has returns at once, and a
	   vector built elsewhere (sized exactly) is grown the first time, never overrun. */
	size_t cap = 2;
	while (cap < *n + 2)
		cap *= 2;
	char **nv = realloc(*v, cap * sizeof(char *));
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[*n] = s;
	nv[++*n] = NULL;
	*v = nv;
	return 0;
}

int dsh_strv_push(char ***v, const char *s)
{
	return dsh_strv_push_take(v, strdup(s));
}

int dsh_strv_pushf(char ***v, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	return dsh_strv_push_take(v, s);
}

bool dsh_strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

char **dsh_strv_copy(char *const *v)
{
	size_t n = dsh_strv_len(v);
	char **c = calloc(n + 1, sizeof(char *));
	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		c[i] = strdup(v[i]);
		if (!c[i]) {
			dsh_strv_free(c);
			return NULL;
		}
	}
	return c;
}

void dsh_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

const char *dsh_env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}
