/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A racer flips a symlink inside the workspace between a workspace file and a file outside while
 * 10,000 writes go through the fence: no byte ever lands outside.  Run against the library alone
 * (no Landlock: the fence's own resolution is what is tested), and through `dshbox serve`.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "fence/fence.h"
#include "policy/options.h"
#include "tests/lib/fence_fixture.h"
#include "tests/lib/harness.h"

#define WRITES 10000

static char *root, *ws, *out;

/*
 * The race is about resolution, not the disk: 10,000 fsync'ed writes on this machine's ext4 take
 * minutes (an fsync costs ~15 ms here), on a tmpfs seconds.  The test moves into its own mount
 * namespace (and user namespace when unprivileged) and mounts a tmpfs on its scratch directory;
 * where it cannot, it runs on the disk, slowly.
 */
static bool on_tmpfs;

static void setup(void)
{
	root = dsh_test_mkdtemp();
	on_tmpfs = dsh_test_mount_tmpfs(root, "dshbox-race");
	cr_assert(asprintf(&ws, "%s/ws", root) > 0);
	cr_assert(asprintf(&out, "%s/out", root) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(mkdir(out, 0755), 0);
}

static void teardown(void)
{
	if (on_tmpfs)
		umount2(root, MNT_DETACH);
	dsh_test_rmtree(root);
	free(root);
	free(ws);
	free(out);
}

TestSuite(fence_race, .init = setup, .fini = teardown, .timeout = 900);

/* Flip `link` between a and b forever, atomically (symlink to a temporary name, rename over). */
static pid_t start_racer(const char *link, const char *a, const char *b)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.racer", link);
		for (unsigned long i = 0;; i++) {
			unlink(tmp);
			if (symlink(i % 2 ? a : b, tmp) == 0)
				rename(tmp, link);
		}
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}


/*
 * Run argv with stdin from a file and stdout/stderr into files (dsh_proc_run writes its stdin in
 * one blocking write, which deadlocks against a server answering a large request stream).
 */
static int run_files(char *const argv[], const char *in, const char *outp, const char *errp)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int i = open(in, O_RDONLY | O_CLOEXEC), o = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644),
		    e = open(errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* The outside directory holds exactly the names given, with their original content. */
static void assert_outside_untouched(const char *const *names, const char *content)
{
	DIR *d = opendir(out);
	cr_assert_not_null(d);
	struct dirent *de;
	size_t n = 0;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		bool known = false;
		for (size_t i = 0; names[i]; i++)
			if (strcmp(names[i], de->d_name) == 0)
				known = true;
		cr_expect(known, "a file appeared outside the workspace: %s", de->d_name);
		n++;
	}
	closedir(d);
	for (size_t i = 0; names[i]; i++) {
		_cleanup_free_ char *p = NULL;
		cr_assert(asprintf(&p, "%s/%s", out, names[i]) > 0);
		_cleanup_free_ char *c = dsh_test_read_file(p);
		cr_expect_str_eq(c ? c : "(missing)", content, "%s was written", p);
	}
}

Test(fence_race, flipping_final_symlink_library)
{
	_cleanup_free_ char *in = NULL, *target = NULL, *link = NULL;
	cr_assert(asprintf(&in, "%s/file", ws) > 0);
	cr_assert(asprintf(&target, "%s/file", out) > 0);
	cr_assert(asprintf(&link, "%s/link", ws) > 0);
	dsh_test_write_file(in, "inside\n");
	dsh_test_write_file(target, "OUTSIDE\n");
	cr_assert_eq(symlink(in, link), 0);
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	pid_t racer = start_racer(link, in, target);
	size_t ok = 0, denied = 0, other = 0;
	for (int i = 0; i < WRITES; i++) {
		char data[64];
		int n = snprintf(data, sizeof(data), "write %d\n", i);
		struct dsh_fence_write_result r;
		struct dsh_error *f = NULL;
		if (dsh_fence_write(p, "link", data, (size_t)n, &r, &f) == 0) {
			cr_assert_str_eq(r.path, in, "a write landed at %s", r.path);
			ok++;
			dsh_fence_write_result_clear(&r);
		} else if (f->kind == DSH_ERR_DENIED) {
			denied++;
		} else {
			other++;
		}
		dsh_error_free(f);
	f = NULL;
	}
	stop(racer);
	const char *names[] = { "file", NULL };
	assert_outside_untouched(names, "OUTSIDE\n");
	fprintf(stderr, "fence race (final symlink, library, %s): %d writes: %zu written inside, %zu denied, %zu other\n",
		on_tmpfs ? "tmpfs" : "disk", WRITES, ok, denied, other);
	cr_expect_eq(ok + denied + other, WRITES);
	cr_expect_gt(ok, 0, "the racer never let a write through: the race was not exercised");
	cr_expect_gt(denied, 0, "no write was ever denied: the race was not exercised");
	dsh_policy_free(p);
}

Test(fence_race, flipping_parent_directory_symlink_library)
{
	_cleanup_free_ char *real = NULL, *dir = NULL, *outf = NULL;
	cr_assert(asprintf(&real, "%s/real", ws) > 0);
	cr_assert(asprintf(&dir, "%s/dir", ws) > 0);
	cr_assert(asprintf(&outf, "%s/f", out) > 0);
	cr_assert_eq(mkdir(real, 0755), 0);
	dsh_test_write_file(outf, "OUTSIDE\n");
	cr_assert_eq(symlink(real, dir), 0);
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	pid_t racer = start_racer(dir, real, out);
	size_t ok = 0, denied = 0, other = 0;
	for (int i = 0; i < WRITES; i++) {
		/* Half the writes overwrite f, half create a new name. */
		char data[64], name[64];
		int n = snprintf(data, sizeof(data), "write %d\n", i);
		snprintf(name, sizeof(name), i % 2 ? "dir/f" : "dir/new%d", i);
		struct dsh_fence_write_result r;
		struct dsh_error *f = NULL;
		if (dsh_fence_write(p, name, data, (size_t)n, &r, &f) == 0) {
			cr_assert(strncmp(r.path, real, strlen(real)) == 0, "a write landed at %s", r.path);
			ok++;
			dsh_fence_write_result_clear(&r);
		} else if (f->kind == DSH_ERR_DENIED) {
			denied++;
		} else {
			other++;
		}
		dsh_error_free(f);
	f = NULL;
	}
	stop(racer);
	const char *names[] = { "f", NULL };
	assert_outside_untouched(names, "OUTSIDE\n");
	fprintf(stderr, "fence race (parent symlink, library): %d writes: %zu written inside, %zu denied, %zu other\n",
		WRITES, ok, denied, other);
	cr_expect_gt(ok, 0);
	cr_expect_gt(denied, 0);
	dsh_policy_free(p);
}

Test(fence_race, flipping_final_symlink_through_serve)
{
	_cleanup_free_ char *in = NULL, *target = NULL, *link = NULL;
	cr_assert(asprintf(&in, "%s/file", ws) > 0);
	cr_assert(asprintf(&target, "%s/file", out) > 0);
	cr_assert(asprintf(&link, "%s/link", ws) > 0);
	dsh_test_write_file(in, "inside\n");
	dsh_test_write_file(target, "OUTSIDE\n");
	cr_assert_eq(symlink(in, link), 0);
	_cleanup_free_ char *reqf = NULL, *outf = NULL, *errf = NULL;
	cr_assert(asprintf(&reqf, "%s/requests", root) > 0 && asprintf(&outf, "%s/answers", root) > 0 &&
		  asprintf(&errf, "%s/stderr", root) > 0);
	FILE *f = fopen(reqf, "w");
	cr_assert_not_null(f);
	for (int i = 0; i < WRITES; i++)
		fprintf(f, "{\"id\":%d,\"op\":\"write\",\"path\":\"%s\",\"content\":\"write %d\\n\"}\n", i, link, i);
	fclose(f);
	pid_t racer = start_racer(link, in, target);
	char *argv[] = { (char *)dsh_test_dshbox(), (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws, NULL };
	int code = run_files(argv, reqf, outf, errf);
	stop(racer);
	_cleanup_free_ char *answers_text = dsh_test_read_file(outf), *err_text = dsh_test_read_file(errf);
	cr_expect_eq(code, 0, "%s", err_text);
	struct dsh_proc r = { .out = TAKE_PTR(answers_text), .err = NULL };
	int answers = dsh_count_lines_with_prefix(r.out, "{\"id\":");
	size_t written = count(r.out, "\"ok\":true"), denied = count(r.out, "\"kind\":\"denied\"");
	const char *names[] = { "file", NULL };
	assert_outside_untouched(names, "OUTSIDE\n");
	fprintf(stderr, "fence race (final symlink, serve): %d requests, %d answers: %zu written, %zu denied\n",
		WRITES, answers, written, denied);
	cr_expect_eq(answers, WRITES);
	cr_expect_gt(written, 0);
	cr_expect_gt(denied, 0);
	dsh_proc_clear(&r);
}
