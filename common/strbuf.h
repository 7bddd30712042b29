/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_STRBUF_H
#define DSH_COMMON_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/error.h"

/*
 * A growable string.  An allocation failure is sticky (oom = true) so that builders can append
 * freely and check once at the end with dsh_buf_steal(), which returns NULL after any failure.
 */
struct dsh_buf {
	char *s;
	size_t len, cap;
	bool oom;
};

void dsh_buf_add(struct dsh_buf *b, const char *s);
void dsh_buf_addn(struct dsh_buf *b, const char *s, size_t n);
void dsh_buf_addc(struct dsh_buf *b, char c);
void dsh_buf_addf(struct dsh_buf *b, const char *fmt, ...) DSH_PRINTF(2, 3);
/* The string (never NULL unless out of memory), ownership to the caller; the buffer is reset. */
char *dsh_buf_steal(struct dsh_buf *b);
void dsh_buf_free(struct dsh_buf *b);

#endif
