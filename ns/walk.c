/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "ns/walk.h"
#include "policy/glob.h"

/* ---- the path set: open addressing, FNV-1a, grows at half load ---- */

static uint64_t hash_path(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int pathset_grow(struct dsh_pathset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	char **slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->slots[i])
			continue;
		size_t j = hash_path(s->slots[i]) & (cap - 1);
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
	size_t j = hash_path(path) & (s->cap - 1);
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
	for (size_t j = hash_path(path) & (s->cap - 1); s->slots[j]; j = (j + 1) & (s->cap - 1))
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

enum comp_type {
	COMP_LITERAL, /* no wildcard: looked up by name, never by reading the directory */
	COMP_MAGIC,   /* wildcards within one level: a prefilter with fnmatch, the regex decides */
	COMP_STAR2,   /* "**": any number of levels, including none */
};

struct comp {
	char *text;   /* the literal name (unescaped) or the fnmatch pattern */
	enum comp_type type;
};

/* A set of positions in the pattern; bit n_comps means "the whole pattern matched". */
typedef uint64_t stateset;
#define MAX_COMPS 62
#define MAX_DEPTH 1024

struct walker {
	const struct dsh_rule *rule;
	struct comp *c;
	size_t nc;
	bool brute;  /* a component holds '**' inside a name: test every path with the regex */
	const struct dsh_pathset *skip;
	const struct dsh_walk_scope *scope;
	size_t max;
	struct dsh_walk_result *res;
	char path[PATH_MAX];
	size_t len;
	unsigned depth;
	struct dsh_error **err;
};

static stateset closure(const struct walker *w, stateset s)
{
	for (size_t i = 0; i < w->nc; i++)
		if ((s & (1ULL << i)) && w->c[i].type == COMP_STAR2)
			s |= 1ULL << (i + 1);
	return s;
}

static bool rule_matches(const struct walker *w, const char *path)
{
	for (size_t k = 0; k < w->rule->n_match; k++)
		if (dsh_glob_match(&w->rule->match[k], path))
			return true;
	return false;
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

static int walk_dir(struct walker *w, int dirfd, stateset states);

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

/* One directory entry (name, its d_type or DT_UNKNOWN), reached with the states of its parent. */
static int visit(struct walker *w, int dirfd, const char *name, unsigned char type, stateset states)
{
	stateset next = 0;
	if (!w->brute) {
		for (size_t i = 0; i < w->nc; i++) {
			if (!(states & (1ULL << i)))
				continue;
			switch (w->c[i].type) {
			case COMP_STAR2:
				next |= 1ULL << i;
				break;
			case COMP_LITERAL:
				if (strcmp(w->c[i].text, name) == 0)
					next |= 1ULL << (i + 1);
				break;
			case COMP_MAGIC:
				if (fnmatch(w->c[i].text, name, 0) == 0)
					next |= 1ULL << (i + 1);
				break;
			}
		}
		if (!next)
			return 0;
		next = closure(w, next);
	}
	size_t saved;
	if (!push(w, name, &saved))
		return dsh_err(w->err, DSH_ERR_SYSTEM, ENAMETOOLONG, "scan '%s/%s': path too long", w->path, name);
	int r = 0;
	struct stat st;
	if (type == DT_UNKNOWN || w->brute || (next & (1ULL << w->nc))) {
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				r = dsh_err_sys(w->err, errno, "scan '%s'", w->path);
			goto out;
		}
		type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
	}
	if (!in_scope(w, w->path))
		goto out; /* hidden inside the sandbox: neither masked nor entered */
	if ((w->brute || (next & (1ULL << w->nc))) && rule_matches(w, w->path)) {
		r = record(w, type == DT_DIR, &st);
		goto out; /* a match covers its descendants: nothing below needs a mask of its own */
	}
	if (type != DT_DIR || dsh_pathset_contains(w->skip, w->path))
		goto out;
	stateset inner = next & ~(1ULL << w->nc);
	if (!w->brute && !inner)
		goto out;
	if (w->depth >= MAX_DEPTH) {
		r = dsh_err(w->err, DSH_ERR_SYSTEM, ELOOP, "scan '%s': deeper than %d levels", w->path, MAX_DEPTH);
		goto out;
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
			r = dsh_err_sys(w->err, errno, "scan '%s'", w->path);
		goto out;
	}
	w->depth++;
	r = walk_dir(w, fd, inner); /* takes fd */
	w->depth--;
out:
	pop(w, saved);
	return r;
}

static bool only_literals(const struct walker *w, stateset states)
{
	if (w->brute)
		return false;
	for (size_t i = 0; i < w->nc; i++)
		if ((states & (1ULL << i)) && w->c[i].type != COMP_LITERAL)
			return false;
	return true;
}

/* Takes ownership of dirfd. */
static int walk_dir(struct walker *w, int dfd, stateset states)
{
	if (only_literals(w, states)) {
		_cleanup_close_ int fd = dfd;
		for (size_t i = 0; i < w->nc; i++) {
			if (!(states & (1ULL << i)))
				continue;
			int r = visit(w, fd, w->c[i].text, DT_UNKNOWN, 1ULL << i);
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
		if (de->d_name[0] == '.' && (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
			continue;
		int r = visit(w, dirfd(dir), de->d_name, de->d_type, states);
		if (r < 0)
			return r;
	}
}

static void comps_free(struct comp *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].text);
	free(c);
}

/* Split the part of the pattern below the start directory into components. */
static int split(struct walker *w, const char *rest)
{
	size_t cap = 8;
	w->c = calloc(cap, sizeof(*w->c));
	if (!w->c)
		return -ENOMEM;
	for (const char *s = rest; *s;) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (w->nc >= MAX_COMPS)
			return -E2BIG;
		if (w->nc == cap) {
			struct comp *c = realloc(w->c, cap * 2 * sizeof(*c));
			if (!c)
				return -ENOMEM;
			w->c = c;
			cap *= 2;
		}
		char *t = strndup(s, n);
		if (!t)
			return -ENOMEM;
		struct comp *c = &w->c[w->nc++];
		if (strcmp(t, "**") == 0) {
			c->type = COMP_STAR2;
			c->text = t;
		} else if (strstr(t, "**")) {
			w->brute = true; /* '**' inside a name: levels may be crossed mid-name */
			c->type = COMP_MAGIC;
			c->text = t;
		} else if (dsh_glob_has_magic(t)) {
			c->type = COMP_MAGIC;
			c->text = t;
		} else {
			c->type = COMP_LITERAL;
			c->text = dsh_glob_unescape(t);
			free(t);
			if (!c->text)
				return -ENOMEM;
		}
		s += n;
	}
	return 0;
}

int dsh_glob_walk(const struct dsh_rule *rule, const struct dsh_pathset *skip, const struct dsh_walk_scope *scope,
		  size_t max, struct dsh_walk_result *res, struct dsh_error **err)
{
	struct walker *w = calloc(1, sizeof(*w));
	if (!w)
		return dsh_err_sys(err, ENOMEM, "walk");
	w->rule = rule;
	w->skip = skip;
	w->scope = scope;
	w->max = max;
	w->res = res;
	w->err = err;

	/* Start at the literal directory when the pattern begins with it; else at "/". */
	const char *pat = rule->canonical;
	const char *start = rule->literal_dir ? rule->literal_dir : "/";
	size_t sl = strlen(start);
	const char *rest;
	if (strcmp(start, "/") == 0 && pat[0] == '/')
		rest = pat + 1;
	else if (strncmp(pat, start, sl) == 0 && (pat[sl] == '/' || pat[sl] == '\0'))
		rest = pat + sl;
	else {
		start = "/";
		rest = pat + 1;
	}
	int r = split(w, rest);
	if (r < 0) {
		r = dsh_err(err, DSH_ERR_POLICY, -r, "pattern '%s': %s", pat,
			    r == -E2BIG ? "too many components" : strerror(-r));
		goto out;
	}
	snprintf(w->path, sizeof(w->path), "%s", start);
	w->len = strlen(w->path);

	struct stat st;
	if (!in_scope(w, w->path) || lstat(w->path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		r = 0; /* nothing exists there, so nothing needs a mask */
		goto out;
	}
	stateset s0 = closure(w, 1);
	if ((w->brute || (s0 & (1ULL << w->nc))) && rule_matches(w, w->path)) {
		r = record(w, true, &st);
		goto out;
	}
	if (dsh_pathset_contains(skip, w->path)) {
		r = 0;
		goto out;
	}
	int fd = open(w->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = errno == ENOENT ? 0 : dsh_err_sys(err, errno, "scan '%s'", w->path);
		goto out;
	}
	r = walk_dir(w, fd, s0 & ~(1ULL << w->nc));
out:
	comps_free(w->c, w->nc);
	free(w);
	return r;
}

void dsh_walk_result_clear(struct dsh_walk_result *res)
{
	for (size_t i = 0; i < res->n; i++)
		free(res->m[i].path);
	free(res->m);
	memset(res, 0, sizeof(*res));
}
