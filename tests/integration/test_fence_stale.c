/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fence temporary left by a killed writer (`.NAME.dshbox~` and 16 hex digits) is removed by the
 * next write of the same file, and one whose writer is alive in another process is not (issue 24).
 * The rule (docs/serve.md): an entry is the writer's only while it holds flock on it, from before
 * the name exists until after the rename; the kernel drops the lock when the writer dies, whatever
 * kills it.  No age is involved: a slow live writer is never mistaken for a dead one.  The writer
 * here is a separate process, as another `dshbox fs` or `serve` would be, and the writes go through
 * the CLI.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "fence/fence.h"
#include "tests/lib/harness.h"

/* A process that makes path, holds flock on it and waits to be killed; its pid once it holds it. */
static pid_t hold_locked(const char *path)
{
	int ready[2];
	cr_assert_eq(pipe(ready), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(ready[0]);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, "half", 4) != 4 || flock(fd, LOCK_EX) < 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1, "the holder did not start");
	close(ready[0]);
	return pid;
}

static void fs_write(const char *ws, const char *name, const char *content)
{
	char *argv[] = { (char *)dsh_test_dshbox(), "fs", "--workspace", (char *)ws, "--cwd", (char *)ws, "write",
			 (char *)name, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, NULL, content, &r), 0);
	cr_expect_eq(r.exit_code, 0, "fs write %s: %s", name, r.err);
	dsh_proc_clear(&r);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

Test(fence_stale, a_killed_writers_temporary_goes_with_the_next_write_a_live_ones_stays)
{
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	_cleanup_free_ char *file = NULL, *tmp = NULL, *other = NULL;
	char name[256], other_name[256];
	cr_assert_eq(dsh_fence_temp_name("t.txt", name, sizeof(name)), 0);
	cr_assert_eq(dsh_fence_temp_name("u.txt", other_name, sizeof(other_name)), 0);
	cr_assert(asprintf(&file, "%s/t.txt", ws) > 0 && asprintf(&tmp, "%s/%s", ws, name) > 0 &&
		  asprintf(&other, "%s/%s", ws, other_name) > 0);
	dsh_test_write_file(file, "old\n");
	_cleanup_free_ char *ufile = NULL;
	cr_assert(asprintf(&ufile, "%s/u.txt", ws) > 0);
	dsh_test_write_file(ufile, "u0\n"); /* only an overwrite links a temporary to a name */

	/* A writer of t.txt alive in another process, between its link and its rename. */
	pid_t live = hold_locked(tmp);
	fs_write(ws, "t.txt", "new\n");
	cr_expect(exists(tmp), "a live writer's temporary was removed by another write");
	_cleanup_free_ char *now = dsh_test_read_file(file);
	cr_expect_str_eq(now, "new\n");

	/* The writer is killed there: its lock goes with it, and the next write of t.txt clears it.
	   u.txt's temporary, dead too, is another file's: a write of t.txt leaves it. */
	cr_assert_eq(kill(live, SIGKILL), 0);
	cr_assert_eq(waitpid(live, NULL, 0), live);
	pid_t dead = hold_locked(other);
	cr_assert_eq(kill(dead, SIGKILL), 0);
	cr_assert_eq(waitpid(dead, NULL, 0), dead);
	cr_expect(exists(tmp), "the temporary vanished before any write");
	fs_write(ws, "t.txt", "newer\n");
	cr_expect_not(exists(tmp), "the killed writer's temporary %s is still there after the next write", name);
	cr_expect(exists(other), "a write of t.txt removed u.txt's temporary");
	_cleanup_free_ char *last = dsh_test_read_file(file);
	cr_expect_str_eq(last, "newer\n");
	fs_write(ws, "u.txt", "u\n");
	cr_expect_not(exists(other), "u.txt's stale temporary survived a write of u.txt");
	dsh_test_rmtree(ws);
}

/* The dialect of each backend's denials is named where a host reads it: seatbelt's is macOS's
   "Operation not permitted", not Linux's "Permission denied" (issue 24). */
Test(fence_stale, explain_json_names_seatbelts_denial_signature)
{
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	char *argv[] = { (char *)dsh_test_dshbox(), "explain", "--json", "--backend", "seatbelt", "--workspace", ws,
			 NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, NULL, NULL, &r), 0);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	const char *sigs = strstr(r.out, "\"denialSignatures\"");
	cr_assert(sigs, "no denialSignatures in: %s", r.out);
	const char *end = strchr(sigs, ']');
	cr_assert(end);
	_cleanup_free_ char *list = strndup(sigs, (size_t)(end - sigs));
	cr_expect(strstr(list, "\"operation not permitted\""), "seatbelt's signatures: %s", list);
	cr_expect_not(strstr(list, "\"permission denied\""), "seatbelt's signatures: %s", list);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}
