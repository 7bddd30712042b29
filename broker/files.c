/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The broker's file calls (broker/internal.h): creating opens, names made, removed, renamed and
 * linked, metadata changes and the attribute ioctls.  Each copies its arguments out of the caller
 * once, resolves in the caller's view (broker/resolve.c), decides (broker/decide.c), acts on the
 * broker's own copy through held descriptors, and answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "broker/internal.h"
#include "broker/subtree.h"
#include "common/cleanup.h"
#include "common/resolve.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

/* Looks at an open whose name a racing rename keeps changing, before ELOOP. */
#define MAX_ATTEMPTS 40
/* An xattr value the broker copies: the kernel's own limit (XATTR_SIZE_MAX). */
#define MAX_XATTR_VALUE 65536

static int read_path(struct call *c, uint64_t addr, char *buf)
{
	return dsh_caller_string(c, addr, buf, PATH_MAX, ENAMETOOLONG);
}

/* The old and the new name of a rename or a link. */
static int read_two_paths(struct call *c, uint64_t a, char *pa, uint64_t b, char *pb)
{
	int r = read_path(c, a, pa);
	return r < 0 ? r : read_path(c, b, pb);
}

/*
 * The caller's own object reached through /proc/self/fd/N (echo > /dev/stderr): opened anew, as
 * the kernel reopens what such a link names; nothing is created.
 */
static int reopen_obj(struct call *c, struct target *t, uint64_t flags)
{
	if (flags & O_EXCL)
		return dsh_call_answer(c, -EEXIST);
	bool writes = flags & (O_WRONLY | O_RDWR | O_TRUNC);
	if (writes && t->canonical && dsh_broker_create_denied(c->b, t))
		return dsh_call_answer(c, -EACCES);
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", t->obj);
	int fd = open(p, (int)(flags & ~(uint64_t)(O_CREAT | O_EXCL)) | O_CLOEXEC);
	return fd < 0 ? dsh_call_answer(c, -errno) : dsh_call_respond_fd(c, fd, flags & O_CLOEXEC);
}

static int do_open(struct call *c, int dirfd, uint64_t path_addr, uint64_t flags, uint64_t mode)
{
	char path[PATH_MAX];
	int r = read_path(c, path_addr, path);
	if (r < 0)
		return dsh_call_answer(c, r);
	if ((flags & __O_TMPFILE) == __O_TMPFILE) {
		/* An unnamed file in a directory: nothing is named until a linkat, which comes here too. */
		struct target t;
		r = dsh_resolve(c, dirfd, path, true, &t);
		int fd = -1;
		if (r >= 0) {
			dsh_broker_use_umask(c->b, dsh_caller_umask(c));
			fd = t.obj >= 0 ? -1 : openat(t.pfd, t.name, (int)flags | O_CLOEXEC, (mode_t)mode);
			r = t.obj >= 0 ? -EISDIR : fd < 0 ? -errno : 0;
		}
		dsh_target_clear(&t);
		return r < 0 ? dsh_call_answer(c, r) : dsh_call_respond_fd(c, fd, flags & O_CLOEXEC);
	}
	bool follow = !(flags & (O_EXCL | O_NOFOLLOW));
	for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		struct target t;
		r = dsh_resolve(c, dirfd, path, follow, &t);
		if (r >= 0 && t.obj >= 0) {
			r = reopen_obj(c, &t, flags);
			dsh_target_clear(&t);
			return r;
		}
		if (r < 0) {
			dsh_target_clear(&t);
			return dsh_call_answer(c, r);
		}
		if (t.exists && (flags & O_EXCL)) {
			dsh_target_clear(&t);
			return dsh_call_answer(c, -EEXIST);
		}
		if (t.exists && S_ISLNK(t.st.st_mode)) {
			dsh_target_clear(&t);
			return dsh_call_answer(c, -ELOOP);
		}
		/* Creating a name, or truncating one through an O_CREAT open: a rule's word first. */
		bool writes = !t.exists || (flags & (O_WRONLY | O_RDWR | O_TRUNC));
		if (((writes && dsh_broker_create_denied(c->b, &t)) || (!t.exists && dsh_broker_nondir_denied(c->b, &t))) &&
		    !dsh_broker_kernel_refuses_name(&t)) {
			dsh_target_clear(&t);
			return dsh_call_answer(c, -EACCES);
		}
		/* After the resolve: its pidfd_getfd proved the caller's kept entry (caller.c). */
		dsh_broker_use_umask(c->b, dsh_caller_umask(c));
		int fd = dsh_openat2(t.pfd, t.name, flags | O_NOFOLLOW, t.exists ? 0 : mode, RESOLVE_NO_MAGICLINKS);
		int e = errno;
		dsh_target_clear(&t);
		/* A symlink or a file raced into the name since we looked: look again. */
		if (fd < 0 && (e == ELOOP || (e == EEXIST && !(flags & O_EXCL))))
			continue;
		return fd < 0 ? dsh_call_answer(c, -e) : dsh_call_respond_fd(c, fd, flags & O_CLOEXEC);
	}
	return dsh_call_answer(c, -ELOOP);
}

/* mkdir, mknod, symlink: a new name. */
enum make { MAKE_DIR, MAKE_NODE, MAKE_SYMLINK };

static int do_make(struct call *c, enum make what, int dirfd, uint64_t path_addr, uint64_t mode, uint64_t dev,
		   uint64_t link_addr)
{
	char path[PATH_MAX], link[PATH_MAX];
	int r = read_path(c, path_addr, path);
	if (r >= 0 && what == MAKE_SYMLINK)
		r = read_path(c, link_addr, link);
	if (r < 0)
		return dsh_call_answer(c, r);
	struct target t;
	r = dsh_resolve(c, dirfd, path, false, &t);
	if (r >= 0 && t.exists)
		r = -EEXIST;
	if (r >= 0 &&
	    (dsh_broker_create_denied(c->b, &t) || (what != MAKE_DIR && dsh_broker_nondir_denied(c->b, &t)) ||
	     (what == MAKE_SYMLINK && dsh_broker_link_denied(c->b, &t, link))) &&
	    !dsh_broker_kernel_refuses_name(&t))
		r = -EACCES;
	if (r >= 0) {
		if (what != MAKE_SYMLINK)
			dsh_broker_use_umask(c->b, dsh_caller_umask(c));
		switch (what) {
		case MAKE_DIR:
			r = dsh_call_sys_result(mkdirat(t.pfd, t.name, (mode_t)mode));
			break;
		case MAKE_NODE:
			r = dsh_call_sys_result(mknodat(t.pfd, t.name, (mode_t)mode, (dev_t)dev));
			break;
		case MAKE_SYMLINK:
			r = dsh_call_sys_result(symlinkat(link, t.pfd, t.name));
			break;
		}
	}
	dsh_target_clear(&t);
	return dsh_call_answer(c, r);
}

/* unlink, unlinkat, rmdir: a name removed. */
static int do_remove(struct call *c, int dirfd, uint64_t path_addr, int flags)
{
	char path[PATH_MAX];
	int r = read_path(c, path_addr, path);
	if (r < 0)
		return dsh_call_answer(c, r);
	struct target t;
	r = dsh_resolve(c, dirfd, path, false, &t);
	if (r >= 0 && !t.exists)
		r = -ENOENT;
	if (r >= 0 && dsh_broker_guard(c->b, t.canonical, t.spelled) && !dsh_broker_kernel_refuses_name(&t))
		r = -EACCES;
	if (r >= 0)
		r = dsh_call_sys_result(unlinkat(t.pfd, t.name, flags));
	dsh_target_clear(&t);
	return dsh_call_answer(c, r);
}

static int do_rename(struct call *c, int odir, uint64_t opath, int ndir, uint64_t npath, unsigned flags)
{
	char op[PATH_MAX], np[PATH_MAX];
	int r = read_two_paths(c, opath, op, npath, np);
	if (r < 0)
		return dsh_call_answer(c, r);
	struct target o, n = { .pfd = -1, .obj = -1 };
	r = dsh_resolve(c, odir, op, false, &o);
	if (r >= 0)
		r = dsh_resolve(c, ndir, np, false, &n);
	if (r >= 0 && !o.exists)
		r = -ENOENT;
	/* The old name leaves: guarded.  The new name is replaced (guarded) or made (a rule's word);
	   an exchange makes the old name anew too.  Across mounts the kernel says EXDEV itself. */
	bool kernel = r >= 0 && (dsh_broker_mnt_id(o.pfd, "") != dsh_broker_mnt_id(n.pfd, "") || dsh_broker_kernel_refuses_name(&o) ||
				 dsh_broker_kernel_refuses_name(&n));
	if (r >= 0 && !kernel && dsh_broker_guard(c->b, o.canonical, o.spelled))
		r = -EACCES;
	if (r >= 0 && !kernel && n.exists && dsh_broker_guard(c->b, n.canonical, n.spelled))
		r = -EACCES;
	if (r >= 0 && !kernel && dsh_broker_create_denied(c->b, &n))
		r = -EACCES;
	if (r >= 0 && !kernel && (flags & RENAME_EXCHANGE) && dsh_broker_create_denied(c->b, &o))
		r = -EACCES;
	if (r >= 0 && !kernel && !S_ISDIR(o.st.st_mode) && dsh_broker_nondir_denied(c->b, &n))
		r = -EACCES;
	if (r >= 0 && !kernel && (dsh_broker_moved_link_denied(c->b, &o, &n) ||
				  ((flags & RENAME_EXCHANGE) && dsh_broker_moved_link_denied(c->b, &n, &o))))
		r = -EACCES;
	/* A directory brings its descendants to new names as well (subtree.c: why no call of the
	   command can add one between this walk and the rename); an exchange moves both trees. */
	if (r >= 0 && !kernel && S_ISDIR(o.st.st_mode) && !n.own_fs)
		r = dsh_broker_subtree_check(c->b->policy, o.pfd, o.name, n.canonical, n.spelled,
					     DSH_SUBTREE_MAX_ENTRIES);
	if (r >= 0 && !kernel && (flags & RENAME_EXCHANGE) && n.exists && S_ISDIR(n.st.st_mode) && !o.own_fs)
		r = dsh_broker_subtree_check(c->b->policy, n.pfd, n.name, o.canonical, o.spelled,
					     DSH_SUBTREE_MAX_ENTRIES);
	if (r == -EACCES && !c->b->denial[0])
		snprintf(c->b->denial, sizeof(c->b->denial), "%s (a name moved with it would be one a rule protects)",
			 n.canonical);
	if (r >= 0)
		r = dsh_call_sys_result(renameat2(o.pfd, o.name, n.pfd, n.name, flags));
	dsh_target_clear(&o);
	dsh_target_clear(&n);
	return dsh_call_answer(c, r);
}

static int do_link(struct call *c, int odir, uint64_t opath, int ndir, uint64_t npath, int flags)
{
	char op[PATH_MAX], np[PATH_MAX];
	int r = read_two_paths(c, opath, op, npath, np);
	if (r < 0)
		return dsh_call_answer(c, r);
	struct target o = { .pfd = -1, .obj = -1 }, n = { .pfd = -1, .obj = -1 };
	int src = -1;
	const char *src_path = NULL;
	if (!*op && (flags & AT_EMPTY_PATH)) {
		/* The descriptor itself (an O_TMPFILE given its name). */
		o.obj = dsh_caller_fd(c, odir);
		r = o.obj < 0 ? o.obj : dsh_resolve_fd_path(c, o.obj, &o.canonical);
	} else {
		r = dsh_resolve(c, odir, op, flags & AT_SYMLINK_FOLLOW, &o);
		if (r >= 0 && o.obj < 0 && !o.exists)
			r = -ENOENT;
	}
	if (o.obj >= 0) {
		/* The caller's own descriptor, reached by AT_EMPTY_PATH or /proc/self/fd/N. */
		src = o.obj;
		src_path = o.canonical;
		if (r >= 0 && src_path && dsh_broker_guard(c->b, src_path, NULL))
			r = -EACCES;
	}
	if (r >= 0)
		r = dsh_resolve(c, ndir, np, false, &n);
	/* Across mounts (a masked file is a mount of its own) the kernel says EXDEV itself. */
	bool kernel = r >= 0 && (dsh_broker_kernel_refuses_name(&n) ||
				 (src < 0 && dsh_broker_mnt_id(o.pfd, o.name) != dsh_broker_mnt_id(n.pfd, "")));
	/* A protected file gets no second name: the rule names the first one only. */
	if (r >= 0 && !kernel && src < 0 && dsh_broker_guard(c->b, o.canonical, o.spelled))
		r = -EACCES;
	if (r >= 0 && n.exists)
		r = -EEXIST;
	if (r >= 0 && !kernel && dsh_broker_create_denied(c->b, &n))
		r = -EACCES;
	/* A hard link is never a directory: no second name on the way to a target; a symlink's
	   second name is a symlink there. */
	if (r >= 0 && !kernel && (dsh_broker_nondir_denied(c->b, &n) || (src < 0 && dsh_broker_moved_link_denied(c->b, &o, &n))))
		r = -EACCES;
	if (r >= 0 && src >= 0) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", src);
		r = dsh_call_sys_result(linkat(AT_FDCWD, p, n.pfd, n.name, AT_SYMLINK_FOLLOW));
	} else if (r >= 0) {
		r = dsh_call_sys_result(linkat(o.pfd, o.name, n.pfd, n.name, 0));
	}
	dsh_target_clear(&o);
	dsh_target_clear(&n);
	return dsh_call_answer(c, r);
}

/* The metadata calls: chmod, chown, utimes, xattrs, truncate. */
enum meta { META_CHMOD, META_CHOWN, META_TIMES, META_SETXATTR, META_REMOVEXATTR, META_TRUNCATE };

struct meta_args {
	enum meta what;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec ts[2];
	bool ts_now;        /* NULL times: now */
	char xname[256];
	char *xvalue;
	size_t xsize;
	int xflags;
	off_t length;
};

/* Act on the resolved name (never followed here: resolve() already went through symlinks). */
static int meta_on_name(const struct target *t, const struct meta_args *m)
{
	char p[PATH_MAX + 64];
	switch (m->what) {
	case META_CHMOD: {
		if (S_ISLNK(t->st.st_mode))
			return -EOPNOTSUPP;
		_cleanup_close_ int fd = openat(t->pfd, t->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		struct stat st;
		if (fstat(fd, &st) < 0)
			return -errno;
		if (S_ISLNK(st.st_mode))
			return -EOPNOTSUPP;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		return dsh_call_sys_result(chmod(p, m->mode));
	}
	case META_CHOWN:
		return dsh_call_sys_result(fchownat(t->pfd, t->name, m->uid, m->gid, AT_SYMLINK_NOFOLLOW));
	case META_TIMES:
		return dsh_call_sys_result(utimensat(t->pfd, t->name, m->ts_now ? NULL : m->ts, AT_SYMLINK_NOFOLLOW));
	case META_SETXATTR:
	case META_REMOVEXATTR:
		/* Through the held parent: the last component is not followed (l*xattr). */
		snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", t->pfd, t->name);
		return m->what == META_SETXATTR ? dsh_call_sys_result(lsetxattr(p, m->xname, m->xvalue, m->xsize, m->xflags))
						: dsh_call_sys_result(lremovexattr(p, m->xname));
	case META_TRUNCATE: {
		if (S_ISDIR(t->st.st_mode))
			return -EISDIR;
		_cleanup_close_ int fd = openat(t->pfd, t->name, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		struct stat st;
		if (fstat(fd, &st) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode))
			return -EINVAL;
		return dsh_call_sys_result(ftruncate(fd, m->length));
	}
	}
	return -ENOSYS;
}

/*
 * Act on the caller's descriptor (our duplicate of it), whose fstat is st.  It may be an O_PATH
 * descriptor (glibc's fchmodat(AT_SYMLINK_NOFOLLOW) spells chmod("/proc/self/fd/N") on one), which
 * fchmod and friends refuse with EBADF: the inode is then reached through our own /proc/self/fd
 * link, as the caller meant.  Any other goes to the call on the descriptor, which makes no lookup.
 */
static int meta_on_fd(int fd, const struct stat *st, const struct meta_args *m)
{
	/* chown and truncate take any descriptor; the rest refuse a symlink's, as the kernel does. */
	if (S_ISLNK(st->st_mode) && m->what != META_CHOWN && m->what != META_TRUNCATE)
		return -EOPNOTSUPP;
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	const struct timespec *ts = m->ts_now ? NULL : m->ts;
	int r;
	switch (m->what) {
	case META_CHMOD:
		if ((r = fchmod(fd, m->mode)) < 0 && errno == EBADF)
			r = chmod(p, m->mode);
		return dsh_call_sys_result(r);
	case META_CHOWN:
		return dsh_call_sys_result(fchownat(fd, "", m->uid, m->gid, AT_EMPTY_PATH));
	case META_TIMES:
		if ((r = futimens(fd, ts)) < 0 && errno == EBADF)
			r = utimensat(AT_FDCWD, p, ts, 0);
		return dsh_call_sys_result(r);
	case META_SETXATTR:
		if ((r = fsetxattr(fd, m->xname, m->xvalue, m->xsize, m->xflags)) < 0 && errno == EBADF)
			r = setxattr(p, m->xname, m->xvalue, m->xsize, m->xflags);
		return dsh_call_sys_result(r);
	case META_REMOVEXATTR:
		if ((r = fremovexattr(fd, m->xname)) < 0 && errno == EBADF)
			r = removexattr(p, m->xname);
		return dsh_call_sys_result(r);
	case META_TRUNCATE:
		return dsh_call_sys_result(ftruncate(fd, m->length));
	}
	return -ENOSYS;
}

/* path_addr 0 with fd >= 0: the descriptor itself (fchmod, fchown, futimens, f*xattr). */
static int do_meta(struct call *c, int dirfd, uint64_t path_addr, bool follow, bool empty_path_ok,
		   struct meta_args *m)
{
	char path[PATH_MAX] = "";
	int r = path_addr ? read_path(c, path_addr, path) : 0;
	if (r < 0)
		return dsh_call_answer(c, r);
	struct target t;
	if (!*path && (!path_addr || empty_path_ok)) {
		t = (struct target){ .pfd = -1, .obj = dsh_caller_fd(c, dirfd) };
		r = t.obj < 0 ? t.obj : dsh_resolve_fd_path(c, t.obj, &t.canonical);
	} else {
		r = dsh_resolve(c, dirfd, path, follow, &t);
	}
	if (r >= 0 && t.obj >= 0) {
		/* The descriptor itself: fchmod and friends, AT_EMPTY_PATH, /proc/self/fd/N. */
		struct stat st;
		if (fstat(t.obj, &st) < 0)
			r = -errno;
		else if (t.canonical && dsh_broker_meta_denied(c->b, t.canonical, NULL, &st) && !dsh_broker_ro_fd(t.obj))
			r = -EACCES;
		if (r >= 0)
			r = meta_on_fd(t.obj, &st, m);
		dsh_target_clear(&t);
		return dsh_call_answer(c, r);
	}

	if (r >= 0 && !t.exists)
		r = -ENOENT;
	if (r >= 0 && dsh_broker_meta_denied(c->b, t.canonical, t.spelled, &t.st) &&
	    !dsh_broker_kernel_refuses_meta(&t))
		r = -EACCES;
	if (r >= 0)
		r = meta_on_name(&t, m);
	dsh_target_clear(&t);
	return dsh_call_answer(c, r);
}

/*
 * The ioctls that change an inode's attributes (chattr, the project id, the version, fs-verity):
 * served like chmod on a descriptor, since a descriptor opened for reading is enough for them and
 * neither Landlock nor the landlock backend's tree sees them.  Refused where the file may not be
 * written (a rule's word or outside the writable roots), unless its mount is read-only and the
 * kernel says so itself.
 */
static int do_attr_ioctl(struct call *c)
{
	unsigned cmd = (unsigned)ARG(1);
	_cleanup_close_ int mine = dsh_caller_fd(c, (int)ARG(0));
	if (mine < 0)
		return dsh_call_answer(c, mine);
	if (c->b->no_getfd) { /* an O_PATH copy: the ioctl needs the file open */
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", mine);
		int fd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return dsh_call_answer(c, -errno);
		close(mine);
		mine = fd;
	}
	_cleanup_free_ char *path = NULL;
	int r = dsh_resolve_fd_path(c, mine, &path);
	if (r < 0)
		return dsh_call_answer(c, r);
	struct stat st;
	if (path && fstat(mine, &st) < 0)
		return dsh_call_answer(c, -errno);
	if (path && dsh_broker_meta_denied(c->b, path, NULL, &st) && !dsh_broker_ro_fd(mine))
		return dsh_call_answer(c, -EACCES);
	union {
		int i;
		struct fsxattr x;
		struct fsverity_enable_arg v;
	} arg;
	memset(&arg, 0, sizeof(arg));
	_cleanup_free_ char *salt = NULL, *sig = NULL;
	switch (cmd) {
	case FS_IOC_FSSETXATTR:
		r = dsh_caller_read(c, ARG(2), &arg.x, sizeof(arg.x));
		break;
	case FS_IOC_ENABLE_VERITY:
		/* Its salt and signature are the caller's too: copied, and pointed at our copies. */
		r = dsh_caller_read(c, ARG(2), &arg.v, sizeof(arg.v));
		if (r >= 0 && (arg.v.salt_size > 32 || arg.v.sig_size > 16128))
			r = -EINVAL;
		if (r >= 0 && arg.v.salt_size && (salt = malloc(arg.v.salt_size)) &&
		    (r = dsh_caller_read(c, arg.v.salt_ptr, salt, arg.v.salt_size)) >= 0)
			arg.v.salt_ptr = (uint64_t)(uintptr_t)salt;
		if (r >= 0 && arg.v.sig_size && (sig = malloc(arg.v.sig_size)) &&
		    (r = dsh_caller_read(c, arg.v.sig_ptr, sig, arg.v.sig_size)) >= 0)
			arg.v.sig_ptr = (uint64_t)(uintptr_t)sig;
		if (r >= 0 && ((arg.v.salt_size && !salt) || (arg.v.sig_size && !sig)))
			r = -ENOMEM;
		break;
	case FS_IOC_SETFLAGS:
	case FS_IOC32_SETFLAGS:
	case FS_IOC_SETVERSION:
	case FS_IOC32_SETVERSION: /* the kernel reads an int for each */
		r = dsh_caller_read(c, ARG(2), &arg.i, sizeof(arg.i));
		break;
	default: /* nothing else is sent here (seccomp/seccomp.c) */
		r = -ENOTTY;
		break;
	}
	if (r < 0)
		return dsh_call_answer(c, r);
	return dsh_call_answer(c, dsh_call_sys_result(ioctl(mine, cmd, &arg)));
}

/* utimes and futimesat only: asm-generic architectures (aarch64, riscv64) have neither. */
#if defined(__NR_utimes) && defined(__NR_futimesat)
static int read_timeval_pair(struct call *c, uint64_t addr, struct meta_args *m)
{
	if (!addr) {
		m->ts_now = true;
		return 0;
	}
	struct timeval tv[2];
	int r = dsh_caller_read(c, addr, tv, sizeof(tv));
	if (r < 0)
		return r;
	for (int i = 0; i < 2; i++) {
		if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
			return -EINVAL;
		m->ts[i] = (struct timespec){ tv[i].tv_sec, tv[i].tv_usec * 1000 };
	}
	return 0;
}
#endif

static int read_xattr(struct call *c, uint64_t name_addr, uint64_t value_addr, size_t size, struct meta_args *m)
{
	int r = dsh_caller_string(c, name_addr, m->xname, sizeof(m->xname), ERANGE);
	if (r < 0 || !value_addr)
		return r;
	if (size > MAX_XATTR_VALUE)
		return -E2BIG;
	m->xvalue = malloc(size ? size : 1);
	if (!m->xvalue)
		return -ENOMEM;
	m->xsize = size;
	return size ? dsh_caller_read(c, value_addr, m->xvalue, size) : 0;
}

/* The calls that change what a file is: its size, mode, owner, times and extended attributes. */
static int meta_call(struct call *c, int nr)
{
	struct meta_args m = { 0 };
	int r = 0;
	_cleanup_free_ char *xvalue = NULL;
	switch (nr) {
	case __NR_truncate:
		m = (struct meta_args){ .what = META_TRUNCATE, .length = (off_t)ARG(1) };
		return do_meta(c, AT_FDCWD, ARG(0), true, false, &m);
#ifdef __NR_chmod
	case __NR_chmod:
		m = (struct meta_args){ .what = META_CHMOD, .mode = (mode_t)ARG(1) };
		return do_meta(c, AT_FDCWD, ARG(0), true, false, &m);
#endif
	case __NR_fchmod:
		m = (struct meta_args){ .what = META_CHMOD, .mode = (mode_t)ARG(1) };
		return do_meta(c, (int)ARG(0), 0, true, true, &m);
	case __NR_fchmodat:
		m = (struct meta_args){ .what = META_CHMOD, .mode = (mode_t)ARG(2) };
		return do_meta(c, (int)ARG(0), ARG(1), true, false, &m);
	case __NR_fchmodat2:
		m = (struct meta_args){ .what = META_CHMOD, .mode = (mode_t)ARG(2) };
		return do_meta(c, (int)ARG(0), ARG(1), !(ARG(3) & AT_SYMLINK_NOFOLLOW), ARG(3) & AT_EMPTY_PATH, &m);
#ifdef __NR_chown
	case __NR_chown:
	case __NR_lchown:
		m = (struct meta_args){ .what = META_CHOWN, .uid = (uid_t)ARG(1), .gid = (gid_t)ARG(2) };
		return do_meta(c, AT_FDCWD, ARG(0), nr == __NR_chown, false, &m);
#endif
	case __NR_fchown:
		m = (struct meta_args){ .what = META_CHOWN, .uid = (uid_t)ARG(1), .gid = (gid_t)ARG(2) };
		return do_meta(c, (int)ARG(0), 0, true, true, &m);
	case __NR_fchownat:
		m = (struct meta_args){ .what = META_CHOWN, .uid = (uid_t)ARG(2), .gid = (gid_t)ARG(3) };
		return do_meta(c, (int)ARG(0), ARG(1), !(ARG(4) & AT_SYMLINK_NOFOLLOW), ARG(4) & AT_EMPTY_PATH, &m);
#ifdef __NR_utime
	case __NR_utime: {
		m.what = META_TIMES;
		if (ARG(1)) {
			struct utimbuf u;
			if ((r = dsh_caller_read(c, ARG(1), &u, sizeof(u))) < 0)
				return dsh_call_answer(c, r);
			m.ts[0] = (struct timespec){ u.actime, 0 };
			m.ts[1] = (struct timespec){ u.modtime, 0 };
		} else {
			m.ts_now = true;
		}
		return do_meta(c, AT_FDCWD, ARG(0), true, false, &m);
	}
#endif
#if defined(__NR_utimes) && defined(__NR_futimesat)
	case __NR_utimes:
	case __NR_futimesat: {
		m.what = META_TIMES;
		int dirfd = nr == __NR_utimes ? AT_FDCWD : (int)ARG(0);
		uint64_t path = nr == __NR_utimes ? ARG(0) : ARG(1), times = nr == __NR_utimes ? ARG(1) : ARG(2);
		if ((r = read_timeval_pair(c, times, &m)) < 0)
			return dsh_call_answer(c, r);
		return do_meta(c, dirfd, path, true, false, &m);
	}
#endif
	case __NR_utimensat:
		m.what = META_TIMES;
		if (ARG(2)) {
			if ((r = dsh_caller_read(c, ARG(2), m.ts, sizeof(m.ts))) < 0)
				return dsh_call_answer(c, r);
		} else {
			m.ts_now = true;
		}
		/* A NULL path is the descriptor itself (futimens). */
		return do_meta(c, (int)ARG(0), ARG(1), !(ARG(3) & AT_SYMLINK_NOFOLLOW), ARG(3) & AT_EMPTY_PATH, &m);
	case __NR_setxattr:
	case __NR_lsetxattr:
	case __NR_fsetxattr:
		m = (struct meta_args){ .what = META_SETXATTR, .xflags = (int)ARG(4) };
		r = read_xattr(c, ARG(1), ARG(2), (size_t)ARG(3), &m);
		xvalue = m.xvalue;
		if (r < 0)
			return dsh_call_answer(c, r);
		if (nr == __NR_fsetxattr)
			return do_meta(c, (int)ARG(0), 0, true, true, &m);
		return do_meta(c, AT_FDCWD, ARG(0), nr == __NR_setxattr, false, &m);
	case __NR_removexattr:
	case __NR_lremovexattr:
	case __NR_fremovexattr:
		m.what = META_REMOVEXATTR;
		if ((r = read_xattr(c, ARG(1), 0, 0, &m)) < 0)
			return dsh_call_answer(c, r);
		if (nr == __NR_fremovexattr)
			return do_meta(c, (int)ARG(0), 0, true, true, &m);
		return do_meta(c, AT_FDCWD, ARG(0), nr == __NR_removexattr, false, &m);
	default:
		/* setxattrat, removexattrat (Linux 6.13) and anything else sent here: not served yet,
		   and libc falls back on ENOSYS. */
		return dsh_call_answer(c, -ENOSYS);
	}
}

/* Serve a file call (any notified call but the socket ones, broker/sockets.c). */
int dsh_broker_file_call(struct call *c)
{
	int nr = c->req->data.nr;
	switch (nr) {
#ifdef __NR_open
	case __NR_open:
		return do_open(c, AT_FDCWD, ARG(0), ARG(1), ARG(2));
#endif
	case __NR_openat:
		return do_open(c, (int)ARG(0), ARG(1), ARG(2), ARG(3));
#ifdef __NR_creat
	case __NR_creat:
		return do_open(c, AT_FDCWD, ARG(0), O_CREAT | O_WRONLY | O_TRUNC, ARG(1));
#endif
#ifdef __NR_mkdir
	case __NR_mkdir:
		return do_make(c, MAKE_DIR, AT_FDCWD, ARG(0), ARG(1), 0, 0);
#endif
	case __NR_mkdirat:
		return do_make(c, MAKE_DIR, (int)ARG(0), ARG(1), ARG(2), 0, 0);
#ifdef __NR_mknod
	case __NR_mknod:
		return do_make(c, MAKE_NODE, AT_FDCWD, ARG(0), ARG(1), ARG(2), 0);
#endif
	case __NR_mknodat:
		return do_make(c, MAKE_NODE, (int)ARG(0), ARG(1), ARG(2), ARG(3), 0);
#ifdef __NR_symlink
	case __NR_symlink:
		return do_make(c, MAKE_SYMLINK, AT_FDCWD, ARG(1), 0, 0, ARG(0));
#endif
	case __NR_symlinkat:
		return do_make(c, MAKE_SYMLINK, (int)ARG(1), ARG(2), 0, 0, ARG(0));
#ifdef __NR_link
	case __NR_link:
		return do_link(c, AT_FDCWD, ARG(0), AT_FDCWD, ARG(1), 0);
#endif
	case __NR_linkat:
		return do_link(c, (int)ARG(0), ARG(1), (int)ARG(2), ARG(3), (int)ARG(4));
#ifdef __NR_rename
	case __NR_rename:
		return do_rename(c, AT_FDCWD, ARG(0), AT_FDCWD, ARG(1), 0);
#endif
#ifdef __NR_renameat
	case __NR_renameat:
		return do_rename(c, (int)ARG(0), ARG(1), (int)ARG(2), ARG(3), 0);
#endif
	case __NR_renameat2:
		return do_rename(c, (int)ARG(0), ARG(1), (int)ARG(2), ARG(3), (unsigned)ARG(4));
#ifdef __NR_unlink
	case __NR_unlink:
		return do_remove(c, AT_FDCWD, ARG(0), 0);
#endif
	case __NR_unlinkat:
		return do_remove(c, (int)ARG(0), ARG(1), (int)ARG(2) & AT_REMOVEDIR);
#ifdef __NR_rmdir
	case __NR_rmdir:
		return do_remove(c, AT_FDCWD, ARG(0), AT_REMOVEDIR);
#endif
	case __NR_ioctl:
		return do_attr_ioctl(c);
	default:
		return meta_call(c, nr);
	}
}
