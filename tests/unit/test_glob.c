/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <string.h>

#include "policy/glob.h"
#include "tests/lib/harness.h"

/* A small deterministic generator, so a failure names a case that reproduces. */
static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

/* The characters that trip matchers: regex metacharacters, glob syntax, separators, space. */
static const char pattern_atoms[][6] = { "a", "b", "x", ".", "/", "/", "*", "**", "**/", "?", "[ab]", "[!a]",
					 "[a-c]", "\\[", "\\*", "(", ")", "+", "|", "$", "^", "{", "}", " ",
					 "-", "]", "\\\\", "%", "é" };
static const char path_atoms[][6] = { "a", "b", "x", ".", "/", "/", "/", "ab", "*", "?", "[", "]", "(", ")",
				      "+", "|", "$", "^", "{", "}", " ", "-", "\\", "\n", "é", "ba", "xx" };

static void gen_pattern(char *buf, size_t cap)
{
	size_t len = 1;
	buf[0] = '/';
	buf[1] = '\0';
	int n = 1 + (int)rnd(8);
	for (int i = 0; i < n; i++) {
		const char *a = pattern_atoms[rnd(sizeof(pattern_atoms) / sizeof(pattern_atoms[0]))];
		if (len + strlen(a) + 1 >= cap)
			break;
		strcat(buf, a);
		len += strlen(a);
	}
}

/* A path built from the pattern's own literal pieces half the time, so matches are common. */
static void gen_path(const char *pattern, char *buf, size_t cap)
{
	size_t len = 1;
	buf[0] = '/';
	buf[1] = '\0';
	int n = 1 + (int)rnd(10);
	for (int i = 0; i < n; i++) {
		char piece[8] = { 0 };
		if (rnd(2)) {
			size_t pl = strlen(pattern);
			size_t at = rnd((unsigned)pl), k = 1 + rnd(3);
			for (size_t j = 0; j < k && at + j < pl; j++)
				piece[j] = strchr("*?[]\\!", pattern[at + j]) ? 'a' : pattern[at + j];
		} else {
			strcpy(piece, path_atoms[rnd(sizeof(path_atoms) / sizeof(path_atoms[0]))]);
		}
		if (len + strlen(piece) + 1 >= cap)
			break;
		strcat(buf, piece);
		len += strlen(piece);
	}
}

/* A path the pattern was meant to match: wildcards filled in, maybe a descendant appended. */
static void instantiate(const char *pattern, char *buf, size_t cap)
{
	size_t len = 0;
#define PUT(str)                                              \
	do {                                                  \
		const char *s_ = (str);                       \
		size_t l_ = strlen(s_);                       \
		if (len + l_ + 1 < cap) {                     \
			memcpy(buf + len, s_, l_);            \
			len += l_;                            \
		}                                             \
	} while (0)
	for (const char *p = pattern; *p; p++) {
		char one[2] = { *p, 0 };
		if (*p == '\\' && p[1]) {
			one[0] = *++p;
			PUT(one);
		} else if (p[0] == '*' && p[1] == '*') {
			p++;
			if (p[1] == '/') {
				p++;
				PUT(rnd(2) ? "" : "q/r/");
			} else {
				PUT(rnd(2) ? "" : "z/q");
			}
		} else if (*p == '*') {
			PUT(rnd(2) ? "" : "ab");
		} else if (*p == '?') {
			PUT(rnd(2) ? "x" : "/");
		} else if (*p == '[') {
			const char *e = strchr(p + 1, ']');
			PUT(rnd(2) ? "a" : "c");
			if (e)
				p = e;
		} else {
			PUT(one);
		}
	}
	if (rnd(3) == 0)
		PUT("/child");
	buf[len] = '\0';
#undef PUT
}

Test(glob, fast_matcher_equals_regex_on_generated_pairs)
{
	size_t pairs = 0, matches = 0, patterns = 0;
	char pattern[128], path[128];
	while (pairs < 120000) {
		gen_pattern(pattern, sizeof(pattern));
		struct dsh_glob g;
		if (dsh_glob_compile(pattern, &g, NULL) < 0)
			continue; /* malformed (e.g. an unclosed class): rejected at load, never matched */
		patterns++;
		for (int k = 0; k < 40; k++) {
			if (k % 3 == 0)
				instantiate(pattern, path, sizeof(path));
			else
				gen_path(pattern, path, sizeof(path));
			bool fast = dsh_glob_match(&g, path), ref = dsh_glob_match_regex(&g, path);
			cr_assert_eq(fast, ref, "pattern '%s' (regex %s) path '%s': matcher %d, regex %d", pattern, g.regex,
				     path, fast, ref);
			matches += ref;
			pairs++;
		}
		dsh_glob_clear(&g);
	}
	fprintf(stderr, "glob: %zu generated (pattern, path) pairs over %zu patterns agree; %zu matched\n", pairs,
		patterns, matches);
	/* The generator must exercise both answers, or the comparison proves little. */
	cr_expect_gt(matches, pairs / 10);
	cr_expect_lt(matches, pairs - pairs / 10);
}

Test(glob, regex_is_anchored_and_covers_descendants)
{
	char *re = NULL;
	cr_assert_eq(dsh_glob_to_regex("/ws/**/*.pem", &re, NULL), 0);
	cr_expect_str_eq(re, "^/ws/(.*/)?[^/]*\\.pem(/.*)?$");
	free(re);
	cr_assert_eq(dsh_glob_to_regex("/a/[!b]?", &re, NULL), 0);
	cr_expect_str_eq(re, "^/a/[^/b][^/](/.*)?$");
	free(re);
}

/* fuzz_glob found "\\/" (the root, escaped) matched everything by the literal matcher and only
   the root by the regex: both must say what "/" says. */
Test(glob, the_root_escaped_is_the_root)
{
	static const char *const spellings[] = { "/", "\\/" };
	for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		struct dsh_glob g;
		cr_assert_eq(dsh_glob_compile(spellings[i], &g, NULL), 0);
		cr_expect_str_eq(g.regex, "^/.*$", "pattern '%s'", spellings[i]);
		for (const char *const *p = (const char *const[]){ "/", "/ws", "/ws/a/b", NULL }; *p; p++) {
			cr_expect(dsh_glob_match(&g, *p), "pattern '%s' on '%s'", spellings[i], *p);
			cr_expect(dsh_glob_match_regex(&g, *p), "pattern '%s' on '%s' (regex)", spellings[i], *p);
		}
		dsh_glob_clear(&g);
	}
}

Test(glob, regex_uses_only_common_syntax)
{
	/* No back-references, \d, look-around or non-greedy operators: only [ ] ( ) ? * . ^ $ and
	   escaped literals, whatever the pattern. */
	char pattern[128];
	for (int i = 0; i < 5000; i++) {
		gen_pattern(pattern, sizeof(pattern));
		char *re = NULL;
		if (dsh_glob_to_regex(pattern, &re, NULL) < 0)
			continue;
		cr_expect_null(strstr(re, "*?"), "non-greedy operator in %s", re);
		cr_expect_null(strstr(re, "(?"), "look-around in %s", re);
		for (const char *s = re; *s; s++)
			if (*s == '\\') {
				s++;
				cr_expect(strchr(".[]()*+?{}|^$\\", *s) != NULL, "escape \\%c in %s", *s, re);
			}
		free(re);
	}
}

Test(glob, malformed_patterns_are_rejected)
{
	const char *bad[] = { "/a/[abc", "/a/[]/b", "/a/[!]", "/x[z-a]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dsh_error *err = NULL;
		cr_expect_lt(dsh_glob_validate(bad[i], &err), 0, "%s", bad[i]);
		cr_expect(err && strstr(err->msg, "malformed glob"), "%s: %s", bad[i], err ? err->msg : "");
		dsh_error_free(err);
	}
}

Test(glob, long_patterns_stay_linear)
{
	/* A pattern that makes a backtracking matcher exponential answers at once here. */
	char pattern[600] = "/", path[700] = "/";
	for (int i = 0; i < 60; i++)
		strcat(pattern, "**a");
	strcat(pattern, "b");
	for (int i = 0; i < 600; i++)
		strcat(path, "a");
	struct dsh_glob g;
	cr_assert_eq(dsh_glob_compile(pattern, &g, NULL), 0);
	cr_expect_not(dsh_glob_match(&g, path));
	dsh_glob_clear(&g);
}
