/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pure path helpers of the fence: no syscalls. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "fence/fence.h"

int dsh_fence_path_absolute(const char *base, const char *path, char **ret, struct dsh_error **err)
{
	if (!path || !*path)
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "empty path");
	for (const char *c = path; *c; c++)
		if (*c == '\n' || *c == '\r')
			return dsh_err(err, DSH_ERR_USAGE, EINVAL, "path holds a line break");
	if (path[0] != '/' && (!base || base[0] != '/'))
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "relative path '%s' without an absolute base", path);

	size_t bl = path[0] == '/' ? 0 : strlen(base);
	size_t pl = strlen(path);
	if (bl + pl + 2 > PATH_MAX)
		return dsh_err(err, DSH_ERR_USAGE, ENAMETOOLONG, "path longer than PATH_MAX");
	_cleanup_free_ char *joined = malloc(bl + pl + 2);
	_cleanup_free_ char *out = malloc(bl + pl + 2);
	if (!joined || !out)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	if (bl) {
		memcpy(joined, base, bl);
		joined[bl] = '/';
		memcpy(joined + bl + 1, path, pl + 1);
	} else {
		memcpy(joined, path, pl + 1);
	}

	/* Walk components; out always starts with '/', and never ends with '/' unless it is "/". */
	size_t o = 0;
	out[o++] = '/';
	for (const char *c = joined; *c;) {
		while (*c == '/')
			c++;
		if (!*c)
			break;
		const char *e = strchrnul(c, '/');
		size_t n = (size_t)(e - c);
		if (n == 1 && c[0] == '.') {
			/* nothing */
		} else if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (o > 1) {
				while (o > 1 && out[o - 1] != '/')
					o--;
				if (o > 1)
					o--; /* drop the separator too */
			}
		} else {
			if (n > NAME_MAX)
				return dsh_err(err, DSH_ERR_USAGE, ENAMETOOLONG, "a component of '%s' is longer than NAME_MAX", path);
			if (o > 1)
				out[o++] = '/';
			memcpy(out + o, c, n);
			o += n;
		}
		c = e;
	}
	out[o] = '\0';
	*ret = TAKE_PTR(out);
	return 0;
}
