/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_GLOB_H
#define DSH_POLICY_GLOB_H

#include <stdbool.h>

#include "dshbox/error.h"
#include "policy/policy.h"

/* Whether s holds an unescaped wildcard: '*', '?' or '['. */
bool dsh_glob_has_magic(const char *s);
/* Check the syntax (unclosed '[', empty class). */
int dsh_glob_validate(const char *pattern, struct dsh_error **err);
/*
 * The one anchored POSIX ERE for an absolute pattern: '*' and '?' never cross '/', '**' crosses
 * levels and '**' followed by '/' also matches zero levels, classes never match '/', every other
 * character literal; the expression also matches every descendant of a match.  Uses only syntax
 * common to POSIX regcomp(REG_EXTENDED) and Seatbelt's regex.
 */
int dsh_glob_to_regex(const char *pattern, char **ret, struct dsh_error **err);
int dsh_glob_compile(const char *pattern, struct dsh_glob *ret, struct dsh_error **err);
/* Whether the glob covers path (the fast matcher). */
bool dsh_glob_match(const struct dsh_glob *g, const char *path);
/* dsh_glob_match_regex(), the reference the fast matcher is tested against: policy/glob_regex.h. */
/* The pattern with every wildcard character escaped (for a literal canonical prefix). */
char *dsh_glob_escape(const char *s);
void dsh_glob_clear(struct dsh_glob *g);
/* The pattern with its escapes removed, for a literal (non-magic) pattern. */
char *dsh_glob_unescape(const char *s);

#endif
