/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Run options (struct dsh_run_options): how a command runs, apart from what it may access. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "policy/env.h"
#include "policy/netpolicy.h"
#include "policy/options.h"
#include "policy/rule.h"

/* allowUnixSockets: each entry expanded ({{ env.NAME }}), an absolute path or "@name" (abstract). */
static int allow_unix_sockets(const struct dsh_config *c, char *const *envp, char ***ret, struct dsh_error **err)
{
	_cleanup_strv_ char **v = NULL;
	for (size_t i = 0; c->allow_unix_sockets && c->allow_unix_sockets[i]; i++) {
		_cleanup_free_ char *x = NULL;
		if (dsh_expand_env(c->allow_unix_sockets[i], envp, false, &x, err) < 0)
			return dsh_err_prefix(err, "allowUnixSockets[%zu]", i);
		if (x[0] != '/' && (x[0] != '@' || !x[1]))
			return dsh_err(err, DSH_ERR_CONFIG, EINVAL,
				       "allowUnixSockets[%zu]: '%s' is neither an absolute path nor an abstract name (@name)", i, x);
		if (dsh_strv_push(&v, x) < 0)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	*ret = TAKE_PTR(v);
	return 0;
}

static int validate(const struct dsh_config *c, struct dsh_error **err)
{
	size_t n_cmd = dsh_strv_len(c->runner_command), n_sig = dsh_strv_len(c->runner_failure_signatures);
	if (n_cmd > 0 && n_sig == 0) {
		int r = dsh_err(err, DSH_ERR_CONFIG, EINVAL,
				"runnerFailureSignatures: required and non-empty when runnerCommand is set");
		dsh_err_hint(err, "list the stderr substrings that mean the runner itself refused");
		return r;
	}
	if (n_cmd == 0 && n_sig > 0)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL,
			       "runnerFailureSignatures: only allowed together with runnerCommand");
	for (size_t i = 0; i < n_sig; i++) {
		const char *s = c->runner_failure_signatures[i];
		if (!*s)
			return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "runnerFailureSignatures[%zu]: empty", i);
		/* A blank signature matches nearly every stderr: each command would become a runner failure. */
		if (!s[strspn(s, " \t\v\f")])
			return dsh_err(err, DSH_ERR_CONFIG, EINVAL,
				       "runnerFailureSignatures[%zu]: only whitespace (it would match almost any stderr)", i);
		if (strpbrk(s, "\n\r"))
			return dsh_err(err, DSH_ERR_CONFIG, EINVAL,
				       "runnerFailureSignatures[%zu]: must be a single line", i);
	}
	for (size_t i = 0; i < n_cmd; i++)
		if (!*c->runner_command[i])
			return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "runnerCommand[%zu]: empty", i);
	/* A runner that is configured and never used would leave its author believing it confines. */
	if (n_cmd > 0 && c->backend != DSH_BACKEND_RUNNER) {
		int r = dsh_err(err, DSH_ERR_CONFIG, EINVAL,
				"runnerCommand: set, but the backend is %s; only backend runner uses it",
				dsh_backend_id_to_string(c->backend));
		dsh_err_hint(err, "add 'backend: runner' to the configuration (or --backend runner), or remove runnerCommand");
		return r;
	}
	if (c->probe_timeout_ms <= 0)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "probeTimeoutMs: must be positive, got %lld",
			       c->probe_timeout_ms);
	if (c->max_masks <= 0)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "maxMasks: must be positive, got %lld", c->max_masks);
	return 0;
}

int dsh_run_options_init(struct dsh_run_options *o, const struct dsh_config *c, char *const *envp,
			 struct dsh_error **err)
{
	memset(o, 0, sizeof(*o));
	int r = validate(c, err);
	if (r < 0)
		return r;
	o->backend = c->backend;
	o->ask_fd = -1;
	o->allow_degraded = c->allow_degraded;
	o->network = c->network && !c->net;
	o->probe_timeout_ms = c->probe_timeout_ms;
	o->max_masks = c->max_masks;
	o->protect_sockets = c->protect_sockets;
	o->runtime_broker = c->runtime_broker;
	o->nested_sandbox = c->nested_sandbox;
	o->env_inherit = c->env_inherit;
	r = c->net ? dsh_net_policy_copy(c->net, &o->net, err) : 0;
	if (r >= 0)
		r = allow_unix_sockets(c, envp, &o->allow_unix_sockets, err);
	if (r >= 0)
		r = dsh_env_command(c, envp, &o->command_env, &o->env_removed, err);
	if (r < 0) {
		dsh_run_options_clear(o);
		return r;
	}
	o->envp = dsh_strv_copy(envp);
	o->runner_command = dsh_strv_copy(c->runner_command);
	o->runner_failure_signatures = dsh_strv_copy(c->runner_failure_signatures);
	if ((envp && !o->envp) || (c->runner_command && !o->runner_command) ||
	    (c->runner_failure_signatures && !o->runner_failure_signatures)) {
		dsh_run_options_clear(o);
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	return 0;
}

void dsh_run_options_clear(struct dsh_run_options *o)
{
	dsh_strv_free(o->envp);
	dsh_strv_free(o->allow_unix_sockets);
	dsh_strv_free(o->command_env);
	dsh_strv_free(o->env_removed);
	dsh_strv_free(o->runner_command);
	dsh_strv_free(o->runner_failure_signatures);
	dsh_net_policy_free(o->net);
	memset(o, 0, sizeof(*o));
}

int dsh_run_options_new(const struct dsh_config *c, char *const *envp, struct dsh_run_options **ret,
			struct dsh_error **err)
{
	_cleanup_free_ struct dsh_run_options *o = malloc(sizeof(*o));
	if (!o)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	int r = dsh_run_options_init(o, c, envp, err);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

void dsh_run_options_free(struct dsh_run_options *o)
{
	if (!o)
		return;
	dsh_run_options_clear(o);
	free(o);
}

char *const *dsh_run_options_command_env(const struct dsh_run_options *o)
{
	return o->command_env;
}
