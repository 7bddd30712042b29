/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_WRITE_ALL_H
#define DSH_COMMON_WRITE_ALL_H

#include <stddef.h>

/*
 * Write all n bytes, again after a short write or EINTR.  Returns 0, or -errno (-EIO when a write
 * made no progress).  It allocates nothing and sets no error object, so a forked child, init and a
 * CLONE_VM child may call it as well as the front end.
 */
int dsh_write_all(int fd, const void *buf, size_t n);

#endif
