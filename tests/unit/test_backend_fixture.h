/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef DSH_TESTS_BACKEND_FIXTURE_H
#define DSH_TESTS_BACKEND_FIXTURE_H

/*
 * Hand-built policies for the backend generators' unit tests (seatbelt, runner, winacl): the
 * generators read struct dsh_policy directly, so their tests fix every field instead of depending
 * on what the filesystem of the test machine resolves paths to.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "policy/policy.h"

static inline char *fx_strdup(const char *s)
{
	char *d = s ? strdup(s) : NULL;
	if (s)
		cr_assert_not_null(d);
	return d;
}

/* The glob escape of a literal path ('*', '?', '[', ']' and '\' escaped), as policy/ stores it. */
static inline char *fx_glob_escape(const char *s)
{
	char *d = malloc(2 * strlen(s) + 1), *o = d;
	cr_assert_not_null(d);
	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return d;
}

/* The run options that go with the fixture's policy (one test process per test). */
static struct dsh_run_options fx_ro;

static inline void fx_init(struct dsh_policy *p, enum dsh_mode mode, const char *workspace)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->workspace = fx_strdup(workspace);
	p->cwd = fx_strdup(workspace);
	p->diff_basis_max_bytes = 10485760;
	memset(&fx_ro, 0, sizeof(fx_ro));
	fx_ro.network = true;
	fx_ro.protect_sockets = true;
	fx_ro.probe_timeout_ms = 5000;
	fx_ro.max_masks = 65536;
}

static inline void fx_root(struct dsh_policy *p, const char *path, enum dsh_root_origin origin)
{
	p->roots = realloc(p->roots, (p->n_roots + 1) * sizeof(*p->roots));
	cr_assert_not_null(p->roots);
	struct dsh_root *r = &p->roots[p->n_roots++];
	memset(r, 0, sizeof(*r));
	r->path = fx_strdup(path);
	r->origin = origin;
}

static inline struct dsh_rule *fx_add(struct dsh_policy *p, enum dsh_rule_kind kind, const char *text)
{
	p->rules = realloc(p->rules, (p->n_rules + 1) * sizeof(*p->rules));
	cr_assert_not_null(p->rules);
	struct dsh_rule *r = &p->rules[p->n_rules];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->index = (unsigned)p->n_rules++;
	r->text = fx_strdup(text);
	return r;
}

/* A literal rule on path (canonical) and, when it differs, on spelling (as resolved). */
static inline struct dsh_rule *fx_literal(struct dsh_policy *p, enum dsh_rule_kind kind, const char *text,
					  const char *path, const char *spelling)
{
	struct dsh_rule *r = fx_add(p, kind, text);
	r->canonical = kind == DSH_RULE_RW ? fx_strdup(path) : fx_glob_escape(path);
	r->resolved = kind == DSH_RULE_RW ? fx_strdup(spelling ? spelling : path)
					  : fx_glob_escape(spelling ? spelling : path);
	r->literal_dir = fx_strdup(path);
	if (kind == DSH_RULE_RW)
		return r; /* as policy/rule.c: an rw rule is a root, not a match */
	r->match[0].pattern = fx_glob_escape(path);
	r->match[0].literal = fx_strdup(path);
	r->match[0].literal_len = strlen(path);
	r->n_match = 1;
	if (spelling) {
		r->match[1].pattern = fx_glob_escape(spelling);
		r->match[1].literal = fx_strdup(spelling);
		r->match[1].literal_len = strlen(spelling);
		r->n_match = 2;
	}
	return r;
}

/* A glob rule with the regex the matcher uses for it. */
static inline struct dsh_rule *fx_glob(struct dsh_policy *p, enum dsh_rule_kind kind, const char *text,
				       const char *pattern, const char *regex)
{
	struct dsh_rule *r = fx_add(p, kind, text);
	r->glob = true;
	r->canonical = fx_strdup(pattern);
	r->resolved = fx_strdup(pattern);
	r->match[0].pattern = fx_strdup(pattern);
	r->match[0].regex = fx_strdup(regex);
	r->n_match = 1;
	return r;
}

/* A NULL-terminated vector of copies. */
static inline char **fx_strv(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	char **d = calloc(n + 1, sizeof(*d));
	cr_assert_not_null(d);
	for (size_t i = 0; i < n; i++)
		d[i] = fx_strdup(v[i]);
	return d;
}

static inline void fx_clear(struct dsh_policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		struct dsh_rule *r = &p->rules[i];
		free(r->text);
		free(r->resolved);
		free(r->canonical);
		free(r->literal_dir);
		for (size_t j = 0; j < r->n_match; j++) {
			free(r->match[j].pattern);
			free(r->match[j].regex);
			free(r->match[j].literal);
		}
	}
	free(p->rules);
	for (size_t i = 0; i < p->n_roots; i++)
		free(p->roots[i].path);
	free(p->roots);
	free(p->workspace);
	free(p->cwd);
	free(p->tmpdir);
	for (char **v = fx_ro.runner_command; v && *v; v++)
		free(*v);
	free(fx_ro.runner_command);
	for (char **v = fx_ro.runner_failure_signatures; v && *v; v++)
		free(*v);
	free(fx_ro.runner_failure_signatures);
	memset(&fx_ro, 0, sizeof(fx_ro));
	memset(p, 0, sizeof(*p));
}

#endif
