/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/config.h"
#include "dshbox/doctor.h"

const char *const dsh_doctor_official_rows[2] = { "sandbox", "fs-sandbox" };

int dsh_doctor_init(struct dsh_doctor *d, const char *row, struct dsh_error **err)
{
	memset(d, 0, sizeof(*d));
	d->config = dsh_config_new();
	d->row = strdup(row);
	if (d->config && d->row)
		return 0;
	dsh_doctor_clear(d);
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

void dsh_doctor_clear(struct dsh_doctor *d)
{
	free(d->row);
	dsh_strv_free(d->insert_origins);
	free(d->row_disabled_origin);
	for (int i = 0; i < 2; i++)
		free(d->official_origin[i]);
	dsh_config_free(d->config);
	free(d->config_origin);
	free(d->config_error);
	dsh_strv_free(d->notes);
	memset(d, 0, sizeof(*d));
}

static const char *scalar_of(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0) {
			yaml_node_t *v = yaml_document_get_node(doc, p->value);
			return v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : NULL;
		}
	}
	return NULL;
}

static yaml_node_t *node_of(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0)
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

static char *where(const char *origin, yaml_node_t *n)
{
	char *s = NULL;
	return asprintf(&s, "%s:%zu", origin, (size_t)n->start_mark.line + 1) < 0 ? NULL : s;
}

static int set_str(char **dst, char *s, struct dsh_error **err)
{
	if (!s)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	free(*dst);
	*dst = s;
	return 0;
}

/* A later layer replaces the row's config whole. */
static int replace_config(struct dsh_doctor *d, yaml_document_t *doc, yaml_node_t *cfg, const char *origin,
			  struct dsh_error **err)
{
	dsh_config_clear(d->config);
	dsh_config_init(d->config);
	free(d->config_error);
	d->config_error = NULL;
	_cleanup_error_ struct dsh_error *cerr = NULL;
	if (dsh_config_apply_mapping(d->config, doc, cfg, origin, &cerr) < 0) {
		d->config_error = strdup(cerr->msg);
		if (!d->config_error)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	return set_str(&d->config_origin, where(origin, cfg), err);
}

static bool is_true(const char *s)
{
	return s && (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0 || strcmp(s, "on") == 0);
}

static int apply_row(struct dsh_doctor *d, yaml_document_t *doc, yaml_node_t *item, const char *id,
		     const char *origin, bool inserting, struct dsh_error **err)
{
	const char *disabled = scalar_of(doc, item, "disabled");
	yaml_node_t *cfg = node_of(doc, item, "config");
	int r = 0;
	for (int i = 0; i < 2; i++)
		if (strcmp(id, dsh_doctor_official_rows[i]) == 0 && disabled) {
			d->official_disabled[i] = is_true(disabled);
			r = set_str(&d->official_origin[i], where(origin, item), err);
		}
	if (r < 0 || strcmp(id, d->row) != 0)
		return r;
	if (inserting && dsh_strv_push_take(&d->insert_origins, where(origin, item)) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	if (disabled) {
		d->row_disabled = is_true(disabled);
		r = set_str(&d->row_disabled_origin, where(origin, item), err);
	}
	if (r >= 0 && cfg)
		r = replace_config(d, doc, cfg, origin, err);
	return r;
}

static int note(struct dsh_doctor *d, const char *origin, yaml_node_t *n, const char *what, struct dsh_error **err)
{
	if (dsh_strv_pushf(&d->notes, "%s:%zu: %s", origin, (size_t)n->start_mark.line + 1, what) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	return 0;
}

int dsh_doctor_add_layer(struct dsh_doctor *d, const char *yaml, size_t len, const char *origin,
			 struct dsh_error **err)
{
	yaml_document_t doc;
	int r = dsh_yaml_load(yaml, len, origin, &doc, err);
	if (r < 0)
		return r;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_SEQUENCE_NODE) {
		yaml_document_delete(&doc);
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "%s: a patch file is a list of rows", origin);
	}
	for (yaml_node_item_t *i = root ? root->data.sequence.items.start : NULL; r >= 0 && root && i < root->data.sequence.items.top;
	     i++) {
		yaml_node_t *item = yaml_document_get_node(&doc, *i);
		yaml_node_t *ins = node_of(&doc, item, "insert");
		const char *id = scalar_of(&doc, item, "id");
		if (ins && ins->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *j = ins->data.sequence.items.start; r >= 0 && j < ins->data.sequence.items.top; j++) {
				yaml_node_t *row = yaml_document_get_node(&doc, *j);
				const char *rid = scalar_of(&doc, row, "id");
				r = rid ? apply_row(d, &doc, row, rid, origin, true, err)
					: note(d, origin, row, "an inserted row without an id", err);
			}
		} else if (id) {
			r = apply_row(d, &doc, item, id, origin, false, err);
		} else {
			r = note(d, origin, item, "an item that is neither a row (id:) nor an insert: list", err);
		}
	}
	yaml_document_delete(&doc);
	return r;
}

char **dsh_doctor_findings(const struct dsh_doctor *d)
{
	char **f = NULL;
	size_t inserted = dsh_strv_len(d->insert_origins);
	if (inserted > 1) {
		char *list = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&list, &len);
		for (size_t i = 0; m && i < inserted; i++)
			fprintf(m, "%s%s", i ? ", " : "", d->insert_origins[i]);
		if (m)
			fclose(m);
		dsh_strv_pushf(&f, "row '%s' is inserted %zu times (%s): two adoption paths at once; keep one",
			       d->row, inserted, list ? list : "?");
		free(list);
	}
	if (inserted > 0 && !d->row_disabled)
		for (int i = 0; i < 2; i++)
			if (!d->official_disabled[i])
				dsh_strv_pushf(&f,
					       "the official '%s' row is not disabled: two services would register under "
					       "that name (duplicate service registration); add '- id: %s' with 'disabled: true'",
					       dsh_doctor_official_rows[i], dsh_doctor_official_rows[i]);
	if (inserted == 0 && d->config_origin)
		dsh_strv_pushf(&f,
			       "rules are written for row '%s' (%s) but the row is never inserted: they are silently "
			       "inert and the official sandbox runs instead",
			       d->row, d->config_origin);
	if (inserted > 0 && d->row_disabled)
		dsh_strv_pushf(&f, "row '%s' is inserted but disabled (%s): its rules do not apply", d->row,
			       d->row_disabled_origin ? d->row_disabled_origin : "?");
	if (d->config_error)
		dsh_strv_pushf(&f, "the effective configuration of row '%s' does not load: %s", d->row, d->config_error);
	return f;
}

int dsh_doctor_add_file(struct dsh_doctor *d, const char *path, struct dsh_error **err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = dsh_read_small_file(path, &buf, &len, err);
	return r < 0 ? r : dsh_doctor_add_layer(d, buf, len, path, err);
}
