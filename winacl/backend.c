/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "dshbox/backend.h"

extern const struct dsh_backend dsh_backend_winacl;

/* Placeholder until this backend lands: it can enforce nothing, so it says so and refuses. */
static int unavailable(const struct dsh_policy *p, struct dsh_error **err)
{
	(void)p;
	return dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "backend 'winacl' is not available in this build");
}

const struct dsh_backend dsh_backend_winacl = {
	.name = "winacl",
	.id = DSH_BACKEND_WINACL,
	.probe = unavailable,
};
