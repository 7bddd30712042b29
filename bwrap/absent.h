/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_BWRAP_ABSENT_H
#define DSH_BWRAP_ABSENT_H

/*
 * An absent destination under a writable bind of the host's tree (docs/bwrap.md, "Absent names"):
 * bubblewrap makes the name on the host to mount on it; dshbox makes nothing there and holds the
 * name absent instead — an r- rule on it, which the runtime broker enforces (no create, mkdir,
 * mknod, symlink, link or rename onto it, nor anything beneath it).
 */

#include <stdbool.h>
#include <stddef.h>

#include "bwrap/args.h"

/*
 * Whether ops[i] (one of ops[from..i]) is to be held absent: its destination does not exist, and
 * what the tree shows above it is the host's through a writable bind of a path onto itself — the
 * last earlier operation (from on, skip[k] false) at or above it is such a bind, or was held absent
 * itself (held[k]).  Where that is a tmpfs of the argv the name is made inside the tmpfs; with
 * nothing above it the host's tree is read-only there: both false.
 */
bool dsh_bwrap_absent_held(const struct dsh_bwrap_op *ops, size_t from, size_t i, const bool *skip,
			   const bool *held);

/*
 * Whether ops[i], a --remount-ro, acts on a name held absent: the last earlier operation (from on,
 * skip[k] false) at or above its destination has that very destination and is held (held[k]).
 * Nothing is mounted there, so nothing is remounted; the name stays held absent.
 */
bool dsh_bwrap_absent_remount(const struct dsh_bwrap_op *ops, size_t from, size_t i, const bool *skip,
			      const bool *held);

/* The canonical path of an absent dest: its deepest existing ancestor resolved, the rest as
   spelled ("." and ".." are not followed: NULL, as for any failure, errno set). */
char *dsh_bwrap_absent_canonical(const char *dest);

#endif
