/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"
#include "dshbox/backend.h"

void dsh_description_clear(struct dsh_description *d)
{
	for (size_t i = 0; i < d->n_rules; i++) {
		free(d->rules[i].how);
		free(d->rules[i].lost);
	}
	free(d->rules);
	dsh_strv_free(d->warnings);
	dsh_strv_free(d->notes);
	dsh_strv_free(d->denial_signatures);
	dsh_strv_free(d->hidden);
	memset(d, 0, sizeof(*d));
}
