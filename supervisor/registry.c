/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>

#include "dshbox/backend.h"
#include "supervisor/backends.h"

/* Order is the order `explain` shows them in; auto's probe order is linux-ns, then landlock. */
static const struct dsh_backend *const backends[] = {
	&dsh_backend_linux_ns,
	&dsh_backend_landlock,
	&dsh_backend_runner,
	&dsh_backend_none,
	&dsh_backend_seatbelt,
	&dsh_backend_winacl,
	NULL,
};

const struct dsh_backend *dsh_backend_get(enum dsh_backend_id id)
{
	for (size_t i = 0; backends[i]; i++)
		if (backends[i]->id == id)
			return backends[i];
	return NULL;
}

const struct dsh_backend *const *dsh_backend_list(void)
{
	return backends;
}
