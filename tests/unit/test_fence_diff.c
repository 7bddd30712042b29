/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fence's unified diff: golden outputs for small cases; for random inputs, the diff applied to
 * the old text gives the new one, and its number of changed lines is the minimum (from an LCS
 * table computed here independently).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "fence/fence.h"
#include "fence/serve.h"
#include "tests/lib/harness.h"

static char *diff(const char *a, const char *b)
{
	char *out = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_diff_unified("f", a, strlen(a), b, strlen(b), &out, &err), 0);
	return out;
}

Test(fence_diff, equal_is_empty)
{
	_cleanup_free_ char *d = diff("a\nb\n", "a\nb\n");
	cr_expect_str_eq(d, "");
}

Test(fence_diff, golden_change_in_the_middle)
{
	_cleanup_free_ char *d = diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n");
	cr_expect_str_eq(d, "--- f\n+++ f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

Test(fence_diff, golden_create_from_empty_and_to_empty)
{
	_cleanup_free_ char *d = diff("", "x\ny\n");
	cr_expect_str_eq(d, "--- f\n+++ f\n@@ -0,0 +1,2 @@\n+x\n+y\n");
	_cleanup_free_ char *e = diff("x\n", "");
	cr_expect_str_eq(e, "--- f\n+++ f\n@@ -1 +0,0 @@\n-x\n");
}

Test(fence_diff, golden_no_newline_at_end)
{
	_cleanup_free_ char *d = diff("a\nb", "a\nb\n");
	cr_expect_str_eq(d, "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
}

Test(fence_diff, golden_two_hunks)
{
	const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n";
	const char *b = "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\nfifteen\n";
	_cleanup_free_ char *d = diff(a, b);
	cr_expect_str_eq(d, "--- f\n+++ f\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n"
			    "@@ -12,4 +12,4 @@\n 12\n 13\n 14\n-15\n+fifteen\n");
}

/* ---- apply a unified diff (independent of the generator) ---- */

struct lines {
	char **v;
	size_t n;
};

static struct lines split(const char *s)
{
	struct lines l = { 0 };
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);
		l.v = realloc(l.v, (l.n + 1) * sizeof(char *));
		l.v[l.n++] = strndup(s, n);
		s += n;
	}
	return l;
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static char *apply(const char *old, const char *d)
{
	struct lines a = split(old);
	struct lines p = split(d);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	size_t ai = 0, k = 0;
	if (p.n) {
		cr_assert(strncmp(p.v[0], "--- ", 4) == 0 && strncmp(p.v[1], "+++ ", 4) == 0);
		k = 2;
	}
	char *last_added = NULL; /* the "\ No newline" marker strips the previous line's '\n' */
	while (k < p.n) {
		unsigned long s1, l1 = 1, s2, l2 = 1;
		const char *h = p.v[k];
		cr_assert(strncmp(h, "@@ -", 4) == 0, "hunk header expected: %s", h);
		char *e;
		s1 = strtoul(h + 4, &e, 10);
		if (*e == ',')
			l1 = strtoul(e + 1, &e, 10);
		cr_assert(strncmp(e, " +", 2) == 0);
		s2 = strtoul(e + 2, &e, 10);
		if (*e == ',')
			l2 = strtoul(e + 1, &e, 10);
		(void)s2;
		size_t start = l1 ? s1 - 1 : s1;
		cr_assert(start >= ai, "hunks out of order");
		while (ai < start)
			fputs(a.v[ai++], f);
		k++;
		unsigned long seen1 = 0, seen2 = 0;
		while (k < p.n && p.v[k][0] != '@') {
			const char *l = p.v[k];
			if (l[0] == '\\') {
				/* applies to the line just before it */
				k++;
				continue;
			}
			bool no_nl = k + 1 < p.n && p.v[k + 1][0] == '\\';
			char *body = strdup(l + 1);
			if (no_nl) {
				size_t bl = strlen(body);
				cr_assert(bl && body[bl - 1] == '\n');
				body[bl - 1] = '\0';
			}
			if (l[0] == ' ' || l[0] == '-') {
				cr_assert(ai < a.n, "context past the end");
				cr_assert_str_eq(a.v[ai], body, "context/deletion does not match");
				ai++;
				seen1++;
			}
			if (l[0] == ' ' || l[0] == '+') {
				fputs(body, f);
				seen2++;
			}
			free(last_added);
			last_added = body;
			k++;
		}
		cr_assert_eq(seen1, l1, "hunk old length");
		cr_assert_eq(seen2, l2, "hunk new length");
	}
	free(last_added);
	while (ai < a.n)
		fputs(a.v[ai++], f);
	fclose(f);
	lines_free(&a);
	lines_free(&p);
	return out;
}

static size_t changed_lines(const char *d)
{
	size_t n = 0;
	struct lines p = split(d);
	for (size_t k = 2; k < p.n; k++)
		if ((p.v[k][0] == '+' || p.v[k][0] == '-'))
			n++;
	lines_free(&p);
	return n;
}

static size_t min_changes(const char *x, const char *y)
{
	struct lines a = split(x), b = split(y);
	size_t *t = calloc((a.n + 1) * (b.n + 1), sizeof(size_t));
	for (size_t i = a.n; i-- > 0;)
		for (size_t j = b.n; j-- > 0;) {
			size_t *c = &t[i * (b.n + 1) + j];
			if (strcmp(a.v[i], b.v[j]) == 0)
				*c = 1 + t[(i + 1) * (b.n + 1) + j + 1];
			else {
				size_t r = t[(i + 1) * (b.n + 1) + j], d = t[i * (b.n + 1) + j + 1];
				*c = r > d ? r : d;
			}
		}
	size_t lcs = t[0];
	size_t n = a.n + b.n - 2 * lcs;
	free(t);
	lines_free(&a);
	lines_free(&b);
	return n;
}

static char *random_text(unsigned *seed, size_t max_lines)
{
	size_t n = (size_t)rand_r(seed) % (max_lines + 1);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%c\n", 'a' + rand_r(seed) % 5);
	if (n && rand_r(seed) % 4 == 0)
		fputs("tail-without-newline", f);
	fclose(f);
	return out;
}

Test(fence_diff, random_diffs_apply_and_are_minimal, .timeout = 60)
{
	unsigned seed = 20261202;
	for (int i = 0; i < 3000; i++) {
		_cleanup_free_ char *a = random_text(&seed, 30);
		_cleanup_free_ char *b = random_text(&seed, 30);
		if (i % 3 == 0) {
			/* Related texts: b is a with a few lines changed. */
			free(b);
			b = strdup(a);
			for (char *c = b; *c; c++)
				if (*c != '\n' && rand_r(&seed) % 7 == 0)
					*c = 'x';
		}
		_cleanup_free_ char *d = diff(a, b);
		_cleanup_free_ char *got = apply(a, d);
		cr_assert_str_eq(got, b, "case %d: the diff does not turn old into new\nold:\n%s\nnew:\n%s\ndiff:\n%s", i,
				 a, b, d);
		cr_assert_eq(changed_lines(d), min_changes(a, b), "case %d: not minimal\n%s", i, d);
	}
}

Test(fence_diff, large_inputs_beyond_the_minimal_bound_still_apply, .timeout = 60)
{
	/* Completely different texts of 5000 lines each: D = 10000 > the search bound. */
	char *a = NULL, *b = NULL;
	size_t al = 0, bl = 0;
	FILE *fa = open_memstream(&a, &al), *fb = open_memstream(&b, &bl);
	for (int i = 0; i < 5000; i++) {
		fprintf(fa, "old %d\n", i);
		fprintf(fb, "new %d\n", i);
	}
	fclose(fa);
	fclose(fb);
	_cleanup_free_ char *d = diff(a, b);
	_cleanup_free_ char *got = apply(a, d);
	cr_assert_str_eq(got, b);
	free(a);
	free(b);
}

/* ---- pure path and base64 helpers ---- */

static char *absolute(const char *base, const char *p)
{
	char *out = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	if (dsh_path_absolute(base, p, &out, &err) < 0)
		return NULL;
	return out;
}

Test(fence_path, lexical_normalisation)
{
	static const struct {
		const char *base, *path, *want;
	} cases[] = {
		{ "/ws", "a.txt", "/ws/a.txt" },
		{ "/ws", "/etc/passwd", "/etc/passwd" },
		{ "/ws/sub", "../x", "/ws/x" },
		{ "/ws", "../../../../etc", "/etc" },
		{ "/", "..", "/" },
		{ "/ws", "./a//b/./c/", "/ws/a/b/c" },
		{ "/ws", "a/../../b", "/b" },
		{ "/", "/", "/" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *got = absolute(cases[i].base, cases[i].path);
		cr_assert_not_null(got, "%s + %s", cases[i].base, cases[i].path);
		cr_expect_str_eq(got, cases[i].want, "%s + %s", cases[i].base, cases[i].path);
	}
	cr_expect_null(absolute("/ws", ""));
	cr_expect_null(absolute("/ws", "a\nb"));
	cr_expect_null(absolute(NULL, "rel"));
}

Test(fence_base64, round_trip_and_rejects)
{
	unsigned char bytes[256];
	for (int i = 0; i < 256; i++)
		bytes[i] = (unsigned char)(255 - i);
	for (size_t n = 0; n < 256; n += 7) {
		size_t el = 0;
		_cleanup_free_ char *enc = dsh_base64_encode(bytes, n, &el);
		cr_assert_eq(el % 4, 0);
		_cleanup_free_ unsigned char *dec = NULL;
		size_t dl = 0;
		cr_assert_eq(dsh_base64_decode(enc, el, &dec, &dl), 0);
		cr_assert_eq(dl, n);
		cr_assert_eq(memcmp(dec, bytes, n), 0);
	}
	_cleanup_free_ char *hello = dsh_base64_encode((const unsigned char *)"hello", 5, NULL);
	cr_expect_str_eq(hello, "aGVsbG8=");
	unsigned char *d = NULL;
	size_t dl;
	cr_expect_lt(dsh_base64_decode("aGVsbG8", 7, &d, &dl), 0);
	cr_expect_lt(dsh_base64_decode("a=Vs", 4, &d, &dl), 0);
	cr_expect_lt(dsh_base64_decode("aG!s", 4, &d, &dl), 0);
	cr_expect_lt(dsh_base64_decode("aG=s", 4, &d, &dl), 0);
}
