/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <string.h>

#include "tests/lib/harness.h"

static char *dir;

static void setup(void)
{
	dir = dsh_test_mkdtemp();
}

static void teardown(void)
{
	dsh_test_rmtree(dir);
	free(dir);
}

static char *layer(const char *name, const char *yaml)
{
	char *p = NULL;
	cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	dsh_test_write_file(p, yaml);
	return p;
}

static void doctor(struct dsh_proc *r, char *a, char *b)
{
	char *argv[] = { (char *)dsh_test_dshbox(), "doctor", a, b, NULL };
	char *env[] = { "HOME=/home/u", "PATH=/usr/bin:/bin", NULL };
	cr_assert_eq(dsh_proc_run(argv, env, NULL, r), 0);
}

static const char official_off[] = "- id: sandbox\n  disabled: true\n- id: fs-sandbox\n  disabled: true\n";
static const char insert_row[] = "- insert:\n    - id: sandbox-local\n      name: dshbox\n";
static const char rules[] = "- id: sandbox-local\n  config:\n    access: |-\n      rw {{ env.HOME }}/.cache\n      -- **/*.pem\n";

TestSuite(doctor, .init = setup, .fini = teardown);

Test(doctor, a_correct_assembly_reports_the_effective_rules)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s%s", official_off, insert_row);
	char *a = layer("bundle.yml", buf), *b = layer("profile.yml", rules);
	struct dsh_proc r;
	doctor(&r, a, b);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "effective configuration: "), "%s", r.out);
	cr_expect(strstr(r.out, "    -- **/*.pem\n"), "%s", r.out);
	cr_expect(strstr(r.out, "problems: none"), "%s", r.out);
	dsh_proc_clear(&r);
	free(a);
	free(b);
}

Test(doctor, official_rows_left_enabled_are_duplicate_registrations)
{
	char *a = layer("bundle.yml", insert_row), *b = layer("profile.yml", rules);
	struct dsh_proc r;
	doctor(&r, a, b);
	cr_expect_eq(r.exit_code, 1);
	cr_expect(strstr(r.out, "official 'sandbox' row is not disabled"), "%s", r.out);
	cr_expect(strstr(r.out, "official 'fs-sandbox' row is not disabled"), "%s", r.out);
	dsh_proc_clear(&r);
	free(a);
	free(b);
}

Test(doctor, rules_without_the_row_are_inert)
{
	char *a = layer("bundle.yml", official_off), *b = layer("profile.yml", rules);
	struct dsh_proc r;
	doctor(&r, a, b);
	cr_expect_eq(r.exit_code, 1);
	cr_expect(strstr(r.out, "never inserted: they are silently inert"), "%s", r.out);
	dsh_proc_clear(&r);
	free(a);
	free(b);
}

Test(doctor, the_row_inserted_twice_is_two_adoption_paths)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s%s", official_off, insert_row);
	char *a = layer("bundle.yml", buf);
	snprintf(buf, sizeof(buf), "%s%s", insert_row, rules);
	char *b = layer("profile.yml", buf);
	struct dsh_proc r;
	doctor(&r, a, b);
	cr_expect_eq(r.exit_code, 1);
	cr_expect(strstr(r.out, "inserted 2 times"), "%s", r.out);
	dsh_proc_clear(&r);
	free(a);
	free(b);
}

Test(doctor, a_later_layer_replaces_the_config_whole_and_bad_rules_are_reported)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s%s%s", official_off, insert_row, rules);
	char *a = layer("bundle.yml", buf);
	char *b = layer("home.yml", "- id: sandbox-local\n  config:\n    access: [\"rw /srv/*\"]\n");
	struct dsh_proc r;
	doctor(&r, a, b);
	cr_expect_eq(r.exit_code, 1);
	cr_expect_null(strstr(r.out, "**/*.pem"), "the earlier config is replaced whole: %s", r.out);
	cr_expect(strstr(r.out, "must be concrete"), "%s", r.out);
	dsh_proc_clear(&r);
	free(a);
	free(b);
}

Test(doctor, an_unreadable_layer_is_exit_125)
{
	char *a = layer("bundle.yml", "id: not-a-list\n");
	struct dsh_proc r;
	doctor(&r, a, "/nonexistent/cordis.patch.yml");
	cr_expect_eq(r.exit_code, 125);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect_str_eq(r.out, "");
	dsh_proc_clear(&r);
	free(a);
}

/* A row whose configuration loads as rules but not as a run (a runner without its failure
   signatures) is a problem, and the runner is printed with the effective configuration. */
Test(doctor, a_row_that_would_not_run_is_a_problem)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s%s", official_off, insert_row);
	char *a = layer("bundle.yml", buf);
	char *b = layer("profile.yml", "- id: sandbox-local\n  config:\n    access: ['-- .env']\n    runnerCommand: [bwrap]\n");
	struct dsh_proc r;
	doctor(&r, a, b);
	cr_expect_eq(r.exit_code, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "  runnerCommand: bwrap\n"), "%s", r.out);
	cr_expect(strstr(r.out, "does not load as a run reads it: runnerFailureSignatures: required"), "%s", r.out);
	cr_expect_null(strstr(r.out, "problems: none"), "%s", r.out);
	dsh_proc_clear(&r);
	free(a);
	free(b);
	/* With its signatures the same row runs (through backend runner, as the dsh services do). */
	a = layer("bundle.yml", buf);
	b = layer("profile.yml", "- id: sandbox-local\n  config:\n    runnerCommand: [bwrap]\n"
				 "    runnerFailureSignatures: ['bwrap: ']\n");
	doctor(&r, a, b);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "problems: none"), "%s", r.out);
	dsh_proc_clear(&r);
	free(a);
	free(b);
}
