/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The file fence on a full disk (issue 38): a write or an edit that cannot be stored fails with
 * an error naming the cause, the file keeps its old content byte for byte, and no temporary is
 * left beside it; once there is room again the same write lands.  The disk is a 256 KiB tmpfs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/fence_fixture.h"
#include "tests/lib/harness.h"

static char *root, *ws, *out;

static void setup(void)
{
	dsh_test_fence_tree(&root, &ws, &out);
}

static void teardown(void)
{
	dsh_test_fence_tree_remove(&root, &ws, &out);
}

TestSuite(fence_enospc, .init = setup, .fini = teardown, .timeout = 60);

static char *filled(size_t n, char c)
{
	char *s = malloc(n + 1);
	cr_assert_not_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* Fill the disk to the last block with a file of its own; returns its name, or NULL. */
static char *fill(void)
{
	char *name = dsh_test_fmt("%s/filler", ws), block[4096];
	memset(block, 'f', sizeof(block));
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return NULL;
	while (write(fd, block, sizeof(block)) == (ssize_t)sizeof(block))
		;
	int e = errno;
	close(fd);
	return e == ENOSPC ? name : NULL;
}

/* Something in ws but the names given (the fence's temporaries start with '.'), or NULL. */
static char *stray(const char *a, const char *b)
{
	DIR *d = opendir(ws);
	char *found = NULL;
	struct dirent *e;
	while (d && !found && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, a) && (!b || strcmp(e->d_name, b)))
			found = strdup(e->d_name);
	if (d)
		closedir(d);
	return found;
}

/*
 * The scenario, in a single-threaded child of the test (a user namespace needs one) on a disk of
 * its own: NULL when everything held, else what did not.
 */
static const char *scenario(void)
{
	if (!dsh_test_mount_tmpfs_opts(ws, "dshbox-enospc", "size=256k,mode=0755"))
		return "SKIP";
	char *file = dsh_test_fmt("%s/data.txt", ws), *old = filled(16 * 1024, 'o'), *new = filled(64 * 1024, 'n');
	dsh_test_write_file(file, old);
	struct dsh_policy *p = dsh_test_mode_policy(ws, DSH_MODE_WORKSPACE_WRITE, NULL);
	char *filler = fill();
	if (!filler)
		return "the disk did not fill up";
	struct dsh_fence_write_result r;
	struct dsh_error *err = NULL;
	if (dsh_fence_write(p, file, new, strlen(new), &r, &err) == 0)
		return "a write to a full disk succeeded";
	if (!err || !err->msg || err->code != ENOSPC)
		return "the error does not name ENOSPC";
	dsh_error_free(err);
	err = NULL;
	if (strcmp(dsh_test_read_file(file), old) != 0)
		return "the old content changed";
	if (stray("data.txt", "filler"))
		return dsh_test_fmt("a temporary was left: %s", stray("data.txt", "filler"));
	/* Room again: the same write lands whole. */
	unlink(filler);
	if (dsh_fence_write(p, file, new, strlen(new), &r, &err) < 0)
		return dsh_test_fmt("with room again the write failed: %s", err && err->msg ? err->msg : "");
	dsh_fence_write_result_clear(&r);
	if (strcmp(dsh_test_read_file(file), new) != 0)
		return "the new content is not whole";
	if (stray("data.txt", NULL))
		return "a temporary was left after the write";
	dsh_policy_free(p);
	return NULL;
}

Test(fence_enospc, a_write_that_does_not_fit_fails_and_leaves_the_old_content_whole)
{
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		const char *why = scenario();
		if (why)
			(void)!write(pfd[1], why, strlen(why));
		_exit(why ? 1 : 0);
	}
	close(pfd[1]);
	char why[512] = "";
	ssize_t n = read(pfd[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (strcmp(why, "SKIP") == 0)
		DSH_SKIP("cannot mount a tmpfs in a mount namespace of the test's own");
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", why[0] ? why : "the scenario died");
}
