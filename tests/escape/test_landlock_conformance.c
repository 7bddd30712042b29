/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The landlock backend keeps every promise its --report makes (SPEC 4): each line of verdicts.tsv,
 * re-rooted under a fresh tree in /var/tmp, is run with `dshbox run --backend landlock` whenever
 * the backend's describe() claims the line's rules for that operation:
 *   full                       -> read and write claimed
 *   partial, with a loss that is not reading or writing (socket connect(), a metadata change)
 *                              -> read and write claimed
 *   partial, the target stays readable or writable, can be created or truncated
 *                              -> nothing claimed; the line is counted as unclaimed, not as passed
 * Claimed lines run with --allow-degraded: what a partial rule loses is judged here, not refused.
 * The fence's verdict is the expected one; the kernel must agree exactly (EACCES for a denial).
 * (The re-rooting mirrors tests/integration/test_run_conformance.c.)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/backend.h"
#include "dshbox/dshbox.h"
#include "policy/policy.h"
#include "tests/lib/harness.h"

static char *reroot(const char *root, const char *path)
{
	char *s = NULL;
	if (path[0] == '/')
		cr_assert(asprintf(&s, "%s%s", root, path) > 0);
	else
		s = strdup(path);
	return s;
}

static char *reroot_kv(const char *root, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char *s = NULL;
	if (eq[1] == '/')
		cr_assert(asprintf(&s, "%.*s%s%s", (int)(eq - kv + 1), kv, root, eq + 1) > 0);
	else
		s = strdup(kv);
	return s;
}

static char *reroot_rule(const char *root, const char *rule)
{
	while (*rule == ' ')
		rule++;
	size_t k = strcspn(rule, " \t");
	const char *p = rule + k + strspn(rule + k, " \t");
	_cleanup_free_ char *path = reroot(root, p);
	char *s = NULL;
	cr_assert(asprintf(&s, "%.*s %s", (int)k, rule, path) > 0);
	for (size_t n = strlen(s); n > 0 && s[n - 1] == ' '; n--)
		s[n - 1] = '\0';
	return s;
}

static void mkdirs(const char *path, bool last)
{
	_cleanup_free_ char *p = strdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	if (last)
		mkdir(p, 0755);
}

/* Whether describe() claims every rule of the policy (reads and writes alike). */
static bool claimed(const struct dsh_policy *p, const struct dsh_run_options *o)
{
	const struct dsh_backend *b = dsh_backend_get(DSH_BACKEND_LANDLOCK);
	struct dsh_description d = { 0 };
	struct dsh_error *err = NULL;
	void *plan = NULL;
	cr_assert_eq(b->compile(p, o, &plan, &err), 0, "%s", err ? err->msg : "");
	cr_assert_eq(b->describe(p, plan, &d, &err), 0);
	b->free(plan);
	bool ok = true;
	for (size_t i = 0; i < d.n_rules; i++) {
		const char *lost = d.rules[i].lost;
		if (d.rules[i].level == DSH_ENFORCE_PARTIAL && lost &&
		    (strstr(lost, "stays readable") || strstr(lost, "stays writable") || strstr(lost, "can be created") ||
		     strstr(lost, "truncated")))
			ok = false;
	}
	dsh_description_clear(&d);
	return ok;
}

Test(landlock_conformance, every_claimed_verdict_holds, .timeout = 300)
{
	dsh_test_require_landlock();
	struct dsh_vectors v;
	dsh_vectors_load("verdicts.tsv", &v);
	_cleanup_free_ char *probe = dsh_test_helper("probe_access");
	size_t ran = 0, unclaimed = 0;
	for (size_t i = 0; i < v.n_cases; i++) {
		struct dsh_vector *c = &v.cases[i];
		char *root = dsh_test_mkdtemp();
		_cleanup_free_ char *ws = reroot(root, v.workspace);
		_cleanup_free_ char *tmpdir = reroot(root, v.tmpdir ? v.tmpdir : "/tmp");
		_cleanup_free_ char *path = reroot(root, c->fields[3]);
		const char *op = c->fields[2];
		enum dsh_op dop = strcmp(op, "read") == 0 ? DSH_OP_READ : DSH_OP_WRITE;
		bool want_allow = strcmp(c->fields[4], "allow") == 0;
		_cleanup_strv_ char **env = NULL;
		dsh_strv_push(&env, "PATH=/usr/bin:/bin");
		dsh_strv_pushf(&env, "TMPDIR=%s", tmpdir);
		for (size_t k = 0; v.env && v.env[k]; k++)
			dsh_strv_push_take(&env, reroot_kv(root, v.env[k]));
		mkdirs(ws, true);
		mkdirs(tmpdir, true);
		for (size_t k = 0; env[k]; k++) {
			const char *eq = strchr(env[k], '=');
			if (strncmp(eq + 1, root, strlen(root)) == 0)
				mkdirs(eq + 1, true);
		}
		struct stat st;
		bool is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
		if (!is_dir) {
			mkdirs(path, false);
			dsh_test_write_file(path, "orig\n");
		}
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
		cr_assert_eq(dsh_policy_new(&cfg, env, ws, &p, &err), 0, "verdicts.tsv:%d", c->line);
		struct dsh_run_options ro;
		cr_assert_eq(dsh_run_options_init(&ro, &cfg, env, &err), 0);
		bool claim = claimed(p, &ro);
		dsh_run_options_clear(&ro);
		dsh_policy_free(p);
		dsh_config_clear(&cfg);
		if (!claim) {
			unclaimed++;
			dsh_test_rmtree(root);
			free(root);
			continue;
		}
		char *argv[64];
		int n = 0;
		argv[n++] = (char *)dsh_test_dshbox();
		argv[n++] = "run";
		argv[n++] = "--backend";
		argv[n++] = "landlock";
		argv[n++] = "--allow-degraded";
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
		if (dop == DSH_OP_WRITE)
			argv[n++] = "written\n";
		argv[n] = NULL;
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
		const char *want = want_allow ? "ok\n" : "EACCES\n";
		cr_expect_str_eq(r.out, want, "verdicts.tsv:%d (%s %s, %s %s): the landlock backend says %s%s", c->line,
				 c->fields[0], c->fields[1], op, c->fields[3], r.out, r.err);
		_cleanup_free_ char *landed = NULL;
		if (is_dir)
			cr_assert(asprintf(&landed, "%s/.probe-write", path) > 0);
		_cleanup_free_ char *content = dsh_test_read_file(landed ? landed : path);
		if (dop == DSH_OP_WRITE && want_allow)
			cr_expect_str_eq(content ? content : "", "written\n", "verdicts.tsv:%d: the write did not land", c->line);
		else if (!is_dir)
			cr_expect_str_eq(content ? content : "", "orig\n", "verdicts.tsv:%d: the host file changed", c->line);
		dsh_proc_clear(&r);
		dsh_test_rmtree(root);
		free(root);
		ran++;
	}
	fprintf(stderr, "conformance: verdicts.tsv through the landlock backend: %zu claimed lines ran, %zu unclaimed\n",
		ran, unclaimed);
	cr_expect_gt(ran, v.n_cases / 2, "the landlock backend claims too little to be worth shipping");
	dsh_vectors_clear(&v);
}

/* A -- glob outside the writable roots: every match found at start is closed, its siblings open. */
Test(landlock_conformance, glob_outside_the_roots_is_expanded)
{
	char *top = dsh_test_mkdtemp();
	char *ws = NULL, *key = NULL, *deep = NULL, *ok = NULL, *rule = NULL;
	cr_assert(asprintf(&ws, "%s/ws", top) > 0 && asprintf(&key, "%s/keys/a/server.pem", top) > 0 &&
		  asprintf(&deep, "%s/keys/a/b/c/client.pem", top) > 0 && asprintf(&ok, "%s/keys/a/readme", top) > 0 &&
		  asprintf(&rule, "-- %s/keys/**/*.pem", top) > 0);
	mkdirs(ws, true);
	dsh_test_write_file(key, "SECRET\n");
	dsh_test_write_file(deep, "SECRET\n");
	dsh_test_write_file(ok, "hello\n");
	_cleanup_free_ char *probe = dsh_test_helper("probe_access");
	const char *files[] = { key, deep, ok };
	const char *want[] = { "EACCES\n", "EACCES\n", "ok\n" };
	for (size_t i = 0; i < 3; i++) {
		const char *argv[] = { dsh_test_dshbox(), "run", "--backend", "landlock", "--workspace", ws, "--cwd", ws,
				       "--access", rule, "--", probe, "read", files[i], NULL };
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run((char *const *)argv, NULL, NULL, &r), 0);
		cr_expect_str_eq(r.out, want[i], "%s: %s%s", files[i], r.out, r.err);
		dsh_proc_clear(&r);
	}
	dsh_test_rmtree(top);
	free(top), free(ws), free(key), free(deep), free(ok), free(rule);
}
