/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_USERNS_H
#define DSH_NS_USERNS_H

#include <stdbool.h>
#include <stddef.h>
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

/*
 * Root's maps (issue 22 item 5): every range of ids this process's namespace has, each mapped to
 * itself, so that a file owned by another user keeps its owner inside and the capabilities the
 * command keeps (CAP_DAC_OVERRIDE) apply to it.  Writing such a map needs CAP_SETUID and CAP_SETGID
 * in the parent namespace.
 *
 * dsh_userns_range_map: /proc/self/WHICH ("uid_map", "gid_map") as "ID ID COUNT" lines, the highest
 * id left out when drop_last.  dsh_userns_range_last: that highest uid and gid.
 * dsh_userns_write_maps: write them for the process whose /proc directory piddir is (setgroups
 * denied first when asked).
 * dsh_userns_lock_range: the lock (dsh_userns_lock) with such maps, written by a child left in
 * this namespace; the highest ids left out: they own the masks (ns/mount.c), which no capability of
 * the command may then open.  For a single-threaded caller, as unshare(CLONE_NEWUSER) requires:
 * the child runs on a static stack.
 */
int dsh_userns_range_map(const char *which, bool drop_last, char *buf, size_t size, struct dsh_error **err);
int dsh_userns_write_maps(int piddir, const char *uid_map, const char *gid_map, bool deny_setgroups,
			  struct dsh_error **err);
int dsh_userns_range_last(uid_t *uid, gid_t *gid, struct dsh_error **err);
int dsh_userns_lock_range(struct dsh_error **err);

#endif
