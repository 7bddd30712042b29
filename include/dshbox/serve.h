/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_SERVE_H
#define DSHBOX_SERVE_H

/*
 * A file-fence server confining itself (SPEC 5: "it may confine itself with the same kernel
 * boundary as the process sandbox"): no_new_privs, then Landlock reading beneath / and writing only
 * beneath the policy's live writable roots, granted as the landlock backend grants them.
 */

#include "dshbox/dshbox.h"
#include "dshbox/export.h"

/*
 * Confine the calling process for good.  Without Landlock it changes nothing and returns 0 with
 * *ret_warning set (owned by the caller) saying so; any other failure is an error.
 */
DSH_PUBLIC int dsh_serve_confine(const struct dsh_policy *p, char **ret_warning, struct dsh_error **err);

#endif
