/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/glob.h"
#include "policy/path.h"
#include "policy/rule.h"
#include "policy/strpool.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return true;
	return false;
}

/* The directory part of a pattern before its first component holding a wildcard. */
static size_t literal_dir_len(const char *pattern)
{
	size_t last_slash = 0;
	for (size_t i = 0; pattern[i]; i++) {
		if (pattern[i] == '\\' && pattern[i + 1]) {
			i++;
			continue;
		}
		if (pattern[i] == '/')
			last_slash = i;
		else if (pattern[i] == '*' || pattern[i] == '?' || pattern[i] == '[')
			return last_slash;
	}
	return strlen(pattern);
}

static int fail(struct dsh_error **err, const char *text, const char *fmt, const char *detail)
{
	int r = dsh_err(err, DSH_ERR_POLICY, EINVAL, fmt, detail);
	dsh_err_prefix(err, "rule \"%s\"", text);
	return r;
}

/* Canonicalise the literal directory of a resolved pattern; the wildcard rest is kept as written.
   Where nothing changes (a literal with no symlink on its way and nothing escaped), *ret and
   *ret_dir are resolved itself, not copies: dsh_rule_clear() frees each distinct string once. */
static int canonical_pattern(const char *resolved, bool glob, struct dsh_canon_cache *cache, char **ret,
			     char **ret_dir, struct dsh_error **err)
{
	size_t dl = glob ? literal_dir_len(resolved) : strlen(resolved);
	_cleanup_free_ char *dir_pat = strndup(resolved, dl ? dl : 1);
	_cleanup_free_ char *dir = dir_pat ? dsh_glob_unescape(dir_pat) : NULL;
	_cleanup_free_ char *canon = NULL;
	if (!dir)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	int r = dsh_path_canonicalize_cached(dir, cache, &canon, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *esc = dsh_glob_escape(canon);
	if (!esc)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	const char *rest = resolved + (dl ? dl : 1);
	if (dl == 0)
		rest = resolved + 1; /* the wildcard starts in the first component: keep "/" */
	if (dl == strlen(resolved) && strcmp(esc, resolved) == 0 && strcmp(esc, canon) == 0) {
		/* The usual literal rule: resolved, canonical and its directory are one string. */
		*ret = *ret_dir = (char *)resolved;
		return 0;
	}
	char *out;
	if (strcmp(esc, "/") == 0 && *rest != '/' && *rest)
		out = dsh_str_cat("/", rest);
	else if (strcmp(esc, "/") == 0 && *rest == '/')
		out = strdup(rest);
	else
		out = dsh_str_cat(esc, rest);
	if (!out)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	*ret = out;
	*ret_dir = TAKE_PTR(canon);
	return 0;
}

/*
 * The first "$NAME" or "${NAME}" in a path as written, or NULL.  A '$' escaped by a backslash is a
 * literal dollar sign in a pattern (SPEC 1.4), so it names nothing.
 */
static const char *shell_variable(const char *path, size_t *ret_len)
{
	for (const char *c = path; *c; c++) {
		if (c[0] == '\\' && c[1]) {
			c++;
			continue;
		}
		if (c[0] != '$')
			continue;
		const char *n = c + 1 + (c[1] == '{');
		if (!(*n == '_' || (*n >= 'A' && *n <= 'Z') || (*n >= 'a' && *n <= 'z')))
			continue;
		const char *e = n;
		while (*e == '_' || (*e >= 'A' && *e <= 'Z') || (*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9'))
			e++;
		*ret_len = (size_t)(e - n);
		return n;
	}
	return NULL;
}

int dsh_rule_parse(const char *line, const char *workspace, char *const *envp, unsigned index,
		   bool refuse_shell_variables, struct dsh_canon_cache *cache, struct dsh_rule *r,
		   struct dsh_error **err)
{
	memset(r, 0, sizeof(*r));
	r->index = index;

	while (is_space(*line))
		line++;
	size_t len = strlen(line);
	while (len > 0 && is_space(line[len - 1]))
		len--;
	_cleanup_free_ char *text = strndup(line, len);
	if (!text)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");

	/* The prefix is exactly "rw", "r-" or "--", then whitespace. */
	if (len >= 2 && strncmp(text, "rw", 2) == 0)
		r->kind = DSH_RULE_RW;
	else if (len >= 2 && strncmp(text, "r-", 2) == 0)
		r->kind = DSH_RULE_RO;
	else if (len >= 2 && strncmp(text, "--", 2) == 0)
		r->kind = DSH_RULE_DENY;
	else
		return fail(err, text, "%s", "missing or unknown prefix (expected 'rw', 'r-' or '--' then a path)");
	if (len == 2)
		return fail(err, text, "%s", "nothing follows the prefix");
	if (text[2] != ' ' && text[2] != '\t')
		return fail(err, text, "%s", "unknown prefix (expected 'rw', 'r-' or '--' then whitespace and a path)");
	const char *path = text + 2;
	while (*path == ' ' || *path == '\t')
		path++;
	if (!*path)
		return fail(err, text, "%s", "nothing follows the prefix");
	if (has_control(path))
		return fail(err, text, "%s", "the path contains a control character");
	if (path[0] == '~') {
		int ret = fail(err, text, "%s", "a path may not start with '~'");
		dsh_err_hint(err, "write {{ env.HOME }} instead of ~");
		return ret;
	}

	size_t var_len = 0;
	const char *var = refuse_shell_variables ? shell_variable(path, &var_len) : NULL;
	if (var) {
		/* The shell would have expanded it; dshbox would take it literally and protect nothing. */
		int ret = dsh_err(err, DSH_ERR_POLICY, EINVAL, "'$%.*s' is not expanded here", (int)var_len, var);
		dsh_err_prefix(err, "rule \"%s\"", text);
		dsh_err_hint(err, "write {{ env.%.*s }} to use the environment variable", (int)var_len, var);
		return ret;
	}

	_cleanup_free_ char *expanded = NULL;
	/* What is not written in the rule itself is a name, never a pattern: an environment value or
	   a workspace holding '[' or '*' matches itself (rw paths are concrete and never escaped). */
	bool pattern = strncmp(text, "rw", 2) != 0;
	int ret = dsh_expand_env(path, envp, pattern, &expanded, err);
	if (ret < 0) {
		dsh_err_prefix(err, "rule \"%s\"", text);
		return ret;
	}
	if (has_control(expanded))
		return fail(err, text, "%s", "the expanded path contains a control character");
	if (strlen(expanded) >= PATH_MAX)
		return fail(err, text, "%s", "the path is longer than PATH_MAX after expansion");

	r->glob = dsh_glob_has_magic(expanded);
	if (r->kind == DSH_RULE_RW && (r->glob || strpbrk(expanded, "*?[")))
		return fail(err, text, "%s", "an rw path must be concrete: it contains a wildcard");
	if (r->glob) {
		ret = dsh_glob_validate(expanded, err);
		if (ret < 0) {
			dsh_err_prefix(err, "rule \"%s\"", text);
			return ret;
		}
	}

	_cleanup_free_ char *ws = pattern ? dsh_glob_escape(workspace) : strdup(workspace);
	r->resolved = ws ? dsh_path_normalize(ws, expanded) : NULL;
	if (!r->resolved)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	if (strlen(r->resolved) >= PATH_MAX)
		return fail(err, text, "%s", "the path is longer than PATH_MAX after resolution");

	if (r->kind == DSH_RULE_RW) {
		/* rw paths are concrete: no glob escapes apply. */
		ret = dsh_path_canonicalize_cached(r->resolved, cache, &r->canonical, err);
		if (ret < 0)
			goto fail_ctx;
		r->literal_dir = r->canonical;
		r->text = TAKE_PTR(text);
		return 0;
	}

	ret = canonical_pattern(r->resolved, r->glob, cache, &r->canonical, &r->literal_dir, err);
	if (ret < 0)
		goto fail_ctx;
	ret = dsh_glob_compile(r->canonical, &r->match[0], err);
	if (ret < 0)
		goto fail_ctx;
	r->n_match = 1;
	if (strcmp(r->canonical, r->resolved) != 0) {
		/* The spelling as written is protected too (SPEC 1.3). */
		ret = dsh_glob_compile(r->resolved, &r->match[1], err);
		if (ret < 0)
			goto fail_ctx;
		r->n_match = 2;
	}
	r->text = TAKE_PTR(text);
	return 0;

fail_ctx:
	dsh_err_prefix(err, "rule \"%s\"", text);
	dsh_rule_clear(r);
	return ret;
}

int dsh_rule_literal(enum dsh_rule_kind kind, enum dsh_rule_origin origin, const char *path, unsigned index,
		     struct dsh_canon_cache *cache, struct dsh_rule *r, struct dsh_error **err)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->origin = origin;
	r->index = index;
	/* The path is a name, not a pattern: its wildcard characters are escaped, never expanded. */
	r->resolved = dsh_glob_escape(path);
	if (!r->resolved || asprintf(&r->text, "%s %s", dsh_rule_kind_to_string(kind), path) < 0) {
		r->text = NULL;
		dsh_rule_clear(r);
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	int ret = canonical_pattern(r->resolved, false, cache, &r->canonical, &r->literal_dir, err);
	if (ret >= 0)
		ret = dsh_glob_compile(r->canonical, &r->match[0], err);
	if (ret >= 0) {
		r->n_match = 1;
		if (strcmp(r->canonical, r->resolved) != 0) {
			ret = dsh_glob_compile(r->resolved, &r->match[1], err);
			r->n_match = ret >= 0 ? 2 : 1;
		}
	}
	if (ret < 0) {
		dsh_err_prefix(err, "rule \"%s\"", r->text);
		dsh_rule_clear(r);
	}
	return ret;
}

/* The rule's strings, for moving them into a pool: each field once, in a fixed order. */
static size_t rule_strings(struct dsh_rule *r, char ***slots)
{
	size_t n = 0;
	slots[n++] = &r->text;
	slots[n++] = &r->resolved;
	slots[n++] = &r->canonical;
	slots[n++] = &r->literal_dir;
	for (size_t i = 0; i < r->n_match; i++) {
		slots[n++] = &r->match[i].pattern;
		slots[n++] = &r->match[i].regex;
		slots[n++] = &r->match[i].literal;
	}
	return n;
}

int dsh_rule_pool(struct dsh_rule *r, struct dsh_strpool *pool)
{
	char **slots[4 + 3 * 2], *to[4 + 3 * 2];
	size_t n = rule_strings(r, slots);
	/* Copy first, so that running out of memory leaves the rule as it was. */
	for (size_t i = 0; i < n; i++) {
		to[i] = NULL;
		for (size_t k = 0; k < i && *slots[i]; k++)
			if (*slots[k] == *slots[i])
				to[i] = to[k]; /* a string two fields share stays one */
		if (*slots[i] && !to[i] && !(to[i] = dsh_strpool_dup(pool, *slots[i])))
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		bool first = true;
		for (size_t k = 0; k < i; k++)
			first &= *slots[k] != *slots[i];
		if (first)
			free(*slots[i]);
	}
	for (size_t i = 0; i < n; i++)
		*slots[i] = to[i];
	r->pooled = true;
	return 0;
}

void dsh_rule_clear(struct dsh_rule *r)
{
	if (r->pooled) {
		/* The strings are the pool's; only a wildcard's matchers are the rule's own.  Nothing
		   else is written: the policy's rules go with it (200,000 of them, 46 MB to zero). */
		for (size_t i = 0; i < r->n_match; i++)
			if (r->match[i].prog || r->match[i].re)
				dsh_glob_release_matchers(&r->match[i]);
		r->n_match = 0;
		return;
	}
	free(r->text);
	/* canonical and literal_dir may be the very string before them (canonical_pattern()). */
	if (r->literal_dir != r->canonical && r->literal_dir != r->resolved)
		free(r->literal_dir);
	if (r->canonical != r->resolved)
		free(r->canonical);
	free(r->resolved);
	for (size_t i = 0; i < r->n_match; i++)
		dsh_glob_clear(&r->match[i]);
	memset(r, 0, sizeof(*r));
}

bool dsh_rule_covers(const struct dsh_rule *r, const char *path)
{
	if (r->kind == DSH_RULE_RW)
		return dsh_path_is_beneath(path, r->canonical);
	for (size_t i = 0; i < r->n_match; i++)
		if (dsh_glob_match(&r->match[i], path))
			return true;
	return false;
}

/* dsh_glob_may_match_below() over every spelling of every r-/-- rule (dshbox.h). */
bool dsh_policy_may_protect_below(const struct dsh_policy *p, const char *dir)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		if (r->kind == DSH_RULE_RW)
			continue;
		for (size_t k = 0; k < r->n_match; k++)
			if (dsh_glob_may_match_below(&r->match[k], dir))
				return true;
	}
	return false;
}

const struct dsh_rule *dsh_policy_redirected(const struct dsh_policy *p, const char *name, const char *target)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		if (r->kind == DSH_RULE_RW)
			continue;
		for (size_t k = 0; k < r->n_match; k++)
			if (!dsh_glob_below_within(&r->match[k], name, target))
				return r;
	}
	return NULL;
}
