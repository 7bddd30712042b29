/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/options.h"
#include "tests/lib/fence_fixture.h"
#include "tests/lib/harness.h"

void dsh_test_fence_tree(char **root, char **ws, char **out)
{
	*root = dsh_test_mkdtemp();
	cr_assert(asprintf(ws, "%s/ws", *root) > 0);
	cr_assert(asprintf(out, "%s/out", *root) > 0);
	cr_assert_eq(mkdir(*ws, 0755), 0);
	cr_assert_eq(mkdir(*out, 0755), 0);
}

void dsh_test_fence_tree_remove(char **root, char **ws, char **out)
{
	dsh_test_rmtree(*root);
	free(*root);
	free(*ws);
	free(*out);
	*root = *ws = *out = NULL;
}

char *dsh_test_pathf(const char *fmt, const char *a)
{
	char *s = NULL;
	cr_assert(asprintf(&s, fmt, a) > 0);
	return s;
}

struct dsh_policy *dsh_test_mode_policy(const char *ws, enum dsh_mode mode, const char *const *rules)
{
	struct dsh_config c;
	dsh_config_init(&c);
	c.mode = mode;
	c.workspace = strdup(ws);
	for (size_t i = 0; rules && rules[i]; i++)
		dsh_strv_push(&c.access, rules[i]);
	char *env[] = { NULL };
	struct dsh_policy *p = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_policy_new(&c, env, ws, &p, &err), 0, "%s", err ? err->msg : "");
	dsh_config_clear(&c);
	return p;
}

enum dsh_err_kind dsh_test_fence_write_fails(struct dsh_policy *p, const char *path, const char *data)
{
	struct dsh_fence_write_result r;
	_cleanup_error_ struct dsh_error *err = NULL;
	int rc = dsh_fence_write(p, path, data, strlen(data), &r, &err);
	cr_assert_lt(rc, 0, "write %s succeeded", path);
	cr_assert_not_null(err);
	cr_assert_not_null(err->msg);
	return err->kind;
}

void dsh_test_fence_write_ok(struct dsh_policy *p, const char *path, const char *data,
			     struct dsh_fence_write_result *r)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	int rc = dsh_fence_write(p, path, data, strlen(data), r, &err);
	cr_assert_eq(rc, 0, "write %s: %s", path, err ? err->msg : "");
}

static void write_map(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0) {
			/* checked by the mount that follows */
		}
		close(fd);
	}
}

bool dsh_test_mount_tmpfs(const char *dir, const char *source)
{
	return dsh_test_mount_tmpfs_opts(dir, source, "mode=0755");
}

bool dsh_test_mount_tmpfs_opts(const char *dir, const char *source, const char *opts)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	/* Root without CAP_SYS_ADMIN (a container's) takes the user's way, as itself. */
	if (uid != 0 || unshare(CLONE_NEWNS) < 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return false;
		char map[64];
		write_map("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
		write_map("/proc/self/uid_map", map);
		snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
		write_map("/proc/self/gid_map", map);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return false;
	return mount(source, dir, "tmpfs", 0, opts) == 0;
}
