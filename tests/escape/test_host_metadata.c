/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metadata of host files the command may not write: a file of the user's outside the writable
 * roots (no rule names it) and a host device node bound into the sandbox (/dev/full, which root's
 * command owns).  Landlock, the landlock backend's only wall, does not govern mode, owner, times
 * or xattrs, and a device node is writable for its data: chmod, touch, fchmod on a descriptor and
 * a user xattr were tried from inside and judged on the host (mode, mtime, xattrs as they were).
 * The same calls on a file in the workspace go through: the oracle sees a change where one is
 * allowed.  The backend is DSHBOX_ESCAPE_BACKEND (default auto); CI runs both, as root and as an
 * unprivileged user.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

static const char *backend(void)
{
	const char *b = getenv("DSHBOX_ESCAPE_BACKEND");
	return b && *b ? b : "auto";
}

static void run_sh(struct dsh_proc *r, const char *ws, const char *script, ...)
{
	va_list ap;
	va_start(ap, script);
	dsh_test_run_sh(r, env, backend(), ws, script, ap);
	va_end(ap);
}

/* python3 running SETUP, then each (name, call) of CALLS on PATH (sys.argv[1]), printing
   "NAME=0" or "NAME=ERRNO" for each. */
static char *python_tries(const char *setup, const char *calls, const char *path)
{
	return dsh_test_fmt("python3 -c 'import os,sys\n%s\n"
			    "for name, fn in (%s):\n"
			    "    try:\n"
			    "        fn(); print(name + \"=0\")\n"
			    "    except OSError as e:\n"
			    "        print(name + \"=\" + str(e.errno))\n' '%s'",
			    setup, calls, path);
}

/* Every way the script below changes a name's metadata; each prints "NAME=STATUS". */
static char *attempts(const char *path)
{
	_cleanup_free_ char *py = python_tries(
		"f = os.open(sys.argv[1], os.O_RDONLY)",
		"(\"fchmod\", lambda: os.fchmod(f, 0o600)), (\"futimens\", lambda: os.utime(f, (1, 1))),"
		" (\"fsetxattr\", lambda: os.setxattr(f, \"user.dshbox\", b\"x\"))",
		path);
	return dsh_test_fmt("chmod 0600 '%1$s'; echo chmod=$?; touch -m -d 2001-01-01 '%1$s'; echo touch=$?; %2$s",
			    path, py);
}

/* A workspace with a file of its own (mine), and beside it a directory outside the writable roots
   with the victim; both 0644.  The calls on descriptors are made from python3. */
struct scene {
	char *top, *ws, *victim, *mine;
	struct stat before; /* the victim's */
};

static void scene_make(struct scene *sc)
{
	if (access("/usr/bin/python3", X_OK) != 0)
		DSH_SKIP("no /usr/bin/python3 for the descriptor calls");
	sc->top = dsh_test_mkdtemp();
	sc->ws = dsh_test_fmt("%s/ws", sc->top);
	_cleanup_free_ char *out = dsh_test_fmt("%s/out", sc->top);
	sc->victim = dsh_test_fmt("%s/victim", out);
	sc->mine = dsh_test_fmt("%s/mine", sc->ws);
	cr_assert_eq(mkdir(sc->ws, 0755), 0);
	cr_assert_eq(mkdir(out, 0755), 0);
	dsh_test_write_file(sc->victim, "v\n");
	dsh_test_write_file(sc->mine, "m\n");
	cr_assert_eq(chmod(sc->victim, 0644), 0);
	cr_assert_eq(chmod(sc->mine, 0644), 0);
	cr_assert_eq(stat(sc->victim, &sc->before), 0);
}

/* The script run in the scene's workspace, which ends well whatever its calls answered. */
static void scene_run(const struct scene *sc, const char *script, struct dsh_proc *r)
{
	run_sh(r, sc->ws, script, NULL);
	cr_expect_eq(r->exit_code, 0, "%s", r->err);
}

static void scene_clear(struct scene *sc)
{
	dsh_test_rmtree(sc->top);
	free(sc->top);
	free(sc->ws);
	free(sc->victim);
	free(sc->mine);
}

/* The host's oracle: the victim's mode and mtime as they were. */
static void expect_kept(const struct scene *sc, const char *out)
{
	const struct stat *before = &sc->before;
	struct stat after;
	cr_assert_eq(stat(sc->victim, &after), 0);
	cr_expect_eq(after.st_mode & 07777, 0644, "the mode changed on the host: %o (%s)", after.st_mode & 07777, out);
	cr_expect_eq(after.st_mtime, before->st_mtime, "the mtime changed on the host (%s)", out);
}

/* The control's: the mode 0600 and the mtime the calls set. */
static void expect_landed(const char *mine, time_t mtime, const struct dsh_proc *r)
{
	struct stat after;
	cr_assert_eq(stat(mine, &after), 0);
	cr_expect_eq(after.st_mode & 07777, 0600, "the control's chmod did not land: %s%s", r->out, r->err);
	cr_expect_eq(after.st_mtime, mtime, "the control's times did not land: %s%s", r->out, r->err);
}

static bool xattr_supported(const char *path)
{
	return setxattr(path, "user.dshbox-probe", "1", 1, 0) == 0 && removexattr(path, "user.dshbox-probe") == 0;
}

Test(host_metadata, a_file_outside_the_writable_roots_keeps_its_mode_times_and_xattrs, .timeout = 60)
{
	struct scene sc;
	scene_make(&sc);
	const char *victim = sc.victim, *mine = sc.mine;
	bool xattrs = xattr_supported(victim);

	_cleanup_free_ char *script = attempts(victim);
	struct dsh_proc r;
	scene_run(&sc, script, &r);
	expect_kept(&sc, r.out);
	char v[8];
	cr_expect(getxattr(victim, "user.dshbox", v, sizeof(v)) < 0, "an xattr was set on the host (%s)", r.out);
	static const char *const calls[] = { "chmod", "touch", "fchmod", "futimens", "fsetxattr" };
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		cr_expect(!dsh_out_is(r.out, calls[i], "0"), "%s went through: %s", calls[i], r.out);
	dsh_proc_clear(&r);

	/* The control: in the workspace every call works, and the oracle sees it. */
	_cleanup_free_ char *control = attempts(mine);
	scene_run(&sc, control, &r);
	expect_landed(mine, 1, &r);
	if (xattrs)
		cr_expect(getxattr(mine, "user.dshbox", v, sizeof(v)) == 1, "the control's xattr did not land: %s", r.out);
	dsh_proc_clear(&r);
	scene_clear(&sc);
}

/* /dev/full is the host's node: its data for the command, never its inode.  The script sets the
   mode and mtime the node already has, so that a failure of the test changes nothing; that the
   calls are refused is read from their status. */
Test(host_metadata, a_host_device_node_keeps_its_inode, .timeout = 60)
{
	struct stat before;
	if (stat("/dev/full", &before) < 0 || !S_ISCHR(before.st_mode))
		DSH_SKIP("no /dev/full character device here");
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	_cleanup_free_ char *script = dsh_test_fmt("chmod %o /dev/full; echo chmod=$?; touch -m -d @%lld /dev/full; "
						   "echo touch=$?; echo x > /dev/null; echo write=$?",
						   before.st_mode & 07777, (long long)before.st_mtime);
	struct dsh_proc r;
	run_sh(&r, ws, script, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(!dsh_out_is(r.out, "chmod", "0"), "chmod of /dev/full went through: %s", r.out);
	cr_expect(!dsh_out_is(r.out, "touch", "0"), "utimes of /dev/full went through: %s", r.out);
	cr_expect(dsh_out_is(r.out, "write", "0"), "/dev/null cannot be written: %s%s", r.out, r.err);
	struct stat after;
	cr_assert_eq(stat("/dev/full", &after), 0);
	cr_expect_eq(after.st_mode, before.st_mode, "/dev/full's mode changed on the host");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

/* What is the sandbox's own (linux-ns: its /dev's devpts and shm) holds no host file: a pty's mode
   and a shared-memory object's are the command's to set.  The landlock backend has the host's
   /dev, where /dev/shm is not granted: an object made there is refused, nothing on the host. */
Test(host_metadata, the_sandboxs_own_pty_and_shm_stay_the_commands, .timeout = 60)
{
	if (access("/usr/bin/python3", X_OK) != 0)
		DSH_SKIP("no /usr/bin/python3 for the pty");
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	if (strcmp(backend(), "landlock") == 0) {
		_cleanup_free_ char *name = dsh_test_fmt("/dev/shm/dshbox-test.%d", (int)getpid());
		_cleanup_free_ char *script = dsh_test_fmt(": > %s; echo shm=$?", name);
		run_sh(&r, ws, script, NULL);
		cr_expect(!dsh_out_is(r.out, "shm", "0"), "an object was made in the host's /dev/shm: %s", r.out);
		cr_expect(access(name, F_OK) < 0, "%s exists on the host", name);
		unlink(name);
		dsh_proc_clear(&r);
		dsh_test_rmtree(ws);
		return;
	}
	run_sh(&r, ws,
	       "python3 -c 'import os, pty\n"
	       "m, s = pty.openpty()\n"
	       "os.fchmod(s, 0o600); print(\"pty=0\")\n"
	       "fd = os.open(\"/dev/shm/dshbox-test\", os.O_CREAT | os.O_RDWR, 0o600)\n"
	       "os.fchmod(fd, 0o640); os.utime(fd, (1, 1)); print(\"shm=0\")'",
	       NULL);
	cr_expect(dsh_out_is(r.out, "pty", "0"), "the pty's mode could not be set: %s%s", r.out, r.err);
	cr_expect(dsh_out_is(r.out, "shm", "0"), "the shm object's mode could not be set: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

/* An O_PATH descriptor, which fchmod and futimens refuse, reaches its inode through
   /proc/self/fd/N (glibc spells fchmodat(AT_SYMLINK_NOFOLLOW) so): the broker serves that route
   as the caller meant it in the workspace, and refuses it on a file outside the writable roots. */
static char *o_path_attempts(const char *path)
{
	return python_tries("g = os.open(sys.argv[1], os.O_PATH)\nlink = \"/proc/self/fd/%d\" % g",
			    "(\"pchmod\", lambda: os.chmod(link, 0o600)), (\"putime\", lambda: os.utime(link, (7, 7)))",
			    path);
}

Test(host_metadata, an_o_path_descriptor_reaches_its_inode_only_where_it_may_be_written, .timeout = 60)
{
	struct scene sc;
	scene_make(&sc);
	_cleanup_free_ char *script = o_path_attempts(sc.victim);
	struct dsh_proc r;
	scene_run(&sc, script, &r);
	expect_kept(&sc, r.out);
	cr_expect(!dsh_out_is(r.out, "pchmod", "0") && !dsh_out_is(r.out, "putime", "0"), "went through: %s", r.out);
	dsh_proc_clear(&r);

	_cleanup_free_ char *control = o_path_attempts(sc.mine);
	scene_run(&sc, control, &r);
	expect_landed(sc.mine, 7, &r);
	dsh_proc_clear(&r);
	scene_clear(&sc);
}
