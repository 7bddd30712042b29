/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fence's resolution of a target through the kernel (fence/shared.h): the parent opened by
 * openat2 and held, the canonical path read back from it, the verdict taken on that; the parents a
 * write needs made one at a time on held descriptors.
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
#include "common/resolve.h"
#include "common/write_all.h"
#include "fence/fence.h"
#include "fence/fence_internal.h"
#include "fence/shared.h"

int dsh_fence_openat2_path(int dirfd, const char *path, int flags, struct dsh_error **err)
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
int dsh_fence_fail_open(struct ctx *c, enum dsh_op op, const char *abs, int e, const char *what)
{
	if (e == ENOENT || e == ENOTDIR || e == ELOOP || e == EACCES) {
		_cleanup_free_ char *resolved = NULL;
		_cleanup_error_ struct dsh_error *ignore = NULL;
		if (dsh_path_resolve(dsh_policy_cwd(c->p), abs, &resolved, &ignore) == 0) {
			int r = dsh_fence_check(c, op, resolved, abs);
			if (r < 0)
				return r;
		}
	}
	switch (e) {
	case ENOENT:
		return dsh_fence_fail(c, DSH_ERR_NOT_FOUND, abs, 0, NULL, "%s does not exist", what);
	case ENOTDIR:
		return dsh_fence_fail(c, DSH_ERR_NOT_FOUND, abs, 0, NULL, "a component of the path is not a directory");
	case ELOOP:
		return dsh_fence_fail(c, DSH_ERR_INVALID, abs, 0, NULL, "too many symlinks, or a /proc magic link");
	case ENAMETOOLONG:
		return dsh_fence_fail(c, DSH_ERR_INVALID, abs, 0, NULL, "path too long");
	default:
		return dsh_fence_fail_sys(c, abs, e, "open");
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


void dsh_fence_target_clear(struct target *t)
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
		return dsh_fence_fail_sys(c, spelled, ENOMEM, "resolve");
	_cleanup_close_ int dfd = -1;
	for (;;) {
		char *slash = strrchr(prefix, '/');
		if (slash == prefix)
			prefix[1] = '\0';
		else
			*slash = '\0';
		dfd = dsh_fence_openat2_path(AT_FDCWD, prefix, O_PATH | O_DIRECTORY, NULL);
		if (dfd >= 0)
			break;
		int e = -dfd;
		dfd = -1;
		if (e != ENOENT || strcmp(prefix, "/") == 0)
			return dsh_fence_fail_open(c, DSH_OP_WRITE, spelled, e, "the parent directory");
	}
	/* The components still to make, as spelled: parent minus the prefix that opened. */
	const char *rest = parent + (strcmp(prefix, "/") == 0 ? 1 : strlen(prefix) + 1);
	_cleanup_free_ char *canon = NULL;
	int r = dsh_fd_path(dfd, &canon);
	if (r < 0)
		return dsh_fence_fail_sys(c, prefix, -r, "read back the canonical path");

	/* The verdicts first: the file itself, then each directory to make, outermost first. */
	_cleanup_free_ char *target = NULL;
	if (asprintf(&target, "%s%s%s/%s", canon, strcmp(canon, "/") == 0 ? "" : "/", rest, name) < 0)
		return dsh_fence_fail_sys(c, spelled, ENOMEM, "resolve");
	r = dsh_fence_check_file(c, target, spelled, false);
	if (r < 0)
		return r;
	size_t cbase = strlen(canon) + (strcmp(canon, "/") == 0 ? 0 : 1);
	size_t sbase = (size_t)(rest - parent);
	for (const char *s = rest;;) {
		const char *end = strchrnul(s, '/');
		_cleanup_free_ char *dir_canon = strndup(target, cbase + (size_t)(end - rest));
		_cleanup_free_ char *dir_spelled = strndup(parent, sbase + (size_t)(end - rest));
		if (!dir_canon || !dir_spelled)
			return dsh_fence_fail_sys(c, spelled, ENOMEM, "resolve");
		r = dsh_fence_check(c, DSH_OP_WRITE, dir_canon, dir_spelled);
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
			return dsh_fence_fail(c, DSH_ERR_INVALID, spelled, 0, NULL, "path too long");
		memcpy(comp, s, n);
		comp[n] = '\0';
		/* 0777 & ~umask, as mkdir -p; someone else making it first is as good. */
		if (mkdirat(dfd, comp, 0777) < 0 && errno != EEXIST) {
			_cleanup_free_ char *at = dsh_path_join(canon, comp);
			return dsh_fence_fail_sys(c, at ? at : canon, errno, "create the directory");
		}
		int nfd = dsh_openat2(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0,
				      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (nfd < 0) {
			int e = errno;
			_cleanup_free_ char *at = dsh_path_join(canon, comp);
			if (e == ELOOP || e == ENOTDIR)
				return dsh_fence_fail(c, DSH_ERR_INVALID, at ? at : canon, 0, NULL,
					    "is a symlink or not a directory; a write creates directories, never through a symlink");
			return dsh_fence_fail_sys(c, at ? at : canon, e, "open the new directory");
		}
		close(dfd);
		dfd = nfd;
		free(canon);
		canon = NULL;
		r = dsh_fd_path(dfd, &canon);
		if (r < 0)
			return dsh_fence_fail_sys(c, parent, -r, "read back the canonical path");
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
int dsh_fence_resolve_for_write(struct ctx *c, const char *path, struct target *t)
{
	_cleanup_free_ char *abs = NULL;
	int r = dsh_path_absolute(dsh_policy_cwd(c->p), path, &abs, NULL);
	if (r < 0)
		return dsh_fence_fail(c, DSH_ERR_INVALID, path, 0, NULL, "not a usable path: %s", strerror(-r));
	bool followed = false;
	t->pfd = -1;
	for (int hop = 0;; hop++) {
		if (hop > DSH_MAX_SYMLINK_HOPS)
			return dsh_fence_fail(c, DSH_ERR_INVALID, abs, 0, NULL, "too many levels of symlinks");
		if (strcmp(abs, "/") == 0)
			return dsh_fence_fail(c, DSH_ERR_NOT_REGULAR, abs, 0, NULL, "is a directory");
		_cleanup_free_ char *spelled = strdup(abs);
		if (!spelled)
			return dsh_fence_fail_sys(c, abs, ENOMEM, "resolve");
		char *parent, *name;
		split_parent(abs, &parent, &name);

		dsh_fence_target_clear(t);
		t->pfd = dsh_fence_openat2_path(AT_FDCWD, parent, O_PATH | O_DIRECTORY, NULL);
		if (t->pfd < 0) {
			int e = -t->pfd;
			t->pfd = -1;
			if (e == ENOSYS)
				return dsh_fence_fail(c, DSH_ERR_SYSTEM, spelled, ENOSYS, NULL, "openat2 is not supported by this kernel");
			/* Only a plain write makes directories: an edit needs its file, and a symlink's
			   target that is missing is a dangling symlink, never followed. */
			if (e != ENOENT || c->op != DSH_FENCE_OP_WRITE || followed)
				return dsh_fence_fail_open(c, DSH_OP_WRITE, spelled, e,
						 followed ? "the symlink's target directory" : "the parent directory");
			r = make_parents(c, parent, spelled, name, &t->pfd, &t->pcanon);
			if (r < 0)
				return r;
		} else {
			r = dsh_fd_path(t->pfd, &t->pcanon);
			if (r < 0)
				return dsh_fence_fail_sys(c, parent, -r, "read back the canonical path");
		}
		t->name = strdup(name);
		t->path = dsh_path_join(t->pcanon, name);
		if (!t->name || !t->path)
			return dsh_fence_fail_sys(c, spelled, ENOMEM, "resolve");

		if (fstatat(t->pfd, t->name, &t->st, AT_SYMLINK_NOFOLLOW) == 0)
			t->exists = true;
		else if (errno != ENOENT)
			return dsh_fence_fail_sys(c, t->path, errno, "stat");

		if (t->exists && S_ISLNK(t->st.st_mode)) {
			/* The link itself is not written: only its spellings must not be denied; the
			   target gets the full verdict on the next hop (as `check` decides by name). */
			r = dsh_fence_check_spelling(c, spelled, t->path);
			if (r == 0)
				r = dsh_fence_check_spelling(c, t->path, t->path);
			if (r < 0)
				return r;
			char link[PATH_MAX + 1];
			ssize_t n = readlinkat(t->pfd, t->name, link, sizeof(link));
			if (n < 0)
				return dsh_fence_fail_sys(c, t->path, errno, "readlink");
			if ((size_t)n >= sizeof(link) || n == 0)
				return dsh_fence_fail(c, DSH_ERR_INVALID, t->path, 0, NULL, "unusable symlink");
			link[n] = '\0';
			free(abs);
			abs = NULL;
			r = dsh_path_absolute(t->pcanon, link, &abs, NULL);
			if (r < 0)
				return dsh_fence_fail(c, DSH_ERR_INVALID, t->path, 0, NULL, "unusable symlink target");
			followed = true;
			continue;
		}
		r = dsh_fence_check_file(c, t->path, spelled, t->exists && S_ISDIR(t->st.st_mode));
		if (r < 0)
			return r;
		if (!t->exists && followed)
			return dsh_fence_fail(c, DSH_ERR_INVALID, t->path, 0, NULL,
				    "reached through a dangling symlink; a write never follows one");
		if (t->exists && !S_ISREG(t->st.st_mode))
			return dsh_fence_fail(c, DSH_ERR_NOT_REGULAR, t->path, 0, NULL, "%s",
				    S_ISDIR(t->st.st_mode) ? "is a directory" : "is not a regular file");
		return 0;
	}
}
