/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

static bool grow(struct dsh_buf *b, size_t extra)
{
	if (b->oom)
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void dsh_buf_addn(struct dsh_buf *b, const char *s, size_t n)
{
	if (!grow(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void dsh_buf_add(struct dsh_buf *b, const char *s)
{
	dsh_buf_addn(b, s, strlen(s));
}

/* Called per byte by the glob compiler and the path normaliser: no memcpy for one byte. */
void dsh_buf_addc(struct dsh_buf *b, char c)
{
	if (!grow(b, 1))
		return;
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

void dsh_buf_addf(struct dsh_buf *b, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	dsh_buf_addn(b, s, (size_t)n);
	free(s);
}

char *dsh_buf_steal(struct dsh_buf *b)
{
	if (b->oom) {
		dsh_buf_free(b);
		return NULL;
	}
	char *s = b->s ? b->s : strdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void dsh_buf_free(struct dsh_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}
