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
/* The same, the ids seen inside being inner_uid/inner_gid (dshbox bwrap --uid/--gid); the maps of
   the new namespace then read "inner outer 1", the outer ids as the caller's namespace sees them. */
int dsh_userns_lock_as(uid_t inner_uid, gid_t inner_gid, uid_t uid, gid_t gid, struct dsh_error **err);
/* Write this process's maps: inner_uid -> uid and inner_gid -> gid, setgroups denied. */
int dsh_userns_map_as(uid_t inner_uid, gid_t inner_gid, uid_t uid, gid_t gid, struct dsh_error **err);

#endif
