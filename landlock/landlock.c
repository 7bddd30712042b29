/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The effectful half of the Landlock module: probe, build, restrict. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "common/cleanup.h"
#include "common/resolve.h"
#include "landlock/landlock.h"
#include "policy/policy.h"

int dsh_landlock_abi(void)
{
	int abi = dsh_sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0)
		return errno == EOPNOTSUPP ? -EOPNOTSUPP : -ENOSYS;
	return abi;
}

/* The attribute size the probed ABI knows: scoped from ABI 6, handled_access_net from ABI 4. */
static size_t attr_size(int abi)
{
	if (abi >= 6)
		return sizeof(struct dsh_landlock_ruleset_attr);
	if (abi >= 4)
		return offsetof(struct dsh_landlock_ruleset_attr, scoped);
	return offsetof(struct dsh_landlock_ruleset_attr, handled_access_net);
}

/* An O_PATH descriptor of path, symlinks refused on the way when no_symlinks. */
static int open_path(const char *path, bool no_symlinks)
{
	return dsh_openat2(AT_FDCWD, path, O_PATH, 0, no_symlinks ? RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS : 0);
}

static int add_grant(int ruleset, const struct dsh_landlock_spec *s, const struct dsh_landlock_grant *g,
		     struct dsh_error **err)
{
	_cleanup_close_ int own = -1;
	int fd = g->fd;
	if (g->path) {
		own = open_path(g->path, g->no_symlinks);
		if (own < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				return 0; /* nothing there: granting nothing is the safe direction */
			if (g->no_symlinks && errno == ELOOP && g->skip_stale)
				return 0;
			if (g->no_symlinks && errno == ELOOP)
				return dsh_err(err, DSH_ERR_SYSTEM, ESTALE,
					       "landlock: '%s' became a symlink since the plan was made", g->path);
			return dsh_err_sys(err, errno, "landlock: open '%s'", g->path);
		}
		fd = own;
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return dsh_err_sys(err, errno, "landlock: stat '%s'", g->path ? g->path : "(fd)");
	if (g->check_id && (st.st_dev != g->dev || st.st_ino != g->ino) && g->skip_stale)
		return 0;
	if (g->check_id && (st.st_dev != g->dev || st.st_ino != g->ino))
		return dsh_err(err, DSH_ERR_SYSTEM, ESTALE,
			       "landlock: '%s' is not what the plan saw (a path swapped under us)", g->path ? g->path : "(fd)");
	uint64_t access = g->access & s->handled_fs;
	if (!S_ISDIR(st.st_mode))
		access &= dsh_landlock_fs_file_only(s->abi);
	if (!access)
		return 0;
	struct dsh_landlock_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };
	if (dsh_sys_landlock_add_rule(ruleset, DSH_LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return dsh_err_sys(err, errno, "landlock_add_rule '%s'", g->path ? g->path : "(fd)");
	return 0;
}

int dsh_landlock_build(const struct dsh_landlock_spec *s, int *ret_fd, struct dsh_error **err)
{
	if (s->abi < 1)
		return dsh_err(err, DSH_ERR_UNSUPPORTED, EOPNOTSUPP, "landlock is not available");
	struct dsh_landlock_ruleset_attr attr = {
		.handled_access_fs = s->handled_fs,
		.handled_access_net = s->abi >= 4 ? s->handled_net : 0,
		.scoped = s->abi >= 6 ? s->scoped : 0,
	};
	_cleanup_close_ int fd = dsh_sys_landlock_create_ruleset(&attr, attr_size(s->abi), 0);
	if (fd < 0)
		return dsh_err_sys(err, errno, "landlock_create_ruleset (ABI %d)", s->abi);
	/* The kernel makes the descriptor O_CLOEXEC itself (landlock_create_ruleset). */
	for (size_t i = 0; i < s->n_grants; i++) {
		int r = add_grant(fd, s, &s->grants[i], err);
		if (r < 0)
			return r;
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int dsh_landlock_restrict(int ruleset_fd, struct dsh_error **err)
{
	if (dsh_sys_landlock_restrict_self(ruleset_fd, 0) < 0) {
		int e = errno;
		dsh_err_sys(err, e, "landlock_restrict_self");
		if (e == EPERM)
			dsh_err_hint(err, "set no_new_privs (PR_SET_NO_NEW_PRIVS) before Landlock");
		return -e;
	}
	return 0;
}

int dsh_landlock_apply(const struct dsh_landlock_spec *s, struct dsh_error **err)
{
	/* A layer that handles nothing restricts nothing (the kernel refuses it: ENOMSG).  linux-ns
	   with nestedSandbox keeps only the scopes, and init's own layer goes without them. */
	if (!s->handled_fs && !s->handled_net && !(s->abi >= 6 && s->scoped))
		return 0;
	_cleanup_close_ int fd = -1;
	int r = dsh_landlock_build(s, &fd, err);
	if (r < 0)
		return r;
	return dsh_landlock_restrict(fd, err);
}

int dsh_landlock_spec_add_roots(struct dsh_landlock_spec *s, const struct dsh_policy *p, struct dsh_error **err)
{
	for (size_t i = 0; i < p->n_roots; i++) {
		const struct dsh_root *root = &p->roots[i];
		if (root->dead_by || root->readonly_by)
			continue;
		/* The root as resolved now must be what the grant opens later: no symlink on the way,
		   same dev/ino (a racer swapping it for a link to an r- directory fails the run). */
		struct stat st;
		if (fstatat(AT_FDCWD, root->path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return dsh_err_sys(err, errno, "writable root '%s'", root->path);
		}
		if (S_ISLNK(st.st_mode))
			return dsh_err(err, DSH_ERR_SYSTEM, ESTALE,
				       "writable root '%s' became a symlink since the policy was loaded", root->path);
		int r = dsh_landlock_spec_add_rule(s, root->path, dsh_landlock_fs_rw(s->abi),
						   root->rule ? root->rule->index : DSH_LANDLOCK_NO_RULE, err);
		if (r < 0)
			return r;
		struct dsh_landlock_grant *g = &s->grants[s->n_grants - 1];
		g->no_symlinks = g->check_id = true;
		g->dev = st.st_dev;
		g->ino = st.st_ino;
	}
	return 0;
}
