/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The POSIX side of the canonicalisation seam (policy/path.h): the kernel resolves the symlinks. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

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
