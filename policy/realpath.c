/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The POSIX side of the canonicalisation seam (policy/path.h): the kernel resolves the symlinks. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/path.h"

int dsh_path_real(const char *path, char **ret)
{
	char *real = realpath(path, NULL);
	if (!real)
		return -errno;
	*ret = real;
	return 0;
}

bool dsh_path_is_link(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

int dsh_path_dir_handle(const char *dir)
{
	return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

bool dsh_path_is_link_in(int handle, const char *name, const char *path)
{
	if (handle < 0)
		return dsh_path_is_link(path);
	struct stat st;
	return fstatat(handle, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

void dsh_path_dir_handle_close(int handle)
{
	if (handle >= 0)
		close(handle);
}
