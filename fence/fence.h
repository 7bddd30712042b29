/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_FENCE_FENCE_H
#define DSH_FENCE_FENCE_H

/*
 * The file fence's internals beside its public API (include/dshbox/fence.h): how a version is
 * spelled, and the pure helpers the operations are built from.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "dshbox/fence.h"

/* The version of the file st describes, into buf (DSH_FENCE_VERSION_MAX bytes suffice);
   -ENAMETOOLONG when it does not fit. */
int dsh_fence_version(const struct stat *st, char *buf, size_t size);

/* --- pure helpers (fence/diff.c) --- */

/*
 * A unified diff (3 lines of context) from old to new, labelled with path; "" when they are equal.
 * Minimal (Myers) for differences up to a bound, otherwise still correct but coarser.
 */
int dsh_diff_unified(const char *path, const char *old_s, size_t old_len, const char *new_s,
		     size_t new_len, char **ret, struct dsh_error **err);

/* --- pure helpers (fence/text.c) --- */

/* The length of the one valid UTF-8 sequence at s (n bytes left), or 0 when it is not one. */
size_t dsh_utf8_sequence(const unsigned char *s, size_t n);
/* Text as edit takes it: no NUL byte, valid UTF-8 (RFC 3629: no overlong forms, no surrogates). */
bool dsh_text_valid(const char *s, size_t n);
/* A CRLF file: at least one line end, and every LF preceded by CR. */
bool dsh_text_is_crlf(const char *s, size_t n);
/* A copy with every LF not already preceded by CR turned into CRLF; NULL when out of memory. */
char *dsh_text_lf_to_crlf(const char *s, size_t n, size_t *ret_len);

/*
 * A fresh temporary name for a write of NAME in the same directory: `.NAME.dshbox~` (or
 * `.dshbox-HASH~` for a long name) and 16 random hex digits, never the same twice.
 */
int dsh_fence_temp_name(const char *name, char *buf, size_t size);
/* candidate has the shape of a temporary name of a write of NAME (a killed writer's leftover). */
bool dsh_fence_is_temp_name(const char *name, const char *candidate);

#endif
