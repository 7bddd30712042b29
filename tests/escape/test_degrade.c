/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Honest degradation (SPEC 4, issue 11): a run whose backend loses a rule refuses with exit 125,
 * naming the rule and the remedies, and runs nothing; with --allow-degraded (allowDegraded: true) it
 * runs and says each loss on stderr at every run.  The oracle is the host: a key in the workspace
 * that a refused run must not print.  A host without user namespaces is made with the seccomp shim
 * (build/helpers/esc_shim); an older Landlock ABI, which no shim can fake (seccomp cannot make
 * landlock_create_ruleset answer a smaller version), through the plan builder's ABI argument.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/backend.h"
#include "dshbox/dshbox.h"
#include "policy/options.h"
#include "supervisor/landlock_backend.h"
#include "tests/lib/harness.h"

#define KEY "BEGIN-PRIVATE-KEY-3b9c"
#define RULE "-- **/*.pem"

static char *top, *ws, *key;

static void setup(void)
{
	top = dsh_test_mkdtemp();
	cr_assert(asprintf(&ws, "%s/ws", top) > 0);
	cr_assert(asprintf(&key, "%s/ws/k.pem", top) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
	dsh_test_write_file(key, KEY "\n");
}

static void teardown(void)
{
	_cleanup_free_ char *k = dsh_test_read_file(key);
	cr_expect(k && strcmp(k, KEY "\n") == 0, "the key changed on the host");
	dsh_test_rmtree(top);
	free(key), free(ws), free(top);
}

TestSuite(degrade, .init = setup, .fini = teardown, .timeout = 60);

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

/* [esc_shim MODES --] dshbox run --workspace WS --cwd WS ARGS... -- cat k.pem; ARGS end at NULL. */
static void run(struct dsh_proc *r, const char *shim_modes, ...)
{
	const char *argv[40];
	size_t n = 0;
	_cleanup_free_ char *shim = shim_modes ? dsh_test_helper("esc_shim") : NULL;
	if (shim) {
		argv[n++] = shim;
		argv[n++] = shim_modes;
		argv[n++] = "--";
	}
	argv[n++] = dsh_test_dshbox();
	argv[n++] = "run";
	argv[n++] = "--workspace";
	argv[n++] = ws;
	argv[n++] = "--cwd";
	argv[n++] = ws;
	va_list ap;
	va_start(ap, shim_modes);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 32;)
		argv[n++] = a;
	va_end(ap);
	argv[n++] = "--";
	argv[n++] = "cat";
	argv[n++] = "k.pem";
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, r), 0);
	cr_log_info("exit %d\nstdout:\n%s\nstderr:\n%s", r->exit_code, r->out, r->err);
}

static void expect_refused(const struct dsh_proc *r)
{
	cr_expect_eq(r->exit_code, 125, "exit %d: %s", r->exit_code, r->err);
	cr_expect_null(strstr(r->out, KEY), "the key was printed by a refused run");
	cr_expect_str_eq(r->out, "", "the command ran");
	cr_expect_eq(dsh_count_lines_with_prefix(r->err, "dshbox: error: "), 1, "%s", r->err);
	cr_expect(strstr(r->err, "dshbox: error: backend landlock cannot enforce rule \"" RULE "\""), "%s", r->err);
	cr_expect(strstr(r->err, "k.pem"), "the error does not say what is exposed: %s", r->err);
	cr_expect_eq(dsh_count_lines_with_prefix(r->err, "dshbox: hint: "), 1, "%s", r->err);
	cr_expect(strstr(r->err, "user namespaces") && strstr(r->err, "tools/apparmor/dshbox"), "%s", r->err);
	cr_expect(strstr(r->err, "--allow-degraded") && strstr(r->err, "allowDegraded: true"), "%s", r->err);
	cr_expect_eq(dsh_count_lines_with_prefix(r->err, "dshbox: "), 2, "more than the error and the hint: %s", r->err);
}

static void expect_degraded_run(const struct dsh_proc *r)
{
	cr_expect_eq(r->exit_code, 0, "%s", r->err);
	cr_expect(strstr(r->out, KEY), "the command did not run: %s", r->out);
	/*
	 * One warning for the one lost rule, and nothing else of dshbox's own, but for the truncation
	 * that Landlock below ABI 3 loses on every r- rule (dshbox's own configuration is one): on such
	 * a kernel each of those is a loss too and must be said.
	 */
	int lines = dsh_count_lines_with_prefix(r->err, "dshbox: ");
	int truncation = 0;
	for (const char *l = r->err; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		if (strncmp(l, "dshbox: warning: ", 17) == 0 && memmem(l, len, "does not govern truncation (ABI 3+)", 35))
			truncation++;
	}
	cr_expect_eq(dsh_count_lines_with_prefix(r->err, "dshbox: warning: rule \"" RULE "\""), 1, "%s", r->err);
	cr_expect_eq(lines - truncation, 1, "%s", r->err);
	cr_expect(strstr(r->err, "dshbox: warning: rule \"" RULE "\"") && strstr(r->err, "k.pem"), "%s", r->err);
}

Test(degrade, landlock_refuses_a_rule_it_loses)
{
	struct dsh_proc r;
	run(&r, NULL, "--backend", "landlock", "--access", RULE, NULL);
	expect_refused(&r);
	dsh_proc_clear(&r);
}

Test(degrade, allow_degraded_runs_and_warns_at_every_run)
{
	struct dsh_proc r;
	for (int i = 0; i < 2; i++) {
		run(&r, NULL, "--backend", "landlock", "--allow-degraded", "--access", RULE, NULL);
		expect_degraded_run(&r);
		dsh_proc_clear(&r);
	}
}

Test(degrade, allow_degraded_from_the_configuration)
{
	_cleanup_free_ char *cfg = NULL;
	cr_assert(asprintf(&cfg, "%s/dshbox.yml", top) > 0);
	dsh_test_write_file(cfg, "allowDegraded: true\naccess:\n  - \"" RULE "\"\n");
	struct dsh_proc r;
	run(&r, NULL, "--backend", "landlock", "--config", cfg, NULL);
	expect_degraded_run(&r);
	dsh_proc_clear(&r);
	dsh_test_write_file(cfg, "allowDegraded: yes\n");
	run(&r, NULL, "--config", cfg, NULL);
	cr_expect_eq(r.exit_code, 125);
	cr_expect(strstr(r.err, "allowDegraded"), "%s", r.err);
	dsh_proc_clear(&r);
}

/* Ubuntu 24.04's default, containers, dshbox in dshbox: auto falls back to landlock, which refuses. */
Test(degrade, auto_without_user_namespaces_refuses)
{
	struct dsh_proc r;
	run(&r, "userns", "--access", RULE, NULL);
	expect_refused(&r);
	dsh_proc_clear(&r);
	run(&r, "userns", "--allow-degraded", "--access", RULE, NULL);
	expect_degraded_run(&r);
	dsh_proc_clear(&r);
}

/* What linux-ns enforces whole runs without a word, and keeps the key masked. */
Test(degrade, linux_ns_loses_nothing)
{
	struct dsh_proc r;
	run(&r, NULL, "--backend", "linux-ns", "--access", RULE, NULL);
	cr_expect_neq(r.exit_code, 125, "%s", r.err);
	cr_expect_null(strstr(r.out, KEY));
	/* Nothing lost, nothing warned; the command's failed read of the key is named (a note). */
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: warning: ") + dsh_count_lines_with_prefix(r.err, "dshbox: error: "),
		     0, "%s", r.err);
	dsh_proc_clear(&r);
}

/* An absent target inside the workspace holds (the broker refuses its creation): no refusal. */
Test(degrade, an_absent_target_is_not_lost)
{
	cr_assert_eq(unlink(key), 0);
	const char *argv[] = { dsh_test_dshbox(), "run", "--backend", "landlock", "--workspace", ws, "--cwd", ws,
			       "--access", RULE, "--access", "r- .envrc", "--", "sh", "-c",
			       "echo k > new.pem; echo x > .envrc; echo ran", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "ran"), "%s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: "), 0, "%s", r.err);
	_cleanup_free_ char *pem = NULL, *envrc = NULL;
	cr_assert(asprintf(&pem, "%s/new.pem", ws) > 0 && asprintf(&envrc, "%s/.envrc", ws) > 0);
	cr_expect_neq(access(pem, F_OK), 0, "new.pem was created on the host");
	cr_expect_neq(access(envrc, F_OK), 0, ".envrc was created on the host");
	dsh_proc_clear(&r);
	dsh_test_write_file(key, KEY "\n");
}

/* A dry run runs nothing: it prints the plan whatever the run would lose; --report says what. */
Test(degrade, dry_run_and_report_of_a_refused_run)
{
	const char *argv[] = { dsh_test_dshbox(), "run", "--backend", "landlock", "--workspace", ws, "--cwd", ws,
			       "--access", RULE, "--dry-run", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "landlock ABI"), "%s", r.out);
	dsh_proc_clear(&r);
	run(&r, NULL, "--backend", "landlock", "--access", RULE, "--report", "-", NULL);
	cr_expect_eq(r.exit_code, 125);
	json_error_t je;
	json_t *o = json_loads(r.out, 0, &je);
	cr_assert_not_null(o, "%s", r.out);
	cr_expect_str_eq(json_string_value(json_object_get(o, "enforcement")), "partial");
	json_t *proc = json_object_get(json_array_get(json_object_get(o, "rules"), 0), "process");
	cr_expect_str_eq(json_string_value(json_object_get(proc, "enforcement")), "partial");
	cr_expect(strstr(json_string_value(json_object_get(proc, "lost")), "k.pem"));
	json_t *sig;
	size_t i;
	json_array_foreach(json_object_get(o, "denial_signatures"), i, sig)
		cr_expect_str_neq(json_string_value(sig), "operation not permitted", "bare EPERM is no denial signature");
	json_decref(o);
	dsh_proc_clear(&r);
}

/* ---- what the Landlock ABI in force and the broker leave out (the library, at a given ABI) ---- */

struct lib {
	struct dsh_config c;
	struct dsh_policy *p;
	struct dsh_run_options o;
};

static void lib_init(struct lib *l, const char *rule, bool broker)
{
	struct dsh_error *err = NULL;
	dsh_config_init(&l->c);
	l->c.workspace = strdup(ws);
	l->c.runtime_broker = broker;
	dsh_strv_push(&l->c.access, rule);
	cr_assert_eq(dsh_policy_new(&l->c, env, ws, &l->p, &err), 0, "%s", err ? err->msg : "");
	cr_assert_eq(dsh_run_options_init(&l->o, &l->c, env, &err), 0);
}

static void lib_clear(struct lib *l)
{
	dsh_policy_free(l->p);
	dsh_run_options_clear(&l->o);
	dsh_config_clear(&l->c);
}

/* The --report JSON of the landlock backend at that ABI; ret_rule: rule 0's process part. */
static json_t *report_at(struct lib *l, int abi)
{
	struct dsh_error *err = NULL;
	struct dsh_landlock_plan *plan = NULL;
	cr_assert_eq(dsh_landlock_plan_build_abi(l->p, &l->o, abi, &plan, &err), 0, "%s", err ? err->msg : "");
	struct dsh_description d;
	cr_assert_eq(dsh_backend_get(DSH_BACKEND_LANDLOCK)->describe(l->p, plan, &d, &err), 0);
	char *s = NULL;
	cr_assert_eq(dsh_run_report_json(l->p, &l->o, &d, &s, &err), 0);
	dsh_description_clear(&d);
	dsh_landlock_plan_free(plan);
	json_error_t je;
	json_t *o = json_loads(s, 0, &je);
	cr_assert_not_null(o, "%s", s);
	free(s);
	return o;
}

static const char *rule0(json_t *o, const char *field)
{
	return json_string_value(json_object_get(json_object_get(json_array_get(json_object_get(o, "rules"), 0), "process"),
						 field));
}

static bool warned(json_t *o, const char *what)
{
	json_t *w;
	size_t i;
	json_array_foreach(json_object_get(o, "warnings"), i, w)
		if (strstr(json_string_value(w), what))
			return true;
	return false;
}

Test(degrade, report_at_an_older_abi_is_partial)
{
	_cleanup_free_ char *outside = NULL, *rule = NULL;
	cr_assert(asprintf(&outside, "%s/notes.txt", top) > 0 && asprintf(&rule, "r- %s", outside) > 0);
	dsh_test_write_file(outside, "keep\n");
	struct lib l;
	lib_init(&l, rule, true);
	/* Debian 12's 6.1: ABI 2.  Truncation, device ioctls and scoping are not governed. */
	json_t *o = report_at(&l, 2);
	cr_expect_str_eq(json_string_value(json_object_get(o, "enforcement")), "partial");
	cr_expect_str_eq(rule0(o, "enforcement"), "partial");
	cr_expect(rule0(o, "lost") && strstr(rule0(o, "lost"), "truncat"), "%s", rule0(o, "lost"));
	cr_expect(warned(o, "ABI 2") && warned(o, "scoping") && warned(o, "ioctl"));
	json_decref(o);
	/* 6.7's ABI 4: truncation governed, the rule holds; still no scoping nor device ioctls */
	o = report_at(&l, 4);
	cr_expect_str_eq(rule0(o, "enforcement"), "full");
	cr_expect_null(rule0(o, "lost"));
	cr_expect_str_eq(json_string_value(json_object_get(o, "enforcement")), "partial");
	cr_expect(warned(o, "scoping") && warned(o, "ioctl") && !warned(o, "truncation"));
	json_decref(o);
	/* 6.12's ABI 6: the rule and the scoping hold */
	o = report_at(&l, 6);
	cr_expect_str_eq(rule0(o, "enforcement"), "full");
	cr_expect(!warned(o, "scoping") && !warned(o, "ioctl") && !warned(o, "truncation"));
	json_decref(o);
	lib_clear(&l);
}

/* runtimeBroker: off — what only the broker held is lost, and said. */
Test(degrade, broker_off_loses_what_it_covered)
{
	struct lib l;
	lib_init(&l, "-- secret.txt", false); /* absent inside the workspace */
	json_t *o = report_at(&l, 7);
	cr_expect_str_eq(rule0(o, "enforcement"), "partial");
	cr_expect(rule0(o, "lost") && strstr(rule0(o, "lost"), "runtime broker is off"), "%s", rule0(o, "lost"));
	/* The metadata of files outside the writable roots was the broker's alone too. */
	cr_expect(warned(o, "file metadata") && warned(o, "runtimeBroker is off"));
	json_decref(o);
	lib_clear(&l);
	lib_init(&l, "-- secret.txt", true);
	o = report_at(&l, 7);
	cr_expect_str_eq(rule0(o, "enforcement"), "full");
	cr_expect(!warned(o, "file metadata"));
	json_decref(o);
	lib_clear(&l);
}

/* The library's own decision, as a host linking libdshbox meets it. */
Test(degrade, the_library_refuses_without_allow_degraded)
{
	dsh_test_require_landlock(); /* with allowDegraded the run is prepared for real */
	struct lib l;
	lib_init(&l, RULE, true);
	l.o.backend = DSH_BACKEND_LANDLOCK;
	struct dsh_run_setup s;
	struct dsh_error *err = NULL;
	cr_expect_eq(dsh_run_prepare(l.p, &l.o, &s, &err), -ENOTSUP);
	cr_assert_not_null(err);
	cr_expect(strstr(err->msg, RULE), "%s", err->msg);
	cr_expect(err->hint && strstr(err->hint, "--allow-degraded"));
	cr_expect(s.described, "the refusal keeps the description for the report");
	cr_expect_null(s.degraded);
	dsh_error_free(err);
	err = NULL;
	dsh_run_setup_clear(&s);
	l.o.allow_degraded = true;
	cr_expect_eq(dsh_run_prepare(l.p, &l.o, &s, &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(dsh_strv_len(s.degraded), 1);
	cr_expect(s.degraded && strstr(s.degraded[0], RULE));
	dsh_run_setup_clear(&s);
	lib_clear(&l);
}

/* linux-ns with runtimeBroker: off: what only the broker held is lost, so the run refuses too. */
Test(degrade, linux_ns_without_the_broker_refuses)
{
	_cleanup_free_ char *cfg = NULL;
	cr_assert(asprintf(&cfg, "%s/dshbox.yml", top) > 0);
	dsh_test_write_file(cfg, "runtimeBroker: off\nprotectDefaults: false\n");
	struct dsh_proc r;
	run(&r, NULL, "--backend", "linux-ns", "--config", cfg, "--access", "-- k.pem", NULL);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect_str_eq(r.out, "");
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "backend linux-ns cannot enforce rule \"-- k.pem\"") &&
		  strstr(r.err, "runtime broker is off"), "%s", r.err);
	cr_expect(strstr(r.err, "dshbox: hint: ") && strstr(r.err, "runtimeBroker: on"), "%s", r.err);
	dsh_proc_clear(&r);
	run(&r, NULL, "--backend", "linux-ns", "--config", cfg, "--allow-degraded", "--access", "-- k.pem", NULL);
	cr_expect_neq(r.exit_code, 125, "%s", r.err);
	cr_expect_null(strstr(r.out, KEY), "the mask no longer held");
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: warning: rule \"-- k.pem\""), 1, "%s", r.err);
	dsh_proc_clear(&r);
}

/* danger-full-access where neither backend can run: `none` enforces no rule, so it refuses too. */
Test(degrade, danger_full_access_without_a_backend_refuses_its_rules)
{
	struct dsh_proc r;
	run(&r, "userns,landlock", "--mode", "danger-full-access", "--access", "-- k.pem", NULL);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect_str_eq(r.out, "");
	cr_expect(strstr(r.err, "dshbox: error: backend none cannot enforce rule \"-- k.pem\""), "%s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: hint: "), 1, "%s", r.err);
	dsh_proc_clear(&r);
	run(&r, "userns,landlock", "--mode", "danger-full-access", "--allow-degraded", "--access", "-- k.pem", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, KEY), "the user accepted the loss: %s", r.out);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: warning: rule \"-- k.pem\""), 1, "%s", r.err);
	dsh_proc_clear(&r);
}
