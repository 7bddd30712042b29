/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration as a host holds it: allocated here, filled through setters.  Each setter checks
 * what the YAML key would check at load, so that a value the file would refuse is refused here too,
 * and leaves the configuration unchanged when it fails.  No YAML: the Windows runner builds it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/options.h"
#include "policy/netpolicy.h"

struct dsh_config *dsh_config_new(void)
{
	struct dsh_config *c = malloc(sizeof(*c));
	if (c)
		dsh_config_init(c);
	return c;
}

void dsh_config_free(struct dsh_config *c)
{
	if (!c)
		return;
	dsh_config_clear(c);
	free(c);
}

static int no_memory(struct dsh_error **err)
{
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

/* A copy of path for *dst, NULL included (the key's default). */
static int set_string(char **dst, const char *key, const char *path, struct dsh_error **err)
{
	char *copy = NULL;
	if (path && !*path)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "%s: empty (NULL means the current directory)", key);
	if (path && !(copy = strdup(path)))
		return no_memory(err);
	free(*dst);
	*dst = copy;
	return 0;
}

int dsh_config_set_mode(struct dsh_config *c, enum dsh_mode mode, struct dsh_error **err)
{
	if (strcmp(dsh_mode_to_string(mode), "?") == 0)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "mode: unknown value %d", (int)mode);
	c->mode = mode;
	return 0;
}

int dsh_config_set_workspace(struct dsh_config *c, const char *path, struct dsh_error **err)
{
	return set_string(&c->workspace, "workspace", path, err);
}

int dsh_config_set_cwd(struct dsh_config *c, const char *path, struct dsh_error **err)
{
	return set_string(&c->cwd, "cwd", path, err);
}

/* The rule's own syntax is dsh_policy_new()'s to judge, with every other rule: one place. */
int dsh_config_add_access(struct dsh_config *c, const char *rule, struct dsh_error **err)
{
	if (!rule || !rule[strspn(rule, " \t\r\n")])
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "access: an empty rule");
	if (dsh_strv_push(&c->access, rule) < 0)
		return no_memory(err);
	return 0;
}

int dsh_config_set_tmp(struct dsh_config *c, enum dsh_tmp tmp, struct dsh_error **err)
{
	if (tmp != DSH_TMP_HOST && tmp != DSH_TMP_PRIVATE)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "tmp: unknown value %d", (int)tmp);
	c->tmp = tmp;
	return 0;
}

int dsh_config_set_network(struct dsh_config *c, bool network, struct dsh_error **err)
{
	(void)err;
	c->network = network;
	dsh_net_policy_free(c->net);
	c->net = NULL;
	return 0;
}

int dsh_config_set_backend(struct dsh_config *c, enum dsh_backend_id backend, struct dsh_error **err)
{
	if (strcmp(dsh_backend_id_to_string(backend), "?") == 0)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "backend: unknown value %d", (int)backend);
	c->backend = backend;
	return 0;
}

int dsh_config_set_runtime_broker(struct dsh_config *c, bool on, struct dsh_error **err)
{
	(void)err;
	c->runtime_broker = on;
	return 0;
}

int dsh_config_set_allow_degraded(struct dsh_config *c, bool on, struct dsh_error **err)
{
	(void)err;
	c->allow_degraded = on;
	return 0;
}

int dsh_config_set_nested_sandbox(struct dsh_config *c, bool on, struct dsh_error **err)
{
	(void)err;
	c->nested_sandbox = on;
	return 0;
}

int dsh_config_set_protect_defaults(struct dsh_config *c, bool on, struct dsh_error **err)
{
	(void)err;
	c->protect_defaults = on;
	return 0;
}

int dsh_config_set_env_inherit(struct dsh_config *c, enum dsh_env_inherit inherit, struct dsh_error **err)
{
	if (strcmp(dsh_env_inherit_to_string(inherit), "?") == 0)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "env.inherit: unknown value %d", (int)inherit);
	c->env_inherit = inherit;
	return 0;
}

int dsh_config_set_env(struct dsh_config *c, const char *name, const char *value, struct dsh_error **err)
{
	if (!name || !*name || strchr(name, '='))
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "env.set: '%s' is not a variable name",
			       name ? name : "(null)");
	if (!value)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "env.set: %s: no value", name);
	size_t n = strlen(name), nv = strlen(value);
	_cleanup_free_ char *entry = malloc(n + 1 + nv + 1);
	if (!entry)
		return no_memory(err);
	memcpy(entry, name, n);
	entry[n] = '=';
	memcpy(entry + n + 1, value, nv + 1);
	for (size_t i = 0; c->env_set && c->env_set[i]; i++)
		if (strncmp(c->env_set[i], name, n) == 0 && c->env_set[i][n] == '=') {
			free(c->env_set[i]);
			c->env_set[i] = TAKE_PTR(entry);
			return 0;
		}
	if (dsh_strv_push_take(&c->env_set, TAKE_PTR(entry)) < 0)
		return no_memory(err);
	return 0;
}

int dsh_config_set_probe_timeout_ms(struct dsh_config *c, long long ms, struct dsh_error **err)
{
	if (ms <= 0)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "probeTimeoutMs: must be positive, got %lld", ms);
	c->probe_timeout_ms = ms;
	return 0;
}

int dsh_config_set_diff_basis_max_bytes(struct dsh_config *c, long long bytes, struct dsh_error **err)
{
	if (bytes <= 0)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "diffBasisMaxBytes: must be positive, got %lld", bytes);
	c->diff_basis_max_bytes = bytes;
	return 0;
}

enum dsh_mode dsh_config_mode(const struct dsh_config *c)
{
	return c->mode;
}

const char *dsh_config_workspace(const struct dsh_config *c)
{
	return c->workspace;
}

const char *dsh_config_cwd(const struct dsh_config *c)
{
	return c->cwd;
}

enum dsh_backend_id dsh_config_backend(const struct dsh_config *c)
{
	return c->backend;
}
