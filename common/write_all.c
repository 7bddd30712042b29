/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <unistd.h>

#include "common/write_all.h"

int dsh_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO; /* never for a pipe or a file; a device that takes nothing would loop */
		p += w;
		n -= (size_t)w;
	}
	return 0;
}
