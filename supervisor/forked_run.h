/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_FORKED_RUN_H
#define DSH_SUPERVISOR_FORKED_RUN_H

/*
 * A run started from a multithreaded process (a Node, Go or tokio host linking libdshbox).  The
 * sandbox's init is made with a raw clone (namespace flags), which copies the caller as it is: a
 * lock another thread held at that instant (malloc's, stdio's, the dynamic loader's) stays held
 * for ever in the copy, and init's stages allocate.  So from such a process the run happens in a
 * child made by fork() first: glibc's fork resets malloc's and stdio's locks in the child, the
 * child has one thread, and everything after it (the raw clone, the stages) is as safe as in the
 * single-threaded `dshbox` program.  Its result, error and timing come back over a pipe.
 */

#include <stdbool.h>

#include "dshbox/backend.h"

/* Whether the process has more threads than the caller's (an unreadable count counts as yes). */
bool dsh_process_is_threaded(void);

/*
 * fn(arg, ret, err) in a single-threaded child of the caller, its outcome carried back: the
 * return value, *ret and *err as fn left them, and timing's entries when timing is not NULL.
 * When fn exec'd the command in that child (backend none), the child's wait status is *ret.
 * The child dies with the calling thread (PDEATHSIG); signals sent to the caller are the caller's
 * (a host stops a run by its own means, e.g. killing the process group it starts).
 */
int dsh_forked_run(int (*fn)(const void *arg, struct dsh_run_result *ret, struct dsh_error **err), const void *arg,
		   struct dsh_timing *timing, struct dsh_run_result *ret, struct dsh_error **err);

#endif
