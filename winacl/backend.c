/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The winacl backend (SPEC 6) as the library sees it: the plan (plan.c), built from the policy by
 * the one compile the Windows runner uses too (compile.c), described and rendered on every
 * platform.  Running it is the Windows runner's job
 * (winacl/runner_win.c, `make windows`); on this platform probe() and confine() refuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "dshbox/backend.h"
#include "policy/policy.h"
#include "winacl/compile.h"
#include "winacl/plan.h"

extern const struct dsh_backend dsh_backend_winacl;

static int wa_probe(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err)
{
	(void)o;
	(void)p;
	int r = dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP,
			"backend 'winacl' runs only on Windows (dshbox-winrun.exe, built by 'make windows')");
	dsh_err_hint(err, "'dshbox explain --backend winacl' shows its plan on any platform");
	return r;
}

static int wa_compile(const struct dsh_policy *p, const struct dsh_run_options *o, void **ret_plan,
		      struct dsh_error **err)
{
	(void)o;
	struct dsh_winacl_plan *plan = calloc(1, sizeof(*plan));
	if (!plan)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	/* The same compile as dshbox-winrun.exe's (winacl/compile.c), in the policy's own paths. */
	int r = dsh_winacl_plan_from_policy(p, 0, plan, err);
	if (r < 0) {
		free(plan);
		return r;
	}
	*ret_plan = plan;
	return 0;
}

static void wa_free(void *plan)
{
	if (!plan)
		return;
	dsh_winacl_plan_clear(plan);
	free(plan);
}

static int wa_render(const struct dsh_policy *p, const void *plan, char **ret, struct dsh_error **err)
{
	void *own = NULL;
	int r;
	if (!plan) {
		if ((r = wa_compile(p, NULL, &own, err)) < 0)
			return r;
		plan = own;
	}
	*ret = dsh_winacl_plan_render(plan);
	wa_free(own);
	return *ret ? 0 : dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

static int report(struct dsh_description *d, size_t i, const struct dsh_rule *r, enum dsh_enforcement level,
		  const char *how, const char *lost)
{
	struct dsh_rule_report *rep = &d->rules[i];
	rep->level = level;
	rep->how = strdup(how);
	rep->lost = lost ? strdup(lost) : NULL;
	if (!rep->how || (lost && !rep->lost))
		return -ENOMEM;
	if (level != DSH_ENFORCE_FULL) {
		if (dsh_strv_pushf(&d->warnings, "rule \"%s\": backend winacl: %s", r->text, lost) < 0)
			return -ENOMEM;
		if (level > d->overall)
			d->overall = level;
	}
	return 0;
}

static int wa_describe(const struct dsh_policy *p, const void *plan, struct dsh_description *d,
		       struct dsh_error **err)
{
	void *own = NULL;
	int r;
	memset(d, 0, sizeof(*d));
	if (!plan) {
		if ((r = wa_compile(p, NULL, &own, err)) < 0)
			return r;
		plan = own;
	}
	const struct dsh_winacl_plan *wp = plan;
	d->backend = "winacl";
	d->overall = DSH_ENFORCE_FULL;
	d->rules = calloc(p->n_rules ? p->n_rules : 1, sizeof(*d->rules));
	if (!d->rules)
		goto oom;
	d->n_rules = p->n_rules;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *rule = &p->rules[i];
		int k = 0;
		if (rule->kind == DSH_RULE_RW) {
			if (p->mode == DSH_MODE_WORKSPACE_WRITE)
				k = report(d, i, rule, DSH_ENFORCE_FULL,
					   "inheritable allow-write ACE for the sandbox SID on the root", NULL);
			else
				k = report(d, i, rule, DSH_ENFORCE_FULL, "ignored in this mode (SPEC 1.1)", NULL);
		} else if (rule->glob) {
			k = report(d, i, rule, DSH_ENFORCE_PARTIAL, "refused by the Windows runner (exit 125)",
				   "a glob has no ACE: the Windows runner refuses the run rather than run "
				   "without it");
		} else if (rule->kind == DSH_RULE_RO) {
			k = report(d, i, rule, DSH_ENFORCE_FULL,
				   "inheritable deny-write ACE for the sandbox SID (write-restricted token)", NULL);
		} else {
			k = report(d, i, rule, DSH_ENFORCE_PARTIAL,
				   "inheritable deny-write ACE for the sandbox SID (write-restricted token)",
				   "degrades to read-only: a write-restricted token checks the sandbox SID for "
				   "writes only, so reads are not denied");
		}
		if (k < 0)
			goto oom;
	}
	for (size_t i = 0; wp->notes && wp->notes[i]; i++)
		if (dsh_strv_push(&d->notes, wp->notes[i]) < 0)
			goto oom;
	if (dsh_strv_push(&d->notes, "not run on this platform: the plan is generated and tested here; "
				     "dshbox-winrun.exe (make windows) applies it on Windows only") < 0 ||
	    dsh_strv_push(&d->notes, "the ACEs are added to the host's files for the run and removed after "
				     "it; a killed runner leaves them (they name only a SID no token holds "
				     "any more)") < 0 ||
	    dsh_strv_push(&d->notes, "files created later under a denied directory inherit its deny ACE") < 0)
		goto oom;
	if (dsh_strv_push(&d->denial_signatures, "access is denied") < 0 ||
	    dsh_strv_push(&d->denial_signatures, "permission denied") < 0)
		goto oom;
	wa_free(own);
	return 0;
oom:
	wa_free(own);
	dsh_description_clear(d);
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

static int wa_confine(const struct dsh_policy *p, void *plan, const struct dsh_run_request *req,
		      struct dsh_run_result *ret, struct dsh_error **err)
{
	(void)plan;
	(void)req;
	(void)ret;
	return wa_probe(p, NULL, err);
}

const struct dsh_backend dsh_backend_winacl = {
	.name = "winacl",
	.id = DSH_BACKEND_WINACL,
	.probe = wa_probe,
	.compile = wa_compile,
	.describe = wa_describe,
	.render = wa_render,
	.confine = wa_confine,
	.free = wa_free,
};
