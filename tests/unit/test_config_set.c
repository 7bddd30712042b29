/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration and run options as a host holds them (policy/config_set.c, policy/options.c):
 * opaque, filled by setters that refuse what the YAML key would refuse and leave the
 * configuration as it was when they do, and read back by the policy like a loaded file.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/cleanup.h"
#include "dshbox/dshbox.h"
#include "policy/options.h"

static char *envp[] = { "HOME=/home/u", "PATH=/usr/bin", "API_TOKEN=x", NULL };

Test(config_set, new_has_the_defaults_of_init)
{
	struct dsh_config ref;
	dsh_config_init(&ref);
	struct dsh_config *c = dsh_config_new();
	cr_assert_not_null(c);
	cr_expect_eq(dsh_config_mode(c), ref.mode);
	cr_expect_eq(dsh_config_backend(c), DSH_BACKEND_AUTO);
	cr_expect_null(dsh_config_workspace(c));
	cr_expect_null(dsh_config_cwd(c));
	cr_expect_eq(c->probe_timeout_ms, ref.probe_timeout_ms);
	cr_expect_eq(c->network, ref.network);
	dsh_config_free(c);
	dsh_config_free(NULL);
	dsh_config_clear(&ref);
}

Test(config_set, a_refused_value_names_the_key_and_changes_nothing)
{
	struct dsh_config *c = dsh_config_new();
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_config_set_mode(c, DSH_MODE_READ_ONLY, &err), 0);
	cr_expect_eq(dsh_config_set_mode(c, (enum dsh_mode)42, &err), -EINVAL);
	cr_assert_not_null(err);
	cr_expect_eq(err->kind, DSH_ERR_CONFIG);
	cr_expect(strncmp(err->msg, "mode: ", 6) == 0, "%s", err->msg);
	cr_expect_eq(dsh_config_mode(c), DSH_MODE_READ_ONLY);
	dsh_error_free(err);
	err = NULL;
	cr_expect_lt(dsh_config_set_probe_timeout_ms(c, 0, &err), 0);
	cr_expect_eq(c->probe_timeout_ms, 5000);
	dsh_error_free(err);
	err = NULL;
	cr_expect_lt(dsh_config_add_access(c, "  \n", &err), 0);
	cr_expect_null(c->access);
	dsh_error_free(err);
	err = NULL;
	cr_expect_lt(dsh_config_set_workspace(c, "", &err), 0);
	dsh_config_free(c);
}

Test(config_set, setters_reach_the_policy)
{
	struct dsh_config *c = dsh_config_new();
	struct dsh_policy *p = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_config_set_mode(c, DSH_MODE_WORKSPACE_WRITE, &err), 0);
	cr_assert_eq(dsh_config_set_workspace(c, "/tmp", &err), 0);
	cr_assert_eq(dsh_config_set_workspace(c, "/", &err), 0, "a second call replaces the first");
	cr_assert_eq(dsh_config_add_access(c, "-- /etc/shadow", &err), 0);
	cr_assert_eq(dsh_config_set_protect_defaults(c, false, &err), 0);
	cr_assert_eq(dsh_policy_new(c, envp, "/", &p, &err), 0, "%s", err ? err->msg : "");
	cr_expect_str_eq(dsh_policy_workspace(p), "/");
	cr_assert_eq(dsh_policy_rule_count(p), 1);
	cr_expect_str_eq(dsh_rule_text(dsh_policy_rule(p, 0)), "-- /etc/shadow");
	struct dsh_verdict v;
	cr_assert_eq(dsh_policy_verdict(p, DSH_OP_READ, "/etc/shadow", &v), 0);
	cr_expect_not(v.allow);
	dsh_policy_free(p);
	dsh_config_free(c);
}

Test(config_set, run_options_carry_the_env_keys)
{
	struct dsh_config *c = dsh_config_new();
	struct dsh_run_options *o = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_config_set_env(c, "LANG", "C", &err), 0);
	cr_assert_eq(dsh_config_set_env(c, "LANG", "C.UTF-8", &err), 0, "the same name again replaces it");
	cr_expect_lt(dsh_config_set_env(c, "A=B", "x", &err), 0);
	dsh_error_free(err);
	err = NULL;
	cr_assert_eq(dsh_config_set_network(c, false, &err), 0);
	cr_assert_eq(dsh_run_options_new(c, envp, &o, &err), 0, "%s", err ? err->msg : "");
	char *const *env = dsh_run_options_command_env(o);
	bool lang = false, token = false, home = false;
	for (size_t i = 0; env && env[i]; i++) {
		lang |= strcmp(env[i], "LANG=C.UTF-8") == 0;
		token |= strncmp(env[i], "API_TOKEN=", 10) == 0;
		home |= strcmp(env[i], "HOME=/home/u") == 0;
	}
	cr_expect(lang && home, "env.set and inherit reach the command");
	cr_expect_not(token, "the default exclusions still apply");
	cr_expect_not(o->network);
	dsh_run_options_free(o);
	dsh_run_options_free(NULL);
	dsh_config_free(c);
}
