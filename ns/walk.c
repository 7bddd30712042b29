/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/hash.h"
#include "common/strv.h"
#include "ns/walk.h"
#include "policy/glob.h"

/* ---- the path set: open addressing, FNV-1a, grows at half load ---- */

static int pathset_grow(struct dsh_pathset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	char **slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->slots[i])
			continue;
		size_t j = dsh_fnv1a_str(s->slots[i]) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int dsh_pathset_add(struct dsh_pathset *s, const char *path)
{
	if (dsh_pathset_contains(s, path))
		return 0;
	if ((s->n + 1) * 2 > s->cap && pathset_grow(s) < 0)
		return -ENOMEM;
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	size_t j = dsh_fnv1a_str(path) & (s->cap - 1);
	while (s->slots[j])
		j = (j + 1) & (s->cap - 1);
	s->slots[j] = copy;
	s->n++;
	return 0;
}

bool dsh_pathset_contains(const struct dsh_pathset *s, const char *path)
{
	if (!s || s->n == 0)
		return false;
	for (size_t j = dsh_fnv1a_str(path) & (s->cap - 1); s->slots[j]; j = (j + 1) & (s->cap - 1))
		if (strcmp(s->slots[j], path) == 0)
			return true;
	return false;
}

void dsh_pathset_clear(struct dsh_pathset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slots[i]);
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

/* ---- the walker ---- */

/*
 * Every decision below is one of three questions to the matcher's own automaton (policy/glob.c):
 * is this path covered (dsh_rule_covers, the fence's own test), may anything below this directory
 * be covered (dsh_glob_may_match_below), and may the next level take only literal names
 * (dsh_glob_next_names).  There is no second glob engine, so the walker can never mask less or
 * more than the file fence and `dshbox check` deny (SPEC 3.5).
 */

#define MAX_DEPTH 1024

struct walker {
	const struct dsh_rule *rule;
	const struct dsh_pathset *skip;
	const struct dsh_walk_scope *scope;
	size_t max;
	struct dsh_walk_result *res;
	char path[PATH_MAX];
	size_t len;
	unsigned depth;
	struct dsh_error **err;
};

/* Every spelling the rule names (canonical and as written, SPEC 1.3), as the fence asks. */
static bool covered(const struct walker *w, const char *path)
{
	return dsh_rule_covers(w->rule, path);
}

/* The spellings again: a union, so neither is pruned away. */
static bool may_match_below(const struct walker *w, const char *dir)
{
	for (size_t k = 0; k < w->rule->n_match; k++)
		if (dsh_glob_may_match_below(&w->rule->match[k], dir))
			return true;
	return false;
}

/* 1 with the only names worth looking up in the current directory, 0 when it must be listed. */
static int next_names(const struct walker *w, char ***names)
{
	for (size_t k = 0; k < w->rule->n_match; k++) {
		int r = dsh_glob_next_names(&w->rule->match[k], w->path, names);
		if (r <= 0)
			return r;
	}
	return 1;
}

/* Whether path exists in the sandbox's tree as far as the scope knows. */
static bool in_scope(const struct walker *w, const char *path)
{
	const struct dsh_walk_scope *sc = w->scope;
	if (!sc)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(sc->replaced) && sc->replaced[i]; i++)
		if (dsh_path_is_beneath(path, sc->replaced[i]))
			return false;
	if (!sc->hidden || !dsh_path_is_beneath(path, sc->hidden))
		return true;
	for (size_t i = 0; sc->visible && sc->visible[i]; i++)
		if (dsh_path_is_beneath(path, sc->visible[i]) || dsh_path_is_beneath(sc->visible[i], path))
			return true;
	return false;
}

static int record(struct walker *w, bool is_dir, const struct stat *st)
{
	struct dsh_walk_result *r = w->res;
	if (r->n >= w->max)
		return dsh_err(w->err, DSH_ERR_POLICY, E2BIG, "more than %zu matches (maxMasks)", w->max);
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 32;
		struct dsh_walk_match *m = realloc(r->m, cap * sizeof(*m));
		if (!m)
			return dsh_err_sys(w->err, ENOMEM, "walk");
		r->m = m;
		r->cap = cap;
	}
	char *p = strdup(w->path);
	if (!p)
		return dsh_err_sys(w->err, ENOMEM, "walk");
	r->m[r->n++] = (struct dsh_walk_match){ .path = p, .is_dir = is_dir, .dev = st->st_dev, .ino = st->st_ino };
	return 0;
}

static int walk_dir(struct walker *w, int dirfd);

/* Push "/name" onto the current path; false when it would not fit. */
static bool push(struct walker *w, const char *name, size_t *saved)
{
	size_t n = strlen(name);
	*saved = w->len;
	bool root = w->len == 1 && w->path[0] == '/';
	if (w->len + n + 2 > sizeof(w->path))
		return false;
	if (!root)
		w->path[w->len++] = '/';
	memcpy(w->path + w->len, name, n + 1);
	w->len += n;
	return true;
}

static void pop(struct walker *w, size_t saved)
{
	w->len = saved;
	w->path[w->len] = '\0';
}

/*
 * SPEC 3.13: a directory of another user that we cannot read is skipped, not a failure — the
 * command, with our uid and no capabilities, can neither read nor change it either (a database's
 * data directory in the workspace must not stop every run).
 */
static bool foreign(struct walker *w, int dirfd, const char *name)
{
	(void)w;
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) && st.st_uid != geteuid();
}

static int skip_foreign(struct walker *w)
{
	return dsh_strv_push(&w->res->skipped, w->path) < 0 ? dsh_err_sys(w->err, ENOMEM, "walk") : 0;
}

/* One directory entry (name, its d_type or DT_UNKNOWN) of the directory at w->path. */
static int visit(struct walker *w, int dirfd, const char *name, unsigned char type)
{
	size_t saved;
	if (!push(w, name, &saved))
		return dsh_err(w->err, DSH_ERR_SYSTEM, ENAMETOOLONG, "scan '%s/%s': path too long", w->path, name);
	int r = 0;
	/* A covered entry is recorded whatever it is; an uncovered one matters only as a directory
	   with something coverable below it.  Both questions go before any syscall. */
	bool hit = covered(w, w->path);
	if (!hit && ((type != DT_DIR && type != DT_UNKNOWN) || !may_match_below(w, w->path)))
		goto out;
	struct stat st;
	if (type == DT_UNKNOWN || hit) {
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				r = dsh_err_sys(w->err, errno, "scan '%s'", w->path);
			goto out;
		}
		type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
	}
	if (!in_scope(w, w->path))
		goto out; /* hidden inside the sandbox: neither masked nor entered */
	if (hit) {
		r = record(w, type == DT_DIR, &st);
		goto out; /* a match covers its descendants: nothing below needs a mask of its own */
	}
	if (type != DT_DIR || dsh_pathset_contains(w->skip, w->path))
		goto out;
	if (w->depth >= MAX_DEPTH) {
		r = dsh_err(w->err, DSH_ERR_SYSTEM, ELOOP, "scan '%s': deeper than %d levels", w->path, MAX_DEPTH);
		goto out;
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EACCES && foreign(w, dirfd, name))
			r = skip_foreign(w);
		else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
			r = dsh_err_sys(w->err, errno, "scan '%s'", w->path);
		goto out;
	}
	w->depth++;
	r = walk_dir(w, fd); /* takes fd */
	w->depth--;
out:
	pop(w, saved);
	return r;
}

static bool dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* Takes ownership of dirfd. */
static int walk_dir(struct walker *w, int dfd)
{
	_cleanup_strv_ char **names = NULL;
	int r = next_names(w, &names);
	if (r < 0) {
		close(dfd);
		return dsh_err_sys(w->err, -r, "scan '%s'", w->path);
	}
	if (r > 0) {
		/* Only literal names can lead anywhere: look each up, never read the directory. */
		_cleanup_close_ int fd = dfd;
		for (size_t i = 0; names && names[i]; i++) {
			if (dot_or_dotdot(names[i]))
				continue; /* a listing never yields them either */
			r = visit(w, fd, names[i], DT_UNKNOWN);
			if (r < 0)
				return r;
		}
		return 0;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return dsh_err_sys(w->err, e, "scan '%s'", w->path);
	}
	_cleanup_closedir_ DIR *dir = d;
	w->res->dirs_read++;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(dir);
		if (!de) {
			if (errno)
				return dsh_err_sys(w->err, errno, "scan '%s'", w->path);
			return 0;
		}
		if (dot_or_dotdot(de->d_name))
			continue;
		r = visit(w, dirfd(dir), de->d_name, de->d_type);
		if (r < 0)
			return r;
	}
}

int dsh_glob_walk(const struct dsh_rule *rule, const struct dsh_pathset *skip, const struct dsh_walk_scope *scope,
		  size_t max, struct dsh_walk_result *res, struct dsh_error **err)
{
	_cleanup_free_ struct walker *w = calloc(1, sizeof(*w));
	if (!w)
		return dsh_err_sys(err, ENOMEM, "walk");
	w->rule = rule;
	w->skip = skip;
	w->scope = scope;
	w->max = max;
	w->res = res;
	w->err = err;

	/* Start at the literal directory, where every match of the canonical spelling lies; should the
	   automaton find nothing there, from "/", which it prunes as cheaply. */
	const char *start = rule->literal_dir ? rule->literal_dir : "/";
	if (strlen(start) >= sizeof(w->path) || start[0] != '/' || !may_match_below(w, start))
		start = "/";
	memcpy(w->path, start, strlen(start) + 1);
	w->len = strlen(w->path);

	struct stat st;
	if (!in_scope(w, w->path) || lstat(w->path, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0; /* nothing exists there, so nothing needs a mask */
	if (covered(w, w->path))
		return record(w, true, &st);
	if (dsh_pathset_contains(skip, w->path))
		return 0;
	int fd = open(w->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && foreign(w, AT_FDCWD, w->path))
		return skip_foreign(w);
	if (fd < 0)
		return errno == ENOENT ? 0 : dsh_err_sys(err, errno, "scan '%s'", w->path);
	return walk_dir(w, fd);
}

void dsh_walk_result_clear(struct dsh_walk_result *res)
{
	for (size_t i = 0; i < res->n; i++)
		free(res->m[i].path);
	free(res->m);
	dsh_strv_free(res->skipped);
	memset(res, 0, sizeof(*res));
}
