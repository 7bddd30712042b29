/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * explain shows what a run would use (issue 12): by default only the backend that would run and its
 * warnings, --all-backends for the table of every backend, --backend B for B; the same in --json.
 * Seatbelt and winacl are never chosen on Linux, so they show only in the full table.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "tests/lib/harness.h"

static char *base_env[] = { "HOME=/home/u", "PATH=/usr/bin:/bin", "GITHUB_TOKEN=t0ken-value", NULL };

static void explain(struct dsh_proc *r, const char *ws, ...)
{
	char **argv = NULL;
	dsh_strv_push(&argv, dsh_test_dshbox());
	dsh_strv_push(&argv, "explain");
	dsh_strv_push(&argv, "--workspace");
	dsh_strv_push(&argv, ws);
	dsh_strv_push(&argv, "--access");
	dsh_strv_push(&argv, "-- **/*.pem");
	va_list ap;
	va_start(ap, ws);
	for (const char *a; (a = va_arg(ap, const char *));)
		dsh_strv_push(&argv, a);
	va_end(ap);
	cr_assert_eq(dsh_proc_run(argv, base_env, NULL, r), 0);
	cr_expect_eq(r->exit_code, 0, "%s", r->err);
	cr_expect_str_eq(r->err, "", "explain prints on stdout only");
	dsh_strv_free(argv);
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The backend a run would use, from --json's "backend". */
static char *chosen(const char *json)
{
	const char *b = strstr(json, "\"backend\": \"");
	cr_assert_not_null(b, "no backend chosen: %s", json);
	b += strlen("\"backend\": \"");
	return strndup(b, strcspn(b, "\""));
}

Test(explain, by_default_only_the_backend_that_would_run)
{
	dsh_test_require_backend(); /* which one would run is the point */
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	explain(&r, ws, "--json", NULL);
	char *name = chosen(r.out);
	cr_expect_eq(count(r.out, "\"name\": "), 1, "one backend described: %s", r.out);
	cr_expect_null(strstr(r.out, "seatbelt"), "%s", r.out);
	cr_expect_null(strstr(r.out, "winacl"), "%s", r.out);
	/* every backend warning is the chosen one's */
	char *prefix = NULL;
	cr_assert(asprintf(&prefix, "\"%s: ", name) > 0);
	for (const char *w = strstr(r.out, "\"warnings\""); w && (w = strstr(w, ": rule \"")); w++) {
		const char *start = w;
		while (start > r.out && *start != '"')
			start--;
		cr_expect_eq(strncmp(start, prefix, strlen(prefix)), 0, "a warning of another backend: %.80s", start);
	}
	cr_expect(strstr(r.out, "\"GITHUB_TOKEN\""), "the environment part names what run removes");
	cr_expect_null(strstr(r.out, "t0ken-value"), "never a value");
	dsh_proc_clear(&r);

	explain(&r, ws, NULL);
	cr_expect_null(strstr(r.out, "seatbelt"), "%s", r.out);
	cr_expect(strstr(r.out, "\nbackend:\n"), "%s", r.out);
	cr_expect(strstr(r.out, "--all-backends"), "says how to see the rest: %s", r.out);
	cr_expect(strstr(r.out, "not passed on: GITHUB_TOKEN"), "%s", r.out);
	/* linux-ns enforces SPEC 1.6's defaults in full: one line per writable root, not 4 per name */
	if (strcmp(name, "linux-ns") == 0) {
		char *line = NULL;
		cr_assert(asprintf(&line, "\n     %s: .git/hooks .git/config .gitconfig .gitmodules .bashrc", ws) > 0);
		cr_expect(strstr(r.out, line), "%s", r.out);
		cr_expect_null(strstr(r.out, "(protected by default)"), "%s", r.out);
		free(line);
	}
	dsh_proc_clear(&r);
	free(name), free(prefix);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(explain, all_backends_shows_the_table)
{
	dsh_test_require_backend();
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	explain(&r, ws, "--json", "--all-backends", NULL);
	free(chosen(r.out)); /* still says which would run */
	static const char *const names[] = { "linux-ns", "landlock", "runner", "none", "seatbelt", "winacl" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *n = NULL;
		cr_assert(asprintf(&n, "\"name\": \"%s\"", names[i]) > 0);
		cr_expect(strstr(r.out, n), "%s missing", names[i]);
		free(n);
	}
	cr_expect(strstr(r.out, "\"seatbelt\": {"), "each rule says what seatbelt does: %s", r.out);
	dsh_proc_clear(&r);

	explain(&r, ws, "--all-backends", NULL);
	cr_expect(strstr(r.out, "\nbackends:\n"), "%s", r.out);
	cr_expect(strstr(r.out, "     seatbelt   full"), "%s", r.out);
	cr_expect(strstr(r.out, "\n  none: rule \"-- **/*.pem\": backend none enforces nothing"), "%s", r.out);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(explain, an_explicit_backend_is_described_as_asked)
{
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	explain(&r, ws, "--json", "--backend", "seatbelt", NULL);
	char *name = chosen(r.out);
	cr_expect_str_eq(name, "seatbelt");
	cr_expect_eq(count(r.out, "\"name\": "), 1, "%s", r.out);
	dsh_proc_clear(&r);
	explain(&r, ws, "--backend", "runner", NULL);
	cr_expect(strstr(r.out, "     runner     partial"), "%s", r.out);
	cr_expect_null(strstr(r.out, "     linux-ns "), "%s", r.out);
	dsh_proc_clear(&r);
	free(name);
	dsh_test_rmtree(ws);
	free(ws);
}

/* A policy naming many absent paths gets a note for each of the first 20 and one count for the rest;
   the default-protected names that are absent (the usual case) are not counted. */
Test(explain, absent_targets_past_twenty_are_counted_in_one_note)
{
	char *ws = dsh_test_mkdtemp();
	char *sub = NULL;
	cr_assert(asprintf(&sub, "%s/sub", ws) > 0);
	cr_assert_eq(mkdir(sub, 0755), 0);
	struct dsh_buf rules = { 0 };
	for (int i = 0; i < 25; i++)
		dsh_buf_addf(&rules, "-- absent/f%d\n", i);
	for (int i = 0; i < 3; i++)
		dsh_buf_addf(&rules, "r- sub/g%d\n", i);
	struct dsh_proc r;
	explain(&r, ws, "--backend", "linux-ns", "--access", rules.s, NULL);
	cr_expect_eq(count(r.out, "): does not exist (the file fence still applies the rule"), 20, "%s", r.out);
	cr_expect(strstr(r.out, "note: skipped 8 more targets that do not exist"), "%s", r.out);
	cr_expect(strstr(r.out, "skipped mask "), "the first are named: %s", r.out);
	cr_expect_null(strstr(r.out, "/sub/g2 (rule"), "the last are only counted: %s", r.out);
	dsh_proc_clear(&r);
	free(rules.s);
	free(sub);
	dsh_test_rmtree(ws);
	free(ws);
}

/* --json writes the rules one at a time; the document must be what dumping it whole gives (the same
   JSON, the same spelling), with no rule, with the defaults, and with many. */
static void json_is_canonical(const char *ws, size_t want_min_rules, ...)
{
	char **argv = NULL;
	dsh_strv_push(&argv, (char *)dsh_test_dshbox());
	dsh_strv_push(&argv, "explain");
	dsh_strv_push(&argv, "--json");
	dsh_strv_push(&argv, "--workspace");
	dsh_strv_push(&argv, ws);
	va_list ap;
	va_start(ap, want_min_rules);
	for (const char *a; (a = va_arg(ap, const char *));)
		dsh_strv_push(&argv, a);
	va_end(ap);
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, base_env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	json_error_t e;
	json_t *doc = json_loads(r.out, 0, &e);
	cr_assert_not_null(doc, "not JSON: %s (line %d): %.300s", e.text, e.line, r.out);
	json_t *rules = json_object_get(doc, "rules");
	cr_expect(json_is_array(rules) && json_array_size(rules) >= want_min_rules, "rules: %zu, want %zu or more",
		  json_array_size(rules), want_min_rules);
	char *again = json_dumps(doc, JSON_INDENT(2));
	cr_assert_not_null(again);
	size_t n = strlen(again);
	cr_expect(strlen(r.out) == n + 1 && strncmp(r.out, again, n) == 0 && r.out[n] == '\n',
		  "not as dumped whole:\n%s\n---\n%s", r.out, again);
	free(again);
	json_decref(doc);
	dsh_proc_clear(&r);
	dsh_strv_free(argv);
}

Test(explain, json_rules_are_written_as_one_document)
{
	char *ws = dsh_test_mkdtemp();
	json_is_canonical(ws, 1, "--access", "-- x", NULL);
	_cleanup_free_ char *cfg = NULL;
	cr_assert(asprintf(&cfg, "%s/none.yml", ws) > 0);
	dsh_test_write_file(cfg, "protectDefaults: false\n");
	json_is_canonical(ws, 0, "--config", cfg, NULL);
	json_is_canonical(ws, 3, "--access", "-- **/*.pem", "--access", "r- \"odd\\name\"", "--access", "rw /tmp/x y",
			  "--all-backends", NULL);
	dsh_test_rmtree(ws);
	free(ws);
}
