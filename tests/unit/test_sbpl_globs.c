/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The regex the Seatbelt profile embeds for each rule, read back out of the generated profile and
 * compiled with POSIX regcomp(REG_EXTENDED), gives the matcher's verdict on every line of
 * ../shared/conformance/globs.tsv — in every case spelling of the path (APFS is case-insensitive,
 * so a deny rule must match them all).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/cleanup.h"
#include "policy/glob.h"
#include "seatbelt/sbpl.h"
#include "tests/lib/harness.h"
#include "tests/unit/test_backend_fixture.h"
#include "tests/unit/test_sbpl_sexpr.h"

/* The one regex filter of the profile's last form (the rule's deny). */
static char *profile_regex(const char *profile)
{
	const char *why = NULL;
	struct sx *all = sx_read_all(profile, &why);
	cr_assert_not_null(all, "profile does not read back: %s\n%s", why, profile);
	struct sx *deny = all->kids[all->n - 1];
	cr_assert(sx_is_sym(deny->kids[0], "deny"), "last form is not a deny:\n%s", profile);
	char *re = NULL;
	for (size_t i = 1; i < deny->n; i++) {
		const char *v = sx_filter(deny->kids[i], "regex", NULL);
		if (v) {
			cr_assert_null(re, "more than one regex:\n%s", profile);
			re = strdup(v);
		}
	}
	cr_assert_not_null(re, "no regex in:\n%s", profile);
	sx_free(all);
	return re;
}

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Every case spelling of path when it has at most 14 letters, else 4096 of them. */
static size_t check_spellings(const regex_t *re, const char *path, bool want, int line)
{
	size_t n = strlen(path), letters = 0, pos[64];
	for (size_t i = 0; i < n && letters < 64; i++)
		if (is_letter(path[i]))
			pos[letters++] = i;
	char *v = strdup(path);
	unsigned long long total = letters <= 14 ? 1ull << letters : 4096;
	unsigned long long x = 0x2545F4914F6CDD1Dull;
	for (unsigned long long m = 0; m < total; m++) {
		unsigned long long bits = m;
		if (letters > 14) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			bits = x;
		}
		for (size_t k = 0; k < letters; k++) {
			char c = path[pos[k]];
			bool up = k < 64 && ((bits >> (k % 64)) & 1);
			v[pos[k]] = up ? (char)(c & ~0x20) : (char)(c | 0x20);
		}
		bool got = regexec(re, v, 0, NULL, 0) == 0;
		cr_assert_eq(got, want, "globs.tsv:%d: the profile's regex says %d for %s, the matcher %d", line,
			     got, v, want);
	}
	free(v);
	return (size_t)total;
}

Test(sbpl_globs, profile_regex_agrees_with_matcher_in_every_case_spelling)
{
	struct dsh_vectors vec;
	dsh_vectors_load("globs.tsv", &vec);
	cr_assert_gt(vec.n_cases, 0);
	size_t spellings = 0;
	for (size_t i = 0; i < vec.n_cases; i++) {
		struct dsh_vector *c = &vec.cases[i];
		cr_assert_eq(c->n_fields, 3, "globs.tsv:%d: %zu fields", c->line, c->n_fields);
		const char *pattern = c->fields[0], *path = c->fields[1];
		bool want = strcmp(c->fields[2], "1") == 0;

		struct dsh_glob g;
		struct dsh_error *e = NULL;
		cr_assert_eq(dsh_glob_compile(pattern, &g, &e), 0, "globs.tsv:%d: %s", c->line, e ? e->msg : "");
		/* the matcher itself agrees with the vector */
		cr_assert_eq(dsh_glob_match(&g, path), want, "globs.tsv:%d: matcher", c->line);

		struct dsh_policy p;
		fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
		struct dsh_rule *r = fx_add(&p, DSH_RULE_DENY, "-- pattern");
		r->glob = dsh_glob_has_magic(pattern);
		r->match[0].pattern = fx_strdup(pattern);
		r->match[0].regex = fx_strdup(g.regex);
		r->match[0].literal = fx_strdup(g.literal);
		r->n_match = 1;
		char *profile = NULL;
		cr_assert_eq(dsh_sbpl_profile(&p, &profile, &e), 0, "globs.tsv:%d: %s", c->line, e ? e->msg : "");
		char *re_text = profile_regex(profile);
		regex_t re;
		cr_assert_eq(regcomp(&re, re_text, REG_EXTENDED | REG_NOSUB), 0, "globs.tsv:%d: regcomp %s", c->line,
			     re_text);
		spellings += check_spellings(&re, path, want, c->line);
		regfree(&re);
		free(re_text);
		free(profile);
		fx_clear(&p);
		dsh_glob_clear(&g);
	}
	cr_log_info("globs.tsv: %zu lines, %zu case spellings checked", vec.n_cases, spellings);
	dsh_vectors_clear(&vec);
}

/* ---- the case fold against glibc's REG_ICASE, over generated globs ---- */

static unsigned long long fz = 0x9E3779B97F4A7C15ull;
static unsigned frnd(unsigned n)
{
	fz ^= fz << 13, fz ^= fz >> 7, fz ^= fz << 17;
	return (unsigned)(fz % n);
}

/* A glob over a small alphabet, with classes whose ranges never cross a case boundary. */
static void gen_glob(char *out)
{
	static const char *const atoms[] = { "a", "B", "c", "D", "x", "/", "/", ".", "-", "_", "1",
					     "*", "**/", "?", "[ab]", "[!aB]", "[A-C]", "[b-d1]", "[!x-z]",
					     "[]a]", "[a-]", "[.]", "(", ")", "+", "|", "{", "$" };
	strcpy(out, "/w");
	size_t n = 1 + frnd(6);
	for (size_t i = 0; i < n; i++)
		strcat(out, atoms[frnd(ARRAY_SIZE(atoms))]);
}

static void gen_fuzz_path(char *out)
{
	static const char alphabet[] = "aAbBcCdDxXzZ/._-1";
	strcpy(out, "/");
	out[1] = frnd(2) ? 'w' : 'W';
	size_t n = 2 + frnd(10);
	for (size_t i = 0; i < n; i++)
		out[2 + i] = alphabet[frnd(sizeof(alphabet) - 1)];
	out[2 + n] = '\0';
}

Test(sbpl_globs, casefold_equals_icase_on_generated_globs)
{
	size_t compared = 0, matched = 0;
	for (int i = 0; i < 2000; i++) {
		char pattern[256], path[64];
		gen_glob(pattern);
		char *re_text = NULL, *folded = NULL;
		struct dsh_error *e = NULL;
		if (dsh_glob_to_regex(pattern, &re_text, &e) < 0) {
			dsh_error_free(e); /* a malformed generated glob: nothing to fold */
			continue;
		}
		cr_assert_eq(dsh_sbpl_casefold_regex(re_text, &folded, &e), 0, "%s: %s", re_text, e ? e->msg : "");
		regex_t icase, fold;
		cr_assert_eq(regcomp(&icase, re_text, REG_EXTENDED | REG_NOSUB | REG_ICASE), 0, "%s", re_text);
		cr_assert_eq(regcomp(&fold, folded, REG_EXTENDED | REG_NOSUB), 0, "%s", folded);
		for (int k = 0; k < 50; k++) {
			gen_fuzz_path(path);
			bool a = regexec(&icase, path, 0, NULL, 0) == 0, b = regexec(&fold, path, 0, NULL, 0) == 0;
			cr_assert_eq(a, b, "glob %s path %s: REG_ICASE %d, folded %d (%s -> %s)", pattern, path, a, b,
				     re_text, folded);
			compared++;
			matched += a;
		}
		regfree(&icase);
		regfree(&fold);
		free(re_text);
		free(folded);
	}
	cr_log_info("casefold: %zu (glob, path) pairs agree with REG_ICASE; %zu matched", compared, matched);
	cr_expect_gt(matched, 100, "the generated paths must match sometimes for the test to mean anything");
}
