/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file fence: resolution through the kernel (fence/target.c), the verdict on the canonical path,
 * the operation through the descriptor — read and list here, write and edit in fence/commit.c.
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
#include "fence/shared.h"


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

int dsh_fence_fail(struct ctx *c, enum dsh_err_kind kind,
						       const char *path, int sys, const char *rule,
						       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = failv(c, kind, path, sys, rule, fmt, ap);
	va_end(ap);
	return r;
}

int dsh_fence_fail_sys(struct ctx *c, const char *path, int sys, const char *what)
{
	return dsh_fence_fail(c, DSH_ERR_SYSTEM, path, sys, NULL, "%s: %s", what, strerror(sys));
}

/* ---- the verdict ---- */

/* A deny-type rule (--, and r- for a mutation) covering a path as spelled denies. */
/* A symlink that is not itself written: only deny-type rules on its spellings apply. */
int dsh_fence_check_spelling(struct ctx *c, const char *spelled, const char *canonical)
{
	struct dsh_verdict v;
	if (!dsh_policy_spelling_denied(c->p, DSH_OP_WRITE, spelled, &v))
		return 0;
	const char *rule = dsh_rule_text(v.rule);
	return dsh_fence_fail(c, DSH_ERR_DENIED, canonical, 0, rule, "denied: rule \"%s\" covers the path as spelled, %s (mode %s)",
		    rule, spelled, dsh_mode_to_string(dsh_policy_mode(c->p)));
}

/* A denial, said with what decided it. */
int dsh_fence_denied(struct ctx *c, const struct dsh_verdict *v, const char *canonical, const char *spelled)
{
	const char *rule = v->rule ? dsh_rule_text(v->rule) : v->reason;
	if (v->by_spelling)
		return dsh_fence_fail(c, DSH_ERR_DENIED, canonical, 0, rule,
			    "denied: rule \"%s\" covers the path as spelled, %s (mode %s)", rule, spelled,
			    dsh_mode_to_string(dsh_policy_mode(c->p)));
	_cleanup_free_ char *why = dsh_verdict_explain(v);
	return dsh_fence_fail(c, DSH_ERR_DENIED, canonical, 0, rule ? rule : "denied", "denied: %s (mode %s)",
		    why ? why : (rule ? rule : "the policy"), dsh_mode_to_string(dsh_policy_mode(c->p)));
}

/*
 * The policy's decision on the canonical path, with the spelling the caller used (through
 * symlinks): the process sandbox masks a `--` directory, so a tool may not reach through it by
 * name either.  dsh_policy_decide() is the one place that weighs rules.
 */
int dsh_fence_check(struct ctx *c, enum dsh_op op, const char *canonical, const char *spelled)
{
	struct dsh_verdict v;
	int r = dsh_policy_decide(c->p, op, canonical, spelled, &v);
	if (r < 0)
		return dsh_fence_fail(c, DSH_ERR_INVALID, canonical, 0, NULL, "no verdict: %s", strerror(-r));
	return v.allow ? 0 : dsh_fence_denied(c, &v, canonical, spelled);
}

/* The same for the file a write makes or replaces (dsh_policy_decide_file); is_dir: a directory
   stands there, which the write then refuses as no regular file. */
int dsh_fence_check_file(struct ctx *c, const char *canonical, const char *spelled, bool is_dir)
{
	struct dsh_verdict v;
	int r = dsh_policy_decide_file(c->p, DSH_OP_WRITE, canonical, spelled, is_dir, &v);
	if (r < 0)
		return dsh_fence_fail(c, DSH_ERR_INVALID, canonical, 0, NULL, "no verdict: %s", strerror(-r));
	return v.allow ? 0 : dsh_fence_denied(c, &v, canonical, spelled);
}

/* ---- reading through a descriptor ---- */

int dsh_fence_read_all(int fd, uint64_t offset, size_t want, char **ret, size_t *ret_len)
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

bool dsh_fence_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int dsh_fence_read(const struct dsh_policy *p, const char *path, uint64_t offset, uint64_t limit,
		   struct dsh_fence_read_result *ret, struct dsh_error **err)
{
	struct ctx c = { p, DSH_FENCE_OP_READ, err };
	memset(ret, 0, sizeof(*ret));
	_cleanup_free_ char *abs = NULL;
	int r = dsh_path_absolute(dsh_policy_cwd(p), path, &abs, NULL);
	if (r < 0)
		return dsh_fence_fail(&c, DSH_ERR_INVALID, path, 0, NULL, "not a usable path: %s", strerror(-r));
	_cleanup_close_ int fd = dsh_fence_openat2_path(AT_FDCWD, abs, O_PATH, NULL);
	if (fd < 0) {
		int e = -fd;
		fd = -1;
		if (e == ENOSYS)
			return dsh_fence_fail(&c, DSH_ERR_SYSTEM, abs, ENOSYS, NULL, "openat2 is not supported by this kernel");
		return dsh_fence_fail_open(&c, DSH_OP_READ, abs, e, "the file");
	}
	_cleanup_free_ char *canon = NULL;
	r = dsh_fd_path(fd, &canon);
	if (r < 0)
		return dsh_fence_fail_sys(&c, abs, -r, "read back the canonical path");
	r = dsh_fence_check(&c, DSH_OP_READ, canon, abs);
	if (r < 0)
		return r;
	struct stat st;
	r = dsh_fence_fstat_settled(fd, &st);
	if (r < 0)
		return dsh_fence_fail_sys(&c, canon, -r, "stat");
	if (!S_ISREG(st.st_mode))
		return dsh_fence_fail(&c, DSH_ERR_NOT_REGULAR, canon, 0, NULL, "%s",
			    S_ISDIR(st.st_mode) ? "is a directory (use list)" : "is not a regular file");
	uint64_t size = (uint64_t)st.st_size;
	uint64_t avail = offset < size ? size - offset : 0;
	if (limit > DSH_FENCE_MAX_CONTENT)
		return dsh_fence_fail(&c, DSH_ERR_TOO_LARGE, canon, 0, NULL, "limit %llu is above the most one read returns (%u bytes)",
			    (unsigned long long)limit, DSH_FENCE_MAX_CONTENT);
	if (limit == 0 && avail > DSH_FENCE_MAX_CONTENT)
		return dsh_fence_fail(&c, DSH_ERR_TOO_LARGE, canon, 0, NULL,
			    "%llu bytes from offset %llu; read at most %u at a time (--offset, --limit)",
			    (unsigned long long)avail, (unsigned long long)offset, DSH_FENCE_MAX_CONTENT);
	size_t want = (size_t)(limit ? (limit < avail ? limit : avail) : avail);

	_cleanup_close_ int rfd = reopen(fd, O_RDONLY | O_NONBLOCK);
	if (rfd < 0) {
		int e = -rfd;
		rfd = -1;
		return dsh_fence_fail_sys(&c, canon, e, "open for reading");
	}
	/* A reopen of /proc/self/fd/N is the inode the O_PATH descriptor holds: no second check. */
	r = dsh_fence_read_all(rfd, offset, want, &ret->data, &ret->len);
	if (r < 0)
		return dsh_fence_fail_sys(&c, canon, -r, "read");
	/* Taken before the read: a change during it makes the version stale (a later write with it
	   is refused), never newer than the bytes returned. */
	(void)dsh_fence_version(&st, ret->version, sizeof(ret->version));
	ret->path = TAKE_PTR(canon);
	ret->size = size;
	ret->offset = offset;
	ret->eof = offset + ret->len >= size;
	return 0;
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
		return dsh_fence_fail(&c, DSH_ERR_INVALID, path, 0, NULL, "not a usable path: %s", strerror(-r));
	_cleanup_close_ int fd = dsh_fence_openat2_path(AT_FDCWD, abs, O_PATH, NULL);
	if (fd < 0) {
		int e = -fd;
		fd = -1;
		return dsh_fence_fail_open(&c, DSH_OP_READ, abs, e, "the directory");
	}
	_cleanup_free_ char *canon = NULL;
	r = dsh_fd_path(fd, &canon);
	if (r < 0)
		return dsh_fence_fail_sys(&c, abs, -r, "read back the canonical path");
	r = dsh_fence_check(&c, DSH_OP_READ, canon, abs);
	if (r < 0)
		return r;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return dsh_fence_fail_sys(&c, canon, errno, "stat");
	if (!S_ISDIR(st.st_mode))
		return dsh_fence_fail(&c, DSH_ERR_INVALID, canon, 0, NULL, "is not a directory (use read)");
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return dsh_fence_fail_sys(&c, canon, errno, "open the directory");
	_cleanup_closedir_ DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return dsh_fence_fail_sys(&c, canon, e, "open the directory");
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
				return dsh_fence_fail_sys(&c, canon, ENOMEM, "list");
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
			return dsh_fence_fail_sys(&c, canon, ENOMEM, "list");
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
		return dsh_fence_fail_sys(&c, canon, e, "read the directory");
	}
	if (ret->n_entries)
		qsort(ret->entries, ret->n_entries, sizeof(*ret->entries), entry_cmp);
	ret->path = TAKE_PTR(canon);
	return 0;
}
