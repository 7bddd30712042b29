/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shared conformance vectors (the .tsv files in ../shared/conformance), loaded in place, against the
 * policy engine.  Every line is a case; the count that ran is printed.
 */
#include <stdio.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/glob.h"
#include "policy/policy.h"
#include "tests/lib/harness.h"

/* The vectors' environment exactly: nothing of the test's own environment leaks in. */
static char **vector_env(const struct dsh_vectors *v)
{
	char **env = dsh_strv_copy(v->env);
	if (!env)
		env = calloc(1, sizeof(char *));
	if (v->tmpdir)
		dsh_strv_pushf(&env, "TMPDIR=%s", v->tmpdir);
	return env;
}

/* rules.tsv escapes a TAB as the two characters "\t". */
static char *unescape_tab(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == 't') {
			*o++ = '\t';
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

static void split_rules(const char *field, char ***access)
{
	if (strcmp(field, "-") == 0)
		return;
	char *rules = strdup(field), *save = NULL;
	for (char *r = strtok_r(rules, ";", &save); r; r = strtok_r(NULL, ";", &save))
		dsh_strv_push(access, r);
	free(rules);
}

Test(conformance, rules)
{
	struct dsh_vectors v;
	dsh_vectors_load("rules.tsv", &v);
	_cleanup_strv_ char **env = vector_env(&v);
	size_t ran = 0;
	for (size_t i = 0; i < v.n_cases; i++) {
		struct dsh_vector *c = &v.cases[i];
		cr_assert_eq(c->n_fields, 2, "rules.tsv:%d: expected 2 fields", c->line);
		_cleanup_free_ char *rule = unescape_tab(c->fields[0]);
		struct dsh_config cfg;
		dsh_config_init(&cfg);
		cfg.workspace = strdup(v.workspace);
		dsh_strv_push(&cfg.access, rule);
		struct dsh_policy *p = NULL;
		_cleanup_error_ struct dsh_error *err = NULL;
		int r = dsh_policy_new(&cfg, env, "/", &p, &err);
		const char *want = c->fields[1];
		if (strcmp(want, "error") == 0) {
			cr_expect_lt(r, 0, "rules.tsv:%d: '%s' should be rejected", c->line, c->fields[0]);
			if (r < 0)
				cr_expect(strstr(err->msg, "rule") != NULL, "rules.tsv:%d: message '%s' names no rule",
					  c->line, err->msg);
		} else {
			char kind[8], canon[4096];
			cr_assert_eq(sscanf(want, "ok %7s %4095[^\n]", kind, canon), 2, "rules.tsv:%d: bad expectation",
				     c->line);
			cr_expect_eq(r, 0, "rules.tsv:%d: '%s' rejected: %s", c->line, c->fields[0], err ? err->msg : "");
			if (r == 0) {
				size_t user = 0;
				for (size_t k = 0; k < p->n_rules; k++)
					user += p->rules[k].origin == DSH_ORIGIN_USER;
				cr_expect_eq(user, 1);
				cr_expect_str_eq(dsh_rule_kind_to_string(p->rules[0].kind), kind, "rules.tsv:%d", c->line);
				cr_expect_str_eq(p->rules[0].resolved, canon, "rules.tsv:%d", c->line);
			}
		}
		dsh_policy_free(p);
		dsh_config_clear(&cfg);
		ran++;
	}
	fprintf(stderr, "conformance: rules.tsv: %zu vector lines ran\n", ran);
	cr_expect_gt(ran, 0);
	cr_expect_eq(ran, v.n_cases);
	dsh_vectors_clear(&v);
}

Test(conformance, globs)
{
	struct dsh_vectors v;
	dsh_vectors_load("globs.tsv", &v);
	size_t ran = 0;
	for (size_t i = 0; i < v.n_cases; i++) {
		struct dsh_vector *c = &v.cases[i];
		cr_assert_eq(c->n_fields, 3, "globs.tsv:%d: expected 3 fields", c->line);
		bool want = strcmp(c->fields[2], "1") == 0;
		/* As a deny rule with that absolute pattern, through the whole engine. */
		struct dsh_config cfg;
		dsh_config_init(&cfg);
		cfg.workspace = strdup("/nonexistent-dshbox-workspace");
		dsh_strv_pushf(&cfg.access, "-- %s", c->fields[0]);
		struct dsh_policy *p = NULL;
		_cleanup_error_ struct dsh_error *err = NULL;
		char *env[] = { NULL };
		cr_assert_eq(dsh_policy_new(&cfg, env, "/", &p, &err), 0, "globs.tsv:%d: %s", c->line,
			     err ? err->msg : "");
		struct dsh_verdict vd;
		dsh_policy_verdict(p, DSH_OP_READ, c->fields[1], &vd);
		cr_expect_eq(!vd.allow, want, "globs.tsv:%d: '%s' vs '%s': want %d", c->line, c->fields[0],
			     c->fields[1], want);
		/* The regex that Seatbelt embeds answers the same. */
		struct dsh_glob g;
		cr_assert_eq(dsh_glob_compile(c->fields[0], &g, NULL), 0);
		cr_expect_eq(dsh_glob_match_regex(&g, c->fields[1]), want, "globs.tsv:%d: regex %s", c->line, g.regex);
		cr_expect_eq(dsh_glob_match(&g, c->fields[1]), want, "globs.tsv:%d: matcher", c->line);
		dsh_glob_clear(&g);
		dsh_policy_free(p);
		dsh_config_clear(&cfg);
		ran++;
	}
	fprintf(stderr, "conformance: globs.tsv: %zu vector lines ran\n", ran);
	cr_expect_gt(ran, 0);
	cr_expect_eq(ran, v.n_cases);
	dsh_vectors_clear(&v);
}

static void run_verdicts(const char *name)
{
	struct dsh_vectors v;
	dsh_vectors_load(name, &v);
	_cleanup_strv_ char **env = vector_env(&v);
	size_t ran = 0;
	for (size_t i = 0; i < v.n_cases; i++) {
		struct dsh_vector *c = &v.cases[i];
		cr_assert_eq(c->n_fields, 5, "%s:%d: expected 5 fields", name, c->line);
		struct dsh_config cfg;
		dsh_config_init(&cfg);
		cfg.workspace = strdup(v.workspace);
		cfg.protect_defaults = !v.protect_defaults_off;
		cr_assert_eq(dsh_mode_from_string(c->fields[0], &cfg.mode), 0, "%s:%d: mode", name, c->line);
		split_rules(c->fields[1], &cfg.access);
		struct dsh_policy *p = NULL;
		_cleanup_error_ struct dsh_error *err = NULL;
		cr_assert_eq(dsh_policy_new(&cfg, env, "/", &p, &err), 0, "%s:%d: %s", name, c->line,
			     err ? err->msg : "");
		_cleanup_free_ char *path = NULL;
		cr_assert_eq(dsh_path_resolve("/", c->fields[3], &path, NULL), 0);
		enum dsh_op op = strcmp(c->fields[2], "read") == 0 ? DSH_OP_READ : DSH_OP_WRITE;
		struct dsh_verdict vd;
		cr_assert_eq(dsh_policy_verdict(p, op, path, &vd), 0);
		bool want = strcmp(c->fields[4], "allow") == 0;
		_cleanup_free_ char *why = dsh_verdict_explain(&vd);
		cr_expect_eq(vd.allow, want, "%s:%d: %s %s %s under '%s': got %s (%s)", name, c->line,
			     c->fields[0], c->fields[2], c->fields[3], c->fields[1], vd.allow ? "allow" : "deny", why);
		dsh_policy_free(p);
		dsh_config_clear(&cfg);
		ran++;
	}
	fprintf(stderr, "conformance: %s: %zu vector lines ran\n", name, ran);
	cr_expect_gt(ran, 0);
	cr_expect_eq(ran, v.n_cases);
	dsh_vectors_clear(&v);
}

Test(conformance, verdicts)
{
	run_verdicts("verdicts.tsv");
}

/* The default-protected names of SPEC 1.6 (protectDefaults at its default). */
Test(conformance, defaults)
{
	run_verdicts("defaults.tsv");
}
