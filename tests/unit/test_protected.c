/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SPEC 16: the default-protected names are one table, docs/policy.md shows the same table, each is
 * an r- rule in every writable root, unprotect: drops one by name, and the program in use is
 * protected where a command could otherwise replace it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/policy.h"
#include "policy/protected.h"
#include "tests/lib/harness.h"

Test(protected, docs_policy_md_shows_the_table_of_the_code)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/docs/policy.md", DSH_TOP);
	_cleanup_free_ char *doc = dsh_test_read_file(path);
	cr_assert_not_null(doc, "%s", path);
	size_t rows = 0;
	for (size_t i = 0; i < dsh_n_protected_names; i++) {
		const struct dsh_protected_name *e = &dsh_protected_names[i];
		_cleanup_free_ char *row = NULL;
		cr_assert(asprintf(&row, "\n| `%s` | %s | %s |\n", e->name, e->acts, e->peer) > 0);
		cr_expect(strstr(doc, row), "docs/policy.md lacks the row%s", row);
	}
	/* and no row the code lacks */
	for (const char *l = strstr(doc, "\n| `"); l; l = strstr(l + 1, "\n| `")) {
		const char *s = l + 4, *end = strchr(s, '`');
		cr_assert_not_null(end);
		_cleanup_free_ char *name = strndup(s, (size_t)(end - s));
		cr_expect_not_null(dsh_protected_name_find(name), "docs/policy.md names %s, the code does not", name);
		rows++;
	}
	cr_expect_eq(rows, dsh_n_protected_names);
}

static struct dsh_policy *load(const char *doc, const char *ws, struct dsh_error **err)
{
	struct dsh_config c;
	dsh_config_init(&c);
	struct dsh_policy *p = NULL;
	int r = dsh_config_load_string(&c, doc, strlen(doc), "t.yml", err);
	if (r == 0) {
		free(c.workspace);
		c.workspace = strdup(ws);
		char *env[] = { NULL };
		r = dsh_policy_new(&c, env, "/", &p, err);
	}
	dsh_config_clear(&c);
	return r == 0 ? p : NULL;
}

static bool writable(struct dsh_policy *p, const char *path)
{
	struct dsh_verdict v;
	cr_assert_eq(dsh_policy_verdict(p, DSH_OP_WRITE, path, &v), 0);
	return v.allow;
}

Test(protected, each_name_is_read_only_in_a_root_and_unprotect_drops_one)
{
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	_cleanup_error_ struct dsh_error *err = NULL;
	struct dsh_policy *p = load("mode: workspace-write\n", ws, &err);
	cr_assert_not_null(p, "%s", err ? err->msg : "");
	for (size_t i = 0; i < dsh_n_protected_names; i++) {
		_cleanup_free_ char *at = NULL, *below = NULL;
		cr_assert(asprintf(&at, "%s/%s", ws, dsh_protected_names[i].name) > 0 &&
			  asprintf(&below, "%s/%s/x", ws, dsh_protected_names[i].name) > 0);
		cr_expect_not(writable(p, at), "%s is writable", at);
		cr_expect_not(writable(p, below), "%s is writable", below);
	}
	dsh_policy_free(p);

	p = load("mode: workspace-write\nunprotect: [.vscode, .envrc]\n", ws, &err);
	cr_assert_not_null(p, "%s", err ? err->msg : "");
	_cleanup_free_ char *vs = NULL, *mcp = NULL;
	cr_assert(asprintf(&vs, "%s/.vscode/tasks.json", ws) > 0 && asprintf(&mcp, "%s/.mcp.json", ws) > 0);
	cr_expect(writable(p, vs), "unprotect: .vscode leaves it writable");
	cr_expect_not(writable(p, mcp), "the rest stay protected");
	dsh_policy_free(p);
	dsh_test_rmtree(ws);
}

Test(protected, unprotect_names_only_names_of_the_list)
{
	static const char *const bad[][2] = {
		{ "unprotect: [.vscode, .ssh]\n", "t.yml:1: unprotect: '.ssh' is not a default-protected name" },
		{ "unprotect: .vscode\n", "unprotect" },
		{ "unprotect:\n  - .git\n", "t.yml:2: unprotect: '.git' is not a default-protected name" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dsh_error *e = NULL;
		cr_expect_null(load(bad[i][0], "/srv/ws", &e), "%s loads", bad[i][0]);
		cr_expect(e && strstr(e->msg, bad[i][1]), "%s: %s", bad[i][0], e ? e->msg : "(no error)");
		dsh_error_free(e);
	}
}

Test(protected, the_program_in_use_is_read_only_where_it_lies_in_a_root)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = '\0';
	_cleanup_free_ char *dir = strdup(exe);
	*strrchr(dir, '/') = '\0';
	_cleanup_error_ struct dsh_error *err = NULL;
	/* The test program's own directory as the workspace: the program is in a writable root. */
	struct dsh_policy *p = load("mode: workspace-write\n", dir, &err);
	cr_assert_not_null(p, "%s", err ? err->msg : "");
	cr_expect_not(writable(p, exe), "the program in use is writable");
	enum dsh_program_guard g = DSH_PROGRAM_OUTSIDE;
	cr_assert_geq(dsh_policy_program_count(p), 1);
	cr_expect_str_eq(dsh_policy_program(p, 0, &g), exe);
	cr_expect_eq(g, DSH_PROGRAM_PROTECTED);
	size_t rules = 0;
	for (size_t i = 0; i < dsh_policy_rule_count(p); i++)
		rules += dsh_rule_origin(dsh_policy_rule(p, i)) == DSH_ORIGIN_PROGRAM;
	cr_expect_geq(rules, 1, "a rule of origin 'program in use'");
	dsh_policy_free(p);

	/* Elsewhere it is read-only already: said, and no rule. */
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	p = load("mode: workspace-write\n", ws, &err);
	cr_assert_not_null(p, "%s", err ? err->msg : "");
	dsh_policy_program(p, 0, &g);
	cr_expect_eq(g, dsh_path_is_beneath(exe, "/tmp") ? DSH_PROGRAM_PROTECTED : DSH_PROGRAM_OUTSIDE);
	dsh_policy_free(p);

	p = load("mode: workspace-write\nprotectDefaults: false\n", dir, &err);
	cr_assert_not_null(p, "%s", err ? err->msg : "");
	dsh_policy_program(p, 0, &g);
	cr_expect_eq(g, DSH_PROGRAM_UNPROTECTED, "protectDefaults: false says the program is not protected");
	cr_expect(writable(p, exe));
	dsh_policy_free(p);
	dsh_test_rmtree(ws);
}
