/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/index.h"
#include "policy/path.h"
#include "policy/policy.h"
#include "policy/protected.h"
#include "policy/rule.h"

static const char *const root_origin_names[] = {
	[DSH_ROOT_WORKSPACE] = "workspace",
	[DSH_ROOT_TMP] = "/tmp",
	[DSH_ROOT_TMPDIR] = "$TMPDIR",
	[DSH_ROOT_RULE] = "rw rule",
	[DSH_ROOT_MODE] = "mode danger-full-access",
};

const char *dsh_root_origin_to_string(enum dsh_root_origin o)
{
	return (size_t)o < sizeof(root_origin_names) / sizeof(root_origin_names[0]) ? root_origin_names[o] : "?";
}

static int oom(struct dsh_error **err)
{
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

/* The rule just parsed into p->rules[p->n_rules]: its strings into the policy's pool (cleared
   when they cannot go there), its matchers counted. */
static int keep_rule(struct dsh_policy *p)
{
	struct dsh_rule *r = &p->rules[p->n_rules];
	if (dsh_rule_pool(r, &p->strings) < 0) {
		dsh_rule_clear(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n_match; i++)
		if (r->match[i].prog) {
			p->n_matchers++;
			break;
		}
	return 0;
}

/* Split every access entry into lines and parse each non-blank one. */
static int parse_rules(struct dsh_policy *p, const struct dsh_config *c, char *const *envp,
		       struct dsh_canon_cache *cache, size_t *cap, struct dsh_error **err)
{
	for (size_t i = 0; c->access && c->access[i]; i++) {
		const char *s = c->access[i];
		const struct dsh_access_origin *o = i < c->n_access_origins ? &c->access_origins[i] : NULL;
		for (unsigned k = 0; s; k++) {
			const char *nl = strchr(s, '\n');
			_cleanup_free_ char *line = nl ? strndup(s, (size_t)(nl - s)) : strdup(s);
			if (!line)
				return oom(err);
			s = nl ? nl + 1 : NULL;
			if (strspn(line, " \t\r\v\f") == strlen(line))
				continue;
			if (p->n_rules == *cap) {
				/* Doubling: one more each time was a copy (an mremap) per rule. */
				size_t more = *cap ? 2 * *cap : 16;
				struct dsh_rule *rules = realloc(p->rules, more * sizeof(*rules));
				if (!rules)
					return oom(err);
				p->rules = rules;
				*cap = more;
			}
			int r = dsh_rule_parse(line, p->workspace, envp, (unsigned)p->n_rules, c->refuse_shell_variables,
					       cache, &p->rules[p->n_rules], err);
			if (r >= 0 && (r = keep_rule(p)) < 0)
				return oom(err);
			if (r < 0) {
				/* SPEC 1.3: "dshbox.yml:7: rule "...": reason" when it came from a file. */
				if (o && o->file)
					dsh_err_prefix(err, "%s:%u", o->file, o->line + (o->each_line ? k : 0));
				return r;
			}
			p->n_rules++;
		}
	}
	return 0;
}

static int add_root(struct dsh_policy *p, const char *path, enum dsh_root_origin origin,
		    const struct dsh_rule *rule, struct dsh_error **err)
{
	for (size_t i = 0; i < p->n_roots; i++)
		if (strcmp(p->roots[i].path, path) == 0)
			return 0;
	struct dsh_root *roots = realloc(p->roots, (p->n_roots + 1) * sizeof(*roots));
	if (!roots)
		return oom(err);
	p->roots = roots;
	struct dsh_root *r = &p->roots[p->n_roots];
	memset(r, 0, sizeof(*r));
	r->path = strdup(path);
	if (!r->path)
		return oom(err);
	r->origin = origin;
	r->rule = rule;
	p->n_roots++;
	return 0;
}

static int cmp_roots(const void *a, const void *b)
{
	return dsh_path_compare(((const struct dsh_root *)a)->path, ((const struct dsh_root *)b)->path);
}

static const char *origin_name(const struct dsh_root *r)
{
	switch (r->origin) {
	case DSH_ROOT_WORKSPACE:
		return "the workspace";
	case DSH_ROOT_TMP:
		return "/tmp";
	case DSH_ROOT_TMPDIR:
		return "$TMPDIR";
	case DSH_ROOT_RULE:
		return "rw rule";
	case DSH_ROOT_MODE:
		return "mode danger-full-access";
	}
	return "?";
}

static int compute_roots(struct dsh_policy *p, struct dsh_error **err)
{
	int r = 0;
	switch (p->mode) {
	case DSH_MODE_READ_ONLY:
		return 0;
	case DSH_MODE_DANGER_FULL_ACCESS:
		return add_root(p, "/", DSH_ROOT_MODE, NULL, err);
	case DSH_MODE_WORKSPACE_WRITE:
		break;
	}
	r = add_root(p, p->workspace, DSH_ROOT_WORKSPACE, NULL, err);
	/* tmp: private hides the host's /tmp behind a tmpfs: the fence must not write there either. */
	if (r >= 0 && p->tmp == DSH_TMP_HOST) {
		_cleanup_free_ char *tmp = NULL;
		r = dsh_path_canonicalize("/tmp", &tmp, err);
		if (r >= 0)
			r = add_root(p, tmp, DSH_ROOT_TMP, NULL, err);
	}
	if (r >= 0 && p->tmpdir)
		r = add_root(p, p->tmpdir, DSH_ROOT_TMPDIR, NULL, err);
	for (size_t i = 0; r >= 0 && i < p->n_rules; i++)
		if (p->rules[i].kind == DSH_RULE_RW)
			r = add_root(p, p->rules[i].canonical, DSH_ROOT_RULE, &p->rules[i], err);
	if (r < 0)
		return r;
	qsort(p->roots, p->n_roots, sizeof(*p->roots), cmp_roots);
	return 0;
}

/*
 * A relative rule reads as "in the project", so one that climbs out of the workspace ("rw
 * ../../../../etc") is said at load: it holds as written, but its author rarely meant it.
 */
static int warn_relative_escapes(struct dsh_policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *rule = &p->rules[i];
		const char *path = rule->text + strcspn(rule->text, " \t");
		path += strspn(path, " \t");
		if (rule->origin != DSH_ORIGIN_USER || *path == '/' || *path == '{' ||
		    dsh_path_is_beneath(rule->resolved, p->workspace))
			continue;
		if (dsh_strv_pushf(&p->warnings, "rule \"%s\" is relative but resolves to %s, outside the workspace %s",
				   rule->text, rule->resolved, p->workspace) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Nesting is decided by precedence, and said out loud (SPEC 1.2). */
static int check_nesting(struct dsh_policy *p, struct dsh_error **err)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *rule = &p->rules[i];
		if (rule->kind == DSH_RULE_DENY && dsh_rule_covers(rule, p->workspace)) {
			int r = dsh_err(err, DSH_ERR_POLICY, EINVAL,
					"the workspace %s lies inside rule \"%s\": the command could not even read it",
					p->workspace, rule->text);
			dsh_err_hint(err, "narrow the rule, or choose another workspace with --workspace");
			return r;
		}
	}
	if (p->mode == DSH_MODE_DANGER_FULL_ACCESS)
		return 0;
	for (size_t j = 0; j < p->n_roots; j++) {
		struct dsh_root *root = &p->roots[j];
		for (size_t i = 0; i < p->n_rules; i++) {
			const struct dsh_rule *rule = &p->rules[i];
			if (rule->kind == DSH_RULE_RW || !dsh_rule_covers(rule, root->path))
				continue;
			const char *what = root->rule ? root->rule->text : origin_name(root);
			int r;
			if (rule->kind == DSH_RULE_DENY && !root->dead_by) {
				root->dead_by = rule;
				r = dsh_strv_pushf(&p->warnings,
						   "writable root %s (%s) lies inside rule \"%s\": it is neither readable nor writable",
						   root->path, what, rule->text);
			} else if (rule->kind == DSH_RULE_RO && !root->readonly_by) {
				root->readonly_by = rule;
				r = dsh_strv_pushf(&p->warnings,
						   "writable root %s (%s) lies inside rule \"%s\": it is read-only there",
						   root->path, what, rule->text);
			} else {
				continue;
			}
			if (r < 0)
				return oom(err);
		}
	}
	if (warn_relative_escapes(p) < 0)
		return oom(err);
	if (p->mode == DSH_MODE_READ_ONLY)
		for (size_t i = 0; i < p->n_rules; i++)
			if (p->rules[i].kind == DSH_RULE_RW &&
			    dsh_strv_pushf(&p->warnings, "rule \"%s\" is ignored in read-only mode",
					   p->rules[i].text) < 0)
				return oom(err);
	return 0;
}

static int resolve_dir(const char *base, const char *path, const char *what, char **ret,
		       struct dsh_error **err)
{
	/* Where the kernel's chdir lands: a '..' after a symlink leaves its target (SPEC 1.3). */
	int r = dsh_path_resolve_physical(base, path, ret, err);
	if (r < 0)
		dsh_err_prefix(err, "%s", what);
	return r;
}

/* Room for n more rules; roots point into the array, so they are re-pointed by index. */
static int reserve_rules(struct dsh_policy *p, size_t n, struct dsh_error **err)
{
	_cleanup_free_ size_t *idx = calloc(p->n_roots + 1, sizeof(*idx));
	if (!idx)
		return oom(err);
	for (size_t i = 0; i < p->n_roots; i++)
		idx[i] = p->roots[i].rule ? (size_t)(p->roots[i].rule - p->rules) : SIZE_MAX;
	struct dsh_rule *rules = realloc(p->rules, (p->n_rules + n) * sizeof(*rules));
	if (!rules)
		return oom(err);
	p->rules = rules;
	for (size_t i = 0; i < p->n_roots; i++)
		if (idx[i] != SIZE_MAX)
			p->roots[i].rule = &rules[idx[i]];
	return 0;
}

/* Append a literal rule; the room was reserved. */
static int push_literal(struct dsh_policy *p, enum dsh_rule_origin origin, const char *path,
			struct dsh_canon_cache *cache, struct dsh_error **err)
{
	int r = dsh_rule_literal(DSH_RULE_RO, origin, path, (unsigned)p->n_rules, cache, &p->rules[p->n_rules], err);
	if (r < 0)
		return r;
	if (keep_rule(p) < 0)
		return oom(err);
	p->n_rules++;
	return 0;
}

static bool in_writable_root(const struct dsh_policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_roots; i++)
		if (dsh_path_is_beneath(path, p->roots[i].path))
			return true;
	return false;
}

static bool unprotected(const struct dsh_config *c, const char *name)
{
	for (size_t i = 0; c->unprotect && c->unprotect[i]; i++)
		if (strcmp(c->unprotect[i], name) == 0)
			return true;
	return false;
}

/*
 * SPEC 1.6 and 16: in workspace-write the command may not plant what runs outside it later — a
 * hook, a hooksPath, a shell's, git's, an editor's or an agent host's start-up file in a writable
 * root — nor rewrite the policy it runs under or the program that enforces the next run.  These are
 * ordinary r- rules, so every consumer treats them like the user's own.
 */
static int add_protected_defaults(struct dsh_policy *p, const struct dsh_config *c, const char *cwd,
				  struct dsh_error **err)
{
	if (p->mode != DSH_MODE_WORKSPACE_WRITE || !c->protect_defaults)
		return 0;
	for (size_t i = 0; c->unprotect && c->unprotect[i]; i++)
		if (!dsh_protected_name_find(c->unprotect[i]))
			return dsh_err(err, DSH_ERR_CONFIG, EINVAL,
				       "unprotect: '%s' is not a default-protected name (dshbox explain lists them)",
				       c->unprotect[i]);
	char **programs = p->programs;
	if (!programs)
		return dsh_err(err, DSH_ERR_SYSTEM, p->programs_errno, "the program in use: readlink /proc/self/exe");
	struct dsh_canon_cache cache = { 0 };
	int r = reserve_rules(p, p->n_roots * dsh_n_protected_names + dsh_strv_len(c->sources) +
				     dsh_strv_len(programs), err);
	for (size_t i = 0; r >= 0 && i < p->n_roots; i++) {
		const char *root = p->roots[i].path;
		/* A writable root that is a file (rw ~/.npmrc) has no names beneath it, nor can it become a
		   directory (a bind's mount point, or a Landlock grant on one inode): names under it would
		   only make the file itself read-only, "a file on the way" to them. */
		struct stat st;
		if (stat(root, &st) == 0 && !S_ISDIR(st.st_mode))
			continue;
		for (size_t k = 0; r >= 0 && k < dsh_n_protected_names; k++) {
			const char *name = dsh_protected_names[k].name;
			if (unprotected(c, name))
				continue;
			_cleanup_free_ char *path = NULL;
			if (asprintf(&path, "%s/%s", strcmp(root, "/") == 0 ? "" : root, name) < 0) {
				path = NULL;
				r = oom(err);
				break;
			}
			r = push_literal(p, DSH_ORIGIN_DEFAULT, path, &cache, err);
		}
	}
	for (size_t i = 0; r >= 0 && c->sources && c->sources[i]; i++) {
		_cleanup_free_ char *path = dsh_path_normalize(cwd, c->sources[i]);
		r = path ? push_literal(p, DSH_ORIGIN_SELF, path, &cache, err) : oom(err);
	}
	/* Outside every writable root the program is read-only already: no rule, and no mount. */
	for (size_t i = 0; r >= 0 && programs[i]; i++)
		if (in_writable_root(p, programs[i]))
			r = push_literal(p, DSH_ORIGIN_PROGRAM, programs[i], &cache, err);
	dsh_canon_cache_clear(&cache);
	return r;
}

int dsh_policy_new(const struct dsh_config *c, char *const *envp, const char *cwd,
		   struct dsh_policy **ret, struct dsh_error **err)
{
	if (!cwd || cwd[0] != '/')
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "the current directory must be an absolute path");
	int r;
	struct dsh_policy *p = calloc(1, sizeof(*p));
	if (!p)
		return oom(err);
	p->mode = c->mode;
	p->tmp = c->tmp;
	p->diff_basis_max_bytes = c->diff_basis_max_bytes;
	/* 0 would quietly turn every overwrite's diff off: a bound is a positive size. */
	if (c->diff_basis_max_bytes <= 0) {
		r = dsh_err(err, DSH_ERR_CONFIG, EINVAL, "diffBasisMaxBytes: must be positive, got %lld",
			    c->diff_basis_max_bytes);
		goto fail;
	}

	r = resolve_dir(cwd, c->cwd ? c->cwd : ".", "cwd", &p->cwd, err);
	if (r < 0)
		goto fail;
	r = resolve_dir(cwd, c->workspace ? c->workspace : ".", "workspace", &p->workspace, err);
	if (r < 0)
		goto fail;
	const char *tmpdir = dsh_env_get(envp, "TMPDIR");
	if (tmpdir && *tmpdir) {
		r = resolve_dir(cwd, tmpdir, "TMPDIR", &p->tmpdir, err);
		if (r < 0)
			goto fail;
	}
	r = dsh_host_sockets(envp, &p->host_sockets, err);
	if (r < 0)
		goto fail;

	struct dsh_canon_cache cache = { 0 };
	size_t cap = 0;
	r = parse_rules(p, c, envp, &cache, &cap, err);
	dsh_canon_cache_clear(&cache);
	if (r < 0)
		goto fail;
	r = compute_roots(p, err);
	if (r < 0)
		goto fail;
	/* Named in every mode for explain; a refusal only where it must be protected (below). */
	struct dsh_error *perr = NULL;
	r = dsh_program_in_use(&p->programs, &perr);
	if (r == -ENOMEM) {
		dsh_error_free(perr);
		r = oom(err);
		goto fail;
	}
	p->programs_errno = r < 0 ? -r : 0;
	dsh_error_free(perr);
	r = add_protected_defaults(p, c, cwd, err);
	if (r < 0)
		goto fail;
	r = check_nesting(p, err);
	if (r < 0)
		goto fail;
	if (dsh_rule_index_build(&p->index, p->rules, p->n_rules) < 0) {
		r = oom(err);
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	dsh_policy_free(p);
	return r;
}

void dsh_policy_free(struct dsh_policy *p)
{
	if (!p)
		return;
	dsh_rule_index_clear(&p->index);
	/* Every rule's strings are the pool's: only the wildcards' matchers are freed rule by rule,
	   and 200,000 literal rules are not walked at all. */
	for (size_t i = 0; p->n_matchers && i < p->n_rules; i++)
		dsh_rule_clear(&p->rules[i]);
	free(p->rules);
	dsh_strpool_clear(&p->strings);
	for (size_t i = 0; i < p->n_roots; i++)
		free(p->roots[i].path);
	free(p->roots);
	free(p->workspace);
	free(p->cwd);
	free(p->tmpdir);
	dsh_strv_free(p->warnings);
	dsh_strv_free(p->host_sockets);
	dsh_strv_free(p->programs);
	free(p);
}

size_t dsh_policy_program_count(const struct dsh_policy *p)
{
	return dsh_strv_len(p->programs);
}

const char *dsh_policy_program(const struct dsh_policy *p, size_t i, enum dsh_program_guard *guard)
{
	const char *path = p->programs[i];
	*guard = in_writable_root(p, path) ? DSH_PROGRAM_UNPROTECTED : DSH_PROGRAM_OUTSIDE;
	for (size_t k = 0; *guard == DSH_PROGRAM_UNPROTECTED && k < p->n_rules; k++)
		if (p->rules[k].origin == DSH_ORIGIN_PROGRAM && strcmp(p->rules[k].resolved, path) == 0)
			*guard = DSH_PROGRAM_PROTECTED;
	return path;
}

const char *dsh_program_guard_to_string(enum dsh_program_guard g)
{
	switch (g) {
	case DSH_PROGRAM_PROTECTED:
		return "protected";
	case DSH_PROGRAM_OUTSIDE:
		return "outside";
	case DSH_PROGRAM_UNPROTECTED:
		return "unprotected";
	}
	return "?";
}

char *const *dsh_policy_warnings(const struct dsh_policy *p)
{
	static char *const none[] = { NULL };
	return p->warnings ? p->warnings : none;
}
