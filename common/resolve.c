/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/resolve.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

int dsh_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .mode = mode, .resolve = resolve };
	int fd;
	/* EAGAIN: a ".." under RESOLVE_BENEATH met a rename or mount anywhere on the system while it
	   ran, and the kernel could not prove it stayed beneath; asking again is what it asks for. */
	for (int tries = 0; (fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how))) < 0 && errno == EAGAIN &&
			    tries < 16;
	     tries++)
		;
	if (fd < 0 && errno == ENOSYS)
		return dsh_openat2_walk(dirfd, path, flags, mode, resolve);
	return fd;
}
/* ---- openat2 where the kernel answers ENOSYS: inside a sandbox whose broker refuses it ---- */

static int walk_fail(int *cur, int e)
{
	if (*cur >= 0)
		close(*cur);
	*cur = -1;
	errno = e;
	return -1;
}

static uint64_t walk_mnt(int fd)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}

/* A symlink the kernel calls magic: on procfs, anywhere but its root ("self", "mounts", "net"). */
static bool walk_magic(int dir)
{
	struct statfs sf;
	struct stat st;
	return fstatfs(dir, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC && fstat(dir, &st) == 0 && st.st_ino != 1;
}

int dsh_openat2_walk(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	const uint64_t known = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH;
	int cur = -1;
	if (resolve & ~known)
		return walk_fail(&cur, ENOSYS);
	if (!*path)
		return walk_fail(&cur, ENOENT);
	bool beneath = resolve & RESOLVE_BENEATH;
	cur = fcntl(dirfd == AT_FDCWD ? -1 : dirfd, F_DUPFD_CLOEXEC, 3);
	if (dirfd == AT_FDCWD)
		cur = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -1;
	uint64_t mnt = (resolve & RESOLVE_NO_XDEV) ? walk_mnt(cur) : 0;
	char *rest = strdup(path);
	if (!rest)
		return walk_fail(&cur, ENOMEM);
	int depth = 0, hops = 0, fd = -1;
	for (;;) {
		if (rest[0] == '/') {
			if (beneath) {
				fd = walk_fail(&cur, EXDEV);
				break;
			}
			close(cur);
			cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			depth = 0;
			if (cur < 0)
				break;
			/* Only the path's own leading '/' gets here under RESOLVE_NO_XDEV (a link to the root
			 * is refused above): the kernel starts such a walk at the root, whatever mount the
			 * descriptor is on, and counts crossings from there. */
			if (mnt)
				mnt = walk_mnt(cur);
		}
		char *p = rest + strspn(rest, "/");
		size_t len = strcspn(p, "/");
		char *next = p + len;
		bool last = next[strspn(next, "/")] == '\0';
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX) {
			fd = walk_fail(&cur, ENAMETOOLONG);
			break;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		if (!len)
			strcpy(comp, ".");
		struct stat st;
		bool is_link = strcmp(comp, ".") && strcmp(comp, "..") &&
			       fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
		if (is_link && !(last && (flags & O_NOFOLLOW) && !*next)) {
			char text[PATH_MAX];
			ssize_t n = -1;
			int e = 0;
			bool magic = walk_magic(cur);
			if ((resolve & RESOLVE_NO_SYMLINKS) || ++hops > DSH_MAX_SYMLINK_HOPS || ((resolve & RESOLVE_NO_MAGICLINKS) && magic))
				e = ELOOP;
			else if (magic && (beneath || (resolve & RESOLVE_NO_XDEV)))
				e = EXDEV;
			else if (magic) {
				/* What the link stands for is the kernel's to say (a descriptor, a namespace). */
				fd = last ? openat(cur, comp, (int)flags | O_CLOEXEC | (*next ? O_DIRECTORY : 0), (mode_t)mode)
					  : openat(cur, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0 || last) {
					e = errno;
					close(cur);
					errno = e;
					break;
				}
				close(cur);
				cur = fd;
				fd = -1;
				next += strspn(next, "/");
				memmove(rest, next, strlen(next) + 1);
				continue;
			} else if ((n = readlinkat(cur, comp, text, sizeof(text) - 1)) < 0)
				e = errno;
			else if (text[0] == '/' && (resolve & RESOLVE_NO_XDEV))
				e = EXDEV; /* the kernel refuses a jump to the root by a link, wherever it lands */
			if (e || n < 0) {
				fd = walk_fail(&cur, e ? e : EIO);
				break;
			}
			text[n] = '\0';
			size_t nl = strlen(next);
			char *joined = malloc((size_t)n + nl + 1);
			if (!joined) {
				fd = walk_fail(&cur, ENOMEM);
				break;
			}
			memcpy(joined, text, (size_t)n);
			memcpy(joined + n, next, nl + 1);
			free(rest);
			rest = joined;
			continue;
		}
		if (last) {
			if (beneath && strcmp(comp, "..") == 0 && depth == 0) {
				fd = walk_fail(&cur, EXDEV);
				break;
			}
			fd = openat(cur, comp, (int)flags | O_NOFOLLOW | O_CLOEXEC | (*next ? O_DIRECTORY : 0), (mode_t)mode);
			if (fd >= 0 && mnt && walk_mnt(fd) != mnt) {
				close(fd);
				fd = -1;
				errno = EXDEV;
			}
			int e = errno;
			close(cur);
			errno = e;
			break;
		}
		if (strcmp(comp, "..") == 0 && beneath && depth-- == 0) {
			fd = walk_fail(&cur, EXDEV);
			break;
		}
		if (strcmp(comp, "..") && strcmp(comp, "."))
			depth++;
		int d = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (d < 0) {
			fd = walk_fail(&cur, errno);
			break;
		}
		close(cur);
		cur = d;
		if (mnt && walk_mnt(cur) != mnt) {
			fd = walk_fail(&cur, EXDEV);
			break;
		}
		next += strspn(next, "/");
		memmove(rest, next, strlen(next) + 1);
	}
	int e = errno;
	free(rest);
	errno = e;
	return fd;
}


int dsh_fd_path(int fd, char **ret)
{
	char link[64], buf[PATH_MAX + 1];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	buf[n] = '\0';
	if (buf[0] != '/')
		return -EXDEV; /* not reachable from our root */
	/* Unlinked since we opened it, the kernel appends " (deleted)"; a name may end so too. */
	static const char deleted[] = " (deleted)";
	size_t dl = sizeof(deleted) - 1;
	if ((size_t)n > dl && memcmp(buf + n - dl, deleted, dl) == 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && st.st_nlink == 0 && !S_ISDIR(st.st_mode))
			return -ENOENT;
	}
	char *s = strdup(buf);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

char *dsh_path_join(const char *dir, const char *name)
{
	char *s = NULL;
	if (asprintf(&s, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name) < 0)
		return NULL;
	return s;
}
