/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command's environment (SPEC 1.7): inherit all|core|none, exclude patterns (default: names
 * holding KEY, SECRET, TOKEN or PASSWORD, case-insensitive), set; the removed names, never values.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "policy/env.h"

static char *host[] = {
	"HOME=/home/u", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "GITHUB_TOKEN=ghp_x",
	"aws_secret_access_key=s", "OPENAI_API_KEY=sk", "DB_PASSWORD=p", "EDITOR=vi", "GITHUB_TOKEN=again",
	"MONKEY=banana", "noequals", NULL,
};

static void command_env(struct dsh_config *c, char ***env, char ***removed)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_env_command(c, host, env, removed, &err), 0, "%s", err ? err->msg : "");
}

static char *joined(char **v)
{
	char *s = strdup("");
	for (size_t i = 0; v && v[i]; i++) {
		char *t = NULL;
		cr_assert(asprintf(&t, "%s%s%s", s, i ? " " : "", v[i]) > 0);
		free(s);
		s = t;
	}
	return s;
}

Test(env, the_default_drops_credentials_by_name_case_insensitively)
{
	struct dsh_config c;
	dsh_config_init(&c);
	_cleanup_strv_ char **env = NULL, **removed = NULL;
	command_env(&c, &env, &removed);
	_cleanup_free_ char *e = joined(env), *r = joined(removed);
	cr_expect_str_eq(e, "HOME=/home/u PATH=/usr/bin:/bin LANG=C.UTF-8 LC_ALL=C TERM=xterm EDITOR=vi");
	/* each name once, in the environment's order; *KEY* also takes MONKEY: the patterns are plain */
	cr_expect_str_eq(r, "GITHUB_TOKEN aws_secret_access_key OPENAI_API_KEY DB_PASSWORD MONKEY");
	for (size_t i = 0; removed[i]; i++)
		cr_expect_null(strchr(removed[i], '='), "a value leaked: %s", removed[i]);
	dsh_config_clear(&c);
}

Test(env, core_none_exclude_and_set)
{
	struct dsh_config c;
	dsh_config_init(&c);
	c.env_inherit = DSH_ENV_INHERIT_CORE;
	_cleanup_strv_ char **env = NULL, **removed = NULL;
	command_env(&c, &env, &removed);
	_cleanup_free_ char *e = joined(env);
	cr_expect_str_eq(e, "HOME=/home/u PATH=/usr/bin:/bin LANG=C.UTF-8 LC_ALL=C TERM=xterm");
	cr_expect(dsh_strv_contains(removed, "EDITOR"));
	dsh_strv_free(env), dsh_strv_free(removed);

	/* exclude: [] clears the defaults; set wins over inherit and exclude, appended in order. */
	c.env_inherit = DSH_ENV_INHERIT_ALL;
	c.env_exclude = calloc(1, sizeof(char *));
	dsh_strv_push(&c.env_set, "EDITOR=nano");
	dsh_strv_push(&c.env_set, "NEW=1");
	command_env(&c, &env, &removed);
	cr_expect(dsh_strv_contains(env, "GITHUB_TOKEN=ghp_x"));
	cr_expect(dsh_strv_contains(env, "EDITOR=nano"));
	cr_expect(!dsh_strv_contains(env, "EDITOR=vi"));
	cr_expect_str_eq(env[dsh_strv_len(env) - 1], "NEW=1");
	cr_expect_eq(dsh_strv_len(removed), 0, "replaced by set is not removed");
	dsh_strv_free(env), dsh_strv_free(removed);

	c.env_inherit = DSH_ENV_INHERIT_NONE;
	command_env(&c, &env, &removed);
	_cleanup_free_ char *e2 = joined(env);
	cr_expect_str_eq(e2, "EDITOR=nano NEW=1");
	cr_expect(dsh_strv_contains(removed, "HOME") && dsh_strv_contains(removed, "GITHUB_TOKEN"));
	dsh_strv_free(env), dsh_strv_free(removed);

	/* A user's own pattern, case-insensitive. */
	dsh_strv_free(c.env_exclude);
	c.env_exclude = NULL;
	dsh_strv_push(&c.env_exclude, "lc_*");
	c.env_inherit = DSH_ENV_INHERIT_ALL;
	command_env(&c, &env, &removed);
	_cleanup_free_ char *r = joined(removed);
	cr_expect_str_eq(r, "LC_ALL");
	dsh_config_clear(&c);
}

Test(env, bad_patterns_and_names_are_errors_naming_the_key)
{
	static const char *const bad_excludes[] = { "", "A=B", "HAS SPACE", "TAB\t" };
	for (size_t i = 0; i < sizeof(bad_excludes) / sizeof(bad_excludes[0]); i++) {
		struct dsh_config c;
		dsh_config_init(&c);
		dsh_strv_push(&c.env_exclude, bad_excludes[i]);
		char **env = NULL, **removed = NULL;
		_cleanup_error_ struct dsh_error *err = NULL;
		cr_expect_lt(dsh_env_command(&c, host, &env, &removed, &err), 0, "'%s'", bad_excludes[i]);
		cr_expect(err && strstr(err->msg, "env.exclude[0]"), "%s", err ? err->msg : "");
		dsh_config_clear(&c);
	}
	struct dsh_config c;
	dsh_config_init(&c);
	dsh_strv_push(&c.env_set, "=x");
	char **env = NULL, **removed = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_expect_lt(dsh_env_command(&c, host, &env, &removed, &err), 0);
	cr_expect(err && strstr(err->msg, "env.set"), "%s", err ? err->msg : "");
	dsh_config_clear(&c);
}

Test(env, name_match)
{
	cr_expect(dsh_env_name_match("*KEY*", "OPENAI_API_KEY", false));
	cr_expect(dsh_env_name_match("*KEY*", "key", true));
	cr_expect(!dsh_env_name_match("*KEY*", "key", false));
	cr_expect(dsh_env_name_match("LC_*", "LC_", false));
	cr_expect(!dsh_env_name_match("LC_*", "XLC_ALL", false));
	cr_expect(dsh_env_name_match("A?C", "ABC", false));
	cr_expect(!dsh_env_name_match("A?C", "AC", false));
	cr_expect(dsh_env_name_match("*A*B*", "xxAyyAzzB", false));
	cr_expect(!dsh_env_name_match("*A*B", "xxAyyBzz", false));
}

Test(env, config_yaml)
{
	struct dsh_config c;
	dsh_config_init(&c);
	static const char yaml[] = "env:\n  inherit: core\n  exclude: []\n  set:\n    FOO: bar baz\n    EMPTY: \"\"\n";
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_config_load_string(&c, yaml, strlen(yaml), "t.yml", &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(c.env_inherit, DSH_ENV_INHERIT_CORE);
	cr_expect_not_null(c.env_exclude);
	cr_expect_eq(dsh_strv_len(c.env_exclude), 0);
	cr_expect_str_eq(c.env_set[0], "FOO=bar baz");
	cr_expect_str_eq(c.env_set[1], "EMPTY=");
	dsh_config_clear(&c);

	static const char *const bad[][2] = {
		{ "env: all\n", "t.yml:1: env: expected a mapping" },
		{ "env:\n  inherit: some\n", "t.yml:2: env.inherit: expected all, core or none, got 'some'" },
		{ "env:\n  keep: [A]\n", "unknown key 'keep'" },
		{ "env:\n  set: [A]\n", "env.set: expected a mapping" },
		{ "env:\n  set:\n    A: 1\n    A: 2\n", "duplicate name 'A'" },
		{ "env:\n  exclude: A\n", "env.exclude: expected a list" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dsh_config_init(&c);
		_cleanup_error_ struct dsh_error *e = NULL;
		cr_expect_lt(dsh_config_load_string(&c, bad[i][0], strlen(bad[i][0]), "t.yml", &e), 0, "%s", bad[i][0]);
		cr_expect(e && strstr(e->msg, bad[i][1]), "%s: %s", bad[i][0], e ? e->msg : "");
		dsh_config_clear(&c);
	}
}

Test(env, run_options_carry_the_command_env)
{
	struct dsh_config c;
	dsh_config_init(&c);
	struct dsh_run_options o;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_run_options_init(&o, &c, host, &err), 0, "%s", err ? err->msg : "");
	cr_expect(dsh_strv_contains(o.command_env, "HOME=/home/u"));
	cr_expect(!dsh_strv_contains(o.command_env, "GITHUB_TOKEN=ghp_x"));
	cr_expect(dsh_strv_contains(o.env_removed, "GITHUB_TOKEN"));
	cr_expect(dsh_strv_contains(o.envp, "GITHUB_TOKEN=ghp_x"), "the caller's own environment is kept apart");
	dsh_run_options_clear(&o);
	dsh_config_clear(&c);
}
