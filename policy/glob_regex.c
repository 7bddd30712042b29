/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The regex reference matcher, apart from glob.c so that the Windows build can leave it out. */
#include <regex.h>
#include <stdlib.h>

#include "policy/glob.h"
#include "policy/glob_regex.h"

struct dsh_glob_re {
	regex_t re;
};

bool dsh_glob_match_regex(struct dsh_glob *g, const char *path)
{
	if (!g->re) {
		struct dsh_glob_re *c = malloc(sizeof(*c));
		if (!c || regcomp(&c->re, g->regex, REG_EXTENDED | REG_NOSUB) != 0) {
			free(c);
			return false;
		}
		g->re = c;
	}
	return regexec(&g->re->re, path, 0, NULL, 0) == 0;
}

void dsh_glob_regex_release(struct dsh_glob *g)
{
	if (g->re) {
		regfree(&g->re->re);
		free(g->re);
	}
	g->re = NULL;
}
