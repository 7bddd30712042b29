/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/hash.h"
#include "common/strbuf.h"
#include "policy/path.h"
#include "policy/policy.h"

/* mingw-w64's limits.h has PATH_MAX but no NAME_MAX; NTFS's limit is the same 255. */
#ifndef NAME_MAX
#define NAME_MAX 255
#endif

/* Append path's components to b ("/" or a normalised path), '.' dropped and '..' applied. */
static void normalize_into(struct dsh_buf *b, const char *path)
{
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (b->len > 1) {
				while (b->len > 1 && b->s[b->len - 1] != '/')
					b->len--;
				if (b->len > 1)
					b->len--;
				b->s[b->len] = '\0';
			}
		} else {
			if (b->len > 1)
				dsh_buf_addc(b, '/');
			dsh_buf_addn(b, p, n);
		}
		p = end;
	}
}

char *dsh_path_normalize(const char *base, const char *path)
{
	struct dsh_buf b = { 0 };
	if (path[0] != '/' && !base)
		return NULL;
	dsh_buf_addc(&b, '/');
	/* A relative path continues its base: the same walk over both, no joined copy. */
	if (path[0] != '/')
		normalize_into(&b, base);
	normalize_into(&b, path);
	return dsh_buf_steal(&b);
}

int dsh_path_canonicalize(const char *path, char **ret, struct dsh_error **err)
{
	_cleanup_free_ char *prefix = strdup(path);
	if (!prefix)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");

	/* Cut components off the end until what is left exists; "/" always does. */
	size_t cut = strlen(prefix);
	for (;;) {
		_cleanup_free_ char *real = NULL;
		int r = dsh_path_real(prefix[0] ? prefix : "/", &real);
		if (r == 0) {
			const char *rest = path + cut;
			char *out = NULL;
			if (strcmp(real, "/") == 0 && *rest == '/')
				out = strdup(rest);
			else if (asprintf(&out, "%s%s", real, rest) < 0)
				out = NULL;
			if (!out)
				return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			*ret = out;
			return 0;
		}
		if (r != -ENOENT && r != -ENOTDIR && r != -EACCES && r != -ELOOP)
			return dsh_err_sys(err, -r, "resolve '%s'", prefix);
		char *slash = strrchr(prefix, '/');
		if (!slash || slash == prefix) {
			prefix[1] = '\0';
			cut = 0;
		} else {
			*slash = '\0';
			cut = (size_t)(slash - prefix);
		}
	}
}

char *dsh_str_cat(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = malloc(na + nb + 1);
	if (!s)
		return NULL;
	memcpy(s, a, na);
	memcpy(s + na, b, nb + 1);
	return s;
}

/* The slot holding dir (len bytes), or the empty one it would go in. */
static struct dsh_canon_slot *canon_slot(struct dsh_canon_cache *c, const char *dir, size_t len)
{
	for (size_t i = (size_t)dsh_fnv1a(dir, len) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		struct dsh_canon_slot *e = &c->slots[i];
		if (!e->dir || (strlen(e->dir) == len && strncmp(e->dir, dir, len) == 0))
			return e;
	}
}

/* Room for one more at a load of at most one half. */
static int canon_grow(struct dsh_canon_cache *c)
{
	if (c->slots && 2 * (c->n + 1) <= c->cap)
		return 0;
	size_t cap = c->cap ? 2 * c->cap : 64;
	struct dsh_canon_cache bigger = { .slots = calloc(cap, sizeof(struct dsh_canon_slot)), .cap = cap,
					  .n_handles = c->n_handles };
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++)
		if (c->slots[i].dir) {
			*canon_slot(&bigger, c->slots[i].dir, strlen(c->slots[i].dir)) = c->slots[i];
			bigger.n++;
		}
	free(c->slots);
	*c = bigger;
	return 0;
}

int dsh_path_canonicalize_cached(const char *path, struct dsh_canon_cache *cache, char **ret,
				 struct dsh_error **err)
{
	const char *slash = strrchr(path, '/');
	if (!cache || !slash || slash == path || !slash[1])
		return dsh_path_canonicalize(path, ret, err);
	size_t dl = (size_t)(slash - path);
	if (canon_grow(cache) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	struct dsh_canon_slot *e = canon_slot(cache, path, dl);
	if (!e->dir) {
		_cleanup_free_ char *dir = strndup(path, dl), *canon = NULL;
		if (!dir)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		int r = dsh_path_canonicalize(dir, &canon, err);
		if (r < 0)
			return r;
		struct stat st;
		e->exists = stat(canon, &st) == 0 && S_ISDIR(st.st_mode);
		e->dir = TAKE_PTR(dir);
		e->canon = TAKE_PTR(canon);
		e->handle = -1;
		cache->n++;
	}
	if (e->exists && ++e->lookups == 2 && cache->n_handles < DSH_CANON_HANDLES &&
	    (e->handle = dsh_path_dir_handle(e->canon)) >= 0)
		cache->n_handles++;
	_cleanup_free_ char *joined = dsh_str_cat(strcmp(e->canon, "/") == 0 ? "" : e->canon, slash);
	if (!joined)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	/* Only a symlink as the last component needs the full resolution; in a directory that does
	   not exist there is none to look for. */
	if (e->exists && dsh_path_is_link_in(e->handle, slash + 1, joined))
		return dsh_path_canonicalize(path, ret, err);
	*ret = TAKE_PTR(joined);
	return 0;
}

void dsh_canon_cache_clear(struct dsh_canon_cache *cache)
{
	for (size_t i = 0; i < cache->cap; i++) {
		if (cache->slots[i].dir)
			dsh_path_dir_handle_close(cache->slots[i].handle);
		free(cache->slots[i].dir);
		free(cache->slots[i].canon);
	}
	free(cache->slots);
	*cache = (struct dsh_canon_cache){ 0 };
}

int dsh_path_resolve(const char *base, const char *path, char **ret, struct dsh_error **err)
{
	if (!path || !*path)
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "empty path");
	if (path[0] != '/' && (!base || base[0] != '/'))
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "relative path '%s' without an absolute base", path);
	_cleanup_free_ char *norm = dsh_path_normalize(base, path);
	if (!norm)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	if (strlen(norm) >= PATH_MAX)
		return dsh_err(err, DSH_ERR_USAGE, ENAMETOOLONG, "path '%.64s...' is longer than PATH_MAX", norm);
	return dsh_path_canonicalize(norm, ret, err);
}

int dsh_path_resolve_physical(const char *base, const char *path, char **ret, struct dsh_error **err)
{
	if (!path || !*path)
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "empty path");
	if (path[0] != '/' && (!base || base[0] != '/'))
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "relative path '%s' without an absolute base", path);
	_cleanup_free_ char *joined = NULL;
	if (path[0] != '/' && asprintf(&joined, "%s/%s", base, path) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	const char *in = joined ? joined : path;
	if (strlen(in) >= PATH_MAX)
		return dsh_err(err, DSH_ERR_USAGE, ENAMETOOLONG, "path '%.64s...' is longer than PATH_MAX", in);

	/*
	 * Component by component, as the kernel walks: each name that exists is canonicalised at once,
	 * so a later '..' leaves the symlink's target, not the link.  Past the first missing name the
	 * rest can only be lexical (there is nothing to resolve), and a '..' back out of it lands in
	 * the canonical part again.
	 */
	struct dsh_buf b = { 0 };
	dsh_buf_addc(&b, '/');
	for (const char *p = in; *p && !b.oom;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (b.len > 1 && b.s[b.len - 1] != '/')
				b.len--;
			if (b.len > 1)
				b.len--;
			b.s[b.len] = '\0';
		} else {
			if (b.len > 1)
				dsh_buf_addc(&b, '/');
			dsh_buf_addn(&b, p, n);
			_cleanup_free_ char *real = NULL;
			if (!b.oom && dsh_path_real(b.s, &real) == 0) {
				b.len = 0;
				dsh_buf_add(&b, real);
			}
		}
		p = end;
	}
	char *out = dsh_buf_steal(&b);
	if (!out)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	*ret = out;
	return 0;
}

bool dsh_path_is_beneath(const char *path, const char *root)
{
	size_t n = strlen(root);
	if (n == 1 && root[0] == '/')
		return path[0] == '/';
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int dsh_path_compare(const char *a, const char *b)
{
	/* '/' sorts before every other byte, so a parent precedes its children and "/a/b" < "/a-b". */
	for (;; a++, b++) {
		unsigned char ca = (unsigned char)*a, cb = (unsigned char)*b;
		if (ca == cb) {
			if (!ca)
				return 0;
			continue;
		}
		if (!ca)
			return -1;
		if (!cb)
			return 1;
		if (ca == '/')
			return -1;
		if (cb == '/')
			return 1;
		return ca < cb ? -1 : 1;
	}
}

int dsh_path_absolute(const char *base, const char *path, char **ret, struct dsh_error **err)
{
	if (!path || !*path)
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "empty path");
	if (strpbrk(path, "\n\r"))
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "path holds a line break");
	if (path[0] != '/' && (!base || base[0] != '/'))
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "relative path '%s' without an absolute base", path);
	if ((path[0] == '/' ? 0 : strlen(base) + 1) + strlen(path) + 1 > PATH_MAX)
		return dsh_err(err, DSH_ERR_USAGE, ENAMETOOLONG, "path longer than PATH_MAX");
	for (const char *c = path; *c;) {
		size_t n = strcspn(c, "/");
		if (n > NAME_MAX)
			return dsh_err(err, DSH_ERR_USAGE, ENAMETOOLONG, "a component of '%s' is longer than NAME_MAX",
				       path);
		c += n;
		c += strspn(c, "/");
	}
	char *out = dsh_path_normalize(base, path);
	if (!out)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	*ret = out;
	return 0;
}
