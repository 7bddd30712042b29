/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The workspace and cwd are canonicalised before '..' applies (SPEC 1.3, issue 12): `X/link/..` is
 * where the kernel's chdir lands (the link target's parent), not X.  Checked against the kernel's
 * own answer (chdir + getcwd) on a real tree under /var/tmp.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "dshbox/dshbox.h"
#include "policy/options.h"
#include "policy/path.h"
#include "tests/lib/harness.h"

/* root/x/link -> root/a/b; root/a/b/c exists. */
static char *tree(void)
{
	char *root = dsh_test_mkdtemp(), *p = NULL, *target = NULL;
	cr_assert(asprintf(&p, "%s/a/b/c/file", root) > 0);
	dsh_test_write_file(p, "");
	free(p);
	cr_assert(asprintf(&p, "%s/x/file", root) > 0);
	dsh_test_write_file(p, "");
	free(p);
	cr_assert(asprintf(&p, "%s/x/link", root) > 0 && asprintf(&target, "%s/a/b", root) > 0);
	cr_assert_eq(symlink(target, p), 0);
	free(p), free(target);
	return root;
}

static char *kernel_chdir(const char *path)
{
	char buf[PATH_MAX];
	cr_assert_eq(chdir(path), 0, "chdir %s", path);
	cr_assert_not_null(getcwd(buf, sizeof(buf)));
	cr_assert_eq(chdir("/"), 0);
	return strdup(buf);
}

Test(resolve, workspace_and_cwd_land_where_chdir_lands)
{
	_cleanup_free_ char *root = tree();
	_cleanup_free_ char *real_root = kernel_chdir(root);
	static const char *const rel[] = { "x/link/..", "x/link/../b/c/..", "x/link/c/../..", "x/./link//..", "x/link" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		_cleanup_free_ char *spelled = NULL, *got = NULL, *want = NULL;
		cr_assert(asprintf(&spelled, "%s/%s", root, rel[i]) > 0);
		want = kernel_chdir(spelled);
		_cleanup_error_ struct dsh_error *err = NULL;
		cr_assert_eq(dsh_path_resolve_physical("/", spelled, &got, &err), 0, "%s", err ? err->msg : "");
		cr_expect_str_eq(got, want, "%s", rel[i]);
		/* relative against a base, as --workspace is against the current directory */
		free(got);
		cr_assert_eq(dsh_path_resolve_physical(root, rel[i], &got, &err), 0);
		cr_expect_str_eq(got, want, "%s (relative)", rel[i]);
	}

	/* The policy: workspace and cwd both. */
	_cleanup_free_ char *link_up = NULL, *want = NULL;
	cr_assert(asprintf(&link_up, "%s/x/link/..", root) > 0 && asprintf(&want, "%s/a", real_root) > 0);
	struct dsh_config c;
	dsh_config_init(&c);
	c.workspace = strdup(link_up);
	c.cwd = strdup("x/link/..");
	char *env[] = { NULL };
	struct dsh_policy *p = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_policy_new(&c, env, root, &p, &err), 0, "%s", err ? err->msg : "");
	cr_expect_str_eq(dsh_policy_workspace(p), want, "not lexically %s/x", root);
	cr_expect_str_eq(dsh_policy_cwd(p), want);
	dsh_policy_free(p);
	dsh_config_clear(&c);
	dsh_test_rmtree(root);
}

Test(resolve, past_the_first_missing_name_the_rest_is_lexical)
{
	_cleanup_free_ char *root = tree();
	_cleanup_free_ char *real_root = kernel_chdir(root);
	static const char *const cases[][2] = {
		{ "x/link/missing", "/a/b/missing" },
		{ "x/link/missing/../c", "/a/b/c" },
		{ "x/link/missing/more/../..", "/a/b" },
		{ "nope/../x", "/x" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *got = NULL, *want = NULL;
		cr_assert(asprintf(&want, "%s%s", real_root, cases[i][1]) > 0);
		_cleanup_error_ struct dsh_error *err = NULL;
		cr_assert_eq(dsh_path_resolve_physical(root, cases[i][0], &got, &err), 0, "%s", err ? err->msg : "");
		cr_expect_str_eq(got, want, "%s", cases[i][0]);
	}
	char *got = NULL;
	cr_expect_eq(dsh_path_resolve_physical("/", "/../..", &got, NULL), 0);
	cr_expect_str_eq(got, "/");
	free(got);
	cr_expect_lt(dsh_path_resolve_physical(NULL, "rel", &got, NULL), 0);
	cr_expect_lt(dsh_path_resolve_physical("/", "", &got, NULL), 0);
	dsh_test_rmtree(root);
}
