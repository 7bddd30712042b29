/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The regex reference matcher, apart from glob.c so that the Windows build can leave it out. */
#include <regex.h>

#include "policy/glob.h"
#include "policy/glob_regex.h"

bool dsh_glob_match_regex(struct dsh_glob *g, const char *path)
{
	if (!g->re_compiled) {
		if (regcomp(&g->re, g->regex, REG_EXTENDED | REG_NOSUB) != 0)
			return false;
		g->re_compiled = true;
	}
	return regexec(&g->re, path, 0, NULL, 0) == 0;
}

void dsh_glob_regex_release(struct dsh_glob *g)
{
	if (g->re_compiled)
		regfree(&g->re);
	g->re_compiled = false;
}
