/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_BACKENDS_H
#define DSH_SUPERVISOR_BACKENDS_H

#include <stdbool.h>

#include "dshbox/backend.h"

/* Each backend's table, defined in its own file. */
extern const struct dsh_backend dsh_backend_linux_ns;  /* supervisor/backend_linux_ns.c */
extern const struct dsh_backend dsh_backend_landlock;  /* supervisor/backend_landlock.c */
extern const struct dsh_backend dsh_backend_runner;    /* supervisor/backend_runner.c */
extern const struct dsh_backend dsh_backend_none;      /* supervisor/backend_none.c */
extern const struct dsh_backend dsh_backend_seatbelt;  /* seatbelt/backend.c */
extern const struct dsh_backend dsh_backend_winacl;    /* winacl/backend.c */

/* Whether the runner's plan runs the command directly, as none does (danger-full-access without
   rules): then, like none, it execs in place and a host runs it in a child of its own. */
bool dsh_backend_runner_direct(const void *plan);

#endif
