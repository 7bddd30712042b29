/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/glob.h"
#include "seatbelt/sbpl.h"

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static int check_text(const char *what, const char *s, struct dsh_error **err)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (is_control(*p))
			return dsh_err(err, DSH_ERR_POLICY, EINVAL,
				       "seatbelt: %s holds control character 0x%02x at byte %zu", what, *p,
				       (size_t)(p - (const unsigned char *)s));
	return 0;
}

int dsh_sbpl_add_string(struct dsh_buf *b, const char *s, struct dsh_error **err)
{
	int r = check_text("path", s, err);
	if (r < 0)
		return r;
	dsh_buf_addc(b, '"');
	for (const char *p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			dsh_buf_addc(b, '\\');
		dsh_buf_addc(b, *p);
	}
	dsh_buf_addc(b, '"');
	return 0;
}

int dsh_sbpl_add_regex(struct dsh_buf *b, const char *re, struct dsh_error **err)
{
	int r = check_text("regex", re, err);
	if (r < 0)
		return r;
	size_t n = strlen(re);
	dsh_buf_add(b, "(regex ");
	if (!strchr(re, '"') && (n == 0 || re[n - 1] != '\\')) {
		dsh_buf_add(b, "#\"");
		dsh_buf_add(b, re);
		dsh_buf_addc(b, '"');
	} else {
		r = dsh_sbpl_add_string(b, re, err);
		if (r < 0)
			return r;
	}
	dsh_buf_addc(b, ')');
	return 0;
}

/* ---- case folding ---- */

static bool is_lower(unsigned c)
{
	return c >= 'a' && c <= 'z';
}
static bool is_upper(unsigned c)
{
	return c >= 'A' && c <= 'Z';
}
static unsigned other_case(unsigned c)
{
	return is_lower(c) ? c - 32 : is_upper(c) ? c + 32 : c;
}

/*
 * The simple case partner of a code point from the two-byte UTF-8 range, or 0.  APFS folds far more
 * than this (and normalisation too); describe() reports rules with non-ASCII bytes as partial.
 */
static unsigned unicode_partner(unsigned cp)
{
	if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7)
		return cp + 0x20;
	if (cp >= 0xE0 && cp <= 0xFE && cp != 0xF7)
		return cp - 0x20;
	if ((cp >= 0x100 && cp <= 0x12F) || (cp >= 0x132 && cp <= 0x137) || (cp >= 0x14A && cp <= 0x177))
		return cp ^ 1;
	if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E))
		return (cp & 1) ? cp + 1 : cp - 1;
	if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2)
		return cp + 0x20;
	if (cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2)
		return cp - 0x20;
	if (cp >= 0x410 && cp <= 0x42F)
		return cp + 0x20;
	if (cp >= 0x430 && cp <= 0x44F)
		return cp - 0x20;
	if (cp >= 0x400 && cp <= 0x40F)
		return cp + 0x50;
	if (cp >= 0x450 && cp <= 0x45F)
		return cp - 0x50;
	return 0;
}

static void add_utf8_2(struct dsh_buf *b, unsigned cp)
{
	dsh_buf_addc(b, (char)(0xC0 | (cp >> 6)));
	dsh_buf_addc(b, (char)(0x80 | (cp & 0x3F)));
}

struct byteset {
	uint64_t w[4];
};
static bool set_has(const struct byteset *s, unsigned c)
{
	return (s->w[c >> 6] >> (c & 63)) & 1;
}
static void set_add(struct byteset *s, unsigned c)
{
	s->w[c >> 6] |= (uint64_t)1 << (c & 63);
}

/* Parse the bracket expression at *pp (pointing at '['); leaves *pp after the closing ']'. */
static int parse_bracket(const char **pp, struct byteset *set, bool *negate, struct dsh_error **err)
{
	const unsigned char *p = (const unsigned char *)*pp + 1;
	memset(set, 0, sizeof(*set));
	*negate = false;
	if (*p == '^') {
		*negate = true;
		p++;
	}
	bool first = true;
	for (;; first = false) {
		unsigned c = *p;
		if (c == '\0')
			return dsh_err(err, DSH_ERR_POLICY, EINVAL, "seatbelt: unclosed bracket in regex");
		if (c == ']' && !first)
			break;
		if (c == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '='))
			return dsh_err(err, DSH_ERR_POLICY, EINVAL,
				       "seatbelt: character classes and collating elements are not supported in a regex");
		if (p[1] == '-' && p[2] && p[2] != ']') {
			unsigned end = p[2];
			if (end < c)
				return dsh_err(err, DSH_ERR_POLICY, EINVAL, "seatbelt: reversed range in regex");
			for (unsigned x = c; x <= end; x++)
				set_add(set, x);
			p += 3;
			continue;
		}
		set_add(set, c);
		p++;
	}
	*pp = (const char *)p + 1;
	return 0;
}

/* Write a set back in the one canonical spelling: ']' first, '^' never first, '-' last. */
static void emit_bracket(struct dsh_buf *b, const struct byteset *set, bool negate)
{
	dsh_buf_addc(b, '[');
	if (negate)
		dsh_buf_addc(b, '^');
	if (set_has(set, ']'))
		dsh_buf_addc(b, ']');
	for (unsigned c = 1; c < 256; c++) {
		if (!set_has(set, c) || c == ']' || c == '-' || c == '^')
			continue;
		unsigned end = c;
		while (end + 1 < 256 && set_has(set, end + 1) && end + 1 != ']' && end + 1 != '-' && end + 1 != '^')
			end++;
		dsh_buf_addc(b, (char)c);
		if (end - c >= 2) {
			dsh_buf_addc(b, '-');
			dsh_buf_addc(b, (char)end);
			c = end;
		}
	}
	if (set_has(set, '^'))
		dsh_buf_addc(b, '^');
	if (set_has(set, '-'))
		dsh_buf_addc(b, '-');
	dsh_buf_addc(b, ']');
}

int dsh_sbpl_casefold_regex(const char *re, char **ret, struct dsh_error **err)
{
	struct dsh_buf b = { 0 };
	const char *p = re;
	while (*p) {
		unsigned char c = (unsigned char)*p;
		if (c == '\\') {
			unsigned char n = (unsigned char)p[1];
			if (!n || is_lower(n) || is_upper(n)) {
				dsh_buf_free(&b);
				return dsh_err(err, DSH_ERR_POLICY, EINVAL,
					       "seatbelt: regex escape '\\%c' is not supported", n ? n : '0');
			}
			dsh_buf_addn(&b, p, 2);
			p += 2;
		} else if (c == '[') {
			struct byteset set;
			bool negate;
			int r = parse_bracket(&p, &set, &negate, err);
			if (r < 0) {
				dsh_buf_free(&b);
				return r;
			}
			for (unsigned x = 'A'; x <= 'z'; x++)
				if (set_has(&set, x) && (is_lower(x) || is_upper(x)))
					set_add(&set, other_case(x));
			emit_bracket(&b, &set, negate);
		} else if (is_lower(c) || is_upper(c)) {
			char cls[5] = { '[', (char)(is_lower(c) ? c : other_case(c)),
					(char)(is_upper(c) ? c : other_case(c)), ']', 0 };
			dsh_buf_add(&b, cls);
			p++;
		} else if (c >= 0xC2 && c <= 0xDF && ((unsigned char)p[1] & 0xC0) == 0x80) {
			unsigned cp = ((unsigned)(c & 0x1F) << 6) | ((unsigned char)p[1] & 0x3F);
			unsigned partner = unicode_partner(cp);
			if (partner) {
				dsh_buf_addc(&b, '(');
				add_utf8_2(&b, cp);
				dsh_buf_addc(&b, '|');
				add_utf8_2(&b, partner);
				dsh_buf_addc(&b, ')');
			} else {
				dsh_buf_addn(&b, p, 2);
			}
			p += 2;
		} else {
			dsh_buf_addc(&b, (char)c);
			p++;
		}
	}
	*ret = dsh_buf_steal(&b);
	if (!*ret)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	return 0;
}

char *dsh_sbpl_literal_regex(const char *path)
{
	if (strcmp(path, "/") == 0)
		return strdup("^/.*$");
	struct dsh_buf b = { 0 };
	dsh_buf_addc(&b, '^');
	for (const char *p = path; *p; p++) {
		if (strchr(".[]()*+?{}|^$\\", *p))
			dsh_buf_addc(&b, '\\');
		dsh_buf_addc(&b, *p);
	}
	dsh_buf_add(&b, "(/.*)?$");
	return dsh_buf_steal(&b);
}

/* ---- the profile ---- */

static int add_rule(struct dsh_buf *b, const struct dsh_rule *r, struct dsh_error **err)
{
	int k;
	if ((k = check_text("rule", r->text, err)) < 0)
		return k;
	/* A comment ends at a line break only; written in printable ASCII it cannot end early under a
	   reader that would also break lines at U+0085 or U+2028. */
	dsh_buf_addf(b, "; rule %u: ", r->index + 1);
	for (const unsigned char *c = (const unsigned char *)r->text; *c; c++) {
		if (*c >= 0x80)
			dsh_buf_addf(b, "\\x%02x", *c);
		else
			dsh_buf_addc(b, (char)*c);
	}
	dsh_buf_addc(b, '\n');
	dsh_buf_add(b, r->kind == DSH_RULE_DENY ? "(deny file-read* file-write*" : "(deny file-write*");
	for (size_t i = 0; i < r->n_match; i++) {
		const struct dsh_glob *g = &r->match[i];
		_cleanup_free_ char *literal = NULL, *own = NULL, *folded = NULL;
		const char *re = g->regex;
		if (!r->glob) {
			literal = g->literal ? strdup(g->literal) : dsh_glob_unescape(g->pattern);
			if (!literal)
				return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			dsh_buf_add(b, "\n  (subpath ");
			if ((k = dsh_sbpl_add_string(b, literal, err)) < 0)
				return dsh_err_prefix(err, "rule \"%s\"", r->text);
			dsh_buf_addc(b, ')');
			if (!re) {
				re = own = dsh_sbpl_literal_regex(literal);
				if (!own)
					return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			}
		}
		if (!re)
			return dsh_err(err, DSH_ERR_POLICY, EINVAL, "seatbelt: rule \"%s\" has no compiled regex",
				       r->text);
		/* APFS is usually case-insensitive: the deny must match every case spelling. */
		if ((k = dsh_sbpl_casefold_regex(re, &folded, err)) < 0)
			return dsh_err_prefix(err, "rule \"%s\"", r->text);
		dsh_buf_add(b, "\n  ");
		if ((k = dsh_sbpl_add_regex(b, folded, err)) < 0)
			return dsh_err_prefix(err, "rule \"%s\"", r->text);
	}
	dsh_buf_add(b, ")\n");
	return 0;
}

int dsh_sbpl_profile(const struct dsh_policy *p, char **ret, struct dsh_error **err)
{
	struct dsh_buf b = { 0 };
	int r;
	/* The official base: everything allowed but writing, /dev/null writable. */
	dsh_buf_add(&b, "(version 1)\n"
			"(allow default)\n"
			"(deny file-write*)\n"
			"(allow file-write* (literal \"/dev/null\"))\n");
	if (p->n_roots > 0) {
		dsh_buf_add(&b, "; writable roots\n(allow file-write*");
		for (size_t i = 0; i < p->n_roots; i++) {
			dsh_buf_add(&b, "\n  (subpath ");
			if ((r = dsh_sbpl_add_string(&b, p->roots[i].path, err)) < 0) {
				dsh_buf_free(&b);
				return dsh_err_prefix(err, "writable root");
			}
			dsh_buf_addc(&b, ')');
		}
		dsh_buf_add(&b, ")\n");
	}
	/* The rules last: a later SBPL rule overrides an earlier one (SPEC 6). */
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *rule = &p->rules[i];
		if (rule->kind == DSH_RULE_RW)
			continue; /* an rw rule is a writable root above (or ignored in read-only) */
		if ((r = add_rule(&b, rule, err)) < 0) {
			dsh_buf_free(&b);
			return r;
		}
	}
	*ret = dsh_buf_steal(&b);
	if (!*ret)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	return 0;
}
