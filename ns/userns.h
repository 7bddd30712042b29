/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_USERNS_H
#define DSH_NS_USERNS_H

#include <sys/types.h>

#include "dshbox/error.h"

/*
 * Map uid and gid (the caller's ids in the parent namespace) to themselves in the user namespace
 * the calling process has just entered, with setgroups denied (SPEC 3.2).  The process must be
 * dumpable (its /proc/self files are owned by root otherwise) and /proc must be writable.
 */
int dsh_userns_map_self(uid_t uid, gid_t gid, struct dsh_error **err);

/*
 * The lock (SPEC 3.3): enter a nested user + mount namespace, identity-mapped, so that every mount
 * and its flags are locked as one unit (umount, remount and clearing RDONLY all fail after this).
 */
int dsh_userns_lock(uid_t uid, gid_t gid, struct dsh_error **err);

#endif
