/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SEATBELT_SBPL_H
#define DSH_SEATBELT_SBPL_H

/*
 * The Seatbelt profile generator (SPEC 6): pure, built and tested on every platform.
 *
 * Quoting grammar (docs/backends.md):
 *   - a path is an SBPL string "…": '\' and '"' are written as \\ and \", every other byte
 *     (UTF-8 included) as it is; a control character (< 0x20, 0x7f) is refused;
 *   - a regex is the literal #"…" when it holds no '"' and does not end in '\' (it then reads back
 *     the same whether the reader treats #"…" as fully raw or pairs each '\' with the next byte,
 *     and Apple's own profiles pass '\.' through it unchanged); otherwise it is the plain string
 *     form (regex "…") with the string escapes above.
 * No path can end a literal early or inject a form.
 */

#include <stdbool.h>

#include "common/strbuf.h"
#include "dshbox/error.h"
#include "policy/policy.h"

/* Append s as an SBPL string literal.  -EINVAL for a control character. */
int dsh_sbpl_add_string(struct dsh_buf *b, const char *s, struct dsh_error **err);
/* Append the filter (regex #"…") (or (regex "…"), see above) for the ERE re. */
int dsh_sbpl_add_regex(struct dsh_buf *b, const char *re, struct dsh_error **err);

/*
 * The case-insensitive form of an anchored ERE of the subset dsh_glob_to_regex() emits: every ASCII
 * letter outside a bracket expression becomes [aA], every bracket expression is closed under ASCII
 * case, and a two-byte UTF-8 letter with a simple case partner (Latin-1, Latin Extended-A, Greek,
 * Cyrillic) becomes (é|É).  The result matches exactly the case variants of what re matches.
 */
int dsh_sbpl_casefold_regex(const char *re, char **ret, struct dsh_error **err);

/* The ERE for a literal path and its descendants: ^<path, metacharacters escaped>(/.*)?$ */
char *dsh_sbpl_literal_regex(const char *path);

/* The whole profile for a policy. */
int dsh_sbpl_profile(const struct dsh_policy *p, char **ret, struct dsh_error **err);

#endif
