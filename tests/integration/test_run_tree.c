/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mount tree from outside and inside (SPEC 3.3-3.6, 3.10, 3.11): masked names stay listable,
 * 50 runs leave the host as it was, the network is loopback only when off, daemon sockets are
 * masked, /tmp is private, glob expansion is bounded, and a path swapped between planning and
 * applying aborts the run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libmount.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "ns/mount.h"
#include "ns/plan.h"
#include "ns/userns.h"
#include "policy/policy.h"
#include "tests/lib/harness.h"

static char *base_env[] = { "PATH=/usr/bin:/bin", NULL };

/* dshbox run ARGS... (NULL-terminated), in env. */
static void dshbox(struct dsh_proc *r, char **env, ...)
{
	char *argv[64];
	int n = 0;
	argv[n++] = (char *)dsh_test_dshbox();
	argv[n++] = "run";
	va_list ap;
	va_start(ap, env);
	for (char *a; (a = va_arg(ap, char *)) && n < 63;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run(argv, env ? env : base_env, NULL, r), 0);
}

static char *path_in(const char *dir, const char *name)
{
	char *p = NULL;
	cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

Test(run_tree, masked_names_stay_listable)
{
	char *root = dsh_test_mkdtemp();
	_cleanup_free_ char *ws = path_in(root, "ws");
	_cleanup_free_ char *key = path_in(ws, "id.pem");
	_cleanup_free_ char *secret = path_in(ws, "secret/token");
	_cleanup_free_ char *secret_dir = path_in(ws, "secret");
	dsh_test_write_file(key, "KEY\n");
	dsh_test_write_file(secret, "TOKEN\n");
	_cleanup_free_ char *probe = dsh_test_helper("probe_access");
	struct dsh_proc r;
	const char *cases[][4] = {
		{ "list", ws, "id.pem", "ok\n" },
		{ "list", ws, "secret", "ok\n" },
		{ "read", key, NULL, "EACCES\n" },
		{ "read", secret, NULL, "EACCES\n" },
		{ "list", secret_dir, "token", "EACCES\n" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		dshbox(&r, NULL, "--workspace", ws, "--access", "-- *.pem", "--access", "-- secret", "--", probe,
		       cases[i][0], cases[i][1], cases[i][2], NULL);
		cr_expect_str_eq(r.out, cases[i][3], "%s %s %s: %s%s", cases[i][0], cases[i][1],
				 cases[i][2] ? cases[i][2] : "", r.out, r.err);
		dsh_proc_clear(&r);
	}
	dsh_test_rmtree(root);
	free(root);
}

/* A listing of the tree with every attribute a stray write or mount would change. */
static struct dsh_buf snap;
static const char *snap_skip;
static int snap_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)flag;
	(void)f;
	if (snap_skip && dsh_path_is_beneath(p, snap_skip))
		return 0;
	dsh_buf_addf(&snap, "%s %o %lld %ld.%09ld %lu %lu\n", p, st->st_mode, (long long)st->st_size,
		     (long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, (unsigned long)st->st_ino, (unsigned long)st->st_dev);
	return 0;
}

static char *snapshot(const char *root, const char *skip)
{
	snap_skip = skip;
	memset(&snap, 0, sizeof(snap));
	cr_assert_eq(nftw(root, snap_one, 32, FTW_PHYS), 0);
	return dsh_buf_steal(&snap);
}

Test(run_tree, fifty_runs_leave_the_host_unchanged, .timeout = 120)
{
	char *root = dsh_test_mkdtemp();
	_cleanup_free_ char *ws = path_in(root, "ws");
	_cleanup_free_ char *out = path_in(root, "outside");
	const char *files[] = { "ws/a.pem", "ws/src/main.c", "ws/.git/hooks/pre-commit", "ws/node_modules/p/x.js",
				"outside/notes.txt", "outside/secret/k", "outside/b.pem" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *f = path_in(root, files[i]);
		dsh_test_write_file(f, "orig\n");
	}
	_cleanup_free_ char *deny_out = NULL, *pem_out = NULL;
	cr_assert(asprintf(&deny_out, "-- %s/secret", out) > 0);
	cr_assert(asprintf(&pem_out, "-- %s/*.pem", out) > 0);
	/* tmp: private, so that the command's writes to /tmp must not reach the host's (SPEC 3.6). */
	_cleanup_free_ char *cfg = path_in(root, "private-tmp.yml");
	dsh_test_write_file(cfg, "tmp: private\n");
	_cleanup_free_ char *mounts_before = dsh_test_read_file("/proc/self/mountinfo");
	_cleanup_free_ char *before = snapshot(root, ws);
	char leak[64];
	snprintf(leak, sizeof(leak), "/tmp/dshbox-leak-%d", (int)getpid());
	_cleanup_free_ char *cmd = NULL;
	cr_assert(asprintf(&cmd,
			   "echo w >> %s/out.log; echo x > %s/notes.txt; echo x > %s/new; echo x > %s/secret/k;"
			   " echo x > .git/hooks/pre-commit; rm -f a.pem; echo x > %s; ls -R %s node_modules > /dev/null;"
			   " mkdir -p /tmp/a/b; true",
			   ws, out, out, out, leak, root) > 0);
	for (int i = 0; i < 50; i++) {
		struct dsh_proc r;
		dshbox(&r, NULL, "--config", cfg, "--workspace", ws, "--cwd", ws, "--access", "r- .git/hooks", "--access",
		       "-- **/*.pem", "--access", "-- **/node_modules", "--access", deny_out, "--access", pem_out,
		       "--", "/bin/sh", "-c", cmd, NULL);
		cr_assert_eq(r.exit_code, 0, "run %d: exit %d: %s", i, r.exit_code, r.err);
		dsh_proc_clear(&r);
	}
	_cleanup_free_ char *after = snapshot(root, ws);
	cr_expect_str_eq(after, before, "the host changed outside the writable roots");
	_cleanup_free_ char *mounts_after = dsh_test_read_file("/proc/self/mountinfo");
	cr_expect_str_eq(mounts_after, mounts_before, "a mount was left behind on the host");
	cr_expect_neq(access(leak, F_OK), 0, "a write to the sandbox's /tmp reached the host's /tmp");
	/* Inside the workspace: exactly the writes that were allowed, nothing masked got replaced. */
	_cleanup_free_ char *log = path_in(ws, "out.log");
	_cleanup_free_ char *logc = dsh_test_read_file(log);
	size_t lines = 0;
	for (const char *s = logc; s && *s; s++)
		lines += *s == '\n';
	cr_expect_eq(lines, 50);
	_cleanup_free_ char *hook = path_in(ws, ".git/hooks/pre-commit");
	_cleanup_free_ char *hookc = dsh_test_read_file(hook);
	cr_expect_str_eq(hookc, "orig\n");
	_cleanup_free_ char *pem = path_in(ws, "a.pem");
	cr_expect_eq(access(pem, F_OK), 0, "a masked file was removed through the sandbox");
	dsh_test_rmtree(root);
	free(root);
}

static int tcp_listener(int *ret_port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	cr_assert(s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(s, 8) == 0 &&
		  getsockname(s, (struct sockaddr *)&a, &len) == 0);
	*ret_port = ntohs(a.sin_port);
	return s;
}

Test(run_tree, network_off_is_loopback_only)
{
	_cleanup_free_ char *probe = dsh_test_helper("probe_access");
	int port;
	int l = tcp_listener(&port);
	char ports[16];
	snprintf(ports, sizeof(ports), "%d", port);
	struct dsh_proc r;
	dshbox(&r, NULL, "--network", "off", "--", probe, "listen-connect", NULL);
	cr_expect_str_eq(r.out, "ok\n", "a server on 127.0.0.1 inside is unreachable from inside: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	dshbox(&r, NULL, "--network", "off", "--", probe, "connect", "127.0.0.1", ports, NULL);
	cr_expect_neq(strcmp(r.out, "ok\n"), 0, "the host's 127.0.0.1:%d was reachable with network off", port);
	dsh_proc_clear(&r);
	dshbox(&r, NULL, "--network", "off", "--", probe, "connect", "192.0.2.1", "80", NULL);
	cr_expect_str_eq(r.out, "ENETUNREACH\n", "an outside address with network off: %s", r.out);
	dsh_proc_clear(&r);
	/* The same probe with the network on does reach the host: the test can tell the difference. */
	dshbox(&r, NULL, "--network", "on", "--", probe, "connect", "127.0.0.1", ports, NULL);
	cr_expect_str_eq(r.out, "ok\n", "network on: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	close(l);
}

Test(run_tree, daemon_sockets_masked)
{
	char *root = dsh_test_mkdtemp();
	_cleanup_free_ char *sock = path_in(root, "agent.sock");
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	cr_assert(s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(s, 8) == 0);
	chmod(sock, 0777);
	_cleanup_free_ char *envsock = NULL;
	cr_assert(asprintf(&envsock, "SSH_AUTH_SOCK=%s", sock) > 0);
	char *env[] = { "PATH=/usr/bin:/bin", envsock, NULL };
	_cleanup_free_ char *probe = dsh_test_helper("probe_access");
	struct dsh_proc r;
	dshbox(&r, env, "--", probe, "unix", sock, NULL);
	cr_expect_str_eq(r.out, "EACCES\n", "$SSH_AUTH_SOCK reachable inside: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	_cleanup_free_ char *cfg = path_in(root, "cfg.yml");
	dsh_test_write_file(cfg, "protectSockets: false\n");
	dshbox(&r, env, "--config", cfg, "--", probe, "unix", sock, NULL);
	cr_expect_str_eq(r.out, "ok\n", "protectSockets: false still masks: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	close(s);
	dsh_test_rmtree(root);
	free(root);
}

Test(run_tree, glob_matches_bounded_by_max_masks)
{
	char *root = dsh_test_mkdtemp();
	for (int i = 0; i < 5; i++) {
		char name[32];
		snprintf(name, sizeof(name), "ws/d%d/k.pem", i);
		_cleanup_free_ char *f = path_in(root, name);
		dsh_test_write_file(f, "k\n");
	}
	_cleanup_free_ char *ws = path_in(root, "ws");
	_cleanup_free_ char *cfg = path_in(root, "cfg.yml");
	dsh_test_write_file(cfg, "maxMasks: 3\n");
	struct dsh_proc r;
	dshbox(&r, NULL, "--config", cfg, "--workspace", ws, "--access", "-- **/*.pem", "--", "/bin/echo", "ran", NULL);
	cr_expect_eq(r.exit_code, 125, "exit %d: %s", r.exit_code, r.err);
	cr_expect_str_eq(r.out, "", "the command ran with a partial mask set");
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "maxMasks"), "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_write_file(cfg, "maxMasks: 5\n");
	dshbox(&r, NULL, "--config", cfg, "--workspace", ws, "--access", "-- **/*.pem", "--", "/bin/echo", "ran", NULL);
	cr_expect_eq(r.exit_code, 0, "exactly maxMasks matches must run: %s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(root);
	free(root);
}

Test(run_tree, tmp_is_private_and_workspace_under_tmp_is_bound)
{
	char dir[] = "/tmp/dshbox-ws.XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	/* tmp: private (the default, tmp: host, is tests/integration/test_run_tmp.c's). */
	char *cfgdir = dsh_test_mkdtemp();
	_cleanup_free_ char *cfg = path_in(cfgdir, "private-tmp.yml");
	dsh_test_write_file(cfg, "tmp: private\n");
	_cleanup_free_ char *cmd = NULL;
	char other[64];
	snprintf(other, sizeof(other), "/tmp/dshbox-other-%d", (int)getpid());
	cr_assert(asprintf(&cmd, "echo in > %s/landed && echo x > %s && ls /tmp", dir, other) > 0);
	struct dsh_proc r;
	dshbox(&r, NULL, "--config", cfg, "--workspace", dir, "--cwd", dir, "--", "/bin/sh", "-c", cmd, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	dsh_test_rmtree(cfgdir);
	free(cfgdir);
	_cleanup_free_ char *landed = path_in(dir, "landed");
	_cleanup_free_ char *c = dsh_test_read_file(landed);
	cr_expect_str_eq(c ? c : "", "in\n", "a write in a workspace under /tmp did not land on the host");
	cr_expect_neq(access(other, F_OK), 0, "a write to the private /tmp reached the host");
	/* Inside, /tmp holds only the workspace's parents and what the command made. */
	cr_expect(strstr(r.out, dir + 5) != NULL, "%s", r.out);
	dsh_proc_clear(&r);
	unlink(landed);
	rmdir(dir);
}

/* Planning, then a symlink swapped in before applying: the run must abort, not mount elsewhere. */
Test(run_tree, path_swapped_after_planning_aborts)
{
	dsh_test_require_backend();
	char *root = dsh_test_mkdtemp();
	_cleanup_free_ char *ws = path_in(root, "ws");
	_cleanup_free_ char *secret = path_in(ws, "secret");
	_cleanup_free_ char *f = path_in(secret, "k");
	dsh_test_write_file(f, "k\n");
	_cleanup_free_ char *rule = NULL;
	cr_assert(asprintf(&rule, "-- %s", secret) > 0);
	struct dsh_config cfg;
	dsh_config_init(&cfg);
	cfg.workspace = strdup(ws);
	dsh_strv_push(&cfg.access, rule);
	cfg.protect_sockets = false;
	struct dsh_policy *p = NULL;
	struct dsh_error *err = NULL;
	cr_assert_eq(dsh_policy_new(&cfg, base_env, ws, &p, &err), 0);
	struct dsh_run_options ro;
	cr_assert_eq(dsh_run_options_init(&ro, &cfg, base_env, &err), 0);
	struct dsh_mount_plan *plan = NULL;
	cr_assert_eq(dsh_mount_plan_build(p, &ro, &plan, &err), 0);
	/* No pid namespace of its own here, so no fresh procfs: the host's /proc stands in (the
	   swapped path is what is tested). */
	plan->proc_fallback = true;
	dsh_run_options_clear(&ro);
	/* The masked directory is replaced by a symlink to a directory elsewhere. */
	_cleanup_free_ char *moved = path_in(root, "moved");
	cr_assert_eq(rename(secret, moved), 0);
	cr_assert_eq(symlink(moved, secret), 0);
	uid_t uid = getuid();
	gid_t gid = getgid();
	pid_t pid = fork();
	if (pid == 0) {
		struct dsh_error *e = NULL;
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 || dsh_userns_map_self(uid, gid, &e) < 0 ||
		    dsh_mount_make_private(&e) < 0)
			_exit(3);
		int r = dsh_mount_plan_apply(plan, NULL, &e);
		if (r == 0)
			_exit(0);
		fprintf(stderr, "%s\n", e->msg);
		_exit(strstr(e->msg, "changed since planning") && strstr(e->msg, secret) ? 1 : 2);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "a swapped path did not abort the run with a named error (%#x)", st);
	dsh_mount_plan_free(plan);
	dsh_policy_free(p);
	dsh_config_clear(&cfg);
	dsh_test_rmtree(root);
	free(root);
}

static void mnt_unref_tablep(struct libmnt_table **tb)
{
	mnt_unref_table(*tb); /* accepts NULL */
}

/*
 * A mountinfo text (the sandbox's /proc/self/mountinfo, printed by cat inside) as a libmount table:
 * libmount knows the format's escapes and optional fields, so a mount point with a space or a
 * tagged propagation field reads as the kernel wrote it.
 */
static struct libmnt_table *parse_mountinfo(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	cr_assert_not_null(f, "fmemopen: %s", strerror(errno));
	struct libmnt_table *tb = mnt_new_table();
	cr_assert_not_null(tb);
	int r = mnt_table_parse_stream(tb, f, "sandbox mountinfo");
	fclose(f);
	cr_assert_eq(r, 0, "libmount cannot parse the sandbox's mountinfo (%d):\n%s", r, text);
	return tb;
}

/* The mount that shows at path: the last one mounted there (searching backward), or NULL. */
static struct libmnt_fs *mount_at(struct libmnt_table *tb, const char *path)
{
	/* No path cache on tb: targets compare as the kernel printed them, never canonicalized on this
	   host (the sandbox's tree is not the test's). */
	return mnt_table_find_target(tb, path, MNT_ITER_BACKWARD);
}

static bool has_opt(const char *opts, const char *o)
{
	return opts && mnt_optstr_get_option(opts, o, NULL, NULL) == 0;
}

/* The mount tree inside is the plan: each entry is a mount with the flags its action promises. */
Test(run_tree, mount_tree_is_the_plan)
{
	char *root = dsh_test_mkdtemp();
	_cleanup_free_ char *ws = path_in(root, "ws");
	const char *files[] = { "ws/k.pem", "ws/secret/t", "ws/.git/hooks/h", "ws/src/a.c" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *f = path_in(root, files[i]);
		dsh_test_write_file(f, "x\n");
	}
	struct dsh_proc r;
	dshbox(&r, NULL, "--workspace", ws, "--cwd", ws, "--access", "-- *.pem", "--access", "-- secret", "--access",
	       "r- .git/hooks", "--", "/bin/cat", "/proc/self/mountinfo", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	_cleanup_free_ char *pem = path_in(ws, "k.pem");
	_cleanup_free_ char *secret = path_in(ws, "secret");
	_cleanup_free_ char *hooks = path_in(ws, ".git/hooks");
	struct {
		const char *path, *fstype;
		const char *want[5], *not[2];
	} cases[] = {
		{ "/", NULL, { "ro" }, { NULL } },
		{ ws, NULL, { "rw" }, { NULL } },
		{ pem, "tmpfs", { "ro", "nosuid", "nodev", "noexec" }, { NULL } },
		{ secret, "tmpfs", { "ro", "nosuid", "nodev", "noexec" }, { NULL } },
		{ hooks, NULL, { "ro" }, { NULL } },
		{ "/tmp", NULL, { "rw" }, { NULL } }, /* the host's (tmp: host, SPEC 3.6) */
		{ "/proc", "proc", { "nosuid", "nodev", "noexec" }, { NULL } },
		{ "/proc/sys", "proc", { "ro" }, { NULL } },
		{ "/dev", "tmpfs", { "ro", "nosuid", "noexec" }, { NULL } },
		{ "/dev/pts", "devpts", { "nosuid", "noexec" }, { NULL } },
		{ "/dev/shm", "tmpfs", { "rw", "nosuid", "nodev" }, { NULL } },
		{ "/dev/null", NULL, { NULL }, { NULL } },
	};
	_cleanup_(mnt_unref_tablep) struct libmnt_table *tb = parse_mountinfo(r.out);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct libmnt_fs *fs = mount_at(tb, cases[i].path);
		cr_expect_not_null(fs, "no mount at %s inside the sandbox", cases[i].path);
		if (!fs)
			continue;
		/* The per-mount flags (ro, nosuid, nodev, noexec), not the superblock's. */
		const char *opts = mnt_fs_get_vfs_options(fs);
		if (cases[i].fstype)
			cr_expect_str_eq(mnt_fs_get_fstype(fs), cases[i].fstype, "%s: filesystem", cases[i].path);
		for (size_t k = 0; k < 5 && cases[i].want[k]; k++)
			cr_expect(has_opt(opts, cases[i].want[k]), "%s: '%s' not in %s", cases[i].path, cases[i].want[k], opts);
	}
	dsh_proc_clear(&r);
	dsh_test_rmtree(root);
	free(root);
}

/* After the lock, a mask cannot be taken off: not by umount, not from a further user namespace. */
Test(run_tree, masks_are_locked)
{
	char *root = dsh_test_mkdtemp();
	_cleanup_free_ char *ws = path_in(root, "ws");
	_cleanup_free_ char *key = path_in(ws, "id.pem");
	_cleanup_free_ char *dir = path_in(ws, "secret");
	_cleanup_free_ char *tok = path_in(dir, "token");
	dsh_test_write_file(key, "SECRET-KEY\n");
	dsh_test_write_file(tok, "SECRET-TOKEN\n");
	_cleanup_free_ char *cmd = NULL;
	cr_assert(asprintf(&cmd,
			   "umount %s; umount -l %s; mount -o remount,rw /; "
			   "unshare -Urm sh -c 'umount %s; umount -l %s; cat %s %s'; cat %s %s; true",
			   key, dir, key, dir, key, tok, key, tok) > 0);
	struct dsh_proc r;
	dshbox(&r, NULL, "--workspace", ws, "--cwd", ws, "--access", "-- *.pem", "--access", "-- secret", "--", "/bin/sh",
	       "-c", cmd, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_null(strstr(r.out, "SECRET"), "a mask was taken off inside the sandbox: %s", r.out);
	dsh_proc_clear(&r);
	dsh_test_rmtree(root);
	free(root);
}

/*
 * Forced fallback (STYLE 15): in a mount namespace where a file of /proc is covered, the kernel
 * refuses a fresh procfs in any new user namespace, as in a container with a masked /proc.  The
 * host's /proc would show the processes outside: the run refuses (125) naming /proc and the fix;
 * with --allow-degraded it binds the host's /proc and says so in one default-on warning.
 */
static int run_with_covered_proc(const char *dir, bool degraded, int *ret_status)
{
	_cleanup_free_ char *out = path_in(dir, "out"), *errf = path_in(dir, "err");
	uid_t uid = getuid();
	gid_t gid = getgid();
	pid_t pid = fork();
	if (pid == 0) {
		struct dsh_error *e = NULL;
		/* Root without CAP_SYS_ADMIN (a container's) makes its mount namespace as a user would. */
		bool own_ns = uid == 0 && unshare(CLONE_NEWNS) == 0;
		if (!own_ns && uid == 0 && errno != EPERM)
			_exit(90);
		if (!own_ns && (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 || dsh_userns_map_self(uid, gid, &e) < 0))
			_exit(91);
		if (dsh_mount_make_private(&e) < 0 || mount("/dev/null", "/proc/version", NULL, MS_BIND, NULL) < 0)
			_exit(92);
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), er = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(o, 1);
		dup2(er, 2);
		char *argv[] = { (char *)dsh_test_dshbox(), "run", "--backend", "linux-ns",
				 degraded ? "--allow-degraded" : "--network=on", "--", "/bin/cat", "/proc/1/comm", NULL };
		execve(argv[0], argv, base_env);
		_exit(93);
	}
	waitpid(pid, ret_status, 0);
	return 0;
}

Test(run_tree, proc_fallback_refuses_unless_allowed_and_is_said)
{
	dsh_test_require_backend();
	char *root = dsh_test_mkdtemp();
	int st;
	_cleanup_free_ char *errf = path_in(root, "err"), *outf = path_in(root, "out");
	run_with_covered_proc(root, false, &st);
	cr_assert(WIFEXITED(st) && (WEXITSTATUS(st) < 90 || WEXITSTATUS(st) > 93),
		  "could not set up the covered /proc (%#x)", st);
	_cleanup_free_ char *err0 = dsh_test_read_file(errf), *out0 = dsh_test_read_file(outf);
	cr_expect_eq(WEXITSTATUS(st), 125, "the run did not refuse: %s", err0);
	cr_expect_str_eq(out0 ? out0 : "", "", "the command ran");
	cr_expect(err0 && strstr(err0, "dshbox: error: ") && strstr(err0, "/proc"), "/proc not named: %s", err0);
	cr_expect(err0 && strstr(err0, "dshbox: hint: ") && strstr(err0, "procMount: Unmasked") &&
		  strstr(err0, "systempaths=unconfined") && strstr(err0, "--allow-degraded"), "no hint: %s", err0);
	run_with_covered_proc(root, true, &st);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	_cleanup_free_ char *err1 = dsh_test_read_file(errf), *out1 = dsh_test_read_file(outf);
	cr_expect_eq(dsh_count_lines_with_prefix(err1 ? err1 : "", "dshbox: warning: "), 1, "%s", err1);
	cr_expect(err1 && strstr(err1, "procfs") && strstr(err1, "host processes are visible"), "no warning: %s", err1);
	cr_expect(out1 && strcmp(out1, "dshbox\n") != 0, "/proc/1 is the sandbox's init: no fallback happened? %s", out1);
	dsh_test_rmtree(root);
	free(root);
}

/* A glob reads only the directories its structure needs (SPEC 3.5). */
Test(run_tree, glob_walk_reads_only_what_the_pattern_needs)
{
	char *root = dsh_test_mkdtemp();
	const char *files[] = { "ws/mise.local.toml", "ws/sub/mise.other.toml", "ws/a/b/c/d.txt", "ws/m/key.pem",
				"ws/m/deep/x.pem", "ws/m/deep/y.txt" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *f = path_in(root, files[i]);
		dsh_test_write_file(f, "x\n");
	}
	_cleanup_free_ char *ws = path_in(root, "ws");
	struct {
		const char *rule;
		size_t dirs_read, matches;
	} cases[] = {
		{ "-- mise.*.toml", 1, 1 },   /* one directory */
		{ "-- m/*.pem", 1, 1 },       /* "m" is looked up, not listed */
		{ "-- **/*.pem", 7, 2 },      /* every directory once: ws, sub, a, a/b, a/b/c, m, m/deep */
		{ "-- m/**/*.pem", 2, 2 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dsh_config cfg;
		dsh_config_init(&cfg);
		cfg.workspace = strdup(ws);
		dsh_strv_push(&cfg.access, cases[i].rule);
		cfg.protect_sockets = false;
		struct dsh_policy *p = NULL;
		struct dsh_error *err = NULL;
		cr_assert_eq(dsh_policy_new(&cfg, base_env, ws, &p, &err), 0);
		struct dsh_run_options ro;
		cr_assert_eq(dsh_run_options_init(&ro, &cfg, base_env, &err), 0);
		struct dsh_mount_plan *plan = NULL;
		cr_assert_eq(dsh_mount_plan_build(p, &ro, &plan, &err), 0);
		dsh_run_options_clear(&ro);
		cr_expect_eq(plan->dirs_read, cases[i].dirs_read, "%s read %zu directories", cases[i].rule, plan->dirs_read);
		cr_expect_eq(plan->glob_matches, cases[i].matches, "%s matched %zu", cases[i].rule, plan->glob_matches);
		dsh_mount_plan_free(plan);
		dsh_policy_free(p);
		dsh_config_clear(&cfg);
	}
	dsh_test_rmtree(root);
	free(root);
}
