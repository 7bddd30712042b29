/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fence's operations as a host sees them: the library's answers and the CLI's exit codes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "fence/fence.h"
#include "fence/fence_internal.h"
#include "policy/options.h"
#include "tests/lib/fence_fixture.h"
#include "tests/lib/harness.h"

static char *root, *ws, *out; /* the scratch tree (tests/lib/fence_fixture.h) */

static void setup(void)
{
	dsh_test_fence_tree(&root, &ws, &out);
}

static void teardown(void)
{
	dsh_test_fence_tree_remove(&root, &ws, &out);
}

TestSuite(fence_ops, .init = setup, .fini = teardown, .timeout = 60);

Test(fence_ops, write_keeps_mode_and_returns_a_diff)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/f.txt", ws);
	dsh_test_write_file(f, "one\ntwo\n");
	cr_assert_eq(chmod(f, 0640), 0);
	struct stat before;
	cr_assert_eq(stat(f, &before), 0);
	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, "f.txt", "one\nTWO\n", &r); /* relative: against the policy's cwd */
	cr_expect_not(r.created);
	cr_expect_eq(r.bytes, 8);
	cr_assert_not_null(r.diff);
	cr_expect(strstr(r.diff, "-two\n+TWO\n") != NULL, "%s", r.diff);
	cr_expect_str_eq(r.path, f);
	dsh_fence_write_result_clear(&r);
	struct stat after;
	cr_assert_eq(stat(f, &after), 0);
	cr_expect_eq(after.st_mode & 07777, 0640);
	cr_expect_neq(after.st_ino, before.st_ino, "the write replaced the file by a rename");
	_cleanup_free_ char *content = dsh_test_read_file(f);
	cr_expect_str_eq(content, "one\nTWO\n");
	dsh_policy_free(p);
}

Test(fence_ops, write_creates_and_leaves_no_temporary)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/new.bin", ws);
	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, f, "bytes", &r);
	cr_expect(r.created);
	cr_expect_null(r.diff);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *content = dsh_test_read_file(f);
	cr_expect_str_eq(content, "bytes");
	/* Binary overwrite: no diff, said so. */
	struct dsh_error *fl = NULL;
	cr_assert_eq(dsh_fence_write(p, f, "a\0b", 3, &r, &fl), 0);
	cr_expect_null(r.diff);
	cr_expect(r.diff_skipped);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *ls = NULL;
	struct dsh_proc pr;
	char *argv[] = { (char *)"ls", (char *)"-A", ws, NULL };
	cr_assert_eq(dsh_proc_run(argv, NULL, NULL, &pr), 0);
	cr_expect_str_eq(pr.out, "new.bin\n", "stray files: %s", pr.out);
	dsh_proc_clear(&pr);
	dsh_policy_free(p);
}

Test(fence_ops, denied_writes_change_nothing)
{
	const char *rules[] = { "r- .git/hooks", "-- **/*.pem", NULL };
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, rules);
	_cleanup_free_ char *outside = dsh_test_pathf("%s/secret", out);
	dsh_test_write_file(outside, "outside\n");
	cr_expect_eq(dsh_test_fence_write_fails(p, outside, "x"), DSH_ERR_DENIED);
	cr_expect_eq(dsh_test_fence_write_fails(p, ".git/hooks/pre-commit", "x"), DSH_ERR_DENIED);
	cr_expect_eq(dsh_test_fence_write_fails(p, "deep/key.pem", "x"), DSH_ERR_DENIED);
	_cleanup_free_ char *content = dsh_test_read_file(outside);
	cr_expect_str_eq(content, "outside\n");
	dsh_policy_free(p);

	struct dsh_policy *ro = dsh_test_mode_policy(ws, DSH_MODE_READ_ONLY, NULL);
	struct dsh_error *f = NULL;
	struct dsh_fence_write_result r;
	cr_assert_lt(dsh_fence_write(ro, "a.txt", "x", 1, &r, &f), 0);
	cr_expect_eq(f->kind, DSH_ERR_DENIED);
	cr_expect_str_eq(f->rule, "mode read-only");
	cr_expect(strstr(f->msg, "(mode read-only)"), "%s", f->msg);
	_cleanup_free_ char *a = dsh_test_pathf("%s/a.txt", ws);
	cr_expect_str_eq(f->path, a);
	dsh_error_free(f);
	f = NULL;
	dsh_policy_free(ro);
}

Test(fence_ops, symlinks_are_followed_only_where_rechecked)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *outside = dsh_test_pathf("%s/target", out);
	_cleanup_free_ char *in = dsh_test_pathf("%s/real.txt", ws);
	dsh_test_write_file(outside, "outside\n");
	dsh_test_write_file(in, "inside\n");
	_cleanup_free_ char *l_out = dsh_test_pathf("%s/to-out", ws), *l_in = dsh_test_pathf("%s/to-in", ws),
			    *l_dang = dsh_test_pathf("%s/dangling", ws), *l_dir = dsh_test_pathf("%s/dir-out", ws),
			    *l_dang_out = dsh_test_pathf("%s/dangling-out", ws);
	cr_assert_eq(symlink(outside, l_out), 0);
	cr_assert_eq(symlink("real.txt", l_in), 0);
	cr_assert_eq(symlink("nowhere/new.txt", l_dang), 0);
	cr_assert_eq(symlink(out, l_dir), 0);
	_cleanup_free_ char *missing_out = dsh_test_pathf("%s/created-by-fence", out);
	cr_assert_eq(symlink(missing_out, l_dang_out), 0);

	cr_expect_eq(dsh_test_fence_write_fails(p, l_out, "x"), DSH_ERR_DENIED);
	cr_expect_eq(dsh_test_fence_write_fails(p, "dir-out/target", "x"), DSH_ERR_DENIED);
	cr_expect_eq(dsh_test_fence_write_fails(p, "dir-out/new", "x"), DSH_ERR_DENIED);
	cr_expect_eq(dsh_test_fence_write_fails(p, l_dang_out, "x"), DSH_ERR_DENIED);
	_cleanup_free_ char *new_in = dsh_test_pathf("%s/new-in", ws),
			    *l_dang_in = dsh_test_pathf("%s/dangling-in", ws);
	cr_assert_eq(symlink(new_in, l_dang_in), 0);
	cr_expect_eq(dsh_test_fence_write_fails(p, l_dang_in, "x"), DSH_ERR_INVALID,
		     "a dangling symlink is never followed");
	cr_expect_eq(access(new_in, F_OK), -1);
	cr_expect_eq(access(missing_out, F_OK), -1);
	_cleanup_free_ char *o = dsh_test_read_file(outside);
	cr_expect_str_eq(o, "outside\n");

	/* A symlink to a workspace file: the file is replaced, the link stays a link. */
	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, l_in, "via link\n", &r);
	cr_expect_str_eq(r.path, in);
	dsh_fence_write_result_clear(&r);
	struct stat st;
	cr_assert_eq(lstat(l_in, &st), 0);
	cr_expect(S_ISLNK(st.st_mode));
	_cleanup_free_ char *i = dsh_test_read_file(in);
	cr_expect_str_eq(i, "via link\n");

	/* A link outside the writable roots to a workspace file: the link is not written, the file
	   is, and `dshbox check` says the same by name. */
	_cleanup_free_ char *l_from_out = dsh_test_pathf("%s/link-to-ws", out);
	cr_assert_eq(symlink(in, l_from_out), 0);
	dsh_test_fence_write_ok(p, l_from_out, "from outside\n", &r);
	cr_expect_str_eq(r.path, in);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *i2 = dsh_test_read_file(in);
	cr_expect_str_eq(i2, "from outside\n");
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"check", (char *)"--workspace", ws, (char *)"--write", l_from_out, NULL };
	struct dsh_proc pr;
	cr_assert_eq(dsh_proc_run(argv, NULL, NULL, &pr), 0);
	cr_expect_eq(pr.exit_code, 0, "check disagrees: %s%s", pr.out, pr.err);
	dsh_proc_clear(&pr);
	dsh_policy_free(p);
}

Test(fence_ops, reads_check_the_canonical_path_and_the_spelling)
{
	_cleanup_free_ char *rule = dsh_test_pathf("-- %s/secret", ws);
	const char *rules[] = { rule, NULL };
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, rules);
	_cleanup_free_ char *sec = dsh_test_pathf("%s/secret/key", ws), *pub = dsh_test_pathf("%s/public.txt", ws);
	dsh_test_write_file(sec, "k\n");
	dsh_test_write_file(pub, "p\n");
	_cleanup_free_ char *l1 = dsh_test_pathf("%s/innocent", ws), *l2 = dsh_test_pathf("%s/secret/through", ws);
	cr_assert_eq(symlink(sec, l1), 0);
	cr_assert_eq(symlink(pub, l2), 0);
	struct dsh_fence_read_result r;
	struct dsh_error *f = NULL;
	cr_expect_lt(dsh_fence_read(p, "innocent", 0, 0, &r, &f), 0);
	cr_expect_eq(f->kind, DSH_ERR_DENIED);
	cr_expect_str_eq(f->path, sec);
	cr_expect_str_eq(f->rule, rule);
	dsh_error_free(f);
	f = NULL;
	/* Reaching out of a denied directory through a link in it is denied too (the sandbox masks it). */
	cr_expect_lt(dsh_fence_read(p, l2, 0, 0, &r, &f), 0);
	cr_expect_eq(f->kind, DSH_ERR_DENIED);
	dsh_error_free(f);
	f = NULL;
	/* A missing file in a denied directory is denied, not "not found". */
	cr_expect_lt(dsh_fence_read(p, "secret/nope", 0, 0, &r, &f), 0);
	cr_expect_eq(f->kind, DSH_ERR_DENIED);
	dsh_error_free(f);
	f = NULL;
	cr_expect_lt(dsh_fence_read(p, "nope", 0, 0, &r, &f), 0);
	cr_expect_eq(f->kind, DSH_ERR_NOT_FOUND);
	dsh_error_free(f);
	f = NULL;
	/* /proc magic links are refused. */
	cr_expect_lt(dsh_fence_read(p, "/proc/self/root/etc/hostname", 0, 0, &r, &f), 0);
	cr_expect_eq(f->kind, DSH_ERR_INVALID, "%s", f->msg);
	dsh_error_free(f);
	f = NULL;
	dsh_policy_free(p);
}

Test(fence_ops, read_offset_limit_and_types)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/digits", ws), *fifo = dsh_test_pathf("%s/fifo", ws);
	dsh_test_write_file(f, "0123456789");
	struct dsh_fence_read_result r;
	struct dsh_error *fl = NULL;
	cr_assert_eq(dsh_fence_read(p, f, 3, 4, &r, &fl), 0);
	cr_expect_eq(r.len, 4);
	cr_expect_eq(memcmp(r.data, "3456", 4), 0);
	cr_expect_not(r.eof);
	cr_expect_eq(r.size, 10);
	dsh_fence_read_result_clear(&r);
	cr_assert_eq(dsh_fence_read(p, f, 8, 0, &r, &fl), 0);
	cr_expect_eq(r.len, 2);
	cr_expect(r.eof);
	dsh_fence_read_result_clear(&r);
	cr_assert_eq(dsh_fence_read(p, f, 100, 5, &r, &fl), 0);
	cr_expect_eq(r.len, 0);
	cr_expect(r.eof);
	dsh_fence_read_result_clear(&r);
	cr_expect_lt(dsh_fence_read(p, f, 0, (uint64_t)DSH_FENCE_MAX_CONTENT + 1, &r, &fl), 0);
	cr_expect_eq(fl->kind, DSH_ERR_TOO_LARGE);
	dsh_error_free(fl);
	fl = NULL;
	/* A FIFO is not read (and the read does not block on it); a directory is not a file. */
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	cr_expect_lt(dsh_fence_read(p, fifo, 0, 0, &r, &fl), 0);
	cr_expect_eq(fl->kind, DSH_ERR_NOT_REGULAR);
	dsh_error_free(fl);
	fl = NULL;
	cr_expect_lt(dsh_fence_read(p, ws, 0, 0, &r, &fl), 0);
	cr_expect_eq(fl->kind, DSH_ERR_NOT_REGULAR);
	dsh_error_free(fl);
	fl = NULL;
	cr_expect_eq(dsh_test_fence_write_fails(p, fifo, "x"), DSH_ERR_NOT_REGULAR);
	cr_expect_eq(dsh_test_fence_write_fails(p, ws, "x"), DSH_ERR_NOT_REGULAR);
	dsh_policy_free(p);
}

/* An edit through the public entry point (hook NULL) or with a hook between its read and its commit. */
static enum dsh_err_kind edit_hooked(struct dsh_policy *p, const char *path, const char *o, const char *n,
				     bool all, dsh_fence_edit_hook_fn hook, size_t *ret_repl)
{
	struct dsh_fence_write_result r;
	struct dsh_error *f = NULL;
	int rc = hook ? dsh_fence_edit_hooked(p, path, o, strlen(o), n, strlen(n), all, NULL, hook, NULL, &r, &f)
		      : dsh_fence_edit(p, path, o, strlen(o), n, strlen(n), all, &r, &f);
	if (rc == 0) {
		if (ret_repl)
			*ret_repl = r.replacements;
		dsh_fence_write_result_clear(&r);
		return (enum dsh_err_kind)-1;
	}
	enum dsh_err_kind k = f->kind;
	dsh_error_free(f);
	f = NULL;
	return k;
}

static enum dsh_err_kind edit(struct dsh_policy *p, const char *path, const char *o, const char *n, bool all,
			      size_t *ret_repl)
{
	return edit_hooked(p, path, o, n, all, NULL, ret_repl);
}

Test(fence_ops, edit_unique_absent_ambiguous_all)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/e.txt", ws);
	dsh_test_write_file(f, "alpha beta alpha gamma\n");
	size_t n = 0;
	cr_expect_eq(edit(p, f, "beta", "BETA", false, &n), (enum dsh_err_kind)-1);
	cr_expect_eq(n, 1);
	cr_expect_eq(edit(p, f, "delta", "x", false, NULL), DSH_ERR_INVALID);
	cr_expect_eq(edit(p, f, "alpha", "x", false, NULL), DSH_ERR_INVALID);
	cr_expect_eq(edit(p, f, "", "x", false, NULL), DSH_ERR_INVALID);
	_cleanup_free_ char *mid = dsh_test_read_file(f);
	cr_expect_str_eq(mid, "alpha BETA alpha gamma\n");
	cr_expect_eq(edit(p, f, "alpha", "A", true, &n), (enum dsh_err_kind)-1);
	cr_expect_eq(n, 2);
	_cleanup_free_ char *end = dsh_test_read_file(f);
	cr_expect_str_eq(end, "A BETA A gamma\n");
	cr_expect_eq(edit(p, "missing.txt", "a", "b", false, NULL), DSH_ERR_NOT_FOUND);
	dsh_policy_free(p);
}

/* The concurrent writer, run between the edit's read and its rename. */
static const char *hook_path;
static int hook_style;
static void concurrent_write(void *data)
{
	(void)data;
	if (hook_style == 0) {
		/* In place, same size (mtime/ctime change, content changes). */
		int fd = open(hook_path, O_WRONLY | O_CLOEXEC);
		cr_assert_geq(fd, 0);
		cr_assert_eq(pwrite(fd, "THEIRS", 6, 0), 6);
		close(fd);
	} else {
		/* Replaced by rename, as an editor saves. */
		char *tmp = NULL;
		cr_assert(asprintf(&tmp, "%s.editor", hook_path) > 0);
		dsh_test_write_file(tmp, "THEIRS and more\n");
		cr_assert_eq(rename(tmp, hook_path), 0);
		free(tmp);
	}
}

Test(fence_ops, edit_conflict_never_loses_the_other_write)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/c.txt", ws);
	for (hook_style = 0; hook_style < 2; hook_style++) {
		dsh_test_write_file(f, "mine original\n");
		hook_path = f;
		cr_expect_eq(edit_hooked(p, f, "original", "edited", false, concurrent_write, NULL), DSH_ERR_CONFLICT,
			     "style %d", hook_style);
		_cleanup_free_ char *now = dsh_test_read_file(f);
		cr_expect(strncmp(now, "THEIRS", 6) == 0, "style %d: the other write was lost: %s", hook_style, now);
	}
	dsh_policy_free(p);
}

Test(fence_ops, list_marks_denied_entries)
{
	const char *rules[] = { "-- secret", "r- docs", NULL };
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, rules);
	_cleanup_free_ char *a = dsh_test_pathf("%s/a.txt", ws), *s = dsh_test_pathf("%s/secret/x", ws),
			    *d = dsh_test_pathf("%s/docs/y", ws);
	dsh_test_write_file(a, "12345");
	dsh_test_write_file(s, "x");
	dsh_test_write_file(d, "y");
	struct dsh_fence_list_result r;
	struct dsh_error *f = NULL;
	cr_assert_eq(dsh_fence_list(p, ".", &r, &f), 0);
	cr_assert_eq(r.n_entries, 3);
	cr_expect_str_eq(r.entries[0].name, "a.txt");
	cr_expect_eq(r.entries[0].size, 5);
	cr_expect(r.entries[0].writable);
	cr_expect_str_eq(r.entries[1].name, "docs");
	cr_expect_not(r.entries[1].denied);
	cr_expect_not(r.entries[1].writable);
	cr_expect_str_eq(r.entries[2].name, "secret");
	cr_expect(r.entries[2].denied);
	cr_expect_eq(r.entries[2].size, 0);
	dsh_fence_list_result_clear(&r);
	cr_expect_lt(dsh_fence_list(p, "secret", &r, &f), 0);
	cr_expect_eq(f->kind, DSH_ERR_DENIED);
	dsh_error_free(f);
	f = NULL;
	dsh_policy_free(p);
}

Test(fence_ops, a_stale_temporary_is_cleared_and_a_live_one_is_respected)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/t.txt", ws);
	dsh_test_write_file(f, "old\n");
	char tmpname[256];
	cr_assert_eq(dsh_fence_temp_name("t.txt", tmpname, sizeof(tmpname)), 0);
	_cleanup_free_ char *tmp = NULL;
	cr_assert(asprintf(&tmp, "%s/%s", ws, tmpname) > 0);
	/* Left by a writer killed between link and rename: nobody holds its lock. */
	dsh_test_write_file(tmp, "half");
	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, f, "new\n", &r);
	dsh_fence_write_result_clear(&r);
	cr_expect_eq(access(tmp, F_OK), -1, "the stale temporary is still there");
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "new\n");
	/* A live writer's temporary (locked) is left alone; temporary names are random, so it is
	   not in this write's way either (SPEC 5: a planted entry never blocks a write). */
	dsh_test_write_file(tmp, "live");
	int fd = open(tmp, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
	dsh_test_fence_write_ok(p, f, "newer\n", &r);
	dsh_fence_write_result_clear(&r);
	close(fd);
	_cleanup_free_ char *live = dsh_test_read_file(tmp), *newer = dsh_test_read_file(f);
	cr_expect_str_eq(live, "live");
	cr_expect_str_eq(newer, "newer\n");
	dsh_policy_free(p);
}

/* ---- the command line ---- */

static struct dsh_proc run_fs(const char *stdin_data, const char *const *args)
{
	char **argv = calloc(1, sizeof(char *));
	dsh_strv_push(&argv, dsh_test_dshbox());
	dsh_strv_push(&argv, "fs");
	for (size_t i = 0; args[i]; i++)
		dsh_strv_push(&argv, args[i]);
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, NULL, stdin_data, &r), 0);
	dsh_strv_free(argv);
	return r;
}

Test(fence_ops, cli_exit_codes_and_one_error_line)
{
	_cleanup_free_ char *f = dsh_test_pathf("%s/f.txt", ws), *key = dsh_test_pathf("%s/k.pem", ws),
			    *outside = dsh_test_pathf("%s/x", out);
	dsh_test_write_file(f, "hello world\n");
	dsh_test_write_file(key, "KEY\n");
	static const struct {
		const char *args[12];
		const char *in;
		int code;
		const char *err;
	} cases[] = {
		{ { "read", "@f", "--workspace", "@ws", NULL }, NULL, 0, NULL },
		{ { "read", "@k", "--workspace", "@ws", "--access", "-- **/*.pem", NULL }, NULL, 1, "denied: rule \"-- **/*.pem\"" },
		{ { "write", "@x", "--workspace", "@ws", NULL }, "x", 1, "outside the writable roots" },
		{ { "write", "@f", "--workspace", "@ws", "--mode", "read-only", NULL }, "x", 1, "mode read-only" },
		{ { "read", "@ws/none", "--workspace", "@ws", NULL }, NULL, 2, "does not exist" },
		{ { "read", "@ws", "--workspace", "@ws", NULL }, NULL, 4, "is a directory" },
		{ { "edit", "@f", "--old", "absent", "--new", "x", "--workspace", "@ws", NULL }, NULL, 6, "not found" },
		{ { "read", "@f", "--limit", "0", NULL }, NULL, 125, "--limit" },
		{ { "read", NULL }, NULL, 125, "needs a path" },
		{ { "frobnicate", "@f", NULL }, NULL, 125, "unknown operation" },
		{ { "write", "@f", "--offset", "3", NULL }, "x", 125, "belong to 'read'" },
		{ { "edit", "@f", "--old", "x", NULL }, NULL, 125, "--new" },
		{ { "read", "@f", "--mode", "bogus", NULL }, NULL, 125, "unknown mode" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[12] = { NULL };
		for (size_t k = 0; cases[i].args[k]; k++) {
			const char *a = cases[i].args[k];
			if (strcmp(a, "@f") == 0)
				a = f;
			else if (strcmp(a, "@k") == 0)
				a = key;
			else if (strcmp(a, "@x") == 0)
				a = outside;
			else if (strcmp(a, "@ws") == 0)
				a = ws;
			else if (strcmp(a, "@ws/none") == 0)
				a = "/nonexistent-dshbox-path/none";
			args[k] = a;
		}
		struct dsh_proc r = run_fs(cases[i].in, args);
		cr_expect_eq(r.exit_code, cases[i].code, "case %zu: exit %d, want %d: %s", i, r.exit_code, cases[i].code,
			     r.err);
		if (cases[i].code == 0) {
			cr_expect_str_eq(r.err, "", "case %zu", i);
		} else {
			cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "case %zu: %s", i, r.err);
			cr_expect(strstr(r.err, cases[i].err) != NULL, "case %zu: want '%s' in: %s", i, cases[i].err, r.err);
			cr_expect_str_eq(r.out, "", "case %zu", i);
		}
		dsh_proc_clear(&r);
	}
	const char *help[] = { "--help", NULL };
	struct dsh_proc h = run_fs(NULL, help);
	cr_expect_eq(h.exit_code, 0);
	cr_expect(strstr(h.out, "Exit status") != NULL);
	dsh_proc_clear(&h);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "hello world\n", "a failed operation changed the file");
}

Test(fence_ops, cli_write_prints_the_diff_and_edit_too)
{
	_cleanup_free_ char *f = dsh_test_pathf("%s/d.txt", ws);
	dsh_test_write_file(f, "a\nb\nc\n");
	const char *w[] = { "write", f, "--workspace", ws, NULL };
	struct dsh_proc r = run_fs("a\nB\nc\n", w);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n") != NULL, "%s", r.out);
	dsh_proc_clear(&r);
	const char *e[] = { "edit", f, "--old", "B", "--new", "bee", "--workspace", ws, NULL };
	r = run_fs(NULL, e);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "-B\n+bee\n") != NULL, "%s", r.out);
	dsh_proc_clear(&r);
	const char *l[] = { "list", ws, "--workspace", ws, NULL };
	r = run_fs(NULL, l);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, " rw d.txt\n") != NULL, "%s", r.out);
	dsh_proc_clear(&r);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "a\nbee\nc\n");
}

Test(fence_ops, planted_hard_links_and_temporaries_cannot_reach_outside)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *victim = dsh_test_pathf("%s/victim", out), *victim2 = dsh_test_pathf("%s/victim2", out);
	dsh_test_write_file(victim, "outside\n");
	dsh_test_write_file(victim2, "outside2\n");
	/* A hard link in the workspace to a file outside: the write replaces the name, never the
	   shared inode. */
	_cleanup_free_ char *hl = dsh_test_pathf("%s/hardlink", ws);
	cr_assert_eq(link(victim, hl), 0);
	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, hl, "replaced\n", &r);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *v = dsh_test_read_file(victim), *h = dsh_test_read_file(hl);
	cr_expect_str_eq(v, "outside\n");
	cr_expect_str_eq(h, "replaced\n");
	/* The temporary name planted as a symlink, and as a hard link, to files outside. */
	_cleanup_free_ char *f = dsh_test_pathf("%s/f.txt", ws);
	dsh_test_write_file(f, "old\n");
	char tmpname[256];
	cr_assert_eq(dsh_fence_temp_name("f.txt", tmpname, sizeof(tmpname)), 0);
	_cleanup_free_ char *tmp = NULL;
	cr_assert(asprintf(&tmp, "%s/%s", ws, tmpname) > 0);
	cr_assert_eq(symlink(victim, tmp), 0);
	dsh_test_fence_write_ok(p, f, "new\n", &r);
	dsh_fence_write_result_clear(&r);
	cr_assert_eq(link(victim2, tmp), 0);
	dsh_test_fence_write_ok(p, f, "newer\n", &r);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *v1 = dsh_test_read_file(victim), *v2 = dsh_test_read_file(victim2), *ff = dsh_test_read_file(f);
	cr_expect_str_eq(v1, "outside\n");
	cr_expect_str_eq(v2, "outside2\n");
	cr_expect_str_eq(ff, "newer\n");
	cr_expect_eq(access(tmp, F_OK), -1);
	dsh_policy_free(p);
}

/*
 * A .git *file* at the workspace's root is followed by git to a directory of the writer's choosing,
 * around the default r- .git/config: the fence writes no file on the way to a protected target,
 * absent (a new .git) or present (a git worktree's), and lists such a file read-only.  `dshbox
 * check --write` answers the same; a directory there stays writable into.
 */
Test(fence_ops, no_file_is_written_on_the_way_to_a_protected_target)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *git = dsh_test_pathf("%s/.git", ws);
	cr_expect_eq(dsh_test_fence_write_fails(p, git, "gitdir: /tmp/evil\n"), DSH_ERR_DENIED);
	struct stat st;
	cr_expect(lstat(git, &st) < 0 && errno == ENOENT, ".git was made");

	static const char orig[] = "gitdir: /somewhere/main/.git/worktrees/wt\n";
	dsh_test_write_file(git, orig);
	cr_expect_eq(dsh_test_fence_write_fails(p, git, "gitdir: /tmp/evil\n"), DSH_ERR_DENIED);
	struct dsh_fence_list_result lr;
	struct dsh_error *f = NULL;
	cr_assert_eq(dsh_fence_list(p, ".", &lr, &f), 0);
	cr_assert_eq(lr.n_entries, 1);
	cr_expect_str_eq(lr.entries[0].name, ".git");
	cr_expect_not(lr.entries[0].denied);
	cr_expect_not(lr.entries[0].writable, "a .git file is listed rw");
	dsh_fence_list_result_clear(&lr);

	const char *args[] = { "edit", ".git", "--old", "worktrees", "--new", "x", "--workspace", ws, "--cwd", ws, NULL };
	struct dsh_proc r = run_fs(NULL, args);
	cr_expect_eq(r.exit_code, 1, "stderr: %s", r.err);
	cr_expect(strstr(r.err, "dshbox: error:") && strstr(r.err, "on the way") && strstr(r.err, ".git/hooks"), "%s", r.err);
	dsh_proc_clear(&r);
	_cleanup_free_ char *got = dsh_test_read_file(git);
	cr_expect(got && strcmp(got, orig) == 0, ".git is now '%s'", got ? got : "(missing)");

	const char *check[] = { dsh_test_dshbox(), "check", "--workspace", ws, "--cwd", ws, "--write", ".git", NULL };
	cr_assert_eq(dsh_proc_run((char *const *)check, NULL, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 1, "check --write .git: %s%s", r.out, r.err);
	cr_expect(strncmp(r.out, "deny write ", 11) == 0 && strstr(r.out, "on the way"), "%s", r.out);
	dsh_proc_clear(&r);
	cr_assert_eq(unlink(git), 0);
	cr_assert_eq(mkdir(git, 0755), 0);
	cr_assert_eq(dsh_proc_run((char *const *)check, NULL, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "check --write on the .git directory: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	dsh_policy_free(p);
}
