/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host-side replacement (SPEC 3.14): while a run goes on, the user's editor, `sed -i` or `git
 * config` replaces a protected file the usual atomic way (a new inode renamed over the name).  The
 * mask or read-only bind went with the old inode; the keeper puts it on the new one.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *at(const char *ws, const char *rel)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", ws, rel) > 0);
	return s;
}

/* Replace path by a new file with content, as editors do: write a temporary, rename it over. */
static void replace(const char *path, const char *content)
{
	_cleanup_free_ char *tmp = NULL;
	cr_assert(asprintf(&tmp, "%s.dshbox-test~", path) > 0);
	dsh_test_write_file(tmp, content);
	cr_assert_eq(rename(tmp, path), 0);
}

static void wait_for(const char *path)
{
	for (int i = 0; i < 400 && access(path, F_OK) < 0; i++)
		usleep(10000);
	cr_assert_eq(access(path, F_OK), 0, "%s never appeared", path);
}

Test(run_remask, a_file_replaced_on_the_host_stays_protected, .timeout = 60)
{
	dsh_test_require_backend(); /* the run goes on in the background: its refusal would look like a hang */
	char *ws = dsh_test_mkdtemp();
	_cleanup_free_ char *env = at(ws, ".env"), *ro = at(ws, "ro.txt"), *ready = at(ws, "ready"), *go = at(ws, "go"),
			    *out = at(ws, "out.txt");
	dsh_test_write_file(env, "old-secret\n");
	dsh_test_write_file(ro, "ro-old\n");
	const char *script =
		": > ready; while [ ! -e go ]; do sleep 0.01; done; "
		"cat .env >> out.txt 2>&1; (echo inside >> ro.txt) 2>>out.txt; cat ro.txt >> out.txt";
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *argv[] = { (char *)dsh_test_dshbox(), "run", "--workspace", ws, "--cwd", ws, "--access", "-- .env",
				 "--access", "r- ro.txt", "--", "sh", "-c", (char *)script, NULL };
		char *envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
		int devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 0);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	wait_for(ready);
	replace(env, "new-secret\n");
	replace(ro, "ro-new\n");
	/* The keeper's window is milliseconds (make bench measures it); the command reads after it. */
	usleep(200000);
	dsh_test_write_file(go, "");
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "dshbox status %d", status);
	_cleanup_free_ char *seen = dsh_test_read_file(out);
	cr_assert_not_null(seen);
	cr_expect_null(strstr(seen, "secret"), "the replaced --  file was read inside: %s", seen);
	cr_expect(strstr(seen, ".env: Permission denied"), "%s", seen);
	cr_expect(strstr(seen, "Read-only file system"), "the replaced r- file was writable: %s", seen);
	cr_expect(strstr(seen, "ro-new"), "the new r- file is readable inside: %s", seen);
	_cleanup_free_ char *host = dsh_test_read_file(ro);
	cr_expect_str_eq(host, "ro-new\n");
	dsh_test_rmtree(ws);
	free(ws);
}
