/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file where a protected target's path needs a directory (SPEC 1.6, 3.12): git follows a .git
 * *file* ("gitdir: DIR") to DIR's config and hooks, so a command that can write one at the root of
 * a workspace plants a config (core.fsmonitor, core.hooksPath) that the user's next git command on
 * the host runs — around the default r- .git/config.  Only a directory may stand on the way to an
 * r-/-- target: the broker refuses every other kind of new name there, the mount plan keeps an
 * existing file there as it is (a git worktree's .git), and the host checks that nothing changed.
 * The backend is DSHBOX_ESCAPE_BACKEND.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *top, *ws, *attack;

static char *at(const char *rel)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", ws, rel) > 0);
	return s;
}

static const char *backend(void)
{
	const char *b = getenv("DSHBOX_ESCAPE_BACKEND");
	return b && *b ? b : "auto";
}

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

/* dshbox run in ws with the rules up to NULL; ATTACK in the script is the esc_attack helper. */
static void run_sh(struct dsh_proc *r, const char *script, ...)
{
	_cleanup_free_ char *full = NULL;
	cr_assert(asprintf(&full, "ATTACK='%s'; %s", attack, script) > 0);
	va_list ap;
	va_start(ap, script);
	dsh_test_run_sh(r, env, backend(), ws, full, ap);
	va_end(ap);
}

static void setup(void)
{
	dsh_test_require_backend();
	top = dsh_test_mkdtemp();
	cr_assert(asprintf(&ws, "%s/ws", top) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
	attack = dsh_test_helper("esc_attack");
}

static void teardown(void)
{
	dsh_test_rmtree(top);
	free(ws);
	free(top);
	free(attack);
}

TestSuite(file_on_the_way, .init = setup, .fini = teardown, .timeout = 60);

static void expect_absent(const char *rel)
{
	_cleanup_free_ char *path = at(rel);
	struct stat st;
	cr_expect(lstat(path, &st) < 0 && errno == ENOENT, "%s exists on the host", path);
}

/*
 * No .git at start: a new .git of any kind but a directory is refused — written, a fifo, a hard
 * link, a renamed file, a socket — and so is b under -- b/secret, and a file brought to b inside a
 * renamed directory.  A directory may still be made there.
 */
Test(file_on_the_way, no_file_is_made_on_the_way_to_a_protected_target)
{
	_cleanup_free_ char *planted = at("elsewhere/config");
	dsh_test_write_file(planted, "[core]\n\tfsmonitor = touch /tmp/owned\n");
	_cleanup_free_ char *f = at("f");
	dsh_test_write_file(f, "gitdir: elsewhere\n");
	struct dsh_proc r;
	run_sh(&r,
	       "\"$ATTACK\" write-file .git 'gitdir: elsewhere'; \"$ATTACK\" make-fifo .git; \"$ATTACK\" link-to f .git; "
	       "\"$ATTACK\" rename-dir f .git; \"$ATTACK\" bind-name .git; \"$ATTACK\" write-file b x; "
	       "mkdir s && echo x > s/b && \"$ATTACK\" rename-dir s x; mkdir d && \"$ATTACK\" rename-dir d b",
	       "-- b/secret", "-- x/b/secret", NULL);
	cr_expect_str_eq(r.out,
			 "write=EACCES\nmknod=EACCES\nlink=EACCES\nrename=EACCES\nbind=EACCES\nwrite=EACCES\n"
			 "rename=EACCES\nrename=ok\n",
			 "stderr: %s", r.err);
	expect_absent(".git");
	expect_absent("x");
	_cleanup_free_ char *b = at("b"), *fc = dsh_test_read_file(f);
	struct stat st;
	cr_expect(lstat(b, &st) == 0 && S_ISDIR(st.st_mode), "a directory on the way was not made");
	cr_expect(fc && strcmp(fc, "gitdir: elsewhere\n") == 0, "f moved or changed");
	dsh_proc_clear(&r);
}

/*
 * A git worktree: .git is a file at start.  It is kept as it is for the run: rewriting it in place,
 * replacing it by a rename or removing it all fail, and the host's file is unchanged.  Under the
 * landlock backend a grant on the workspace cannot be taken back from it, so the run is refused
 * (exit 125, naming the file) rather than run with the rule lost.
 */
Test(file_on_the_way, a_worktree_git_file_is_kept)
{
	static const char orig[] = "gitdir: /nonexistent/main/.git/worktrees/wt\n";
	_cleanup_free_ char *git = at(".git"), *n = at("n");
	dsh_test_write_file(git, orig);
	dsh_test_write_file(n, "gitdir: elsewhere\n");
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" write-file .git 'gitdir: elsewhere'; \"$ATTACK\" rename-dir n .git; rm -f .git; echo rm=$?",
	       NULL);
	if (strcmp(backend(), "landlock") == 0) {
		cr_expect_eq(r.exit_code, 125, "stdout: %s\nstderr: %s", r.out, r.err);
		cr_expect(strstr(r.err, "dshbox: error:") && strstr(r.err, git), "the refusal names %s: %s", git, r.err);
		cr_expect_str_eq(r.out, "", "the command ran");
	} else {
		cr_expect_eq(r.exit_code, 0, "stderr: %s", r.err);
		cr_expect(strncmp(r.out, "write=EROFS\nrename=", 19) == 0 && !strstr(r.out, "rename=ok") &&
				  strstr(r.out, "rm=1\n"),
			  "stdout: %s\nstderr: %s", r.out, r.err);
	}
	_cleanup_free_ char *got = dsh_test_read_file(git);
	cr_expect(got && strcmp(got, orig) == 0, ".git on the host is now '%s'", got ? got : "(missing)");
	dsh_proc_clear(&r);
}
