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
#include "ns/sys.h"

/*
 * The chokepoint: every mount-family call of dshbox is one of these wrappers.  Each returns a
 * descriptor or 0, or fills err with the call's name ("open_tree: Permission denied") for the
 * caller to prefix with the entry.
 */

static int m_open_tree(int dfd, const char *path, unsigned flags, struct dsh_error **err)
{
	int fd = open_tree(dfd, path, flags | OPEN_TREE_CLOEXEC | (path[0] ? 0 : AT_EMPTY_PATH));
	if (fd < 0)
		return dsh_err_sys(err, errno, "open_tree");
	return fd;
}

static int m_move(int from, int to_dfd, const char *to_path, struct dsh_error **err)
{
	unsigned flags = MOVE_MOUNT_F_EMPTY_PATH | (to_path[0] ? 0 : MOVE_MOUNT_T_EMPTY_PATH);
	if (move_mount(from, "", to_dfd, to_path, flags) < 0)
		return dsh_err_sys(err, errno, "move_mount");
	return 0;
}

static int m_setattr(int dfd, const char *path, bool recursive, unsigned long long set,
		     unsigned long long clr, struct dsh_error **err)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr };
	unsigned flags = (recursive ? AT_RECURSIVE : 0) | (path[0] ? 0 : AT_EMPTY_PATH);
	if (mount_setattr(dfd, path, flags, &a, sizeof(a)) < 0)
		return dsh_err_sys(err, errno, "mount_setattr");
	return 0;
}

/* A new filesystem instance as a detached mount; opts are "key=value" strings or "flag". */
static int m_fsmount(const char *type, const char *const *opts, unsigned attrs, struct dsh_error **err)
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

struct applier {
	const struct dsh_mount_plan *plan;
	/* Per entry, then per ordered operation: the writable root's clone, a bind's source or a
	   fresh procfs, all taken before anything is mounted (the tree as the host shows it). */
	int *clones;
	int dev_nodes[6];     /* host device nodes, cloned before the read-only pass */
	int console;          /* the caller's terminal, cloned for /dev/console; -1: none */
	int proc_clone;       /* the host's /proc, for the fallback */
	int mask_file;        /* the first file mask: the one empty mode-000 file, attached */
	int mask_dir;         /* the first directory mask: a read-only tmpfs of mode 000, attached */
	char **roots;         /* ordered: tmpfs mounted by this run, where names may be made */
	char **binds;         /* ordered: host trees bound by this run, where no name is made */
	struct dsh_mount_outcome *out;
};

static const char *const dev_node_names[6] = { "null", "zero", "full", "random", "urandom", "tty" };

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

static int open_target(const struct dsh_mount_entry *e, struct dsh_error **err)
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
	_cleanup_close_ int m = m_fsmount("tmpfs", opts, attrs, err);
	if (m < 0)
		return m;
	_cleanup_close_ int t = open_target(e, err);
	if (t < 0)
		return t;
	return m_move(m, t, "", err);
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
	_cleanup_close_ int m = m_fsmount("tmpfs", opts, attrs, err);
	if (m < 0)
		return m;
	_cleanup_close_ int t = open_target(e, err);
	if (t < 0)
		return t;
	return m_move(m, t, "", err);
}

/* A writable root under /tmp: its parents made inside the private tmpfs, then the clone bound there. */
static int apply_bind_rw_tmp(struct applier *a, size_t i, const struct dsh_mount_entry *e, struct dsh_error **err)
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
	return m_move(a->clones[i], t, "", err);
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

/* console: the terminal bound on /dev/console, or -1 (bubblewrap's --dev makes none). */
static int apply_dev(struct applier *a, const struct dsh_mount_entry *e, int console, struct dsh_error **err)
{
	static const char *const dev_opts[] = { "mode=0755", "size=64k", NULL };
	static const char *const shm_opts[] = { "mode=1777", NULL };
	static const char *const pts_opts[] = { "newinstance", "ptmxmode=0666", "mode=0620", NULL };
	_cleanup_close_ int m = m_fsmount("tmpfs", dev_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
	if (m < 0)
		return m;
	_cleanup_close_ int t = open_target(e, err);
	if (t < 0)
		return t;
	int r = m_move(m, t, "", err);
	if (r < 0)
		return r;
	/* From here on, every name is made inside the new tmpfs, reached only through its descriptor. */
	_cleanup_close_ int d = dsh_openat2(AT_FDCWD, "/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0,
					    RESOLVE_NO_SYMLINKS);
	if (d < 0)
		return dsh_err_sys(err, errno, "open /dev");
	for (size_t k = 0; k < ARRAY_SIZE(dev_node_names); k++) {
		if (a->dev_nodes[k] < 0)
			continue;
		int f = openat(d, dev_node_names[k], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
		if (f < 0)
			return dsh_err_sys(err, errno, "create /dev/%s", dev_node_names[k]);
		close(f);
		if ((r = m_move(a->dev_nodes[k], d, dev_node_names[k], err)) < 0)
			return dsh_err_prefix(err, "/dev/%s", dev_node_names[k]);
	}
	if (console >= 0) {
		int f = openat(d, "console", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		if (f < 0)
			return dsh_err_sys(err, errno, "create /dev/console");
		close(f);
		if ((r = m_move(console, d, "console", err)) < 0)
			return dsh_err_prefix(err, "/dev/console");
	}
	if (mkdirat(d, "pts", 0755) < 0 || mkdirat(d, "shm", 01777) < 0)
		return dsh_err_sys(err, errno, "mkdir /dev/pts, /dev/shm");
	if (e->dev_mqueue && mkdirat(d, "mqueue", 0755) < 0)
		return dsh_err_sys(err, errno, "mkdir /dev/mqueue");
	_cleanup_close_ int pts = m_fsmount("devpts", pts_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
	if (pts < 0)
		return pts;
	if ((r = m_move(pts, d, "pts", err)) < 0)
		return dsh_err_prefix(err, "/dev/pts");
	_cleanup_close_ int shm = m_fsmount("tmpfs", shm_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
	if (shm < 0)
		return shm;
	if ((r = m_move(shm, d, "shm", err)) < 0)
		return dsh_err_prefix(err, "/dev/shm");
	static const char *const links[][2] = {
		{ "pts/ptmx", "ptmx" }, { "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" },
	};
	for (size_t k = 0; k < ARRAY_SIZE(links); k++)
		if (symlinkat(links[k][0], d, links[k][1]) < 0)
			return dsh_err_sys(err, errno, "symlink /dev/%s", links[k][1]);
	/* Nothing more is ever made in /dev itself; the devices stay writable on a read-only mount. */
	return m_setattr(d, "", false, MOUNT_ATTR_RDONLY, 0, err);
}

static int apply_proc(struct applier *a, const struct dsh_mount_entry *e, struct dsh_error **err)
{
	_cleanup_close_ int t = open_target(e, err);
	if (t < 0)
		return t;
	_cleanup_error_ struct dsh_error *perr = NULL;
	_cleanup_close_ int m = m_fsmount("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &perr);
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
		int r = m_setattr(a->proc_clone, "", false, 0, MOUNT_ATTR_RDONLY, err);
		if (r < 0)
			return r;
		if (a->out)
			a->out->proc_fallback = true;
		return m_move(a->proc_clone, t, "", err);
	}
	int r = m_move(m, t, "", err);
	if (r < 0)
		return r;
	/* The kernel knobs stay read-only even though the procfs itself is writable. */
	static const char *const ro[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus" };
	for (size_t k = 0; k < ARRAY_SIZE(ro); k++) {
		_cleanup_error_ struct dsh_error *ignore = NULL;
		_cleanup_close_ int c = m_open_tree(AT_FDCWD, ro[k], OPEN_TREE_CLONE | AT_RECURSIVE, &ignore);
		if (c < 0) {
			if (ignore->code == ENOENT)
				continue;
			*err = TAKE_PTR(ignore);
			return dsh_err_prefix(err, "%s", ro[k]);
		}
		if ((r = m_setattr(c, "", true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				   0, err)) < 0 ||
		    (r = m_move(c, AT_FDCWD, ro[k], err)) < 0)
			return dsh_err_prefix(err, "%s", ro[k]);
	}
	return 0;
}

static int apply_bind_ro(const struct dsh_mount_entry *e, struct dsh_error **err)
{
	_cleanup_close_ int t = open_target(e, err);
	if (t == -ENOENT)
		return 0;
	if (t < 0)
		return t;
	_cleanup_close_ int c = m_open_tree(t, "", OPEN_TREE_CLONE | AT_RECURSIVE, err);
	if (c < 0)
		return c;
	int r = m_setattr(c, "", true, MOUNT_ATTR_RDONLY, 0, err);
	if (r < 0)
		return r;
	return m_move(c, t, "", err);
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
static int mask_file_source(struct dsh_error **err)
{
	static const char *const fopts[] = { "mode=0700", "size=4k", "nr_inodes=4", NULL };
	_cleanup_close_ int src = m_fsmount("tmpfs", fopts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
	if (src < 0)
		return src;
	int f = openat(src, "mask", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (f < 0)
		return dsh_err_sys(err, errno, "create");
	close(f);
	if (fchmodat(src, "mask", 0, 0) < 0)
		return dsh_err_sys(err, errno, "chmod");
	/* Probe what the kernel does, not its version: Linux 6.15 clones a detached mount. */
	_cleanup_close_ int c = open_tree(src, "mask", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (c < 0 && errno == EINVAL) {
		int r = m_move(src, AT_FDCWD, "/", err);
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
	int r = m_setattr(c, "", false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0, err);
	if (r < 0)
		return r;
	TAKE_FD(src); /* detached: kept open until init exits (see the end of dsh_mount_plan_apply) */
	return TAKE_FD(c);
}

static int apply_mask(struct applier *a, const struct dsh_mount_entry *e, struct dsh_error **err)
{
	static const char *const opts[] = { "mode=000", "size=4k", "nr_inodes=2", NULL };
	const unsigned attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	struct stat st;
	_cleanup_close_ int t = open_target_st(e, &st, err);
	if (t == -ENOENT)
		return 0;
	if (t < 0)
		return t;
	int *source = S_ISDIR(st.st_mode) ? &a->mask_dir : &a->mask_file;
	if (*source < 0) {
		int m = S_ISDIR(st.st_mode) ? m_fsmount("tmpfs", opts, attrs, err) : mask_file_source(err);
		if (m < 0)
			return dsh_err_prefix(err, S_ISDIR(st.st_mode) ? "mask source" : "file mask source");
		*source = m;
		/* The first mask is the source itself; kept open (attached, so closing it is cheap). */
		return m_move(*source, t, "", err);
	}
	_cleanup_close_ int c = m_open_tree(*source, "", OPEN_TREE_CLONE, err);
	if (c < 0)
		return c;
	return m_move(c, t, "", err);
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
		_cleanup_close_ int t = open_target(e, err);
		if (t < 0)
			return t;
		return m_move(a->clones[i], t, "", err);
	}
	case DSH_MOUNT_BIND_RW_TMP:
		return apply_bind_rw_tmp(a, i, e, err);
	case DSH_MOUNT_DEV:
		return apply_dev(a, e, a->console, err);
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
	return m_move(m, t, "", err);
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
	unsigned long long set = MOUNT_ATTR_NOSUID | (op->readonly ? MOUNT_ATTR_RDONLY : 0) |
				 (op->devices ? 0 : MOUNT_ATTR_NODEV);
	unsigned long long clr = (op->readonly ? 0 : MOUNT_ATTR_RDONLY) | (op->devices ? MOUNT_ATTR_NODEV : 0);
	int r = m_setattr(m, "", true, set, clr, err);
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
	_cleanup_close_ int m = m_fsmount("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
	if (m < 0)
		return m;
	int r = m_move(m, AT_FDCWD, "/", err);
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
	return r < 0 ? r : apply_dev(o, op, -1, err);
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
		_cleanup_close_ int c = m_open_tree(AT_FDCWD, p, OPEN_TREE_CLONE | AT_RECURSIVE, &ignore);
		if (c < 0) {
			if (ignore->code == ENOENT)
				continue;
			*err = TAKE_PTR(ignore);
			return dsh_err_prefix(err, "%s", p);
		}
		if ((r = m_setattr(c, "", true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				   0, err)) < 0 ||
		    (r = m_move(c, AT_FDCWD, p, err)) < 0)
			return dsh_err_prefix(err, "%s", p);
	}
	return 0;
}

/*
 * Before any entry: every bind's source cloned as the host shows it (bubblewrap binds from the old
 * root, never from what earlier operations mounted), and a procfs made while the kernel still
 * allows it (a fully visible one is in the mount namespace, which a new root no longer has).
 */
static int o_prepare(struct applier *o, size_t i, const struct dsh_mount_entry *op, struct dsh_error **err)
{
	int *slot = &o->clones[o->plan->n + i];
	if (op->action == DSH_MOUNT_PROC) {
		int r = m_fsmount("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
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
	int r = m_open_tree(src, "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH, err);
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
	_cleanup_close_ int m = m_fsmount("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
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
	_cleanup_close_ int m = m_fsmount("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
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
	_cleanup_close_ int c = m_open_tree(m, "data", OPEN_TREE_CLONE, err);
	if (c < 0)
		return c;
	if (op->readonly && (r = m_setattr(c, "", false, MOUNT_ATTR_RDONLY, 0, err)) < 0)
		return r;
	if ((r = o_make_target(o, op, false, err)) < 0)
		return r;
	return o_move(c, op->path, err);
}

/* bubblewrap's --mqueue: the filesystem with no flags of its own, on a directory (perms). */
static int o_mqueue(struct applier *o, const struct dsh_mount_entry *op, struct dsh_error **err)
{
	static const char *const opts[] = { "source=mqueue", NULL };
	_cleanup_close_ int m = m_fsmount("mqueue", opts, 0, err);
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
		return m_setattr(AT_FDCWD, op->path, false, MOUNT_ATTR_RDONLY, 0, err);
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
		return m_setattr(AT_FDCWD, op->path, true, op->attr_set, op->attr_clr, err);
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
static int o_apply_all(struct applier *o, struct dsh_error **err)
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

static void clone_dev_nodes(struct applier *a)
{
	for (size_t k = 0; k < ARRAY_SIZE(dev_node_names); k++) {
		char p[32];
		snprintf(p, sizeof(p), "/dev/%s", dev_node_names[k]);
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
		if (e->action == DSH_MOUNT_BIND_RW || e->action == DSH_MOUNT_BIND_RW_TMP) {
			_cleanup_close_ int t = open_target(e, err);
			int r = t < 0 ? t : m_open_tree(t, "", OPEN_TREE_CLONE | AT_RECURSIVE, err);
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
		int r = o_prepare(a, i, &plan->ordered[i], err);
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
	a.clones = malloc((n_clones ? n_clones : 1) * sizeof(int));
	if (!a.clones)
		return dsh_err_sys(err, ENOMEM, "mount");
	for (size_t i = 0; i < n_clones; i++)
		a.clones[i] = -1;

	int r = clone_sources(&a, err);
	/* Round 2: the whole tree read-only. */
	if (r >= 0 && plan->ro_root) {
		r = m_setattr(AT_FDCWD, "/", true, MOUNT_ATTR_RDONLY, 0, err);
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
		r = o_apply_all(&a, err);
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
