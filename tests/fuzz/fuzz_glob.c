/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Globs (policy/glob.c), with the differential check: the input is a pattern, then paths, one a
 * line; every path (and the pattern itself, as a path) goes through the fast matcher and the regex
 * reference (policy/glob_regex.c), and any disagreement aborts.
 */
#include <stdio.h>

#include "policy/glob.h"
#include "policy/glob_regex.h"
#include "tests/fuzz/fuzz.h"

static void check(struct dsh_glob *g, const char *pattern, const char *path)
{
	bool fast = dsh_glob_match(g, path), slow = dsh_glob_match_regex(g, path);
	if (fast != slow) {
		fprintf(stderr, "glob '%s' on '%s': fast matcher %d, regex %d\n", pattern, path, fast, slow);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_cstr(data, size);
	char *nl = strchr(buf, '\n');
	char *paths = NULL;
	if (nl) {
		*nl = '\0';
		paths = nl + 1;
	}
	struct dsh_error *err = NULL;
	bool valid = dsh_glob_validate(buf, &err) == 0;
	dsh_error_free(err);
	err = NULL;
	struct dsh_glob g;
	if (dsh_glob_compile(buf, &g, &err) == 0) {
		if (!valid)
			abort(); /* compile accepts only what validate does */
		check(&g, buf, buf);
		for (char *p = paths, *next; p; p = next) {
			next = strchr(p, '\n');
			if (next)
				*next++ = '\0';
			check(&g, buf, p);
		}
		dsh_glob_clear(&g);
	} else {
		FUZZ_CHECK_ERROR(err);
	}
	dsh_error_free(err);
	free(buf);
	return 0;
}
