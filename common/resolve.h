/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_RESOLVE_H
#define DSH_COMMON_RESOLVE_H

/*
 * Kernel-tight resolution, shared by the file fence and the runtime broker: a name is resolved by
 * the kernel once, held as a descriptor, and its canonical path read back from the descriptor, so a
 * decision is taken on what the kernel actually reached (SPEC 5, 3.12).
 */

#include <stdint.h>

/* Symlinks one resolution follows before ELOOP: the kernel's own bound (MAXSYMLINKS).  Every
   resolver of dshbox's — the broker's, the fence's, dsh_openat2_walk — stops there. */
#define DSH_MAX_SYMLINK_HOPS 40

/*
 * openat2(2) (Linux 5.6); -1 with errno on failure.  Every descriptor is CLOEXEC from birth.  Where
 * the kernel answers ENOSYS (inside a dshbox sandbox whose broker refuses openat2, or an old
 * kernel) the same resolution one component at a time: dsh_openat2_walk.
 */
int dsh_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

/*
 * openat2's resolution done by hand, for RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS (a symlink on
 * procfs below its root), RESOLVE_NO_XDEV and RESOLVE_BENEATH (any other flag: ENOSYS): each
 * component opened O_NOFOLLOW from the one before, each symlink read and followed by us.  What it
 * cannot give is openat2's atomicity against a concurrent rename of a directory on the way (a
 * "..", with RESOLVE_BENEATH, may then climb out): the kernel's own refuses that race.
 */
int dsh_openat2_walk(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

/*
 * The path the kernel holds for fd, read back from /proc/self/fd: 0, -ENOENT for a file unlinked
 * since it was opened, -EXDEV when it is not reachable from our root, or another -errno.
 */
int dsh_fd_path(int fd, char **ret);

/* dir + "/" + name, without a doubled slash at "/". NULL when out of memory. */
char *dsh_path_join(const char *dir, const char *name);

#endif
