/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy's query API: what a consumer may know of a compiled policy.  Everything that
 * interprets a rule (coverage, precedence, verdicts) lives in verdict.c; these only read.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/cleanup.h"
#include "policy/path.h"
#include "policy/policy.h"

static const char *const rule_origin_names[] = {
	[DSH_ORIGIN_USER] = "user",
	[DSH_ORIGIN_DEFAULT] = "protected by default",
	[DSH_ORIGIN_SELF] = "policy file in use",
	[DSH_ORIGIN_PROGRAM] = "program in use",
};

const char *dsh_rule_origin_to_string(enum dsh_rule_origin o)
{
	return (size_t)o < ARRAY_SIZE(rule_origin_names) ? rule_origin_names[o] : "?";
}

enum dsh_mode dsh_policy_mode(const struct dsh_policy *p) { return p->mode; }
const char *dsh_policy_workspace(const struct dsh_policy *p) { return p->workspace; }
const char *dsh_policy_cwd(const struct dsh_policy *p) { return p->cwd; }
const char *dsh_policy_tmpdir(const struct dsh_policy *p) { return p->tmpdir; }
long long dsh_policy_diff_basis_max_bytes(const struct dsh_policy *p) { return p->diff_basis_max_bytes; }

size_t dsh_policy_rule_count(const struct dsh_policy *p) { return p->n_rules; }

const struct dsh_rule *dsh_policy_rule(const struct dsh_policy *p, size_t i)
{
	return i < p->n_rules ? &p->rules[i] : NULL;
}

enum dsh_rule_kind dsh_rule_kind(const struct dsh_rule *r) { return r->kind; }
enum dsh_rule_origin dsh_rule_origin(const struct dsh_rule *r) { return r->origin; }
unsigned dsh_rule_index(const struct dsh_rule *r) { return r->index; }
const char *dsh_rule_text(const struct dsh_rule *r) { return r->text; }
const char *dsh_rule_canonical(const struct dsh_rule *r) { return r->canonical; }
const char *dsh_rule_resolved(const struct dsh_rule *r) { return r->resolved; }
bool dsh_rule_is_glob(const struct dsh_rule *r) { return r->glob; }
const char *dsh_rule_literal_prefix(const struct dsh_rule *r) { return r->literal_dir; }

const char *dsh_rule_regex(const struct dsh_rule *r, size_t i)
{
	return i < r->n_match ? r->match[i].regex : NULL;
}

size_t dsh_policy_root_count(const struct dsh_policy *p) { return p->n_roots; }

const struct dsh_root *dsh_policy_root(const struct dsh_policy *p, size_t i)
{
	return i < p->n_roots ? &p->roots[i] : NULL;
}

const struct dsh_root *dsh_policy_live_root_beneath(const struct dsh_policy *p, const char *dir)
{
	for (size_t i = 0; i < p->n_roots; i++) {
		const struct dsh_root *r = &p->roots[i];
		if (!r->dead_by && !r->readonly_by && dsh_path_is_beneath(r->path, dir))
			return r;
	}
	return NULL;
}

const char *dsh_root_path(const struct dsh_root *r) { return r->path; }
const char *dsh_root_origin_name(const struct dsh_root *r) { return dsh_root_origin_to_string(r->origin); }
const struct dsh_rule *dsh_root_rule(const struct dsh_root *r) { return r->rule; }
const struct dsh_rule *dsh_root_dead_by(const struct dsh_root *r) { return r->dead_by; }
const struct dsh_rule *dsh_root_readonly_by(const struct dsh_root *r) { return r->readonly_by; }

char *const *dsh_policy_host_sockets(const struct dsh_policy *p)
{
	static char *const none[] = { NULL };
	return p->host_sockets ? p->host_sockets : none;
}

int dsh_policy_resolve(const struct dsh_policy *p, const char *path, char **ret_canonical,
		       char **ret_spelled, struct dsh_error **err)
{
	_cleanup_free_ char *spelled = NULL;
	int r = dsh_path_absolute(p->cwd, path, &spelled, err);
	if (r < 0)
		return r;
	if (ret_canonical && (r = dsh_path_canonicalize(spelled, ret_canonical, err)) < 0)
		return r;
	if (ret_spelled)
		*ret_spelled = TAKE_PTR(spelled);
	return 0;
}
