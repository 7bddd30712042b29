/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "dshbox/backend.h"
#include "common/cleanup.h"
#include "common/strv.h"

int cli_policy_option(struct cli_policy_opts *o, int opt, const char *arg, const char *cmd)
{
	switch (opt) {
	case CLI_OPT_CONFIG:
		free(o->config_file);
		o->config_file = strdup(arg);
		break;
	case CLI_OPT_MODE:
		if (dsh_mode_from_string(arg, &o->mode) < 0)
			return cli_usage_error(cmd, "--mode: unknown mode '%s' (read-only, workspace-write, danger-full-access)", arg);
		o->have_mode = true;
		break;
	case CLI_OPT_WORKSPACE:
		free(o->workspace);
		o->workspace = strdup(arg);
		break;
	case CLI_OPT_CWD:
		free(o->cwd);
		o->cwd = strdup(arg);
		break;
	case CLI_OPT_ACCESS:
		if (dsh_strv_push(&o->access, arg) < 0)
			return cli_usage_error(cmd, "out of memory");
		break;
	case CLI_OPT_ACCESS_FILE:
		if (dsh_strv_push(&o->access_files, arg) < 0)
			return cli_usage_error(cmd, "out of memory");
		break;
	case CLI_OPT_NETWORK:
		if (strcmp(arg, "on") == 0)
			o->network = true;
		else if (strcmp(arg, "off") == 0)
			o->network = false;
		else
			return cli_usage_error(cmd, "--network: expected 'on' or 'off', got '%s'", arg);
		o->have_network = true;
		break;
	case CLI_OPT_BACKEND:
		if (dsh_backend_id_from_string(arg, &o->backend) < 0)
			return cli_usage_error(cmd, "--backend: unknown backend '%s' (auto, linux-ns, landlock, runner, none)", arg);
		o->have_backend = true;
		break;
	case CLI_OPT_ALLOW_DEGRADED:
		o->allow_degraded = true;
		break;
	case CLI_OPT_ALLOW_ENV:
		if (!*arg || strpbrk(arg, "= \t\n"))
			return cli_usage_error(cmd, "--allow-env: expected a variable's name, got '%s'", arg);
		if (dsh_strv_push(&o->allow_env, arg) < 0)
			return cli_usage_error(cmd, "out of memory");
		break;
	case CLI_OPT_ALLOW_UNIX_SOCKET:
		if (arg[0] != '/' && arg[0] != '{')
			return cli_usage_error(cmd, "--allow-unix-socket: expected an absolute path, got '%s'", arg);
		if (dsh_strv_push(&o->allow_sockets, arg) < 0)
			return cli_usage_error(cmd, "out of memory");
		break;
	case CLI_OPT_ALLOW_DOMAIN:
	case CLI_OPT_DENY_DOMAIN:
		if (dsh_strv_pushf(&o->domains, "%c%s", opt == CLI_OPT_DENY_DOMAIN ? '-' : '+', arg) < 0)
			return cli_usage_error(cmd, "out of memory");
		break;
	case CLI_OPT_WARNINGS:
		if (strcmp(arg, "stderr") != 0)
			return cli_usage_error(cmd, "--warnings: only 'stderr' is supported, got '%s'", arg);
		o->warnings_to_stderr = true;
		break;
	default:
		return cli_usage_error(cmd, "unknown option");
	}
	return 0;
}

int cli_policy_load(struct cli_policy_opts *o, char **envp, struct dsh_config *c,
		    struct dsh_policy **ret_policy, struct dsh_run_options *ret_run)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	char cwd[PATH_MAX];

	/* First: every caller clears the configuration, whatever fails below. */
	dsh_config_init(c);
	*ret_policy = NULL;
	if (ret_run)
		memset(ret_run, 0, sizeof(*ret_run));
	if (!getcwd(cwd, sizeof(cwd))) {
		dsh_err_sys(&err, errno, "cannot read the current directory");
		dsh_err_hint(&err, "run dshbox from a directory that exists, or pass --workspace and --cwd");
		return cli_fail(err);
	}
	/* SPEC 1.3: from a person's hands, "$HOME" in a rule means the variable, never those bytes. */
	c->refuse_shell_variables = true;
	/* --config -: from standard input (a host's pipe), which the command then does not get. */
	if (o->config_file && (strcmp(o->config_file, "-") == 0 ? dsh_config_load_fd(c, 0, "(standard input)", &err)
								: dsh_config_load_file(c, o->config_file, &err)) < 0)
		return cli_fail(err);
	if (o->have_mode)
		c->mode = o->mode;
	if (o->have_network && o->domains) {
		dsh_err(&err, DSH_ERR_USAGE, EINVAL, "--network %s and --%s-domain exclude each other", o->network ? "on" : "off",
			o->domains[0][0] == '-' ? "deny" : "allow");
		dsh_err_hint(&err, "--allow-domain alone filters the network by name");
		return cli_fail(err);
	}
	if (o->have_network)
		dsh_config_set_network(c, o->network, NULL);
	for (size_t i = 0; o->domains && o->domains[i]; i++) {
		bool deny = o->domains[i][0] == '-';
		if (dsh_config_add_domain(c, deny, o->domains[i] + 1, deny ? "--deny-domain" : "--allow-domain", &err) < 0)
			return cli_fail(err);
	}
	if (o->have_backend)
		c->backend = o->backend;
	if (o->allow_degraded)
		c->allow_degraded = true;
	if (o->workspace) {
		free(c->workspace);
		c->workspace = strdup(o->workspace);
	}
	if (o->cwd) {
		free(c->cwd);
		c->cwd = strdup(o->cwd);
	}
	for (size_t i = 0; o->access_files && o->access_files[i]; i++)
		if (dsh_config_load_access_file(c, o->access_files[i], &err) < 0)
			return cli_fail(err);
	for (size_t i = 0; o->allow_env && o->allow_env[i]; i++)
		if (dsh_strv_push(&c->env_allow, o->allow_env[i]) < 0) {
			dsh_err(&err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			return cli_fail(err);
		}
	for (size_t i = 0; o->allow_sockets && o->allow_sockets[i]; i++)
		if (dsh_strv_push(&c->allow_unix_sockets, o->allow_sockets[i]) < 0) {
			dsh_err(&err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			return cli_fail(err);
		}
	for (size_t i = 0; o->access && o->access[i]; i++)
		if (dsh_strv_push(&c->access, o->access[i]) < 0) {
			dsh_err(&err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			return cli_fail(err);
		}
	/* Every command validates the whole configuration, run options included. */
	struct dsh_run_options scratch = { 0 };
	struct dsh_run_options *ro = ret_run ? ret_run : &scratch;
	if (dsh_run_options_init(ro, c, envp, &err) < 0)
		return cli_fail(err);
	dsh_run_options_probe_broker(ro);
	if (!ret_run)
		dsh_run_options_clear(&scratch);
	if (dsh_policy_new(c, envp, cwd, ret_policy, &err) < 0 || dsh_run_check_workspace(*ret_policy, &err) < 0) {
		dsh_policy_free(*ret_policy);
		*ret_policy = NULL;
		if (ret_run)
			dsh_run_options_clear(ret_run);
		return cli_fail(err);
	}
	return 0;
}

void cli_policy_print_warnings(const struct cli_policy_opts *o, const struct dsh_policy *p)
{
	if (!o->warnings_to_stderr)
		return;
	char *const *w = dsh_policy_warnings(p);
	for (size_t i = 0; w && w[i]; i++)
		cli_warn("%s", w[i]);
}

void cli_policy_opts_clear(struct cli_policy_opts *o)
{
	free(o->config_file);
	free(o->workspace);
	free(o->cwd);
	dsh_strv_free(o->access);
	dsh_strv_free(o->access_files);
	dsh_strv_free(o->allow_env);
	dsh_strv_free(o->allow_sockets);
	dsh_strv_free(o->domains);
	memset(o, 0, sizeof(*o));
}
