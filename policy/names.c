/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "dshbox/backend.h"
#include "dshbox/dshbox.h"

/* Each enum's names come from one table, indexed by the value. */
static const char *const mode_names[] = {
	[DSH_MODE_READ_ONLY] = "read-only",
	[DSH_MODE_WORKSPACE_WRITE] = "workspace-write",
	[DSH_MODE_DANGER_FULL_ACCESS] = "danger-full-access",
};

static const char *const kind_names[] = {
	[DSH_RULE_RW] = "rw",
	[DSH_RULE_RO] = "r-",
	[DSH_RULE_DENY] = "--",
};

static const char *const backend_names[] = {
	[DSH_BACKEND_AUTO] = "auto",
	[DSH_BACKEND_LINUX_NS] = "linux-ns",
	[DSH_BACKEND_LANDLOCK] = "landlock",
	[DSH_BACKEND_RUNNER] = "runner",
	[DSH_BACKEND_NONE] = "none",
	[DSH_BACKEND_SEATBELT] = "seatbelt",
	[DSH_BACKEND_WINACL] = "winacl",
};

static const char *const enforcement_names[] = {
	[DSH_ENFORCE_FULL] = "full",
	[DSH_ENFORCE_PARTIAL] = "partial",
};

static int lookup(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (names[i] && strcmp(names[i], s) == 0)
			return (int)i;
	return -EINVAL;
}

#define NAME_OF(table, v) ((size_t)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : "?")

const char *dsh_mode_to_string(enum dsh_mode m)
{
	return NAME_OF(mode_names, m);
}

int dsh_mode_from_string(const char *s, enum dsh_mode *ret)
{
	int i = lookup(mode_names, sizeof(mode_names) / sizeof(mode_names[0]), s);
	if (i < 0)
		return i;
	*ret = (enum dsh_mode)i;
	return 0;
}

const char *dsh_rule_kind_to_string(enum dsh_rule_kind k)
{
	return NAME_OF(kind_names, k);
}

const char *dsh_backend_id_to_string(enum dsh_backend_id b)
{
	return NAME_OF(backend_names, b);
}

int dsh_backend_id_from_string(const char *s, enum dsh_backend_id *ret)
{
	int i = lookup(backend_names, sizeof(backend_names) / sizeof(backend_names[0]), s);
	if (i < 0)
		return i;
	*ret = (enum dsh_backend_id)i;
	return 0;
}

const char *dsh_enforcement_to_string(enum dsh_enforcement e)
{
	return NAME_OF(enforcement_names, e);
}
