/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A directory renamed into a rule's reach brings its descendants to new names (issue 10, SPEC
 * 3.12): each attack builds a tree whose names no rule covers yet, renames it (one renameat2 by
 * esc_attack, which prints the errno's name) so that a descendant lands on a name an r-/-- rule
 * covers, and the host checks that nothing moved.  The backend is DSHBOX_ESCAPE_BACKEND.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
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

/* Write ws/rel on the host (parents made). */
static void put(const char *rel, const char *content)
{
	_cleanup_free_ char *path = at(rel);
	dsh_test_write_file(path, content);
}

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

/* dshbox run --backend B --workspace WS --cwd WS [--access RULE]... -- sh -c SCRIPT; rules end at
   NULL.  ATTACK in the script is the esc_attack helper's path (exported to the script). */
static void run_sh(struct dsh_proc *r, const char *script, ...)
{
	_cleanup_free_ char *full = NULL;
	cr_assert(asprintf(&full, "ATTACK='%s'; %s", attack, script) > 0);
	va_list ap;
	va_start(ap, script);
	dsh_test_run_sh(r, env, dsh_test_escape_backend(), ws, full, ap);
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

TestSuite(broker_subtree, .init = setup, .fini = teardown, .timeout = 60);

static void expect_file(const char *rel, const char *content)
{
	_cleanup_free_ char *path = at(rel), *got = dsh_test_read_file(path);
	cr_expect(got && strcmp(got, content) == 0, "%s is '%s' on the host, want '%s'", path, got ? got : "(missing)",
		  content);
}

static void expect_absent(const char *rel)
{
	_cleanup_free_ char *path = at(rel);
	struct stat st;
	cr_expect_eq(lstat(path, &st), -1, "%s exists on the host", path);
}

/* rel is a symlink on the host: an ordinary link the broker let be. */
static void expect_link(const char *rel, const char *why)
{
	_cleanup_free_ char *path = at(rel);
	struct stat st;
	cr_expect(lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "%s: %s", path, why);
}

/* The command's output holds line (one esc_attack step and its errno name). */
static void expect_line(const struct dsh_proc *r, const char *line)
{
	_cleanup_free_ char *want = NULL;
	cr_assert(asprintf(&want, "%s\n", line) > 0);
	cr_expect(strstr(r->out, want), "want '%s'\nstdout: %s\nstderr: %s", line, r->out, r->err);
}

Test(broker_subtree, a_directory_renamed_under_a_glob)
{
	put("stage/k.pem", "key\n");
	put("stage/readme", "r\n");
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" rename-dir stage keys; mv stage keys; exit 0", "-- keys/*.pem", NULL);
	expect_line(&r, "rename=EACCES");
	cr_expect(strstr(r.err, "Permission denied"), "mv: %s", r.err);
	expect_absent("keys");
	expect_file("stage/k.pem", "key\n");
	dsh_proc_clear(&r);
}

Test(broker_subtree, a_deep_descendant_reaches_a_recursive_glob)
{
	put("stage/a/b/c/k.pem", "key\n");
	put("stage/a/notes", "n\n");
	struct dsh_proc r;
	run_sh(&r, "mkdir -p x/y && \"$ATTACK\" rename-dir stage x/y/out", "-- **/out/**/*.pem", NULL);
	expect_line(&r, "rename=EACCES");
	expect_absent("x/y/out");
	expect_file("stage/a/b/c/k.pem", "key\n");
	dsh_proc_clear(&r);
}

Test(broker_subtree, a_read_only_glob_reached_by_renaming_its_directory)
{
	put("a/evil.conf", "evil\n");
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" rename-dir a b", "r- b/*.conf", NULL);
	expect_line(&r, "rename=EACCES");
	expect_absent("b");
	expect_file("a/evil.conf", "evil\n");
	dsh_proc_clear(&r);
}

Test(broker_subtree, a_literal_target_below_an_absent_directory)
{
	put("a/secret", "planted\n");
	put("c/hooks/pre-commit", "evil\n");
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" rename-dir a b; \"$ATTACK\" rename-dir c .git", "-- b/secret", NULL);
	/* b/secret is a -- target; .git/hooks a default r- target (SPEC 1.6) of the workspace */
	cr_expect_str_eq(r.out, "rename=EACCES\nrename=EACCES\n", "stderr: %s", r.err);
	expect_absent("b");
	expect_absent(".git");
	expect_file("a/secret", "planted\n");
	dsh_proc_clear(&r);
}

/* x/keys is no rule's target (its literal directory is the workspace): only the walk stops these. */
Test(broker_subtree, an_exchange_moves_both_trees)
{
	put("stage/k.pem", "key\n");
	put("x/keys/readme", "r\n");
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" rename-dir stage x/keys exchange; \"$ATTACK\" rename-dir x/keys stage exchange",
	       "-- **/keys/*.pem", NULL);
	cr_expect_str_eq(r.out, "rename=EACCES\nrename=EACCES\n", "stderr: %s", r.err);
	expect_absent("x/keys/k.pem");
	expect_file("stage/k.pem", "key\n");
	expect_file("x/keys/readme", "r\n");
	dsh_proc_clear(&r);
}

Test(broker_subtree, an_exchange_of_harmless_trees_goes_through)
{
	put("stage/notes", "n\n");
	put("x/keys/readme", "r\n");
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" rename-dir stage x/keys exchange", "-- **/keys/*.pem", NULL);
	cr_expect_str_eq(r.out, "rename=ok\n", "stderr: %s", r.err);
	expect_file("x/keys/notes", "n\n");
	expect_file("stage/readme", "r\n");
	dsh_proc_clear(&r);
}

Test(broker_subtree, a_symlink_is_a_name_too)
{
	_cleanup_free_ char *link = at("stage/k.pem");
	put("stage/readme", "r\n");
	cr_assert_eq(symlink("/etc/hostname", link), 0);
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" rename-dir stage keys", "-- keys/*.pem", NULL);
	expect_line(&r, "rename=EACCES");
	expect_absent("keys");
	dsh_proc_clear(&r);
}

/*
 * A symlink on the way to a protected target leads the target's path into a tree the command
 * chose, for every later reader (the default r- .git/config of a workspace without .git: git on
 * the host would read a config the command wrote).  Made, renamed or linked there, or brought
 * there inside a renamed directory: refused.
 */
Test(broker_subtree, a_symlink_on_the_way_to_a_protected_target)
{
	put("elsewhere/secret", "planted\n");
	put("elsewhere/config", "[core]\n\tfsmonitor = evil\n");
	struct dsh_proc r;
	run_sh(&r,
	       "\"$ATTACK\" symlink-to elsewhere b; \"$ATTACK\" symlink-to elsewhere .git; "
	       "\"$ATTACK\" symlink-to elsewhere l; \"$ATTACK\" rename-dir l b; \"$ATTACK\" link-to l .git; "
	       "\"$ATTACK\" rename-dir l c; mkdir s && \"$ATTACK\" symlink-to ../elsewhere s/b && \"$ATTACK\" rename-dir s x",
	       "-- b/secret", "-- x/b/secret", NULL);
	cr_expect_str_eq(r.out,
			 "symlink=EACCES\nsymlink=EACCES\nsymlink=ok\nrename=EACCES\nlink=EACCES\nrename=ok\n"
			 "symlink=ok\nrename=EACCES\n",
			 "stderr: %s", r.err);
	expect_absent("b");
	expect_absent(".git");
	expect_absent("x");
	expect_link("c", "an ordinary symlink did not move");
	dsh_proc_clear(&r);
}

/* A pathname socket is a name too: bind() is brokered even with protectSockets off. */
Test(broker_subtree, a_socket_bound_under_a_glob_without_protect_sockets)
{
	_cleanup_free_ char *cfg = NULL;
	cr_assert(asprintf(&cfg, "%s/dshbox.yml", top) > 0);
	dsh_test_write_file(cfg, "protectSockets: false\n");
	const char *argv[] = { dsh_test_dshbox(), "run", "--backend", dsh_test_escape_backend(), "--config", cfg, "--workspace", ws,
			       "--cwd", ws, "--access", "-- **/*.pem", "--", attack, "bind-name", "k.pem", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_expect_str_eq(r.out, "bind=EACCES\n", "stderr: %s", r.err);
	expect_absent("k.pem");
	dsh_proc_clear(&r);
	argv[15] = "ok.sock";
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_expect_str_eq(r.out, "bind=ok\n", "stderr: %s", r.err);
	dsh_proc_clear(&r);
}

/* A directory the broker cannot read where a rule may reach: it cannot tell, so it refuses. */
Test(broker_subtree, an_unreadable_directory_fails_closed)
{
	_cleanup_free_ char *locked = at("stage/locked");
	put("stage/locked/k.pem", "key\n");
	cr_assert_eq(chmod(locked, 0300), 0);
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" rename-dir stage out", "-- out/**/*.pem", NULL);
	cr_expect_eq(chmod(locked, 0755), 0);
	expect_line(&r, "rename=EACCES");
	expect_absent("out");
	expect_file("stage/locked/k.pem", "key\n");
	dsh_proc_clear(&r);
}

/* Beyond the walk's depth the broker answers as for two mounts; mv then copies, name by name. */
Test(broker_subtree, a_tree_beyond_the_bound_is_copied_instead)
{
	char rel[4096] = "deep";
	for (int i = 0; i < 300; i++)
		strcat(rel, "/d");
	strcat(rel, "/k.pem");
	put(rel, "key\n");
	put("deep/top", "t\n");
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" rename-dir deep out; mv deep out; exit 0", "-- out/**/*.pem", NULL);
	expect_line(&r, "rename=EXDEV");
	/* mv's copy stops at the refused name, and leaves the source in place */
	cr_expect(strstr(r.err, "Permission denied"), "mv: %s", r.err);
	expect_file(rel, "key\n");
	memcpy(rel, "out/", 4);
	memmove(rel + 3, rel + 4, strlen(rel + 4) + 1);
	expect_absent(rel);
	dsh_proc_clear(&r);
}

/* The host's mount of path (linux-ns binds each writable root on its own). */
static uint64_t mount_id(const char *path)
{
	struct statx sx;
	cr_assert_eq(statx(AT_FDCWD, path, 0, STATX_MNT_ID, &sx), 0);
	cr_assert(sx.stx_mask & STATX_MNT_ID);
	return sx.stx_mnt_id;
}

/*
 * The command builds the tree in /tmp (a writable root, SPEC 3.6) and moves it in.  Under linux-ns
 * /tmp and the workspace are two mounts and the kernel says EXDEV itself (mv then copies, and each
 * copied name is checked); under the landlock backend they may be one mount, and the walk refuses.
 */
Test(broker_subtree, a_tree_built_in_tmp_and_moved_in)
{
	_cleanup_free_ char *tmp = NULL, *script = NULL;
	cr_assert(asprintf(&tmp, "/tmp/dsh-subtree-%d", (int)getpid()) > 0);
	cr_assert(asprintf(&script,
			   "mkdir -p %1$s/x && echo key > %1$s/x/k.pem && \"$ATTACK\" rename-dir %1$s/x keys; "
			   "mv %1$s/x keys; exit 0",
			   tmp) > 0);
	struct dsh_proc r;
	run_sh(&r, script, "-- keys/*.pem", NULL);
	dsh_test_rmtree(tmp);
	bool one_mount = strcmp(dsh_test_escape_backend(), "landlock") == 0 && mount_id("/tmp") == mount_id(ws);
	const char *want = one_mount ? "rename=EACCES" : "rename=EXDEV";
	expect_line(&r, want);
	expect_absent("keys/k.pem");
	dsh_proc_clear(&r);
}

/* Ordinary work: directories without a covered descendant move as before. */
Test(broker_subtree, ordinary_directory_renames_go_through, .timeout = 120)
{
	for (int i = 0; i < 500; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "build/d%d/f%d.o", i % 20, i);
		put(rel, "o\n");
	}
	struct dsh_proc r;
	run_sh(&r, "set -e; mv build build.old; test -f build.old/d19/f499.o; mkdir -p a/b; mv build.old a/b/c; echo done",
	       "-- **/*.pem", "r- cfg/*.conf", NULL);
	cr_expect_eq(r.exit_code, 0, "stdout: %s\nstderr: %s", r.out, r.err);
	cr_expect_str_eq(r.out, "done\n", "stderr: %s", r.err);
	expect_file("a/b/c/d0/f0.o", "o\n");
	expect_absent("build");
	dsh_proc_clear(&r);
}

/* Where no rule can reach below a directory it is not read: an unreadable one moves too. */
Test(broker_subtree, a_directory_no_rule_reaches_below_is_not_read)
{
	_cleanup_free_ char *locked = at("stage/locked"), *moved = at("keys/locked");
	put("stage/readme", "r\n");
	put("stage/locked/x", "x\n");
	cr_assert_eq(chmod(locked, 0300), 0);
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" rename-dir stage keys", "-- keys/*.pem", NULL);
	struct stat st;
	if (stat(moved, &st) == 0)
		cr_expect_eq(chmod(moved, 0755), 0);
	else
		cr_expect_eq(chmod(locked, 0755), 0);
	cr_expect_str_eq(r.out, "rename=ok\n", "stderr: %s", r.err);
	expect_file("keys/readme", "r\n");
	expect_file("keys/locked/x", "x\n");
	dsh_proc_clear(&r);
}

/*
 * A file where a protected target's path needs a directory (SPEC 1.6, 3.12): git follows a .git
 * *file* ("gitdir: DIR") to DIR's config and hooks, so a command that can write one at the root of
 * a workspace plants a config that the user's next git command on the host runs, around the
 * default r- .git/config.  Only a directory may stand on the way to an r-/-- target.
 *
 * No .git at start: a new .git of any kind but a directory is refused — written, a fifo, a hard
 * link, a renamed file, a socket — and so is b under -- b/secret, and a file brought to b inside a
 * renamed directory.  A directory may still be made there.
 */
Test(broker_subtree, no_file_is_made_on_the_way_to_a_protected_target)
{
	put("elsewhere/config", "[core]\n\tfsmonitor = touch /tmp/owned\n");
	put("f", "gitdir: elsewhere\n");
	_cleanup_free_ char *f = at("f");
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
Test(broker_subtree, a_worktree_git_file_is_kept)
{
	static const char orig[] = "gitdir: /nonexistent/main/.git/worktrees/wt\n";
	put(".git", orig);
	put("n", "gitdir: elsewhere\n");
	_cleanup_free_ char *git = at(".git");
	struct dsh_proc r;
	run_sh(&r, "\"$ATTACK\" write-file .git 'gitdir: elsewhere'; \"$ATTACK\" rename-dir n .git; rm -f .git; echo rm=$?",
	       NULL);
	if (strcmp(dsh_test_escape_backend(), "landlock") == 0) {
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

/*
 * A symlink deeper in a glob's reach (r- conf/ANY/NAME.toml, ANY a double star): `ln -s ../mine
 * conf/sub` would show the host, at conf/sub/app.toml, a file the command wrote in mine/ — around
 * the r-.  A link that stays where the glob reaches, or leads only to the host's own files, is an
 * ordinary link.
 * Made, renamed or linked there, or brought there inside a renamed directory: refused.
 */
Test(broker_subtree, a_symlink_in_a_globs_reach_may_not_lead_it_around)
{
	put("mine/app.toml", "planted\n");
	put("conf/real/readme", "no match at start: the landlock backend can run this rule\n");
	struct dsh_proc r;
	run_sh(&r,
	       "\"$ATTACK\" symlink-to ../mine conf/sub; \"$ATTACK\" symlink-to real conf/alias; "
	       "\"$ATTACK\" symlink-to /usr/share conf/usr; mkdir s && \"$ATTACK\" symlink-to ../../mine s/l && "
	       "\"$ATTACK\" rename-dir s conf/s; \"$ATTACK\" symlink-to ../mine l && \"$ATTACK\" rename-dir l conf/l; "
	       "\"$ATTACK\" link-to l conf/l2",
	       "r- conf/**/*.toml", NULL);
	cr_expect_str_eq(r.out,
			 "symlink=EACCES\nsymlink=ok\nsymlink=ok\nsymlink=ok\nrename=EACCES\nsymlink=ok\nrename=EACCES\n"
			 "link=EACCES\n",
			 "stderr: %s", r.err);
	expect_absent("conf/sub");
	expect_absent("conf/s");
	expect_absent("conf/l");
	expect_absent("conf/l2");
	expect_link("conf/alias", "a link within the glob's reach was not made");
	dsh_proc_clear(&r);
}
