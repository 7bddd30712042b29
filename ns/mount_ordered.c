/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "ns/mount_internal.h"
#include "ns/sys.h"

/* ---- operations in the order given (plan->ordered) ---- */

/* Whether a name may be made at path: the innermost mount this run made above it is a tmpfs. */
static bool beneath_root(const struct applier *o, const char *path)
{
	const char *best = NULL;
	bool is_root = false;
	for (int pass = 0; pass < 2; pass++) {
		char **v = pass == 0 ? o->roots : o->binds;
		for (size_t i = 0; v && v[i]; i++)
			if (dsh_path_is_beneath(path, v[i]) && strcmp(path, v[i]) != 0 &&
			    (!best || strlen(v[i]) >= strlen(best))) {
				best = v[i];
				is_root = pass == 0;
			}
	}
	return best && is_root;
}

/* bubblewrap's mode for the parents it makes: 0755, less what the operation's own mode withholds
   from group and others (an operation without a mode counts as 0). */
static mode_t o_parent_mode(const struct dsh_mount_entry *op)
{
	int perms = op->perms < 0 ? 0 : op->perms;
	mode_t m = 0755;
	if (!(perms & 0070))
		m &= ~0050U;
	if (!(perms & 0007))
		m &= ~0005U;
	return m;
}

/* Whether a missing name at path can be made; if not, bubblewrap's failure or dshbox's refusal. */
static int o_can_make(const struct applier *o, const char *path, struct dsh_error **err)
{
	if (beneath_root(o, path))
		return 0;
	/* bubblewrap's failure where the tree is read-only there; elsewhere the host's own writable
	   tree, where bubblewrap would make the name and dshbox never does. */
	_cleanup_free_ char *parent = strdup(path);
	char *slash = parent ? strrchr(parent, '/') : NULL;
	struct statvfs sv;
	if (slash)
		*(slash == parent ? slash + 1 : slash) = 0;
	if (parent && statvfs(parent, &sv) == 0 && (sv.f_flag & ST_RDONLY))
		return dsh_err(err, DSH_ERR_USAGE, EROFS, "Can't mkdir %s: Read-only file system", path);
	return dsh_err(err, DSH_ERR_UNSUPPORTED, ENOENT,
		       "Can't create '%s': it does not exist, and dshbox makes no name on the host", path);
}

/* Every missing parent of path, with mode (only beneath a tmpfs of this run). */
static int o_make_parents(const struct applier *o, const char *path, mode_t mode, struct dsh_error **err)
{
	_cleanup_free_ char *p = strdup(path);
	if (!p)
		return dsh_err_sys(err, ENOMEM, "mount");
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		struct stat st;
		if (lstat(p, &st) < 0) {
			int r = o_can_make(o, p, err);
			if (r < 0)
				return r;
			if (mkdir(p, mode) < 0 && errno != EEXIST)
				return dsh_err_sys(err, errno, "Can't mkdir parents for %s", path);
		}
		*s = '/';
	}
	return 0;
}

/* dest, made as a directory (0755) or an empty file (0444) when missing, its parents as bubblewrap. */
static int o_make_target(const struct applier *o, const struct dsh_mount_entry *op, bool dir, struct dsh_error **err)
{
	const char *dest = op->path;
	struct stat st;
	if (lstat(dest, &st) == 0)
		return 0;
	if (errno != ENOENT)
		return dsh_err_sys(err, errno, "stat '%s'", dest);
	int r = o_make_parents(o, dest, o_parent_mode(op), err);
	if (r >= 0)
		r = o_can_make(o, dest, err);
	if (r < 0)
		return r;
	if (dir ? mkdir(dest, 0755) < 0 && errno != EEXIST : mknod(dest, S_IFREG | 0444, 0) < 0 && errno != EEXIST)
		return dsh_err_sys(err, errno, "Can't create %s", dest);
	return 0;
}

/* A name held absent by a broker rule, not mounted over: if it appeared since the plan was made,
   the rule alone would not keep it unwritten, so the run fails rather than start unprotected. */
static int o_absent(const struct dsh_mount_entry *op, struct dsh_error **err)
{
	struct stat st;
	if (lstat(op->path, &st) == 0)
		return dsh_err(err, DSH_ERR_UNSUPPORTED, EEXIST,
			       "'%s' appeared after the sandbox was planned, and dshbox held it absent: run again", op->path);
	return errno == ENOENT || errno == ENOTDIR ? 0 : dsh_err_sys(err, errno, "stat '%s'", op->path);
}

static int o_move(int m, const char *dest, struct dsh_error **err)
{
	_cleanup_close_ int t = dsh_openat2(AT_FDCWD, dest, O_PATH | O_CLOEXEC, 0, RESOLVE_NO_MAGICLINKS);
	if (t < 0)
		return dsh_err_sys(err, errno, "open '%s'", dest);
	return dsh_m_move(m, t, "", err);
}

static int o_copy_fd(int from, int to, struct dsh_error **err)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(from, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return dsh_err_sys(err, errno, "read data");
		if (n == 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(to, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return dsh_err_sys(err, errno, "write data");
			off += w;
		}
	}
}

static int o_bind(struct applier *o, const struct dsh_mount_entry *op, int m, struct dsh_error **err)
{
	if (m < 0)
		return 0; /* a -try source that does not exist */
	struct stat st, dt;
	if (fstat(m, &st) < 0)
		return dsh_err_sys(err, errno, "stat '%s'", op->source);
	if (!S_ISDIR(st.st_mode) && stat(op->path, &dt) == 0 && S_ISDIR(dt.st_mode)) /* a file onto a directory */
		return dsh_err(err, DSH_ERR_USAGE, EISDIR, "Can't create file at %s: Is a directory", op->path);
	/* Flags are only added, as bubblewrap adds them to what the source has: a read-only or nodev
	   source stays so, and a container's locked submounts (its /dev/shm, /dev/mqueue) are not
	   asked to drop theirs, which the kernel refuses with EPERM. */
	unsigned long long set = MOUNT_ATTR_NOSUID | (op->readonly ? MOUNT_ATTR_RDONLY : 0) |
				 (op->devices ? 0 : MOUNT_ATTR_NODEV);
	int r = dsh_m_setattr(m, "", true, set, 0, err);
	if (r >= 0)
		r = o_make_target(o, op, S_ISDIR(st.st_mode), err);
	if (r >= 0)
		r = o_move(m, op->path, err);
	if (r >= 0 && dsh_strv_push(&o->binds, op->path) < 0)
		r = dsh_err_sys(err, ENOMEM, "mount");
	return r;
}

/*
 * The new root: a fresh tmpfs attached over "/", entered with pivot_root(".", ".") from inside it,
 * and the old tree detached from above it.  Every source was cloned before (prepare).
 */
static int o_newroot(struct applier *o, struct dsh_error **err)
{
	static const char *const opts[] = { "mode=0755", NULL };
	_cleanup_close_ int m = dsh_m_fsmount("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
	if (m < 0)
		return m;
	int r = dsh_m_move(m, AT_FDCWD, "/", err);
	if (r < 0)
		return dsh_err_prefix(err, "new root");
	if (fchdir(m) < 0)
		return dsh_err_sys(err, errno, "new root: fchdir");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return dsh_err_sys(err, errno, "new root: pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return dsh_err_sys(err, errno, "new root: detach the old tree");
	if (chdir("/") < 0)
		return dsh_err_sys(err, errno, "new root: chdir");
	if (dsh_strv_push(&o->roots, "/") < 0)
		return dsh_err_sys(err, ENOMEM, "mount");
	return 0;
}

static int o_dev(struct applier *o, const struct dsh_mount_entry *op, struct dsh_error **err)
{
	int r = o_make_target(o, op, true, err);
	return r < 0 ? r : dsh_mount_apply_dev(o, op, -1, err);
}

/*
 * The procfs was made in prepare: the kernel lets a user namespace mount a fresh procfs only while
 * a fully visible one is in its mount namespace, which a new root no longer has.
 */
static int o_proc(struct applier *o, const struct dsh_mount_entry *op, int m, struct dsh_error **err)
{
	int r = o_make_target(o, op, true, err);
	if (r < 0)
		return r;
	if ((r = o_move(m, op->path, err)) < 0)
		return r;
	/* The kernel knobs stay read-only, as in the plan's procfs. */
	static const char *const ro[] = { "sys", "sysrq-trigger", "irq", "bus" };
	for (size_t k = 0; k < ARRAY_SIZE(ro); k++) {
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", op->path, ro[k]);
		_cleanup_error_ struct dsh_error *ignore = NULL;
		_cleanup_close_ int c = dsh_m_open_tree(AT_FDCWD, p, OPEN_TREE_CLONE | AT_RECURSIVE, &ignore);
		if (c < 0) {
			if (ignore->code == ENOENT)
				continue;
			*err = TAKE_PTR(ignore);
			return dsh_err_prefix(err, "%s", p);
		}
		if ((r = dsh_m_setattr(c, "", true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				   0, err)) < 0 ||
		    (r = dsh_m_move(c, AT_FDCWD, p, err)) < 0)
			return dsh_err_prefix(err, "%s", p);
	}
	return 0;
}

/*
 * Before any entry: every bind's source cloned as the host shows it (bubblewrap binds from the old
 * root, never from what earlier operations mounted), and a procfs made while the kernel still
 * allows it (a fully visible one is in the mount namespace, which a new root no longer has).
 */
int dsh_mount_prepare_ordered(struct applier *o, size_t i, const struct dsh_mount_entry *op, struct dsh_error **err)
{
	int *slot = &o->clones[o->plan->n + i];
	if (op->action == DSH_MOUNT_PROC) {
		int r = dsh_m_fsmount("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
		if (r < 0)
			return dsh_err_prefix(err, "%s", op->why);
		*slot = r;
		return 0;
	}
	if (op->action != DSH_MOUNT_BIND)
		return 0;
	_cleanup_close_ int src = open(op->source, O_PATH | O_CLOEXEC);
	if (src < 0 && errno == ENOENT && op->optional)
		return 0;
	if (src < 0)
		return dsh_err(err, DSH_ERR_USAGE, errno, "Can't find source path %s: %s", op->source, strerror(errno));
	int r = dsh_m_open_tree(src, "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH, err);
	if (r < 0)
		return dsh_err_prefix(err, "%s", op->why);
	*slot = r;
	return 0;
}

static int o_tmpfs(struct applier *o, const struct dsh_mount_entry *op, struct dsh_error **err)
{
	char mode[32], size[48];
	snprintf(mode, sizeof(mode), "mode=0%o", (unsigned)op->perms);
	snprintf(size, sizeof(size), "size=%llu", op->size);
	const char *opts[] = { mode, op->size ? size : NULL, NULL };
	_cleanup_close_ int m = dsh_m_fsmount("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
	if (m < 0)
		return m;
	int r = o_make_target(o, op, true, err);
	if (r >= 0)
		r = o_move(m, op->path, err);
	if (r >= 0 && dsh_strv_push(&o->roots, op->path) < 0)
		r = dsh_err_sys(err, ENOMEM, "mount");
	return r;
}

static int o_bind_data(struct applier *o, const struct dsh_mount_entry *op, struct dsh_error **err)
{
	static const char *const opts[] = { "mode=0700", NULL };
	_cleanup_close_ int m = dsh_m_fsmount("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
	if (m < 0)
		return m;
	_cleanup_close_ int f = openat(m, "data", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (f < 0)
		return dsh_err_sys(err, errno, "Can't create file for %s", op->path);
	int r = o_copy_fd(op->fd, f, err);
	if (r < 0)
		return r;
	if (fchmod(f, (mode_t)op->perms) < 0)
		return dsh_err_sys(err, errno, "Can't set mode %#o on file to be used for %s", (unsigned)op->perms, op->path);
	_cleanup_close_ int c = dsh_m_open_tree(m, "data", OPEN_TREE_CLONE, err);
	if (c < 0)
		return c;
	if (op->readonly && (r = dsh_m_setattr(c, "", false, MOUNT_ATTR_RDONLY, 0, err)) < 0)
		return r;
	if ((r = o_make_target(o, op, false, err)) < 0)
		return r;
	return o_move(c, op->path, err);
}

/* bubblewrap's --mqueue: the filesystem with no flags of its own, on a directory (perms). */
static int o_mqueue(struct applier *o, const struct dsh_mount_entry *op, struct dsh_error **err)
{
	static const char *const opts[] = { "source=mqueue", NULL };
	_cleanup_close_ int m = dsh_m_fsmount("mqueue", opts, 0, err);
	if (m < 0)
		return m;
	int r = o_make_target(o, op, true, err);
	return r < 0 ? r : o_move(m, op->path, err);
}

static int o_apply(struct applier *o, const struct dsh_mount_entry *op, int fd, struct dsh_error **err)
{
	int r;
	switch (op->action) {
	case DSH_MOUNT_MQUEUE:
		return o_mqueue(o, op, err);
	case DSH_MOUNT_ABSENT:
		return o_absent(op, err);
	case DSH_MOUNT_BIND:
		return o_bind(o, op, fd, err);
	case DSH_MOUNT_TMPFS:
		return o_tmpfs(o, op, err);
	case DSH_MOUNT_REMOUNT_RO:
		return dsh_m_setattr(AT_FDCWD, op->path, false, MOUNT_ATTR_RDONLY, 0, err);
	case DSH_MOUNT_MKDIR: {
		struct stat st;
		if (lstat(op->path, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		if ((r = o_make_target(o, op, true, err)) < 0)
			return r;
		if (chmod(op->path, (mode_t)op->perms) < 0)
			return dsh_err_sys(err, errno, "Can't chmod %#o %s", (unsigned)op->perms, op->path);
		return 0;
	}
	case DSH_MOUNT_SYMLINK: {
		char have[4096];
		ssize_t n = readlink(op->path, have, sizeof(have) - 1);
		if (n >= 0) {
			have[n] = 0;
			if (strcmp(have, op->source) == 0)
				return 0;
			return dsh_err(err, DSH_ERR_USAGE, EEXIST, "Can't make symlink at %s: existing destination is %s",
				       op->path, have);
		}
		if ((r = o_make_parents(o, op->path, o_parent_mode(op), err)) < 0 || (r = o_can_make(o, op->path, err)) < 0)
			return r;
		if (symlink(op->source, op->path) < 0)
			return dsh_err_sys(err, errno, "Can't make symlink at %s", op->path);
		return 0;
	}
	case DSH_MOUNT_FILE: {
		if ((r = o_make_parents(o, op->path, o_parent_mode(op), err)) < 0 || (r = o_can_make(o, op->path, err)) < 0)
			return r;
		_cleanup_close_ int f = open(op->path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (f < 0)
			return dsh_err_sys(err, errno, "Can't create file at %s", op->path);
		if ((r = o_copy_fd(op->fd, f, err)) < 0)
			return r;
		if (fchmod(f, (mode_t)op->perms) < 0)
			return dsh_err_sys(err, errno, "Can't chmod %#o %s", (unsigned)op->perms, op->path);
		return 0;
	}
	case DSH_MOUNT_BIND_DATA:
		return o_bind_data(o, op, err);
	case DSH_MOUNT_CHMOD:
		if (chmod(op->path, (mode_t)op->perms) < 0)
			return dsh_err_sys(err, errno, "Can't chmod %#o %s", (unsigned)op->perms, op->path);
		return 0;
	case DSH_MOUNT_ATTR:
		return dsh_m_setattr(AT_FDCWD, op->path, true, op->attr_set, op->attr_clr, err);
	case DSH_MOUNT_NEWROOT:
		return o_newroot(o, err);
	case DSH_MOUNT_PROC:
		return o_proc(o, op, fd, err);
	case DSH_MOUNT_DEV:
		return o_dev(o, op, err);
	case DSH_MOUNT_RO_ROOT:
	case DSH_MOUNT_TMP:
	case DSH_MOUNT_BIND_RW:
	case DSH_MOUNT_BIND_RW_TMP:
	case DSH_MOUNT_BIND_RO_TMP:
	case DSH_MOUNT_BIND_RO:
	case DSH_MOUNT_MASK_DIR:
	case DSH_MOUNT_MASK_FILE:
	case DSH_MOUNT_RUN_USER:
		break;
	}
	return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "%s: not an operation applied in order",
		       dsh_mount_action_to_string(op->action));
}

/* Every operation in order.  An error of bubblewrap's own stands alone; a system error gets the
   operation named. */
int dsh_mount_apply_ordered(struct applier *o, struct dsh_error **err)
{
	const struct dsh_mount_plan *plan = o->plan;
	int r = 0;
	/* Modes exactly as asked (bubblewrap sets umask 0 for its setup); the command gets the
	   caller's umask back. */
	mode_t old_umask = umask(0);
	for (size_t i = 0; plan->creatable && plan->creatable[i] && r >= 0; i++)
		if (dsh_strv_push(&o->roots, plan->creatable[i]) < 0)
			r = dsh_err_sys(err, ENOMEM, "mount");
	for (size_t i = 0; i < plan->n_ordered && r >= 0; i++) {
		r = o_apply(o, &plan->ordered[i], o->clones[plan->n + i], err);
		if (r < 0 && (*err)->kind != DSH_ERR_USAGE)
			r = dsh_err_prefix(err, "%s", plan->ordered[i].why);
	}
	umask(old_umask);
	return r;
}

