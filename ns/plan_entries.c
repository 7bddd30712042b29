/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/strv.h"
#include "ns/plan_entries.h"

/* A mount plan made of given entries (ns/plan_entries.h); freed by dsh_mount_plan_free. */

struct dsh_mount_plan *dsh_mount_plan_new(void)
{
	return calloc(1, sizeof(struct dsh_mount_plan));
}

int dsh_mount_plan_push(struct dsh_mount_plan *plan, const char *path, enum dsh_mount_action action,
			const char *why, struct dsh_error **err)
{
	struct stat st = { 0 };
	bool identify = action == DSH_MOUNT_BIND_RW || action == DSH_MOUNT_BIND_RW_TMP || action == DSH_MOUNT_BIND_RO_TMP ||
			action == DSH_MOUNT_BIND_RO || action == DSH_MOUNT_MASK_DIR || action == DSH_MOUNT_MASK_FILE;
	if (identify && lstat(path, &st) < 0) {
		int e = errno;
		if (e == ENOENT)
			return -ENOENT;
		return dsh_err_sys(err, e, "%s '%s' (%s)", dsh_mount_action_to_string(action), path, why);
	}
	if (identify && S_ISLNK(st.st_mode))
		return dsh_err(err, DSH_ERR_USAGE, ELOOP, "%s '%s' (%s): a symlink: name its target",
			       dsh_mount_action_to_string(action), path, why);
	if (plan->n == plan->cap) {
		size_t cap = plan->cap ? plan->cap * 2 : 16;
		struct dsh_mount_entry *v = realloc(plan->entries, cap * sizeof(*v));
		if (!v)
			return dsh_err_sys(err, ENOMEM, "mount plan");
		plan->entries = v;
		plan->cap = cap;
	}
	struct dsh_mount_entry *e = &plan->entries[plan->n];
	*e = (struct dsh_mount_entry){ .action = action };
	e->path = strdup(path);
	e->why = strdup(why);
	if (!e->path || !e->why) {
		free(e->path);
		free(e->why);
		return dsh_err_sys(err, ENOMEM, "mount plan");
	}
	if (identify) {
		if (action == DSH_MOUNT_MASK_DIR || action == DSH_MOUNT_MASK_FILE)
			e->action = S_ISDIR(st.st_mode) ? DSH_MOUNT_MASK_DIR : DSH_MOUNT_MASK_FILE;
		e->have_id = true;
		e->dev = st.st_dev;
		e->ino = st.st_ino;
	}
	plan->n++;
	return 0;
}

int dsh_mount_plan_note(struct dsh_mount_plan *plan, const char *line)
{
	return dsh_strv_push_take_n(&plan->notes, &plan->n_notes, strdup(line));
}

int dsh_mount_plan_push_ordered(struct dsh_mount_plan *plan, const struct dsh_mount_entry *op, struct dsh_error **err)
{
	struct dsh_mount_entry *v = realloc(plan->ordered, (plan->n_ordered + 1) * sizeof(*v));
	if (!v)
		return dsh_err_sys(err, ENOMEM, "mount plan");
	plan->ordered = v;
	struct dsh_mount_entry *e = &v[plan->n_ordered];
	*e = *op;
	e->path = strdup(op->path);
	e->why = strdup(op->why);
	e->source = op->source ? strdup(op->source) : NULL;
	if (!e->path || !e->why || (op->source && !e->source)) {
		free(e->path);
		free(e->why);
		free(e->source);
		return dsh_err_sys(err, ENOMEM, "mount plan");
	}
	plan->n_ordered++;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct dsh_mount_entry *x = a, *y = b;
	int c = dsh_path_compare(x->path, y->path);
	if (c)
		return c;
	return x->action < y->action ? -1 : x->action > y->action;
}

void dsh_mount_plan_sort(struct dsh_mount_plan *plan)
{
	if (plan->n < 2)
		return; /* an empty plan (a new root) has no array at all */
	qsort(plan->entries, plan->n, sizeof(*plan->entries), entry_cmp);
}
