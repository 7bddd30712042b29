/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/resolve.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

int dsh_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .mode = mode, .resolve = resolve };
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
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
