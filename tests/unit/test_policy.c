/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/path.h"
#include "policy/policy.h"
#include "tests/lib/harness.h"

static struct dsh_policy *load(const char *workspace, enum dsh_mode mode, char **env, const char *const *rules)
{
	struct dsh_config c;
	dsh_config_init(&c);
	c.mode = mode;
	c.workspace = strdup(workspace);
	for (size_t i = 0; rules && rules[i]; i++)
		dsh_strv_push(&c.access, rules[i]);
	struct dsh_policy *p = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_policy_new(&c, env, "/", &p, &err), 0, "%s", err ? err->msg : "");
	dsh_config_clear(&c);
	return p;
}

static bool allowed(struct dsh_policy *p, enum dsh_op op, const char *path)
{
	struct dsh_verdict v;
	cr_assert_eq(dsh_policy_verdict(p, op, path, &v), 0);
	return v.allow;
}

Test(policy, normalize_is_lexical)
{
	const char *cases[][3] = {
		{ "/ws", "a/./b//c/", "/ws/a/b/c" }, { "/ws", "../../..", "/" },    { "/ws", "/x/../y", "/y" },
		{ NULL, "/", "/" },                   { "/", "a", "/a" },           { "/ws", "a/..", "/ws" },
		{ "/ws", "./config/../.env", "/ws/.env" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *n = dsh_path_normalize(cases[i][0], cases[i][1]);
		cr_expect_str_eq(n, cases[i][2], "%s + %s", cases[i][0], cases[i][1]);
	}
}

Test(policy, path_order_puts_parents_first)
{
	cr_expect_lt(dsh_path_compare("/a", "/a/b"), 0);
	cr_expect_lt(dsh_path_compare("/a/b", "/a-b"), 0);
	cr_expect_gt(dsh_path_compare("/a-b", "/a/z"), 0);
	cr_expect_eq(dsh_path_compare("/a", "/a"), 0);
	cr_expect(dsh_path_is_beneath("/a/b", "/a"));
	cr_expect_not(dsh_path_is_beneath("/a-b", "/a"));
	cr_expect_not(dsh_path_is_beneath("/ab", "/a"));
	cr_expect(dsh_path_is_beneath("/anything", "/"));
}

Test(policy, a_deny_rule_through_a_symlink_protects_both_spellings)
{
	char *tree = dsh_test_mkdtemp();
	char real[512], link[512], secret[512];
	snprintf(real, sizeof(real), "%s/real", tree);
	snprintf(link, sizeof(link), "%s/link", tree);
	snprintf(secret, sizeof(secret), "%s/real/secret/key", tree);
	dsh_test_write_file(secret, "k");
	cr_assert_eq(symlink(real, link), 0);

	char rule[600];
	snprintf(rule, sizeof(rule), "-- %s/secret", link);
	const char *rules[] = { rule, NULL };
	char *env[] = { NULL };
	struct dsh_policy *p = load(tree, DSH_MODE_WORKSPACE_WRITE, env, rules);
	cr_expect_eq(p->rules[0].n_match, 2, "both spellings compiled");
	char canon[600], spelled[600];
	snprintf(canon, sizeof(canon), "%s/real/secret/key", tree);
	snprintf(spelled, sizeof(spelled), "%s/link/secret/key", tree);
	cr_expect_not(allowed(p, DSH_OP_READ, canon));
	cr_expect_not(allowed(p, DSH_OP_READ, spelled));
	dsh_policy_free(p);
	dsh_test_rmtree(tree);
	free(tree);
}

/* The broker's pruning question (SPEC 3.12): never false above a path a rule covers. */
Test(policy, may_protect_below_is_false_only_where_no_rule_reaches)
{
	const char *rules[] = { "-- keys/*.pem", "r- b/secret", "r- deep/**/cfg/*.conf", "rw /nonexistent-dshbox/rw", NULL };
	char *env[] = { NULL };
	struct dsh_policy *p = load("/nonexistent-dshbox/ws", DSH_MODE_WORKSPACE_WRITE, env, rules);
	struct {
		const char *dir;
		bool may;
	} cases[] = {
		{ "/nonexistent-dshbox/ws", true },          { "/nonexistent-dshbox/ws/keys", true },
		{ "/nonexistent-dshbox/ws/keys/sub", false }, { "/nonexistent-dshbox/ws/keys/a.pem", true },
		{ "/nonexistent-dshbox/ws/b", true },         { "/nonexistent-dshbox/ws/b/secret/x", true },
		{ "/nonexistent-dshbox/ws/b/other", false },   { "/nonexistent-dshbox/ws/deep/y/cfg", true },
		{ "/nonexistent-dshbox/rw/src", false },          { "/nonexistent-dshbox/other", false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		cr_expect_eq(dsh_policy_may_protect_below(p, cases[i].dir), cases[i].may, "%s", cases[i].dir);

	/* The default-protected names of each writable root (SPEC 1.6) are rules too. */
	cr_expect(dsh_policy_may_protect_below(p, "/nonexistent-dshbox/rw/.git"));
	cr_expect_not(dsh_policy_may_protect_below(p, "/nonexistent-dshbox/ws/deep-er"));

	/* Every ancestor of a path a rule covers may be protected below. */
	const char *covered[] = { "/nonexistent-dshbox/ws/keys/k.pem", "/nonexistent-dshbox/ws/b/secret",
				  "/nonexistent-dshbox/ws/deep/r/cfg/a.conf/z" };
	for (size_t i = 0; i < ARRAY_SIZE(covered); i++) {
		cr_assert_not(allowed(p, DSH_OP_WRITE, covered[i]));
		char dir[256];
		snprintf(dir, sizeof(dir), "%s", covered[i]);
		for (char *s; (s = strrchr(dir, '/')) && s != dir;) {
			*s = '\0';
			cr_expect(dsh_policy_may_protect_below(p, dir), "%s above %s", dir, covered[i]);
		}
	}
	dsh_policy_free(p);
}

/*
 * A file written at a name on the way to an r-/-- target is denied, naming the rule it would go
 * around; a directory there is not, and neither is a file anywhere else the path's rules allow.
 */
Test(policy, only_a_directory_stands_on_the_way_to_a_protected_target)
{
	const char *rules[] = { "-- keys/*.pem", "r- b/secret", NULL };
	char *env[] = { NULL };
	struct dsh_policy *p = load("/nonexistent-dshbox/ws", DSH_MODE_WORKSPACE_WRITE, env, rules);
	struct {
		const char *path;
		bool is_dir, allow;
		const char *rule;
	} cases[] = {
		{ "/nonexistent-dshbox/ws/.git", false, false, "r- /nonexistent-dshbox/ws/.git/hooks" },
		{ "/nonexistent-dshbox/ws/.git", true, true, NULL },
		{ "/nonexistent-dshbox/ws/keys", false, false, "-- keys/*.pem" },
		{ "/nonexistent-dshbox/ws/b", false, false, "r- b/secret" },
		{ "/nonexistent-dshbox/ws/b", true, true, NULL },
		{ "/nonexistent-dshbox/ws/b/secret", false, false, "r- b/secret" },
		{ "/nonexistent-dshbox/ws/keys/notes.txt", false, true, NULL },
		{ "/nonexistent-dshbox/ws/.gitignore", false, true, NULL },
		{ "/nonexistent-dshbox/ws/sub/.git", false, true, NULL },
		{ "/nonexistent-dshbox/ws", true, true, NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dsh_verdict v;
		cr_assert_eq(dsh_policy_decide_file(p, DSH_OP_WRITE, cases[i].path, NULL, cases[i].is_dir, &v), 0);
		cr_expect_eq(v.allow, cases[i].allow, "%s (dir %d)", cases[i].path, cases[i].is_dir);
		if (cases[i].rule)
			cr_expect(v.rule && strcmp(dsh_rule_text(v.rule), cases[i].rule) == 0, "%s: rule %s, want %s",
				  cases[i].path, v.rule ? dsh_rule_text(v.rule) : "none", cases[i].rule);
		/* reads are the path's own verdict */
		struct dsh_verdict rd, plain;
		cr_assert_eq(dsh_policy_decide_file(p, DSH_OP_READ, cases[i].path, NULL, false, &rd), 0);
		cr_assert_eq(dsh_policy_verdict(p, DSH_OP_READ, cases[i].path, &plain), 0);
		cr_expect_eq(rd.allow, plain.allow, "read %s", cases[i].path);
	}
	struct dsh_verdict v;
	cr_assert_eq(dsh_policy_decide_file(p, DSH_OP_WRITE, "/nonexistent-dshbox/ws/.git", NULL, false, &v), 0);
	_cleanup_free_ char *why = dsh_verdict_explain(&v);
	cr_expect(v.on_the_way && why && strstr(why, "on the way") && strstr(why, ".git/hooks"), "%s", why);
	/* the path's own verdict is unchanged: a directory on the way may be written into */
	cr_expect(allowed(p, DSH_OP_WRITE, "/nonexistent-dshbox/ws/.git"));
	dsh_policy_free(p);
}

/* A symlink leads a rule around when the rule covers below its name what it does not below its target. */
Test(policy, a_link_leads_a_rule_around_where_it_reaches_less)
{
	const char *rules[] = { "r- conf/**/*.toml", "-- **/*.pem", NULL };
	char *env[] = { NULL };
	struct dsh_policy *p = load("/nonexistent-dshbox/ws", DSH_MODE_WORKSPACE_WRITE, env, rules);
	struct {
		const char *name, *target, *rule;
	} cases[] = {
		{ "/nonexistent-dshbox/ws/conf/sub", "/nonexistent-dshbox/ws/mine", "r- conf/**/*.toml" },
		{ "/nonexistent-dshbox/ws/conf/sub", "/nonexistent-dshbox/ws/conf/real", NULL },
		{ "/nonexistent-dshbox/ws/conf/a/b", "/nonexistent-dshbox/ws/conf", NULL },
		{ "/nonexistent-dshbox/ws/venv/lib64", "/nonexistent-dshbox/ws/venv/lib", NULL },
		{ "/nonexistent-dshbox/ws/venv/lib64", "/usr/lib", "-- **/*.pem" },
		{ "/nonexistent-dshbox/ws/conf/x", "/usr/lib", "r- conf/**/*.toml" },
		{ "/nonexistent-dshbox/elsewhere/x", "/usr/lib", NULL },
		{ "/nonexistent-dshbox/ws/a.pem", "/nonexistent-dshbox/ws/b", "-- **/*.pem" }, /* covered itself */
		{ "/nonexistent-dshbox/ws/.git", "/tmp/g", "-- **/*.pem" }, /* the first of two */
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct dsh_rule *r = dsh_policy_redirected(p, cases[i].name, cases[i].target);
		if (cases[i].rule)
			cr_expect(r && strcmp(dsh_rule_text(r), cases[i].rule) == 0, "%s -> %s: rule %s, want %s",
				  cases[i].name, cases[i].target, r ? dsh_rule_text(r) : "none", cases[i].rule);
		else
			cr_expect_null(r, "%s -> %s: rule %s", cases[i].name, cases[i].target, r ? dsh_rule_text(r) : "");
	}
	dsh_policy_free(p);
}

Test(policy, writable_roots_are_canonical_deduplicated_and_sorted)
{
	char *tree = dsh_test_mkdtemp();
	char ws[512], alias[512], rule1[600], rule2[600];
	snprintf(ws, sizeof(ws), "%s/ws", tree);
	snprintf(alias, sizeof(alias), "%s/alias", tree);
	mkdir(ws, 0755);
	cr_assert_eq(symlink(ws, alias), 0);
	snprintf(rule1, sizeof(rule1), "rw %s", alias);
	snprintf(rule2, sizeof(rule2), "rw %s/../ws", ws);
	const char *rules[] = { rule1, rule2, "rw /var/tmp", NULL };
	char *env[] = { "TMPDIR=/tmp", NULL };
	struct dsh_policy *p = load(ws, DSH_MODE_WORKSPACE_WRITE, env, rules);
	/* workspace == both rw rules; /tmp == TMPDIR: three roots remain. */
	cr_expect_eq(p->n_roots, 3, "roots: %zu", p->n_roots);
	for (size_t i = 1; i < p->n_roots; i++)
		cr_expect_lt(dsh_path_compare(p->roots[i - 1].path, p->roots[i].path), 0);
	dsh_policy_free(p);
	dsh_test_rmtree(tree);
	free(tree);
}

Test(policy, nested_roots_are_warned_by_precedence)
{
	const char *rules[] = { "rw /srv/data", "rw /srv/ro/cache", "-- /srv/data", "r- /srv/ro", NULL };
	char *env[] = { NULL };
	struct dsh_policy *p = load("/srv/ws", DSH_MODE_WORKSPACE_WRITE, env, rules);
	char *const *w = dsh_policy_warnings(p);
	cr_assert_eq(dsh_strv_len(w), 2);
	cr_expect(strstr(w[0], "/srv/data") && strstr(w[0], "neither readable nor writable"), "%s", w[0]);
	cr_expect(strstr(w[1], "/srv/ro/cache") && strstr(w[1], "read-only there"), "%s", w[1]);
	cr_expect_not(allowed(p, DSH_OP_WRITE, "/srv/data/x"));
	cr_expect_not(allowed(p, DSH_OP_WRITE, "/srv/ro/cache/x"));
	cr_expect(allowed(p, DSH_OP_READ, "/srv/ro/cache/x"));
	dsh_policy_free(p);
}

Test(policy, read_only_ignores_rw_and_danger_keeps_denies)
{
	const char *rules[] = { "rw /srv/cache", "-- /srv/secret", "r- /etc", NULL };
	char *env[] = { NULL };
	struct dsh_policy *p = load("/srv/ws", DSH_MODE_READ_ONLY, env, rules);
	cr_expect_eq(p->n_roots, 0);
	cr_expect_not(allowed(p, DSH_OP_WRITE, "/srv/cache/x"));
	cr_expect_not(allowed(p, DSH_OP_WRITE, "/srv/ws/x"));
	dsh_policy_free(p);

	p = load("/srv/ws", DSH_MODE_DANGER_FULL_ACCESS, env, rules);
	cr_expect(allowed(p, DSH_OP_WRITE, "/var/anything"));
	cr_expect_not(allowed(p, DSH_OP_READ, "/srv/secret/x"));
	cr_expect_not(allowed(p, DSH_OP_WRITE, "/etc/hosts"));
	dsh_policy_free(p);
}

Test(policy, config_access_as_list_or_block_are_the_same)
{
	const char *list = "access:\n  - \"rw {{ env.HOME }}/.cache\"\n  - \"-- **/*.pem\"\n";
	const char *block = "access: |-\n  rw {{ env.HOME }}/.cache\n\n  -- **/*.pem\n";
	char *env[] = { "HOME=/home/u", NULL };
	struct dsh_policy *ps[2];
	const char *docs[2] = { list, block };
	for (int i = 0; i < 2; i++) {
		struct dsh_config c;
		dsh_config_init(&c);
		c.workspace = strdup("/ws");
		c.protect_defaults = false; /* the rules written, nothing added */
		_cleanup_error_ struct dsh_error *err = NULL;
		cr_assert_eq(dsh_config_load_string(&c, docs[i], strlen(docs[i]), "test.yml", &err), 0, "%s",
			     err ? err->msg : "");
		cr_assert_eq(dsh_policy_new(&c, env, "/", &ps[i], &err), 0, "%s", err ? err->msg : "");
		dsh_config_clear(&c);
	}
	cr_assert_eq(ps[0]->n_rules, 2);
	cr_assert_eq(ps[1]->n_rules, 2);
	for (int i = 0; i < 2; i++)
		cr_expect_str_eq(ps[0]->rules[i].canonical, ps[1]->rules[i].canonical);
	dsh_policy_free(ps[0]);
	dsh_policy_free(ps[1]);
}

Test(policy, config_fields_are_read)
{
	const char *doc = "mode: read-only\nworkspace: /srv/ws\nnetwork: off\nprobeTimeoutMs: 250\n"
			  "diffBasisMaxBytes: 100\nmaxMasks: 7\nprotectSockets: false\ncwd: /srv\n"
			  "runnerCommand: [bwrap, --verbose]\nrunnerFailureSignatures: [\"bwrap: \"]\n";
	struct dsh_config c;
	dsh_config_init(&c);
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_config_load_string(&c, doc, strlen(doc), "t.yml", &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(c.mode, DSH_MODE_READ_ONLY);
	cr_expect_str_eq(c.workspace, "/srv/ws");
	cr_expect_not(c.network);
	cr_expect_eq(c.probe_timeout_ms, 250);
	cr_expect_eq(c.diff_basis_max_bytes, 100);
	cr_expect_eq(c.max_masks, 7);
	cr_expect_not(c.protect_sockets);
	cr_expect_str_eq(c.cwd, "/srv");
	cr_expect_eq(dsh_strv_len(c.runner_command), 2);
	cr_expect_str_eq(c.runner_failure_signatures[0], "bwrap: ");
	dsh_config_clear(&c);
}

/* SPEC 11: backend is a configuration key; a runnerCommand the backend would not use is an error
   naming both, not a runner silently ignored. */
Test(policy, backend_key_and_the_runner_it_needs)
{
	static const char *const cases[][2] = {
		{ "backend: landlock\n", NULL },
		{ "backend: runner\nrunnerCommand: [bwrap]\nrunnerFailureSignatures: [\"bwrap: \"]\n", NULL },
		{ "backend: bubblewrap\n", "backend: unknown backend 'bubblewrap'" },
		{ "runnerCommand: [bwrap]\nrunnerFailureSignatures: [\"bwrap: \"]\n",
		  "runnerCommand: set, but the backend is auto; only backend runner uses it" },
		{ "backend: linux-ns\nrunnerCommand: [bwrap]\nrunnerFailureSignatures: [x]\n",
		  "runnerCommand: set, but the backend is linux-ns" },
	};
	static const enum dsh_backend_id want[] = { DSH_BACKEND_LANDLOCK, DSH_BACKEND_RUNNER };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dsh_config c;
		struct dsh_run_options o;
		char *env[] = { NULL };
		dsh_config_init(&c);
		struct dsh_error *e = NULL;
		int r = dsh_config_load_string(&c, cases[i][0], strlen(cases[i][0]), "t.yml", &e);
		if (r >= 0)
			r = dsh_run_options_init(&o, &c, env, &e);
		if (!cases[i][1]) {
			cr_expect_eq(r, 0, "%s: %s", cases[i][0], e ? e->msg : "");
			cr_expect_eq(o.backend, want[i], "%s", cases[i][0]);
			dsh_run_options_clear(&o);
		} else {
			cr_expect_lt(r, 0, "%s", cases[i][0]);
			cr_expect(e && strstr(e->msg, cases[i][1]), "%s: %s", cases[i][0], e ? e->msg : "(no error)");
		}
		dsh_error_free(e);
		dsh_config_clear(&c);
	}
}

/* A relative rule that climbs out of the workspace holds as written and is said at load. */
Test(policy, a_relative_rule_leaving_the_workspace_is_warned)
{
	char *henv[] = { "HOME=/home/u", NULL };
	const char *rules[] = { "rw ../../../../etc", "-- sub/../x", "r- ../ws/y", "-- /etc/shadow", "r- {{ env.HOME }}/z",
				NULL };
	struct dsh_policy *p = load("/srv/ws", DSH_MODE_WORKSPACE_WRITE, henv, rules);
	char *const *w = dsh_policy_warnings(p);
	size_t n = 0;
	for (size_t i = 0; w && w[i]; i++)
		if (strstr(w[i], "is relative but resolves to")) {
			n++;
			cr_expect_str_eq(w[i], "rule \"rw ../../../../etc\" is relative but resolves to /etc, outside the "
					       "workspace /srv/ws");
		}
	cr_expect_eq(n, 1, "only the relative rule that leaves the workspace");
	cr_expect(allowed(p, DSH_OP_WRITE, "/etc/x"), "the rule holds as written");
	dsh_policy_free(p);
}

/* An error names the line the user looks at: the key of a block value, the line of a NUL byte. */
Test(policy, config_errors_name_the_right_line)
{
	static const struct {
		const char *doc;
		size_t len;
		const char *want;
	} cases[] = {
		{ "mode: read-only\nnetwork:\n  - a\n  - b\n", 0, "t.yml:2: network: expected on, off or a mapping with allowDomains and denyDomains" },
		{ "mode: read-only\nbogus:\n  - a\n", 0, "t.yml:2: bogus: unknown key" },
		{ "mode: read-only\nnetwork: off\nwork\0space: x\n", 40, "t.yml:3: control characters are not allowed" },
		{ "mode: read-only\naccess:\n  - \"-- a\"\n  - \"bad rule\"\n", 0, "t.yml:4: rule \"bad rule\"" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dsh_config c;
		dsh_config_init(&c);
		struct dsh_error *e = NULL;
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].doc);
		int r = dsh_config_load_string(&c, cases[i].doc, len, "t.yml", &e);
		if (r >= 0) {
			char *env[] = { NULL };
			struct dsh_policy *p = NULL;
			c.workspace = strdup("/srv/ws");
			r = dsh_policy_new(&c, env, "/", &p, &e);
			dsh_policy_free(p);
		}
		cr_expect_lt(r, 0, "case %zu", i);
		cr_expect(e && strstr(e->msg, cases[i].want), "case %zu: %s", i, e ? e->msg : "(no error)");
		dsh_error_free(e);
		dsh_config_clear(&c);
	}
}

Test(policy, tmpdir_is_a_writable_root)
{
	char *env[] = { "TMPDIR=/var/./tmp/../tmp", NULL };
	struct dsh_policy *p = load("/srv/ws", DSH_MODE_WORKSPACE_WRITE, env, NULL);
	cr_expect_str_eq(p->tmpdir, "/var/tmp");
	cr_expect(allowed(p, DSH_OP_WRITE, "/var/tmp/x"));
	cr_expect(allowed(p, DSH_OP_WRITE, "/tmp/x"));
	cr_expect_not(allowed(p, DSH_OP_WRITE, "/var/x"));
	dsh_policy_free(p);
}

/* SPEC 1.5 tmp and nestedSandbox: read, defaults, bad values named; tmp: private drops the root. */
Test(policy, tmp_and_nested_sandbox_keys)
{
	struct dsh_config c;
	dsh_config_init(&c);
	cr_expect_eq(c.tmp, DSH_TMP_HOST);
	cr_expect_not(c.nested_sandbox);
	_cleanup_error_ struct dsh_error *err = NULL;
	const char *doc = "tmp: private\nnestedSandbox: true\n";
	cr_assert_eq(dsh_config_load_string(&c, doc, strlen(doc), "t.yml", &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(c.tmp, DSH_TMP_PRIVATE);
	cr_expect(c.nested_sandbox);
	struct dsh_run_options o;
	char *env[] = { NULL };
	cr_assert_eq(dsh_run_options_init(&o, &c, env, &err), 0, "%s", err ? err->msg : "");
	cr_expect(o.nested_sandbox);
	dsh_run_options_clear(&o);
	c.workspace = strdup("/srv/ws");
	struct dsh_policy *p = NULL;
	cr_assert_eq(dsh_policy_new(&c, env, "/", &p, &err), 0, "%s", err ? err->msg : "");
	cr_expect_not(allowed(p, DSH_OP_WRITE, "/tmp/x"), "tmp: private: host /tmp is outside the roots");
	cr_expect(allowed(p, DSH_OP_WRITE, "/srv/ws/x"));
	dsh_policy_free(p);
	dsh_config_clear(&c);
	static const char *const bad[][2] = { { "tmp: shared\n", "tmp: expected host or private, got 'shared'" },
					      { "nestedSandbox: yes\n", "nestedSandbox: expected true or false" } };
	for (size_t i = 0; i < 2; i++) {
		dsh_config_init(&c);
		struct dsh_error *e = NULL;
		cr_expect_lt(dsh_config_load_string(&c, bad[i][0], strlen(bad[i][0]), "t.yml", &e), 0, "%s", bad[i][0]);
		cr_expect(e && strstr(e->msg, bad[i][1]), "%s: %s", bad[i][0], e ? e->msg : "(no error)");
		dsh_error_free(e);
		dsh_config_clear(&c);
	}
}

Test(policy, rules_in_one_directory_resolve_a_symlink_as_the_last_component)
{
	char *tree = dsh_test_mkdtemp();
	char real[512], alias[512], plain[512], r1[600], r2[600], r3[600];
	snprintf(real, sizeof(real), "%s/real", tree);
	snprintf(alias, sizeof(alias), "%s/alias", tree);
	snprintf(plain, sizeof(plain), "%s/plain", tree);
	mkdir(real, 0755);
	mkdir(plain, 0755);
	cr_assert_eq(symlink(real, alias), 0);
	/* Three rules with one parent: the cached parent must not hide the symlink in the middle one. */
	snprintf(r1, sizeof(r1), "-- %s", plain);
	snprintf(r2, sizeof(r2), "-- %s", alias);
	snprintf(r3, sizeof(r3), "-- %s/missing", tree);
	const char *rules[] = { r1, r2, r3, NULL };
	char *env[] = { NULL };
	struct dsh_policy *p = load("/srv/ws", DSH_MODE_WORKSPACE_WRITE, env, rules);
	cr_expect_str_eq(p->rules[0].canonical, plain);
	cr_expect_str_eq(p->rules[1].canonical, real);
	cr_expect_str_eq(p->rules[1].resolved, alias);
	char missing[600];
	snprintf(missing, sizeof(missing), "%s/missing", tree);
	cr_expect_str_eq(p->rules[2].canonical, missing);
	dsh_policy_free(p);
	dsh_test_rmtree(tree);
	free(tree);
}

/* A workspace or an environment value holding glob syntax is a name, not a pattern. */
Test(policy, workspace_and_values_are_names_in_patterns)
{
	char *env[] = { "HOME=/home/u*", NULL };
	struct dsh_config c;
	dsh_config_init(&c);
	c.workspace = strdup("/nonexistent-dshbox/w[1]");
	c.protect_defaults = false;
	dsh_strv_push(&c.access, "-- *.pem");
	dsh_strv_push(&c.access, "-- {{ env.HOME }}/.ssh");
	struct dsh_policy *p = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_policy_new(&c, env, "/", &p, &err), 0, "%s", err ? err->msg : "");
	struct dsh_verdict v;
	cr_assert_eq(dsh_policy_verdict(p, DSH_OP_READ, "/nonexistent-dshbox/w[1]/k.pem", &v), 0);
	cr_expect_not(v.allow, "the workspace's own key is denied");
	cr_assert_eq(dsh_policy_verdict(p, DSH_OP_READ, "/nonexistent-dshbox/w1/k.pem", &v), 0);
	cr_expect(v.allow, "a sibling the bracket would match stays readable");
	cr_assert_eq(dsh_policy_verdict(p, DSH_OP_READ, "/home/u*/.ssh/id", &v), 0);
	cr_expect_not(v.allow);
	cr_assert_eq(dsh_policy_verdict(p, DSH_OP_READ, "/home/ux/.ssh/id", &v), 0);
	cr_expect(v.allow, "the value's '*' matches only itself");
	dsh_policy_free(p);
	dsh_config_clear(&c);
}

/*
 * The rule index (policy/index.c) against the scan it replaces: for random policies and paths,
 * the verdict, the spelling check and the guard name the same rule as a scan in policy order over
 * dsh_rule_covers() and dsh_path_is_beneath() — the first deny rule, then the first read-only one.
 */
static const struct dsh_rule *scan_first(const struct dsh_policy *p, const char *path, bool deny, bool ro)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		if (((r->kind == DSH_RULE_DENY && deny) || (r->kind == DSH_RULE_RO && ro)) && dsh_rule_covers(r, path))
			return r;
	}
	return NULL;
}

static const struct dsh_rule *scan_guarded(const struct dsh_policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		if (r->kind == DSH_RULE_RW)
			continue;
		if ((r->literal_dir && dsh_path_is_beneath(r->literal_dir, path)) || dsh_rule_covers(r, path))
			return r;
		for (size_t k = 0; k < r->n_match; k++)
			if (r->match[k].literal && dsh_path_is_beneath(r->match[k].literal, path))
				return r;
	}
	return NULL;
}

static size_t rnd(unsigned *seed, size_t n)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) % n;
}

Test(policy, the_rule_index_answers_as_the_scan_in_policy_order)
{
	char *tree = dsh_test_mkdtemp();
	char path[1024];
	snprintf(path, sizeof(path), "%s/real/a", tree);
	dsh_test_write_file(path, "x");
	snprintf(path, sizeof(path), "%s/link", tree);
	char target[1024];
	snprintf(target, sizeof(target), "%s/real", tree);
	cr_assert_eq(symlink(target, path), 0);

	static const char *const parts[] = { "a", "b", "ab", "real", "link", ".git", "hooks", "x.pem", "[ab]", "*", "**", "?" };
	static const char *const kinds[] = { "--", "r-", "rw" };
	unsigned seed = 12345;
	int tried = 0;
#define RND(n) rnd(&seed, n)
	for (int round = 0; round < 200; round++) {
		char **rules = NULL;
		size_t n_rules = 1 + RND(12);
		for (size_t i = 0; i < n_rules; i++) {
			char rule[1024];
			const char *kind = kinds[RND(3)];
			int len = snprintf(rule, sizeof(rule), "%s %s", kind, RND(8) ? tree : "");
			size_t depth = RND(4);
			for (size_t d = 0; d <= depth; d++) {
				const char *part = parts[RND(ARRAY_SIZE(parts))];
				if (strncmp(rule, "rw", 2) == 0 && strpbrk(part, "*?["))
					part = "b";
				len += snprintf(rule + len, sizeof(rule) - (size_t)len, "/%s", part);
			}
			dsh_strv_push(&rules, rule);
		}
		struct dsh_config c;
		dsh_config_init(&c);
		c.workspace = strdup(tree);
		c.access = rules;
		char *env[] = { NULL };
		struct dsh_policy *p = NULL;
		_cleanup_error_ struct dsh_error *err = NULL;
		int r = dsh_policy_new(&c, env, "/", &p, &err);
		dsh_config_clear(&c);
		if (r < 0) {
			/* A rule hiding the workspace itself: refused, nothing to compare. */
			cr_assert_eq(r, -EINVAL, "%s", err->msg);
			continue;
		}
		tried++;
		for (int q = 0; q < 200; q++) {
			int len = snprintf(path, sizeof(path), "%s", RND(6) ? tree : "");
			size_t depth = RND(5);
			for (size_t d = 0; d < depth; d++) {
				static const char *const names[] = { "a", "b", "ab", "real", "link", ".git", "hooks", "x.pem",
								     "c", ".bashrc", "", "config" };
				len += snprintf(path + len, sizeof(path) - (size_t)len, "/%s", names[RND(ARRAY_SIZE(names))]);
			}
			if (RND(8) == 0 || len == 0)
				len += snprintf(path + len, sizeof(path) - (size_t)len, "/");
			struct dsh_verdict v;
			const struct dsh_rule *deny = scan_first(p, path, true, false);
			cr_assert_eq(dsh_policy_verdict(p, DSH_OP_READ, path, &v), 0);
			cr_assert_eq(v.rule, deny, "read %s: rule %s, the scan says %s", path, v.rule ? v.rule->text : "none",
				     deny ? deny->text : "none");
			cr_assert_eq(dsh_policy_verdict(p, DSH_OP_WRITE, path, &v), 0);
			const struct dsh_rule *w = deny ? deny : scan_first(p, path, false, true);
			cr_assert_eq(v.rule, w, "write %s: rule %s, the scan says %s", path, v.rule ? v.rule->text : "none",
				     w ? w->text : "none");
			const struct dsh_rule *s = scan_first(p, path, true, true);
			bool denied = dsh_policy_spelling_denied(p, DSH_OP_WRITE, path, &v);
			cr_assert_eq(denied ? v.rule : NULL, s, "spelled %s", path);
			denied = dsh_policy_spelling_denied(p, DSH_OP_READ, path, &v);
			cr_assert_eq(denied ? v.rule : NULL, deny, "spelled read %s", path);
			const struct dsh_rule *g = scan_guarded(p, path);
			cr_assert_eq(dsh_policy_guarded(p, path), g, "guarded %s: the scan says %s", path, g ? g->text : "none");
		}
		dsh_policy_free(p);
	}
#undef RND
	cr_assert_gt(tried, 100, "only %d of 200 random policies loaded", tried);
	dsh_test_rmtree(tree);
	free(tree);
}

/* `rw FILE` (rw ~/.npmrc): the default-protected names go beneath directories only.  Beneath a file
   they would only make the file read-only ("a file on the way" to them). */
Test(policy, a_writable_file_gets_no_default_names_beneath_it)
{
	char *tree = dsh_test_mkdtemp();
	_cleanup_free_ char *ws = NULL, *file = NULL, *rule = NULL, *beneath = NULL;
	cr_assert(asprintf(&ws, "%s/ws", tree) > 0 && asprintf(&file, "%s/npmrc", tree) > 0 &&
		  asprintf(&rule, "rw %s", file) > 0 && asprintf(&beneath, "%s/.git/hooks", file) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
	dsh_test_write_file(file, "x\n");
	struct dsh_config c;
	dsh_config_init(&c);
	c.workspace = strdup(ws);
	dsh_strv_push(&c.access, rule);
	char *env[] = { NULL };
	struct dsh_policy *p = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_policy_new(&c, env, ws, &p, &err), 0, "%s", err ? err->msg : "");
	struct dsh_verdict v;
	cr_assert_eq(dsh_policy_verdict(p, DSH_OP_WRITE, file, &v), 0);
	cr_expect(v.allow, "the file may not be written: rule %s", v.rule ? v.rule->text : "none");
	for (size_t i = 0; i < p->n_rules; i++)
		cr_expect(strcmp(p->rules[i].canonical, file) == 0 || !dsh_path_is_beneath(p->rules[i].canonical, file),
			  "a rule beneath the file: %s", p->rules[i].text);
	/* The workspace, a directory, keeps its own. */
	_cleanup_free_ char *hooks = NULL;
	cr_assert(asprintf(&hooks, "%s/.git/hooks", ws) > 0);
	cr_assert_eq(dsh_policy_verdict(p, DSH_OP_WRITE, hooks, &v), 0);
	cr_expect(!v.allow, "the workspace's .git/hooks is writable");
	dsh_policy_free(p);
	dsh_config_clear(&c);
	dsh_test_rmtree(tree);
	free(tree);
}
