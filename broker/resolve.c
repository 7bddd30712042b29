/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A name in the caller's view (broker/internal.h).  The broker acts for the caller, never as itself:
 * a path starts at the caller's root or cwd, /proc/self is the caller, and the only magic links the
 * walk goes through are the caller's own (its descriptors, cwd and root).  Anything else on procfs,
 * where what an entry is depends on who opens it, is refused.
 *
 * Most names take the quick way: the parent opened by the kernel in one call with no symlink on the
 * way, the canonical path known lexically.  A symlink on the way, "..", or procfs: the walk, one
 * component at a time, each symlink read and followed by us from where the caller would follow it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "broker/internal.h"
#include "common/cleanup.h"
#include "common/resolve.h"
#include "policy/path.h"

/* procfs's root directory inode (PROC_ROOT_INO). */
#define PROC_ROOT_INO 1

void dsh_target_clear(struct target *t)
{
	if (t->pfd >= 0)
		close(t->pfd);
	if (t->obj >= 0)
		close(t->obj);
	free(t->name);
	free(t->canonical);
	free(t->spelled);
	*t = (struct target){ .pfd = -1, .obj = -1 };
}

static bool has_dot_dot(const char *path)
{
	for (const char *c = path; (c = strstr(c, "..")); c += 2)
		if ((c == path || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
			return true;
	return false;
}

static int refuse(struct call *c, const char *why, const char *what)
{
	snprintf(c->b->denial, sizeof(c->b->denial), "%s (%s)", what, why);
	return -EACCES;
}

/* ---- where the broker sees a name the caller reached in a mount namespace of its own ---- */

static uint64_t mnt_of(int fd)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}

static bool caller_in_our_mntns(struct call *c)
{
	return dsh_caller_mntns(c) == c->b->mntns;
}

/*
 * The directory dir the caller reached in its own mount namespace, where the kernel names it path:
 * the broker takes it for the same path in its own tree when that is the same directory, reached
 * through a mount with the same root at the same place (a nested sandbox binds the outer tree where
 * it was).  Checked from dir up to its mount's root: each step the same directory on both sides,
 * and the mount's root a mount's root on ours too.  Anything else: -EACCES, never a guess.
 */
static int same_place(int dir, const char *path)
{
	_cleanup_close_ int in = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	_cleanup_close_ int out = dsh_openat2(AT_FDCWD, path, O_PATH | O_DIRECTORY, 0,
					      RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (in < 0 || out < 0)
		return -EACCES;
	for (int depth = 0; depth < 4096; depth++) {
		struct stat a, b;
		if (fstat(in, &a) < 0 || fstat(out, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
			return -EACCES;
		uint64_t min = mnt_of(in), mout = mnt_of(out);
		int up_in = openat(in, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		int up_out = openat(out, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		bool root_in = up_in < 0 || mnt_of(up_in) != min, root_out = up_out < 0 || mnt_of(up_out) != mout;
		struct stat ua;
		if (!root_in && up_in >= 0 && fstat(up_in, &ua) == 0 && ua.st_ino == a.st_ino && ua.st_dev == a.st_dev)
			root_in = true; /* ".." of a namespace's root is itself */
		close(in);
		close(out);
		in = up_in;
		out = up_out;
		if (root_in || root_out)
			return root_in && root_out ? 0 : -EACCES;
	}
	return -EACCES;
}

/*
 * Whether a directory the caller reached lies on a file system of the command's own: one no mount of
 * the broker's shows, and of a kind that keeps its files in memory (a nested sandbox's tmpfs, its
 * own /dev), so that it holds no host file and nothing a rule could name.  An overlay the command
 * mounted is not one: its upper layer is a host directory, written through it.
 */
static bool own_fs(struct call *c, int dir)
{
	struct stat st;
	struct statfs sf;
	if (fstat(dir, &st) < 0 || fstatfs(dir, &sf) < 0)
		return false;
	if (sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC && sf.f_type != DEVPTS_SUPER_MAGIC)
		return false;
	for (size_t i = 0; i < c->b->n_mount_devs; i++)
		if (c->b->mount_devs[i] == st.st_dev)
			return false;
	return c->b->n_mount_devs > 0;
}

/*
 * The broker's canonical path of dir, which the caller reached: *ret NULL for a directory on a
 * file system of the command's own (nothing there is judged).
 */
static int broker_path(struct call *c, int dir, char **ret)
{
	*ret = NULL;
	bool ours = !c->b->nested || caller_in_our_mntns(c);
	if (!ours && own_fs(c, dir))
		return 0;
	int r = dsh_fd_path(dir, ret);
	if (r < 0 || ours)
		return r;
	if (same_place(dir, *ret) < 0) {
		r = refuse(c, "reached in a mount namespace of the command's own, at a place the sandbox shows "
			      "otherwise", *ret);
		free(*ret);
		*ret = NULL;
	}
	return r;
}

int dsh_resolve_fd_path(struct call *c, int fd, char **ret)
{
	*ret = NULL;
	int r = dsh_fd_path(fd, ret);
	if (r == -ENOENT || r == -EXDEV) {
		*ret = NULL; /* unnamed (O_TMPFILE, deleted, a pipe): no rule names it */
		return 0;
	}
	if (r < 0 || !c->b->nested || caller_in_our_mntns(c))
		return r;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (own_fs(c, fd)) {
		free(*ret);
		*ret = NULL;
		return 0;
	}
	if (S_ISDIR(st.st_mode))
		r = same_place(fd, *ret);
	else {
		/* A file: its directory, by name, holds this very file. */
		char *slash = strrchr(*ret, '/');
		_cleanup_free_ char *dir = strndup(*ret, slash && slash != *ret ? (size_t)(slash - *ret) : 1);
		_cleanup_close_ int d = dir ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		struct stat here;
		r = d >= 0 && fstatat(d, slash + 1, &here, AT_SYMLINK_NOFOLLOW) == 0 && here.st_ino == st.st_ino &&
				    here.st_dev == st.st_dev
			    ? same_place(d, dir)
			    : -EACCES;
	}
	if (r < 0) {
		r = refuse(c, "held in a mount namespace of the command's own, at a place the sandbox shows otherwise",
			   *ret);
		free(*ret);
		*ret = NULL;
	}
	return r;
}

/* ---- the walk ---- */

/* What is left of the path after a component: the rest, its separating slashes dropped (a leading
   slash in rest means the caller's root). */
static void skip_to(char *rest, const char *next)
{
	next += strspn(next, "/");
	memmove(rest, next, strlen(next) + 1);
}

enum proc_at {
	PROC_NONE,   /* not on procfs */
	PROC_TOP,    /* at a procfs root */
	PROC_OWN,    /* in the caller's own entry: "<tgid>/..." */
	PROC_ELSE,   /* anywhere else on procfs: another process, the system's files, or unknown */
};

struct walk {
	struct call *c;
	int root;            /* the caller's root: AT_FDCWD when it is the broker's */
	struct stat root_st;
	uint64_t root_mnt;
	int cur;             /* the directory reached, owned */
	enum proc_at proc;
	char tgid[16], tid[16]; /* the caller in the procfs the walk is in */
	char rel[64];        /* PROC_OWN: the components below the caller's entry, "fd", "task/12/fd" */
};

static void walk_set(struct walk *w, int fd)
{
	if (w->cur >= 0)
		close(w->cur);
	w->cur = fd;
}

static int open_root(struct walk *w)
{
	int fd = w->root == AT_FDCWD ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
				     : fcntl(w->root, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -errno : fd;
}

/* What the directory just entered (st) is on procfs, given the component that led there. */
static int proc_enter(struct walk *w, const struct stat *st, const char *comp)
{
	bool proc = dsh_broker_is_proc(w->c->b, st->st_dev, w->cur, "");
	if (!proc) {
		w->proc = PROC_NONE;
		return 0;
	}
	if (st->st_ino == PROC_ROOT_INO) {
		w->proc = PROC_TOP;
		return dsh_caller_in_proc(w->c, w->cur, w->tgid, w->tid) == -ENOENT ? -ENOENT : 0;
	}
	if (w->proc == PROC_TOP) {
		w->proc = w->tgid[0] && strcmp(comp, w->tgid) == 0 ? PROC_OWN : PROC_ELSE;
		w->rel[0] = '\0';
		return 0;
	}
	if (w->proc == PROC_OWN) {
		size_t n = strlen(w->rel);
		if (n + strlen(comp) + 2 >= sizeof(w->rel))
			w->proc = PROC_ELSE;
		else
			snprintf(w->rel + n, sizeof(w->rel) - n, "%s%s", n ? "/" : "", comp);
		return 0;
	}
	w->proc = PROC_ELSE; /* entered from outside procfs's root: whose it is, unknown */
	return 0;
}

/* Whether rel ("fd", "task/12/fd") is a directory of the caller's own magic links of kind what. */
static bool own_dir(const char *rel, const char *what)
{
	if (strcmp(rel, what) == 0)
		return true;
	const char *t = strncmp(rel, "task/", 5) == 0 ? rel + 5 : NULL;
	size_t digits = t ? strspn(t, "0123456789") : 0;
	return t && digits && t[digits] == '/' && strcmp(t + digits + 1, what) == 0;
}

/*
 * A symlink on procfs.  At its root: "self" and "thread-self" are the caller, any other a plain
 * link (its text, spliced into the rest).  In the caller's own entry: fd/N, cwd and root are the
 * caller's own (*obj).  Anything else: refused.  0 with *text (to follow) or *obj set; -errno.
 */
static int proc_link(struct walk *w, const char *comp, char *text, size_t cap, int *obj)
{
	struct call *c = w->c;
	*obj = -1;
	text[0] = '\0';
	if (w->proc == PROC_TOP) {
		if (!w->tgid[0])
			return refuse(c, "/proc/self of a procfs the broker cannot place the command in", comp);
		if (strcmp(comp, "self") == 0)
			snprintf(text, cap, "%s", w->tgid);
		else if (strcmp(comp, "thread-self") == 0)
			snprintf(text, cap, "%s/task/%s", w->tgid, w->tid);
		else {
			ssize_t n = readlinkat(w->cur, comp, text, cap - 1);
			if (n < 0)
				return -errno;
			text[n] = '\0';
		}
		return 0;
	}
	if (w->proc != PROC_OWN)
		return refuse(c, "a magic link of another process's, which the broker does not follow", comp);
	if (own_dir(w->rel, "fd") && strspn(comp, "0123456789") == strlen(comp) && strlen(comp) < 10) {
		*obj = dsh_caller_fd(c, atoi(comp));
		return *obj < 0 ? *obj : 0;
	}
	if (strcmp(w->rel, "") == 0 || (strncmp(w->rel, "task/", 5) == 0 && !strchr(w->rel + 5, '/'))) {
		if (strcmp(comp, "cwd") == 0)
			*obj = dsh_caller_cwd(c);
		else if (strcmp(comp, "root") == 0)
			*obj = w->root == AT_FDCWD ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : dsh_caller_root(c);
		else
			return refuse(c, "a magic link the broker does not follow", comp);
		return *obj < 0 ? (*obj == -1 ? -errno : *obj) : 0;
	}
	return refuse(c, "a magic link the broker does not follow", comp);
}

/* ".." from w->cur, staying at the caller's root. */
static int walk_up(struct walk *w)
{
	if (w->root != AT_FDCWD) {
		struct stat st;
		if (fstat(w->cur, &st) == 0 && st.st_dev == w->root_st.st_dev && st.st_ino == w->root_st.st_ino &&
		    mnt_of(w->cur) == w->root_mnt)
			return 0;
	}
	int up = openat(w->cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (up < 0)
		return -errno;
	walk_set(w, up);
	struct stat st;
	if (fstat(up, &st) < 0)
		return -errno;
	if (w->proc == PROC_OWN) {
		char *slash = strrchr(w->rel, '/');
		if (slash)
			*slash = '\0';
		else if (w->rel[0])
			w->rel[0] = '\0';
		else
			w->proc = PROC_TOP;
		if (w->proc != PROC_TOP)
			return 0;
	}
	if (dsh_broker_is_proc(w->c->b, st.st_dev, up, "") && st.st_ino == PROC_ROOT_INO) {
		w->proc = PROC_TOP;
		return dsh_caller_in_proc(w->c, up, w->tgid, w->tid) == -ENOENT ? -ENOENT : 0;
	}
	if (w->proc == PROC_TOP)
		w->proc = PROC_NONE; /* ".." of a procfs root: the directory it is mounted on */
	else if (w->proc != PROC_NONE)
		w->proc = PROC_ELSE;
	return 0;
}

/*
 * Walk path from w->cur.  Returns with w->cur the parent of the last component, *ret_name that
 * component, or with *ret_obj a caller's object reached through its own magic link as the last one.
 */
static int walk(struct walk *w, const char *path, bool follow, char **ret_name, int *ret_obj)
{
	_cleanup_free_ char *rest = strdup(path);
	if (!rest)
		return -ENOMEM;
	*ret_obj = -1;
	int hops = 0;
	for (;;) {
		if (rest[0] == '/') {
			int r = open_root(w);
			if (r < 0)
				return r;
			walk_set(w, r);
			w->proc = PROC_NONE;
		}
		char *p = rest + strspn(rest, "/");
		if (!*p) { /* the path ended at a directory: itself, as "." */
			*ret_name = strdup(".");
			return *ret_name ? 0 : -ENOMEM;
		}
		size_t len = strcspn(p, "/");
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, p, len);
		comp[len] = '\0';
		char *next = p + len;
		bool last = next[strspn(next, "/")] == '\0';
		bool dir_wanted = *next == '/'; /* a trailing slash: the name must be a directory */
		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
			if (strcmp(comp, "..") == 0) {
				int r = walk_up(w);
				if (r < 0)
					return r;
			}
			skip_to(rest, next);
			continue;
		}
		struct stat st;
		if (last && !dir_wanted && !follow) {
			*ret_name = strdup(comp);
			return *ret_name ? 0 : -ENOMEM;
		}
		if (fstatat(w->cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (last && errno == ENOENT) {
				*ret_name = strdup(comp);
				return *ret_name ? 0 : -ENOMEM;
			}
			return -errno;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++hops > DSH_MAX_SYMLINK_HOPS)
				return -ELOOP;
			char text[PATH_MAX + 1];
			int obj = -1, r;
			if (w->proc == PROC_TOP || w->proc == PROC_OWN || w->proc == PROC_ELSE ||
			    dsh_broker_is_proc(w->c->b, st.st_dev, w->cur, comp)) {
				r = proc_link(w, comp, text, sizeof(text), &obj);
			} else {
				ssize_t n = readlinkat(w->cur, comp, text, sizeof(text) - 1);
				r = n < 0 ? -errno : 0;
				if (n >= 0)
					text[n] = '\0';
			}
			if (r < 0)
				return r;
			if (obj >= 0) {
				/* The caller's own object: the target itself, or the directory to go on from. */
				struct stat ost;
				if (last && !dir_wanted) {
					*ret_obj = obj;
					return 0;
				}
				if (fstat(obj, &ost) < 0 || !S_ISDIR(ost.st_mode)) {
					close(obj);
					return -ENOTDIR;
				}
				walk_set(w, obj);
				if ((r = proc_enter(w, &ost, "")) < 0)
					return r;
				if (w->proc != PROC_NONE)
					w->proc = PROC_ELSE;
				skip_to(rest, next);
				continue;
			}
			/* The link's text, then what followed it. */
			size_t tl = strlen(text), nl = strlen(next);
			if (tl + nl + 2 > PATH_MAX)
				return -ENAMETOOLONG;
			char *joined = malloc(tl + nl + 2);
			if (!joined)
				return -ENOMEM;
			memcpy(joined, text, tl);
			memcpy(joined + tl, next, nl + 1);
			free(rest);
			rest = joined;
			continue;
		}
		if (last && !S_ISDIR(st.st_mode)) {
			if (dir_wanted)
				return -ENOTDIR;
			*ret_name = strdup(comp);
			return *ret_name ? 0 : -ENOMEM;
		}
		if (last) {
			*ret_name = strdup(comp);
			return *ret_name ? 0 : -ENOMEM;
		}
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		int d = openat(w->cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (d < 0)
			return errno == ELOOP ? -EAGAIN : -errno; /* raced into a symlink: the caller looks again */
		walk_set(w, d);
		int r = proc_enter(w, &st, comp);
		if (r < 0)
			return r;
		skip_to(rest, next);
	}
}

/* A name on a file system of the command's own: no canonical path, no spelling to judge. */
static int own_target(struct target *t)
{
	free(t->spelled);
	t->spelled = NULL;
	t->own_fs = true;
	return 0;
}

/*
 * The quick way: no "..", no symlink, no procfs on the way.  1 when it does not apply.  A name with
 * no directory before it (what *at calls on a dirfd mostly pass: tar, rm -r) is looked up in base
 * itself, which t takes over (*base -1) rather than opening "." again; the lookup of the name then
 * answers ENOTDIR where base is not a directory, as that open would have.  Given back with 1.
 */
static int quick(struct call *c, int *base, const char *base_path, int root, const char *path, bool follow,
		 struct target *t)
{
	size_t len = strlen(path);
	_cleanup_free_ char *cur = strdup(path);
	if (!cur)
		return -ENOMEM;
	while (len > 1 && cur[len - 1] == '/')
		cur[--len] = '\0';
	char *slash = strrchr(cur, '/');
	const char *name = slash ? slash + 1 : cur;
	if (!*name || strcmp(name, ".") == 0 || has_dot_dot(cur))
		return 1;
	_cleanup_free_ char *parent = slash ? strndup(cur, slash == cur ? 1 : (size_t)(slash - cur)) : strdup(".");
	if (!parent)
		return -ENOMEM;
	int dirfd = path[0] == '/' ? root : *base;
	const char *rel = parent;
	if (path[0] == '/' && root != AT_FDCWD)
		rel = parent[1] ? parent + 1 : ".";
	bool in_base = !slash && path[0] != '/';
	if (in_base) {
		t->pfd = *base;
		*base = -1;
	} else {
		t->pfd = dsh_openat2(dirfd, rel, O_PATH | O_DIRECTORY, 0, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (t->pfd < 0)
			return errno == ELOOP || errno == EXDEV ? 1 : -errno;
	}
	if (fstatat(t->pfd, name, &t->st, AT_SYMLINK_NOFOLLOW) == 0)
		t->exists = true;
	else if (errno != ENOENT)
		return -errno;
	if (t->exists && ((S_ISLNK(t->st.st_mode) && follow) || dsh_broker_is_proc(c->b, t->st.st_dev, t->pfd, name))) {
		if (in_base) {
			*base = t->pfd;
			t->pfd = -1;
		}
		return 1;
	}
	if (!(t->name = strdup(name)))
		return -ENOMEM;
	_cleanup_free_ char *pcanon = NULL;
	if (c->b->nested) {
		int r = broker_path(c, t->pfd, &pcanon);
		if (r < 0 || !pcanon)
			return r < 0 ? r : own_target(t);
	} else if (!(pcanon = dsh_path_normalize(path[0] == '/' ? "/" : base_path, parent))) {
		return -ENOMEM;
	}
	t->canonical = dsh_path_join(pcanon, name);
	return t->canonical ? 0 : -ENOMEM;
}

int dsh_resolve(struct call *c, int dirfd, const char *path, bool follow, struct target *t)
{
	*t = (struct target){ .pfd = -1, .obj = -1 };
	if (!*path)
		return -ENOENT;
	int r;
	_cleanup_close_ int base = -1, root = AT_FDCWD;
	_cleanup_free_ char *base_path = NULL;
	if (path[0] != '/') {
		base = dirfd == AT_FDCWD ? dsh_caller_cwd(c) : dsh_caller_fd(c, dirfd);
		if (base < 0)
			return base;
		if ((r = dsh_fd_path(base, &base_path)) < 0)
			return r;
	}
	if (c->b->nested && (root = dsh_caller_root(c)) < 0 && root != AT_FDCWD)
		return root;
	t->spelled = dsh_path_normalize(base_path, path);
	if (!t->spelled)
		return -ENOMEM;

	r = quick(c, &base, base_path, root, path, follow, t);
	if (r <= 0)
		return r;
	_cleanup_free_ char *spelled = TAKE_PTR(t->spelled);
	dsh_target_clear(t);
	t->spelled = TAKE_PTR(spelled);

	for (int attempt = 0; attempt < DSH_MAX_SYMLINK_HOPS; attempt++) {
		struct walk w = { .c = c, .root = root, .cur = -1 };
		if (root != AT_FDCWD && fstat(root, &w.root_st) < 0)
			return -errno;
		if (root != AT_FDCWD && !(w.root_mnt = mnt_of(root)))
			return -EIO;
		int start = path[0] == '/' ? -1 : fcntl(base, F_DUPFD_CLOEXEC, 3);
		if (path[0] != '/' && start < 0)
			return -errno;
		w.cur = start;
		struct stat st;
		if (start >= 0 && fstat(start, &st) == 0 && dsh_broker_is_proc(c->b, st.st_dev, start, ""))
			w.proc = st.st_ino == PROC_ROOT_INO ? PROC_TOP : PROC_ELSE;
		if (w.proc == PROC_TOP && (r = dsh_caller_in_proc(c, start, w.tgid, w.tid)) == -ENOENT)
			return r;
		char *name = NULL;
		int obj = -1;
		r = walk(&w, path, follow, &name, &obj);
		if (r == -EAGAIN) {
			walk_set(&w, -1);
			continue;
		}
		if (r < 0) {
			walk_set(&w, -1);
			return r;
		}
		if (obj >= 0) {
			walk_set(&w, -1);
			t->obj = obj;
			t->exists = fstat(obj, &t->st) == 0;
			t->proc_own = true;
			return dsh_resolve_fd_path(c, obj, &t->canonical);
		}
		t->pfd = w.cur;
		t->name = name;
		if (strcmp(name, ".") == 0) {
			t->exists = fstat(t->pfd, &t->st) == 0;
		} else if (fstatat(t->pfd, name, &t->st, AT_SYMLINK_NOFOLLOW) == 0) {
			t->exists = true;
		} else if (errno != ENOENT) {
			return -errno;
		}
		bool on_proc = w.proc != PROC_NONE ||
			       (t->exists && dsh_broker_is_proc(c->b, t->st.st_dev, t->pfd, name));
		if (on_proc && w.proc != PROC_OWN)
			return refuse(c, "on procfs outside the command's own entry, which the broker does not act on",
				      t->spelled);
		t->proc_own = w.proc == PROC_OWN;
		_cleanup_free_ char *pcanon = NULL;
		if ((r = broker_path(c, t->pfd, &pcanon)) < 0 || !pcanon)
			return r < 0 ? r : own_target(t);
		t->canonical = strcmp(name, ".") == 0 ? strdup(pcanon) : dsh_path_join(pcanon, name);
		return t->canonical ? 0 : -ENOMEM;
	}
	return -ELOOP;
}
