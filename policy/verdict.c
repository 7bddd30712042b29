/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/index.h"
#include "policy/policy.h"

/*
 * Precedence is by kind, never by order or specificity: -- > r- > rw / platform writable roots
 * (SPEC 1.2).  Reads are decided by -- rules alone.
 */
int dsh_policy_verdict(const struct dsh_policy *p, enum dsh_op op, const char *path,
		       struct dsh_verdict *v)
{
	*v = (struct dsh_verdict){ .allow = false };
	if (!path || path[0] != '/')
		return -EINVAL;
	/* The first rule of each kind in policy order, looked up rather than scanned (index.c). */
	const struct dsh_rule *deny = NULL, *ro = NULL;
	if (op == DSH_OP_READ)
		deny = dsh_index_first_deny(p, path);
	else
		dsh_index_first_deny_ro(p, path, &deny, &ro);
	if (deny || ro) {
		v->rule = deny ? deny : ro;
		v->reason = "rule";
		return 0;
	}
	if (op == DSH_OP_READ) {
		v->allow = true;
		v->reason = "readable";
		return 0;
	}
	switch (p->mode) {
	case DSH_MODE_READ_ONLY:
		v->reason = "mode read-only";
		return 0;
	case DSH_MODE_DANGER_FULL_ACCESS:
		v->allow = true;
		v->reason = "mode danger-full-access";
		return 0;
	case DSH_MODE_WORKSPACE_WRITE:
		break;
	}
	/* Roots are sorted parents first: the innermost containing root is the last match. */
	for (size_t i = p->n_roots; i-- > 0;)
		if (dsh_path_is_beneath(path, p->roots[i].path)) {
			v->allow = true;
			v->root = &p->roots[i];
			v->reason = "writable root";
			return 0;
		}
	v->reason = "outside the writable roots";
	return 0;
}

bool dsh_policy_spelling_denied(const struct dsh_policy *p, enum dsh_op op, const char *spelled,
				struct dsh_verdict *v)
{
	/* The first deny-type rule in policy order, whichever its kind. */
	const struct dsh_rule *deny = NULL, *ro = NULL, *rule;
	if (op == DSH_OP_READ)
		deny = dsh_index_first_deny(p, spelled);
	else
		dsh_index_first_deny_ro(p, spelled, &deny, &ro);
	rule = !ro || (deny && deny < ro) ? deny : ro;
	if (!rule)
		return false;
	*v = (struct dsh_verdict){ .allow = false, .rule = rule, .reason = "rule (as spelled)", .by_spelling = true };
	return true;
}

int dsh_policy_decide(const struct dsh_policy *p, enum dsh_op op, const char *canonical, const char *spelled,
		      struct dsh_verdict *v)
{
	int r = dsh_policy_verdict(p, op, canonical, v);
	if (r < 0 || !v->allow || !spelled || strcmp(spelled, canonical) == 0)
		return r;
	dsh_policy_spelling_denied(p, op, spelled, v);
	return 0;
}

/* Whether path names target or a directory on the way to it (component-wise). */
static bool on_the_way(const char *path, const char *target)
{
	return target && dsh_path_is_beneath(target, path);
}

const struct dsh_rule *dsh_policy_guarded(const struct dsh_policy *p, const char *path)
{
	if (strlen(path) >= 2)
		return dsh_index_first_guarding(p, path);
	/* "/" is on the way to every target: the scan answers it as well as an index would. */
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		if (r->kind == DSH_RULE_RW)
			continue;
		/* The target (a glob's literal directory: below it every match lives), under its
		   canonical name and as spelled (a symlink the rule was written through). */
		if (on_the_way(path, r->literal_dir) || dsh_rule_covers(r, path))
			return r;
		for (size_t k = 0; k < r->n_match; k++)
			if (r->match[k].literal && on_the_way(path, r->match[k].literal))
				return r;
	}
	return NULL;
}

int dsh_policy_decide_file(const struct dsh_policy *p, enum dsh_op op, const char *canonical, const char *spelled,
			   bool is_dir, struct dsh_verdict *ret)
{
	int r = dsh_policy_decide(p, op, canonical, spelled, ret);
	if (r < 0 || !ret->allow || op != DSH_OP_WRITE || is_dir)
		return r;
	const struct dsh_rule *g = dsh_policy_guarded(p, canonical);
	if (!g && spelled && strcmp(spelled, canonical) != 0)
		g = dsh_policy_guarded(p, spelled);
	if (g)
		*ret = (struct dsh_verdict){ .allow = false, .rule = g, .reason = "on the way", .on_the_way = true };
	return 0;
}

bool dsh_policy_rule_covers(const struct dsh_rule *r, const char *path)
{
	return dsh_rule_covers(r, path);
}

char *dsh_verdict_explain(const struct dsh_verdict *v)
{
	char *s = NULL;
	int r;
	if (v->rule && v->on_the_way)
		r = asprintf(&s, "only a directory may stand on the way to what rule \"%s\" protects", v->rule->text);
	else if (v->rule)
		r = asprintf(&s, "rule \"%s\"", v->rule->text);
	else if (v->root)
		r = asprintf(&s, "writable root %s", v->root->path);
	else
		r = asprintf(&s, "%s", v->reason ? v->reason : "?");
	return r < 0 ? NULL : s;
}
