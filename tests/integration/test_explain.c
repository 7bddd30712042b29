/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * explain shows what a run would use (issue 12): by default only the backend that would run and its
 * warnings, --all-backends for the table of every backend, --backend B for B; the same in --json.
 * Seatbelt and winacl are never chosen on Linux, so they show only in the full table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
		cr_assert(asprintf(&line, "\n     %s: .git/hooks .git/config .bashrc", ws) > 0);
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
