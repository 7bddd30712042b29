/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_DOCTOR_H
#define DSHBOX_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/dshbox.h"
#include "dshbox/export.h"

/*
 * Reads the dsh host's patch files (cordis.patch.yml) in layer order — bundle patches, profile
 * patches, home patches, overlays — and works out how the sandbox rows end up: a later layer
 * replaces a row's config whole.  Pure: the caller reads the files and prints the findings.
 *
 * A patch file is a YAML list; each item is `{id: ROW, disabled: BOOL}` or `{id: ROW, config: {...}}`
 * (changing an existing row), or `{insert: [{id: ROW, name: ..., config: {...}}, ...]}`.
 */
struct dsh_doctor {
	char *row;                  /* the row that adopts dshbox ("sandbox-local") */
	char **insert_origins;      /* "file:line" of every insertion of the row */
	bool row_disabled;
	char *row_disabled_origin;
	bool official_disabled[2];  /* "sandbox", "fs-sandbox" */
	char *official_origin[2];
	struct dsh_config *config;  /* the row's effective config (owned) */
	char *config_origin;        /* where it was last replaced, or NULL when never written */
	char *config_error;         /* why the effective config does not load, or NULL */
	char **notes;               /* items that were not understood, layer by layer */
};

DSH_PUBLIC extern const char *const dsh_doctor_official_rows[2];

DSH_PUBLIC int dsh_doctor_init(struct dsh_doctor *d, const char *row, struct dsh_error **err);
/* Apply one layer.  A file that is not YAML, or not a list, is an error naming it. */
DSH_PUBLIC int dsh_doctor_add_layer(struct dsh_doctor *d, const char *yaml, size_t len, const char *origin,
				    struct dsh_error **err);
/* The same for a patch file (at most 4 MiB); errors name the file. */
DSH_PUBLIC int dsh_doctor_add_file(struct dsh_doctor *d, const char *path, struct dsh_error **err);
/* The assembly mistakes, one line each (NULL-terminated; free with dsh_strv_free() of dshbox.h). */
DSH_PUBLIC char **dsh_doctor_findings(const struct dsh_doctor *d);
DSH_PUBLIC void dsh_doctor_clear(struct dsh_doctor *d);

#endif
