/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "supervisor/backends.h"

/* Placeholder until this backend lands: it can enforce nothing, so it says so and refuses. */
static int unavailable(const struct dsh_policy *p, struct dsh_error **err)
{
	(void)p;
	return dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "backend 'none' is not available in this build");
}

const struct dsh_backend dsh_backend_none = {
	.name = "none",
	.id = DSH_BACKEND_NONE,
	.probe = unavailable,
};
