/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a user sees of the environment policy (SPEC 1.7, issue 12): `GITHUB_TOKEN=x dshbox run -- env`
 * does not show the token, the report names it without its value, and env: in the configuration
 * chooses inherit all|core|none, the exclude patterns and explicit sets.  A bad env: is one error
 * line, exit 125, and the command does not run.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/strv.h"
#include "tests/lib/harness.h"

static char *env_of_host[] = {
	"HOME=/home/u", "PATH=/usr/bin:/bin", "LANG=C", "GITHUB_TOKEN=ghp_do_not_leak", "My_Api_Key=k2",
	"EDITOR=vi", NULL,
};

/* dshbox run --workspace WS [--config CFG] EXTRA... -- /usr/bin/env */
static void run_env(struct dsh_proc *r, const char *ws, const char *cfg_yaml, const char *extra)
{
	char **argv = NULL;
	char *cfg = NULL;
	dsh_strv_push(&argv, dsh_test_dshbox());
	dsh_strv_push(&argv, "run");
	dsh_strv_push(&argv, "--workspace");
	dsh_strv_push(&argv, ws);
	if (cfg_yaml) {
		cr_assert(asprintf(&cfg, "%s/dshbox.yml", ws) > 0);
		dsh_test_write_file(cfg, cfg_yaml);
		dsh_strv_push(&argv, "--config");
		dsh_strv_push(&argv, cfg);
	}
	if (extra)
		dsh_strv_push(&argv, extra);
	dsh_strv_push(&argv, "--");
	dsh_strv_push(&argv, "/usr/bin/env");
	cr_assert_eq(dsh_proc_run(argv, env_of_host, NULL, r), 0);
	dsh_strv_free(argv);
	free(cfg);
}

Test(run_env, a_token_in_the_host_environment_does_not_reach_the_command)
{
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run_env(&r, ws, NULL, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_null(strstr(r.out, "GITHUB_TOKEN"), "%s", r.out);
	cr_expect_null(strstr(r.out, "ghp_do_not_leak"), "%s", r.out);
	cr_expect_null(strstr(r.out, "My_Api_Key"), "case-insensitive: %s", r.out);
	cr_expect(strstr(r.out, "EDITOR=vi\n"), "the rest is inherited: %s", r.out);
	cr_expect(strstr(r.out, "HOME=/home/u\n"), "%s", r.out);
	cr_expect_str_eq(r.err, "", "a successful run prints nothing of dshbox's own");
	dsh_proc_clear(&r);

	/* --report names what was removed, never the value. */
	run_env(&r, ws, NULL, "--report=-");
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	const char *env = strstr(r.out, "\"environment\"");
	cr_assert_not_null(env, "%s", r.out);
	cr_expect(strstr(env, "\"GITHUB_TOKEN\""), "%s", env);
	cr_expect(strstr(env, "\"My_Api_Key\""), "%s", env);
	cr_expect_null(strstr(r.out, "ghp_do_not_leak"), "a value in the report: %s", r.out);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_env, the_configuration_chooses_inherit_exclude_and_set)
{
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run_env(&r, ws, "env:\n  inherit: core\n  set:\n    CI: \"true\"\n", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "PATH=/usr/bin:/bin\n") && strstr(r.out, "LANG=C\n"), "%s", r.out);
	cr_expect_null(strstr(r.out, "EDITOR="), "not in the core set: %s", r.out);
	cr_expect(strstr(r.out, "CI=true\n"), "%s", r.out);
	dsh_proc_clear(&r);

	/* exclude: [] clears the defaults: the user asked for the token to pass. */
	run_env(&r, ws, "env:\n  exclude: []\n", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "GITHUB_TOKEN=ghp_do_not_leak\n"), "%s", r.out);
	dsh_proc_clear(&r);

	run_env(&r, ws, "env:\n  inherit: none\n  exclude: [\"EDITOR\"]\n  set: {ONLY: me}\n", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "ONLY=me\n");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_env, a_bad_env_policy_is_one_error_and_nothing_runs)
{
	static const char *const cases[][2] = {
		{ "env:\n  inherit: most\n", "env.inherit: expected all, core or none" },
		{ "env:\n  exclude: [\"A=B\"]\n", "env.exclude[0]" },
		{ "env:\n  set: {\"BAD NAME\": x}\n", "env.set" },
		{ "env: [x]\n", "env: expected a mapping" },
	};
	char *ws = dsh_test_mkdtemp();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dsh_proc r;
		run_env(&r, ws, cases[i][0], NULL);
		cr_expect_eq(r.exit_code, 125, "%s: %s", cases[i][0], r.err);
		cr_expect_str_eq(r.out, "", "%s: the command ran", cases[i][0]);
		cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
		cr_expect(strstr(r.err, cases[i][1]), "%s: %s", cases[i][0], r.err);
		dsh_proc_clear(&r);
	}
	dsh_test_rmtree(ws);
	free(ws);
}
