/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sibling grants: how an allow-only Landlock ruleset says "all of / but these paths". */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "landlock/landlock.h"
#include "policy/policy.h"

struct walk {
	struct dsh_landlock_spec *s;
	const struct dsh_landlock_target *t;
	size_t n;
	uint64_t sibling_access, way_access;
	size_t max_grants, grants;
	struct dsh_error **err;
};

static char *join(const char *dir, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name) < 0)
		return NULL;
	return p;
}

static int grant(struct walk *w, const char *path, const struct stat *st, uint64_t access, unsigned rule)
{
	if (!access)
		return 0;
	if (++w->grants > w->max_grants)
		return dsh_err(w->err, DSH_ERR_UNSUPPORTED, E2BIG,
			       "landlock: more than %zu grants needed to express the deny rules", w->max_grants);
	int r = dsh_landlock_spec_add_rule(w->s, path, access, rule, w->err);
	if (r >= 0) {
		struct dsh_landlock_grant *g = &w->s->grants[w->s->n_grants - 1];
		g->no_symlinks = g->skip_stale = true;
		if (st) {
			g->check_id = true;
			g->dev = st->st_dev;
			g->ino = st->st_ino;
		}
	}
	return r;
}

/*
 * dir is a directory on the way to at least one target; its other entries get `access`, dir itself
 * way_access (listing at most: Landlock's READ_DIR holds for everything beneath dir, so it lets a
 * target directory's entries be listed by name, never opened).
 */
static int walk_dir(struct walk *w, const char *dir, const struct stat *dir_st, uint64_t access)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	if (!d)
		return 0; /* cannot list it: grant nothing beneath it */
	int r0 = grant(w, dir, dir_st, w->way_access, DSH_LANDLOCK_NO_RULE);
	if (r0 < 0)
		return r0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		_cleanup_free_ char *child = join(dir, de->d_name);
		if (!child)
			return dsh_err_sys(w->err, ENOMEM, "landlock walk");
		bool on_the_way = false;
		const struct dsh_landlock_target *target = NULL;
		for (size_t i = 0; i < w->n; i++) {
			if (strcmp(w->t[i].path, child) == 0)
				target = &w->t[i];
			else if (dsh_path_is_beneath(w->t[i].path, child))
				on_the_way = true;
		}
		/* What the grant must find again when it is opened (symlinks get none). */
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* vanished */
		int r = 0;
		if (target && on_the_way) {
			/* r- /a with -- /a/b: /a's other entries get what /a gets, /a/b its own */
			if (target->access & access)
				r = walk_dir(w, child, &st, target->access & access);
		} else if (target) {
			r = grant(w, child, &st, target->access & access, target->rule);
		} else if (on_the_way) {
			r = walk_dir(w, child, &st, access);
		} else if (!S_ISLNK(st.st_mode)) {
			r = grant(w, child, &st, access, DSH_LANDLOCK_NO_RULE);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int dsh_landlock_spec_add_siblings(struct dsh_landlock_spec *s, const struct dsh_landlock_target *targets,
				   size_t n_targets, uint64_t sibling_access, uint64_t way_access, size_t max_grants,
				   struct dsh_error **err)
{
	struct walk w = { s, targets, n_targets, sibling_access, way_access & LANDLOCK_ACCESS_FS_READ_DIR, max_grants,
			  0, err };
	for (size_t i = 0; i < n_targets; i++)
		if (strcmp(targets[i].path, "/") == 0) {
			sibling_access &= targets[i].access;
			if (n_targets == 1)
				return grant(&w, "/", NULL, sibling_access, targets[i].rule);
		}
	if (n_targets == 0)
		return grant(&w, "/", NULL, sibling_access, DSH_LANDLOCK_NO_RULE);
	return walk_dir(&w, "/", NULL, sibling_access);
}
