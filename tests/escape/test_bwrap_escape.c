/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ways out of what a bubblewrap argv sets up, tried from inside `dshbox bwrap` and judged on the
 * host: the argv's read-only binds and tmpfs masks cannot be undone (remount, mount_setattr,
 * umount, the new mount API, from nested user namespaces too, with --cap-add CAP_SETFCAP too), a root built from nothing gives no way back
 * to the host's tree, and dshbox bwrap never makes a name on the host to place a mount: an absent
 * destination is held absent (the command cannot make it either).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };
static char *ws, *attack;

static char *at(const char *rel)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", ws, rel) > 0);
	return s;
}

static void setup(void)
{
	ws = dsh_test_mkdtemp();
	attack = dsh_test_helper("esc_attack");
	_cleanup_free_ char *ro = at("ro/file"), *secret = at("secret/key");
	dsh_test_write_file(ro, "read-only\n");
	dsh_test_write_file(secret, "the secret\n");
	/* the unprivileged run needs to reach its helper and tree */
	chmod(ws, 0755);
}

static void teardown(void)
{
	dsh_test_rmtree(ws);
	free(ws);
	free(attack);
}

TestSuite(bwrap_escape, .init = setup, .fini = teardown);

/* dshbox bwrap ARGV (words WS... become the workspace path) -- esc_attack NAME ARGS... (NULL-ended). */
static void run(struct dsh_proc *r, const char *const *words, const char *name, ...)
{
	_cleanup_strv_ char **argv = NULL;
	dsh_strv_push(&argv, dsh_test_dshbox());
	dsh_strv_push(&argv, "bwrap");
	for (size_t i = 0; words[i]; i++) {
		if (strncmp(words[i], "WS", 2) == 0)
			dsh_strv_pushf(&argv, "%s%s", ws, words[i] + 2);
		else
			dsh_strv_push(&argv, words[i]);
	}
	dsh_strv_push(&argv, "--");
	dsh_strv_push(&argv, attack);
	dsh_strv_push(&argv, name);
	va_list ap;
	va_start(ap, name);
	for (const char *a; (a = va_arg(ap, const char *));) {
		if (strncmp(a, "WS", 2) == 0)
			dsh_strv_pushf(&argv, "%s%s", ws, a + 2);
		else
			dsh_strv_push(&argv, a);
	}
	va_end(ap);
	cr_assert_eq(dsh_proc_run(argv, env, NULL, r), 0);
	if (r->exit_code == 1 && strncmp(r->err, "bwrap: ", 7) == 0 &&
	    (strstr(r->err, "user namespace") || strstr(r->err, "Operation not permitted") ||
	     strstr(r->err, "mount_setattr: Function not implemented"))) /* before Linux 5.12 */
		DSH_SKIP("dshbox bwrap cannot build a sandbox here: %s", r->err);
}

#define EXPECT(r, ...)                                                                         \
	do {                                                                                   \
		const char *want_[] = { __VA_ARGS__, NULL };                                  \
		cr_assert_eq((r)->exit_code, 0, "attack did not run: %s", (r)->err);          \
		for (size_t i_ = 0; want_[i_]; i_++)                                          \
			cr_expect(strstr((r)->out, want_[i_]), "want %s in:\n%s", want_[i_], (r)->out); \
	} while (0)

static void host_unchanged(void)
{
	_cleanup_free_ char *ro = at("ro/file"), *secret = at("secret/key");
	_cleanup_free_ char *a = dsh_test_read_file(ro), *b = dsh_test_read_file(secret);
	cr_expect_str_eq(a, "read-only\n");
	cr_expect_str_eq(b, "the secret\n");
}

static const char *const shape[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
				     "--bind", "WS", "WS", "--ro-bind", "WS/ro", "WS/ro", "--tmpfs", "WS/secret",
				     NULL };

Test(bwrap_escape, remount_a_read_only_bind_writable)
{
	struct dsh_proc r;
	run(&r, shape, "remount", "WS/ro", "WS/ro/file", NULL);
	EXPECT(&r, "remount_rw=EPERM", "remount_rw_plain=EPERM", "setattr_rw=EPERM", "write_after=EROFS");
	dsh_proc_clear(&r);
	host_unchanged();
}

Test(bwrap_escape, umount_a_tmpfs_over_a_secret)
{
	struct dsh_proc r;
	run(&r, shape, "umount", "WS/secret", "WS/secret/key", NULL);
	EXPECT(&r, "umount=EPERM", "umount_detach=EPERM", "read_after=ENOENT");
	cr_expect_null(strstr(r.out, "the secret"), "%s", r.out);
	dsh_proc_clear(&r);
	host_unchanged();
}

Test(bwrap_escape, new_mount_api)
{
	struct dsh_proc r;
	run(&r, shape, "mountapi", NULL);
	EXPECT(&r, "fsopen=EPERM", "fsmount=EPERM", "open_tree=EPERM", "mount_setattr=EPERM", "pivot_root=EPERM",
	       "mount=EPERM");
	dsh_proc_clear(&r);
	host_unchanged();
}

/*
 * bubblewrap lets the command make user namespaces (sandbox-runtime's seccomp helper does), and so
 * does dshbox bwrap; the argv's mounts stay locked in them: the read-only bind cannot be unmounted,
 * / cannot be remounted read-write, no bind uncovers anything, the tmpfs over the secret holds.
 * The same with the capability sandbox-runtime keeps for its helper (CAP_SETFCAP).
 */
static void nested_attacks(const char *const *words)
{
	struct dsh_proc r;
	run(&r, words, "userns", NULL);
	EXPECT(&r, "unshare_user=ok");
	dsh_proc_clear(&r);
	_cleanup_free_ char *target = at("bindtarget");
	cr_assert_eq(mkdir(target, 0777), 0);
	run(&r, words, "unshare", "WS", "ro/file", "WS/bindtarget", "WS/ro/file", NULL);
	EXPECT(&r, "unshare_Urm=ok", "umount=EINVAL", "remount_rw=EPERM", "bind=EINVAL");
	dsh_proc_clear(&r);
	run(&r, words, "unshare", "WS", "secret/key", "WS/bindtarget", "WS/secret/key", NULL);
	EXPECT(&r, "unshare_Urm=ok", "remount_rw=EPERM", "bind=EINVAL", "read_secret=ENOENT");
	cr_expect_null(strstr(r.out, "the secret"), "%s", r.out);
	dsh_proc_clear(&r);
	rmdir(target);
	host_unchanged();
}

Test(bwrap_escape, nested_user_namespaces_keep_the_mounts_locked)
{
	nested_attacks(shape);
}

Test(bwrap_escape, nested_user_namespaces_with_cap_setfcap_keep_the_mounts_locked)
{
	const char *const withcap[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-user",
					"--cap-drop", "ALL", "--cap-add", "CAP_SETFCAP", "--proc", "/proc", "--bind",
					"WS", "WS", "--ro-bind", "WS/ro", "WS/ro", "--tmpfs", "WS/secret", NULL };
	nested_attacks(withcap);
}

/* --disable-userns: no user namespace can be made inside. */
Test(bwrap_escape, disable_userns_refuses_nested_user_namespaces)
{
	const char *const off[] = { "--ro-bind", "/", "/", "--unshare-user", "--disable-userns", "--proc", "/proc",
				    "--bind", "WS", "WS", "--ro-bind", "WS/ro", "WS/ro", NULL };
	struct dsh_proc r;
	run(&r, off, "userns", NULL);
	EXPECT(&r, "unshare_user=EPERM", "unshare_mnt=EPERM", "clone_newuser=EPERM");
	dsh_proc_clear(&r);
	host_unchanged();
}

/* A new root: only what the argv binds is there; the host's tree cannot be reached again. */
Test(bwrap_escape, new_root_gives_no_way_back)
{
	const char *const nr[] = { "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink",
				   "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev",
				   "/dev", "--ro-bind", attack, attack, "--unshare-pid", NULL };
	struct dsh_proc r;
	run(&r, nr, "mountapi", NULL);
	EXPECT(&r, "open_tree=EPERM", "pivot_root=EPERM", "mount=EPERM");
	dsh_proc_clear(&r);
	_cleanup_free_ char *secret = at("secret/key");
	/* pid 1 is dshbox's init, inside the same new root: its root and cwd lead nowhere else. */
	run(&r, nr, "procroot", "1", secret + 1, NULL);
	cr_expect_null(strstr(r.out, "the secret"), "the host's tree through /proc: %s", r.out);
	dsh_proc_clear(&r);
}

/*
 * Absent destinations under a writable bind (sandbox-runtime's masks of .gitconfig, .claude, ...):
 * nothing is made on the host, not even while the command runs (a watcher on the host looks), and
 * the command cannot make them: no file, directory, symlink, hard link, fifo, rename onto them,
 * from a nested user namespace through another path to the same directory either.
 */
static const char *const held_names[] = { ".gitconfig", "made-by-bwrap", "dir-by-bwrap", ".claude",
					  ".claude/commands", ".devnull", "data-by-bwrap", NULL };

/* A process on the host polling the names while the run lasts; its status: 1 when one appeared. */
static pid_t watch_names(void)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid > 0)
		return pid;
	for (;;) {
		for (size_t i = 0; held_names[i]; i++) {
			char p[4096];
			struct stat st;
			snprintf(p, sizeof(p), "%s/%s", ws, held_names[i]);
			if (lstat(p, &st) == 0)
				_exit(1);
		}
		usleep(1000);
	}
}

static const char held_script[] =
	"cd \"$1\" || exit 9\n"
	"for n in .gitconfig made-by-bwrap dir-by-bwrap .claude .claude/commands .devnull data-by-bwrap; do\n"
	"  [ -e $n ] && echo \"exists $n\"\n"
	"  (echo x > $n) 2>/dev/null && echo \"made $n\"\n"
	"  mkdir $n 2>/dev/null && echo \"made $n\"\n"
	"  ln -s ro $n 2>/dev/null && echo \"made $n\"\n"
	"  ln ro/file $n 2>/dev/null && echo \"made $n\"\n"
	"  mkfifo $n 2>/dev/null && echo \"made $n\"\n"
	"  echo y > tmpf && mv tmpf $n 2>/dev/null && echo \"made $n\"\n"
	"  mkdir tmpd && mv -T tmpd $n 2>/dev/null && echo \"made $n\"; rmdir tmpd 2>/dev/null\n"
	"  python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' $n 2>/dev/null &&\n"
	"    echo \"made $n\"\n"
	"done\n"
	"python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")' && echo socket-bound\n"
	"rm -f tmpf\n"
	"unshare -rm sh -c 'mount --bind \"$1\" \"$1/ro\" && cd \"$1/ro\" && for n in .gitconfig .claude; do\n"
	"  (echo x > $n) 2>/dev/null && echo \"made $n via an alias\"; mkdir $n 2>/dev/null && echo \"made $n via an alias\"\n"
	"done; echo nested-done' - \"$1\"\n"
	"echo all-done\n";

static void expect_held_absent(const char *const *argv)
{
	dsh_test_require_backend();
	_cleanup_strv_ char **args = NULL;
	dsh_strv_push(&args, dsh_test_dshbox());
	dsh_strv_push(&args, "bwrap");
	for (size_t i = 0; argv[i]; i++)
		if (strncmp(argv[i], "WS", 2) == 0)
			dsh_strv_pushf(&args, "%s%s", ws, argv[i] + 2);
		else
			dsh_strv_push(&args, argv[i]);
	dsh_strv_push(&args, "sh");
	dsh_strv_push(&args, "-c");
	dsh_strv_push(&args, held_script);
	dsh_strv_push(&args, "sh");
	dsh_strv_push(&args, ws);
	pid_t watcher = watch_names();
	struct dsh_proc r;
	int rc = dsh_proc_run(args, env, "", &r);
	int status = 0;
	kill(watcher, SIGKILL);
	cr_assert_eq(waitpid(watcher, &status, 0), watcher);
	cr_assert_eq(rc, 0);
	if (r.exit_code == 1 && strncmp(r.err, "bwrap: ", 7) == 0 && strstr(r.err, "user namespace"))
		DSH_SKIP("dshbox bwrap cannot build a sandbox here: %s", r.err);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "all-done"), "the command did not run to its end: %s %s", r.out, r.err);
	cr_expect(strstr(r.out, "nested-done"), "the nested user namespace was not made: %s %s", r.out, r.err);
	cr_expect(strstr(r.out, "socket-bound"), "a socket cannot be bound elsewhere, so its refusal shows nothing: %s %s",
		  r.out, r.err);
	cr_expect_null(strstr(r.out, "made "), "a held name was made inside:\n%s", r.out);
	cr_expect_null(strstr(r.out, "exists "), "a held name was there inside:\n%s", r.out);
	dsh_proc_clear(&r);
	cr_expect(WIFSIGNALED(status), "a held name appeared on the host during the run");
	for (size_t i = 0; held_names[i]; i++) {
		struct stat st;
		_cleanup_free_ char *p = at(held_names[i]);
		cr_expect(lstat(p, &st) < 0 && errno == ENOENT, "%s is on the host after the run", p);
	}
	host_unchanged();
}

Test(bwrap_escape, absent_names_are_held_absent)
{
	const char *const argv[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-user",
				     "--cap-drop", "ALL", "--cap-add", "CAP_SETFCAP", "--proc", "/proc", "--bind", "WS",
				     "WS", "--ro-bind", "/dev/null", "WS/.gitconfig", "--tmpfs", "WS/made-by-bwrap",
				     "--dir", "WS/dir-by-bwrap", "--ro-bind", "WS/ro", "WS/.claude", "--ro-bind",
				     "/dev/null", "WS/.claude/commands", "--dev-bind", "/dev/null", "WS/.devnull",
				     "--ro-bind-data", "0", "WS/data-by-bwrap", NULL };
	expect_held_absent(argv);
}

/* The same held by the broker when the command is pid 1 of its own pid namespace (Codex's
   --as-pid-1), with Codex's form of a mask: --perms 555 --tmpfs X --remount-ro X. */
Test(bwrap_escape, absent_names_are_held_absent_as_pid_1)
{
	const char *const argv[] = { "--as-pid-1", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev",
				     "--unshare-pid", "--unshare-user", "--unshare-ipc", "--cap-drop", "ALL", "--cap-add",
				     "CAP_SETFCAP", "--proc", "/proc", "--bind", "WS", "WS", "--ro-bind", "/dev/null",
				     "WS/.gitconfig", "--perms", "555", "--tmpfs", "WS/made-by-bwrap", "--remount-ro",
				     "WS/made-by-bwrap", "--dir", "WS/dir-by-bwrap", "--ro-bind", "WS/ro", "WS/.claude",
				     "--ro-bind", "/dev/null", "WS/.claude/commands", "--dev-bind", "/dev/null",
				     "WS/.devnull", "--ro-bind-data", "0", "WS/data-by-bwrap", NULL };
	expect_held_absent(argv);
}

/*
 * A held name made on the host after the plan (here while --block-fd holds dshbox between the plan
 * and the run; the plan takes milliseconds, the writer waits a second): the run fails, and the
 * command never gets to write it.
 */
Test(bwrap_escape, a_held_name_that_appears_before_the_run_fails_it)
{
	dsh_test_require_backend();
	_cleanup_free_ char *d = at(".gitconfig");
	char *args[] = { "/bin/sh", "-c",
			 "{ sleep 1; echo keep > \"$1/.gitconfig\"; echo go; } | \"$2\" bwrap --block-fd 0 --ro-bind / / "
			 "--dev /dev --proc /proc --unshare-user --unshare-pid --bind \"$1\" \"$1\" --ro-bind /dev/null "
			 "\"$1/.gitconfig\" -- sh -c 'echo pwned > \"$0/.gitconfig\"; echo ran' \"$1\"",
			 "sh", ws, (char *)dsh_test_dshbox(), NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(args, env, NULL, &r), 0);
	if (r.exit_code == 1 && strncmp(r.err, "bwrap: ", 7) == 0 && strstr(r.err, "user namespace"))
		DSH_SKIP("dshbox bwrap cannot build a sandbox here: %s", r.err);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "bwrap: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "appeared after the sandbox was planned"), "%s", r.err);
	cr_expect_null(strstr(r.out, "ran"), "%s", r.out);
	dsh_proc_clear(&r);
	_cleanup_free_ char *content = dsh_test_read_file(d);
	cr_expect_str_eq(content, "keep\n");
}

/* Without the broker (--dshbox-compat=strict) nothing would hold such a name: refused, nothing made. */
Test(bwrap_escape, absent_name_without_the_broker_is_refused)
{
	_cleanup_free_ char *d = at(".gitconfig");
	char *args[] = { (char *)dsh_test_dshbox(), "bwrap", "--dshbox-compat=strict", "--ro-bind", "/", "/", "--proc",
			 "/proc", "--bind", ws, ws, "--ro-bind", "/dev/null", d, "true", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(args, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "bwrap: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "--dshbox-compat=strict"), "%s", r.err);
	dsh_proc_clear(&r);
	struct stat st;
	cr_expect(lstat(d, &st) < 0 && errno == ENOENT, "a mount point was made on the host");
}

/* --uid 0: root by number in its user namespace, without a capability: the mounts still hold. */
Test(bwrap_escape, uid_0_inside_gets_no_capability)
{
	const char *const root[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-user", "--uid",
				     "0", "--gid", "0", "--proc", "/proc", "--bind", "WS", "WS", "--ro-bind", "WS/ro",
				     "WS/ro", "--tmpfs", "WS/secret", NULL };
	struct dsh_proc r;
	run(&r, root, "remount", "WS/ro", "WS/ro/file", NULL);
	EXPECT(&r, "remount_rw=EPERM", "remount_rw_plain=EPERM", "setattr_rw=EPERM", "write_after=EROFS");
	dsh_proc_clear(&r);
	run(&r, root, "umount", "WS/secret", "WS/secret/key", NULL);
	EXPECT(&r, "umount=EPERM", "umount_detach=EPERM", "read_after=ENOENT");
	cr_expect_null(strstr(r.out, "the secret"), "%s", r.out);
	dsh_proc_clear(&r);
	host_unchanged();
}
