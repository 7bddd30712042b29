/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bwrap/absent.h"
#include "common/cleanup.h"
#include "policy/policy.h"

/* A writable bind of a path onto itself: names beneath it are the host's own. */
static bool writable_self_bind(const struct dsh_bwrap_op *op)
{
	if (op->kind != DSH_BWRAP_BIND && op->kind != DSH_BWRAP_DEV_BIND)
		return false;
	char src[PATH_MAX], dst[PATH_MAX];
	return realpath(op->source, src) && realpath(op->dest, dst) && strcmp(src, dst) == 0;
}

/* Operations whose destination is a name (those that mount, and --dir). */
static bool has_dest(enum dsh_bwrap_op_kind k)
{
	return k == DSH_BWRAP_BIND || k == DSH_BWRAP_RO_BIND || k == DSH_BWRAP_DEV_BIND || k == DSH_BWRAP_TMPFS ||
	       k == DSH_BWRAP_BIND_DATA || k == DSH_BWRAP_RO_BIND_DATA || k == DSH_BWRAP_DIR;
}

bool dsh_bwrap_absent_held(const struct dsh_bwrap_op *ops, size_t from, size_t i, const bool *skip,
			   const bool *held)
{
	const struct dsh_bwrap_op *op = &ops[i];
	struct stat st;
	if (!has_dest(op->kind) || lstat(op->dest, &st) == 0 || errno != ENOENT)
		return false;
	/* What is seen there: the last earlier operation at or above dest.  They all lie on dest's own
	   path, so a later one is either on top of an earlier one or covers it (srt binds
	   CWD/.claude read-only, then CWD itself writable, then /dev/null at CWD/.claude/commands). */
	size_t last = i;
	for (size_t k = from; k < i; k++)
		if (!skip[k] && has_dest(ops[k].kind) && dsh_path_is_beneath(op->dest, ops[k].dest))
			last = k;
	if (last == i)
		return false;
	if (strcmp(ops[last].dest, op->dest) == 0)
		return held[last]; /* the same name again: held as before, or mounted inside the sandbox */
	return held[last] || writable_self_bind(&ops[last]);
}

bool dsh_bwrap_absent_remount(const struct dsh_bwrap_op *ops, size_t from, size_t i, const bool *skip,
			      const bool *held)
{
	size_t last = i;
	for (size_t k = from; k < i; k++)
		if (!skip[k] && has_dest(ops[k].kind) && dsh_path_is_beneath(ops[i].dest, ops[k].dest))
			last = k;
	return last != i && held[last] && strcmp(ops[last].dest, ops[i].dest) == 0;
}

char *dsh_bwrap_absent_canonical(const char *dest)
{
	/* "." and ".." would make the spelled rest name another path than the one held. */
	size_t len = strlen(dest);
	if (dest[0] != '/' || strstr(dest, "/./") || strstr(dest, "/../") ||
	    (len >= 2 && strcmp(dest + len - 2, "/.") == 0) || (len >= 3 && strcmp(dest + len - 3, "/..") == 0)) {
		errno = EINVAL;
		return NULL;
	}
	_cleanup_free_ char *head = strdup(dest);
	if (!head)
		return NULL;
	char real[PATH_MAX];
	for (;;) {
		char *slash = strrchr(head, '/');
		if (!slash)
			return NULL;
		if (slash == head) {
			head[0] = '\0'; /* nothing but / exists: all of dest is the rest */
			strcpy(real, "/");
			break;
		}
		*slash = '\0';
		if (realpath(head, real))
			break;
		if (errno != ENOENT)
			return NULL;
	}
	const char *rest = dest + strlen(head);
	char *out = NULL;
	if (asprintf(&out, "%s%s", strcmp(real, "/") == 0 ? "" : real, rest) < 0)
		return NULL;
	return out;
}
