/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_STRV_H
#define DSH_COMMON_STRV_H

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/error.h"

/* NULL-terminated string vectors, owned with their strings. */
size_t dsh_strv_len(char *const *v);
/* Append a copy of s; returns 0 or -ENOMEM (v unchanged on failure). */
int dsh_strv_push(char ***v, const char *s);
/* Append s itself, taking ownership (freed on failure). */
int dsh_strv_push_take(char ***v, char *s);
/* The same where the caller keeps the length in *n (and it grows by one): amortized O(1), for
   vectors that grow large (a mount plan's notes over 200,000 rules). */
int dsh_strv_push_take_n(char ***v, size_t *n, char *s);
int dsh_strv_pushf(char ***v, const char *fmt, ...) DSH_PRINTF(2, 3);
bool dsh_strv_contains(char *const *v, const char *s);
char **dsh_strv_copy(char *const *v);
void dsh_strv_free(char **v);
/* Value of NAME in an environment vector, or NULL. */
const char *dsh_env_get(char *const *envp, const char *name);

#endif
