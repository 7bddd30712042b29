/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef DSH_TESTS_SBPL_SEXPR_H
#define DSH_TESTS_SBPL_SEXPR_H

/*
 * A tiny, strict s-expression reader for generated SBPL profiles: lists, symbols, strings "…"
 * (only \\ and \" escapes are accepted, no raw control characters), regex literals #"…" and
 * ';' comments.  A #"…" literal is read twice — as a fully raw literal ending at the first '"',
 * and with each '\' pairing with the next byte — and the two readings must agree, so that a
 * profile means the same whichever way the real reader treats it.
 */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum sx_type { SX_LIST, SX_SYM, SX_STR, SX_RX };

struct sx {
	enum sx_type type;
	char *s;           /* symbol, string or regex text */
	struct sx **kids;  /* list items */
	size_t n;
};

static inline void sx_free(struct sx *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++)
		sx_free(x->kids[i]);
	free(x->kids);
	free(x->s);
	free(x);
}

static inline struct sx *sx_new(enum sx_type t)
{
	struct sx *x = calloc(1, sizeof(*x));
	x->type = t;
	return x;
}

static inline void sx_push(struct sx *l, struct sx *k)
{
	l->kids = realloc(l->kids, (l->n + 1) * sizeof(*l->kids));
	l->kids[l->n++] = k;
}

static inline void sx_skip(const char **pp)
{
	const char *p = *pp;
	for (;;) {
		while (*p == ' ' || *p == '\n' || *p == '\t')
			p++;
		if (*p != ';')
			break;
		while (*p && *p != '\n') {
			/* the generator writes comments in printable ASCII only */
			if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
				break;
			p++;
		}
		if (*p && *p != '\n')
			break; /* left for sx_read to refuse */
	}
	*pp = p;
}

/* One datum at *pp; NULL with *why set on a syntax error. */
static inline struct sx *sx_read(const char **pp, const char **why)
{
	sx_skip(pp);
	const char *p = *pp;
	if (*p == '(') {
		struct sx *l = sx_new(SX_LIST);
		p++;
		for (;;) {
			sx_skip(&p);
			if (*p == ')') {
				p++;
				break;
			}
			if (!*p) {
				*why = "unclosed list";
				sx_free(l);
				return NULL;
			}
			struct sx *k = sx_read(&p, why);
			if (!k) {
				sx_free(l);
				return NULL;
			}
			sx_push(l, k);
		}
		*pp = p;
		return l;
	}
	if (*p == '"') {
		size_t cap = strlen(p) + 1, n = 0;
		char *s = malloc(cap);
		for (p++;; p++) {
			if (!*p) {
				*why = "unclosed string";
				free(s);
				return NULL;
			}
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				*why = "control character in string";
				free(s);
				return NULL;
			}
			if (*p == '"')
				break;
			if (*p == '\\') {
				p++;
				if (*p != '\\' && *p != '"') {
					*why = "unknown escape in string";
					free(s);
					return NULL;
				}
			}
			s[n++] = *p;
		}
		s[n] = '\0';
		*pp = p + 1;
		struct sx *x = sx_new(SX_STR);
		x->s = s;
		return x;
	}
	if (p[0] == '#' && p[1] == '"') {
		p += 2;
		const char *raw_end = strchr(p, '"');
		const char *q = p;
		while (*q && *q != '"')
			q += (*q == '\\' && q[1]) ? 2 : 1;
		if (!raw_end || !*q || raw_end != q) {
			*why = "regex literal reads differently raw and with escape pairs";
			return NULL;
		}
		for (const char *c = p; c < q; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f) {
				*why = "control character in regex";
				return NULL;
			}
		struct sx *x = sx_new(SX_RX);
		x->s = strndup(p, (size_t)(q - p));
		*pp = q + 1;
		return x;
	}
	if (!*p || *p == ')') {
		*why = *p ? "unexpected ')'" : "unexpected end";
		return NULL;
	}
	const char *start = p;
	while (*p && !strchr(" \n\t()\";", *p))
		p++;
	if (*p == '"') {
		*why = "quote inside a symbol";
		return NULL;
	}
	struct sx *x = sx_new(SX_SYM);
	x->s = strndup(start, (size_t)(p - start));
	*pp = p;
	return x;
}

/* Every top-level form of a profile, as one list; NULL on a syntax error. */
static inline struct sx *sx_read_all(const char *text, const char **why)
{
	struct sx *all = sx_new(SX_LIST);
	const char *p = text;
	for (;;) {
		sx_skip(&p);
		if (!*p)
			return all;
		if (*p != '(') {
			*why = "top-level datum is not a list";
			sx_free(all);
			return NULL;
		}
		struct sx *f = sx_read(&p, why);
		if (!f) {
			sx_free(all);
			return NULL;
		}
		sx_push(all, f);
	}
}

static inline bool sx_is_sym(const struct sx *x, const char *s)
{
	return x && x->type == SX_SYM && strcmp(x->s, s) == 0;
}

/* A filter (NAME VALUE): its value's text when it has that shape, else NULL. */
static inline const char *sx_filter(const struct sx *x, const char *name, bool *is_regex_literal)
{
	if (!x || x->type != SX_LIST || x->n != 2 || !sx_is_sym(x->kids[0], name))
		return NULL;
	if (x->kids[1]->type != SX_STR && x->kids[1]->type != SX_RX)
		return NULL;
	if (is_regex_literal)
		*is_regex_literal = x->kids[1]->type == SX_RX;
	return x->kids[1]->s;
}

#endif
