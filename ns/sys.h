/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_SYS_H
#define DSH_NS_SYS_H

/*
 * Raw system calls glibc 2.36 lacks, in one place (STYLE 12).  The mount API itself (open_tree,
 * move_mount, fsopen, fsconfig, fsmount, mount_setattr: Linux 5.2 / 5.12) has glibc wrappers in
 * <sys/mount.h>; openat2 (Linux 5.6) does not.
 */

#include <linux/openat2.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/resolve.h" /* dsh_openat2 */

#endif
