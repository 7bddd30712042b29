/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The landlock backend and the commonest rule (issue 22): `-- DIR` outside the writable roots runs,
 * with the broker on, reported full; DIR's file cannot be read; `ls /` and the directories on the way
 * list (Landlock's listing right holds beneath them, so DIR's names list too, and that is said).
 */
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

#define KEY "PRIVATE-KEY-51ac"

static char *fmt2(const char *a, const char *b)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s%s", a, b) > 0);
	return s;
}

/* The process enforcement and how of the report's rule with this text, or NULL. */
static const char *rule_field(json_t *report, const char *text, const char *field)
{
	size_t i;
	json_t *rule;
	json_array_foreach(json_object_get(report, "rules"), i, rule)
		if (strcmp(json_string_value(json_object_get(rule, "rule")) ?: "", text) == 0)
			return json_string_value(json_object_get(json_object_get(rule, "process"), field));
	return NULL;
}

Test(run_landlock_dirs, a_deny_dir_outside_the_roots_runs_and_hides_its_file)
{
	dsh_test_require_landlock();
	_cleanup_free_ char *top = dsh_test_mkdtemp();
	_cleanup_free_ char *ws = fmt2(top, "/ws"), *dir = fmt2(top, "/secrets"), *key = fmt2(top, "/secrets/key");
	_cleanup_free_ char *rule = fmt2("-- ", dir), *rep = fmt2(top, "/report.json");
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(mkdir(dir, 0755), 0);
	dsh_test_write_file(key, KEY "\n");
	chmod(key, 0644);
	_cleanup_free_ char *script = NULL;
	cr_assert(asprintf(&script,
			   "ls / >/dev/null && echo ls-root=ok;"
			   "ls '%s' | grep -qx secrets && echo ls-top=ok;"
			   "ls /etc >/dev/null && echo ls-etc=ok;"
			   "cat '%s'; echo cat=$?",
			   top, key) > 0);
	const char *argv[] = { dsh_test_dshbox(), "run", "--backend", "landlock", "--workspace", ws, "--cwd", ws,
			       "--access", rule, "--report", rep, "--", "sh", "-c", script, NULL };
	char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_log_info("exit %d\nstdout:\n%s\nstderr:\n%s", r.exit_code, r.out, r.err);
	cr_expect_eq(r.exit_code, 0, "the run refused: %s", r.err);
	cr_expect(strstr(r.out, "ls-root=ok"), "ls / failed: %s%s", r.out, r.err);
	cr_expect(strstr(r.out, "ls-top=ok"), "the directory on the way did not list the -- name: %s%s", r.out, r.err);
	cr_expect(strstr(r.out, "ls-etc=ok"), "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "cat=1"), "the key was readable: %s", r.out);
	cr_expect_null(strstr(r.out, KEY), "the key was printed: %s", r.out);
	cr_expect_null(strstr(r.err, "dshbox: warning: rule"), "a rule was said lost: %s", r.err);
	json_error_t je;
	json_t *report = json_load_file(rep, 0, &je);
	cr_assert_not_null(report, "report: %s", je.text);
	cr_expect_str_eq(rule_field(report, rule, "enforcement") ?: "(none)", "full");
	const char *how = rule_field(report, rule, "how");
	cr_expect(how && strstr(how, "listed") && strstr(how, "runtime broker"), "how: %s", how ?: "(none)");
	json_decref(report);
	dsh_proc_clear(&r);
	dsh_test_rmtree(top);
}

Test(run_landlock_dirs, explain_says_full_for_a_deny_dir)
{
	dsh_test_require_landlock();
	_cleanup_free_ char *top = dsh_test_mkdtemp();
	_cleanup_free_ char *ws = fmt2(top, "/ws"), *dir = fmt2(top, "/secrets"), *rule = fmt2("-- ", dir);
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(mkdir(dir, 0755), 0);
	const char *argv[] = { dsh_test_dshbox(), "explain", "--backend", "landlock", "--workspace", ws,
			       "--access", rule, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, NULL, NULL, &r), 0);
	cr_log_info("exit %d\nstdout:\n%s\nstderr:\n%s", r.exit_code, r.out, r.err);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	/* The rule's line for the backend: "landlock   LEVEL   how". */
	const char *line = strstr(r.out, rule);
	cr_assert_not_null(line, "%s", r.out);
	line = strstr(line, "landlock ");
	cr_assert_not_null(line, "%s", r.out);
	const char *eol = strchr(line, '\n');
	_cleanup_free_ char *l = strndup(line, eol ? (size_t)(eol - line) : strlen(line));
	cr_expect(strncmp(l, "landlock   full ", 16) == 0, "explain: %s\n%s", l, r.out);
	dsh_proc_clear(&r);
	dsh_test_rmtree(top);
}
