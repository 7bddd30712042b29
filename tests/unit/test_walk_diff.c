/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The glob walker against the matcher (SPEC 3.5): on generated trees whose names exercise every
 * class and bracket form (and the ones that only look like classes), the walker returns exactly
 * the outermost entries dsh_glob_match covers, for many patterns, with and without a skip set.
 * And the two questions the walker asks of the automaton are sound on generated pairs: a
 * directory above a covered path may always match below, and the literal names it offers for a
 * level always include the one the covered path takes.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "ns/walk.h"
#include "policy/glob.h"
#include "policy/rule.h"
#include "tests/lib/harness.h"

/* A small deterministic generator, so a failure names a case that reproduces. */
static unsigned long long rng_state;
static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

/* Names that the class forms of globs.tsv and their look-alikes tell apart. */
static const char *const tree_names[] = {
	"a", "b", "c", "x", "Z", "ab", "ba", "xay", "xby", "xcy", "x[a", "b]y", "a].key", ":].key", "[].key",
	"a.key", "B.key", "k.pem", "a.pem", ".pem", ".env", ".hidden", "node_modules", "[", "]", "-", "!",
	"[id]", "id", "a-b", "a b", "x[!a]y", "é", "c.txt", "[ab]", "*", "?", "\\",
};

struct entry {
	char *path;
	bool is_dir;
};

struct tree {
	char *top;  /* the scratch directory */
	char *root; /* the workspace: top itself, or a directory in it whose name holds glob syntax */
	struct entry *e;
	size_t n, cap;
	char **dirs; /* every real directory strictly below root */
};

static char *join(const char *dir, const char *name)
{
	char *p = NULL;
	cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static void make_level(const char *dir, int depth)
{
	int n = 4 + (int)rnd(6);
	for (int i = 0; i < n; i++) {
		const char *name = tree_names[rnd(ARRAY_SIZE(tree_names))];
		_cleanup_free_ char *p = join(dir, name);
		struct stat st;
		if (lstat(p, &st) == 0)
			continue;
		unsigned kind = rnd(10);
		if (depth < 4 && kind < 4) {
			cr_assert_eq(mkdir(p, 0755), 0, "mkdir %s: %m", p);
			make_level(p, depth + 1);
		} else if (kind == 9) {
			/* Never followed: one goes up (a loop if it were), one to a sibling. */
			cr_assert_eq(symlink(rnd(2) ? ".." : "a", p), 0, "symlink %s: %m", p);
		} else {
			dsh_test_write_file(p, name);
		}
	}
}

/* The fixed part: the cases of the brief, whatever the generator draws. */
static const char *const fixed_files[] = {
	"x[a/b]y", "xay", "a].key", "a.key", ":].key", "d/sub/k.pem", "d/.env", "node_modules/p/index.js",
	"[id]/page.tsx", "id/page.tsx", "a/x/b/c/y", "ab", "a/z/b",
};

static void collect(struct tree *t, const char *dir)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	cr_assert_not_null(d, "opendir %s: %m", dir);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *p = join(dir, de->d_name);
		struct stat st;
		cr_assert_eq(lstat(p, &st), 0);
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 64;
			t->e = realloc(t->e, t->cap * sizeof(*t->e));
			cr_assert_not_null(t->e);
		}
		t->e[t->n++] = (struct entry){ p, S_ISDIR(st.st_mode) };
		if (S_ISDIR(st.st_mode)) {
			cr_assert_eq(dsh_strv_push(&t->dirs, p), 0);
			collect(t, p);
		}
	}
}

static void tree_make(struct tree *t, unsigned long long seed, const char *ws_name)
{
	memset(t, 0, sizeof(*t));
	rng_state = seed;
	t->top = dsh_test_mkdtemp();
	if (ws_name) {
		/* The workspace name holds glob syntax: however a rule spelled under it reads that, the
		   walker must agree with the matcher. */
		t->root = join(t->top, ws_name);
		cr_assert_eq(mkdir(t->root, 0755), 0);
	} else {
		t->root = strdup(t->top);
	}
	for (size_t i = 0; i < ARRAY_SIZE(fixed_files); i++) {
		_cleanup_free_ char *p = join(t->root, fixed_files[i]);
		dsh_test_write_file(p, "x\n");
	}
	make_level(t->root, 0);
	collect(t, t->root);
}

static void tree_free(struct tree *t)
{
	dsh_test_rmtree(t->top);
	free(t->top);
	free(t->root);
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].path);
	free(t->e);
	dsh_strv_free(t->dirs);
}

/* The oracle: the fast matcher on every spelling (test_glob.c proves it equal to the regex). */
static bool covered(const struct dsh_rule *r, const char *path)
{
	for (size_t k = 0; k < r->n_match; k++)
		if (dsh_glob_match(&r->match[k], path))
			return true;
	return false;
}

/* Whether a proper ancestor of path, below root, is covered or in skip. */
static bool shadowed(const struct dsh_rule *r, const char *root, const char *path, const struct dsh_pathset *skip)
{
	size_t rl = strlen(root);
	_cleanup_free_ char *p = strdup(path);
	for (char *s = strrchr(p, '/'); s && (size_t)(s - p) > rl; s = strrchr(p, '/')) {
		*s = '\0';
		if (covered(r, p) || dsh_pathset_contains(skip, p))
			return true;
	}
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The walker's answer and the matcher's, as sorted path lists; asserts they agree. */
static void check_walk(const struct tree *t, const struct dsh_rule *r, const struct dsh_pathset *skip,
		       size_t *ret_matches)
{
	_cleanup_strv_ char **want = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct entry *e = &t->e[i];
		if (covered(r, e->path) && !shadowed(r, t->root, e->path, skip))
			cr_assert_eq(dsh_strv_push(&want, e->path), 0);
	}
	size_t nw = dsh_strv_len(want);
	if (nw)
		qsort(want, nw, sizeof(char *), cmp_str);

	struct dsh_walk_result res = { 0 };
	struct dsh_error *err = NULL;
	int ret = dsh_glob_walk(r, skip, NULL, 100000, &res, &err);
	cr_assert_eq(ret, 0, "%s: walk failed: %s", r->canonical, err ? err->msg : "?");
	char **got = calloc(res.n + 1, sizeof(char *));
	for (size_t i = 0; i < res.n; i++) {
		got[i] = res.m[i].path;
		struct stat st;
		cr_assert_eq(lstat(got[i], &st), 0);
		cr_assert_eq(res.m[i].is_dir, S_ISDIR(st.st_mode) != 0, "%s: is_dir of %s", r->canonical, got[i]);
		cr_assert(res.m[i].dev == st.st_dev && res.m[i].ino == st.st_ino);
	}
	if (res.n)
		qsort(got, res.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < nw || i < res.n; i++) {
		const char *a = i < nw ? want[i] : "(none)", *b = i < res.n ? got[i] : "(none)";
		cr_assert_str_eq(b, a, "pattern '%s'%s: the walker returns %s where the matcher's outermost cover is %s",
				 r->canonical, skip && skip->n ? " with a skip set" : "", b, a);
	}
	free(got);

	/* The bound: exactly as many matches pass, one fewer fails closed. */
	if (res.n) {
		struct dsh_walk_result small = { 0 };
		cr_assert_eq(dsh_glob_walk(r, skip, NULL, res.n - 1, &small, &err), -E2BIG);
		dsh_error_free(err);
		err = NULL;
		dsh_walk_result_clear(&small);
	}
	dsh_walk_result_clear(&res);
	*ret_matches = nw;
}

/* Patterns of the shapes globs.tsv names, and the bracket forms the matcher reads its own way. */
static const char *const fixed_patterns[] = {
	"[[:alpha:]].key", "x[a/b]y", "**/[[:alpha:]].key", "x[a/b]y/**", "**/x[a/b]y", "[!ab]", "[!ab]*",
	"[a-z]", "[a-z]*", "[a-c].key", "*[*", "\\[*", "*\\]*", "x\\[a/*", "\\[id\\]/*", "[[]*", "[\\]]", "**",
	"**/*", "**/*.pem", "**/.*", ".*", "*", "?", "??", "*/*", "*/**/x*", "a**b", "a**", "**/node_modules",
	"**/x/**/y", "x[!a]y", "*/b]y", "[[:alpha:]]*", "*.key", "[.]*", "[!.]*", "*/[!.]*/*", "d/*/k.pem",
	"d/**", "*/sub/*", "?/?/?", "**/[!a-z]*", "a/*/b", "[ab]", "\\[ab\\]", "*]*", "[-]", "[!-]*",
};

static const char *const pieces[] = {
	"a", "b", "x", "y", "k", ".", "*", "?", "[ab]", "[!ab]", "[a-z]", "[[:alpha:]]", "[.]", "\\[", "\\]",
	"]", "-", ".pem", ".key", "[a/b]", "**", "id", "[!.]", "é",
};

static void gen_pattern(char *buf, size_t cap)
{
	buf[0] = '\0';
	int comps = 1 + (int)rnd(4);
	for (int c = 0; c < comps; c++) {
		if (c)
			strncat(buf, "/", cap - strlen(buf) - 1);
		if (rnd(6) == 0) {
			strncat(buf, "**", cap - strlen(buf) - 1);
			continue;
		}
		int n = 1 + (int)rnd(3);
		for (int i = 0; i < n; i++)
			strncat(buf, pieces[rnd(ARRAY_SIZE(pieces))], cap - strlen(buf) - 1);
	}
}

static char *empty_env[] = { NULL };

/* 1 with the rule, 0 when the pattern is malformed or not a glob (the walker expands globs only). */
static int parse(const struct tree *t, const char *pattern, struct dsh_rule *r)
{
	_cleanup_free_ char *line = NULL;
	cr_assert(asprintf(&line, "-- %s", pattern) > 0);
	struct dsh_error *err = NULL;
	if (dsh_rule_parse(line, t->root, empty_env, 0, false, NULL, r, &err) < 0) {
		dsh_error_free(err);
		return 0;
	}
	if (!r->glob) {
		dsh_rule_clear(r);
		return 0;
	}
	return 1;
}

Test(walk_diff, walker_returns_the_matchers_outermost_cover, .timeout = 120)
{
	static const unsigned long long seeds[] = { 0x9e3779b97f4a7c15ull, 0x2545f4914f6cdd1dull, 0xd1b54a32d192ed03ull };
	size_t walks = 0, matches = 0, skipped_walks = 0, entries = 0;
	for (size_t s = 0; s < ARRAY_SIZE(seeds); s++) {
		struct tree t;
		tree_make(&t, seeds[s], s == 2 ? "w[1]*?" : NULL);
		entries += t.n;
		size_t n_dirs = dsh_strv_len(t.dirs);
		for (size_t i = 0; i < ARRAY_SIZE(fixed_patterns) + 300; i++) {
			char buf[256];
			const char *pat = buf;
			if (i < ARRAY_SIZE(fixed_patterns))
				pat = fixed_patterns[i];
			else
				gen_pattern(buf, sizeof(buf));
			struct dsh_rule r;
			if (!parse(&t, pat, &r))
				continue;
			size_t m;
			check_walk(&t, &r, NULL, &m);
			walks++;
			matches += m;
			/* Again with a directory already masked: the walker never enters it. */
			if (n_dirs) {
				struct dsh_pathset skip = { 0 };
				cr_assert_eq(dsh_pathset_add(&skip, t.dirs[rnd((unsigned)n_dirs)]), 0);
				check_walk(&t, &r, &skip, &m);
				dsh_pathset_clear(&skip);
				skipped_walks++;
			}
			dsh_rule_clear(&r);
		}
		tree_free(&t);
	}
	fprintf(stderr, "walk_diff: %zu walks (+%zu with a skip set) over 3 trees of %zu entries agree; %zu covers\n",
		    walks, skipped_walks, entries, matches);
	cr_assert_gt(walks, 500, "too few valid patterns: %zu", walks);
	cr_assert_gt(matches, 500, "too few covers for the test to mean much: %zu", matches);
}

/* The brief's two cases, named: what check and the fence deny is what the walker finds. */
Test(walk_diff, bracket_forms_are_read_as_the_matcher_reads_them)
{
	struct tree t = { 0 };
	t.root = dsh_test_mkdtemp();
	const char *files[] = { "a].key", ":].key", "a.key", "xay", "xby", "x[a/b]y" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *p = join(t.root, files[i]);
		dsh_test_write_file(p, "x\n");
	}
	struct {
		const char *pattern;
		const char *want[3];
	} cases[] = {
		/* '[[:alpha:]]' is the class of '[', ':', 'a', 'l', 'p', 'h' and then a literal ']' */
		{ "[[:alpha:]].key", { ":].key", "a].key", NULL } },
		/* a class never holds '/': 'x[a/b]y' is 'x', one of 'a' 'b', 'y' */
		{ "x[a/b]y", { "xay", "xby", NULL } },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dsh_rule r;
		cr_assert_eq(parse(&t, cases[i].pattern, &r), 1);
		struct dsh_walk_result res = { 0 };
		struct dsh_error *err = NULL;
		cr_assert_eq(dsh_glob_walk(&r, NULL, NULL, 100, &res, &err), 0);
		_cleanup_strv_ char **got = NULL;
		for (size_t k = 0; k < res.n; k++)
			cr_assert_eq(dsh_strv_push(&got, strrchr(res.m[k].path, '/') + 1), 0);
		if (res.n)
			qsort(got, res.n, sizeof(char *), cmp_str);
		size_t nw = 0;
		while (cases[i].want[nw])
			nw++;
		cr_assert_eq(res.n, nw, "%s: %zu matches", cases[i].pattern, res.n);
		for (size_t k = 0; k < nw; k++)
			cr_assert_str_eq(got[k], cases[i].want[k], "%s", cases[i].pattern);
		cr_expect_eq(res.dirs_read, 1, "%s read %zu directories", cases[i].pattern, res.dirs_read);
		dsh_walk_result_clear(&res);
		dsh_rule_clear(&r);
	}
	dsh_test_rmtree(t.root);
	free(t.root);
}

/* A level the pattern spells literally is looked up with fstatat, not read (SPEC 3.5). */
Test(walk_diff, literal_levels_are_looked_up_not_read)
{
	char *root = dsh_test_mkdtemp();
	const char *files[] = { "p/lit/k.pem", "q/lit/k.pem", "q/lit/x.txt", "r/other/k.pem", "s", "t/lit" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *p = join(root, files[i]);
		dsh_test_write_file(p, "x\n");
	}
	struct tree t = { .root = root };
	struct {
		const char *pattern;
		size_t dirs_read, matches;
	} cases[] = {
		{ "*/lit/*.pem", 3, 2 },     /* root, p/lit, q/lit: never p, q, r or t */
		{ "*/lit/k.pem", 1, 2 },     /* root only: both levels below are literal */
		{ "[pq]/lit/*.pem", 3, 2 },
		{ "**/k.pem", 8, 3 },        /* every directory */
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dsh_rule r;
		cr_assert_eq(parse(&t, cases[i].pattern, &r), 1);
		struct dsh_walk_result res = { 0 };
		struct dsh_error *err = NULL;
		cr_assert_eq(dsh_glob_walk(&r, NULL, NULL, 100, &res, &err), 0);
		cr_expect_eq(res.dirs_read, cases[i].dirs_read, "%s read %zu directories", cases[i].pattern, res.dirs_read);
		cr_expect_eq(res.n, cases[i].matches, "%s matched %zu", cases[i].pattern, res.n);
		dsh_walk_result_clear(&res);
		dsh_rule_clear(&r);
	}
	dsh_test_rmtree(root);
	free(root);
}

/* ---- the automaton's two walker questions, on generated (pattern, path) pairs, no disk ---- */

static const char *const path_names[] = { "a", "b", "x", "y", "k", "ab", "xay", "a].key", ":].key", "a.key",
					  ".pem", "k.pem", "[", "]", "-", ".", "id", "[id]", "é", "z" };

Test(walk_diff, may_match_below_and_next_names_are_sound)
{
	rng_state = 0x6a09e667f3bcc909ull;
	size_t pairs = 0, hits = 0, literal_levels = 0;
	for (int i = 0; i < 3000; i++) {
		char pat[256] = "/w/", body[200];
		gen_pattern(body, sizeof(body));
		strncat(pat, body, sizeof(pat) - strlen(pat) - 1);
		struct dsh_glob g;
		struct dsh_error *err = NULL;
		if (dsh_glob_compile(pat, &g, &err) < 0) {
			dsh_error_free(err);
			continue;
		}
		for (int j = 0; j < 40; j++) {
			/* Half the paths take the pattern's own literal pieces, so covers are common. */
			char path[512] = "/w";
			int depth = 1 + (int)rnd(5);
			for (int d = 0; d < depth; d++) {
				strcat(path, "/");
				if (rnd(2)) {
					strcat(path, path_names[rnd(ARRAY_SIZE(path_names))]);
				} else {
					const char *p = pieces[rnd(ARRAY_SIZE(pieces))];
					for (; *p; p++)
						if (!strchr("*?[]\\!/", *p))
							strncat(path, p, 1);
					strcat(path, "a");
				}
			}
			pairs++;
			if (!dsh_glob_match(&g, path))
				continue;
			hits++;
			/* Every directory above a covered path: "/", "/w", "/w/..." up to its parent. */
			for (size_t k = 1; path[k]; k++) {
				if (path[k] != '/' && k != 1)
					continue;
				char dir[512];
				size_t dl = k == 1 ? 1 : k;
				memcpy(dir, path, dl);
				dir[dl] = '\0';
				cr_assert(dsh_glob_may_match_below(&g, dir), "'%s' covers %s but may_match_below(%s) is false",
					  pat, path, dir);
				if (dsh_glob_match(&g, dir))
					break; /* the walker stops at the outermost cover */
				_cleanup_strv_ char **names = NULL;
				int r = dsh_glob_next_names(&g, dir, &names);
				cr_assert_geq(r, 0);
				if (r == 0)
					continue;
				literal_levels++;
				const char *child = path + dl + (dl == 1 ? 0 : 1);
				size_t cl = strcspn(child, "/");
				bool found = false;
				for (size_t m = 0; names && names[m]; m++)
					found = found || (strlen(names[m]) == cl && strncmp(names[m], child, cl) == 0);
				cr_assert(found, "'%s' covers %s but next_names(%s) leaves out '%.*s'", pat, path, dir,
					  (int)cl, child);
			}
		}
		dsh_glob_clear(&g);
	}
	fprintf(stderr, "walk_diff: %zu pairs, %zu covered, %zu literal levels checked\n", pairs, hits, literal_levels);
	cr_assert_gt(hits, 1000);
	cr_assert_gt(literal_levels, 1000);
}

/* A level the pattern spells literally is looked up, never listed; a dead one offers nothing. */
Test(walk_diff, next_names_lists_literal_levels)
{
	struct {
		const char *pattern, *dir;
		int ret;
		const char *names[3];
	} cases[] = {
		{ "/a/*/lit/x*", "/a/b", 1, { "lit", NULL } },
		{ "/a/*/lit/x*", "/", 1, { "a", NULL } },
		{ "/a/*/lit/x*", "/a", 0, { NULL } },
		{ "/a/*/lit/x*", "/a/b/lit", 0, { NULL } },
		{ "/a/*/lit/x*", "/b", 1, { NULL } },
		{ "/a/{x,y}/*", "/a", 1, { "{x,y}", NULL } },
		{ "/a/\\[id\\]/*", "/a", 1, { "[id]", NULL } },
		{ "/a/**/k", "/a", 0, { NULL } },
		{ "/a/x[a/b]y", "/a", 0, { NULL } },
		{ "/a/*", "/a/b", 0, { NULL } },        /* covered already: every name is */
		{ "/a/?/b", "/a/x", 1, { "b", NULL } },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dsh_glob g;
		struct dsh_error *err = NULL;
		cr_assert_eq(dsh_glob_compile(cases[i].pattern, &g, &err), 0, "%s", cases[i].pattern);
		_cleanup_strv_ char **names = NULL;
		int r = dsh_glob_next_names(&g, cases[i].dir, &names);
		cr_expect_eq(r, cases[i].ret, "%s below %s: %d", cases[i].pattern, cases[i].dir, r);
		size_t n = 0;
		while (cases[i].names[n])
			n++;
		if (r == 1) {
			cr_expect_eq(dsh_strv_len(names), n, "%s below %s", cases[i].pattern, cases[i].dir);
			for (size_t k = 0; k < n && names && names[k]; k++)
				cr_expect_str_eq(names[k], cases[i].names[k]);
		}
		dsh_glob_clear(&g);
	}
}
