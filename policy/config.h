/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_CONFIG_H
#define DSH_POLICY_CONFIG_H

#include <stddef.h>
#include <yaml.h>

#include "dshbox/dshbox.h"
#include "policy/options.h"

/* Parse one YAML document; errors name origin and line. */
int dsh_yaml_load(const char *yaml, size_t len, const char *origin, yaml_document_t *doc,
		  struct dsh_error **err);
/* Apply a mapping node of configuration fields (SPEC 1.5) onto c. */
int dsh_config_apply_mapping(struct dsh_config *c, yaml_document_t *doc, yaml_node_t *map,
			     const char *origin, struct dsh_error **err);
/* Read a regular file of at most 4 MiB. */
int dsh_read_small_file(const char *path, char **ret, size_t *ret_len, struct dsh_error **err);

#endif
