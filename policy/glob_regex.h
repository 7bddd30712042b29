/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_GLOB_REGEX_H
#define DSH_POLICY_GLOB_REGEX_H

/*
 * The regex reference matcher (SPEC 1.4): regexec() on a glob's one anchored ERE, the answer the
 * fast matcher is proven equal to by the differential tests, and the regex Seatbelt is given.  It is
 * the only part of policy/ that needs <regex.h>, so it lives in glob_regex.c, which the Windows build
 * leaves out: mingw-w64 has no <regex.h>, and nothing on Windows matches by regex (the winacl plan
 * refuses globs; the tests run on Linux).
 */

#include <stdbool.h>

struct dsh_glob;

#ifdef _WIN32
static inline void dsh_glob_regex_release(struct dsh_glob *g)
{
	(void)g;
}
#else
/* Whether the glob covers path, answered by regexec() on g->regex (compiled on first use). */
bool dsh_glob_match_regex(struct dsh_glob *g, const char *path);
/* Free the compiled regex, if any (dsh_glob_clear calls it). */
void dsh_glob_regex_release(struct dsh_glob *g);
#endif

#endif
