/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dshbox serve --stdio: many mixed requests in one session (no leak: under the ASan build the
 * LeakSanitizer fails the exit status; valgrind 3.19 here knows neither openat2 nor Landlock, so it
 * cannot run the server),
 * malformed lines answered and survived, end of input ends it, the line bound, and the Landlock
 * wall behind the fence.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "fence/serve.h"
#include "tests/lib/fence_fixture.h"
#include "tests/lib/harness.h"

#define MIXED 10000

static char *root, *ws;
static bool on_tmpfs; /* a tmpfs on root, so that 1,000s of fsyncs take seconds */

static void setup(void)
{
	root = dsh_test_mkdtemp();
	on_tmpfs = dsh_test_mount_tmpfs(root, "dshbox-serve");
	cr_assert(asprintf(&ws, "%s/ws", root) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
}

static void teardown(void)
{
	if (on_tmpfs)
		umount2(root, MNT_DETACH);
	dsh_test_rmtree(root);
	free(root);
	free(ws);
}

TestSuite(serve, .init = setup, .fini = teardown, .timeout = 600);

static bool has_landlock(void)
{
	return syscall(__NR_landlock_create_ruleset, NULL, 0, 1U /* LANDLOCK_CREATE_RULESET_VERSION */) >= 1;
}

/* Run with stdin from a file, stdout and stderr to files (no pipe deadlock on big streams). */
static int run_files(char *const argv[], const char *in, char **ret_out, char **ret_err)
{
	_cleanup_free_ char *outp = dsh_test_pathf("%s/stdout", root), *errp = dsh_test_pathf("%s/stderr", root);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int i = open(in, O_RDONLY | O_CLOEXEC), o = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644),
		    e = open(errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	*ret_out = dsh_test_read_file(outp);
	*ret_err = dsh_test_read_file(errp);
	/* Without Landlock (Linux < 5.13) serve must warn that it runs without its second wall; the
	   fence's own answers are checked all the same. */
	const char *warn = "dshbox: warning: serve: Landlock is unavailable";
	if (!has_landlock() && *ret_err && strncmp(*ret_err, warn, strlen(warn)) == 0) {
		const char *nl = strchr(*ret_err, '\n');
		memmove(*ret_err, nl ? nl + 1 : "", strlen(nl ? nl + 1 : "") + 1);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *write_requests(const char *text)
{
	char *p = dsh_test_pathf("%s/requests", root);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* Split answers into JSON objects; returns how many. */
static size_t parse_answers(const char *out, json_t ***ret)
{
	size_t n = 0;
	json_t **v = NULL;
	for (const char *l = out; *l;) {
		const char *nl = strchr(l, '\n');
		cr_assert_not_null(nl, "an answer without its newline: %s", l);
		json_error_t je;
		json_t *j = json_loadb(l, (size_t)(nl - l), 0, &je);
		cr_assert_not_null(j, "answer %zu is not JSON (%s): %.*s", n, je.text, (int)(nl - l), l);
		cr_assert(json_is_object(j));
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n++] = j;
		l = nl + 1;
	}
	*ret = v;
	return n;
}

static void free_answers(json_t **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(v[i]);
	free(v);
}

static const char *err_kind(json_t *a)
{
	return json_string_value(json_object_get(json_object_get(a, "error"), "kind"));
}

Test(serve, malformed_lines_are_answered_and_the_server_goes_on)
{
	_cleanup_free_ char *f = dsh_test_pathf("%s/f.txt", ws);
	dsh_test_write_file(f, "hello\n");
	_cleanup_free_ char *req = NULL;
	cr_assert(asprintf(&req,
			   "garbage\n"
			   "[1,2]\n"
			   "{\"id\":1,\"op\":\"read\"}\n"
			   "{\"id\":2,\"op\":\"read\",\"path\":\"f.txt\",\"bogus\":1}\n"
			   "{\"id\":{\"x\":1},\"op\":\"read\",\"path\":\"f.txt\"}\n"
			   "{\"id\":3,\"op\":\"read\",\"path\":\"f.txt\",\"offset\":-1}\n"
			   "{\"id\":4,\"op\":\"write\",\"path\":\"g\",\"content\":\"!!\",\"encoding\":\"base64\"}\n"
			   "{\"id\":5,\"op\":\"read\",\"path\":\"f.txt\",\"path\":\"f.txt\"}\n"
			   "\n"
			   "{\"id\":\"last\",\"op\":\"read\",\"path\":\"f.txt\"}") > 0); /* no final newline */
	_cleanup_free_ char *in = write_requests(req);
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws, (char *)"--cwd", ws, NULL };
	_cleanup_free_ char *out = NULL, *err = NULL;
	int code = run_files(argv, in, &out, &err);
	cr_expect_eq(code, 0, "%s", err);
	cr_expect_str_eq(err, "");
	json_t **a;
	size_t n = parse_answers(out, &a);
	cr_assert_eq(n, 9, "one answer per non-blank line: %s", out);
	for (size_t i = 0; i < 8; i++) {
		cr_expect(json_is_false(json_object_get(a[i], "ok")), "answer %zu: %s", i, out);
		cr_expect_str_eq(err_kind(a[i]), "invalid", "answer %zu", i);
	}
	cr_expect(json_is_null(json_object_get(a[0], "id")));
	cr_expect_eq(json_integer_value(json_object_get(a[2], "id")), 1, "the id comes back when it was readable");
	cr_expect(json_is_true(json_object_get(a[8], "ok")));
	cr_expect_str_eq(json_string_value(json_object_get(a[8], "id")), "last");
	cr_expect_str_eq(json_string_value(json_object_get(a[8], "content")), "hello\n");
	free_answers(a, n);
}

Test(serve, end_of_input_ends_cleanly_and_usage_errors)
{
	_cleanup_free_ char *in = write_requests("");
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws, (char *)"--cwd", ws, NULL };
	_cleanup_free_ char *out = NULL, *err = NULL;
	cr_expect_eq(run_files(argv, in, &out, &err), 0);
	cr_expect_str_eq(out, "");
	cr_expect_str_eq(err, "");
	char *bad[] = { (char *)dsh_test_dshbox(), (char *)"serve", NULL };
	free(out);
	free(err);
	cr_expect_eq(run_files(bad, in, &out, &err), 125);
	cr_expect_eq(dsh_count_lines_with_prefix(err, "dshbox: error: "), 1, "%s", err);
}

Test(serve, a_line_beyond_the_bound_is_refused_and_skipped)
{
	_cleanup_free_ char *p = dsh_test_pathf("%s/requests", root);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs("{\"id\":1,\"op\":\"write\",\"path\":\"big\",\"content\":\"", f);
	static char chunk[1 << 16];
	memset(chunk, 'x', sizeof(chunk));
	for (size_t w = 0; w <= DSH_SERVE_MAX_LINE; w += sizeof(chunk))
		fwrite(chunk, 1, sizeof(chunk), f);
	fputs("\"}\n{\"id\":2,\"op\":\"list\",\"path\":\".\"}\n", f);
	fclose(f);
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws, (char *)"--cwd", ws, NULL };
	_cleanup_free_ char *out = NULL, *err = NULL;
	cr_expect_eq(run_files(argv, p, &out, &err), 0, "%s", err);
	json_t **a;
	size_t n = parse_answers(out, &a);
	cr_assert_eq(n, 2, "%s", out);
	cr_expect_str_eq(err_kind(a[0]), "too-large");
	cr_expect(json_is_true(json_object_get(a[1], "ok")));
	cr_expect_eq(json_array_size(json_object_get(a[1], "entries")), 0, "the long write must not have happened");
	free_answers(a, n);
}

/* 10,000 requests of every kind in one session; returns the request text. */
static char *mixed_requests(size_t *ret_expected)
{
	char *text = NULL;
	size_t len = 0, expected = 0;
	FILE *f = open_memstream(&text, &len);
	for (int i = 0; i < MIXED; i++) {
		switch (i % 12) {
		case 0:
			fprintf(f, "{\"id\":%d,\"op\":\"read\",\"path\":\"page.txt\"}\n", i);
			break;
		case 1:
			fprintf(f, "{\"id\":%d,\"op\":\"read\",\"path\":\"page.txt\",\"offset\":100,\"limit\":50}\n", i);
			break;
		case 2:
			fprintf(f, "{\"id\":%d,\"op\":\"read\",\"path\":\"key.pem\"}\n", i);
			break;
		case 3:
			fprintf(f, "{\"id\":%d,\"op\":\"write\",\"path\":\"out/w%d.txt\",\"content\":\"line %d\\nmore\\n\"}\n", i,
				i % 50, i);
			break;
		case 4:
			fprintf(f, "{\"id\":%d,\"op\":\"edit\",\"path\":\"toggle.txt\",\"old\":\"%s\",\"new\":\"%s\"}\n", i,
				(i / 12) % 2 ? "beta" : "alpha", (i / 12) % 2 ? "alpha" : "beta");
			break;
		case 5:
			fprintf(f, "{\"id\":%d,\"op\":\"list\",\"path\":\".\"}\n", i);
			break;
		case 6:
			fprintf(f, "this is not json %d\n", i);
			break;
		case 7:
			fprintf(f, "{\"id\":%d,\"op\":\"read\",\"path\":\"missing-%d\"}\n", i, i);
			break;
		case 8:
			fprintf(f, "{\"id\":%d,\"op\":\"write\",\"path\":\"/etc/dshbox-must-not-exist\",\"content\":\"x\"}\n", i);
			break;
		case 9:
			fprintf(f, "{\"id\":%d,\"op\":\"write\",\"path\":\"bin.dat\",\"content\":\"AAEC/w==\",\"encoding\":\"base64\"}\n", i);
			break;
		case 10:
			fprintf(f, "{\"id\":%d,\"op\":\"read\",\"path\":\"bin.dat\"}\n", i);
			break;
		case 11:
			fprintf(f, "{\"id\":%d,\"op\":\"edit\",\"path\":\"toggle.txt\",\"old\":\"zzz\",\"new\":\"y\"}\n", i);
			break;
		}
		expected++;
	}
	fclose(f);
	*ret_expected = expected;
	return text;
}

static void prepare_mixed(void)
{
	_cleanup_free_ char *page = dsh_test_pathf("%s/page.txt", ws), *key = dsh_test_pathf("%s/key.pem", ws),
			    *tog = dsh_test_pathf("%s/toggle.txt", ws), *outd = dsh_test_pathf("%s/out", ws),
			    *bin = dsh_test_pathf("%s/bin.dat", ws);
	char content[4097];
	for (int i = 0; i < 4096; i++)
		content[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);
	content[4096] = '\0';
	dsh_test_write_file(page, content);
	dsh_test_write_file(key, "KEY\n");
	dsh_test_write_file(tog, "value: alpha\n");
	dsh_test_write_file(bin, "x");
	cr_assert_eq(mkdir(outd, 0755), 0);
}

static void check_mixed(const char *out, size_t expected)
{
	json_t **a;
	size_t n = parse_answers(out, &a);
	cr_assert_eq(n, expected, "answers %zu, requests %zu", n, expected);
	size_t ok = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *id = json_object_get(a[i], "id");
		bool is_ok = json_is_true(json_object_get(a[i], "ok"));
		ok += is_ok;
		switch (i % 12) {
		case 6:
			cr_assert(json_is_null(id));
			cr_assert_str_eq(err_kind(a[i]), "invalid");
			continue;
		case 2:
		case 8:
			cr_assert_str_eq(err_kind(a[i]), "denied", "answer %zu", i);
			break;
		case 7:
			cr_assert_str_eq(err_kind(a[i]), "not-found", "answer %zu", i);
			break;
		case 11:
			cr_assert_str_eq(err_kind(a[i]), "invalid", "answer %zu", i);
			break;
		case 10:
			cr_assert(is_ok, "answer %zu", i);
			cr_assert_str_eq(json_string_value(json_object_get(a[i], "encoding")), "base64");
			cr_assert_str_eq(json_string_value(json_object_get(a[i], "content")), "AAEC/w==");
			break;
		case 0:
			cr_assert(is_ok, "answer %zu", i);
			cr_assert_eq(json_string_length(json_object_get(a[i], "content")), 4096);
			break;
		default:
			cr_assert(is_ok, "answer %zu: %s", i, json_string_value(json_object_get(json_object_get(a[i], "error"), "message")));
		}
		cr_assert_eq(json_integer_value(id), (json_int_t)i, "answers come in request order");
	}
	fprintf(stderr, "serve: %zu mixed requests in one session, %zu answered ok, the rest refused as expected\n", n, ok);
	free_answers(a, n);
}

Test(serve, ten_thousand_mixed_requests_in_one_session)
{
	prepare_mixed();
	size_t expected = 0;
	_cleanup_free_ char *text = mixed_requests(&expected);
	_cleanup_free_ char *in = write_requests(text);
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws, (char *)"--cwd", ws,
			 (char *)"--access", (char *)"-- **/*.pem", NULL };
	_cleanup_free_ char *out = NULL, *err = NULL;
	int code = run_files(argv, in, &out, &err);
	/* Under the ASan build a leak makes LeakSanitizer print and fail the exit status. */
	cr_expect_eq(code, 0, "exit %d: %s", code, err);
	cr_expect_str_eq(err, "", "%s", err);
	check_mixed(out, expected);
	cr_expect_eq(access("/etc/dshbox-must-not-exist", F_OK), -1);
}

/* ---- the second wall: Landlock behind the fence ---- */

Test(serve, landlock_stops_a_write_the_fence_would_allow)
{
	/* An rw root that does not exist when serve starts: the fence allows it by the policy, but
	   Landlock (built at start) has no grant for it. */
	if (!has_landlock())
		DSH_SKIP("this kernel has no Landlock (Linux 5.13+): serve has no second wall to test");
	_cleanup_free_ char *later = dsh_test_pathf("%s/later", root), *rule = dsh_test_pathf("rw %s/later", root);
	int in[2], out[2];
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(dsh_test_dshbox(), "dshbox", "serve", "--stdio", "--workspace", ws, "--access", rule, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	FILE *to = fdopen(in[1], "w"), *from = fdopen(out[0], "r");
	char *line = NULL;
	size_t cap = 0;
	/* The first answer proves the policy is loaded and the confinement applied. */
	fprintf(to, "{\"id\":1,\"op\":\"list\",\"path\":\".\"}\n");
	fflush(to);
	cr_assert_gt(getline(&line, &cap, from), 0);
	cr_assert_eq(mkdir(later, 0755), 0);
	fprintf(to, "{\"id\":2,\"op\":\"write\",\"path\":\"%s/x\",\"content\":\"x\"}\n", later);
	fprintf(to, "{\"id\":3,\"op\":\"write\",\"path\":\"%s/y\",\"content\":\"y\"}\n", ws);
	fclose(to);
	cr_assert_gt(getline(&line, &cap, from), 0);
	json_t *a = json_loads(line, 0, NULL);
	cr_assert_not_null(a, "%s", line);
	cr_expect(json_is_false(json_object_get(a, "ok")), "Landlock let the write through: %s", line);
	cr_expect_str_eq(err_kind(a), "io", "%s", line);
	cr_expect(strstr(line, "Permission denied") != NULL, "%s", line);
	json_decref(a);
	cr_assert_gt(getline(&line, &cap, from), 0);
	cr_expect(strstr(line, "\"ok\":true") != NULL, "a workspace write: %s", line);
	free(line);
	fclose(from);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	_cleanup_free_ char *x = dsh_test_pathf("%s/later/x", root);
	cr_expect_eq(access(x, F_OK), -1, "the write landed despite the wall");
}

Test(serve, read_answers_carry_the_exact_bytes)
{
	static const struct {
		const char *name, *bytes, *encoding;
	} files[] = {
		{ "text", "h\xc3\xa9llo \"q\" \\ \t\x01\x7f \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\n", "utf-8" },
		{ "invalid", "ok\xff\xfe", "base64" },
		{ "overlong", "\xc0\xaf", "base64" },
		{ "surrogate", "\xed\xa0\x80", "base64" },
		{ "truncated", "abc\xe6\x97", "base64" },
		{ "empty", "", "utf-8" },
	};
	_cleanup_free_ char *req = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&req, &len);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		_cleanup_free_ char *p = NULL;
		cr_assert(asprintf(&p, "%s/%s", ws, files[i].name) > 0);
		dsh_test_write_file(p, files[i].bytes);
		fprintf(f, "{\"id\":\"%s\",\"op\":\"read\",\"path\":\"%s\"}\n", files[i].name, files[i].name);
	}
	fclose(f);
	_cleanup_free_ char *in = write_requests(req);
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws, (char *)"--cwd", ws, NULL };
	_cleanup_free_ char *out = NULL, *err = NULL;
	cr_expect_eq(run_files(argv, in, &out, &err), 0, "%s", err);
	json_t **a;
	size_t n = parse_answers(out, &a);
	cr_assert_eq(n, sizeof(files) / sizeof(files[0]));
	for (size_t i = 0; i < n; i++) {
		cr_assert(json_is_true(json_object_get(a[i], "ok")), "%s", files[i].name);
		cr_expect_str_eq(json_string_value(json_object_get(a[i], "id")), files[i].name);
		const char *enc = json_string_value(json_object_get(a[i], "encoding"));
		cr_expect_str_eq(enc, files[i].encoding, "%s", files[i].name);
		json_t *c = json_object_get(a[i], "content");
		size_t want = strlen(files[i].bytes);
		if (strcmp(enc, "utf-8") == 0) {
			cr_assert_eq(json_string_length(c), want, "%s", files[i].name);
			cr_expect_eq(memcmp(json_string_value(c), files[i].bytes, want), 0, "%s", files[i].name);
		} else {
			unsigned char *dec = NULL;
			size_t dl = 0;
			cr_assert_eq(dsh_base64_decode(json_string_value(c), json_string_length(c), &dec, &dl), 0);
			cr_expect_eq(dl, want);
			cr_expect_eq(memcmp(dec, files[i].bytes, want), 0, "%s", files[i].name);
			free(dec);
		}
		cr_expect_eq(json_integer_value(json_object_get(a[i], "length")), (json_int_t)want);
		cr_expect(json_is_true(json_object_get(a[i], "eof")));
	}
	free_answers(a, n);
}

/* ---- --jobs: different files in parallel, one file in order ---- */

/*
 * 400 writes in one stream, to 50 files (8 writes each, interleaved), plus reads of a file written
 * just before them: with --jobs 8 every request is answered once, by its id, and every file holds
 * its last write (one path is done in order); the read sees the write sent before it.
 */
Test(serve, jobs_answer_writes_to_different_files_in_parallel_and_one_file_in_order)
{
	const int files = 50, rounds = 8;
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	cr_assert_not_null(f);
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < files; i++)
			fprintf(f, "{\"id\":%d,\"op\":\"write\",\"path\":\"d%d/f%02d.txt\",\"content\":\"file %d round %d\\n\"}\n",
				r * files + i, i % 3, i, i, r);
	fprintf(f, "{\"id\":\"read\",\"op\":\"read\",\"path\":\"d0/f00.txt\"}\n");
	fprintf(f, "not json\n");
	fclose(f);
	_cleanup_free_ char *in = write_requests(text);
	free(text);
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"serve", (char *)"--stdio", (char *)"--jobs", (char *)"8",
			 (char *)"--workspace", ws, (char *)"--cwd", ws, NULL };
	_cleanup_free_ char *out = NULL, *err = NULL;
	int code = run_files(argv, in, &out, &err);
	cr_expect_eq(code, 0, "exit %d: %s", code, err);
	cr_expect_str_eq(err, "", "%s", err);
	json_t **a;
	size_t n = parse_answers(out, &a);
	cr_assert_eq(n, (size_t)(files * rounds + 2), "answers %zu", n);
	_cleanup_free_ bool *seen = calloc((size_t)(files * rounds), sizeof(bool));
	bool read_seen = false, invalid_seen = false;
	for (size_t i = 0; i < n; i++) {
		json_t *id = json_object_get(a[i], "id");
		if (json_is_null(id)) {
			cr_expect_str_eq(err_kind(a[i]), "invalid");
			invalid_seen = true;
			continue;
		}
		if (json_is_string(id)) {
			cr_expect_str_eq(json_string_value(id), "read");
			cr_expect_str_eq(json_string_value(json_object_get(a[i], "content")), "file 0 round 7\n",
					 "the read sees the write of its path sent before it");
			read_seen = true;
			continue;
		}
		json_int_t k = json_integer_value(id);
		cr_assert(k >= 0 && k < files * rounds && !seen[k], "answer %zu: id %lld unexpected or twice", i, (long long)k);
		seen[k] = true;
		cr_expect(json_is_true(json_object_get(a[i], "ok")), "id %lld: %s", (long long)k,
			  json_string_value(json_object_get(json_object_get(a[i], "error"), "message")));
		_cleanup_free_ char *want = NULL;
		cr_assert(asprintf(&want, "%s/d%d/f%02d.txt", ws, (int)(k % files) % 3, (int)(k % files)) > 0);
		cr_expect_str_eq(json_string_value(json_object_get(a[i], "path")), want, "id %lld", (long long)k);
	}
	cr_expect(read_seen && invalid_seen);
	for (int i = 0; i < files; i++) {
		_cleanup_free_ char *p = NULL, *want = NULL;
		cr_assert(asprintf(&p, "%s/d%d/f%02d.txt", ws, i % 3, i) > 0);
		cr_assert(asprintf(&want, "file %d round %d\n", i, rounds - 1) > 0);
		_cleanup_free_ char *c = dsh_test_read_file(p);
		cr_expect_str_eq(c, want, "%s holds its last write", p);
	}
	free_answers(a, n);
}
