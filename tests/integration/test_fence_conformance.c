/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every line of verdicts.tsv, run through `dshbox fs read` / `dshbox fs write` on a materialised
 * tree, agrees with the vector, with `dshbox check` and with dsh_policy_verdict() on the canonical
 * path.  The vector's absolute paths (/ws, /tmp, /home/u, /opt, /etc ...) are re-rooted under a
 * scratch directory in /var/tmp, and so are TMPDIR and the vector's environment.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "policy/options.h"
#include "tests/lib/harness.h"

static char *reroot(const char *root, const char *p)
{
	char *s = NULL;
	if (p[0] == '/')
		cr_assert(asprintf(&s, "%s%s", root, p) > 0);
	else
		s = strdup(p);
	return s;
}

static void mkdir_p(const char *path)
{
	char *dup = strdup(path);
	for (char *s = dup + 1;; s++) {
		s = strchr(s, '/');
		if (s)
			*s = '\0';
		if (mkdir(dup, 0755) < 0 && errno != EEXIST)
			cr_assert_fail("mkdir %s: %s", dup, strerror(errno));
		if (!s)
			break;
		*s = '/';
	}
	free(dup);
}

static void mkdir_parent(const char *path)
{
	char *dup = strdup(path);
	char *slash = strrchr(dup, '/');
	if (slash && slash != dup) {
		*slash = '\0';
		mkdir_p(dup);
	}
	free(dup);
}

/* "rw {{ env.X }} ; r- /opt/x" -> each rule, its absolute path re-rooted. */
static char **rules_of(const char *root, const char *field)
{
	char **out = calloc(1, sizeof(char *));
	if (strcmp(field, "-") == 0)
		return out;
	char *rules = strdup(field), *save = NULL;
	for (char *r = strtok_r(rules, ";", &save); r; r = strtok_r(NULL, ";", &save)) {
		while (*r == ' ')
			r++;
		size_t n = strlen(r);
		while (n && r[n - 1] == ' ')
			r[--n] = '\0';
		cr_assert(n > 3 && r[2] == ' ', "odd rule '%s'", r);
		const char *path = r + 3;
		char *rule = NULL;
		if (path[0] == '/')
			cr_assert(asprintf(&rule, "%.2s %s%s", r, root, path) > 0);
		else
			rule = strdup(r);
		dsh_strv_push_take(&out, rule);
	}
	free(rules);
	return out;
}

static char **env_of(const char *root, const struct dsh_vectors *v)
{
	char **env = calloc(1, sizeof(char *));
	for (size_t i = 0; v->env && v->env[i]; i++) {
		const char *eq = strchr(v->env[i], '=');
		cr_assert_not_null(eq);
		if (eq[1] == '/')
			dsh_strv_pushf(&env, "%.*s=%s%s", (int)(eq - v->env[i]), v->env[i], root, eq + 1);
		else
			dsh_strv_push(&env, v->env[i]);
	}
	if (v->tmpdir)
		dsh_strv_pushf(&env, "TMPDIR=%s%s", root, v->tmpdir);
	return env;
}

static const char *env_value(char **env, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; env[i]; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

/* The vectors' own settings (protectDefaults) as a configuration file, or NULL. */
static const char *vectors_config;

/* argv: dshbox SUB... POLICY-OPTIONS... */
static char **policy_argv(const char *const *head, const char *mode, const char *ws, char **rules,
			  const char *const *tail)
{
	char **argv = calloc(1, sizeof(char *));
	dsh_strv_push(&argv, dsh_test_dshbox());
	for (size_t i = 0; head[i]; i++)
		dsh_strv_push(&argv, head[i]);
	dsh_strv_push(&argv, "--mode");
	dsh_strv_push(&argv, mode);
	dsh_strv_push(&argv, "--workspace");
	dsh_strv_push(&argv, ws);
	if (vectors_config) {
		dsh_strv_push(&argv, "--config");
		dsh_strv_push(&argv, vectors_config);
	}
	for (size_t i = 0; rules[i]; i++) {
		dsh_strv_push(&argv, "--access");
		dsh_strv_push(&argv, rules[i]);
	}
	for (size_t i = 0; tail[i]; i++)
		dsh_strv_push(&argv, tail[i]);
	return argv;
}

Test(fence_conformance, verdicts_through_fs_read_and_write, .timeout = 120)
{
	struct dsh_vectors v;
	dsh_vectors_load("verdicts.tsv", &v);
	vectors_config = dsh_vectors_config(&v);
	cr_assert_not_null(v.workspace);
	size_t ran = 0, ran_read = 0, ran_write = 0;
	for (size_t i = 0; i < v.n_cases; i++) {
		const struct dsh_vector *c = &v.cases[i];
		cr_assert_eq(c->n_fields, 5, "verdicts.tsv:%d: expected 5 fields", c->line);
		const char *mode = c->fields[0], *op = c->fields[2];
		bool want = strcmp(c->fields[4], "allow") == 0;
		bool is_read = strcmp(op, "read") == 0;
		cr_assert(is_read || strcmp(op, "write") == 0, "verdicts.tsv:%d: op %s", c->line, op);

		_cleanup_free_ char *root = dsh_test_mkdtemp();
		_cleanup_strv_ char **env = env_of(root, &v);
		_cleanup_strv_ char **rules = rules_of(root, c->fields[1]);
		_cleanup_free_ char *ws = reroot(root, v.workspace);
		_cleanup_free_ char *target = reroot(root, c->fields[3]);
		mkdir_p(ws);
		if (env_value(env, "TMPDIR"))
			mkdir_p(env_value(env, "TMPDIR"));
		for (size_t k = 0; env[k]; k++) {
			const char *eq = strchr(env[k], '=');
			if (eq && eq[1] == '/')
				mkdir_p(eq + 1);
		}
		mkdir_parent(target);

		/* The fence's content: reads find a file; half the writes overwrite one, half create. */
		char old[64], new[64];
		snprintf(old, sizeof(old), "old content of line %d\n", c->line);
		snprintf(new, sizeof(new), "new content of line %d\n", c->line);
		struct stat st;
		bool is_dir = stat(target, &st) == 0 && S_ISDIR(st.st_mode);
		bool pre_existing = !is_dir && (is_read || (i % 2 == 0));
		if (pre_existing)
			dsh_test_write_file(target, old);

		/* 1. The library's verdict on the canonical materialised path. */
		struct dsh_config cfg;
		dsh_config_init(&cfg);
		cfg.workspace = strdup(ws);
		cfg.protect_defaults = !v.protect_defaults_off;
		cr_assert_eq(dsh_mode_from_string(mode, &cfg.mode), 0);
		for (size_t k = 0; rules[k]; k++)
			dsh_strv_push(&cfg.access, rules[k]);
		struct dsh_policy *p = NULL;
		_cleanup_error_ struct dsh_error *err = NULL;
		cr_assert_eq(dsh_policy_new(&cfg, env, ws, &p, &err), 0, "verdicts.tsv:%d: %s", c->line,
			     err ? err->msg : "");
		_cleanup_free_ char *canon = NULL;
		cr_assert_eq(dsh_path_resolve(ws, target, &canon, NULL), 0);
		struct dsh_verdict vd;
		cr_assert_eq(dsh_policy_verdict(p, is_read ? DSH_OP_READ : DSH_OP_WRITE, canon, &vd), 0);
		cr_expect_eq(vd.allow, want, "verdicts.tsv:%d: library verdict on %s: %s", c->line, canon,
			     vd.allow ? "allow" : "deny");
		dsh_policy_free(p);
		dsh_config_clear(&cfg);

		/* 2. dshbox check. */
		const char *chead[] = { "check", NULL };
		const char *ctail[] = { is_read ? "--read" : "--write", target, NULL };
		_cleanup_strv_ char **cargv = policy_argv(chead, mode, ws, rules, ctail);
		struct dsh_proc cr;
		cr_assert_eq(dsh_proc_run(cargv, env, NULL, &cr), 0);
		cr_expect_eq(cr.exit_code, want ? 0 : 1, "verdicts.tsv:%d: check exit %d: %s", c->line,
			     cr.exit_code, cr.err);

		/* 3. dshbox fs read / write. */
		const char *fhead[] = { "fs", op, target, NULL };
		const char *none[] = { NULL };
		_cleanup_strv_ char **fargv = policy_argv(fhead, mode, ws, rules, none);
		struct dsh_proc fr;
		cr_assert_eq(dsh_proc_run(fargv, env, is_read ? NULL : new, &fr), 0);
		_cleanup_free_ char *after = dsh_test_read_file(target);
		if (!want) {
			cr_expect_eq(fr.exit_code, 1, "verdicts.tsv:%d: fs %s %s: exit %d, want 1 (denied): %s",
				     c->line, op, target, fr.exit_code, fr.err);
			cr_expect_eq(dsh_count_lines_with_prefix(fr.err, "dshbox: error: "), 1,
				     "verdicts.tsv:%d: %s", c->line, fr.err);
			cr_expect(strstr(fr.err, ": denied: ") != NULL, "verdicts.tsv:%d: %s", c->line, fr.err);
			cr_expect_str_eq(fr.out, "", "verdicts.tsv:%d: a denied read printed content", c->line);
			if (pre_existing)
				cr_expect_str_eq(after ? after : "(gone)", old, "verdicts.tsv:%d: denied write changed the file",
						 c->line);
			else if (!is_dir)
				cr_expect_null(after, "verdicts.tsv:%d: a denied write created %s", c->line, target);
		} else if (is_dir) {
			/* The verdict allows; a directory is simply not a file to write (exit 4). */
			cr_expect_eq(fr.exit_code, 4, "verdicts.tsv:%d: fs %s on a directory: exit %d: %s", c->line,
				     op, fr.exit_code, fr.err);
			cr_expect(strstr(fr.err, "denied") == NULL, "verdicts.tsv:%d: %s", c->line, fr.err);
		} else {
			cr_expect_eq(fr.exit_code, 0, "verdicts.tsv:%d: fs %s %s: exit %d: %s", c->line, op, target,
				     fr.exit_code, fr.err);
			if (is_read)
				cr_expect_str_eq(fr.out, old, "verdicts.tsv:%d", c->line);
			else
				cr_expect_str_eq(after ? after : "(missing)", new, "verdicts.tsv:%d", c->line);
		}
		/* check and fs agree with each other, whatever the vector says. */
		cr_expect_eq(cr.exit_code == 1, fr.exit_code == 1, "verdicts.tsv:%d: check exit %d vs fs exit %d",
			     c->line, cr.exit_code, fr.exit_code);
		dsh_proc_clear(&cr);
		dsh_proc_clear(&fr);
		dsh_test_rmtree(root);
		ran++;
		if (is_read)
			ran_read++;
		else
			ran_write++;
	}
	fprintf(stderr, "fence conformance: verdicts.tsv: %zu vector lines ran through fs (%zu read, %zu write)\n",
		ran, ran_read, ran_write);
	cr_expect_eq(ran, v.n_cases);
	cr_expect_gt(ran, 0);
	dsh_vectors_clear(&v);
}
