/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Landlock module: masks per ABI (pure), and real rulesets applied in a forked child. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "landlock/landlock.h"
#include "policy/policy.h"
#include "tests/lib/harness.h"
#include "tests/unit/child_check.h"

/* ---- pure ---- */

Test(landlock_masks, grow_with_the_abi)
{
	cr_assert_eq(dsh_landlock_fs_handled(0), 0);
	cr_assert_eq(dsh_landlock_fs_handled(1), (1ULL << 13) - 1);
	cr_assert_eq(dsh_landlock_fs_handled(2), (1ULL << 14) - 1);
	cr_assert_eq(dsh_landlock_fs_handled(3), (1ULL << 15) - 1);
	cr_assert_eq(dsh_landlock_fs_handled(4), (1ULL << 15) - 1);
	cr_assert_eq(dsh_landlock_fs_handled(5), (1ULL << 16) - 1);
	cr_assert_eq(dsh_landlock_fs_handled(7), (1ULL << 16) - 1);
	cr_assert_eq(dsh_landlock_net_handled(3), 0);
	cr_assert_eq(dsh_landlock_net_handled(4), 3);
	cr_assert_eq(dsh_landlock_scopes(5), 0);
	cr_assert_eq(dsh_landlock_scopes(6), 3);
	cr_assert_eq(dsh_landlock_fs_read(7) & dsh_landlock_fs_write(7), 0);
	cr_assert_eq(dsh_landlock_fs_read(7) | dsh_landlock_fs_write(7), dsh_landlock_fs_rw(7));
	cr_assert_eq(dsh_landlock_fs_file_only(2) & LANDLOCK_ACCESS_FS_TRUNCATE, 0);
	cr_assert_eq(dsh_landlock_fs_file_only(1) & LANDLOCK_ACCESS_FS_READ_DIR, 0);
}

Test(landlock_masks, names)
{
	_cleanup_free_ char *s = dsh_landlock_fs_access_to_string(dsh_landlock_fs_read(1));
	cr_assert_str_eq(s, "execute|read_file|read_dir");
	_cleanup_free_ char *e = dsh_landlock_fs_access_to_string(0);
	cr_assert_str_eq(e, "");
}

Test(landlock_spec, sandbox_grants_skip_dead_and_readonly_roots)
{
	struct dsh_rule rules[2] = { { .kind = DSH_RULE_RW, .index = 0 }, { .kind = DSH_RULE_DENY, .index = 1 } };
	struct dsh_root roots[3] = {
		{ .path = (char *)"/ws", .origin = DSH_ROOT_WORKSPACE },
		{ .path = (char *)"/opt/cache", .origin = DSH_ROOT_RULE, .rule = &rules[0] },
		{ .path = (char *)"/opt/dead", .origin = DSH_ROOT_RULE, .dead_by = &rules[1] },
	};
	struct dsh_policy p = { .mode = DSH_MODE_WORKSPACE_WRITE, .roots = roots, .n_roots = 3 };
	struct dsh_landlock_spec s;
	struct dsh_error *err = NULL;
	cr_assert_eq(dsh_landlock_spec_for_sandbox(&p, 7, 0, &s, &err), 0);
	cr_assert_str_eq(s.grants[0].path, "/");
	cr_assert_eq(s.grants[0].access, dsh_landlock_fs_read(7));
	cr_assert_str_eq(s.grants[1].path, "/ws");
	cr_assert_eq(s.grants[1].access, dsh_landlock_fs_rw(7));
	cr_assert_str_eq(s.grants[2].path, "/opt/cache");
	cr_assert_eq(s.grants[2].rule, 0);
	bool shm = false, dead = false, all_dev = false;
	for (size_t i = 0; i < s.n_grants; i++) {
		shm |= strcmp(s.grants[i].path, "/dev/shm") == 0;
		dead |= strcmp(s.grants[i].path, "/opt/dead") == 0;
		all_dev |= strcmp(s.grants[i].path, "/dev") == 0;
	}
	cr_assert(!shm && !dead && !all_dev);
	cr_assert_eq(s.scoped, dsh_landlock_scopes(7));
	dsh_landlock_spec_clear(&s);
	cr_assert_eq(dsh_landlock_spec_for_sandbox(&p, 7, DSH_LANDLOCK_PRIVATE_DEV_SHM, &s, &err), 0);
	cr_assert_str_eq(s.grants[s.n_grants - 1].path, "/dev/shm");
	dsh_landlock_spec_clear(&s);
}

/* ---- effectful: every restriction happens in a forked child, the verdicts come back on a pipe ---- */

static int need_abi(int min)
{
	int abi = dsh_landlock_abi();
	if (abi < min) {
		cr_log_info("Landlock ABI %d needed, kernel answers %d", min, abi);
		DSH_SKIP("the kernel's Landlock ABI is too old for this test");
	}
	return abi;
}

static void restrict_or_fail(struct dsh_landlock_spec *s)
{
	struct dsh_error *err = NULL;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail("no_new_privs: %s", strerror(errno));
	if (dsh_landlock_apply(s, &err) < 0)
		fail("apply: %s", err->msg);
}

/*
 * Inside `dshbox run` (an agent running this suite), the runtime broker makes names and connects
 * for this process with the sandbox's rights, outside any Landlock domain the process adds itself
 * (docs/security.md): Landlock's own answer to those calls cannot be seen.  Probed, not guessed: a
 * child that may create nothing anywhere tries to create a file.
 */
static void create_probe(void *arg)
{
	struct dsh_landlock_spec s;
	dsh_landlock_spec_init(&s, dsh_landlock_abi());
	restrict_or_fail(&s);
	int fd = open((const char *)arg, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		fail("created");
}

static void skip_if_calls_are_brokered(void)
{
	_cleanup_free_ char *dir = dsh_test_mkdtemp();
	char *probe = NULL;
	cr_assert(asprintf(&probe, "%s/probe", dir) > 0);
	char msg[513] = "";
	(void)in_child_status(create_probe, probe, msg);
	bool brokered = access(probe, F_OK) == 0;
	free(probe);
	dsh_test_rmtree(dir);
	if (brokered)
		DSH_SKIP("a supervisor makes names and connects for this process outside its Landlock domain "
			 "(dshbox's runtime broker: this suite runs inside dshbox run), so Landlock's own answer "
			 "to those calls cannot be seen here");
}

struct tree {
	char *top, *rw, *ro, *ro_file;
};

static void tree_make(struct tree *t)
{
	t->top = dsh_test_mkdtemp();
	cr_assert(asprintf(&t->rw, "%s/rw", t->top) > 0);
	cr_assert(asprintf(&t->ro, "%s/ro", t->top) > 0);
	cr_assert(asprintf(&t->ro_file, "%s/ro/file", t->top) > 0);
	cr_assert_eq(mkdir(t->rw, 0755), 0);
	dsh_test_write_file(t->ro_file, "original\n");
}

static void tree_free(struct tree *t)
{
	dsh_test_rmtree(t->top);
	free(t->top), free(t->rw), free(t->ro), free(t->ro_file);
}

static char *join(const char *a, const char *b)
{
	char *s = NULL;
	if (asprintf(&s, "%s/%s", a, b) < 0)
		fail("oom");
	return s;
}

static void fs_child(void *arg)
{
	struct tree *t = arg;
	int abi = dsh_landlock_abi();
	struct dsh_landlock_spec s;
	dsh_landlock_spec_init(&s, abi);
	struct dsh_error *err = NULL;
	if (dsh_landlock_spec_add(&s, "/", -1, dsh_landlock_fs_read(abi), &err) < 0)
		fail("add");
	/* the writable directory by descriptor, to cover both kinds of grant */
	int rwfd = open(t->rw, O_PATH | O_CLOEXEC | O_DIRECTORY);
	if (rwfd < 0 || dsh_landlock_spec_add(&s, NULL, rwfd, dsh_landlock_fs_rw(abi), &err) < 0)
		fail("add rw");
	/* a device file with directory rights in its mask: they must be dropped, not EINVAL */
	if (dsh_landlock_spec_add(&s, "/dev/null", -1, dsh_landlock_fs_rw(abi), &err) < 0)
		fail("add null");
	if (dsh_landlock_spec_add(&s, "/nonexistent/dshbox", -1, dsh_landlock_fs_rw(abi), &err) < 0)
		fail("add missing");
	restrict_or_fail(&s);

	char buf[64];
	int fd;
	EXPECT_OK(fd = open(t->ro_file, O_RDONLY | O_CLOEXEC));
	EXPECT_OK(read(fd, buf, sizeof(buf)));
	close(fd);
	EXPECT_ERRNO(open(t->ro_file, O_WRONLY | O_CLOEXEC), EACCES);
	EXPECT_ERRNO(open(t->ro_file, O_RDONLY | O_TRUNC | O_CLOEXEC), EACCES);
	_cleanup_free_ char *ro_new = join(t->ro, "new");
	EXPECT_ERRNO(open(ro_new, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), EACCES);
	EXPECT_ERRNO(unlink(t->ro_file), EACCES);
	EXPECT_ERRNO(mkdir(ro_new, 0755), EACCES);
	EXPECT_ERRNO(symlink("/etc/passwd", ro_new), EACCES);
	_cleanup_free_ char *rw_new = join(t->rw, "new");
	EXPECT_OK(fd = open(rw_new, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	EXPECT_OK(write(fd, "x", 1));
	close(fd);
	/* moving a file out of the writable tree into a read-only one */
	EXPECT_ERRNO(rename(rw_new, ro_new), EACCES);
	EXPECT_OK(fd = open("/dev/null", O_WRONLY | O_CLOEXEC));
	close(fd);
	EXPECT_ERRNO(open("/dev/zero", O_WRONLY | O_CLOEXEC), EACCES);
	_cleanup_free_ char *top_new = join(t->top, "new");
	EXPECT_ERRNO(open(top_new, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), EACCES);
}

Test(landlock_apply, read_beneath_root_write_only_where_granted)
{
	need_abi(1);
	skip_if_calls_are_brokered();
	struct tree t;
	tree_make(&t);
	in_child(fs_child, &t);
	/* host-side oracle: the read-only file is intact, nothing appeared outside the grant */
	_cleanup_free_ char *c = dsh_test_read_file(t.ro_file);
	cr_assert_str_eq(c, "original\n");
	_cleanup_free_ char *ro_new = join(t.ro, "new");
	_cleanup_free_ char *rw_new = join(t.rw, "new");
	cr_assert_neq(access(ro_new, F_OK), 0);
	cr_assert_eq(access(rw_new, F_OK), 0);
	tree_free(&t);
}

static void scope_child(void *arg)
{
	const char *abstract_name = arg;
	int abi = dsh_landlock_abi();
	struct dsh_landlock_spec s;
	dsh_landlock_spec_init(&s, abi);
	struct dsh_error *err = NULL;
	if (dsh_landlock_spec_add(&s, "/", -1, dsh_landlock_fs_rw(abi), &err) < 0)
		fail("add");
	/* Before: the parent (outside the domain to be) is reachable. */
	EXPECT_OK(kill(getppid(), 0));
	restrict_or_fail(&s);
	EXPECT_ERRNO(kill(getppid(), 0), EPERM);
	EXPECT_OK(kill(getpid(), 0));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(abstract_name);
	memcpy(sa.sun_path + 1, abstract_name, n);
	EXPECT_ERRNO(connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)),
		     EPERM);
}

Test(landlock_apply, scopes_signals_and_abstract_sockets)
{
	need_abi(6);
	skip_if_calls_are_brokered();
	char name[64];
	snprintf(name, sizeof(name), "dshbox-test-%d", getpid());
	int srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path + 1, name, strlen(name));
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	cr_assert_eq(bind(srv, (struct sockaddr *)&sa, len), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(srv, 1), 0);
	in_child(scope_child, name);
	close(srv);
}

static void net_child(void *arg)
{
	int port = *(int *)arg;
	int abi = dsh_landlock_abi();
	struct dsh_landlock_spec s;
	dsh_landlock_spec_init(&s, abi);
	s.handled_net = dsh_landlock_net_handled(abi);
	struct dsh_error *err = NULL;
	if (dsh_landlock_spec_add(&s, "/", -1, dsh_landlock_fs_rw(abi), &err) < 0)
		fail("add");
	restrict_or_fail(&s);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	EXPECT_ERRNO(connect(fd, (struct sockaddr *)&in, sizeof(in)), EACCES);
	in.sin_port = 0;
	EXPECT_ERRNO(bind(fd, (struct sockaddr *)&in, sizeof(in)), EACCES);
}

Test(landlock_apply, handled_net_without_rules_denies_tcp)
{
	need_abi(4);
	skip_if_calls_are_brokered();
	int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in in = { .sin_family = AF_INET };
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(in);
	cr_assert_eq(bind(srv, (struct sockaddr *)&in, sizeof(in)), 0);
	cr_assert_eq(listen(srv, 1), 0);
	cr_assert_eq(getsockname(srv, (struct sockaddr *)&in, &len), 0);
	int port = ntohs(in.sin_port);
	in_child(net_child, &port);
	close(srv);
}

static void nnp_child(void *arg)
{
	(void)arg;
	struct dsh_landlock_spec s;
	dsh_landlock_spec_init(&s, dsh_landlock_abi());
	struct dsh_error *err = NULL;
	int fd = -1;
	if (dsh_landlock_build(&s, &fd, &err) < 0)
		fail("build: %s", err->msg);
	if (geteuid() == 0)
		_exit(0); /* CAP_SYS_ADMIN may restrict without no_new_privs */
	if (dsh_landlock_restrict(fd, &err) != -EPERM)
		fail("restrict without no_new_privs did not fail with EPERM");
	if (!err->hint)
		fail("no hint");
}

Test(landlock_apply, refuses_without_no_new_privs)
{
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		DSH_SKIP("no_new_privs is already set for this process (by a sandbox it runs in; it cannot be "
			 "cleared), so a refusal without it cannot be seen");
	need_abi(1);
	in_child(nnp_child, NULL);
}

Test(landlock_probe, abi_is_answered_by_the_kernel)
{
	int abi = dsh_landlock_abi();
	cr_assert(abi >= 1 || abi == -ENOSYS || abi == -EOPNOTSUPP, "abi %d", abi);
	if (abi < 1)
		DSH_SKIP("Landlock is not available on this kernel");
	cr_assert_leq(abi, 64);
}

Test(landlock_build, a_grant_swapped_since_the_plan_fails)
{
	if (dsh_landlock_abi() < 1)
		DSH_SKIP("Landlock is not available on this kernel");
	char *top = dsh_test_mkdtemp();
	char *dir = join(top, "dir"), *other = join(top, "other"), *link = join(top, "link");
	cr_assert_eq(mkdir(dir, 0755), 0);
	cr_assert_eq(mkdir(other, 0755), 0);
	cr_assert_eq(symlink(other, link), 0);
	struct stat st;
	cr_assert_eq(stat(dir, &st), 0);
	struct dsh_landlock_spec s;
	struct dsh_error *err = NULL;
	int fd = -1;
	dsh_landlock_spec_init(&s, dsh_landlock_abi());
	cr_assert_eq(dsh_landlock_spec_add(&s, dir, -1, dsh_landlock_fs_rw(s.abi), &err), 0);
	s.grants[0].check_id = true;
	s.grants[0].dev = st.st_dev;
	s.grants[0].ino = st.st_ino;
	cr_assert_eq(dsh_landlock_build(&s, &fd, &err), 0, "unchanged: builds");
	close(fd);
	/* the directories exchanged: same name, another inode */
	cr_assert_eq(renameat2(AT_FDCWD, dir, AT_FDCWD, other, RENAME_EXCHANGE), 0);
	cr_assert_eq(dsh_landlock_build(&s, &fd, &err), -ESTALE);
	dsh_error_free(err);
	err = NULL;
	dsh_landlock_spec_clear(&s);
	/* a symlink where the plan saw none */
	dsh_landlock_spec_init(&s, dsh_landlock_abi());
	cr_assert_eq(dsh_landlock_spec_add(&s, link, -1, dsh_landlock_fs_rw(s.abi), &err), 0);
	s.grants[0].no_symlinks = true;
	cr_assert_eq(dsh_landlock_build(&s, &fd, &err), -ESTALE);
	dsh_error_free(err);
	dsh_landlock_spec_clear(&s);
	dsh_test_rmtree(top);
	free(top), free(dir), free(other), free(link);
}
