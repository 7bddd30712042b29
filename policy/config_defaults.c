/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration's defaults (SPEC 1.5) and its release: the part of dsh_config_* that needs no
 * YAML, apart from config.c so that the Windows runner (make windows; no libyaml for mingw-w64)
 * starts from the very same defaults as dshbox itself.
 */
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"
#include "policy/options.h"
#include "policy/netpolicy.h"

void dsh_config_init(struct dsh_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = DSH_MODE_WORKSPACE_WRITE;
	c->network = true;
	c->probe_timeout_ms = 5000;
	c->diff_basis_max_bytes = 10485760;
	c->max_masks = 65536;
	c->protect_sockets = true;
	c->protect_defaults = true;
	c->runtime_broker = true;
	c->backend = DSH_BACKEND_AUTO;
}

void dsh_config_clear(struct dsh_config *c)
{
	free(c->workspace);
	free(c->cwd);
	dsh_strv_free(c->access);
	for (size_t i = 0; i < c->n_access_origins; i++)
		free(c->access_origins[i].file);
	free(c->access_origins);
	dsh_strv_free(c->sources);
	dsh_strv_free(c->unprotect);
	dsh_strv_free(c->runner_command);
	dsh_strv_free(c->allow_unix_sockets);
	dsh_strv_free(c->runner_failure_signatures);
	dsh_strv_free(c->env_exclude);
	dsh_strv_free(c->env_set);
	dsh_strv_free(c->env_allow);
	dsh_net_policy_free(c->net);
	memset(c, 0, sizeof(*c));
}
