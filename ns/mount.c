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
#include "ns/mount.h"
#include "ns/mount_internal.h"
#include "ns/userns.h"
#include "ns/sys.h"

/*
 * The chokepoint: every mount-family call of dshbox is one of these wrappers.  Each returns a
 * descriptor or 0, or fills err with the call's name ("open_tree: Permission denied") for the
 * caller to prefix with the entry.
 */

int dsh_m_open_tree(int dfd, const char *path, unsigned flags, struct dsh_error **err)
{
	int fd = open_tree(dfd, path, flags | OPEN_TREE_CLOEXEC | (path[0] ? 0 : AT_EMPTY_PATH));
	if (fd < 0)
		return dsh_err_sys(err, errno, "open_tree");
	return fd;
}

int dsh_m_move(int from, int to_dfd, const char *to_path, struct dsh_error **err)
{
	unsigned flags = MOVE_MOUNT_F_EMPTY_PATH | (to_path[0] ? 0 : MOVE_MOUNT_T_EMPTY_PATH);
	if (move_mount(from, "", to_dfd, to_path, flags) < 0)
		return dsh_err_sys(err, errno, "move_mount");
	return 0;
}

int dsh_m_setattr(int dfd, const char *path, bool recursive, unsigned long long set,
		     unsigned long long clr, struct dsh_error **err)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr };
	unsigned flags = (recursive ? AT_RECURSIVE : 0) | (path[0] ? 0 : AT_EMPTY_PATH);
	if (mount_setattr(dfd, path, flags, &a, sizeof(a)) < 0)
		return dsh_err_sys(err, errno, "mount_setattr");
	return 0;
}

/* A new filesystem instance as a detached mount; opts are "key=value" strings or "flag". */
int dsh_m_fsmount(const char *type, const char *const *opts, unsigned attrs, struct dsh_error **err)
{
	_cleanup_close_ int fs = fsopen(type, FSOPEN_CLOEXEC);
	if (fs < 0)
		return dsh_err_sys(err, errno, "fsopen %s", type);
	for (size_t i = 0; opts && opts[i]; i++) {
		char key[64];
		const char *eq = strchr(opts[i], '=');
		int r;
		if (eq) {
			snprintf(key, sizeof(key), "%.*s", (int)(eq - opts[i]), opts[i]);
			r = fsconfig(fs, FSCONFIG_SET_STRING, key, eq + 1, 0);
		} else {
			r = fsconfig(fs, FSCONFIG_SET_FLAG, opts[i], NULL, 0);
		}
		if (r < 0)
			return dsh_err_sys(err, errno, "fsconfig %s %s", type, opts[i]);
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return dsh_err_sys(err, errno, "fsconfig %s create", type);
	int m = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	if (m < 0)
		return dsh_err_sys(err, errno, "fsmount %s", type);
	return m;
}

int dsh_mount_make_private(struct dsh_error **err)
{
	struct mount_attr a = { .propagation = MS_PRIVATE };
	if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &a, sizeof(a)) < 0)
		return dsh_err_sys(err, errno, "make / private: mount_setattr");
	return 0;
}

/* ---- entries ---- */


const char *const dsh_mount_dev_node_names[6] = { "null", "zero", "full", "random", "urandom", "tty" };

/*
 * Open the entry's target now (after its parents' mounts are in place), never following a
 * symlink, and check it is the file the plan saw.  Returns the descriptor, or -ENOENT (with no
 * error set) for an optional entry that does not exist here.
 */
static int open_target_st(const struct dsh_mount_entry *e, struct stat *ret_st, struct dsh_error **err)
{
	int fd = dsh_openat2(AT_FDCWD, e->path, O_PATH | O_CLOEXEC | O_NOFOLLOW, 0,
			     RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0) {
		int e2 = errno;
		if (e2 == ENOENT && !e->have_id)
			return -ENOENT;
		if (e2 == ELOOP)
			return dsh_err(err, DSH_ERR_SYSTEM, ELOOP, "openat2: a symlink is in the path now; it changed since planning");
		return dsh_err_sys(err, e2, "openat2");
	}
	if (e->have_id || ret_st) {
		struct stat st;
		if (fstat(fd, &st) < 0) {
			int e2 = errno;
			close(fd);
			return dsh_err_sys(err, e2, "fstat");
		}
		if (ret_st)
			*ret_st = st;
		if (e->have_id && (st.st_dev != e->dev || st.st_ino != e->ino)) {
			close(fd);
			return dsh_err(err, DSH_ERR_SYSTEM, ESTALE,
				       "the path changed since planning (device/inode %lu:%lu, planned %lu:%lu)",
				       (unsigned long)st.st_dev, (unsigned long)st.st_ino, (unsigned long)e->dev,
				       (unsigned long)e->ino);
		}
	}
	return fd;
}

int dsh_mount_open_target(const struct dsh_mount_entry *e, struct dsh_error **err)
{
	return open_target_st(e, NULL, err);
}

/* mkdir -p below dfd, staying on dfd's filesystem (RESOLVE_NO_XDEV): never the host's. */
static int mkdir_within(int dfd, const char *rel, bool last_is_dir, struct dsh_error **err)
{
	int cur = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return dsh_err_sys(err, errno, "dup");
	_cleanup_free_ char *copy = strdup(rel);
	if (!copy) {
		close(cur);
		return dsh_err_sys(err, ENOMEM, "mkdir");
	}
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		bool last = save == NULL || *save == '\0';
		if (last && !last_is_dir) {
			int f = openat(cur, c, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
			if (f < 0 && errno != EISDIR) {
				int e = errno;
				close(cur);
				return dsh_err_sys(err, e, "create %s", c);
			}
			if (f >= 0)
				close(f);
			break;
		}
		if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST) {
			int e = errno;
			close(cur);
			return dsh_err_sys(err, e, "mkdir %s", c);
		}
		int next = dsh_openat2(cur, c, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
				       RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH);
		int e = errno;
		close(cur);
		if (next < 0)
			return dsh_err_sys(err, e, "open %s", c);
		cur = next;
	}
	close(cur);
	return 0;
}

static int apply_tmp(struct applier *a, const struct dsh_mount_entry *e, struct dsh_error **err)
{
	static const char *const opts[] = { "mode=1777", NULL };
	unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (a->plan->tmp_writable ? 0 : MOUNT_ATTR_RDONLY);
	_cleanup_close_ int m = dsh_m_fsmount("tmpfs", opts, attrs, err);
	if (m < 0)
		return m;
	_cleanup_close_ int t = dsh_mount_open_target(e, err);
	if (t < 0)
		return t;
	return dsh_m_move(m, t, "", err);
}

/*
 * /run/user/UID (SPEC 3.11): an empty read-only tmpfs of the user's own, mode 0700 as the real one
 * is (Landlock grants no write there either).  The host's sockets below it are gone, not merely
 * read-only: connect() ignores read-only mounts.
 */
static int apply_run_user(struct applier *a, const struct dsh_mount_entry *e, struct dsh_error **err)
{
	static const char *const opts[] = { "mode=0700", "size=4k", "nr_inodes=2", NULL };
	(void)a;
	unsigned attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	_cleanup_close_ int m = dsh_m_fsmount("tmpfs", opts, attrs, err);
	if (m < 0)
		return m;
	_cleanup_close_ int t = dsh_mount_open_target(e, err);
	if (t < 0)
		return t;
	return dsh_m_move(m, t, "", err);
}

/* A root (or the read-only workspace) under /tmp: its parents made inside the private tmpfs, then the
   clone bound there. */
static int apply_bind_tmp(struct applier *a, size_t i, const struct dsh_mount_entry *e, struct dsh_error **err)
{
	_cleanup_close_ int tmp = dsh_openat2(AT_FDCWD, "/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
					      RESOLVE_NO_SYMLINKS);
	if (tmp < 0)
		return dsh_err_sys(err, errno, "open /tmp");
	struct stat st;
	if (fstat(a->clones[i], &st) < 0)
		return dsh_err_sys(err, errno, "fstat");
	const char *rel = e->path + strlen("/tmp/");
	int r = mkdir_within(tmp, rel, S_ISDIR(st.st_mode), err);
	if (r < 0)
		return r;
	_cleanup_close_ int t = dsh_openat2(tmp, rel, O_PATH | O_CLOEXEC | O_NOFOLLOW, 0,
					    RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH);
	if (t < 0)
		return dsh_err_sys(err, errno, "openat2");
	return dsh_m_move(a->clones[i], t, "", err);
}

/*
 * The caller's terminal (stdin, stdout or stderr), cloned from the host's /dev by its name, for
 * /dev/console (SPEC 3.6): inside, `tty` and ttyname() look the descriptor's node up in /dev/pts
 * (the sandbox's own) and then in /dev, where this bind is the same inode.  The descriptor's own
 * mount is the host namespace's, which open_tree cannot clone; its name in our copy of the host
 * tree can, and the clone must be the very device the descriptor is.  -1: no terminal.
 */
static int clone_terminal(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		char name[256];
		struct stat want, got;
		if (!isatty(fd) || ttyname_r(fd, name, sizeof(name)) != 0 || fstat(fd, &want) < 0)
			continue;
		int m = open_tree(AT_FDCWD, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (m < 0)
			continue;
		if (fstat(m, &got) == 0 && S_ISCHR(got.st_mode) && got.st_rdev == want.st_rdev &&
		    got.st_ino == want.st_ino && got.st_dev == want.st_dev)
			return m;
		close(m);
	}
	return -1;
}

/*
 * A host device node bound into the minimal /dev is the host's inode: a read-only mount keeps its
 * mode, owner and times as the host has them (chmod, utimes: EROFS; root's command owns /dev/null),
 * while reads and writes of the device go on (a read-only mount does not refuse opening a device
 * for writing).  The broker refuses the same; this holds with the broker off too.
 */
static int dev_node_readonly(int m, struct dsh_error **err)
{
	return dsh_m_setattr(m, "", false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0, err);
}

/* console: the terminal bound on /dev/console, or -1 (bubblewrap's --dev makes none). */
int dsh_mount_apply_dev(struct applier *a, const struct dsh_mount_entry *e, int console, struct dsh_error **err)
{
	static const char *const dev_opts[] = { "mode=0755", "size=64k", NULL };
	static const char *const shm_opts[] = { "mode=1777", NULL };
	static const char *const pts_opts[] = { "newinstance", "ptmxmode=0666", "mode=0620", NULL };
	_cleanup_close_ int m = dsh_m_fsmount("tmpfs", dev_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
	if (m < 0)
		return m;
	_cleanup_close_ int t = dsh_mount_open_target(e, err);
	if (t < 0)
		return t;
	int r = dsh_m_move(m, t, "", err);
	if (r < 0)
		return r;
	/* From here on, every name is made inside the new tmpfs, reached only through its descriptor. */
	_cleanup_close_ int d = dsh_openat2(AT_FDCWD, "/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0,
					    RESOLVE_NO_SYMLINKS);
	if (d < 0)
		return dsh_err_sys(err, errno, "open /dev");
	for (size_t k = 0; k < ARRAY_SIZE(dsh_mount_dev_node_names); k++) {
		if (a->dev_nodes[k] < 0)
			continue;
		int f = openat(d, dsh_mount_dev_node_names[k], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
		if (f < 0)
			return dsh_err_sys(err, errno, "create /dev/%s", dsh_mount_dev_node_names[k]);
		close(f);
		if ((r = dev_node_readonly(a->dev_nodes[k], err)) < 0 ||
		    (r = dsh_m_move(a->dev_nodes[k], d, dsh_mount_dev_node_names[k], err)) < 0)
			return dsh_err_prefix(err, "/dev/%s", dsh_mount_dev_node_names[k]);
	}
	if (console >= 0) {
		int f = openat(d, "console", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		if (f < 0)
			return dsh_err_sys(err, errno, "create /dev/console");
		close(f);
		if ((r = dev_node_readonly(console, err)) < 0 || (r = dsh_m_move(console, d, "console", err)) < 0)
			return dsh_err_prefix(err, "/dev/console");
	}
	if (mkdirat(d, "pts", 0755) < 0 || mkdirat(d, "shm", 01777) < 0)
		return dsh_err_sys(err, errno, "mkdir /dev/pts, /dev/shm");
	if (e->dev_mqueue && mkdirat(d, "mqueue", 0755) < 0)
		return dsh_err_sys(err, errno, "mkdir /dev/mqueue");
	_cleanup_close_ int pts = dsh_m_fsmount("devpts", pts_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
	if (pts < 0)
		return pts;
	if ((r = dsh_m_move(pts, d, "pts", err)) < 0)
		return dsh_err_prefix(err, "/dev/pts");
	_cleanup_close_ int shm = dsh_m_fsmount("tmpfs", shm_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
	if (shm < 0)
		return shm;
	if ((r = dsh_m_move(shm, d, "shm", err)) < 0)
		return dsh_err_prefix(err, "/dev/shm");
	static const char *const links[][2] = {
		{ "pts/ptmx", "ptmx" }, { "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" },
	};
	for (size_t k = 0; k < ARRAY_SIZE(links); k++)
		if (symlinkat(links[k][0], d, links[k][1]) < 0)
			return dsh_err_sys(err, errno, "symlink /dev/%s", links[k][1]);
	if (e->dev_core && symlinkat("/proc/kcore", d, "core") < 0)
		return dsh_err_sys(err, errno, "symlink /dev/core");
	/* Nothing more is ever made in /dev itself; the devices stay writable on a read-only mount. */
	return dsh_m_setattr(d, "", false, MOUNT_ATTR_RDONLY, 0, err);
}

static int apply_proc(struct applier *a, const struct dsh_mount_entry *e, struct dsh_error **err)
{
	_cleanup_close_ int t = dsh_mount_open_target(e, err);
	if (t < 0)
		return t;
	_cleanup_error_ struct dsh_error *perr = NULL;
	_cleanup_close_ int m = dsh_m_fsmount("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &perr);
	if (m < 0) {
		/* A hardened host (a container's masked /proc) may refuse a fresh procfs: the host's is
		   bound instead only with allowDegraded, said in the outcome; otherwise the run refuses. */
		if (a->proc_clone < 0) {
			*err = TAKE_PTR(perr);
			dsh_err_hint(err, "the kernel refuses a fresh procfs where /proc is masked (a container): run the "
					  "container with an unmasked /proc (Kubernetes: procMount: Unmasked; Docker, "
					  "Podman: --security-opt systempaths=unconfined), or --allow-degraded to bind this "
					  "/proc instead (the container's other processes visible inside)");
			return -(*err)->code;
		}
		int r = dsh_m_setattr(a->proc_clone, "", false, 0, MOUNT_ATTR_RDONLY, err);
		if (r < 0)
			return r;
		if (a->out)
			a->out->proc_fallback = true;
		return dsh_m_move(a->proc_clone, t, "", err);
	}
	int r = dsh_m_move(m, t, "", err);
	if (r < 0)
		return r;
	/* The kernel knobs stay read-only even though the procfs itself is writable. */
	static const char *const ro[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus" };
	for (size_t k = 0; k < ARRAY_SIZE(ro); k++) {
		_cleanup_error_ struct dsh_error *ignore = NULL;
		_cleanup_close_ int c = dsh_m_open_tree(AT_FDCWD, ro[k], OPEN_TREE_CLONE | AT_RECURSIVE, &ignore);
		if (c < 0) {
			if (ignore->code == ENOENT)
				continue;
			*err = TAKE_PTR(ignore);
			return dsh_err_prefix(err, "%s", ro[k]);
		}
		if ((r = dsh_m_setattr(c, "", true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				   0, err)) < 0 ||
		    (r = dsh_m_move(c, AT_FDCWD, ro[k], err)) < 0)
			return dsh_err_prefix(err, "%s", ro[k]);
	}
	return 0;
}

static int apply_bind_ro(const struct dsh_mount_entry *e, struct dsh_error **err)
{
	_cleanup_close_ int t = dsh_mount_open_target(e, err);
	if (t == -ENOENT)
		return 0;
	if (t < 0)
		return t;
	_cleanup_close_ int c = dsh_m_open_tree(t, "", OPEN_TREE_CLONE | AT_RECURSIVE, err);
	if (c < 0)
		return c;
	int r = dsh_m_setattr(c, "", true, MOUNT_ATTR_RDONLY, 0, err);
	if (r < 0)
		return r;
	return dsh_m_move(c, t, "", err);
}

/*
 * Masks.  Every mask is a clone of one of two sources, a read-only mode-000 tmpfs (directories)
 * and an empty mode-000 file on a private tmpfs (files), flags included.  Before Linux 6.15,
 * open_tree(OPEN_TREE_CLONE) refuses a mount that is not attached in the caller's namespace
 * (EINVAL), so a source is never cloned while detached: the first mask of each kind is the source
 * itself, moved onto its target, and every later mask clones that attached mount.  That costs no
 * more on any kernel (one clone fewer).  Cutting the file out of its tmpfs is a clone too: where
 * the kernel refuses it detached, the tmpfs is attached for that one call, over "/" (where no path
 * lookup reaches it), and detached again.
 */
static int mask_file_source(const struct applier *a, struct dsh_error **err)
{
	static const char *const fopts[] = { "mode=0700", "size=4k", "nr_inodes=4", NULL };
	_cleanup_close_ int src = dsh_m_fsmount("tmpfs", fopts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
	if (src < 0)
		return src;
	int f = openat(src, "mask", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (f < 0)
		return dsh_err_sys(err, errno, "create");
	close(f);
	if (fchmodat(src, "mask", 0, 0) < 0)
		return dsh_err_sys(err, errno, "chmod");
	if (a->mask_owned && fchownat(src, "mask", a->mask_uid, a->mask_gid, 0) < 0)
		return dsh_err_sys(err, errno, "chown");
	/* Probe what the kernel does, not its version: Linux 6.15 clones a detached mount. */
	_cleanup_close_ int c = open_tree(src, "mask", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (c < 0 && errno == EINVAL) {
		int r = dsh_m_move(src, AT_FDCWD, "/", err);
		if (r < 0)
			return dsh_err_prefix(err, "attach");
		c = open_tree(src, "mask", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		int e = errno;
		char self[64];
		snprintf(self, sizeof(self), "/proc/self/fd/%d", src);
		if (umount2(self, MNT_DETACH) < 0) /* the magic link names the tmpfs's root: this mount */
			return dsh_err_sys(err, errno, "detach: umount2");
		errno = e;
	}
	if (c < 0)
		return dsh_err_sys(err, errno, "open_tree");
	/* The file alone, read-only once: every file mask is this mount or a clone of it. */
	int r = dsh_m_setattr(c, "", false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0, err);
	if (r < 0)
		return r;
	TAKE_FD(src); /* detached: kept open until init exits (see the end of dsh_mount_plan_apply) */
	return TAKE_FD(c);
}

static int apply_mask(struct applier *a, const struct dsh_mount_entry *e, struct dsh_error **err)
{
	char uid[32], gid[32];
	snprintf(uid, sizeof(uid), "uid=%u", (unsigned)a->mask_uid);
	snprintf(gid, sizeof(gid), "gid=%u", (unsigned)a->mask_gid);
	const char *const opts[] = { "mode=000", "size=4k", "nr_inodes=2", a->mask_owned ? uid : NULL, gid, NULL };
	const unsigned attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	struct stat st;
	_cleanup_close_ int t = open_target_st(e, &st, err);
	if (t == -ENOENT)
		return 0;
	if (t < 0)
		return t;
	int *source = S_ISDIR(st.st_mode) ? &a->mask_dir : &a->mask_file;
	if (*source < 0) {
		int m = S_ISDIR(st.st_mode) ? dsh_m_fsmount("tmpfs", opts, attrs, err) : mask_file_source(a, err);
		if (m < 0)
			return dsh_err_prefix(err, S_ISDIR(st.st_mode) ? "mask source" : "file mask source");
		*source = m;
		/* The first mask is the source itself; kept open (attached, so closing it is cheap). */
		return dsh_m_move(*source, t, "", err);
	}
	_cleanup_close_ int c = dsh_m_open_tree(*source, "", OPEN_TREE_CLONE, err);
	if (c < 0)
		return c;
	return dsh_m_move(c, t, "", err);
}

static int apply_entry(struct applier *a, size_t i, struct dsh_error **err)
{
	const struct dsh_mount_entry *e = &a->plan->entries[i];
	switch (e->action) {
	case DSH_MOUNT_RO_ROOT:
		return 0; /* done in its own round */
	case DSH_MOUNT_TMP:
		return apply_tmp(a, e, err);
	case DSH_MOUNT_RUN_USER:
		return apply_run_user(a, e, err);
	case DSH_MOUNT_BIND_RW: {
		_cleanup_close_ int t = dsh_mount_open_target(e, err);
		if (t < 0)
			return t;
		return dsh_m_move(a->clones[i], t, "", err);
	}
	case DSH_MOUNT_BIND_RW_TMP:
		return apply_bind_tmp(a, i, e, err);
	case DSH_MOUNT_BIND_RO_TMP: {
		/* Read-only before it is reachable: the clone took the host's flags, writable ones too. */
		int r = dsh_m_setattr(a->clones[i], "", true, MOUNT_ATTR_RDONLY, 0, err);
		return r < 0 ? r : apply_bind_tmp(a, i, e, err);
	}
	case DSH_MOUNT_DEV:
		return dsh_mount_apply_dev(a, e, a->console, err);
	case DSH_MOUNT_PROC:
		return apply_proc(a, e, err);
	case DSH_MOUNT_BIND_RO:
		return apply_bind_ro(e, err);
	case DSH_MOUNT_MASK_DIR:
	case DSH_MOUNT_MASK_FILE:
		return apply_mask(a, e, err);
	case DSH_MOUNT_BIND:
	case DSH_MOUNT_TMPFS:
	case DSH_MOUNT_REMOUNT_RO:
	case DSH_MOUNT_MKDIR:
	case DSH_MOUNT_SYMLINK:
	case DSH_MOUNT_FILE:
	case DSH_MOUNT_BIND_DATA:
	case DSH_MOUNT_CHMOD:
	case DSH_MOUNT_ATTR:
	case DSH_MOUNT_NEWROOT:
	case DSH_MOUNT_MQUEUE:
	case DSH_MOUNT_ABSENT:
		break;
	}
	return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "%s: not an entry of the sorted plan",
		       dsh_mount_action_to_string(e->action));
}

static int entry_error(const struct dsh_mount_plan *plan, size_t i, struct dsh_error **err)
{
	const struct dsh_mount_entry *e = &plan->entries[i];
	return dsh_err_prefix(err, "mount %zu/%zu '%s' (%s, %s)", i + 1, plan->n, e->path,
			      dsh_mount_action_to_string(e->action), e->why);
}

static void clone_dev_nodes(struct applier *a)
{
	for (size_t k = 0; k < ARRAY_SIZE(dsh_mount_dev_node_names); k++) {
		char p[32];
		snprintf(p, sizeof(p), "/dev/%s", dsh_mount_dev_node_names[k]);
		if (a->dev_nodes[k] < 0)
			a->dev_nodes[k] = open_tree(AT_FDCWD, p, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	}
}

/* Round 1: what must keep its own flags, or be seen as the host shows it, is cloned before the
   tree turns read-only and before anything is mounted. */
static int clone_sources(struct applier *a, struct dsh_error **err)
{
	const struct dsh_mount_plan *plan = a->plan;
	for (size_t i = 0; i < plan->n; i++) {
		const struct dsh_mount_entry *e = &plan->entries[i];
		if (e->action == DSH_MOUNT_BIND_RW || e->action == DSH_MOUNT_BIND_RW_TMP ||
		    e->action == DSH_MOUNT_BIND_RO_TMP) {
			_cleanup_close_ int t = dsh_mount_open_target(e, err);
			int r = t < 0 ? t : dsh_m_open_tree(t, "", OPEN_TREE_CLONE | AT_RECURSIVE, err);
			if (r < 0)
				return entry_error(plan, i, err);
			a->clones[i] = r;
		} else if (e->action == DSH_MOUNT_DEV) {
			clone_dev_nodes(a);
			a->console = clone_terminal();
		} else if (e->action == DSH_MOUNT_PROC && plan->proc_fallback) {
			a->proc_clone = open_tree(AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		}
	}
	for (size_t i = 0; i < plan->n_ordered; i++) {
		if (plan->ordered[i].action == DSH_MOUNT_DEV)
			clone_dev_nodes(a);
		int r = dsh_mount_prepare_ordered(a, i, &plan->ordered[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

int dsh_mount_plan_apply(const struct dsh_mount_plan *plan, struct dsh_mount_outcome *out,
			 struct dsh_error **err)
{
	struct applier a = { .plan = plan, .proc_clone = -1, .mask_file = -1, .mask_dir = -1, .console = -1, .out = out };
	size_t n_clones = plan->n + plan->n_ordered;
	for (size_t k = 0; k < ARRAY_SIZE(a.dev_nodes); k++)
		a.dev_nodes[k] = -1;
	if (plan->masks_unmapped) {
		int r = dsh_userns_range_last(&a.mask_uid, &a.mask_gid, err);
		if (r < 0)
			return dsh_err_prefix(err, "the masks' owner");
		a.mask_owned = true;
	}
	a.clones = malloc((n_clones ? n_clones : 1) * sizeof(int));
	if (!a.clones)
		return dsh_err_sys(err, ENOMEM, "mount");
	for (size_t i = 0; i < n_clones; i++)
		a.clones[i] = -1;

	int r = clone_sources(&a, err);
	/* Round 2: the whole tree read-only. */
	if (r >= 0 && plan->ro_root) {
		r = dsh_m_setattr(AT_FDCWD, "/", true, MOUNT_ATTR_RDONLY, 0, err);
		if (r < 0)
			r = dsh_err_prefix(err, "mount 1/%zu '/' (ro-root)", plan->n);
	}
	/* Round 3: every entry in plan order, parents before children. */
	for (size_t i = 0; i < plan->n && r >= 0; i++) {
		r = apply_entry(&a, i, err);
		if (r < 0)
			r = entry_error(plan, i, err);
	}
	/* Round 4: the operations in the order given. */
	if (r >= 0 && plan->n_ordered)
		r = dsh_mount_apply_ordered(&a, err);
	dsh_strv_free(a.roots);
	dsh_strv_free(a.binds);
	/*
	 * Clones that were attached are closed.  Detached mounts still held (the file mask's tmpfs, an unused
	 * clone of /proc) are not: closing the last reference to a detached mount unmounts it, which
	 * waits for an RCU grace period (milliseconds on a busy machine).  They go to the caller in
	 * out->held, which hands them to a process that lives as long as the run without serving it.
	 */
	for (size_t i = 0; i < n_clones; i++)
		if (a.clones[i] >= 0 && (r >= 0 || i >= plan->n))
			close(a.clones[i]);
	free(a.clones);
	int held[] = { a.proc_clone, a.mask_file, a.mask_dir, a.console, a.dev_nodes[0], a.dev_nodes[1],
		       a.dev_nodes[2], a.dev_nodes[3], a.dev_nodes[4], a.dev_nodes[5] };
	_Static_assert(ARRAY_SIZE(held) <= ARRAY_SIZE(out->held), "room for every mount held");
	for (size_t k = 0; out && k < ARRAY_SIZE(held); k++)
		if (held[k] >= 0)
			out->held[out->n_held++] = held[k];
	return r < 0 ? r : 0;
}
