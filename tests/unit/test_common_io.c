/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PATH walk shared by the command's exec and the runner lookup, and the write-all helper shared
 * by the supervisor, the fence and the front end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "common/strv.h"
#include "common/path_search.h"
#include "common/write_all.h"

static void expect_candidates(const char *path, const char *const *want)
{
	struct dsh_path_search s;
	dsh_path_search_init(&s, path, "prog");
	char buf[64];
	size_t i = 0;
	for (int r; (r = dsh_path_search_next(&s, buf, sizeof(buf))) != 0; i++) {
		cr_assert_not_null(want[i], "PATH '%s': extra candidate %zu", path ? path : "(null)", i);
		if (strcmp(want[i], "TOO LONG") == 0) {
			cr_expect_eq(r, -ENAMETOOLONG, "candidate %zu", i);
			continue;
		}
		cr_expect_eq(r, 1, "candidate %zu", i);
		cr_expect_str_eq(buf, want[i], "candidate %zu", i);
	}
	cr_expect_null(want[i], "PATH '%s': only %zu candidates", path ? path : "(null)", i);
}

Test(common_io, path_search_walks_entries_in_order)
{
	expect_candidates("/a:/b/c", (const char *const[]){ "/a/prog", "/b/c/prog", NULL });
	/* Empty entries (leading, inner, trailing, the whole value) are the current directory. */
	expect_candidates(":/a::", (const char *const[]){ "./prog", "/a/prog", "./prog", "./prog", NULL });
	expect_candidates("", (const char *const[]){ "./prog", NULL });
	expect_candidates(NULL, (const char *const[]){ "/usr/local/bin/prog", "/usr/bin/prog", "/bin/prog", NULL });
}

Test(common_io, path_search_skips_what_does_not_fit)
{
	char long_dir[80];
	memset(long_dir, 'x', sizeof(long_dir) - 1);
	long_dir[0] = '/';
	long_dir[sizeof(long_dir) - 1] = '\0';
	char path[128];
	snprintf(path, sizeof(path), "%s:/ok", long_dir);
	expect_candidates(path, (const char *const[]){ "TOO LONG", "/ok/prog", NULL });
}

Test(common_io, write_all_writes_everything_through_short_writes)
{
	/* More than a pipe holds: the writer blocks and resumes with partial writes while a child reads. */
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	size_t n = 1 << 20;
	char *buf = malloc(n);
	cr_assert_not_null(buf);
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(i * 7);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		_exit(dsh_write_all(p[1], buf, n) == 0 ? 0 : 1);
	}
	close(p[1]);
	char *got = malloc(n);
	cr_assert_not_null(got);
	size_t have = 0;
	for (ssize_t r; have < n && (r = read(p[0], got + have, n - have)) > 0;)
		have += (size_t)r;
	cr_expect_eq(have, n);
	cr_expect_eq(memcmp(got, buf, n), 0);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(p[0]);
	free(buf);
	free(got);
}

Test(common_io, write_all_reports_the_errno)
{
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	close(p[0]);
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigaction(SIGPIPE, &ign, &old);
	cr_expect_eq(dsh_write_all(p[1], "x", 1), -EPIPE);
	sigaction(SIGPIPE, &old, NULL);
	close(p[1]);
	cr_expect_eq(dsh_write_all(-1, "x", 1), -EBADF);
}

/* The length-keeping push grows a vector another push sized exactly, and keeps it terminated. */
Test(common_io, strv_push_take_n_grows_any_vector)
{
	char **v = NULL;
	cr_assert_eq(dsh_strv_push(&v, "a"), 0); /* sized exactly by the plain push */
	size_t n = dsh_strv_len(v);
	for (int i = 0; i < 1000; i++) {
		char *s = NULL;
		cr_assert(asprintf(&s, "s%d", i) > 0);
		cr_assert_eq(dsh_strv_push_take_n(&v, &n, s), 0);
		cr_assert_eq(n, (size_t)i + 2);
		cr_assert_null(v[n]);
	}
	cr_expect_eq(dsh_strv_len(v), 1001);
	cr_expect_str_eq(v[0], "a");
	cr_expect_str_eq(v[1000], "s999");
	cr_expect_eq(dsh_strv_push_take_n(&v, &n, NULL), -ENOMEM, "a failed allocation is said");
	cr_expect_eq(n, 1001);
	dsh_strv_free(v);
}
