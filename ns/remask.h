/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_REMASK_H
#define DSH_NS_REMASK_H

/*
 * Host-side replacement (SPEC 3.14).  A mask or read-only bind sits on the inode its path named at
 * start; when the user's editor, `sed -i` or `git config` replaces a protected file on the host (a
 * new inode renamed over the name), the mount goes with the old inode.  So the supervisor watches
 * the parents of literal r-/-- targets (inotify, on the host, where the events happen) and a keeper
 * process inside the sandbox's locked mount namespace — forked by init while it still holds its
 * capabilities there, before any of the command's code runs — mounts the entry again on the new
 * inode.  The keeper does nothing else and takes no input but entry numbers.
 */

#include <stddef.h>
#include <stdint.h>

#include "dshbox/error.h"
#include "ns/plan.h"

/* The supervisor's side: which entries can be re-applied, and the watches on their parents. */
struct dsh_remask_watch {
	int fd;           /* inotify, or -1 when no entry needs watching */
	int keeper;       /* the request pipe's write end */
	const struct dsh_mount_plan *plan;
	int *wd;          /* the watch of each entry's parent, by entry (-1: not watched) */
	unsigned long sent;
	size_t unwatched; /* glob matches left unwatched: the user's inotify watches ran out */
};

/* Watch the parents of the plan's r-/-- entries (literal targets, and glob matches found at start). */
int dsh_remask_watch_init(struct dsh_remask_watch *w, const struct dsh_mount_plan *plan, int keeper_fd,
			  struct dsh_error **err);
/* Read the pending events and ask the keeper to re-apply each entry whose name was replaced.
   How many reads found events (0: none was pending), or -EPIPE when the keeper is gone (the run
   must not go on unprotected). */
int dsh_remask_watch_events(struct dsh_remask_watch *w);
void dsh_remask_watch_clear(struct dsh_remask_watch *w);

/* One spare mask of each kind (file, directory; -1 where the plan has none), cloned from the
   plan's own masks: taken by init once they hang, before the command can exist, so that no
   replacement on the host can come first. */
void dsh_remask_take_spares(const struct dsh_mount_plan *plan, int spare[2]);
/* The keeper (inside, after the lock): serve requests on req_fd until it closes, with the spares
   it was given.  Never returns. */
_Noreturn void dsh_remask_keeper(const struct dsh_mount_plan *plan, int req_fd, const int spare[2]);

#endif
