/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_DIE_WITH_H
#define DSH_COMMON_DIE_WITH_H

#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * A child of dshbox's that must not outlive parent: sig when parent dies.  The signal is armed only
 * for a death after the prctl, so a parent killed between the fork and here would never send it;
 * false then (the child is already reparented), and the child must end itself.  parent is the pid
 * the parent had before the fork (getpid()), never the child's first getppid(), which is the
 * reaper's once the parent is gone.  parent 0: armed, not checked (the first process of a pid
 * namespace reads its parent's pid as 0; the namespace's parent side must end it).  It allocates
 * nothing: CLONE_VM children call it too.
 */
static inline bool dsh_die_with(pid_t parent, int sig)
{
	return prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0 && (parent == 0 || getppid() == parent);
}

#endif
