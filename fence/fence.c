/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file fence: resolution through the kernel, the verdict on the canonical path, the operation
 * through the descriptor.
 *
 * Kernel facts relied on (dated): openat2 + RESOLVE_NO_MAGICLINKS: Linux 5.6.  O_TMPFILE: 3.11
 * (ext4, xfs, btrfs, tmpfs; other filesystems fall back to a named temporary).  A linkat of an
 * O_TMPFILE through /proc/self/fd/N with AT_SYMLINK_FOLLOW needs no capability (AT_EMPTY_PATH does).
 */
#include <dirent.h>
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
#include "common/resolve.h"
#include "common/write_all.h"
#include "fence/fence.h"
#include "fence/fence_internal.h"

#define MAX_RETRIES 8      /* a name that changed under us between two of our own steps */

static const char *const op_names[] = {
	[DSH_FENCE_OP_READ] = "read",
	[DSH_FENCE_OP_WRITE] = "write",
	[DSH_FENCE_OP_EDIT] = "edit",
	[DSH_FENCE_OP_LIST] = "list",
};

const char *dsh_fence_op_to_string(enum dsh_fence_op op)
{
	return (size_t)op < ARRAY_SIZE(op_names) ? op_names[op] : "unknown";
}

static const char *const entry_names[] = {
	[DSH_FENCE_ENTRY_FILE] = "file",
	[DSH_FENCE_ENTRY_DIR] = "dir",
	[DSH_FENCE_ENTRY_SYMLINK] = "symlink",
	[DSH_FENCE_ENTRY_OTHER] = "other",
};

const char *dsh_fence_entry_type_to_string(enum dsh_fence_entry_type t)
{
	return (size_t)t < ARRAY_SIZE(entry_names) ? entry_names[t] : "other";
}


void dsh_fence_read_result_clear(struct dsh_fence_read_result *r)
{
	free(r->path);
	free(r->data);
	memset(r, 0, sizeof(*r));
}

void dsh_fence_write_result_clear(struct dsh_fence_write_result *r)
{
	free(r->path);
	free(r->diff);
	memset(r, 0, sizeof(*r));
}

void dsh_fence_list_result_clear(struct dsh_fence_list_result *r)
{
	for (size_t i = 0; i < r->n_entries; i++)
		free(r->entries[i].name);
	free(r->entries);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

/* ---- failures ---- */

struct ctx {
	const struct dsh_policy *p;
	enum dsh_fence_op op;
	struct dsh_error **err;
};

static int kind_errno(enum dsh_err_kind k, int sys)
{
	switch (k) {
	case DSH_ERR_DENIED:
		return EACCES;
	case DSH_ERR_NOT_FOUND:
		return ENOENT;
	case DSH_ERR_CONFLICT:
		return EBUSY;
	case DSH_ERR_NOT_REGULAR:
		return EINVAL;
	case DSH_ERR_TOO_LARGE:
		return EFBIG;
	case DSH_ERR_INVALID:
		return EINVAL;
	case DSH_ERR_NOT_TEXT:
		return EILSEQ;
	case DSH_ERR_SYSTEM:
	case DSH_ERR_POLICY:
	case DSH_ERR_CONFIG:
	case DSH_ERR_USAGE:
	case DSH_ERR_UNSUPPORTED:
		return sys > 0 ? sys : EIO;
	}
	return EIO;
}

static int failv(struct ctx *c, enum dsh_err_kind kind, const char *path, int sys, const char *rule,
		 const char *fmt, va_list ap)
{
	char *detail = NULL, *msg = NULL;
	if (vasprintf(&detail, fmt, ap) < 0)
		detail = NULL;
	if (asprintf(&msg, "%s %s: %s", dsh_fence_op_to_string(c->op), path ? path : "?",
		     detail ? detail : "failed") < 0)
		msg = NULL;
	free(detail);
	int code = kind_errno(kind, sys);
	/* The operation's last word is its failure: what a helper said on the way is replaced. */
	if (c->err && *c->err) {
		dsh_error_free(*c->err);
		*c->err = NULL;
	}
	dsh_err(c->err, kind, code, "%s", msg ? msg : "fence: out of memory");
	dsh_err_subject(c->err, path, rule);
	free(msg);
	return -code;
}

__attribute__((format(printf, 6, 7))) static int fail(struct ctx *c, enum dsh_err_kind kind,
						       const char *path, int sys, const char *rule,
						       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = failv(c, kind, path, sys, rule, fmt, ap);
	va_end(ap);
	return r;
}

static int fail_sys(struct ctx *c, const char *path, int sys, const char *what)
{
	return fail(c, DSH_ERR_SYSTEM, path, sys, NULL, "%s: %s", what, strerror(sys));
}

/* ---- the verdict ---- */

/* A deny-type rule (--, and r- for a mutation) covering a path as spelled denies. */
/* A symlink that is not itself written: only deny-type rules on its spellings apply. */
static int check_spelling(struct ctx *c, const char *spelled, const char *canonical)
{
	struct dsh_verdict v;
	if (!dsh_policy_spelling_denied(c->p, DSH_OP_WRITE, spelled, &v))
		return 0;
	const char *rule = dsh_rule_text(v.rule);
	return fail(c, DSH_ERR_DENIED, canonical, 0, rule, "denied: rule \"%s\" covers the path as spelled, %s (mode %s)",
		    rule, spelled, dsh_mode_to_string(dsh_policy_mode(c->p)));
}

/* A denial, said with what decided it. */
static int denied(struct ctx *c, const struct dsh_verdict *v, const char *canonical, const char *spelled)
{
	const char *rule = v->rule ? dsh_rule_text(v->rule) : v->reason;
	if (v->by_spelling)
		return fail(c, DSH_ERR_DENIED, canonical, 0, rule,
			    "denied: rule \"%s\" covers the path as spelled, %s (mode %s)", rule, spelled,
			    dsh_mode_to_string(dsh_policy_mode(c->p)));
	_cleanup_free_ char *why = dsh_verdict_explain(v);
	return fail(c, DSH_ERR_DENIED, canonical, 0, rule ? rule : "denied", "denied: %s (mode %s)",
		    why ? why : (rule ? rule : "the policy"), dsh_mode_to_string(dsh_policy_mode(c->p)));
}

/*
 * The policy's decision on the canonical path, with the spelling the caller used (through
 * symlinks): the process sandbox masks a `--` directory, so a tool may not reach through it by
 * name either.  dsh_policy_decide() is the one place that weighs rules.
 */
static int check(struct ctx *c, enum dsh_op op, const char *canonical, const char *spelled)
{
	struct dsh_verdict v;
	int r = dsh_policy_decide(c->p, op, canonical, spelled, &v);
	if (r < 0)
		return fail(c, DSH_ERR_INVALID, canonical, 0, NULL, "no verdict: %s", strerror(-r));
	return v.allow ? 0 : denied(c, &v, canonical, spelled);
}

/* The same for the file a write makes or replaces (dsh_policy_decide_file); is_dir: a directory
   stands there, which the write then refuses as no regular file. */
static int check_file(struct ctx *c, const char *canonical, const char *spelled, bool is_dir)
{
	struct dsh_verdict v;
	int r = dsh_policy_decide_file(c->p, DSH_OP_WRITE, canonical, spelled, is_dir, &v);
	if (r < 0)
		return fail(c, DSH_ERR_INVALID, canonical, 0, NULL, "no verdict: %s", strerror(-r));
	return v.allow ? 0 : denied(c, &v, canonical, spelled);
}

/* ---- kernel resolution ---- */

static int openat2_path(int dirfd, const char *path, int flags, struct dsh_error **err)
{
	int fd = dsh_openat2(dirfd, path, (uint64_t)flags, 0, RESOLVE_NO_MAGICLINKS);
	if (fd < 0) {
		int e = errno;
		if (e == ENOSYS)
			dsh_err(err, DSH_ERR_UNSUPPORTED, ENOSYS, "openat2: not supported by this kernel (Linux >= 5.6 needed)");
		return -e;
	}
	return fd;
}


/*
 * A path that did not open: deny when the policy would deny it (by name, no action is taken on it),
 * so that a missing file inside a denied directory reveals nothing; else not-found.
 */
static int fail_open(struct ctx *c, enum dsh_op op, const char *abs, int e, const char *what)
{
	if (e == ENOENT || e == ENOTDIR || e == ELOOP || e == EACCES) {
		_cleanup_free_ char *resolved = NULL;
		_cleanup_error_ struct dsh_error *ignore = NULL;
		if (dsh_path_resolve(dsh_policy_cwd(c->p), abs, &resolved, &ignore) == 0) {
			int r = check(c, op, resolved, abs);
			if (r < 0)
				return r;
		}
	}
	switch (e) {
	case ENOENT:
		return fail(c, DSH_ERR_NOT_FOUND, abs, 0, NULL, "%s does not exist", what);
	case ENOTDIR:
		return fail(c, DSH_ERR_NOT_FOUND, abs, 0, NULL, "a component of the path is not a directory");
	case ELOOP:
		return fail(c, DSH_ERR_INVALID, abs, 0, NULL, "too many symlinks, or a /proc magic link");
	case ENAMETOOLONG:
		return fail(c, DSH_ERR_INVALID, abs, 0, NULL, "path too long");
	default:
		return fail_sys(c, abs, e, "open");
	}
}

static void split_parent(char *abs, char **ret_parent, char **ret_name)
{
	/* abs is absolute, normal and not "/": cut at the last '/'. */
	char *slash = strrchr(abs, '/');
	*ret_name = slash + 1;
	if (slash == abs)
		*ret_parent = (char *)"/";
	else {
		*slash = '\0';
		*ret_parent = abs;
	}
}

struct target {
	int pfd;            /* the parent directory, O_PATH */
	char *pcanon;       /* its canonical path */
	char *name;         /* the last component (owned) */
	char *path;         /* pcanon/name: the canonical target */
	bool exists;
	struct stat st;     /* lstat of the target when it exists */
};

static void target_clear(struct target *t)
{
	if (t->pfd >= 0)
		close(t->pfd);
	free(t->pcanon);
	free(t->name);
	free(t->path);
	memset(t, 0, sizeof(*t));
	t->pfd = -1;
}

/*
 * A write to a path whose parent directories are missing creates them, as `mkdir -p` would and as
 * the hosts' own write tools do, but only where the policy allows each one as a write.  The deepest
 * existing ancestor is opened by the usual resolution (openat2, canonical path read back); below it
 * each component is made with mkdirat on the held descriptor and opened with RESOLVE_NO_SYMLINKS |
 * RESOLVE_BENEATH, so a component that is (or becomes, by a race) a symlink is refused, never
 * followed.  Every verdict is taken before the first directory is made: a denied write leaves no
 * empty directories behind.  Returns the innermost directory (O_PATH) and its canonical path.
 */
static int make_parents(struct ctx *c, const char *parent, const char *spelled, const char *name, int *ret_fd,
			char **ret_canon)
{
	_cleanup_free_ char *prefix = strdup(parent);
	if (!prefix)
		return fail_sys(c, spelled, ENOMEM, "resolve");
	_cleanup_close_ int dfd = -1;
	for (;;) {
		char *slash = strrchr(prefix, '/');
		if (slash == prefix)
			prefix[1] = '\0';
		else
			*slash = '\0';
		dfd = openat2_path(AT_FDCWD, prefix, O_PATH | O_DIRECTORY, NULL);
		if (dfd >= 0)
			break;
		int e = -dfd;
		dfd = -1;
		if (e != ENOENT || strcmp(prefix, "/") == 0)
			return fail_open(c, DSH_OP_WRITE, spelled, e, "the parent directory");
	}
	/* The components still to make, as spelled: parent minus the prefix that opened. */
	const char *rest = parent + (strcmp(prefix, "/") == 0 ? 1 : strlen(prefix) + 1);
	_cleanup_free_ char *canon = NULL;
	int r = dsh_fd_path(dfd, &canon);
	if (r < 0)
		return fail_sys(c, prefix, -r, "read back the canonical path");

	/* The verdicts first: the file itself, then each directory to make, outermost first. */
	_cleanup_free_ char *target = NULL;
	if (asprintf(&target, "%s%s%s/%s", canon, strcmp(canon, "/") == 0 ? "" : "/", rest, name) < 0)
		return fail_sys(c, spelled, ENOMEM, "resolve");
	r = check_file(c, target, spelled, false);
	if (r < 0)
		return r;
	size_t cbase = strlen(canon) + (strcmp(canon, "/") == 0 ? 0 : 1);
	size_t sbase = (size_t)(rest - parent);
	for (const char *s = rest;;) {
		const char *end = strchrnul(s, '/');
		_cleanup_free_ char *dir_canon = strndup(target, cbase + (size_t)(end - rest));
		_cleanup_free_ char *dir_spelled = strndup(parent, sbase + (size_t)(end - rest));
		if (!dir_canon || !dir_spelled)
			return fail_sys(c, spelled, ENOMEM, "resolve");
		r = check(c, DSH_OP_WRITE, dir_canon, dir_spelled);
		if (r < 0)
			return r;
		if (!*end)
			break;
		s = end + 1;
	}

	for (const char *s = rest;;) {
		const char *end = strchrnul(s, '/');
		char comp[NAME_MAX + 1];
		size_t n = (size_t)(end - s);
		if (n == 0 || n > NAME_MAX)
			return fail(c, DSH_ERR_INVALID, spelled, 0, NULL, "path too long");
		memcpy(comp, s, n);
		comp[n] = '\0';
		/* 0777 & ~umask, as mkdir -p; someone else making it first is as good. */
		if (mkdirat(dfd, comp, 0777) < 0 && errno != EEXIST) {
			_cleanup_free_ char *at = dsh_path_join(canon, comp);
			return fail_sys(c, at ? at : canon, errno, "create the directory");
		}
		int nfd = dsh_openat2(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0,
				      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (nfd < 0) {
			int e = errno;
			_cleanup_free_ char *at = dsh_path_join(canon, comp);
			if (e == ELOOP || e == ENOTDIR)
				return fail(c, DSH_ERR_INVALID, at ? at : canon, 0, NULL,
					    "is a symlink or not a directory; a write creates directories, never through a symlink");
			return fail_sys(c, at ? at : canon, e, "open the new directory");
		}
		close(dfd);
		dfd = nfd;
		free(canon);
		canon = NULL;
		r = dsh_fd_path(dfd, &canon);
		if (r < 0)
			return fail_sys(c, parent, -r, "read back the canonical path");
		if (!*end)
			break;
		s = end + 1;
	}
	*ret_fd = TAKE_FD(dfd);
	*ret_canon = TAKE_PTR(canon);
	return 0;
}

/*
 * Resolve a path for a mutation: the parent through openat2, the verdict on the canonical target.
 * A symlink at the last component is followed by starting again from its target (each hop is
 * checked by its spelling, the end by its canonical path); a dangling one is refused.
 */
static int resolve_for_write(struct ctx *c, const char *path, struct target *t)
{
	_cleanup_free_ char *abs = NULL;
	int r = dsh_path_absolute(dsh_policy_cwd(c->p), path, &abs, NULL);
	if (r < 0)
		return fail(c, DSH_ERR_INVALID, path, 0, NULL, "not a usable path: %s", strerror(-r));
	bool followed = false;
	t->pfd = -1;
	for (int hop = 0;; hop++) {
		if (hop > DSH_MAX_SYMLINK_HOPS)
			return fail(c, DSH_ERR_INVALID, abs, 0, NULL, "too many levels of symlinks");
		if (strcmp(abs, "/") == 0)
			return fail(c, DSH_ERR_NOT_REGULAR, abs, 0, NULL, "is a directory");
		_cleanup_free_ char *spelled = strdup(abs);
		if (!spelled)
			return fail_sys(c, abs, ENOMEM, "resolve");
		char *parent, *name;
		split_parent(abs, &parent, &name);

		target_clear(t);
		t->pfd = openat2_path(AT_FDCWD, parent, O_PATH | O_DIRECTORY, NULL);
		if (t->pfd < 0) {
			int e = -t->pfd;
			t->pfd = -1;
			if (e == ENOSYS)
				return fail(c, DSH_ERR_SYSTEM, spelled, ENOSYS, NULL, "openat2 is not supported by this kernel");
			/* Only a plain write makes directories: an edit needs its file, and a symlink's
			   target that is missing is a dangling symlink, never followed. */
			if (e != ENOENT || c->op != DSH_FENCE_OP_WRITE || followed)
				return fail_open(c, DSH_OP_WRITE, spelled, e,
						 followed ? "the symlink's target directory" : "the parent directory");
			r = make_parents(c, parent, spelled, name, &t->pfd, &t->pcanon);
			if (r < 0)
				return r;
		} else {
			r = dsh_fd_path(t->pfd, &t->pcanon);
			if (r < 0)
				return fail_sys(c, parent, -r, "read back the canonical path");
		}
		t->name = strdup(name);
		t->path = dsh_path_join(t->pcanon, name);
		if (!t->name || !t->path)
			return fail_sys(c, spelled, ENOMEM, "resolve");

		if (fstatat(t->pfd, t->name, &t->st, AT_SYMLINK_NOFOLLOW) == 0)
			t->exists = true;
		else if (errno != ENOENT)
			return fail_sys(c, t->path, errno, "stat");

		if (t->exists && S_ISLNK(t->st.st_mode)) {
			/* The link itself is not written: only its spellings must not be denied; the
			   target gets the full verdict on the next hop (as `check` decides by name). */
			r = check_spelling(c, spelled, t->path);
			if (r == 0)
				r = check_spelling(c, t->path, t->path);
			if (r < 0)
				return r;
			char link[PATH_MAX + 1];
			ssize_t n = readlinkat(t->pfd, t->name, link, sizeof(link));
			if (n < 0)
				return fail_sys(c, t->path, errno, "readlink");
			if ((size_t)n >= sizeof(link) || n == 0)
				return fail(c, DSH_ERR_INVALID, t->path, 0, NULL, "unusable symlink");
			link[n] = '\0';
			free(abs);
			abs = NULL;
			r = dsh_path_absolute(t->pcanon, link, &abs, NULL);
			if (r < 0)
				return fail(c, DSH_ERR_INVALID, t->path, 0, NULL, "unusable symlink target");
			followed = true;
			continue;
		}
		r = check_file(c, t->path, spelled, t->exists && S_ISDIR(t->st.st_mode));
		if (r < 0)
			return r;
		if (!t->exists && followed)
			return fail(c, DSH_ERR_INVALID, t->path, 0, NULL,
				    "reached through a dangling symlink; a write never follows one");
		if (t->exists && !S_ISREG(t->st.st_mode))
			return fail(c, DSH_ERR_NOT_REGULAR, t->path, 0, NULL, "%s",
				    S_ISDIR(t->st.st_mode) ? "is a directory" : "is not a regular file");
		return 0;
	}
}

/* ---- reading through a descriptor ---- */

static int read_all(int fd, uint64_t offset, size_t want, char **ret, size_t *ret_len)
{
	char *buf = malloc(want + 1);
	if (!buf)
		return -ENOMEM;
	size_t got = 0;
	while (got < want) {
		ssize_t n = pread(fd, buf + got, want - got, (off_t)(offset + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*ret = buf;
	*ret_len = got;
	return 0;
}

/* Open the file a descriptor (O_PATH or not) refers to, for reading, without naming it again. */
static int reopen(int fd, int flags)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	int r = open(link, flags | O_CLOEXEC | O_NOCTTY);
	return r < 0 ? -errno : r;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static long long ts_ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000ll + t->tv_nsec;
}

/*
 * fstat, answered only once the kernel's coarse clock has passed the mtime it returns.  Before
 * 6.13 a change is stamped with that clock, so a same-size change within the tick of the one a
 * version describes would keep SIZE:MTIME_NS:INODE equal and a stale expectVersion would pass.
 * Checking the clock after the stat makes any later change's stamp later than this mtime.  The
 * wait is at most about two ticks (a few ms), and only for a file changed within the last tick;
 * an mtime far ahead of the clock (touch -d) cannot be waited out and needs no wait either: the
 * next change stamps the present.  Filesystems with whole-second stamps keep the limit
 * (docs/serve.md).
 */
static int fstat_settled(int fd, struct stat *st)
{
	struct timespec res;
	long long tick = clock_getres(CLOCK_REALTIME_COARSE, &res) == 0 ? ts_ns(&res) : 0;
	for (int tries = 0;; tries++) {
		if (fstat(fd, st) < 0)
			return -errno;
		struct timespec now;
		if (tick <= 0 || clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0)
			return 0;
		long long ahead = ts_ns(&st->st_mtim) - ts_ns(&now);
		if (ahead < 0 || ahead > 2 * tick || tries == 16)
			return 0;
		/* Sleep into the next tick; the loop re-checks, since sleeps end early. */
		long long d = ahead + tick / 4 + 1;
		struct timespec sl = { (time_t)(d / 1000000000ll), (long)(d % 1000000000ll) };
		(void)nanosleep(&sl, NULL);
	}
}

int dsh_fence_version(const struct stat *st, char *buf, size_t size)
{
	unsigned long long mtime_ns = (unsigned long long)st->st_mtim.tv_sec * 1000000000ull +
				      (unsigned long long)st->st_mtim.tv_nsec;
	int n = snprintf(buf, size, "%llu:%llu:%llu", (unsigned long long)st->st_size, mtime_ns,
			 (unsigned long long)st->st_ino);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* A version as the caller gave it: three decimal numbers; anything else is a malformed request. */
static bool version_well_formed(const char *v)
{
	unsigned long long a, b, c;
	int end = -1;
	return v && sscanf(v, "%llu:%llu:%llu%n", &a, &b, &c, &end) == 3 && end >= 0 && v[end] == '\0' &&
	       v[0] >= '0' && v[0] <= '9';
}

/* The file st describes is still at the version the caller expects (NULL: no expectation). */
static int check_version(struct ctx *c, const char *path, const struct stat *st, const char *expect)
{
	if (!expect)
		return 0;
	char now[DSH_FENCE_VERSION_MAX];
	if (!st)
		return fail(c, DSH_ERR_CONFLICT, path, 0, NULL,
			    "the file no longer exists (expected version %s); read it again", expect);
	if (dsh_fence_version(st, now, sizeof(now)) < 0 || strcmp(now, expect) != 0)
		return fail(c, DSH_ERR_CONFLICT, path, 0, NULL,
			    "the file changed since it was read (version %s, expected %s); read it again", now, expect);
	return 0;
}

int dsh_fence_read(const struct dsh_policy *p, const char *path, uint64_t offset, uint64_t limit,
		   struct dsh_fence_read_result *ret, struct dsh_error **err)
{
	struct ctx c = { p, DSH_FENCE_OP_READ, err };
	memset(ret, 0, sizeof(*ret));
	_cleanup_free_ char *abs = NULL;
	int r = dsh_path_absolute(dsh_policy_cwd(p), path, &abs, NULL);
	if (r < 0)
		return fail(&c, DSH_ERR_INVALID, path, 0, NULL, "not a usable path: %s", strerror(-r));
	_cleanup_close_ int fd = openat2_path(AT_FDCWD, abs, O_PATH, NULL);
	if (fd < 0) {
		int e = -fd;
		fd = -1;
		if (e == ENOSYS)
			return fail(&c, DSH_ERR_SYSTEM, abs, ENOSYS, NULL, "openat2 is not supported by this kernel");
		return fail_open(&c, DSH_OP_READ, abs, e, "the file");
	}
	_cleanup_free_ char *canon = NULL;
	r = dsh_fd_path(fd, &canon);
	if (r < 0)
		return fail_sys(&c, abs, -r, "read back the canonical path");
	r = check(&c, DSH_OP_READ, canon, abs);
	if (r < 0)
		return r;
	struct stat st;
	r = fstat_settled(fd, &st);
	if (r < 0)
		return fail_sys(&c, canon, -r, "stat");
	if (!S_ISREG(st.st_mode))
		return fail(&c, DSH_ERR_NOT_REGULAR, canon, 0, NULL, "%s",
			    S_ISDIR(st.st_mode) ? "is a directory (use list)" : "is not a regular file");
	uint64_t size = (uint64_t)st.st_size;
	uint64_t avail = offset < size ? size - offset : 0;
	if (limit > DSH_FENCE_MAX_CONTENT)
		return fail(&c, DSH_ERR_TOO_LARGE, canon, 0, NULL, "limit %llu is above the most one read returns (%u bytes)",
			    (unsigned long long)limit, DSH_FENCE_MAX_CONTENT);
	if (limit == 0 && avail > DSH_FENCE_MAX_CONTENT)
		return fail(&c, DSH_ERR_TOO_LARGE, canon, 0, NULL,
			    "%llu bytes from offset %llu; read at most %u at a time (--offset, --limit)",
			    (unsigned long long)avail, (unsigned long long)offset, DSH_FENCE_MAX_CONTENT);
	size_t want = (size_t)(limit ? (limit < avail ? limit : avail) : avail);

	_cleanup_close_ int rfd = reopen(fd, O_RDONLY | O_NONBLOCK);
	if (rfd < 0) {
		int e = -rfd;
		rfd = -1;
		return fail_sys(&c, canon, e, "open for reading");
	}
	/* A reopen of /proc/self/fd/N is the inode the O_PATH descriptor holds: no second check. */
	r = read_all(rfd, offset, want, &ret->data, &ret->len);
	if (r < 0)
		return fail_sys(&c, canon, -r, "read");
	/* Taken before the read: a change during it makes the version stale (a later write with it
	   is refused), never newer than the bytes returned. */
	(void)dsh_fence_version(&st, ret->version, sizeof(ret->version));
	ret->path = TAKE_PTR(canon);
	ret->size = size;
	ret->offset = offset;
	ret->eof = offset + ret->len >= size;
	return 0;
}

/* ---- atomic replacement ---- */

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

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
		n = snprintf(buf, size, ".dshbox-%016llx~", (unsigned long long)fnv1a(name));
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
		if (fstat(fd, &now) == 0 && same_file(&st, &now) && fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    same_file(&st, &now))
			(void)unlinkat(dfd, de->d_name, 0);
	}
}

/* A fresh temporary name for t, checked against the policy like any write. */
static int new_temp_name(struct ctx *c, const struct target *t, char tmpname[NAME_MAX + 1], char **tmppath)
{
	int r = dsh_fence_temp_name(t->name, tmpname, NAME_MAX + 1);
	if (r < 0)
		return fail_sys(c, t->path, -r, "temporary name");
	free(*tmppath);
	*tmppath = dsh_path_join(t->pcanon, tmpname);
	if (!*tmppath)
		return fail_sys(c, t->path, ENOMEM, "temporary name");
	return check(c, DSH_OP_WRITE, *tmppath, NULL);
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
	return same_file(a, b) && a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
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
		return fail(c, DSH_ERR_CONFLICT, t->path, 0, NULL, "the file was removed after it was read");
	if (fstat(old->fd, &now_fd) < 0 || !unchanged(&old->st, &now) || !unchanged(&old->st, &now_fd))
		return fail(c, DSH_ERR_CONFLICT, t->path, 0, NULL,
			    "the file changed after it was read; read it again and redo the edit");
	if (!content)
		return 0;
	_cleanup_free_ char *again = NULL;
	size_t len = 0;
	if (read_all(old->fd, 0, old->len + 1, &again, &len) < 0 || len != old->len ||
	    memcmp(again, old->data, len) != 0)
		return fail(c, DSH_ERR_CONFLICT, t->path, 0, NULL,
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
		return fail(c, DSH_ERR_SYSTEM, t->path, e, NULL,
			    "the directory refuses new files and the file is not writable in place: %s", strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fail_sys(c, t->path, errno, "stat");
	if (!S_ISREG(st.st_mode) || !same_file(&st, &t->st))
		return -EAGAIN;
	int r = 0;
	if (old && old->data)
		r = recheck(c, t, old, true);
	if (r == 0 && old && old->expect_version)
		r = check_version(c, t->path, &st, old->expect_version);
	if (r < 0)
		return r;
	if (len > (size_t)st.st_size && fallocate(fd, 0, 0, (off_t)len) < 0 && errno != EOPNOTSUPP)
		return fail_sys(c, t->path, errno, "reserve room for the new content");
	if ((st.st_mode & (S_ISUID | S_ISGID)) && fchmod(fd, mode) < 0)
		return fail_sys(c, t->path, errno, "clear setuid/setgid");
	r = dsh_write_all(fd, data, len);
	if (r == 0 && ftruncate(fd, (off_t)len) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0)
		r = fstat_settled(fd, ret_st);
	if (r < 0)
		return fail_sys(c, t->path, -r, "write in place");
	return 0;
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
		return fail_sys(c, t->path, e, "create a temporary file");
	}
	/* Held until after the rename: proves to others that this temporary is alive. */
	if (flock(tfd, LOCK_EX) < 0) {
		int e = errno;
		if (!anonymous)
			(void)unlinkat(t->pfd, tmpname, 0);
		return fail_sys(c, t->path, e, "lock the temporary file");
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
		return fail_sys(c, t->path, e, "set the mode of the temporary file");
	}
	r = dsh_write_all(tfd, data, len);
	if (r == 0 && fsync(tfd) < 0)
		r = -errno;
	/* The written file's version: the link and the rename change neither its mtime nor inode. */
	if (r == 0)
		r = fstat_settled(tfd, ret_st);
	if (r < 0) {
		if (!anonymous)
			(void)unlinkat(t->pfd, tmpname, 0);
		return fail_sys(c, t->path, -r, "write the temporary file");
	}

	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tfd);
	if (!t->exists) {
		if (anonymous) {
			if (linkat(AT_FDCWD, proc, t->pfd, t->name, AT_SYMLINK_FOLLOW) < 0) {
				/* Taken meanwhile, or its directory removed: start again from resolution. */
				if (errno == EEXIST || errno == ENOENT)
					return -EAGAIN;
				return fail_sys(c, t->path, errno, "link the new file");
			}
		} else if (renameat2(t->pfd, tmpname, t->pfd, t->name, RENAME_NOREPLACE) < 0) {
			int e = errno;
			(void)unlinkat(t->pfd, tmpname, 0);
			if (e == EEXIST || e == ENOENT)
				return -EAGAIN;
			return fail_sys(c, t->path, e, "rename the new file into place");
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
					return fail_sys(c, tmppath, errno, "link the temporary file");
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
				ok = fstat(old->fd, &held) == 0 && same_file(&now, &held);
			r = check_version(c, t->path, ok ? &now : NULL, old->expect_version);
			if (r == 0 && !ok)
				r = fail(c, DSH_ERR_CONFLICT, t->path, 0, NULL, "the file was replaced during the write");
			if (r < 0) {
				(void)unlinkat(t->pfd, tmpname, 0);
				return r;
			}
		}
		if (renameat(t->pfd, tmpname, t->pfd, t->name) < 0) {
			int e = errno;
			(void)unlinkat(t->pfd, tmpname, 0);
			return fail_sys(c, t->path, e, "rename into place");
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
		return fail_sys(c, t->path, errno, "open");
	}
	if (fstat(old->fd, &old->st) < 0)
		return fail_sys(c, t->path, errno, "stat");
	if (!same_file(&old->st, &t->st) || !S_ISREG(old->st.st_mode))
		return -EAGAIN;
	if ((uint64_t)old->st.st_size > max)
		return 0;
	size_t len = 0;
	int r = read_all(old->fd, 0, (size_t)old->st.st_size, ret_data, &len);
	if (r < 0)
		return fail_sys(c, t->path, -r, "read");
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
		return fail_sys(c, t->path, ENOMEM, "result");
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
	if (expect && !version_well_formed(expect))
		return fail(&c, DSH_ERR_INVALID, path, 0, NULL, "malformed expected version \"%s\" (SIZE:MTIME_NS:INODE)",
			    expect);
	if (len > DSH_FENCE_MAX_CONTENT)
		return fail(&c, DSH_ERR_TOO_LARGE, path, 0, NULL, "%zu bytes is more than one write takes (%u)",
			    len, DSH_FENCE_MAX_CONTENT);
	for (int attempt = 0;; attempt++) {
		if (attempt >= MAX_RETRIES)
			return fail(&c, DSH_ERR_CONFLICT, path, 0, NULL, "the path kept changing during the write");
		_cleanup_(target_clear) struct target t = { .pfd = -1 };
		int r = resolve_for_write(&c, path, &t);
		if (r < 0)
			return r;
		r = check_version(&c, t.path, t.exists ? &t.st : NULL, expect);
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
	if (expect && !version_well_formed(expect))
		return fail(&c, DSH_ERR_INVALID, path, 0, NULL, "malformed expected version \"%s\" (SIZE:MTIME_NS:INODE)",
			    expect);
	if (old_len == 0)
		return fail(&c, DSH_ERR_INVALID, path, 0, NULL, "the old string is empty");
	if (old_len == new_len && memcmp(old_s, new_s, old_len) == 0)
		return fail(&c, DSH_ERR_INVALID, path, 0, NULL, "the old and new strings are the same");
	/* Both are text, so the result of replacing one by the other in a text file is text. */
	if (!dsh_text_valid(old_s, old_len) || !dsh_text_valid(new_s, new_len))
		return fail(&c, DSH_ERR_INVALID, path, 0, NULL, "the old and new strings must be text (no NUL, valid UTF-8)");
	for (int attempt = 0;; attempt++) {
		if (attempt >= MAX_RETRIES)
			return fail(&c, DSH_ERR_CONFLICT, path, 0, NULL, "the path kept changing during the edit");
		_cleanup_(target_clear) struct target t = { .pfd = -1 };
		int r = resolve_for_write(&c, path, &t);
		if (r < 0)
			return r;
		if (!t.exists)
			return fail(&c, DSH_ERR_NOT_FOUND, t.path, 0, NULL, "the file does not exist");
		if ((uint64_t)t.st.st_size > DSH_FENCE_MAX_CONTENT)
			return fail(&c, DSH_ERR_TOO_LARGE, t.path, 0, NULL, "%lld bytes is more than an edit takes (%u)",
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
			return fail(&c, DSH_ERR_TOO_LARGE, t.path, 0, NULL, "the file grew beyond what an edit takes");
		/* The basis is the file as read now; the re-checks before the rename keep it so. */
		r = check_version(&c, t.path, &old.st, expect);
		if (r < 0)
			return r;
		old.expect_version = expect;
		/* A string replacement in bytes that are not text could cut a character or a record in
		   two; such a file is rewritten whole, with write. */
		if (!dsh_text_valid(old.data, old.len))
			return fail(&c, DSH_ERR_NOT_TEXT, t.path, 0, NULL,
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
				return fail_sys(&c, t.path, ENOMEM, "edit");
			os = old_crlf;
			ns = new_crlf;
		}

		size_t n = count_occurrences(old.data, old.len, os, ol);
		if (n == 0)
			return fail(&c, DSH_ERR_INVALID, t.path, 0, NULL, "the old string was not found");
		if (n > 1 && !all)
			return fail(&c, DSH_ERR_INVALID, t.path, 0, NULL,
				    "the old string occurs %zu times; give more context to make it unique, or replace all", n);
		size_t out_len = old.len - n * ol + n * nl;
		if (out_len > DSH_FENCE_MAX_CONTENT)
			return fail(&c, DSH_ERR_TOO_LARGE, t.path, 0, NULL, "the result would be %zu bytes", out_len);
		_cleanup_free_ char *out = malloc(out_len + 1);
		if (!out)
			return fail_sys(&c, t.path, ENOMEM, "edit");
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
			return fail(&c, DSH_ERR_CONFLICT, t.path, 0, NULL, "the file changed during the edit");
		if (r < 0)
			return r;
		ret->replacements = n;
		ret->in_place = in_place;
		return finish(&c, &t, true, old.data, old.len, out, o, &written, ret);
	}
}

/* ---- list ---- */

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dsh_fence_entry *)a)->name, ((const struct dsh_fence_entry *)b)->name);
}

int dsh_fence_list(const struct dsh_policy *p, const char *path, struct dsh_fence_list_result *ret,
		   struct dsh_error **err)
{
	struct ctx c = { p, DSH_FENCE_OP_LIST, err };
	memset(ret, 0, sizeof(*ret));
	_cleanup_free_ char *abs = NULL;
	int r = dsh_path_absolute(dsh_policy_cwd(p), path, &abs, NULL);
	if (r < 0)
		return fail(&c, DSH_ERR_INVALID, path, 0, NULL, "not a usable path: %s", strerror(-r));
	_cleanup_close_ int fd = openat2_path(AT_FDCWD, abs, O_PATH, NULL);
	if (fd < 0) {
		int e = -fd;
		fd = -1;
		return fail_open(&c, DSH_OP_READ, abs, e, "the directory");
	}
	_cleanup_free_ char *canon = NULL;
	r = dsh_fd_path(fd, &canon);
	if (r < 0)
		return fail_sys(&c, abs, -r, "read back the canonical path");
	r = check(&c, DSH_OP_READ, canon, abs);
	if (r < 0)
		return r;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fail_sys(&c, canon, errno, "stat");
	if (!S_ISDIR(st.st_mode))
		return fail(&c, DSH_ERR_INVALID, canon, 0, NULL, "is not a directory (use read)");
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return fail_sys(&c, canon, errno, "open the directory");
	_cleanup_closedir_ DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return fail_sys(&c, canon, e, "open the directory");
	}
	size_t cap = 0;
	struct dirent *de;
	while ((errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (ret->n_entries >= DSH_FENCE_MAX_ENTRIES) {
			ret->truncated = true;
			break;
		}
		if (ret->n_entries == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct dsh_fence_entry *v = realloc(ret->entries, ncap * sizeof(*v));
			if (!v) {
				dsh_fence_list_result_clear(ret);
				return fail_sys(&c, canon, ENOMEM, "list");
			}
			ret->entries = v;
			cap = ncap;
		}
		struct dsh_fence_entry *e = &ret->entries[ret->n_entries];
		memset(e, 0, sizeof(*e));
		e->name = strdup(de->d_name);
		_cleanup_free_ char *child = dsh_path_join(canon, de->d_name);
		if (!e->name || !child) {
			free(e->name);
			dsh_fence_list_result_clear(ret);
			return fail_sys(&c, canon, ENOMEM, "list");
		}
		ret->n_entries++;
		struct dsh_verdict v;
		e->denied = dsh_policy_verdict(p, DSH_OP_READ, child, &v) < 0 || !v.allow;
		struct stat cst;
		bool seen = fstatat(dirfd(d), de->d_name, &cst, AT_SYMLINK_NOFOLLOW) == 0;
		/* "rw" for a file only where a file may be written (a .git file on the way: r-) */
		e->writable = !e->denied && dsh_policy_decide_file(p, DSH_OP_WRITE, child, NULL, seen && S_ISDIR(cst.st_mode),
								   &v) == 0 && v.allow;
		if (seen) {
			e->type = S_ISREG(cst.st_mode)   ? DSH_FENCE_ENTRY_FILE
				  : S_ISDIR(cst.st_mode) ? DSH_FENCE_ENTRY_DIR
				  : S_ISLNK(cst.st_mode) ? DSH_FENCE_ENTRY_SYMLINK
							 : DSH_FENCE_ENTRY_OTHER;
			e->size = e->denied ? 0 : (uint64_t)cst.st_size;
		} else {
			e->type = DSH_FENCE_ENTRY_OTHER;
		}
	}
	if (errno != 0 && !ret->truncated) {
		int e = errno;
		dsh_fence_list_result_clear(ret);
		return fail_sys(&c, canon, e, "read the directory");
	}
	if (ret->n_entries)
		qsort(ret->entries, ret->n_entries, sizeof(*ret->entries), entry_cmp);
	ret->path = TAKE_PTR(canon);
	return 0;
}
