/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fence's writes and edits (fence/shared.h): the new content in a temporary beside the target,
 * re-checked against what was read, renamed over it (atomic replacement), or written in place where
 * the target must keep its inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/hash.h"
#include "common/resolve.h"
#include "common/write_all.h"
#include "fence/fence.h"
#include "fence/fence_internal.h"
#include "fence/shared.h"

/*
 * Temporary names are `.NAME.dshbox~` (`.dshbox-HASH~` for a name too long for that) and 16 random
 * hex digits.  Random, so nobody can plant an entry at the name a write will use: with one fixed
 * name, anyone who could write the directory could block the host's writes (a directory or a
 * locked file there) or try to redirect them (a symlink).  The prefix tells the next write of the
 * same file which entries a killed writer may have left.
 */
static int temp_prefix(const char *name, char *buf, size_t size)
{
	int n;
	if (strlen(name) + 25 <= NAME_MAX)
		n = snprintf(buf, size, ".%s.dshbox~", name);
	else
		n = snprintf(buf, size, ".dshbox-%016llx~", (unsigned long long)dsh_fnv1a_str(name));
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int dsh_fence_temp_name(const char *name, char *buf, size_t size)
{
	char prefix[NAME_MAX + 1];
	int r = temp_prefix(name, prefix, sizeof(prefix));
	if (r < 0)
		return r;
	/* getrandom: Linux 3.17; it blocks only until the pool is first seeded at boot. */
	uint64_t rnd;
	for (;;) {
		ssize_t n = getrandom(&rnd, sizeof(rnd), 0);
		if (n == (ssize_t)sizeof(rnd))
			break;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
	int n = snprintf(buf, size, "%s%016llx", prefix, (unsigned long long)rnd);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

bool dsh_fence_is_temp_name(const char *name, const char *candidate)
{
	char prefix[NAME_MAX + 1];
	if (temp_prefix(name, prefix, sizeof(prefix)) < 0)
		return false;
	size_t pl = strlen(prefix);
	if (strncmp(candidate, prefix, pl) != 0 || strlen(candidate + pl) != 16)
		return false;
	for (const char *p = candidate + pl; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

/* The policy allows writing path (no failure recorded: for best-effort steps). */
static bool allowed(struct ctx *c, const char *path)
{
	struct dsh_verdict v;
	return dsh_policy_decide(c->p, DSH_OP_WRITE, path, NULL, &v) == 0 && v.allow;
}

/*
 * Remove what writers of the same file killed between link and rename left: entries with this
 * file's temporary prefix that are regular files nobody holds flock on (a live writer holds it from
 * before the name exists until after its rename), and symlinks (no writer makes one; removing the
 * link loses nothing).  Best effort: it never fails or delays the write, and leaves anything else
 * (a directory, a FIFO, a live writer's temporary) alone.
 */
static void clear_stale_temps(struct ctx *c, const struct target *t)
{
	int dfd = openat(t->pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	_cleanup_closedir_ DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!dsh_fence_is_temp_name(t->name, de->d_name))
			continue;
		_cleanup_free_ char *path = dsh_path_join(t->pcanon, de->d_name);
		struct stat st, now;
		if (!path || !allowed(c, path) || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			(void)unlinkat(dfd, de->d_name, 0);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		/* A temporary has the target's mode: it may be write-only. */
		const int flags = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
		_cleanup_close_ int fd = openat(dfd, de->d_name, O_RDONLY | flags);
		if (fd < 0 && errno == EACCES)
			fd = openat(dfd, de->d_name, O_WRONLY | flags);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		if (fstat(fd, &now) == 0 && dsh_fence_same_file(&st, &now) && fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    dsh_fence_same_file(&st, &now))
			(void)unlinkat(dfd, de->d_name, 0);
	}
}

/* A fresh temporary name for t, checked against the policy like any write. */
static int new_temp_name(struct ctx *c, const struct target *t, char tmpname[NAME_MAX + 1], char **tmppath)
{
	int r = dsh_fence_temp_name(t->name, tmpname, NAME_MAX + 1);
	if (r < 0)
		return dsh_fence_fail_sys(c, t->path, -r, "temporary name");
	free(*tmppath);
	*tmppath = dsh_path_join(t->pcanon, tmpname);
	if (!*tmppath)
		return dsh_fence_fail_sys(c, t->path, ENOMEM, "temporary name");
	return dsh_fence_check(c, DSH_OP_WRITE, *tmppath, NULL);
}

struct old_state {
	int fd;             /* the file as read, or -1 */
	struct stat st;
	const char *data;   /* its content as read (edit), or NULL */
	size_t len;
	const char *expect_version; /* the caller's, or NULL */
};

static bool unchanged(const struct stat *a, const struct stat *b)
{
	return dsh_fence_same_file(a, b) && a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * For edit: the file at the name is still the one read (same inode, size, mtime, ctime), and with
 * content also its bytes.  The full comparison runs before the temporary gets its name; the stat
 * comparison again right before the rename, so the named temporary lives for the shortest time.
 */
static int recheck(struct ctx *c, const struct target *t, const struct old_state *old, bool content)
{
	struct stat now, now_fd;
	if (fstatat(t->pfd, t->name, &now, AT_SYMLINK_NOFOLLOW) < 0)
		return dsh_fence_fail(c, DSH_ERR_CONFLICT, t->path, 0, NULL, "the file was removed after it was read");
	if (fstat(old->fd, &now_fd) < 0 || !unchanged(&old->st, &now) || !unchanged(&old->st, &now_fd))
		return dsh_fence_fail(c, DSH_ERR_CONFLICT, t->path, 0, NULL,
			    "the file changed after it was read; read it again and redo the edit");
	if (!content)
		return 0;
	_cleanup_free_ char *again = NULL;
	size_t len = 0;
	if (dsh_fence_read_all(old->fd, 0, old->len + 1, &again, &len) < 0 || len != old->len ||
	    memcmp(again, old->data, len) != 0)
		return dsh_fence_fail(c, DSH_ERR_CONFLICT, t->path, 0, NULL,
			    "the file changed after it was read; read it again and redo the edit");
	return 0;
}

/*
 * The process's umask, read without changing it: /proc/self/status has it since Linux 4.7;
 * umask() both reads and sets, so a thread creating a file between the two calls would get 0.
 */
static mode_t current_umask(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned m;
		if (sscanf(line, "Umask: %o", &m) == 1)
			return (mode_t)(m & 0777);
	}
	mode_t m = umask(022);
	umask(m);
	return m;
}

/*
 * The directory refuses new entries (no write permission on it) but the file itself is writable:
 * no temporary can be made beside it, so the new content goes into the file.  Not atomic: a reader
 * may see it half-written, and a crash may leave it so; the answer says so.  Whatever can fail
 * before the file is touched comes first: the content is already in memory, the file is opened
 * through the held directory (never through a symlink) and must be the one resolved, unchanged
 * for an edit or an expected version, and room for the new size is reserved; then the bytes are
 * written from the start and the rest cut off, so the file is never empty on the way.
 */
static int write_in_place(struct ctx *c, const struct target *t, const char *data, size_t len,
			  const struct old_state *old, mode_t mode, struct stat *ret_st)
{
	_cleanup_close_ int fd = openat(t->pfd, t->name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP || e == ENOENT)
			return -EAGAIN;
		return dsh_fence_fail(c, DSH_ERR_SYSTEM, t->path, e, NULL,
			    "the directory refuses new files and the file is not writable in place: %s", strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return dsh_fence_fail_sys(c, t->path, errno, "stat");
	if (!S_ISREG(st.st_mode) || !dsh_fence_same_file(&st, &t->st))
		return -EAGAIN;
	int r = 0;
	if (old && old->data)
		r = recheck(c, t, old, true);
	if (r == 0 && old && old->expect_version)
		r = dsh_fence_check_version(c, t->path, &st, old->expect_version);
	if (r < 0)
		return r;
	if (len > (size_t)st.st_size && fallocate(fd, 0, 0, (off_t)len) < 0 && errno != EOPNOTSUPP)
		return dsh_fence_fail_sys(c, t->path, errno, "reserve room for the new content");
	if ((st.st_mode & (S_ISUID | S_ISGID)) && fchmod(fd, mode) < 0)
		return dsh_fence_fail_sys(c, t->path, errno, "clear setuid/setgid");
	r = dsh_write_all(fd, data, len);
	if (r == 0 && ftruncate(fd, (off_t)len) < 0)
		r = -errno;
	/* The same inode: the stamp must be later than its mtime before this write. */
	if (r == 0)
		r = dsh_fence_stamp(fd, &st, ret_st);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r < 0)
		return dsh_fence_fail_sys(c, t->path, -r, "write in place");
	return 0;
}

/*
 * The temporary's bytes, and the written file's version (the link and the rename change neither
 * its mtime nor its inode): stamped later than the file it replaces and earlier than any change
 * after it, before the fsync, so the stamp is durable with the bytes.  0 or -errno.
 */
static int fill_temp(const struct target *t, int tfd, const char *data, size_t len, struct stat *ret_st)
{
	int r = dsh_write_all(tfd, data, len);
	if (r < 0)
		return r;
	struct stat prev;
	bool replaces = fstatat(t->pfd, t->name, &prev, AT_SYMLINK_NOFOLLOW) == 0;
	r = dsh_fence_stamp(tfd, replaces ? &prev : NULL, ret_st);
	if (r == 0 && fsync(tfd) < 0)
		r = -errno;
	return r;
}

/*
 * Put data at t->name atomically: an anonymous O_TMPFILE (nothing to clean if we die) written,
 * given the old mode and owner, fsync'ed; a new file is linked straight to its name; an existing one
 * is linked to a fresh temporary name and renamed over it.  Then the directory is fsync'ed.
 * Where the directory refuses new entries but the file is writable, the file is written in place
 * and *ret_in_place is set.  Returns 0, -EAGAIN when the name changed under us (the caller starts
 * again), or a failure.
 */
static int commit(struct ctx *c, const struct target *t, const char *data, size_t len,
		  const struct old_state *old, struct stat *ret_st, bool *ret_in_place)
{
	int r;
	char tmpname[NAME_MAX + 1] = "";
	_cleanup_free_ char *tmppath = NULL;
	*ret_in_place = false;
	/* An overwrite is the only thing that leaves a name behind when killed: tidy up first. */
	if (t->exists)
		clear_stale_temps(c, t);

	/* The mode is set explicitly below: O_TMPFILE's create mode and the fallback's 0600 would
	   otherwise disagree, and a directory's default ACL would override the umask. */
	mode_t mode = t->exists ? (t->st.st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)) : 0666 & ~current_umask();
	bool anonymous = true;
	_cleanup_close_ int tfd = openat(t->pfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (tfd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* No O_TMPFILE on this filesystem: a named temporary, created exclusively. */
		anonymous = false;
		if (!t->exists)
			clear_stale_temps(c, t);
		for (int i = 0; i < MAX_RETRIES; i++) {
			r = new_temp_name(c, t, tmpname, &tmppath);
			if (r < 0)
				return r;
			tfd = openat(t->pfd, tmpname, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (tfd >= 0 || errno != EEXIST)
				break;
		}
	}
	if (tfd < 0) {
		int e = errno;
		if ((e == EACCES || e == EPERM) && t->exists) {
			*ret_in_place = true;
			return write_in_place(c, t, data, len, old, mode, ret_st);
		}
		return dsh_fence_fail_sys(c, t->path, e, "create a temporary file");
	}
	/* Held until after the rename: proves to others that this temporary is alive. */
	if (flock(tfd, LOCK_EX) < 0) {
		int e = errno;
		if (!anonymous)
			(void)unlinkat(t->pfd, tmpname, 0);
		return dsh_fence_fail_sys(c, t->path, e, "lock the temporary file");
	}
	if (t->exists && geteuid() == 0 && (t->st.st_uid != geteuid() || t->st.st_gid != getegid()))
		if (fchown(tfd, t->st.st_uid, t->st.st_gid) < 0) {
			/* best effort (a root squashed by NFS); the mode is set after it */
		}
	/* An overwrite keeps the mode but not setuid/setgid: new content must not inherit them. */
	if (fchmod(tfd, mode) < 0) {
		int e = errno;
		if (!anonymous)
			(void)unlinkat(t->pfd, tmpname, 0);
		return dsh_fence_fail_sys(c, t->path, e, "set the mode of the temporary file");
	}
	r = fill_temp(t, tfd, data, len, ret_st);
	if (r < 0) {
		if (!anonymous)
			(void)unlinkat(t->pfd, tmpname, 0);
		return dsh_fence_fail_sys(c, t->path, -r, "write the temporary file");
	}

	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tfd);
	if (!t->exists) {
		if (anonymous) {
			if (linkat(AT_FDCWD, proc, t->pfd, t->name, AT_SYMLINK_FOLLOW) < 0) {
				/* Taken meanwhile, or its directory removed: start again from resolution. */
				if (errno == EEXIST || errno == ENOENT)
					return -EAGAIN;
				return dsh_fence_fail_sys(c, t->path, errno, "link the new file");
			}
		} else if (renameat2(t->pfd, tmpname, t->pfd, t->name, RENAME_NOREPLACE) < 0) {
			int e = errno;
			(void)unlinkat(t->pfd, tmpname, 0);
			if (e == EEXIST || e == ENOENT)
				return -EAGAIN;
			return dsh_fence_fail_sys(c, t->path, e, "rename the new file into place");
		}
	} else {
		if (old && old->data) {
			r = recheck(c, t, old, true);
			if (r < 0) {
				if (!anonymous)
					(void)unlinkat(t->pfd, tmpname, 0);
				return r;
			}
		}
		if (anonymous) {
			/* A name nobody could guess: taken only by a one-in-2^64 chance; then another. */
			for (int i = 0;; i++) {
				r = new_temp_name(c, t, tmpname, &tmppath);
				if (r < 0)
					return r;
				if (linkat(AT_FDCWD, proc, t->pfd, tmpname, AT_SYMLINK_FOLLOW) == 0)
					break;
				if (errno != EEXIST || i >= MAX_RETRIES)
					return dsh_fence_fail_sys(c, tmppath, errno, "link the temporary file");
			}
		}
		if (old && old->data) {
			r = recheck(c, t, old, false);
			if (r < 0) {
				(void)unlinkat(t->pfd, tmpname, 0);
				return r;
			}
		} else {
			/* A plain write replaces whatever is there, but only a regular file at the
			   same place: if the name became a directory or a symlink, start again. */
			struct stat now;
			if (fstatat(t->pfd, t->name, &now, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(now.st_mode)) {
				(void)unlinkat(t->pfd, tmpname, 0);
				return -EAGAIN;
			}
		}
		if (old && old->expect_version) {
			/* The caller's version, on the file at the name and on the one we hold. */
			struct stat now, held;
			bool ok = fstatat(t->pfd, t->name, &now, AT_SYMLINK_NOFOLLOW) == 0;
			if (ok && old->fd >= 0)
				ok = fstat(old->fd, &held) == 0 && dsh_fence_same_file(&now, &held);
			r = dsh_fence_check_version(c, t->path, ok ? &now : NULL, old->expect_version);
			if (r == 0 && !ok)
				r = dsh_fence_fail(c, DSH_ERR_CONFLICT, t->path, 0, NULL, "the file was replaced during the write");
			if (r < 0) {
				(void)unlinkat(t->pfd, tmpname, 0);
				return r;
			}
		}
		if (renameat(t->pfd, tmpname, t->pfd, t->name) < 0) {
			int e = errno;
			(void)unlinkat(t->pfd, tmpname, 0);
			return dsh_fence_fail_sys(c, t->path, e, "rename into place");
		}
	}
	/* The directory entry is durable only once the directory is. */
	_cleanup_close_ int dfd = openat(t->pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return 0;
}

static bool is_text(const char *s, size_t n)
{
	return memchr(s, '\0', n) == NULL;
}

/* Open and read the regular file at t (an edit's basis, or a write's old content for the diff). */
static int read_old(struct ctx *c, const struct target *t, size_t max, struct old_state *old,
		    char **ret_data, bool *ret_read)
{
	*ret_read = false;
	old->fd = openat(t->pfd, t->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (old->fd < 0) {
		if (errno == ENOENT || errno == ELOOP)
			return -EAGAIN; /* the name changed between our stat and this open */
		if (errno == EACCES && c->op == DSH_FENCE_OP_WRITE)
			return 0; /* unreadable: a write still replaces it, without a diff */
		return dsh_fence_fail_sys(c, t->path, errno, "open");
	}
	if (fstat(old->fd, &old->st) < 0)
		return dsh_fence_fail_sys(c, t->path, errno, "stat");
	if (!dsh_fence_same_file(&old->st, &t->st) || !S_ISREG(old->st.st_mode))
		return -EAGAIN;
	if ((uint64_t)old->st.st_size > max)
		return 0;
	size_t len = 0;
	int r = dsh_fence_read_all(old->fd, 0, (size_t)old->st.st_size, ret_data, &len);
	if (r < 0)
		return dsh_fence_fail_sys(c, t->path, -r, "read");
	old->data = *ret_data;
	old->len = len;
	*ret_read = true;
	return 0;
}

static size_t diff_limit(const struct dsh_policy *p)
{
	long long m = dsh_policy_diff_basis_max_bytes(p);
	if (m <= 0)
		return 0;
	return (size_t)m < DSH_FENCE_MAX_CONTENT ? (size_t)m : DSH_FENCE_MAX_CONTENT;
}

static int finish(struct ctx *c, const struct target *t, bool had_old, const char *old_s, size_t old_len,
		  const char *new_s, size_t new_len, const struct stat *written, struct dsh_fence_write_result *ret)
{
	(void)dsh_fence_version(written, ret->version, sizeof(ret->version));
	ret->created = !t->exists;
	ret->bytes = new_len;
	ret->path = strdup(t->path);
	if (!ret->path)
		return dsh_fence_fail_sys(c, t->path, ENOMEM, "result");
	if (!t->exists)
		return 0;
	size_t lim = diff_limit(c->p);
	if (had_old && old_len <= lim && new_len <= lim && is_text(old_s, old_len) && is_text(new_s, new_len)) {
		_cleanup_error_ struct dsh_error *e = NULL;
		if (dsh_diff_unified(t->path, old_s, old_len, new_s, new_len, &ret->diff, &e) < 0)
			ret->diff_skipped = true;
	} else {
		ret->diff_skipped = true;
	}
	return 0;
}

int dsh_fence_write(const struct dsh_policy *p, const char *path, const char *data, size_t len,
		    struct dsh_fence_write_result *ret, struct dsh_error **err)
{
	return dsh_fence_write_ex(p, path, data, len, NULL, ret, err);
}

int dsh_fence_write_ex(const struct dsh_policy *p, const char *path, const char *data, size_t len,
		       const struct dsh_fence_write_opts *opts, struct dsh_fence_write_result *ret,
		       struct dsh_error **err)
{
	struct ctx c = { p, DSH_FENCE_OP_WRITE, err };
	memset(ret, 0, sizeof(*ret));
	const char *expect = opts ? opts->expect_version : NULL;
	if (expect && !dsh_fence_version_well_formed(expect))
		return dsh_fence_fail(&c, DSH_ERR_INVALID, path, 0, NULL, "malformed expected version \"%s\" (SIZE:MTIME_NS:INODE)",
			    expect);
	if (len > DSH_FENCE_MAX_CONTENT)
		return dsh_fence_fail(&c, DSH_ERR_TOO_LARGE, path, 0, NULL, "%zu bytes is more than one write takes (%u)",
			    len, DSH_FENCE_MAX_CONTENT);
	for (int attempt = 0;; attempt++) {
		if (attempt >= MAX_RETRIES)
			return dsh_fence_fail(&c, DSH_ERR_CONFLICT, path, 0, NULL, "the path kept changing during the write");
		_cleanup_(dsh_fence_target_clear) struct target t = { .pfd = -1 };
		int r = dsh_fence_resolve_for_write(&c, path, &t);
		if (r < 0)
			return r;
		r = dsh_fence_check_version(&c, t.path, t.exists ? &t.st : NULL, expect);
		if (r < 0)
			return r;
		struct old_state old = { .fd = -1, .expect_version = expect };
		_cleanup_free_ char *old_data = NULL;
		bool had_old = false;
		if (t.exists) {
			r = read_old(&c, &t, diff_limit(p), &old, &old_data, &had_old);
			if (r == -EAGAIN) {
				if (old.fd >= 0)
					close(old.fd);
				continue;
			}
			if (r < 0) {
				if (old.fd >= 0)
					close(old.fd);
				return r;
			}
		}
		/* A plain write does not compare content: old.data stays NULL for commit. */
		struct old_state basis = old;
		basis.data = NULL;
		struct stat written;
		bool in_place = false;
		r = commit(&c, &t, data, len, &basis, &written, &in_place);
		if (old.fd >= 0)
			close(old.fd);
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			return r;
		ret->in_place = in_place;
		return finish(&c, &t, had_old, old_data, old.len, data, len, &written, ret);
	}
}

static size_t count_occurrences(const char *h, size_t hl, const char *n, size_t nl)
{
	size_t k = 0;
	for (const char *s = h; (s = memmem(s, hl - (size_t)(s - h), n, nl)); s += nl)
		k++;
	return k;
}

int dsh_fence_edit(const struct dsh_policy *p, const char *path, const char *old_s, size_t old_len,
		   const char *new_s, size_t new_len, bool all, struct dsh_fence_write_result *ret,
		   struct dsh_error **err)
{
	return dsh_fence_edit_hooked(p, path, old_s, old_len, new_s, new_len, all, NULL, NULL, NULL, ret, err);
}

int dsh_fence_edit_ex(const struct dsh_policy *p, const char *path, const char *old_s, size_t old_len,
		      const char *new_s, size_t new_len, bool all, const struct dsh_fence_write_opts *opts,
		      struct dsh_fence_write_result *ret, struct dsh_error **err)
{
	return dsh_fence_edit_hooked(p, path, old_s, old_len, new_s, new_len, all, opts, NULL, NULL, ret, err);
}

int dsh_fence_edit_hooked(const struct dsh_policy *p, const char *path, const char *old_s, size_t old_len,
			  const char *new_s, size_t new_len, bool all, const struct dsh_fence_write_opts *opts,
			  dsh_fence_edit_hook_fn hook, void *hook_data, struct dsh_fence_write_result *ret,
			  struct dsh_error **err)
{
	struct ctx c = { p, DSH_FENCE_OP_EDIT, err };
	memset(ret, 0, sizeof(*ret));
	const char *expect = opts ? opts->expect_version : NULL;
	if (expect && !dsh_fence_version_well_formed(expect))
		return dsh_fence_fail(&c, DSH_ERR_INVALID, path, 0, NULL, "malformed expected version \"%s\" (SIZE:MTIME_NS:INODE)",
			    expect);
	if (old_len == 0)
		return dsh_fence_fail(&c, DSH_ERR_INVALID, path, 0, NULL, "the old string is empty");
	if (old_len == new_len && memcmp(old_s, new_s, old_len) == 0)
		return dsh_fence_fail(&c, DSH_ERR_INVALID, path, 0, NULL, "the old and new strings are the same");
	/* Both are text, so the result of replacing one by the other in a text file is text. */
	if (!dsh_text_valid(old_s, old_len) || !dsh_text_valid(new_s, new_len))
		return dsh_fence_fail(&c, DSH_ERR_INVALID, path, 0, NULL, "the old and new strings must be text (no NUL, valid UTF-8)");
	for (int attempt = 0;; attempt++) {
		if (attempt >= MAX_RETRIES)
			return dsh_fence_fail(&c, DSH_ERR_CONFLICT, path, 0, NULL, "the path kept changing during the edit");
		_cleanup_(dsh_fence_target_clear) struct target t = { .pfd = -1 };
		int r = dsh_fence_resolve_for_write(&c, path, &t);
		if (r < 0)
			return r;
		if (!t.exists)
			return dsh_fence_fail(&c, DSH_ERR_NOT_FOUND, t.path, 0, NULL, "the file does not exist");
		if ((uint64_t)t.st.st_size > DSH_FENCE_MAX_CONTENT)
			return dsh_fence_fail(&c, DSH_ERR_TOO_LARGE, t.path, 0, NULL, "%lld bytes is more than an edit takes (%u)",
				    (long long)t.st.st_size, DSH_FENCE_MAX_CONTENT);
		struct old_state old = { .fd = -1 };
		_cleanup_free_ char *old_data = NULL;
		bool had_old = false;
		r = read_old(&c, &t, DSH_FENCE_MAX_CONTENT, &old, &old_data, &had_old);
		_cleanup_close_ int ofd = old.fd;
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			return r;
		if (!had_old)
			return dsh_fence_fail(&c, DSH_ERR_TOO_LARGE, t.path, 0, NULL, "the file grew beyond what an edit takes");
		/* The basis is the file as read now; the re-checks before the rename keep it so. */
		r = dsh_fence_check_version(&c, t.path, &old.st, expect);
		if (r < 0)
			return r;
		old.expect_version = expect;
		/* A string replacement in bytes that are not text could cut a character or a record in
		   two; such a file is rewritten whole, with write. */
		if (!dsh_text_valid(old.data, old.len))
			return dsh_fence_fail(&c, DSH_ERR_NOT_TEXT, t.path, 0, NULL,
				    "is not text (a NUL byte or invalid UTF-8); edit takes text files only, use write");
		/* Hosts send LF line ends whatever the file has: in a CRLF file, read them as CRLF
		   so the edit matches and the file keeps one line-end style. */
		const char *os = old_s, *ns = new_s;
		size_t ol = old_len, nl = new_len;
		_cleanup_free_ char *old_crlf = NULL, *new_crlf = NULL;
		if (dsh_text_is_crlf(old.data, old.len)) {
			old_crlf = dsh_text_lf_to_crlf(old_s, old_len, &ol);
			new_crlf = dsh_text_lf_to_crlf(new_s, new_len, &nl);
			if (!old_crlf || !new_crlf)
				return dsh_fence_fail_sys(&c, t.path, ENOMEM, "edit");
			os = old_crlf;
			ns = new_crlf;
		}

		size_t n = count_occurrences(old.data, old.len, os, ol);
		if (n == 0)
			return dsh_fence_fail(&c, DSH_ERR_INVALID, t.path, 0, NULL, "the old string was not found");
		if (n > 1 && !all)
			return dsh_fence_fail(&c, DSH_ERR_INVALID, t.path, 0, NULL,
				    "the old string occurs %zu times; give more context to make it unique, or replace all", n);
		size_t out_len = old.len - n * ol + n * nl;
		if (out_len > DSH_FENCE_MAX_CONTENT)
			return dsh_fence_fail(&c, DSH_ERR_TOO_LARGE, t.path, 0, NULL, "the result would be %zu bytes", out_len);
		_cleanup_free_ char *out = malloc(out_len + 1);
		if (!out)
			return dsh_fence_fail_sys(&c, t.path, ENOMEM, "edit");
		size_t o = 0;
		const char *s = old.data, *end = old.data + old.len;
		for (const char *hit; (hit = memmem(s, (size_t)(end - s), os, ol));) {
			memcpy(out + o, s, (size_t)(hit - s));
			o += (size_t)(hit - s);
			memcpy(out + o, ns, nl);
			o += nl;
			s = hit + ol;
		}
		memcpy(out + o, s, (size_t)(end - s));
		o += (size_t)(end - s);
		out[o] = '\0';

		if (hook)
			hook(hook_data);
		struct stat written;
		bool in_place = false;
		r = commit(&c, &t, out, o, &old, &written, &in_place);
		if (r == -EAGAIN)
			return dsh_fence_fail(&c, DSH_ERR_CONFLICT, t.path, 0, NULL, "the file changed during the edit");
		if (r < 0)
			return r;
		ret->replacements = n;
		ret->in_place = in_place;
		return finish(&c, &t, true, old.data, old.len, out, o, &written, ret);
	}
}
