/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime broker (broker.h).  Every handler follows the same shape: copy the arguments out of
 * the caller (once), resolve the target in the caller's view, decide, act on our own copy through
 * held descriptors, answer.  The caller's registers and memory are never read again after the
 * decision, so a racing thread of the command changes nothing that was checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "broker/broker.h"
#include "broker/internal.h"
#include "broker/subtree.h"
#include "common/cleanup.h"
#include "common/resolve.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
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

/* ---- decisions ---- */

/* Whether path is target or a directory on the way to it. */
static bool on_the_way(const char *path, const char *target)
{
	size_t n = strlen(path);
	if (strcmp(path, "/") == 0)
		return true;
	return strncmp(target, path, n) == 0 && (target[n] == '\0' || target[n] == '/');
}

/* What the call being served is refused for, kept until its answer (respond). */
static void note_denial(struct dsh_broker *b, const char *path, const char *what, bool is_rule)
{
	if (!what)
		what = "?";
	if (is_rule)
		snprintf(b->denial, sizeof(b->denial), "%s (rule \"%s\")", path, what);
	else
		snprintf(b->denial, sizeof(b->denial), "%s (on the way to %s, a glob's match)", path, what);
}

/* The rule (or plan target) that keeps name from being removed, renamed, replaced or changed. */
static const char *guard(struct dsh_broker *b, const char *canonical, const char *spelled)
{
	if (!canonical)
		return NULL; /* a file system of the command's own: nothing of the host's */
	const struct dsh_rule *r = dsh_policy_guarded(b->policy, canonical);
	if (!r && spelled && strcmp(spelled, canonical) != 0)
		r = dsh_policy_guarded(b->policy, spelled);
	if (r) {
		note_denial(b, canonical, dsh_rule_text(r), true);
		return dsh_rule_text(r);
	}
	for (size_t i = 0; b->targets && b->targets[i]; i++)
		if (on_the_way(canonical, b->targets[i])) {
			note_denial(b, canonical, b->targets[i], false);
			return b->targets[i];
		}
	return NULL;
}

/*
 * Where the kernel refuses by itself — a read-only mount (the sandbox's own tree: r- binds, masks,
 * everything outside the writable roots), a mount point, two mounts — the broker lets the kernel
 * answer: the call fails either way, and with the errno a program expects (EROFS, EBUSY, EXDEV).
 */
static uint64_t mnt_id(int dirfd, const char *name)
{
	struct statx sx;
	int flags = AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH);
	if (statx(dirfd, name, flags, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}

static bool ro_fd(int fd)
{
	struct statvfs v;
	return fstatvfs(fd, &v) == 0 && (v.f_flag & ST_RDONLY);
}

/* A change of this name (create, remove, rename) that the kernel refuses anyway. */
static bool kernel_refuses_name(const struct target *t)
{
	if (ro_fd(t->pfd))
		return true;
	uint64_t here = mnt_id(t->pfd, "");
	return t->exists && here && mnt_id(t->pfd, t->name) != here; /* a mount point: EBUSY */
}

/* A metadata change of this name's inode that the kernel refuses anyway (its mount is read-only). */
static bool kernel_refuses_meta(const struct target *t)
{
	_cleanup_close_ int fd = openat(t->pfd, t->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 && ro_fd(fd);
}

/* Whether a rule forbids writing (creating) this name; the mode's own limits are the kernel's. */
static bool create_denied(struct dsh_broker *b, const struct target *t)
{
	struct dsh_verdict v;
	if (t->own_fs)
		return false;
	if (dsh_policy_decide(b->policy, DSH_OP_WRITE, t->canonical, t->spelled, &v) < 0)
		return true;
	if (!v.allow && v.rule)
		note_denial(b, t->canonical, dsh_rule_text(v.rule), true);
	return !v.allow && v.rule;
}

/*
 * Whether a new name t that is not a directory is refused: it lies on the way to an r-/-- target
 * (an absent .git under the default r- .git/config, b under -- b/secret, the literal directory of
 * a glob), where only a directory may be made.  A symlink would lead the target's path, for whoever
 * follows it later, to a tree the command chose; a file is followed by some readers too (git reads
 * a .git file's "gitdir:" and takes that directory's config and hooks).
 */
static bool nondir_denied(struct dsh_broker *b, const struct target *t)
{
	return guard(b, t->canonical, t->spelled) != NULL;
}

/*
 * Whether a symlink with the text link may not take the name t: from there it would lead a rule
 * around (dsh_broker_link_redirects) — a host reader following it would read, as a path the rule
 * covers, a file the command wrote elsewhere.
 */
static bool link_denied(struct dsh_broker *b, const struct target *t, const char *link)
{
	const struct dsh_rule *r = NULL;
	if (t->own_fs)
		return false;
	int rc = dsh_broker_link_redirects(b->policy, t->canonical, link, &r);
	if (rc > 0)
		snprintf(b->denial, sizeof(b->denial), "%s (a symlink to %s would lead around rule \"%s\")", t->canonical,
			 link, dsh_rule_text(r));
	return rc != 0;
}

/* The same for the symlink from, when it takes the name to (renamed, or linked). */
static bool moved_link_denied(struct dsh_broker *b, const struct target *from, const struct target *to)
{
	if (!from->exists || !S_ISLNK(from->st.st_mode))
		return false;
	char link[PATH_MAX];
	ssize_t n = readlinkat(from->pfd, from->name, link, sizeof(link) - 1);
	if (n < 0)
		return true; /* a link that cannot be read cannot be judged */
	link[n] = '\0';
	return link_denied(b, to, link);
}

/* ---- answers ---- */

static int respond(struct call *c, int64_t val, int error)
{
	struct seccomp_notif_resp resp = { .id = c->req->id, .val = error ? 0 : val, .error = error ? -error : 0 };
	if (error == EACCES) {
		c->b->refused++;
		/* the first refusal that knows its reason is kept for the run's note */
		if (!c->b->first_refusal[0] && c->b->denial[0])
			memcpy(c->b->first_refusal, c->b->denial, DSH_REFUSAL_MAX);
	}
	if (ioctl(c->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* A result of ours: 0 or -errno from a call the broker made. */
static int answer(struct call *c, int r)
{
	return respond(c, r < 0 ? 0 : r, r < 0 ? -r : 0);
}

/* A descriptor the broker opened, installed in the caller as the call's result. */
static int respond_fd(struct call *c, int fd, bool cloexec)
{
	struct seccomp_notif_addfd a = {
		.id = c->req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int r = ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	if (r < 0 && errno == EINVAL) {
		/* Before 5.14 there is no SECCOMP_ADDFD_FLAG_SEND: install, then answer with the number.
		   The caller is still blocked in the call, so nothing of it sees the descriptor before. */
		a.flags = 0;
		r = ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
		close(fd);
		if (r < 0)
			return errno == ENOENT ? 0 : respond(c, 0, errno);
		return respond(c, r, 0);
	}
	close(fd);
	if (r < 0 && errno != ENOENT)
		return respond(c, 0, errno);
	return 0;
}

static int sys_result(int r)
{
	return r < 0 ? -errno : r;
}

/* ---- handlers: each returns the call's result (>= 0) or -errno, or answers itself ---- */

/*
 * The caller's own object reached through /proc/self/fd/N (echo > /dev/stderr): opened anew, as
 * the kernel reopens what such a link names; nothing is created.
 */
static int reopen_obj(struct call *c, struct target *t, uint64_t flags)
{
	if (flags & O_EXCL)
		return answer(c, -EEXIST);
	bool writes = flags & (O_WRONLY | O_RDWR | O_TRUNC);
	if (writes && t->canonical && create_denied(c->b, t))
		return answer(c, -EACCES);
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", t->obj);
	int fd = open(p, (int)(flags & ~(uint64_t)(O_CREAT | O_EXCL)) | O_CLOEXEC);
	return fd < 0 ? answer(c, -errno) : respond_fd(c, fd, flags & O_CLOEXEC);
}

static int do_open(struct call *c, int dirfd, uint64_t path_addr, uint64_t flags, uint64_t mode)
{
	char path[PATH_MAX];
	int r = read_path(c, path_addr, path);
	if (r < 0)
		return answer(c, r);
	mode_t um = dsh_caller_umask(c);
	if ((flags & __O_TMPFILE) == __O_TMPFILE) {
		/* An unnamed file in a directory: nothing is named until a linkat, which comes here too. */
		struct target t;
		r = dsh_resolve(c, dirfd, path, true, &t);
		int fd = -1;
		if (r >= 0) {
			mode_t old = umask(um);
			fd = t.obj >= 0 ? -1 : openat(t.pfd, t.name, (int)flags | O_CLOEXEC, (mode_t)mode);
			r = t.obj >= 0 ? -EISDIR : fd < 0 ? -errno : 0;
			umask(old);
		}
		dsh_target_clear(&t);
		return r < 0 ? answer(c, r) : respond_fd(c, fd, flags & O_CLOEXEC);
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
			return answer(c, r);
		}
		if (t.exists && (flags & O_EXCL)) {
			dsh_target_clear(&t);
			return answer(c, -EEXIST);
		}
		if (t.exists && S_ISLNK(t.st.st_mode)) {
			dsh_target_clear(&t);
			return answer(c, -ELOOP);
		}
		/* Creating a name, or truncating one through an O_CREAT open: a rule's word first. */
		bool writes = !t.exists || (flags & (O_WRONLY | O_RDWR | O_TRUNC));
		if (((writes && create_denied(c->b, &t)) || (!t.exists && nondir_denied(c->b, &t))) &&
		    !kernel_refuses_name(&t)) {
			dsh_target_clear(&t);
			return answer(c, -EACCES);
		}
		mode_t old = umask(um);
		int fd = dsh_openat2(t.pfd, t.name, flags | O_NOFOLLOW, t.exists ? 0 : mode, RESOLVE_NO_MAGICLINKS);
		int e = errno;
		umask(old);
		dsh_target_clear(&t);
		/* A symlink or a file raced into the name since we looked: look again. */
		if (fd < 0 && (e == ELOOP || (e == EEXIST && !(flags & O_EXCL))))
			continue;
		return fd < 0 ? answer(c, -e) : respond_fd(c, fd, flags & O_CLOEXEC);
	}
	return answer(c, -ELOOP);
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
		return answer(c, r);
	mode_t um = dsh_caller_umask(c);
	struct target t;
	r = dsh_resolve(c, dirfd, path, false, &t);
	if (r >= 0 && t.exists)
		r = -EEXIST;
	if (r >= 0 &&
	    (create_denied(c->b, &t) || (what != MAKE_DIR && nondir_denied(c->b, &t)) ||
	     (what == MAKE_SYMLINK && link_denied(c->b, &t, link))) &&
	    !kernel_refuses_name(&t))
		r = -EACCES;
	if (r >= 0) {
		mode_t old = umask(um);
		switch (what) {
		case MAKE_DIR:
			r = sys_result(mkdirat(t.pfd, t.name, (mode_t)mode));
			break;
		case MAKE_NODE:
			r = sys_result(mknodat(t.pfd, t.name, (mode_t)mode, (dev_t)dev));
			break;
		case MAKE_SYMLINK:
			r = sys_result(symlinkat(link, t.pfd, t.name));
			break;
		}
		umask(old);
	}
	dsh_target_clear(&t);
	return answer(c, r);
}

/* unlink, unlinkat, rmdir: a name removed. */
static int do_remove(struct call *c, int dirfd, uint64_t path_addr, int flags)
{
	char path[PATH_MAX];
	int r = read_path(c, path_addr, path);
	if (r < 0)
		return answer(c, r);
	struct target t;
	r = dsh_resolve(c, dirfd, path, false, &t);
	if (r >= 0 && !t.exists)
		r = -ENOENT;
	if (r >= 0 && guard(c->b, t.canonical, t.spelled) && !kernel_refuses_name(&t))
		r = -EACCES;
	if (r >= 0)
		r = sys_result(unlinkat(t.pfd, t.name, flags));
	dsh_target_clear(&t);
	return answer(c, r);
}

static int do_rename(struct call *c, int odir, uint64_t opath, int ndir, uint64_t npath, unsigned flags)
{
	char op[PATH_MAX], np[PATH_MAX];
	int r = read_path(c, opath, op);
	if (r >= 0)
		r = read_path(c, npath, np);
	if (r < 0)
		return answer(c, r);
	struct target o, n = { .pfd = -1, .obj = -1 };
	r = dsh_resolve(c, odir, op, false, &o);
	if (r >= 0)
		r = dsh_resolve(c, ndir, np, false, &n);
	if (r >= 0 && !o.exists)
		r = -ENOENT;
	/* The old name leaves: guarded.  The new name is replaced (guarded) or made (a rule's word);
	   an exchange makes the old name anew too.  Across mounts the kernel says EXDEV itself. */
	bool kernel = r >= 0 && (mnt_id(o.pfd, "") != mnt_id(n.pfd, "") || kernel_refuses_name(&o) ||
				 kernel_refuses_name(&n));
	if (r >= 0 && !kernel && guard(c->b, o.canonical, o.spelled))
		r = -EACCES;
	if (r >= 0 && !kernel && n.exists && guard(c->b, n.canonical, n.spelled))
		r = -EACCES;
	if (r >= 0 && !kernel && create_denied(c->b, &n))
		r = -EACCES;
	if (r >= 0 && !kernel && (flags & RENAME_EXCHANGE) && create_denied(c->b, &o))
		r = -EACCES;
	if (r >= 0 && !kernel && !S_ISDIR(o.st.st_mode) && nondir_denied(c->b, &n))
		r = -EACCES;
	if (r >= 0 && !kernel && (moved_link_denied(c->b, &o, &n) ||
				  ((flags & RENAME_EXCHANGE) && moved_link_denied(c->b, &n, &o))))
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
		r = sys_result(renameat2(o.pfd, o.name, n.pfd, n.name, flags));
	dsh_target_clear(&o);
	dsh_target_clear(&n);
	return answer(c, r);
}

static int do_link(struct call *c, int odir, uint64_t opath, int ndir, uint64_t npath, int flags)
{
	char op[PATH_MAX], np[PATH_MAX];
	int r = read_path(c, opath, op);
	if (r >= 0)
		r = read_path(c, npath, np);
	if (r < 0)
		return answer(c, r);
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
		if (r >= 0 && src_path && guard(c->b, src_path, NULL))
			r = -EACCES;
	}
	if (r >= 0)
		r = dsh_resolve(c, ndir, np, false, &n);
	/* Across mounts (a masked file is a mount of its own) the kernel says EXDEV itself. */
	bool kernel = r >= 0 && (kernel_refuses_name(&n) ||
				 (src < 0 && mnt_id(o.pfd, o.name) != mnt_id(n.pfd, "")));
	/* A protected file gets no second name: the rule names the first one only. */
	if (r >= 0 && !kernel && src < 0 && guard(c->b, o.canonical, o.spelled))
		r = -EACCES;
	if (r >= 0 && n.exists)
		r = -EEXIST;
	if (r >= 0 && !kernel && create_denied(c->b, &n))
		r = -EACCES;
	/* A hard link is never a directory: no second name on the way to a target; a symlink's
	   second name is a symlink there. */
	if (r >= 0 && !kernel && (nondir_denied(c->b, &n) || (src < 0 && moved_link_denied(c->b, &o, &n))))
		r = -EACCES;
	if (r >= 0 && src >= 0) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", src);
		r = sys_result(linkat(AT_FDCWD, p, n.pfd, n.name, AT_SYMLINK_FOLLOW));
	} else if (r >= 0) {
		r = sys_result(linkat(o.pfd, o.name, n.pfd, n.name, 0));
	}
	dsh_target_clear(&o);
	dsh_target_clear(&n);
	return answer(c, r);
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
		return sys_result(chmod(p, m->mode));
	}
	case META_CHOWN:
		return sys_result(fchownat(t->pfd, t->name, m->uid, m->gid, AT_SYMLINK_NOFOLLOW));
	case META_TIMES:
		return sys_result(utimensat(t->pfd, t->name, m->ts_now ? NULL : m->ts, AT_SYMLINK_NOFOLLOW));
	case META_SETXATTR:
	case META_REMOVEXATTR:
		/* Through the held parent: the last component is not followed (l*xattr). */
		snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", t->pfd, t->name);
		return m->what == META_SETXATTR ? sys_result(lsetxattr(p, m->xname, m->xvalue, m->xsize, m->xflags))
						: sys_result(lremovexattr(p, m->xname));
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
		return sys_result(ftruncate(fd, m->length));
	}
	}
	return -ENOSYS;
}

/*
 * Act on the caller's descriptor (our duplicate of it).  It may be an O_PATH descriptor (glibc's
 * fchmodat(AT_SYMLINK_NOFOLLOW) spells chmod("/proc/self/fd/N") on one), which fchmod and friends
 * refuse: the inode is reached through our own /proc/self/fd link instead, as the caller meant.
 */
static int meta_on_fd(int fd, const struct meta_args *m)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	bool link = S_ISLNK(st.st_mode);
	switch (m->what) {
	case META_CHMOD:
		return link ? -EOPNOTSUPP : sys_result(chmod(p, m->mode));
	case META_CHOWN:
		return sys_result(fchownat(fd, "", m->uid, m->gid, AT_EMPTY_PATH));
	case META_TIMES:
		return link ? -EOPNOTSUPP : sys_result(utimensat(AT_FDCWD, p, m->ts_now ? NULL : m->ts, 0));
	case META_SETXATTR:
		return link ? -EOPNOTSUPP : sys_result(setxattr(p, m->xname, m->xvalue, m->xsize, m->xflags));
	case META_REMOVEXATTR:
		return link ? -EOPNOTSUPP : sys_result(removexattr(p, m->xname));
	case META_TRUNCATE:
		return sys_result(ftruncate(fd, m->length));
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
		return answer(c, r);
	struct target t;
	if (!*path && (!path_addr || empty_path_ok)) {
		t = (struct target){ .pfd = -1, .obj = dsh_caller_fd(c, dirfd) };
		r = t.obj < 0 ? t.obj : dsh_resolve_fd_path(c, t.obj, &t.canonical);
	} else {
		r = dsh_resolve(c, dirfd, path, follow, &t);
	}
	if (r >= 0 && t.obj >= 0) {
		/* The descriptor itself: fchmod and friends, AT_EMPTY_PATH, /proc/self/fd/N. */
		if (t.canonical && guard(c->b, t.canonical, NULL))
			r = -EACCES;
		if (r >= 0)
			r = meta_on_fd(t.obj, m);
		dsh_target_clear(&t);
		return answer(c, r);
	}

	if (r >= 0 && !t.exists)
		r = -ENOENT;
	if (r >= 0 && guard(c->b, t.canonical, t.spelled) && !kernel_refuses_meta(&t))
		r = -EACCES;
	if (r >= 0)
		r = meta_on_name(&t, m);
	dsh_target_clear(&t);
	return answer(c, r);
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
		return answer(c, mine);
	if (c->b->no_getfd) { /* an O_PATH copy: the ioctl needs the file open */
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", mine);
		int fd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return answer(c, -errno);
		close(mine);
		mine = fd;
	}
	_cleanup_free_ char *path = NULL;
	int r = dsh_resolve_fd_path(c, mine, &path);
	if (r < 0)
		return answer(c, r);
	if (path && !ro_fd(mine)) {
		struct dsh_verdict v;
		if (guard(c->b, path, NULL) ||
		    dsh_policy_decide(c->b->policy, DSH_OP_WRITE, path, NULL, &v) < 0 || !v.allow) {
			if (!c->b->denial[0])
				snprintf(c->b->denial, sizeof(c->b->denial), "%s (its attributes: a file the command may not write)",
					 path);
			return answer(c, -EACCES);
		}
	}
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
	default: /* nothing else is sent here (supervisor/seccomp.c) */
		r = -ENOTTY;
		break;
	}
	if (r < 0)
		return answer(c, r);
	return answer(c, sys_result(ioctl(mine, cmd, &arg)));
}

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

/* ---- sockets (SPEC 3.11) ---- */

/* Largest payload one brokered send copies; a datagram larger than this fails as the kernel's own
   limits would (EMSGSIZE), a stream send is a short write. */
#define MAX_SEND (4u << 20)
/* Largest ancillary data copied (the kernel's optmem_max is 20 KiB to 128 KiB). */
#define MAX_CONTROL (128u << 10)
/* Most sockets one run records as bound by itself. */
#define MAX_BOUND 4096

static bool caller_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && !(fl & O_NONBLOCK);
}

/* The path of an AF_UNIX pathname address, or NULL (abstract, unnamed, another family). */
static const char *unix_path(struct sockaddr_storage *ss, socklen_t len)
{
	struct sockaddr_un *un = (struct sockaddr_un *)ss;
	size_t off = offsetof(struct sockaddr_un, sun_path);
	if (ss->ss_family != AF_UNIX || len <= off || un->sun_path[0] == '\0')
		return NULL;
	/* The kernel takes the bytes up to len and ends them itself. */
	((char *)ss)[len < sizeof(*ss) ? len : sizeof(*ss) - 1] = '\0';
	return un->sun_path;
}

/*
 * An abstract AF_UNIX address as the broker records it: "@" and the name's bytes in hex (a name may
 * hold any byte, NUL included).  NULL for any other address.
 */
static bool abstract(const struct sockaddr_storage *ss, socklen_t len)
{
	return ss->ss_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) + 1 &&
	       ((const struct sockaddr_un *)ss)->sun_path[0] == '\0';
}

static char *abstract_key(const struct sockaddr_storage *ss, socklen_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)ss;
	if (!abstract(ss, len))
		return NULL;
	size_t n = len - offsetof(struct sockaddr_un, sun_path) - 1;
	char *key = malloc(2 * n + 2);
	if (!key)
		return NULL;
	key[0] = '@';
	for (size_t i = 0; i < n; i++)
		snprintf(key + 1 + 2 * i, 3, "%02x", (unsigned char)un->sun_path[1 + i]);
	return key;
}

/* The same for an abstract name as allowUnixSockets spells it: "@name". */
static bool abstract_listed(struct dsh_broker *b, const char *key)
{
	for (size_t i = 0; b->allowed_sockets && b->allowed_sockets[i]; i++) {
		const char *a = b->allowed_sockets[i];
		if (a[0] != '@' || strlen(key) != 1 + 2 * strlen(a + 1))
			continue;
		bool same = true;
		for (size_t k = 0; same && a[1 + k]; k++) {
			char hex[3];
			snprintf(hex, sizeof(hex), "%02x", (unsigned char)a[1 + k]);
			same = memcmp(key + 1 + 2 * k, hex, 2) == 0;
		}
		if (same)
			return true;
	}
	return false;
}

static bool socket_bound(struct dsh_broker *b, const char *key)
{
	for (size_t i = 0; i < b->n_bound; i++)
		if (strcmp(b->bound[i], key) == 0)
			return true;
	return false;
}

/*
 * An abstract destination (SPEC 3.11): abstract sockets live in the network namespace, the host's
 * with the network on, where Landlock's scoping (6.12) is their only other wall.  Reached when this
 * run bound the name or allowUnixSockets lists it; -EACCES otherwise.  0 for any other address.
 */
static int abstract_destination(struct call *c, const struct sockaddr_storage *ss, socklen_t len)
{
	if (!abstract(ss, len))
		return 0;
	_cleanup_free_ char *key = abstract_key(ss, len);
	if (!key)
		return -ENOMEM;
	if (socket_bound(c->b, key) || abstract_listed(c->b, key))
		return 0;
	snprintf(c->b->denial, sizeof(c->b->denial), "abstract unix socket %s (not bound by this run, not in "
		 "allowUnixSockets)", key);
	return -EACCES;
}

static int read_addr(struct call *c, uint64_t addr, uint64_t len, struct sockaddr_storage *ss, socklen_t *ret_len)
{
	memset(ss, 0, sizeof(*ss));
	if (len > sizeof(*ss) || (int64_t)len < 0)
		return -EINVAL;
	*ret_len = (socklen_t)len;
	return len ? dsh_caller_read(c, addr, ss, (size_t)len) : 0;
}

/* Whether the command may reach the socket at this canonical path. */
static bool socket_allowed(struct dsh_broker *b, const char *canonical)
{
	if (socket_bound(b, canonical))
		return true;
	for (size_t i = 0; b->allowed_sockets && b->allowed_sockets[i]; i++) {
		if (strcmp(b->allowed_sockets[i], canonical) == 0)
			return true;
		char real[PATH_MAX];
		if (realpath(b->allowed_sockets[i], real) && strcmp(real, canonical) == 0)
			return true;
	}
	return false;
}

/*
 * Resolve a pathname socket in the caller's view (from its cwd, following symlinks as connect does)
 * and decide.  0 with *t filled: reach it through (t->pfd, t->name); -errno otherwise.
 */
static int unix_target(struct call *c, const char *path, struct target *t)
{
	/* An allowed socket as the caller spells it: through the directory held from the host, which
	   the sandbox's own tree may hide. */
	if (c->b->n_held) {
		_cleanup_free_ char *spelled = NULL;
		if (path[0] == '/') {
			spelled = dsh_path_normalize(NULL, path);
		} else {
			_cleanup_close_ int base = dsh_caller_cwd(c);
			_cleanup_free_ char *bp = NULL;
			if (base >= 0 && dsh_fd_path(base, &bp) >= 0)
				spelled = dsh_path_normalize(bp, path);
		}
		for (size_t i = 0; spelled && i < c->b->n_held; i++) {
			const struct dsh_held_socket *h = &c->b->held[i];
			if (strcmp(spelled, h->path) != 0 && strcmp(spelled, h->canonical) != 0)
				continue;
			*t = (struct target){ .pfd = fcntl(h->dir, F_DUPFD_CLOEXEC, 3), .name = strdup(h->name),
					      .canonical = strdup(h->canonical), .exists = true };
			if (t->pfd < 0 || !t->name || !t->canonical)
				return -ENOMEM;
			return 0;
		}
	}
	int r = dsh_resolve(c, AT_FDCWD, path, true, t);
	if (r < 0)
		return r;
	if (!t->exists)
		return -ENOENT;
	/* Not a socket (a masked one is a mode-000 file): the kernel says so itself, if allowed.  On a
	   file system of the command's own it is one the sandbox bound. */
	if (t->own_fs || socket_allowed(c->b, t->canonical))
		return 0;
	snprintf(c->b->denial, sizeof(c->b->denial), "%s (protectSockets: a socket this run did not bind, not in "
		 "allowUnixSockets)", t->canonical);
	return -EACCES;
}

/*
 * Run fn(arg) with the broker's cwd at dir: a socket name is spelled relative to its held parent,
 * so a long path still fits sun_path and no component is looked up again.
 */
static int in_dir(int dir, int (*fn)(void *), void *arg)
{
	_cleanup_close_ int here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (here < 0 || fchdir(dir) < 0)
		return -errno;
	int r = fn(arg);
	int e = errno;
	if (fchdir(here) < 0)
		abort(); /* the broker would resolve nothing right from now on */
	errno = e;
	return r;
}

/* Address a socket call at (dir, name): name in a sockaddr_un of its own. */
static int relative_addr(const struct target *t, struct sockaddr_un *un, socklen_t *len)
{
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	size_t n = strlen(t->name);
	if (n >= sizeof(un->sun_path))
		return -ENAMETOOLONG;
	memcpy(un->sun_path, t->name, n);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

struct sock_op {
	int fd;
	struct sockaddr_storage ss;
	socklen_t len;
	struct msghdr mh;
	struct iovec iov;
	int flags;
	size_t total;        /* bytes to send */
	pid_t sigpipe_to;    /* the caller, when it did not ask for MSG_NOSIGNAL; else 0 */
};

/*
 * The broker sends with MSG_NOSIGNAL (a SIGPIPE is the caller's, not init's); a caller that did not
 * ask for it gets the signal the kernel would have sent it.
 */
static ssize_t send_as_caller(struct sock_op *o, int flags)
{
	ssize_t n = sendmsg(o->fd, &o->mh, flags | MSG_NOSIGNAL);
	if (n < 0 && errno == EPIPE && o->sigpipe_to > 0) {
		int e = errno;
		(void)kill(o->sigpipe_to, SIGPIPE);
		errno = e;
	}
	return n;
}

static int op_connect(void *arg)
{
	struct sock_op *o = arg;
	return connect(o->fd, (struct sockaddr *)&o->ss, o->len);
}

static int64_t op_connect_blocking(void *arg)
{
	return op_connect(arg) < 0 ? -errno : 0;
}

static int op_bind(void *arg)
{
	struct sock_op *o = arg;
	return bind(o->fd, (struct sockaddr *)&o->ss, o->len);
}

static int op_send_now(void *arg)
{
	struct sock_op *o = arg;
	return (int)send_as_caller(o, o->flags);
}

/* The rest of a send, blocking as the caller's own call would; the total sent, or -errno. */
static int64_t op_send_rest(void *arg)
{
	struct sock_op *o = arg;
	size_t done = o->total - o->iov.iov_len;
	while (o->iov.iov_len > 0 || (o->total == 0 && done == 0)) {
		ssize_t n = send_as_caller(o, o->flags & ~MSG_DONTWAIT);
		if (n < 0)
			return done ? (int64_t)done : -errno;
		done += (size_t)n;
		if (o->total == 0)
			break;
		o->iov.iov_base = (char *)o->iov.iov_base + n;
		o->iov.iov_len -= (size_t)n;
		o->mh.msg_control = NULL; /* sent with the first bytes */
		o->mh.msg_controllen = 0;
		if (o->mh.msg_name)
			break; /* a datagram goes whole or not at all */
	}
	return (int64_t)done;
}

/*
 * A call that may block (connect on a blocking socket, a send that would wait for room): done by a
 * short-lived thread of the broker, which answers the notification itself, so the broker goes on
 * serving every other call meanwhile.  Only for calls whose target needs no check that a later
 * rename could undo (no pathname destination).  The thread owns its copy of everything — the
 * socket's duplicate, the data, the control data and its descriptors — and touches no state of the
 * broker's: only the listener, whose ioctls the kernel serialises.  A thread, not a child: a fork
 * of init per connect cost a millisecond.
 */
typedef int64_t (*deferred_fn)(void *arg);

struct job {
	struct sock_op o;
	deferred_fn fn;
	int listener;
	uint64_t id;
	char *data, *control;
	int *fds;
	size_t n_fds;
};

/* Threads at work at once, at most: past that a blocking call waits in the broker itself (the
   command stalls its own brokered calls, and init's memory stays bounded). */
#define MAX_JOBS 256
static unsigned jobs;

static void job_free(struct job *j)
{
	__atomic_sub_fetch(&jobs, 1, __ATOMIC_RELAXED);
	if (j->o.fd >= 0)
		close(j->o.fd);
	for (size_t i = 0; i < j->n_fds; i++)
		close(j->fds[i]);
	free(j->fds);
	free(j->data);
	free(j->control);
	free(j);
}

static void *job_run(void *arg)
{
	struct job *j = arg;
	int64_t r = j->fn(&j->o);
	struct seccomp_notif_resp resp = { .id = j->id, .val = r < 0 ? 0 : r, .error = r < 0 ? (int32_t)r : 0 };
	(void)ioctl(j->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	job_free(j);
	return NULL;
}

/*
 * Hand o to a thread.  data, control and fds (o's buffers, may be NULL) become the thread's: the
 * caller's pointers are cleared.  Without a thread the call blocks here rather than fail.
 */
static int defer(struct call *c, deferred_fn fn, struct sock_op *o, char **data, char **control, int **fds,
		 size_t *n_fds)
{
	bool room = __atomic_add_fetch(&jobs, 1, __ATOMIC_RELAXED) <= MAX_JOBS;
	struct job *j = room ? calloc(1, sizeof(*j)) : NULL;
	int fd = j ? fcntl(o->fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (fd < 0) {
		__atomic_sub_fetch(&jobs, 1, __ATOMIC_RELAXED);
		free(j);
		int64_t r = fn(o);
		return r < 0 ? respond(c, 0, (int)-r) : respond(c, r, 0);
	}
	*j = (struct job){ .o = *o, .fn = fn, .listener = c->listener, .id = c->req->id };
	j->o.fd = fd;
	if (o->mh.msg_name)
		j->o.mh.msg_name = &j->o.ss;
	j->o.mh.msg_iov = &j->o.iov;
	if (data) {
		j->data = *data;
		*data = NULL;
	}
	if (control) {
		j->control = *control;
		*control = NULL;
	}
	if (fds) {
		j->fds = *fds;
		j->n_fds = *n_fds;
		*fds = NULL;
		*n_fds = 0;
	}
	pthread_attr_t attr;
	pthread_t t;
	int e = pthread_attr_init(&attr);
	if (e == 0) {
		(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		(void)pthread_attr_setstacksize(&attr, 64 * 1024);
		e = pthread_create(&t, &attr, job_run, j);
		pthread_attr_destroy(&attr);
	}
	if (e != 0) {
		int64_t r = fn(&j->o);
		job_free(j);
		return r < 0 ? respond(c, 0, (int)-r) : respond(c, r, 0);
	}
	return 0;
}

/* connect and bind's socket (a copy of the caller's descriptor) and address: the copy, or -errno. */
static int sock_args(struct call *c, struct sock_op *o)
{
	int r = read_addr(c, ARG(1), ARG(2), &o->ss, &o->len);
	if (r < 0)
		return r;
	return o->fd = dsh_caller_fd(c, (int)ARG(0));
}

/*
 * A pathname unix destination of a connect or a send: checked (unix_target), and o's address
 * rewritten relative to the directory t then holds (cleared by the caller), for in_dir.
 */
static int unix_destination(struct call *c, const char *path, struct sock_op *o, struct target *t)
{
	int r = unix_target(c, path, t);
	struct sockaddr_un un;
	if (r >= 0)
		r = relative_addr(t, &un, &o->len);
	if (r >= 0)
		memcpy(&o->ss, &un, sizeof(un));
	return r;
}

static int do_connect(struct call *c)
{
	struct sock_op o = { .fd = -1 };
	_cleanup_close_ int fd = sock_args(c, &o);
	if (fd < 0)
		return answer(c, fd);
	int r;
	const char *path = unix_path(&o.ss, o.len);
	if (path) {
		/* Done here, between two notifications: no rename of the command's can swap the name
		   between the check and the connect.  A unix connect waits only while the listener's
		   backlog is full. */
		struct target t;
		r = unix_destination(c, path, &o, &t);
		if (r >= 0)
			r = in_dir(t.pfd, op_connect, &o) < 0 ? -errno : 0;
		dsh_target_clear(&t);
		return answer(c, r);
	}
	if ((r = abstract_destination(c, &o.ss, o.len)) < 0)
		return answer(c, r);
	/* Another family, or an allowed abstract or unnamed unix address: nothing more to check, but
	   a blocking connect (a TCP handshake) must not hold up every other brokered call. */
	if (caller_blocking(fd))
		return defer(c, op_connect_blocking, &o, NULL, NULL, NULL, NULL);
	return answer(c, op_connect(&o) < 0 ? -errno : 0);
}

static int record_bound(struct dsh_broker *b, const char *canonical)
{
	if (b->n_bound >= MAX_BOUND)
		return 0; /* connects to it are refused: the run bound more sockets than anyone needs */
	char **v = realloc(b->bound, (b->n_bound + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	b->bound = v;
	if (!(v[b->n_bound] = strdup(canonical)))
		return -ENOMEM;
	b->n_bound++;
	return 0;
}

static int do_bind(struct call *c)
{
	struct sock_op o = { .fd = -1 };
	_cleanup_close_ int fd = sock_args(c, &o);
	if (fd < 0)
		return answer(c, fd);
	int r;
	const char *path = unix_path(&o.ss, o.len);
	if (!path) {
		if (op_bind(&o) < 0)
			return answer(c, -errno);
		/* An abstract name (or one the kernel chose: autobind) is this run's from now on. */
		struct sockaddr_storage got;
		socklen_t got_len = sizeof(got);
		_cleanup_free_ char *key = NULL;
		if (getsockname(fd, (struct sockaddr *)&got, &got_len) == 0 && (key = abstract_key(&got, got_len)) &&
		    record_bound(c->b, key) < 0)
			return answer(c, -ENOMEM);
		return answer(c, 0);
	}
	/* A new name, as mknod makes one: a rule's word first. */
	mode_t um = dsh_caller_umask(c);
	struct target t;
	r = dsh_resolve(c, AT_FDCWD, path, false, &t);
	if (r >= 0 && t.exists)
		r = -EADDRINUSE;
	if (r >= 0 && (create_denied(c->b, &t) || nondir_denied(c->b, &t)) && !kernel_refuses_name(&t))
		r = -EACCES;
	if (r >= 0) {
		struct sockaddr_un un;
		r = relative_addr(&t, &un, &o.len);
		memcpy(&o.ss, &un, sizeof(un));
	}
	if (r >= 0) {
		mode_t old = umask(um);
		r = in_dir(t.pfd, op_bind, &o) < 0 ? -errno : 0;
		umask(old);
	}
	if (r >= 0 && !t.own_fs)
		r = record_bound(c->b, t.canonical);
	dsh_target_clear(&t);
	return answer(c, r);
}

/* The caller's descriptors in SCM_RIGHTS, replaced by the broker's duplicates (closed by the caller). */
static int translate_rights(struct call *c, struct msghdr *mh, int **ret_fds, size_t *ret_n)
{
	*ret_fds = NULL;
	*ret_n = 0;
	const char *end = (const char *)mh->msg_control + mh->msg_controllen;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		/* The caller wrote cmsg_len: it must stay inside the copy, as the kernel requires. */
		if (cm->cmsg_len < CMSG_LEN(0) || cm->cmsg_len > (size_t)(end - (const char *)cm))
			return -EINVAL;
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *fds = realloc(*ret_fds, (*ret_n + n) * sizeof(int));
		if (!fds)
			return -ENOMEM;
		*ret_fds = fds;
		for (size_t i = 0; i < n; i++) {
			int theirs;
			memcpy(&theirs, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			int mine = dsh_caller_fd(c, theirs);
			if (mine < 0)
				return mine == -ENOENT ? -ENOENT : -EBADF;
			fds[(*ret_n)++] = mine;
			memcpy(CMSG_DATA(cm) + i * sizeof(int), &mine, sizeof(int));
		}
	}
	return 0;
}

/*
 * One send: o holds our copy of the caller's message (its data flattened into one buffer).  A
 * pathname destination is checked and sent to here, without waiting (a full receiver: EAGAIN after
 * a bounded wait); anything else is tried without waiting and, when the caller's socket blocks, the
 * rest is sent by a deferred child.  *ret is the call's result when the call was answered here
 * (0 returned), or the caller must not answer (1 returned: a child answers).
 */
static int send_one(struct call *c, struct sock_op *o, bool may_defer, int64_t *ret)
{
	bool wait = caller_blocking(o->fd) && !(o->flags & MSG_DONTWAIT);
	const char *path = o->mh.msg_name ? unix_path(&o->ss, o->len) : NULL;
	if (path) {
		struct target t;
		int r = unix_destination(c, path, o, &t);
		if (r >= 0) {
			o->mh.msg_namelen = o->len;
			o->flags |= MSG_DONTWAIT;
			for (int i = 0; i < 100; i++) {
				r = in_dir(t.pfd, op_send_now, o);
				if (r >= 0 || errno != EAGAIN || !wait)
					break;
				usleep(10000);
			}
			r = r < 0 ? -errno : r;
		}
		dsh_target_clear(&t);
		*ret = r;
		return 0;
	}
	int r = o->mh.msg_name ? abstract_destination(c, &o->ss, o->len) : 0;
	if (r < 0) {
		*ret = r;
		return 0;
	}
	int user_flags = o->flags;
	o->flags |= MSG_DONTWAIT;
	ssize_t n = send_as_caller(o, o->flags);
	int e = errno;
	o->flags = user_flags;
	if (!wait || (n >= 0 && (size_t)n == o->total) || (n < 0 && e != EAGAIN)) {
		*ret = n < 0 ? -e : n;
		return 0;
	}
	if (n > 0) {
		if (!may_defer) {
			*ret = n;
			return 0;
		}
		o->iov.iov_base = (char *)o->iov.iov_base + n;
		o->iov.iov_len -= (size_t)n;
		o->mh.msg_control = NULL;
		o->mh.msg_controllen = 0;
	} else if (!may_defer) {
		*ret = -EAGAIN;
		return 0;
	}
	return 1;
}

/* Copy a msghdr's parts out of the caller into o (name, data flattened, control). */
static int read_msghdr(struct call *c, const struct msghdr *um, struct sock_op *o, char **data, char **control)
{
	int r;
	memset(&o->mh, 0, sizeof(o->mh));
	if (um->msg_name && um->msg_namelen) {
		if ((r = read_addr(c, (uint64_t)(uintptr_t)um->msg_name, um->msg_namelen, &o->ss, &o->len)) < 0)
			return r;
		o->mh.msg_name = &o->ss;
		o->mh.msg_namelen = o->len;
	}
	if (um->msg_iovlen > UIO_MAXIOV)
		return -EMSGSIZE;
	struct iovec *iov = NULL;
	if (um->msg_iovlen) {
		iov = calloc(um->msg_iovlen, sizeof(*iov));
		if (!iov)
			return -ENOMEM;
		if ((r = dsh_caller_read(c, (uint64_t)(uintptr_t)um->msg_iov, iov, um->msg_iovlen * sizeof(*iov))) < 0) {
			free(iov);
			return r;
		}
	}
	size_t total = 0;
	for (size_t i = 0; i < um->msg_iovlen; i++) {
		if ((ssize_t)iov[i].iov_len < 0) {
			free(iov);
			return -EINVAL;
		}
		total += iov[i].iov_len < MAX_SEND - total ? iov[i].iov_len : MAX_SEND - total;
	}
	*data = malloc(total ? total : 1);
	if (!*data) {
		free(iov);
		return -ENOMEM;
	}
	size_t at = 0;
	for (size_t i = 0; i < um->msg_iovlen && at < total; i++) {
		size_t n = iov[i].iov_len < total - at ? iov[i].iov_len : total - at;
		if (n && (r = dsh_caller_read(c, (uint64_t)(uintptr_t)iov[i].iov_base, *data + at, n)) < 0) {
			free(iov);
			return r;
		}
		at += n;
	}
	free(iov);
	o->iov = (struct iovec){ *data, total };
	o->total = total;
	o->mh.msg_iov = &o->iov;
	o->mh.msg_iovlen = 1;
	if (um->msg_control && um->msg_controllen) {
		if (um->msg_controllen > MAX_CONTROL)
			return -ENOBUFS;
		*control = malloc(um->msg_controllen);
		if (!*control)
			return -ENOMEM;
		if ((r = dsh_caller_read(c, (uint64_t)(uintptr_t)um->msg_control, *control, um->msg_controllen)) < 0)
			return r;
		o->mh.msg_control = *control;
		o->mh.msg_controllen = um->msg_controllen;
	}
	return 0;
}

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
}

/* sendto with a destination, sendmsg: one message. */
static int do_send(struct call *c, bool is_sendmsg)
{
	_cleanup_close_ int fd = dsh_caller_fd(c, (int)ARG(0));
	if (fd < 0)
		return answer(c, fd);
	struct sock_op o = { .fd = fd };
	_cleanup_free_ char *data = NULL, *control = NULL;
	int *fds = NULL;
	size_t n_fds = 0;
	int r;
	if (is_sendmsg) {
		struct msghdr um;
		if ((r = dsh_caller_read(c, ARG(1), &um, sizeof(um))) < 0)
			return answer(c, r);
		o.flags = (int)ARG(2);
		r = read_msghdr(c, &um, &o, &data, &control);
		if (r >= 0 && o.mh.msg_control)
			r = translate_rights(c, &o.mh, &fds, &n_fds);
	} else {
		o.flags = (int)ARG(3);
		size_t len = ARG(2) < MAX_SEND ? (size_t)ARG(2) : MAX_SEND;
		r = read_addr(c, ARG(4), ARG(5), &o.ss, &o.len);
		if (r >= 0 && !(data = malloc(len ? len : 1)))
			r = -ENOMEM;
		if (r >= 0 && len)
			r = dsh_caller_read(c, ARG(1), data, len);
		o.iov = (struct iovec){ data, len };
		o.total = len;
		o.mh = (struct msghdr){ .msg_name = &o.ss, .msg_namelen = o.len, .msg_iov = &o.iov, .msg_iovlen = 1 };
	}
	if (r < 0) {
		close_all(fds, n_fds);
		return answer(c, r);
	}
	o.sigpipe_to = (o.flags & MSG_NOSIGNAL) ? 0 : (pid_t)c->req->pid;
	int64_t res = 0;
	r = send_one(c, &o, true, &res);
	if (r == 1) {
		/* The buffers the iovec and the control point into become the thread's. */
		r = defer(c, op_send_rest, &o, &data, &control, &fds, &n_fds);
	} else {
		r = res < 0 ? respond(c, 0, (int)-res) : respond(c, res, 0);
	}
	close_all(fds, n_fds);
	return r;
}

/*
 * Write one value back into the caller (sendmmsg's msg_len).  process_vm_writev, not /proc/PID/mem:
 * opening that for writing is a file write, which the broker's own Landlock domain refuses.
 */

/* sendmmsg: each message as sendmsg, in order, stopping at the first that fails or would wait. */
static int do_sendmmsg(struct call *c)
{
	_cleanup_close_ int fd = dsh_caller_fd(c, (int)ARG(0));
	if (fd < 0)
		return answer(c, fd);
	unsigned vlen = (unsigned)ARG(2) > UIO_MAXIOV ? UIO_MAXIOV : (unsigned)ARG(2);
	int sent = 0, first_err = 0;
	for (unsigned i = 0; i < vlen; i++) {
		uint64_t at = ARG(1) + (uint64_t)i * sizeof(struct mmsghdr);
		struct mmsghdr um;
		int r = dsh_caller_read(c, at, &um, sizeof(um));
		struct sock_op o = { .fd = fd, .flags = (int)ARG(3) };
		o.sigpipe_to = (o.flags & MSG_NOSIGNAL) ? 0 : (pid_t)c->req->pid;
		char *data = NULL, *control = NULL;
		int *fds = NULL;
		size_t n_fds = 0;
		if (r >= 0)
			r = read_msghdr(c, &um.msg_hdr, &o, &data, &control);
		if (r >= 0 && o.mh.msg_control)
			r = translate_rights(c, &o.mh, &fds, &n_fds);
		int64_t res = r;
		if (r >= 0 && send_one(c, &o, false, &res) == 1)
			res = -EAGAIN;
		close_all(fds, n_fds);
		free(data);
		free(control);
		if (res < 0) {
			first_err = (int)-res;
			break;
		}
		unsigned len = (unsigned)res;
		if ((r = dsh_caller_write(c, at + offsetof(struct mmsghdr, msg_len), &len, sizeof(len))) < 0) {
			first_err = -r;
			break;
		}
		sent++;
	}
	return sent ? respond(c, sent, 0) : respond(c, 0, first_err);
}

static int dispatch(struct call *c)
{
	struct meta_args m = { 0 };
	int r = 0, nr = c->req->data.nr;
	_cleanup_free_ char *xvalue = NULL;
	switch (nr) {
	case __NR_open:
		return do_open(c, AT_FDCWD, ARG(0), ARG(1), ARG(2));
	case __NR_openat:
		return do_open(c, (int)ARG(0), ARG(1), ARG(2), ARG(3));
	case __NR_creat:
		return do_open(c, AT_FDCWD, ARG(0), O_CREAT | O_WRONLY | O_TRUNC, ARG(1));
	case __NR_mkdir:
		return do_make(c, MAKE_DIR, AT_FDCWD, ARG(0), ARG(1), 0, 0);
	case __NR_mkdirat:
		return do_make(c, MAKE_DIR, (int)ARG(0), ARG(1), ARG(2), 0, 0);
	case __NR_mknod:
		return do_make(c, MAKE_NODE, AT_FDCWD, ARG(0), ARG(1), ARG(2), 0);
	case __NR_mknodat:
		return do_make(c, MAKE_NODE, (int)ARG(0), ARG(1), ARG(2), ARG(3), 0);
	case __NR_symlink:
		return do_make(c, MAKE_SYMLINK, AT_FDCWD, ARG(1), 0, 0, ARG(0));
	case __NR_symlinkat:
		return do_make(c, MAKE_SYMLINK, (int)ARG(1), ARG(2), 0, 0, ARG(0));
	case __NR_link:
		return do_link(c, AT_FDCWD, ARG(0), AT_FDCWD, ARG(1), 0);
	case __NR_linkat:
		return do_link(c, (int)ARG(0), ARG(1), (int)ARG(2), ARG(3), (int)ARG(4));
	case __NR_rename:
		return do_rename(c, AT_FDCWD, ARG(0), AT_FDCWD, ARG(1), 0);
	case __NR_renameat:
		return do_rename(c, (int)ARG(0), ARG(1), (int)ARG(2), ARG(3), 0);
	case __NR_renameat2:
		return do_rename(c, (int)ARG(0), ARG(1), (int)ARG(2), ARG(3), (unsigned)ARG(4));
	case __NR_unlink:
		return do_remove(c, AT_FDCWD, ARG(0), 0);
	case __NR_unlinkat:
		return do_remove(c, (int)ARG(0), ARG(1), (int)ARG(2) & AT_REMOVEDIR);
	case __NR_rmdir:
		return do_remove(c, AT_FDCWD, ARG(0), AT_REMOVEDIR);
	case __NR_truncate:
		m = (struct meta_args){ .what = META_TRUNCATE, .length = (off_t)ARG(1) };
		return do_meta(c, AT_FDCWD, ARG(0), true, false, &m);
	case __NR_chmod:
		m = (struct meta_args){ .what = META_CHMOD, .mode = (mode_t)ARG(1) };
		return do_meta(c, AT_FDCWD, ARG(0), true, false, &m);
	case __NR_fchmod:
		m = (struct meta_args){ .what = META_CHMOD, .mode = (mode_t)ARG(1) };
		return do_meta(c, (int)ARG(0), 0, true, true, &m);
	case __NR_fchmodat:
		m = (struct meta_args){ .what = META_CHMOD, .mode = (mode_t)ARG(2) };
		return do_meta(c, (int)ARG(0), ARG(1), true, false, &m);
	case __NR_fchmodat2:
		m = (struct meta_args){ .what = META_CHMOD, .mode = (mode_t)ARG(2) };
		return do_meta(c, (int)ARG(0), ARG(1), !(ARG(3) & AT_SYMLINK_NOFOLLOW), ARG(3) & AT_EMPTY_PATH, &m);
	case __NR_chown:
	case __NR_lchown:
		m = (struct meta_args){ .what = META_CHOWN, .uid = (uid_t)ARG(1), .gid = (gid_t)ARG(2) };
		return do_meta(c, AT_FDCWD, ARG(0), nr == __NR_chown, false, &m);
	case __NR_fchown:
		m = (struct meta_args){ .what = META_CHOWN, .uid = (uid_t)ARG(1), .gid = (gid_t)ARG(2) };
		return do_meta(c, (int)ARG(0), 0, true, true, &m);
	case __NR_fchownat:
		m = (struct meta_args){ .what = META_CHOWN, .uid = (uid_t)ARG(2), .gid = (gid_t)ARG(3) };
		return do_meta(c, (int)ARG(0), ARG(1), !(ARG(4) & AT_SYMLINK_NOFOLLOW), ARG(4) & AT_EMPTY_PATH, &m);
	case __NR_utime: {
		m.what = META_TIMES;
		if (ARG(1)) {
			struct utimbuf u;
			if ((r = dsh_caller_read(c, ARG(1), &u, sizeof(u))) < 0)
				return answer(c, r);
			m.ts[0] = (struct timespec){ u.actime, 0 };
			m.ts[1] = (struct timespec){ u.modtime, 0 };
		} else {
			m.ts_now = true;
		}
		return do_meta(c, AT_FDCWD, ARG(0), true, false, &m);
	}
	case __NR_utimes:
	case __NR_futimesat: {
		m.what = META_TIMES;
		int dirfd = nr == __NR_utimes ? AT_FDCWD : (int)ARG(0);
		uint64_t path = nr == __NR_utimes ? ARG(0) : ARG(1), times = nr == __NR_utimes ? ARG(1) : ARG(2);
		if ((r = read_timeval_pair(c, times, &m)) < 0)
			return answer(c, r);
		return do_meta(c, dirfd, path, true, false, &m);
	}
	case __NR_utimensat:
		m.what = META_TIMES;
		if (ARG(2)) {
			if ((r = dsh_caller_read(c, ARG(2), m.ts, sizeof(m.ts))) < 0)
				return answer(c, r);
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
			return answer(c, r);
		if (nr == __NR_fsetxattr)
			return do_meta(c, (int)ARG(0), 0, true, true, &m);
		return do_meta(c, AT_FDCWD, ARG(0), nr == __NR_setxattr, false, &m);
	case __NR_removexattr:
	case __NR_lremovexattr:
	case __NR_fremovexattr:
		m.what = META_REMOVEXATTR;
		if ((r = read_xattr(c, ARG(1), 0, 0, &m)) < 0)
			return answer(c, r);
		if (nr == __NR_fremovexattr)
			return do_meta(c, (int)ARG(0), 0, true, true, &m);
		return do_meta(c, AT_FDCWD, ARG(0), nr == __NR_removexattr, false, &m);
	case __NR_ioctl:
		return do_attr_ioctl(c);
	case __NR_connect:
		return do_connect(c);
	case __NR_bind:
		return do_bind(c);
	case __NR_sendto:
		return do_send(c, false);
	case __NR_sendmsg:
		return do_send(c, true);
	case __NR_sendmmsg:
		return do_sendmmsg(c);
	default:
		/* setxattrat, removexattrat (Linux 6.13) and anything else sent here: not served yet,
		   and libc falls back on ENOSYS. */
		return answer(c, -ENOSYS);
	}
}

int dsh_broker_hold_sockets(struct dsh_broker *b, struct dsh_error **err)
{
	for (size_t i = 0; b->allowed_sockets && b->allowed_sockets[i]; i++) {
		const char *p = b->allowed_sockets[i];
		char real[PATH_MAX];
		if (p[0] == '@')
			continue; /* an abstract name: in the network namespace, not the tree */
		if (!realpath(p, real))
			continue; /* absent now: reached only if it appears where the command can see it */
		char *slash = strrchr(real, '/');
		_cleanup_free_ char *dir = strndup(real, slash == real ? 1 : (size_t)(slash - real));
		if (!dir)
			return dsh_err_sys(err, ENOMEM, "broker");
		int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct dsh_held_socket *v = realloc(b->held, (b->n_held + 1) * sizeof(*v));
		if (!v) {
			close(fd);
			return dsh_err_sys(err, ENOMEM, "broker");
		}
		b->held = v;
		struct dsh_held_socket *h = &v[b->n_held];
		*h = (struct dsh_held_socket){ .dir = fd, .name = strdup(slash + 1), .path = dsh_path_normalize(NULL, p),
					       .canonical = strdup(real) };
		b->n_held++;
		if (!h->name || !h->path || !h->canonical)
			return dsh_err_sys(err, ENOMEM, "broker");
	}
	return 0;
}

void dsh_broker_clear(struct dsh_broker *b)
{
	dsh_caller_cache_clear(b);
	if (b->started) {
		close(b->proc);
		b->started = false;
	}
	free(b->mount_devs);
	b->mount_devs = NULL;
	b->n_mount_devs = 0;
	for (size_t i = 0; i < b->n_held; i++) {
		close(b->held[i].dir);
		free(b->held[i].name);
		free(b->held[i].path);
		free(b->held[i].canonical);
	}
	free(b->held);
	b->held = NULL;
	b->n_held = 0;
	for (size_t i = 0; i < b->n_bound; i++)
		free(b->bound[i]);
	free(b->bound);
	b->bound = NULL;
	b->n_bound = 0;
}

bool dsh_broker_hung_up(short revents)
{
	return revents & (POLLHUP | POLLERR | POLLNVAL);
}

int dsh_broker_serve_one(struct dsh_broker *b, int listener, struct dsh_error **err)
{
	if (!b->started && dsh_broker_start(b, err) < 0)
		return -EIO;
	size_t rsize = b->notif_size > sizeof(struct seccomp_notif) ? b->notif_size : sizeof(struct seccomp_notif);
	_cleanup_free_ struct seccomp_notif *req = calloc(1, rsize);
	if (!req)
		return dsh_err_sys(err, ENOMEM, "broker");
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		int e = errno;
		if (e == EINTR || e == ENOENT)
			return 0; /* interrupted, or the caller died before we read it */
		return e == EBADF ? -ENOENT : dsh_err_sys(err, e, "broker: SECCOMP_IOCTL_NOTIF_RECV");
	}
	struct call c = { .b = b, .listener = listener, .req = req };
	b->served++;
	b->denial[0] = '\0';
	int r = dispatch(&c);
	if (r < 0)
		return dsh_err_sys(err, -r, "broker: answer call %d", req->data.nr);
	return 0;
}
