/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strv.h"
#include "supervisor/backends.h"
#include "supervisor/sandbox.h"

/*
 * No confinement at all: the command is exec'd directly, argv verbatim (SPEC 3.9, danger-full-access
 * without r-/-- rules).  Honest about it: describe says every rule is not enforced.
 */

static int none_probe(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err)
{
	(void)o;
	(void)p;
	(void)err;
	return 0;
}

static int none_compile(const struct dsh_policy *p, const struct dsh_run_options *o, void **ret_plan,
			struct dsh_error **err)
{
	(void)o;
	(void)p;
	(void)err;
	*ret_plan = NULL;
	return 0;
}

static int none_describe(const struct dsh_policy *p, const void *plan, struct dsh_description *ret,
			 struct dsh_error **err)
{
	(void)plan;
	memset(ret, 0, sizeof(*ret));
	ret->backend = "none";
	ret->overall = DSH_ENFORCE_FULL;
	ret->rules = calloc(p->n_rules ? p->n_rules : 1, sizeof(*ret->rules));
	if (!ret->rules)
		goto oom;
	ret->n_rules = p->n_rules;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		bool moot = r->kind == DSH_RULE_RW && p->mode == DSH_MODE_DANGER_FULL_ACCESS;
		ret->rules[i].level = moot ? DSH_ENFORCE_FULL : DSH_ENFORCE_PARTIAL;
		ret->rules[i].how = strdup(moot ? "nothing to do: everything is writable" : "not enforced: no sandbox");
		if (!ret->rules[i].how)
			goto oom;
		if (!moot) {
			ret->overall = DSH_ENFORCE_PARTIAL;
			ret->rules[i].lost = strdup("the whole rule: the command runs unconfined");
			if (!ret->rules[i].lost ||
			    dsh_strv_pushf(&ret->warnings, "rule \"%s\": backend none enforces nothing of it", r->text) < 0)
				goto oom;
		}
	}
	if (dsh_strv_push(&ret->notes, "the command is exec'd directly, argv verbatim") < 0)
		goto oom;
	return 0;
oom:
	dsh_description_clear(ret);
	return dsh_err_sys(err, ENOMEM, "describe");
}

static int none_render(const struct dsh_policy *p, const void *plan, char **ret, struct dsh_error **err)
{
	(void)plan;
	if (asprintf(ret, "backend: none\nmode: %s\nthe command is exec'd directly, argv verbatim\n",
		     dsh_mode_to_string(p->mode)) < 0)
		return dsh_err_sys(err, ENOMEM, "render");
	return 0;
}

static int none_confine(const struct dsh_policy *p, void *plan, const struct dsh_run_request *req,
			struct dsh_run_result *ret, struct dsh_error **err)
{
	(void)plan;
	int r = dsh_fds_close_on_exec(req->preserve_fds, req->n_preserve_fds, err);
	if (r < 0)
		return r;
	if (p->cwd && chdir(p->cwd) < 0)
		return dsh_err_sys(err, errno, "chdir '%s'", p->cwd);
	struct dsh_error *e = NULL;
	int code = 127;
	dsh_exec_command(req->argv, req->envp, &code, &e);
	memset(ret, 0, sizeof(*ret));
	ret->exit_code = code;
	ret->message = e && e->msg ? strdup(e->msg) : NULL;
	dsh_error_free(e);
	return 0;
}

const struct dsh_backend dsh_backend_none = {
	.name = "none",
	.id = DSH_BACKEND_NONE,
	.probe = none_probe,
	.compile = none_compile,
	.describe = none_describe,
	.render = none_render,
	.confine = none_confine,
	.free = free,
};
