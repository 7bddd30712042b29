/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/policy.h"
#include "supervisor/backends.h"
#include "supervisor/forked_run.h"
#include "supervisor/sandbox.h"

/* A whole run (include/dshbox/backend.h dsh_run): the one a host and `dshbox run` share. */

int dsh_run_check_workspace(const struct dsh_policy *p, struct dsh_error **err)
{
	const char *ws = dsh_policy_workspace(p);
	struct stat st;
	int r;
	if (stat(ws, &st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return dsh_err_sys(err, errno, "workspace %s", ws);
		r = dsh_err(err, DSH_ERR_CONFIG, ENOENT, "workspace %s does not exist", ws);
		dsh_err_hint(err, "create it, or pass an existing directory with --workspace");
		return r;
	}
	if (!S_ISDIR(st.st_mode)) {
		r = dsh_err(err, DSH_ERR_CONFIG, ENOTDIR, "workspace %s is not a directory", ws);
		dsh_err_hint(err, "pass the project's directory with --workspace, not a file in it");
		return r;
	}
	if (strcmp(ws, "/") == 0 && dsh_policy_mode(p) == DSH_MODE_WORKSPACE_WRITE) {
		r = dsh_err(err, DSH_ERR_CONFIG, EINVAL, "workspace / in workspace-write would make every file writable");
		dsh_err_hint(err, "run dshbox from the project's directory or pass --workspace DIR "
				  "(--mode danger-full-access if everything writable is really meant)");
		return r;
	}
	return 0;
}

void dsh_run_result_clear(struct dsh_run_result *r)
{
	free(r->message);
	dsh_strv_free(r->warnings);
	dsh_net_refusals_free(r->net_refused, r->n_net_refused);
	memset(r, 0, sizeof(*r));
}

struct in_place_args {
	const struct dsh_policy *p;
	const struct dsh_run_setup *s;
	const struct dsh_run_request *req;
};

static int in_place_in_child(const void *arg, struct dsh_run_result *ret, struct dsh_error **err)
{
	const struct in_place_args *a = arg;
	return a->s->backend->confine(a->p, a->s->plan, a->req, ret, err);
}

/* none, and the runner where it runs the command directly, exec it in the calling process. */
static bool execs_in_place(const struct dsh_run_setup *s)
{
	return s->backend->id == DSH_BACKEND_NONE ||
	       (s->backend->id == DSH_BACKEND_RUNNER && dsh_backend_runner_direct(s->plan));
}

static int confine(const struct dsh_policy *p, const struct dsh_run_hooks *hooks, const struct dsh_run_setup *s,
		   const struct dsh_run_request *req, struct dsh_run_result *ret, struct dsh_error **err)
{
	if (hooks && hooks->before_confine)
		hooks->before_confine(hooks->data, s);
	memset(ret, 0, sizeof(*ret));
	/* A host keeps its process, and waits for a child, where the backend would exec in place. */
	if (execs_in_place(s) && !(hooks && hooks->none_execs_in_place)) {
		struct in_place_args a = { p, s, req };
		return dsh_forked_run(in_place_in_child, &a, NULL, ret, err);
	}
	return s->backend->confine(p, s->plan, req, ret, err);
}

int dsh_run(const struct dsh_policy *p, const struct dsh_run_options *o, const struct dsh_run_request *req,
	    const struct dsh_run_hooks *hooks, struct dsh_run_setup *setup, struct dsh_run_result *ret,
	    struct dsh_error **err)
{
	int r = dsh_run_check_workspace(p, err);
	if (r < 0)
		return r;
	if (!setup->described && (r = dsh_run_prepare(p, o, setup, err)) < 0)
		return r;
	if (confine(p, hooks, setup, req, ret, err) >= 0)
		return 0;

	/* auto's unprobed linux-ns refused by the host before the command ran: the next backend. */
	const struct dsh_backend *next = NULL;
	_cleanup_error_ struct dsh_error *why = TAKE_PTR(*err);
	r = dsh_backend_fall_back(p, o, setup->backend, why, &next, err);
	if (r == -ENOTSUP && !*err) {
		*err = TAKE_PTR(why);
		return r;
	}
	if (r < 0)
		return r;
	dsh_run_result_clear(ret);
	dsh_timing_mark(o->timing, "fall back", o->timing ? dsh_timing_now() : 0);
	/* The next backend answers for its own losses, as a first choice would (SPEC 4). */
	dsh_run_setup_clear(setup);
	if ((r = dsh_run_prepare_backend(p, o, next, setup, err)) < 0)
		return r;
	return confine(p, hooks, setup, req, ret, err);
}
