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
/*
 * For a wildcard pattern, the length of the literal directory every match lies in: every path it
 * matches starts with prefix[0..len) and a '/' (0: none but the root).  The rule index files the
 * pattern under that directory, so that only the paths below it try the automaton.
 */
size_t dsh_glob_prefix_dir_len(const struct dsh_glob *g);
/* The literal bytes every match starts with (NULL for a literal pattern). */
const char *dsh_glob_prefix(const struct dsh_glob *g);
/* The pattern with every wildcard character escaped (for a literal canonical prefix).  (The
   reference the fast matcher is tested against, dsh_glob_match_regex(), is in policy/glob_regex.h.) */
char *dsh_glob_escape(const char *s);
void dsh_glob_clear(struct dsh_glob *g);
/* Free the matchers only, for a glob whose strings someone else owns (dsh_rule_pool). */
void dsh_glob_release_matchers(struct dsh_glob *g);
/* The pattern with its escapes removed, for a literal (non-magic) pattern. */
char *dsh_glob_unescape(const char *s);

/*
 * The glob walker's questions (SPEC 3.5), answered by the matcher's own automaton run over the
 * directory's path and a '/', so that the walker can never disagree with dsh_glob_match().
 *
 * Whether anything at or below the directory dir may be covered: dir itself is (and with it
 * everything below), or some state of the automaton is still alive after "dir/".
 */
bool dsh_glob_may_match_below(const struct dsh_glob *g, const char *dir);
/* Whether every path below name that g matches, with name replaced by target, is matched too (a
   symlink at name leading to target leads nothing g covers out of its reach). */
bool dsh_glob_below_within(const struct dsh_glob *g, const char *name, const char *target);
/*
 * The names an entry of the directory dir must have to be covered or to lead to a cover, when the
 * automaton alive after "dir/" allows only literal names there ("/a/?/lit/x" below "/a/b": "lit").
 * Returns 1 having added them to *names (a NULL-terminated vector; names already there are not
 * added twice; none when nothing below dir can match), 0 when a wildcard applies at that level so
 * only a listing can tell, or -ENOMEM.
 */
int dsh_glob_next_names(const struct dsh_glob *g, const char *dir, char ***names);

#endif
