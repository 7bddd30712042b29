/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_RESOLVE_H
#define DSH_COMMON_RESOLVE_H

/*
 * Kernel-tight resolution, shared by the file fence and the runtime broker: a name is resolved by
 * the kernel once, held as a descriptor, and its canonical path read back from the descriptor, so a
 * decision is taken on what the kernel actually reached (SPEC 5, 3.12).
 */

#include <stdint.h>

/* openat2(2) (Linux 5.6); -1 with errno on failure.  Every descriptor is CLOEXEC from birth. */
int dsh_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

/*
 * The path the kernel holds for fd, read back from /proc/self/fd: 0, -ENOENT for a file unlinked
 * since it was opened, -EXDEV when it is not reachable from our root, or another -errno.
 */
int dsh_fd_path(int fd, char **ret);

/* dir + "/" + name, without a doubled slash at "/". NULL when out of memory. */
char *dsh_path_join(const char *dir, const char *name);

#endif
