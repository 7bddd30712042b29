/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The process side agrees with the file fence (SPEC 1, 3): every line of verdicts.tsv, re-rooted
 * under a fresh tree in /var/tmp, with its files created, is probed from inside `dshbox run`.  A
 * denied read fails with EACCES, a denied write with EROFS or EACCES, an allowed write succeeds
 * and lands on the host.  The fence's verdict comes from dsh_policy_verdict on the same policy.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "policy/options.h"
#include "tests/lib/harness.h"

/* "/x/y" -> ROOT "/x/y"; anything else unchanged. */
static char *reroot(const char *root, const char *path)
{
	char *s = NULL;
	if (path[0] == '/')
		cr_assert(asprintf(&s, "%s%s", root, path) > 0);
	else
		s = strdup(path);
	return s;
}

/* "NAME=/abs" -> "NAME=ROOT/abs". */
static char *reroot_env(const char *root, const char *kv)
{
	const char *eq = strchr(kv, '=');
	cr_assert_not_null(eq);
	char *s = NULL;
	if (eq[1] == '/')
		cr_assert(asprintf(&s, "%.*s%s%s", (int)(eq - kv + 1), kv, root, eq + 1) > 0);
	else
		s = strdup(kv);
	return s;
}

/* "KIND PATH": PATH re-rooted when absolute (a {{ env.X }} path follows the re-rooted env). */
static char *reroot_rule(const char *root, const char *rule)
{
	while (*rule == ' ')
		rule++;
	size_t k = strcspn(rule, " \t");
	const char *p = rule + k;
	while (*p == ' ' || *p == '\t')
		p++;
	_cleanup_free_ char *path = reroot(root, p);
	char *s = NULL;
	cr_assert(asprintf(&s, "%.*s %s", (int)k, rule, path) > 0);
	/* trailing spaces of " ; " splitting */
	for (size_t n = strlen(s); n > 0 && s[n - 1] == ' '; n--)
		s[n - 1] = '\0';
	return s;
}

static void mkparents(const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0)
			cr_assert_eq(errno, EEXIST, "mkdir %s: %s", p, strerror(errno));
		*s = '/';
	}
}

Test(run_conformance, verdicts_process_side_agrees, .timeout = 300)
{
	struct dsh_vectors v;
	dsh_vectors_load("verdicts.tsv", &v);
	_cleanup_free_ char *probe = dsh_test_helper("probe_access");
	size_t ran = 0;
	for (size_t i = 0; i < v.n_cases; i++) {
		struct dsh_vector *c = &v.cases[i];
		cr_assert_eq(c->n_fields, 5, "verdicts.tsv:%d: 5 fields", c->line);
		char *root = dsh_test_mkdtemp();
		_cleanup_free_ char *ws = reroot(root, v.workspace);
		_cleanup_free_ char *tmpdir = reroot(root, v.tmpdir ? v.tmpdir : "/tmp");
		_cleanup_free_ char *path = reroot(root, c->fields[3]);
		const char *op = c->fields[2];
		bool want_allow = strcmp(c->fields[4], "allow") == 0;

		/* The environment: the vectors' variables, re-rooted; nothing else of ours. */
		_cleanup_strv_ char **env = NULL;
		dsh_strv_push(&env, "PATH=/usr/bin:/bin");
		dsh_strv_pushf(&env, "TMPDIR=%s", tmpdir);
		for (size_t k = 0; v.env && v.env[k]; k++)
			dsh_strv_push_take(&env, reroot_env(root, v.env[k]));

		/* The tree: workspace, TMPDIR, every env dir, and the probed path as a file. */
		mkparents(ws);
		mkdir(ws, 0755);
		mkdir(tmpdir, 0755);
		for (size_t k = 0; env[k]; k++) {
			const char *eq = strchr(env[k], '=');
			if (eq[1] == '/' && strncmp(eq + 1, root, strlen(root)) == 0) {
				mkparents(eq + 1);
				mkdir(eq + 1, 0755);
			}
		}
		struct stat st;
		bool is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
		if (!is_dir) {
			mkparents(path);
			dsh_test_write_file(path, "orig\n");
		}

		/* The rules, re-rooted; the fence's verdict on the same policy. */
		_cleanup_strv_ char **rules = NULL;
		if (strcmp(c->fields[1], "-") != 0) {
			_cleanup_free_ char *all = strdup(c->fields[1]);
			char *save = NULL;
			for (char *r = strtok_r(all, ";", &save); r; r = strtok_r(NULL, ";", &save))
				dsh_strv_push_take(&rules, reroot_rule(root, r));
		}
		struct dsh_config cfg;
		dsh_config_init(&cfg);
		cr_assert_eq(dsh_mode_from_string(c->fields[0], &cfg.mode), 0);
		cfg.workspace = strdup(ws);
		cfg.access = dsh_strv_copy(rules);
		cfg.protect_defaults = !v.protect_defaults_off;
		struct dsh_policy *p = NULL;
		struct dsh_error *err = NULL;
		cr_assert_eq(dsh_policy_new(&cfg, env, ws, &p, &err), 0, "verdicts.tsv:%d: %s", c->line,
			     err ? err->msg : "");
		_cleanup_free_ char *canon = NULL;
		cr_assert_eq(dsh_path_resolve(ws, path, &canon, &err), 0);
		struct dsh_verdict vd;
		cr_assert_eq(dsh_policy_verdict(p, strcmp(op, "read") == 0 ? DSH_OP_READ : DSH_OP_WRITE, canon, &vd), 0);
		cr_assert_eq(vd.allow, want_allow, "verdicts.tsv:%d: the fence says %s on the re-rooted tree",
			     c->line, vd.allow ? "allow" : "deny");
		dsh_policy_free(p);
		dsh_config_clear(&cfg);

		/* The process side. */
		char *argv[64];
		int n = 0;
		argv[n++] = (char *)dsh_test_dshbox();
		argv[n++] = "run";
		argv[n++] = "--mode";
		argv[n++] = c->fields[0];
		argv[n++] = "--workspace";
		argv[n++] = ws;
		if (dsh_vectors_config(&v)) {
			argv[n++] = "--config";
			argv[n++] = (char *)dsh_vectors_config(&v);
		}
		argv[n++] = "--cwd";
		argv[n++] = ws;
		for (size_t k = 0; rules && rules[k] && n < 56; k++) {
			argv[n++] = "--access";
			argv[n++] = rules[k];
		}
		argv[n++] = "--";
		argv[n++] = probe;
		argv[n++] = (char *)op;
		argv[n++] = path;
		if (strcmp(op, "write") == 0)
			argv[n++] = "written\n";
		argv[n] = NULL;
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
		const char *what = c->fields[1];
		if (want_allow) {
			cr_expect_str_eq(r.out, "ok\n", "verdicts.tsv:%d (%s, %s %s): allowed, but the probe says %s%s",
					 c->line, what, op, c->fields[3], r.out, r.err);
			cr_expect_str_eq(r.err, "", "verdicts.tsv:%d: a successful run prints nothing of dshbox's: %s",
					 c->line, r.err);
			if (strcmp(op, "write") == 0) {
				_cleanup_free_ char *landed = NULL;
				if (is_dir)
					cr_assert(asprintf(&landed, "%s/.probe-write", path) > 0);
				_cleanup_free_ char *content = dsh_test_read_file(landed ? landed : path);
				cr_expect_str_eq(content ? content : "", "written\n",
						 "verdicts.tsv:%d: the allowed write did not land on the host", c->line);
			}
		} else if (strcmp(op, "read") == 0) {
			cr_expect_str_eq(r.out, "EACCES\n", "verdicts.tsv:%d (%s, read %s): denied read gave %s%s",
					 c->line, what, c->fields[3], r.out, r.err);
		} else {
			cr_expect(strcmp(r.out, "EROFS\n") == 0 || strcmp(r.out, "EACCES\n") == 0,
				  "verdicts.tsv:%d (%s, write %s): denied write gave %s%s", c->line, what, c->fields[3],
				  r.out, r.err);
			_cleanup_free_ char *content = dsh_test_read_file(path);
			if (!is_dir)
				cr_expect_str_eq(content ? content : "", "orig\n",
						 "verdicts.tsv:%d: a denied write changed the host file", c->line);
		}
		dsh_proc_clear(&r);
		dsh_test_rmtree(root);
		free(root);
		ran++;
	}
	fprintf(stderr, "conformance: verdicts.tsv through 'dshbox run': %zu vector lines ran\n", ran);
	cr_expect_eq(ran, v.n_cases);
	dsh_vectors_clear(&v);
}
