/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "policy/glob.h"
#include "policy/glob_regex.h"
#include "policy/path.h"

/*
 * A glob is parsed once into tokens.  The same tokens produce the POSIX ERE (for Seatbelt and as
 * the reference) and the fast matcher: a Thompson NFA simulated with a bitset, linear in the
 * path's length whatever the pattern, so no user pattern can make a verdict slow.
 */

enum tok_type {
	T_CHAR,     /* one literal byte */
	T_ANY,      /* ?: one byte but '/' */
	T_CLASS,    /* [..]: one byte of the set ('/' never in it) */
	T_STAR,     /* *: any run of bytes without '/' */
	T_DSTAR,    /* ** not followed by '/': any run of bytes */
	T_DSS_OPT,  /* **: zero levels, or enter the loop below */
	T_DSS_LOOP, /* ...any bytes, leaving through a '/' */
};

struct tok {
	enum tok_type type;
	unsigned char c;
	uint64_t set[4]; /* T_CLASS: a 256-bit map */
};

#define NONE SIZE_MAX
#define MAX_STATES 4224 /* PATH_MAX tokens and a little */
#define SET_WORDS ((MAX_STATES + 63) / 64)

struct dsh_glob_prog {
	struct tok *toks;
	size_t n;
	char *prefix;          /* the leading literal bytes every match starts with */
	size_t prefix_len;
	char *needle;          /* the longest literal run after the prefix: must occur in a match */
	size_t needle_len;
};

static bool set_has(const uint64_t *s, unsigned char c)
{
	return (s[c >> 6] >> (c & 63)) & 1;
}

static void set_add(uint64_t *s, unsigned char c)
{
	s[c >> 6] |= (uint64_t)1 << (c & 63);
}

static bool is_magic(char c)
{
	return c == '*' || c == '?' || c == '[';
}

bool dsh_glob_has_magic(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\') {
			if (!*++s)
				break;
			continue;
		}
		if (is_magic(*s))
			return true;
	}
	return false;
}

/* Parse "[...]" starting at p (pointing at '['); on success *end points past ']'. */
static int parse_class(const char *p, struct tok *t, const char **end, struct dsh_error **err)
{
	const char *start = p++;
	bool neg = false;
	uint64_t set[4] = { 0 };
	size_t items = 0;

	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	while (*p && *p != ']') {
		unsigned char lo = (unsigned char)*p++;
		if (lo == '\\') {
			if (!*p)
				break;
			lo = (unsigned char)*p++;
		}
		unsigned char hi = lo;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			p++;
			hi = (unsigned char)*p++;
			if (hi == '\\') {
				if (!*p)
					break;
				hi = (unsigned char)*p++;
			}
			if (hi < lo)
				return dsh_err(err, DSH_ERR_POLICY, EINVAL, "malformed glob: range '%c-%c' is reversed in '%s'",
					       lo, hi, start);
		}
		for (unsigned c = lo; c <= hi; c++)
			set_add(set, (unsigned char)c);
		items++;
	}
	if (*p != ']')
		return dsh_err(err, DSH_ERR_POLICY, EINVAL, "malformed glob: unclosed '[' in '%s'", start);
	if (items == 0)
		return dsh_err(err, DSH_ERR_POLICY, EINVAL, "malformed glob: empty class '[]'");
	if (neg)
		for (int i = 0; i < 4; i++)
			set[i] = ~set[i];
	set[0] &= ~((uint64_t)1 << '/');
	set[0] &= ~(uint64_t)1; /* never NUL */
	/* "[/]" is as empty as "[]": no regex bracket expression can say it. */
	if (!(set[0] | set[1] | set[2] | set[3]))
		return dsh_err(err, DSH_ERR_POLICY, EINVAL, "malformed glob: empty class '%.*s' (a class never matches '/')",
			       (int)(p + 1 - start), start);
	t->type = T_CLASS;
	memcpy(t->set, set, sizeof(set));
	*end = p + 1;
	return 0;
}

static int tokenize(const char *pattern, struct tok **ret, size_t *ret_n, struct dsh_error **err)
{
	size_t len = strlen(pattern);
	_cleanup_free_ struct tok *toks = calloc(len + 2, sizeof(*toks));
	size_t n = 0;
	if (!toks)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");

	for (const char *p = pattern; *p;) {
		struct tok *t = &toks[n];
		if (*p == '\\') {
			p++;
			t->type = T_CHAR;
			t->c = *p ? (unsigned char)*p++ : '\\';
			n++;
		} else if (*p == '*') {
			size_t stars = 0;
			while (*p == '*')
				p++, stars++;
			if (stars == 1) {
				t->type = T_STAR;
				n++;
			} else if (*p == '/') {
				p++;
				t->type = T_DSS_OPT;
				toks[n + 1].type = T_DSS_LOOP;
				n += 2;
			} else {
				t->type = T_DSTAR;
				n++;
			}
		} else if (*p == '?') {
			t->type = T_ANY;
			p++;
			n++;
		} else if (*p == '[') {
			int r = parse_class(p, t, &p, err);
			if (r < 0)
				return r;
			n++;
		} else {
			t->type = T_CHAR;
			t->c = (unsigned char)*p++;
			n++;
		}
		if (n + 2 > MAX_STATES)
			return dsh_err(err, DSH_ERR_POLICY, ENAMETOOLONG, "glob is too long");
	}
	*ret = TAKE_PTR(toks);
	*ret_n = n;
	return 0;
}

int dsh_glob_validate(const char *pattern, struct dsh_error **err)
{
	_cleanup_free_ struct tok *toks = NULL;
	size_t n;
	return tokenize(pattern, &toks, &n, err);
}

static void regex_char(struct dsh_buf *b, unsigned char c)
{
	if (strchr(".[]()*+?{}|^$\\", c) && c)
		dsh_buf_addc(b, '\\');
	dsh_buf_addc(b, (char)c);
}

/* A bracket expression listing the bytes of set: ']' first, '-' last, '^' never first. */
static void regex_set(struct dsh_buf *b, const uint64_t *set, bool negate)
{
	bool has_close = set_has(set, ']'), has_dash = set_has(set, '-'), has_caret = set_has(set, '^');
	dsh_buf_addc(b, '[');
	if (negate)
		dsh_buf_addc(b, '^');
	if (has_close)
		dsh_buf_addc(b, ']');
	for (unsigned c = 1; c < 256; c++) {
		if (!set_has(set, (unsigned char)c) || c == ']' || c == '-' || c == '^')
			continue;
		unsigned end = c;
		while (end + 1 < 256 && set_has(set, (unsigned char)(end + 1)) && end + 1 != ']' &&
		       end + 1 != '-' && end + 1 != '^')
			end++;
		if (end - c >= 2) {
			dsh_buf_addc(b, (char)c);
			dsh_buf_addc(b, '-');
			dsh_buf_addc(b, (char)end);
			c = end;
		} else {
			dsh_buf_addc(b, (char)c);
		}
	}
	if (has_caret)
		dsh_buf_addc(b, '^');
	if (has_dash)
		dsh_buf_addc(b, '-');
	dsh_buf_addc(b, ']');
}

static void regex_class(struct dsh_buf *b, const uint64_t *set)
{
	size_t count = 0;
	unsigned only = 0;
	for (unsigned c = 1; c < 256; c++)
		if (set_has(set, (unsigned char)c))
			count++, only = c;
	if (count == 1) {
		regex_char(b, (unsigned char)only);
		return;
	}
	/* A set holding most bytes is written as its complement: short, and free of high bytes. */
	if (count > 128) {
		uint64_t comp[4];
		for (int i = 0; i < 4; i++)
			comp[i] = ~set[i];
		comp[0] &= ~(uint64_t)1;
		regex_set(b, comp, true);
		return;
	}
	regex_set(b, set, false);
}

static char *tokens_to_regex(const struct tok *toks, size_t n)
{
	struct dsh_buf b = { 0 };
	dsh_buf_addc(&b, '^');
	for (size_t i = 0; i < n; i++) {
		switch (toks[i].type) {
		case T_CHAR:
			regex_char(&b, toks[i].c);
			break;
		case T_ANY:
			dsh_buf_add(&b, "[^/]");
			break;
		case T_CLASS:
			regex_class(&b, toks[i].set);
			break;
		case T_STAR:
			dsh_buf_add(&b, "[^/]*");
			break;
		case T_DSTAR:
			dsh_buf_add(&b, ".*");
			break;
		case T_DSS_OPT:
			dsh_buf_add(&b, "(.*/)?");
			break;
		case T_DSS_LOOP:
			break;
		}
	}
	/* Every match covers its descendants (SPEC 1.4). */
	dsh_buf_add(&b, "(/.*)?$");
	return dsh_buf_steal(&b);
}

/* The root holds everything below it, however it is spelled ("/" or "\\/"): the literal
   matcher says so too, and "^/(/.*)?$" would cover only the root itself. */
static char *glob_regex(const struct tok *toks, size_t n)
{
	if (n == 1 && toks[0].type == T_CHAR && toks[0].c == '/')
		return strdup("^/.*$");
	return tokens_to_regex(toks, n);
}

int dsh_glob_to_regex(const char *pattern, char **ret, struct dsh_error **err)
{
	_cleanup_free_ struct tok *toks = NULL;
	size_t n;
	int r = tokenize(pattern, &toks, &n, err);
	if (r < 0)
		return r;
	*ret = glob_regex(toks, n);
	if (!*ret)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	return 0;
}

char *dsh_glob_unescape(const char *s)
{
	/* Most names hold nothing to undo: one copy, not a byte at a time (200,000 rules load). */
	if (!strchr(s, '\\'))
		return strdup(s);
	struct dsh_buf b = { 0 };
	for (; *s; s++) {
		if (*s == '\\' && s[1])
			s++;
		dsh_buf_addc(&b, *s);
	}
	return dsh_buf_steal(&b);
}

char *dsh_glob_escape(const char *s)
{
	if (!s[strcspn(s, "*?[\\]")])
		return strdup(s);
	struct dsh_buf b = { 0 };
	for (; *s; s++) {
		if (is_magic(*s) || *s == '\\' || *s == ']')
			dsh_buf_addc(&b, '\\');
		dsh_buf_addc(&b, *s);
	}
	return dsh_buf_steal(&b);
}

static void prog_free(struct dsh_glob_prog *p)
{
	if (!p)
		return;
	free(p->toks);
	free(p->prefix);
	free(p->needle);
	free(p);
}

static int prog_build(struct tok *toks, size_t n, struct dsh_glob_prog **ret)
{
	struct dsh_glob_prog *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->toks = toks;
	p->n = n;
	p->prefix = malloc(n + 1);
	p->needle = malloc(n + 1);
	if (!p->prefix || !p->needle) {
		prog_free(p);
		return -ENOMEM;
	}
	size_t i = 0;
	while (i < n && toks[i].type == T_CHAR)
		p->prefix[p->prefix_len++] = (char)toks[i++].c;
	p->prefix[p->prefix_len] = '\0';
	/* Every literal byte of the pattern is part of the matched path, so its longest literal run
	   must occur there: a cheap test that rejects most paths before the automaton runs. */
	size_t best = 0, best_at = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && toks[j].type == T_CHAR)
			j++;
		if (j - i > best)
			best = j - i, best_at = i;
		i = j + 1;
	}
	for (size_t k = 0; k < best; k++)
		p->needle[k] = (char)toks[best_at + k].c;
	p->needle_len = best;
	p->needle[best] = '\0';
	*ret = p;
	return 0;
}

/* Add the epsilon moves.  They only go forward, so one ascending pass closes the set: a state
   added ahead of the scan is visited when the scan reaches it. */
static void closure(const struct tok *toks, size_t n, uint64_t *set, size_t words)
{
	for (size_t w = 0; w < words; w++) {
		uint64_t done = 0, bits;
		while ((bits = set[w] & ~done)) {
			unsigned b = (unsigned)__builtin_ctzll(bits);
			done |= (uint64_t)1 << b;
			size_t i = w * 64 + b, to;
			if (i >= n)
				continue;
			if (toks[i].type == T_STAR || toks[i].type == T_DSTAR)
				to = i + 1;
			else if (toks[i].type == T_DSS_OPT)
				to = i + 2;
			else
				continue;
			set[to / 64] |= (uint64_t)1 << (to % 64);
		}
	}
}

static bool has(const uint64_t *set, size_t i)
{
	return (set[i / 64] >> (i % 64)) & 1;
}

/* One byte through the automaton: the states of cur that accept c lead to next (cleared here,
   closed).  Returns whether any state survives. */
static inline bool step(const struct tok *toks, size_t n, size_t words, const uint64_t *cur, uint64_t *next,
			unsigned char c)
{
	bool any = false;
	memset(next, 0, words * sizeof(uint64_t));
	for (size_t w = 0; w < words; w++) {
		uint64_t bits = cur[w];
		while (bits) {
			unsigned b = (unsigned)__builtin_ctzll(bits);
			bits &= bits - 1;
			size_t i = w * 64 + b, to = NONE, to2 = NONE;
			if (i >= n)
				continue;
			switch (toks[i].type) {
			case T_CHAR:
				if (c == toks[i].c)
					to = i + 1;
				break;
			case T_ANY:
				if (c != '/')
					to = i + 1;
				break;
			case T_CLASS:
				if (set_has(toks[i].set, c))
					to = i + 1;
				break;
			case T_STAR:
				if (c != '/')
					to = i;
				break;
			case T_DSTAR:
				to = i;
				break;
			case T_DSS_OPT:
				to = i + 1;
				if (c == '/')
					to2 = i + 2;
				break;
			case T_DSS_LOOP:
				to = i;
				if (c == '/')
					to2 = i + 1;
				break;
			}
			if (to != NONE) {
				next[to / 64] |= (uint64_t)1 << (to % 64);
				any = true;
			}
			if (to2 != NONE) {
				next[to2 / 64] |= (uint64_t)1 << (to2 % 64);
				any = true;
			}
		}
	}
	if (any)
		closure(toks, n, next, words);
	return any;
}

static bool prog_match(const struct dsh_glob_prog *p, const char *path)
{
	if (strncmp(path, p->prefix, p->prefix_len) != 0)
		return false;
	const char *rest = path + p->prefix_len;
	if (p->needle_len && !strstr(rest, p->needle))
		return false;

	const struct tok *toks = p->toks;
	size_t n = p->n, words = n / 64 + 1;
	uint64_t cur[SET_WORDS], next[SET_WORDS];
	memset(cur, 0, words * sizeof(uint64_t));
	cur[p->prefix_len / 64] |= (uint64_t)1 << (p->prefix_len % 64);
	closure(toks, n, cur, words);
	if (has(cur, n) && (*rest == '\0' || *rest == '/'))
		return true;
	for (const char *s = rest; *s; s++) {
		if (!step(toks, n, words, cur, next, (unsigned char)*s))
			return false;
		if (has(next, n) && (s[1] == '\0' || s[1] == '/'))
			return true;
		memcpy(cur, next, words * sizeof(uint64_t));
	}
	return false;
}

/*
 * The states alive after "dir/" (after "/" for the root), for the walker's questions.  Returns
 * whether any is.  The literal prefix is skipped when dir+'/' holds it whole; otherwise the run
 * starts at state 0, which spells the prefix byte by byte, so a dir above the prefix stays alive.
 */
static bool prog_below(const struct dsh_glob_prog *p, const char *dir, uint64_t *cur)
{
	const struct tok *toks = p->toks;
	size_t n = p->n, words = n / 64 + 1, len = strlen(dir);
	uint64_t next[SET_WORDS];
	size_t total = len + (len > 0 && dir[len - 1] == '/' ? 0 : 1); /* the bytes fed: dir, then '/' */
	size_t from = 0;
	if (p->prefix_len <= len ? strncmp(dir, p->prefix, p->prefix_len) == 0
				 : p->prefix_len == total && strncmp(dir, p->prefix, len) == 0 && p->prefix[len] == '/')
		from = p->prefix_len;
	memset(cur, 0, words * sizeof(uint64_t));
	cur[from / 64] |= (uint64_t)1 << (from % 64);
	closure(toks, n, cur, words);
	for (size_t k = from; k < total; k++) {
		if (!step(toks, n, words, cur, next, k < len ? (unsigned char)dir[k] : '/'))
			return false;
		memcpy(cur, next, words * sizeof(uint64_t));
	}
	return true;
}

bool dsh_glob_may_match_below(const struct dsh_glob *g, const char *dir)
{
	if (g->literal) {
		/* Covered already, or the literal lies below. */
		return dsh_glob_match(g, dir) || dsh_path_is_beneath(g->literal, dir);
	}
	if (!g->prog)
		return false;
	if (dsh_glob_match(g, dir))
		return true;
	uint64_t cur[SET_WORDS];
	return prog_below(g->prog, dir, cur);
}

bool dsh_glob_below_within(const struct dsh_glob *g, const char *name, const char *target)
{
	if (dsh_glob_match(g, target))
		return true; /* target is covered, and with it everything below */
	if (dsh_glob_match(g, name))
		return false;
	if (g->literal)
		return !dsh_path_is_beneath(g->literal, name); /* a literal below name is nowhere below target */
	if (!g->prog)
		return true;
	uint64_t below_name[SET_WORDS], below_target[SET_WORDS];
	if (!prog_below(g->prog, name, below_name))
		return true; /* nothing below name can match */
	if (!prog_below(g->prog, target, below_target))
		return false;
	/* The automaton is the same: from a superset of states, every rest that matches after name
	   matches after target too.  A state inside a double star and its slash (its loop) matches no
	   more than the same double star not yet entered (its option), which moves on every byte as the
	   loop does and may also skip it: a link deeper in one than its target is no way around it. */
	const struct tok *toks = g->prog->toks;
	for (size_t i = 0; i <= g->prog->n; i++) {
		if (!has(below_name, i) || has(below_target, i))
			continue;
		if (!(i > 0 && i < g->prog->n && toks[i].type == T_DSS_LOOP && toks[i - 1].type == T_DSS_OPT &&
		      has(below_target, i - 1)))
			return false;
	}
	return true;
}

/* Add name (len bytes) to *names unless it is there. */
static int names_add(char ***names, const char *name, size_t len)
{
	for (size_t i = 0; *names && (*names)[i]; i++)
		if (strlen((*names)[i]) == len && memcmp((*names)[i], name, len) == 0)
			return 0;
	char *copy = strndup(name, len);
	if (!copy)
		return -ENOMEM;
	return dsh_strv_push_take(names, copy);
}

int dsh_glob_next_names(const struct dsh_glob *g, const char *dir, char ***names)
{
	if (g->literal) {
		if (dsh_glob_match(g, dir))
			return 0; /* dir is covered whole: every name is */
		if (!dsh_path_is_beneath(g->literal, dir))
			return 1;
		size_t dl = strlen(dir);
		const char *name = g->literal + (dl == 1 ? 1 : dl + 1);
		const char *end = strchr(name, '/');
		size_t len = end ? (size_t)(end - name) : strlen(name);
		return len ? (names_add(names, name, len) < 0 ? -ENOMEM : 1) : 1;
	}
	if (!g->prog)
		return 1;
	if (prog_match(g->prog, dir))
		return 0; /* as for a literal: dir is covered whole */
	const struct dsh_glob_prog *p = g->prog;
	uint64_t cur[SET_WORDS];
	if (!prog_below(p, dir, cur))
		return 1;
	/* Each live state must spell a literal run up to the next '/' or the pattern's end: then the
	   entry's name is that run exactly.  Any wildcard there means only a listing can tell. */
	char name[MAX_STATES];
	for (size_t i = 0; i < p->n; i++) {
		if (!has(cur, i))
			continue;
		size_t len = 0, j = i;
		for (; j < p->n && p->toks[j].type == T_CHAR && p->toks[j].c != '/'; j++)
			name[len++] = (char)p->toks[j].c;
		if (j < p->n && p->toks[j].type != T_CHAR)
			return 0;
		/* An empty run would name "dir//": no entry has an empty name. */
		if (len && names_add(names, name, len) < 0)
			return -ENOMEM;
	}
	return 1;
}

int dsh_glob_compile(const char *pattern, struct dsh_glob *g, struct dsh_error **err)
{
	memset(g, 0, sizeof(*g));
	struct tok *toks = NULL;
	size_t n;
	int r = tokenize(pattern, &toks, &n, err);
	if (r < 0)
		return r;
	g->pattern = strdup(pattern);
	g->regex = glob_regex(toks, n);
	if (!g->pattern || !g->regex) {
		free(toks);
		dsh_glob_clear(g);
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	if (!dsh_glob_has_magic(pattern)) {
		free(toks);
		/* Without escapes the literal is the pattern itself: one string, not two. */
		g->literal = strchr(pattern, '\\') ? dsh_glob_unescape(pattern) : g->pattern;
		g->literal_len = g->literal ? strlen(g->literal) : 0;
		if (!g->literal) {
			dsh_glob_clear(g);
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		}
		return 0;
	}
	if (prog_build(toks, n, &g->prog) < 0) {
		free(toks);
		dsh_glob_clear(g);
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	return 0;
}

size_t dsh_glob_prefix_dir_len(const struct dsh_glob *g)
{
	if (!g->prog)
		return 0;
	const struct dsh_glob_prog *p = g->prog;
	size_t n = p->prefix_len;
	while (n > 0 && p->prefix[n - 1] != '/')
		n--;
	/* The literal bytes up to the prefix's last '/', without it: "/a/b/" and "/a/b/x" give "/a/b". */
	return n > 1 ? n - 1 : 0;
}

const char *dsh_glob_prefix(const struct dsh_glob *g)
{
	return g->prog ? g->prog->prefix : NULL;
}

bool dsh_glob_match(const struct dsh_glob *g, const char *path)
{
	if (g->literal) {
		size_t n = g->literal_len;
		if (n == 1 && g->literal[0] == '/') /* "/" holds everything below it */
			return path[0] == '/';
		return strncmp(path, g->literal, n) == 0 && (path[n] == '\0' || path[n] == '/');
	}
	return g->prog && prog_match(g->prog, path);
}

void dsh_glob_release_matchers(struct dsh_glob *g)
{
	prog_free(g->prog);
	g->prog = NULL;
	dsh_glob_regex_release(g);
}

void dsh_glob_clear(struct dsh_glob *g)
{
	if (g->literal != g->pattern)
		free(g->literal);
	free(g->pattern);
	free(g->regex);
	dsh_glob_release_matchers(g);
	memset(g, 0, sizeof(*g));
}
