/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The file fence's contract (SPEC 5, issue 12), one group of tests per promise: parents are made
 * inside the writable roots only; new files get 0666 & ~umask; edit takes text only and keeps CRLF;
 * versions guard against stale writes; temporaries cannot be planted; non-UTF-8 names are
 * addressable.  Run as root and as an unprivileged user (where root would bypass a directory's
 * permissions, the test drops to an unprivileged uid first).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ftw.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "fence/fence.h"
#include "fence/serve.h"
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

TestSuite(fence_contract, .init = setup, .fini = teardown, .timeout = 120);

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

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

/* One serve request answered in process (the protocol of `dshbox serve`), parsed. */
static json_t *serve1(struct dsh_policy *p, const char *request)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_serve_answer(p, request, strlen(request), &text, &err), 0, "%s: %s", request, err ? err->msg : "");
	json_error_t je;
	json_t *a = json_loads(text, 0, &je);
	cr_assert_not_null(a, "not JSON: %s", text);
	return a;
}

static const char *err_kind(json_t *a)
{
	return json_string_value(json_object_get(json_object_get(a, "error"), "kind"));
}

static enum dsh_err_kind edit_fails(struct dsh_policy *p, const char *path, const char *o, const char *n)
{
	struct dsh_fence_write_result r;
	_cleanup_error_ struct dsh_error *err = NULL;
	int rc = dsh_fence_edit(p, path, o, strlen(o), n, strlen(n), false, &r, &err);
	cr_assert_lt(rc, 0, "edit %s succeeded", path);
	cr_assert_not_null(err);
	return err->kind;
}

static void edit_ok(struct dsh_policy *p, const char *path, const char *o, const char *n, bool all,
		    struct dsh_fence_write_result *r)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	int rc = dsh_fence_edit(p, path, o, strlen(o), n, strlen(n), all, r, &err);
	cr_assert_eq(rc, 0, "edit %s: %s", path, err ? err->msg : "");
}

/* ---- 1. missing parent directories ---- */

Test(fence_contract, write_makes_missing_parents_inside_the_writable_roots)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	mode_t old_umask = umask(022);
	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, "a/b/c/new.txt", "deep\n", &r);
	cr_expect(r.created);
	_cleanup_free_ char *f = dsh_test_pathf("%s/a/b/c/new.txt", ws), *a = dsh_test_pathf("%s/a", ws),
			    *abc = dsh_test_pathf("%s/a/b/c", ws);
	cr_expect_str_eq(r.path, f);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "deep\n");
	struct stat st;
	cr_assert_eq(stat(a, &st), 0);
	cr_expect(S_ISDIR(st.st_mode));
	cr_expect_eq(st.st_mode & 07777, 0755, "a directory gets 0777 & ~umask, as mkdir -p");
	cr_assert_eq(stat(abc, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0755);
	/* Part of the path there already: only the rest is made. */
	dsh_test_fence_write_ok(p, "a/b/other/x.txt", "x", &r);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *x = dsh_test_pathf("%s/a/b/other/x.txt", ws);
	cr_expect(exists(x));
	/* Through the CLI too. */
	_cleanup_free_ char *cli = dsh_test_pathf("%s/cli/made/here.txt", ws);
	const char *args[] = { "write", cli, "--workspace", ws, NULL };
	struct dsh_proc pr = run_fs("from the cli\n", args);
	cr_expect_eq(pr.exit_code, 0, "%s", pr.err);
	dsh_proc_clear(&pr);
	_cleanup_free_ char *cc = dsh_test_read_file(cli);
	cr_expect_str_eq(cc, "from the cli\n");
	umask(old_umask);
	dsh_policy_free(p);
}

Test(fence_contract, denied_parents_are_never_made)
{
	const char *rules[] = { "-- **/*.pem", "r- gen", NULL };
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, rules);
	_cleanup_free_ char *o = dsh_test_pathf("%s/new/dir/f.txt", out), *onew = dsh_test_pathf("%s/new", out);
	cr_expect_eq(dsh_test_fence_write_fails(p, o, "x"), DSH_ERR_DENIED);
	cr_expect_not(exists(onew), "a directory was made outside the writable roots");
	/* The file's own verdict comes before any directory is made. */
	cr_expect_eq(dsh_test_fence_write_fails(p, "keys/deep/id.pem", "x"), DSH_ERR_DENIED);
	_cleanup_free_ char *keys = dsh_test_pathf("%s/keys", ws);
	cr_expect_not(exists(keys), "a denied write left an empty directory");
	/* A read-only subtree: no directory inside it. */
	_cleanup_free_ char *gen = dsh_test_pathf("%s/gen", ws), *gensub = dsh_test_pathf("%s/gen/sub", ws);
	cr_assert_eq(mkdir(gen, 0755), 0);
	cr_expect_eq(dsh_test_fence_write_fails(p, "gen/sub/f.c", "x"), DSH_ERR_DENIED);
	cr_expect_not(exists(gensub));
	/* Read-only mode: nothing at all. */
	struct dsh_policy *ro = dsh_test_mode_policy(ws, DSH_MODE_READ_ONLY, NULL);
	cr_expect_eq(dsh_test_fence_write_fails(ro, "ro/f.txt", "x"), DSH_ERR_DENIED);
	_cleanup_free_ char *rod = dsh_test_pathf("%s/ro", ws);
	cr_expect_not(exists(rod));
	dsh_policy_free(ro);
	/* An edit needs its file: no directory for it either. */
	struct dsh_fence_write_result r;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_expect_lt(dsh_fence_edit(p, "e/dit.txt", "a", 1, "b", 1, false, &r, &err), 0);
	cr_expect_eq(err->kind, DSH_ERR_NOT_FOUND);
	_cleanup_free_ char *e = dsh_test_pathf("%s/e", ws);
	cr_expect_not(exists(e));
	dsh_policy_free(p);
}

Test(fence_contract, parents_are_never_made_through_a_symlink)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *sub = dsh_test_pathf("%s/sub", ws), *li = dsh_test_pathf("%s/li", ws),
			    *lo = dsh_test_pathf("%s/lo", ws), *ld = dsh_test_pathf("%s/ld", ws),
			    *made = dsh_test_pathf("%s/made", out), *onew = dsh_test_pathf("%s/new", out);
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_eq(symlink("sub", li), 0);
	cr_assert_eq(symlink(out, lo), 0);
	cr_assert_eq(symlink(made, ld), 0);
	/* A link to an existing directory inside: resolved by the kernel, checked where it lands. */
	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, "li/new/f.txt", "in\n", &r);
	_cleanup_free_ char *want = dsh_test_pathf("%s/sub/new/f.txt", ws);
	cr_expect_str_eq(r.path, want);
	dsh_fence_write_result_clear(&r);
	/* A link to a directory outside: the new directory would be outside: denied. */
	cr_expect_eq(dsh_test_fence_write_fails(p, "lo/new/f.txt", "x"), DSH_ERR_DENIED);
	cr_expect_not(exists(onew));
	/* A dangling link as a component: never followed, never replaced. */
	cr_expect_eq(dsh_test_fence_write_fails(p, "ld/sub/f.txt", "x"), DSH_ERR_INVALID);
	cr_expect_not(exists(made));
	struct stat st;
	cr_assert_eq(lstat(ld, &st), 0);
	cr_expect(S_ISLNK(st.st_mode));
	/* A file as a component. */
	_cleanup_free_ char *file = dsh_test_pathf("%s/plain", ws);
	dsh_test_write_file(file, "x");
	cr_expect_eq(dsh_test_fence_write_fails(p, "plain/f.txt", "x"), DSH_ERR_NOT_FOUND);
	dsh_policy_free(p);
}

/* The real server confines itself with Landlock: making directories must be within its grant. */
Test(fence_contract, serve_makes_parents_while_confined)
{
	_cleanup_free_ char *f = dsh_test_pathf("%s/made/by/serve.txt", ws), *o = dsh_test_pathf("%s/made", out),
			    *req = NULL;
	cr_assert(asprintf(&req,
			   "{\"id\":1,\"op\":\"write\",\"path\":\"made/by/serve.txt\",\"content\":\"x\"}\n"
			   "{\"id\":2,\"op\":\"write\",\"path\":\"%s/made/f.txt\",\"content\":\"x\"}\n",
			   out) > 0);
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws,
			 (char *)"--cwd", ws, NULL };
	struct dsh_proc pr;
	cr_assert_eq(dsh_proc_run(argv, NULL, req, &pr), 0);
	cr_expect_eq(pr.exit_code, 0, "%s", pr.err);
	char *nl = strchr(pr.out, '\n');
	cr_assert_not_null(nl, "%s", pr.out);
	json_error_t je;
	json_t *a = json_loadb(pr.out, (size_t)(nl - pr.out), 0, &je), *b = json_loads(nl + 1, 0, &je);
	cr_assert_not_null(a, "%s", pr.out);
	cr_assert_not_null(b, "%s", pr.out);
	cr_expect(json_is_true(json_object_get(a, "ok")), "%s", pr.out);
	cr_expect_str_eq(err_kind(b), "denied", "%s", pr.out);
	json_decref(a);
	json_decref(b);
	dsh_proc_clear(&pr);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "x");
	cr_expect_not(exists(o));
}

/*
 * Swap ws/race between absent (the writer makes it), an empty directory, and a symlink to out.  A
 * finished write (race/sub/f.txt) is left alone for a moment, then cleared.
 */
static void flip(const char *race, const char *target)
{
	_cleanup_free_ char *tmp = dsh_test_pathf("%s.tmp", race), *f = dsh_test_pathf("%s/sub/f.txt", race),
			    *s = dsh_test_pathf("%s/sub", race);
	for (unsigned i = 0;; i++) {
		if (exists(f)) {
			usleep(2000);
			(void)unlink(f);
			(void)rmdir(s);
		}
		(void)rmdir(race); /* an empty directory the writer just made */
		(void)unlink(tmp);
		if (symlink(target, tmp) == 0)
			(void)rename(tmp, race); /* fails while race is a directory */
		usleep(i % 5 * 10);
		(void)unlink(race);
		usleep(500 + i % 7 * 200);
	}
}

Test(fence_contract, a_component_swapped_for_a_symlink_is_refused)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *race = dsh_test_pathf("%s/race", ws);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		flip(race, out);
	size_t ok = 0, failed = 0, kinds[16] = { 0 };
	for (int i = 0; i < 400; i++) {
		struct dsh_fence_write_result r;
		_cleanup_error_ struct dsh_error *err = NULL;
		if (dsh_fence_write(p, "race/sub/f.txt", "x", 1, &r, &err) == 0) {
			ok++;
			cr_expect(strncmp(r.path, ws, strlen(ws)) == 0, "written outside: %s", r.path);
			dsh_fence_write_result_clear(&r);
		} else {
			failed++;
			kinds[err->kind < 16 ? err->kind : 15]++;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	_cleanup_free_ char *osub = dsh_test_pathf("%s/sub", out);
	cr_expect_not(exists(osub), "a directory was made through the symlink, outside the workspace");
	fprintf(stderr, "fence contract race: %zu writes made their directories, %zu refused (%zu denied, %zu invalid, %zu io)\n",
		ok, failed, kinds[DSH_ERR_DENIED], kinds[DSH_ERR_INVALID], kinds[DSH_ERR_SYSTEM]);
	dsh_policy_free(p);
}

/* ---- 2. modes ---- */

static mode_t mode_of(const char *path)
{
	struct stat st;
	cr_assert_eq(stat(path, &st), 0, "%s", path);
	return st.st_mode & 07777;
}

static void modes_follow_the_umask_and_the_old_file(void)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	static const mode_t masks[] = { 022, 077, 0, 027 };
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "new-%03o", (unsigned)masks[i]);
		mode_t old = umask(masks[i]);
		struct dsh_fence_write_result r;
		dsh_test_fence_write_ok(p, name, "x\n", &r);
		dsh_fence_write_result_clear(&r);
		umask(old);
		_cleanup_free_ char *f = NULL;
		cr_assert(asprintf(&f, "%s/%s", ws, name) > 0);
		cr_expect_eq(mode_of(f), 0666 & ~masks[i], "umask %03o: mode %04o", (unsigned)masks[i],
			     (unsigned)mode_of(f));
	}
	/* An overwrite keeps the mode, but never setuid or setgid. */
	_cleanup_free_ char *f = dsh_test_pathf("%s/kept", ws);
	static const struct {
		mode_t before, after;
	} over[] = { { 0750, 0750 }, { 0600, 0600 }, { 04755, 0755 }, { 06755, 0755 }, { 01644, 01644 } };
	for (size_t i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
		dsh_test_write_file(f, "old\n");
		cr_assert_eq(chmod(f, over[i].before), 0);
		cr_assert_eq(mode_of(f), over[i].before, "this filesystem keeps %04o", (unsigned)over[i].before);
		struct dsh_fence_write_result r;
		dsh_test_fence_write_ok(p, f, "new\n", &r);
		dsh_fence_write_result_clear(&r);
		cr_expect_eq(mode_of(f), over[i].after, "%04o became %04o, want %04o", (unsigned)over[i].before,
			     (unsigned)mode_of(f), (unsigned)over[i].after);
		/* An edit too. */
		cr_assert_eq(chmod(f, over[i].before), 0);
		_cleanup_error_ struct dsh_error *err = NULL;
		cr_assert_eq(dsh_fence_edit(p, f, "new", 3, "newer", 5, false, &r, &err), 0, "%s", err ? err->msg : "");
		dsh_fence_write_result_clear(&r);
		cr_expect_eq(mode_of(f), over[i].after, "edit: %04o became %04o", (unsigned)over[i].before,
			     (unsigned)mode_of(f));
	}
	dsh_policy_free(p);
}

Test(fence_contract, new_files_get_0666_minus_umask)
{
	modes_follow_the_umask_and_the_old_file();
}

/*
 * The same without O_TMPFILE (a filesystem that lacks it: the named-temporary fallback), forced with
 * a seccomp filter that answers EOPNOTSUPP to any open asking for O_TMPFILE.
 */
Test(fence_contract, new_files_get_0666_minus_umask_without_o_tmpfile)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	cr_assert_not_null(ctx);
	const uint64_t tmpfile_bit = O_TMPFILE & ~O_DIRECTORY;
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(openat), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, tmpfile_bit, tmpfile_bit)), 0);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(open), 1,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, tmpfile_bit, tmpfile_bit)), 0);
	cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	cr_assert_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
	int fd = openat(AT_FDCWD, ws, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_lt(fd, 0, "the shim did not take");
	cr_assert_eq(errno, EOPNOTSUPP);
	modes_follow_the_umask_and_the_old_file();
	/* The fallback's named temporaries are gone too. */
	struct dsh_proc pr;
	char *argv[] = { (char *)"ls", (char *)"-A", ws, NULL };
	cr_assert_eq(dsh_proc_run(argv, NULL, NULL, &pr), 0);
	cr_expect_str_eq(pr.out, "kept\nnew-000\nnew-022\nnew-027\nnew-077\n", "stray files: %s", pr.out);
	dsh_proc_clear(&pr);
}

/* ---- 3. edit takes text, and keeps CRLF ---- */

Test(fence_contract, edit_refuses_files_that_are_not_text)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *nul = dsh_test_pathf("%s/nul.bin", ws), *latin1 = dsh_test_pathf("%s/latin1.txt", ws),
			    *utf8 = dsh_test_pathf("%s/utf8.txt", ws), *over = dsh_test_pathf("%s/overlong.txt", ws);
	int fd = open(nul, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "key=a\0b\n", 8), 8);
	close(fd);
	dsh_test_write_file(latin1, "caf\xe9 key=a\n");
	dsh_test_write_file(over, "\xc0\xaf key=a\n");
	dsh_test_write_file(utf8, "caf\xc3\xa9 key=a \xf0\x9f\x99\x82\n");
	cr_expect_eq(edit_fails(p, nul, "key=a", "key=b"), DSH_ERR_NOT_TEXT);
	cr_expect_eq(edit_fails(p, latin1, "key=a", "key=b"), DSH_ERR_NOT_TEXT);
	cr_expect_eq(edit_fails(p, over, "key=a", "key=b"), DSH_ERR_NOT_TEXT);
	_cleanup_free_ char *l = dsh_test_read_file(latin1);
	cr_expect_str_eq(l, "caf\xe9 key=a\n", "a refused edit changed the file");
	/* UTF-8 text is text. */
	struct dsh_fence_write_result r;
	edit_ok(p, utf8, "key=a", "key=\xc3\xbc", false, &r);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *u = dsh_test_read_file(utf8);
	cr_expect_str_eq(u, "caf\xc3\xa9 key=\xc3\xbc \xf0\x9f\x99\x82\n");
	/* Strings that are not text cannot make a text file into something else. */
	cr_expect_eq(edit_fails(p, utf8, "caf\xc3\xa9", "caf\xe9"), DSH_ERR_INVALID);
	/* The kind's name, the CLI's exit code 8, and serve's answer. */
	cr_expect_str_eq(dsh_err_kind_to_string(DSH_ERR_NOT_TEXT), "not-text");
	const char *args[] = { "edit", latin1, "--old", "key=a", "--new", "key=b", "--workspace", ws, NULL };
	struct dsh_proc pr = run_fs(NULL, args);
	cr_expect_eq(pr.exit_code, 8, "%s", pr.err);
	cr_expect_eq(dsh_count_lines_with_prefix(pr.err, "dshbox: error: "), 1, "%s", pr.err);
	cr_expect(strstr(pr.err, "not text") != NULL, "%s", pr.err);
	dsh_proc_clear(&pr);
	_cleanup_free_ char *req = NULL;
	cr_assert(asprintf(&req, "{\"id\":1,\"op\":\"edit\",\"path\":\"%s\",\"old\":\"key=a\",\"new\":\"key=b\"}", nul) > 0);
	json_t *a = serve1(p, req);
	cr_expect_str_eq(err_kind(a), "not-text");
	json_decref(a);
	dsh_policy_free(p);
}

Test(fence_contract, edit_with_lf_strings_matches_a_crlf_file_and_keeps_crlf)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/win.txt", ws);
	dsh_test_write_file(f, "one\r\ntwo\r\nthree\r\n");
	struct dsh_fence_write_result r;
	edit_ok(p, f, "one\ntwo\n", "ONE\nTWO\nextra\n", false, &r);
	cr_assert_not_null(r.diff);
	cr_expect(strstr(r.diff, "+extra\r\n") != NULL, "%s", r.diff);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "ONE\r\nTWO\r\nextra\r\nthree\r\n");
	/* Strings that already say CRLF match as they are. */
	edit_ok(p, f, "extra\r\n", "more\r\n", false, &r);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *c2 = dsh_test_read_file(f);
	cr_expect_str_eq(c2, "ONE\r\nTWO\r\nmore\r\nthree\r\n");
	/* A one-line edit, every occurrence. */
	edit_ok(p, f, "\n", "\n\n", true, &r);
	cr_expect_eq(r.replacements, 4);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *c3 = dsh_test_read_file(f);
	cr_expect_str_eq(c3, "ONE\r\n\r\nTWO\r\n\r\nmore\r\n\r\nthree\r\n\r\n");
	/* An LF file stays LF, and a file with both line ends is matched exactly. */
	_cleanup_free_ char *lf = dsh_test_pathf("%s/unix.txt", ws), *mixed = dsh_test_pathf("%s/mixed.txt", ws);
	dsh_test_write_file(lf, "a\nb\n");
	edit_ok(p, lf, "a\nb", "A\nB", false, &r);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *l = dsh_test_read_file(lf);
	cr_expect_str_eq(l, "A\nB\n");
	dsh_test_write_file(mixed, "a\r\nb\nc\n");
	cr_expect_eq(edit_fails(p, mixed, "a\nb", "x"), DSH_ERR_INVALID);
	edit_ok(p, mixed, "b\nc", "B\nC", false, &r);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *m = dsh_test_read_file(mixed);
	cr_expect_str_eq(m, "a\r\nB\nC\n");
	/* Through serve, where hosts send JSON strings with \n. */
	dsh_test_write_file(f, "x = 1\r\ny = 2\r\n");
	_cleanup_free_ char *req = NULL;
	cr_assert(asprintf(&req, "{\"id\":1,\"op\":\"edit\",\"path\":\"%s\",\"old\":\"x = 1\\ny\",\"new\":\"x = 3\\nz\\ny\"}", f) > 0);
	json_t *a = serve1(p, req);
	cr_expect(json_is_true(json_object_get(a, "ok")), "%s", json_dumps(a, 0));
	json_decref(a);
	_cleanup_free_ char *c4 = dsh_test_read_file(f);
	cr_expect_str_eq(c4, "x = 3\r\nz\r\ny = 2\r\n");
	dsh_policy_free(p);
}

/* ---- 4. versions ---- */

static void version_of(const char *path, char buf[DSH_FENCE_VERSION_MAX])
{
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(dsh_fence_version(&st, buf, DSH_FENCE_VERSION_MAX), 0);
}

static void read_version(struct dsh_policy *p, const char *path, char buf[DSH_FENCE_VERSION_MAX])
{
	struct dsh_fence_read_result r;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_fence_read(p, path, 0, 0, &r, &err), 0, "%s", err ? err->msg : "");
	snprintf(buf, DSH_FENCE_VERSION_MAX, "%s", r.version);
	dsh_fence_read_result_clear(&r);
}

static int write_v(struct dsh_policy *p, const char *path, const char *data, const char *expect,
		   struct dsh_fence_write_result *r, enum dsh_err_kind *ret_kind)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	struct dsh_fence_write_opts o = { .expect_version = expect };
	int rc = dsh_fence_write_ex(p, path, data, strlen(data), &o, r, &err);
	*ret_kind = rc < 0 ? err->kind : (enum dsh_err_kind)-1;
	return rc;
}

static int edit_v_hooked(struct dsh_policy *p, const char *path, const char *o, const char *n, const char *expect,
			 dsh_fence_edit_hook_fn hook, enum dsh_err_kind *ret_kind)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	struct dsh_fence_write_opts opts = { .expect_version = expect };
	struct dsh_fence_write_result r;
	int rc = dsh_fence_edit_hooked(p, path, o, strlen(o), n, strlen(n), false, &opts, hook, NULL, &r, &err);
	*ret_kind = rc < 0 ? err->kind : (enum dsh_err_kind)-1;
	if (rc == 0)
		dsh_fence_write_result_clear(&r);
	return rc;
}

static int edit_v(struct dsh_policy *p, const char *path, const char *o, const char *n, const char *expect,
		  enum dsh_err_kind *ret_kind)
{
	return edit_v_hooked(p, path, o, n, expect, NULL, ret_kind);
}

Test(fence_contract, reads_carry_a_version_and_stale_writes_conflict)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/v.txt", ws);
	dsh_test_write_file(f, "one\n");
	char v[DSH_FENCE_VERSION_MAX], want[DSH_FENCE_VERSION_MAX];
	read_version(p, f, v);
	version_of(f, want);
	cr_expect_str_eq(v, want);
	struct stat st;
	cr_assert_eq(stat(f, &st), 0);
	char mine[DSH_FENCE_VERSION_MAX];
	snprintf(mine, sizeof(mine), "4:%llu:%llu",
		 (unsigned long long)st.st_mtim.tv_sec * 1000000000ull + (unsigned long long)st.st_mtim.tv_nsec,
		 (unsigned long long)st.st_ino);
	cr_expect_str_eq(v, mine, "the version is SIZE:MTIME_NS:INODE");

	/* Unchanged: the write goes through and answers the new version. */
	struct dsh_fence_write_result r;
	enum dsh_err_kind k;
	cr_assert_eq(write_v(p, f, "two\n", v, &r, &k), 0);
	version_of(f, want);
	cr_expect_str_eq(r.version, want, "the answer's version is the file's as written");
	snprintf(v, sizeof(v), "%s", r.version);
	dsh_fence_write_result_clear(&r);
	/* Chained: the write's version is good for the next edit. */
	cr_assert_eq(edit_v(p, f, "two", "three", v, &k), 0);
	read_version(p, f, v);

	/* Changed in place (same size), replaced by a rename, touched, or removed: conflict, and
	   the other writer's content stays. */
	int fd = open(f, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, "THREE", 5, 0), 5);
	close(fd);
	cr_expect_lt(write_v(p, f, "mine\n", v, &r, &k), 0);
	cr_expect_eq(k, DSH_ERR_CONFLICT);
	cr_expect_lt(edit_v(p, f, "THREE", "x", v, &k), 0);
	cr_expect_eq(k, DSH_ERR_CONFLICT);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "THREE\n");

	read_version(p, f, v);
	_cleanup_free_ char *tmp = dsh_test_pathf("%s/editor.swp", ws);
	dsh_test_write_file(tmp, "THREE\n");
	cr_assert_eq(rename(tmp, f), 0);
	cr_expect_lt(write_v(p, f, "mine\n", v, &r, &k), 0);
	cr_expect_eq(k, DSH_ERR_CONFLICT, "a rename over the file (a new inode) is a change");

	read_version(p, f, v);
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 12345, 678 } };
	cr_assert_eq(utimensat(AT_FDCWD, f, ts, 0), 0);
	cr_expect_lt(edit_v(p, f, "THREE", "x", v, &k), 0);
	cr_expect_eq(k, DSH_ERR_CONFLICT, "a new mtime is a change");

	read_version(p, f, v);
	cr_assert_eq(unlink(f), 0);
	cr_expect_lt(write_v(p, f, "mine\n", v, &r, &k), 0);
	cr_expect_eq(k, DSH_ERR_CONFLICT, "a removed file is a change");
	cr_expect_not(exists(f));

	/* A malformed version is a malformed request. */
	dsh_test_write_file(f, "x\n");
	cr_expect_lt(write_v(p, f, "y\n", "yesterday", &r, &k), 0);
	cr_expect_eq(k, DSH_ERR_INVALID);
	cr_expect_lt(write_v(p, f, "y\n", "1:2:3:4", &r, &k), 0);
	cr_expect_eq(k, DSH_ERR_INVALID);
	dsh_policy_free(p);
}

/*
 * Coarse timestamps: a filesystem that stamps changes with the kernel's coarse clock (every
 * filesystem before 6.13; ramfs still) must not let a same-size change made right after the
 * fence's answer keep the version: in place, by this or another process, by a rename, after two
 * quick writes of the fence.  ramfs, mounted in a private user and mount namespace, shows it on
 * any kernel (it has no fine-grained timestamps, Linux 6.13).  No sleep: the fence's own stamp
 * (fence/version.c) must make the version move however soon the other writer comes.  In a child: unshare needs a single-threaded process.
 */
static bool write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

/* Another writer's replacement: a same-size file renamed over path. */
static bool write_proc_new(const char *path, const char *text)
{
	_cleanup_free_ char *tmp = dsh_test_pathf("%s.other", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok && rename(tmp, path) == 0;
}

static int coarse_child(void)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return 10;
	char map[64];
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (!write_proc("/proc/self/uid_map", map) || !write_proc("/proc/self/setgroups", "deny\n"))
		return 11;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (!write_proc("/proc/self/gid_map", map))
		return 11;
	if (mount("none", ws, "ramfs", 0, "mode=0755") < 0)
		return 12;
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/coarse.txt", ws);
	struct dsh_fence_write_result r;
	enum dsh_err_kind k;
	char v[DSH_FENCE_VERSION_MAX];
	for (int i = 0; i < 20; i++) {
		/* The write's own answer, then another writer in place, at once. */
		if (write_v(p, f, "aaaa\n", NULL, &r, &k) < 0)
			return 20;
		snprintf(v, sizeof(v), "%s", r.version);
		dsh_fence_write_result_clear(&r);
		int fd = open(f, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || pwrite(fd, "BBBB", 4, 0) != 4)
			return 21;
		close(fd);
		if (write_v(p, f, "mine\n", v, &r, &k) == 0 || k != DSH_ERR_CONFLICT)
			return 22; /* the stale write went through */
		/* A read's answer, the same. */
		read_version(p, f, v);
		fd = open(f, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || pwrite(fd, "CCCC", 4, 0) != 4)
			return 21;
		close(fd);
		if (write_v(p, f, "mine\n", v, &r, &k) == 0 || k != DSH_ERR_CONFLICT)
			return 23;
		_cleanup_free_ char *c = dsh_test_read_file(f);
		if (strcmp(c, "CCCC\n") != 0)
			return 24;
		/* Another process, in place, at once after the fence's write. */
		if (write_v(p, f, "dddd\n", NULL, &r, &k) < 0)
			return 20;
		snprintf(v, sizeof(v), "%s", r.version);
		dsh_fence_write_result_clear(&r);
		pid_t pid = fork();
		if (pid == 0) {
			int cfd = open(f, O_WRONLY | O_CLOEXEC);
			_exit(cfd >= 0 && pwrite(cfd, "EEEE", 4, 0) == 4 ? 0 : 1);
		}
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 21;
		if (write_v(p, f, "mine\n", v, &r, &k) == 0 || k != DSH_ERR_CONFLICT)
			return 25;
		/* A same-size file renamed over it, at once after the fence's write. */
		if (write_v(p, f, "ffff\n", NULL, &r, &k) < 0)
			return 20;
		snprintf(v, sizeof(v), "%s", r.version);
		dsh_fence_write_result_clear(&r);
		if (!write_proc_new(f, "GGGG\n"))
			return 21;
		if (write_v(p, f, "mine\n", v, &r, &k) == 0 || k != DSH_ERR_CONFLICT)
			return 26;
		/* Two fence writes of one file within one tick, then another writer: both versions differ,
		   and the second is stale after the change. */
		char v1[DSH_FENCE_VERSION_MAX];
		if (write_v(p, f, "hhhh\n", NULL, &r, &k) < 0)
			return 20;
		snprintf(v1, sizeof(v1), "%s", r.version);
		dsh_fence_write_result_clear(&r);
		if (write_v(p, f, "iiii\n", v1, &r, &k) < 0)
			return 20;
		snprintf(v, sizeof(v), "%s", r.version);
		dsh_fence_write_result_clear(&r);
		if (strcmp(v, v1) == 0)
			return 27;
		fd = open(f, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || pwrite(fd, "JJJJ", 4, 0) != 4)
			return 21;
		close(fd);
		if (write_v(p, f, "mine\n", v, &r, &k) == 0 || k != DSH_ERR_CONFLICT)
			return 28;
		if (write_v(p, f, "mine\n", v1, &r, &k) == 0 || k != DSH_ERR_CONFLICT)
			return 28;
		_cleanup_free_ char *c2 = dsh_test_read_file(f);
		if (strcmp(c2, "JJJJ\n") != 0)
			return 24;
	}
	dsh_policy_free(p);
	return 0;
}

Test(fence_contract, versions_hold_on_a_filesystem_with_coarse_timestamps)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(coarse_child());
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the child died: status %d", status);
	int rc = WEXITSTATUS(status);
	if (rc == 10 || rc == 11 || rc == 12)
		DSH_SKIP("no private user and mount namespace with ramfs here (step %d): cannot make coarse timestamps", rc);
	cr_assert_neq(rc, 22, "a write with the version of the fence's own write passed after a same-size change");
	cr_assert_neq(rc, 23, "a write with the version of a read passed after a same-size change");
	cr_assert_neq(rc, 25, "a write with the fence's version passed after another process wrote in place");
	cr_assert_neq(rc, 26, "a write with the fence's version passed after a same-size file was renamed over");
	cr_assert_neq(rc, 27, "two writes of one file within a tick answered the same version");
	cr_assert_neq(rc, 28, "a write with the version of the second of two quick writes passed after a change");
	cr_assert_eq(rc, 0, "coarse-timestamp check failed at step %d", rc);
}

/* The other writer, between the edit's read (with the expected version) and its rename. */
static const char *hook_file;
static void touch_between(void *data)
{
	(void)data;
	int fd = open(hook_file, O_WRONLY | O_APPEND | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "theirs\n", 7), 7);
	close(fd);
}

Test(fence_contract, a_change_after_the_version_was_checked_is_still_a_conflict)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/late.txt", ws);
	dsh_test_write_file(f, "mine\n");
	char v[DSH_FENCE_VERSION_MAX];
	read_version(p, f, v);
	hook_file = f;
	enum dsh_err_kind k;
	cr_expect_lt(edit_v_hooked(p, f, "mine", "edited", v, touch_between, &k), 0);
	cr_expect_eq(k, DSH_ERR_CONFLICT);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "mine\ntheirs\n");
	dsh_policy_free(p);
}

Test(fence_contract, versions_through_serve_and_the_cli)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = dsh_test_pathf("%s/s.txt", ws);
	dsh_test_write_file(f, "alpha\n");
	_cleanup_free_ char *rq = NULL;
	cr_assert(asprintf(&rq, "{\"id\":1,\"op\":\"read\",\"path\":\"%s\"}", f) > 0);
	json_t *a = serve1(p, rq);
	const char *v = json_string_value(json_object_get(a, "version"));
	cr_assert_not_null(v, "a read answer without a version");
	char want[DSH_FENCE_VERSION_MAX];
	version_of(f, want);
	cr_expect_str_eq(v, want);
	_cleanup_free_ char *wq = NULL, *eq = NULL, *bad = NULL;
	cr_assert(asprintf(&wq, "{\"id\":2,\"op\":\"write\",\"path\":\"%s\",\"content\":\"beta\\n\",\"expectVersion\":\"%s\"}", f, v) > 0);
	json_decref(a);
	json_t *w = serve1(p, wq);
	cr_expect(json_is_true(json_object_get(w, "ok")), "%s", json_dumps(w, 0));
	version_of(f, want);
	cr_expect_str_eq(json_string_value(json_object_get(w, "version")), want);
	json_decref(w);
	/* The same request again: its version is stale now. */
	json_t *w2 = serve1(p, wq);
	cr_expect_str_eq(err_kind(w2), "conflict");
	json_decref(w2);
	cr_assert(asprintf(&eq, "{\"id\":3,\"op\":\"edit\",\"path\":\"%s\",\"old\":\"beta\",\"new\":\"gamma\",\"expectVersion\":\"%s\"}", f, want) > 0);
	json_t *e = serve1(p, eq);
	cr_expect(json_is_true(json_object_get(e, "ok")), "%s", json_dumps(e, 0));
	json_decref(e);
	cr_assert(asprintf(&bad, "{\"id\":4,\"op\":\"write\",\"path\":\"%s\",\"content\":\"\",\"expectVersion\":5}", f) > 0);
	json_t *b = serve1(p, bad);
	cr_expect_str_eq(err_kind(b), "invalid");
	json_decref(b);
	dsh_policy_free(p);

	/* The CLI: --version-fd gives the version beside the bytes, --expect-version takes it back. */
	_cleanup_free_ char *vf = dsh_test_pathf("%s/version", root), *script = NULL;
	cr_assert(asprintf(&script, "\"$0\" fs read '%s' --workspace '%s' --version-fd 3 3>'%s'", f, ws, vf) > 0);
	char *argv[] = { (char *)"sh", (char *)"-c", script, (char *)dsh_test_dshbox(), NULL };
	struct dsh_proc pr;
	cr_assert_eq(dsh_proc_run(argv, NULL, NULL, &pr), 0);
	cr_expect_eq(pr.exit_code, 0, "%s", pr.err);
	cr_expect_str_eq(pr.out, "gamma\n", "stdout is the file's bytes only");
	dsh_proc_clear(&pr);
	_cleanup_free_ char *line = dsh_test_read_file(vf);
	version_of(f, want);
	cr_assert_not_null(line);
	cr_expect_eq(strlen(line), strlen(want) + 1);
	line[strlen(want)] = '\0';
	cr_expect_str_eq(line, want);
	const char *ok[] = { "write", f, "--expect-version", want, "--workspace", ws, NULL };
	pr = run_fs("delta\n", ok);
	cr_expect_eq(pr.exit_code, 0, "%s", pr.err);
	dsh_proc_clear(&pr);
	pr = run_fs("epsilon\n", ok);
	cr_expect_eq(pr.exit_code, 3, "a stale version: exit %d: %s", pr.exit_code, pr.err);
	cr_expect_eq(dsh_count_lines_with_prefix(pr.err, "dshbox: error: "), 1, "%s", pr.err);
	dsh_proc_clear(&pr);
	const char *e2[] = { "edit", f, "--old", "delta", "--new", "x", "--expect-version", want, "--workspace", ws, NULL };
	pr = run_fs(NULL, e2);
	cr_expect_eq(pr.exit_code, 3, "%s", pr.err);
	dsh_proc_clear(&pr);
	const char *l[] = { "list", ws, "--expect-version", want, NULL };
	pr = run_fs(NULL, l);
	cr_expect_eq(pr.exit_code, 125, "%s", pr.err);
	dsh_proc_clear(&pr);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "delta\n");
}

/* ---- 5. temporaries nobody can plant, and writes in place ---- */

Test(fence_contract, temporary_names_are_unpredictable)
{
	char a[NAME_MAX + 1], b[NAME_MAX + 1];
	cr_assert_eq(dsh_fence_temp_name("f.txt", a, sizeof(a)), 0);
	cr_assert_eq(dsh_fence_temp_name("f.txt", b, sizeof(b)), 0);
	cr_expect_str_neq(a, b, "two writes of one file got the same temporary name");
	cr_expect_eq(strncmp(a, ".f.txt.dshbox~", 14), 0, "%s", a);
	cr_expect_eq(strlen(a), 14 + 16, "%s", a);
	cr_expect(dsh_fence_is_temp_name("f.txt", a));
	cr_expect_not(dsh_fence_is_temp_name("f.txt", ".f.txt.dshbox~"), "the old fixed name is not one");
	cr_expect_not(dsh_fence_is_temp_name("g.txt", a));
	char longname[NAME_MAX + 1];
	memset(longname, 'n', NAME_MAX);
	longname[NAME_MAX] = '\0';
	cr_assert_eq(dsh_fence_temp_name(longname, a, sizeof(a)), 0);
	cr_expect_leq(strlen(a), NAME_MAX);
	cr_expect(dsh_fence_is_temp_name(longname, a), "%s", a);
	/* And a write of a file with the longest name works. */
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *f = NULL;
	cr_assert(asprintf(&f, "%s/%s", ws, longname) > 0);
	dsh_test_write_file(f, "old\n");
	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, f, "new\n", &r);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "new\n");
	dsh_policy_free(p);
}

/* What can be planted at a temporary-looking name, and must neither block nor redirect a write. */
static void plant(const char *name, const char *victim, int *ret_lock_fd)
{
	_cleanup_free_ char *dir = NULL, *lnk = NULL, *fifo = NULL, *locked = NULL, *inner = NULL;
	cr_assert(asprintf(&dir, "%s/.%s.dshbox~", ws, name) > 0);
	cr_assert_eq(mkdir(dir, 0755), 0);
	cr_assert(asprintf(&inner, "%s/keep", dir) > 0);
	dsh_test_write_file(inner, "keep\n");
	/* The old fixed name's neighbours: the shapes random names take, but chosen by the planter. */
	cr_assert(asprintf(&lnk, "%s/.%s.dshbox~0000000000000001", ws, name) > 0);
	cr_assert_eq(symlink(victim, lnk), 0);
	cr_assert(asprintf(&fifo, "%s/.%s.dshbox~0000000000000002", ws, name) > 0);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	cr_assert(asprintf(&locked, "%s/.%s.dshbox~0000000000000003", ws, name) > 0);
	dsh_test_write_file(locked, "live\n");
	*ret_lock_fd = open(locked, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(*ret_lock_fd, 0);
	cr_assert_eq(flock(*ret_lock_fd, LOCK_EX), 0);
}

static void planted_entries_never_block_or_redirect(void)
{
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *victim = dsh_test_pathf("%s/victim", out);
	dsh_test_write_file(victim, "outside\n");
	static const char *const names[] = { "exists.txt", "new.txt" };
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *f = NULL, *dir = NULL, *fifo = NULL, *locked = NULL, *legacy_link = NULL;
		cr_assert(asprintf(&f, "%s/%s", ws, names[i]) > 0);
		if (i == 0)
			dsh_test_write_file(f, "old\n");
		int lock_fd;
		plant(names[i], victim, &lock_fd);
		struct dsh_fence_write_result r;
		dsh_test_fence_write_ok(p, f, "new\n", &r);
		cr_expect_eq(r.created, i == 1);
		dsh_fence_write_result_clear(&r);
		edit_ok(p, f, "new", "edited", false, &r);
		dsh_fence_write_result_clear(&r);
		_cleanup_free_ char *c = dsh_test_read_file(f), *v = dsh_test_read_file(victim);
		cr_expect_str_eq(c, "edited\n", "%s", names[i]);
		cr_expect_str_eq(v, "outside\n", "%s: a write was redirected through a planted symlink", names[i]);
		/* The planted directory and FIFO are left as they were (not ours: nothing of the
		   user's is removed), and so is a locked temporary (a live writer's). */
		cr_assert(asprintf(&dir, "%s/.%s.dshbox~/keep", ws, names[i]) > 0);
		cr_expect(exists(dir), "%s: the planted directory's content is gone", names[i]);
		cr_assert(asprintf(&fifo, "%s/.%s.dshbox~0000000000000002", ws, names[i]) > 0);
		struct stat st;
		cr_expect(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "%s", names[i]);
		cr_assert(asprintf(&locked, "%s/.%s.dshbox~0000000000000003", ws, names[i]) > 0);
		_cleanup_free_ char *l = dsh_test_read_file(locked);
		cr_expect_str_eq(l, "live\n");
		close(lock_fd);
		/* Now unlocked: a killed writer's leftover; the next write of the file removes it. */
		dsh_test_fence_write_ok(p, f, "again\n", &r);
		dsh_fence_write_result_clear(&r);
		cr_expect_not(exists(locked), "%s: a stale temporary was kept", names[i]);
		/* A symlink with a temporary's name is removed, never followed. */
		cr_assert(asprintf(&legacy_link, "%s/.%s.dshbox~0000000000000001", ws, names[i]) > 0);
		cr_expect_not(exists(legacy_link));
	}
	_cleanup_free_ char *v = dsh_test_read_file(victim);
	cr_expect_str_eq(v, "outside\n");
	/* The legacy fixed name as a symlink to outside: never written through. */
	_cleanup_free_ char *f = dsh_test_pathf("%s/l.txt", ws), *legacy = dsh_test_pathf("%s/.l.txt.dshbox~", ws);
	dsh_test_write_file(f, "old\n");
	cr_assert_eq(symlink(victim, legacy), 0);
	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, f, "new\n", &r);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *v2 = dsh_test_read_file(victim);
	cr_expect_str_eq(v2, "outside\n");
	struct stat st;
	cr_expect(lstat(legacy, &st) == 0 && S_ISLNK(st.st_mode));
	dsh_policy_free(p);
}

Test(fence_contract, planted_temporaries_never_block_or_redirect_a_write)
{
	planted_entries_never_block_or_redirect();
}

static void shim_no_tmpfile(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	cr_assert_not_null(ctx);
	const uint64_t tmpfile_bit = O_TMPFILE & ~O_DIRECTORY;
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(openat), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, tmpfile_bit, tmpfile_bit)), 0);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(open), 1,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, tmpfile_bit, tmpfile_bit)), 0);
	cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	cr_assert_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
	int fd = openat(AT_FDCWD, ws, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_lt(fd, 0, "the shim did not take");
	cr_assert_eq(errno, EOPNOTSUPP);
}

Test(fence_contract, planted_temporaries_never_block_or_redirect_a_write_without_o_tmpfile)
{
	shim_no_tmpfile();
	planted_entries_never_block_or_redirect();
}

/*
 * Root passes any directory's permissions: to see a directory refuse new files, drop to nobody
 * (this process runs only this test), handing the scratch tree over first so teardown can remove it.
 */
static int chown_nobody(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return lchown(path, 65534, 65534) < 0 ? -1 : 0;
}

static void become_unprivileged(void)
{
	if (geteuid() != 0)
		return;
	cr_assert_eq(nftw(root, chown_nobody, 16, FTW_PHYS), 0);
	cr_assert_eq(setgroups(0, NULL), 0);
	cr_assert_eq(setresgid(65534, 65534, 65534), 0);
	cr_assert_eq(setresuid(65534, 65534, 65534), 0);
}

Test(fence_contract, a_directory_that_refuses_new_files_gets_an_in_place_write)
{
	become_unprivileged();
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	_cleanup_free_ char *dir = dsh_test_pathf("%s/locked", ws), *f = dsh_test_pathf("%s/locked/conf.txt", ws),
			    *ro = dsh_test_pathf("%s/locked/ro.txt", ws), *nf = dsh_test_pathf("%s/locked/new.txt", ws);
	dsh_test_write_file(f, "a = 1\nb = 2\n");
	dsh_test_write_file(ro, "read only\n");
	cr_assert_eq(chmod(f, 0640), 0);
	cr_assert_eq(chmod(ro, 0444), 0);
	cr_assert_eq(chmod(dir, 0555), 0);
	struct stat before, after;
	cr_assert_eq(stat(f, &before), 0);

	struct dsh_fence_write_result r;
	dsh_test_fence_write_ok(p, f, "a = 1\nb = 3\n", &r);
	cr_expect(r.in_place, "the answer does not say the write was not atomic");
	cr_expect_not(r.created);
	cr_assert_not_null(r.diff);
	cr_expect(strstr(r.diff, "-b = 2\n+b = 3\n") != NULL, "%s", r.diff);
	char want[DSH_FENCE_VERSION_MAX];
	version_of(f, want);
	cr_expect_str_eq(r.version, want);
	dsh_fence_write_result_clear(&r);
	cr_assert_eq(stat(f, &after), 0);
	cr_expect_eq(after.st_ino, before.st_ino, "written in place: the same inode");
	cr_expect_eq(after.st_mode & 07777, 0640);
	_cleanup_free_ char *c = dsh_test_read_file(f);
	cr_expect_str_eq(c, "a = 1\nb = 3\n");
	/* Shorter content: the rest is cut off. */
	dsh_test_fence_write_ok(p, f, "x\n", &r);
	cr_expect(r.in_place);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *c2 = dsh_test_read_file(f);
	cr_expect_str_eq(c2, "x\n");
	/* An edit too, with its checks. */
	edit_ok(p, f, "x", "y", false, &r);
	cr_expect(r.in_place);
	dsh_fence_write_result_clear(&r);
	_cleanup_free_ char *c3 = dsh_test_read_file(f);
	cr_expect_str_eq(c3, "y\n");
	char v[DSH_FENCE_VERSION_MAX];
	read_version(p, f, v);
	int fd = open(f, O_WRONLY | O_APPEND | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "theirs\n", 7), 7);
	close(fd);
	enum dsh_err_kind k;
	cr_expect_lt(write_v(p, f, "mine\n", v, &r, &k), 0);
	cr_expect_eq(k, DSH_ERR_CONFLICT, "an in-place write checks the expected version too");
	_cleanup_free_ char *c4 = dsh_test_read_file(f);
	cr_expect_str_eq(c4, "y\ntheirs\n");
	/* Neither a new file nor a read-only one: refused, nothing changed. */
	cr_expect_eq(dsh_test_fence_write_fails(p, nf, "x"), DSH_ERR_SYSTEM);
	cr_expect_not(exists(nf));
	cr_expect_eq(dsh_test_fence_write_fails(p, ro, "x"), DSH_ERR_SYSTEM);
	_cleanup_free_ char *c5 = dsh_test_read_file(ro);
	cr_expect_str_eq(c5, "read only\n");
	/* serve says "atomic": false, the CLI warns. */
	_cleanup_free_ char *req = NULL;
	cr_assert(asprintf(&req, "{\"id\":1,\"op\":\"write\",\"path\":\"%s\",\"content\":\"z\\n\"}", f) > 0);
	json_t *a = serve1(p, req);
	cr_expect(json_is_true(json_object_get(a, "ok")), "%s", json_dumps(a, 0));
	cr_expect(json_is_false(json_object_get(a, "atomic")), "%s", json_dumps(a, 0));
	json_decref(a);
	const char *args[] = { "write", f, "--workspace", ws, NULL };
	struct dsh_proc pr = run_fs("cli\n", args);
	cr_expect_eq(pr.exit_code, 0, "%s", pr.err);
	cr_expect(strstr(pr.err, "not atomically") != NULL, "%s", pr.err);
	dsh_proc_clear(&pr);
	_cleanup_free_ char *c6 = dsh_test_read_file(f);
	cr_expect_str_eq(c6, "cli\n");
	/* A normal directory: atomic, and said so. */
	_cleanup_free_ char *g = dsh_test_pathf("%s/g.txt", ws);
	free(req);
	cr_assert(asprintf(&req, "{\"id\":2,\"op\":\"write\",\"path\":\"%s\",\"content\":\"z\\n\"}", g) > 0);
	a = serve1(p, req);
	cr_expect(json_is_true(json_object_get(a, "atomic")), "%s", json_dumps(a, 0));
	json_decref(a);
	cr_assert_eq(chmod(dir, 0755), 0);
	dsh_policy_free(p);
}

/* ---- 6. names that are not UTF-8 ---- */

static char *b64(const char *s)
{
	char *e = dsh_base64_encode((const unsigned char *)s, strlen(s), NULL);
	cr_assert_not_null(e);
	return e;
}

Test(fence_contract, names_listed_as_base64_are_addressed_as_path_base64)
{
	const char *rules[] = { "-- **/secr\xe9t*", NULL };
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, rules);
	/* Latin-1 names, as old archives and Windows shares leave them. */
	_cleanup_free_ char *f = dsh_test_pathf("%s/caf\xe9.txt", ws), *d = dsh_test_pathf("%s/r\xe9sum\xe9s", ws),
			    *inner = dsh_test_pathf("%s/r\xe9sum\xe9s/one.txt", ws),
			    *sec = dsh_test_pathf("%s/secr\xe9t.txt", ws);
	dsh_test_write_file(f, "hello\n");
	dsh_test_write_file(inner, "inner\n");
	dsh_test_write_file(sec, "key\n");

	_cleanup_free_ char *lq = NULL;
	cr_assert(asprintf(&lq, "{\"id\":1,\"op\":\"list\",\"path\":\"%s\"}", ws) > 0);
	json_t *l = serve1(p, lq);
	json_t *entries = json_object_get(l, "entries");
	cr_assert(json_is_array(entries), "%s", json_dumps(l, 0));
	const char *name_b64 = NULL;
	for (size_t i = 0; i < json_array_size(entries); i++) {
		json_t *n = json_object_get(json_array_get(entries, i), "name_base64");
		_cleanup_free_ char *want = b64("caf\xe9.txt");
		if (n && strcmp(json_string_value(n), want) == 0)
			name_b64 = json_string_value(n);
	}
	cr_assert_not_null(name_b64, "list did not give the name as name_base64: %s", json_dumps(l, 0));

	/* read by the listed name (relative to the workspace), as given back by a host. */
	_cleanup_free_ char *rq = NULL;
	cr_assert(asprintf(&rq, "{\"id\":2,\"op\":\"read\",\"path_base64\":\"%s\"}", name_b64) > 0);
	json_t *r = serve1(p, rq);
	cr_expect(json_is_true(json_object_get(r, "ok")), "%s", json_dumps(r, 0));
	cr_expect_str_eq(json_string_value(json_object_get(r, "content")), "hello\n");
	/* The canonical path in the answer cannot be a JSON string either: path_base64 carries it. */
	_cleanup_free_ char *fb = b64(f);
	cr_expect_str_eq(json_string_value(json_object_get(r, "path_base64")), fb, "%s", json_dumps(r, 0));
	json_decref(r);
	json_decref(l);

	/* write, edit and list by path_base64 too (absolute paths). */
	_cleanup_free_ char *wq = NULL, *eq = NULL, *dq = NULL, *nf = dsh_test_pathf("%s/r\xe9sum\xe9s/n\xe9w.txt", ws);
	_cleanup_free_ char *nfb = b64(nf), *db = b64(d);
	cr_assert(asprintf(&wq, "{\"id\":3,\"op\":\"write\",\"path_base64\":\"%s\",\"content\":\"new\\n\"}", nfb) > 0);
	json_t *w = serve1(p, wq);
	cr_expect(json_is_true(json_object_get(w, "ok")), "%s", json_dumps(w, 0));
	cr_expect_str_eq(json_string_value(json_object_get(w, "path_base64")), nfb);
	json_decref(w);
	_cleanup_free_ char *c = dsh_test_read_file(nf);
	cr_expect_str_eq(c, "new\n");
	cr_assert(asprintf(&eq, "{\"id\":4,\"op\":\"edit\",\"path_base64\":\"%s\",\"old\":\"hello\",\"new\":\"bye\"}", fb) > 0);
	json_t *e = serve1(p, eq);
	cr_expect(json_is_true(json_object_get(e, "ok")), "%s", json_dumps(e, 0));
	json_decref(e);
	_cleanup_free_ char *c2 = dsh_test_read_file(f);
	cr_expect_str_eq(c2, "bye\n");
	cr_assert(asprintf(&dq, "{\"id\":5,\"op\":\"list\",\"path_base64\":\"%s\"}", db) > 0);
	json_t *dl = serve1(p, dq);
	cr_expect(json_is_true(json_object_get(dl, "ok")), "%s", json_dumps(dl, 0));
	cr_expect_eq(json_array_size(json_object_get(dl, "entries")), 2, "%s", json_dumps(dl, 0));
	json_decref(dl);

	/* A denial names the path in base64 as well, and the rule decides on the real bytes. */
	_cleanup_free_ char *sq = NULL, *sb = b64(sec);
	cr_assert(asprintf(&sq, "{\"id\":6,\"op\":\"read\",\"path_base64\":\"%s\"}", sb) > 0);
	json_t *sa = serve1(p, sq);
	cr_expect_str_eq(err_kind(sa), "denied", "%s", json_dumps(sa, 0));
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(sa, "error"), "path_base64")), sb,
			 "%s", json_dumps(sa, 0));
	json_decref(sa);

	/* Malformed: both keys, not base64, a NUL inside, empty, not a string. */
	static const char *const bad[] = {
		"{\"id\":7,\"op\":\"read\",\"path\":\"a\",\"path_base64\":\"YQ==\"}",
		"{\"id\":8,\"op\":\"read\",\"path_base64\":\"not base64!\"}",
		"{\"id\":9,\"op\":\"read\",\"path_base64\":\"YQBi\"}",
		"{\"id\":10,\"op\":\"read\",\"path_base64\":\"\"}",
		"{\"id\":11,\"op\":\"read\",\"path_base64\":7}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *b = serve1(p, bad[i]);
		cr_expect_str_eq(err_kind(b), "invalid", "%s -> %s", bad[i], json_dumps(b, 0));
		json_decref(b);
	}
	dsh_policy_free(p);
}

/* The same through the real server, confined, end to end. */
Test(fence_contract, path_base64_through_dshbox_serve)
{
	_cleanup_free_ char *f = dsh_test_pathf("%s/\xff\xfe.bin", ws);
	dsh_test_write_file(f, "odd name\n");
	_cleanup_free_ char *fb = b64(f), *req = NULL;
	cr_assert(asprintf(&req, "{\"id\":1,\"op\":\"read\",\"path_base64\":\"%s\"}\n", fb) > 0);
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws, NULL };
	struct dsh_proc pr;
	cr_assert_eq(dsh_proc_run(argv, NULL, req, &pr), 0);
	cr_expect_eq(pr.exit_code, 0, "%s", pr.err);
	json_error_t je;
	json_t *a = json_loads(pr.out, JSON_DISABLE_EOF_CHECK, &je);
	cr_assert_not_null(a, "%s", pr.out);
	cr_expect(json_is_true(json_object_get(a, "ok")), "%s", pr.out);
	cr_expect_str_eq(json_string_value(json_object_get(a, "content")), "odd name\n");
	json_decref(a);
	dsh_proc_clear(&pr);
}
