/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auto without a throw-away probe (issue 14): a plain `dshbox run` lets the start of linux-ns decide,
 * and where the host refuses the namespaces (faked by esc_shim) it runs with landlock, fails with
 * both reasons where neither can enforce, exactly as the probing auto of --report does
 * (tests/integration/test_probe.c).  An explicit --backend linux-ns never falls back.  A run with
 * --report into a regular file lets the start decide too, and the report names the backend that ran
 * (written again after a fall back, before the command); into stdout, or on --report-fd's
 * descriptor, which cannot be taken back, auto probes first and never falls back.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "supervisor/probe.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/bin:/bin", NULL };

static void run(struct dsh_proc *r, const char *shim_modes, const char *ws, char *const *extra)
{
	char **argv = NULL;
	char *shim = dsh_test_helper("esc_shim");
	if (shim_modes) {
		dsh_strv_push(&argv, shim);
		dsh_strv_push(&argv, shim_modes);
		dsh_strv_push(&argv, "--");
	}
	dsh_strv_push(&argv, dsh_test_dshbox());
	dsh_strv_push(&argv, "run");
	dsh_strv_push(&argv, "--timing");
	dsh_strv_push(&argv, "--workspace");
	dsh_strv_push(&argv, ws);
	for (size_t i = 0; extra && extra[i]; i++)
		dsh_strv_push(&argv, extra[i]);
	dsh_strv_push(&argv, "--");
	dsh_strv_push(&argv, "echo");
	dsh_strv_push(&argv, "ran");
	cr_assert_eq(dsh_proc_run(argv, env, NULL, r), 0);
	cr_log_info("%s: exit %d\n%s%s", shim_modes ? shim_modes : "-", r->exit_code, r->out, r->err);
	dsh_strv_free(argv);
	free(shim);
}

static bool host_has_linux_ns(void)
{
	struct dsh_probe_result r;
	return dsh_probe_run(DSH_PROBE_USERNS, 5000, &r) == 0 && dsh_probe_run(DSH_PROBE_MOUNT_API, 5000, &r) == 0 &&
	       dsh_probe_run(DSH_PROBE_NETNS_LOOPBACK, 5000, &r) == 0;
}

static bool host_has_landlock(void)
{
	struct dsh_probe_result r;
	return dsh_probe_run(DSH_PROBE_LANDLOCK, 5000, &r) == 0 && dsh_probe_run(DSH_PROBE_SECCOMP, 5000, &r) == 0;
}

/* The timing view says which backend ran: only linux-ns has an 'id maps' stage. */
static bool ran_linux_ns(const char *err)
{
	const char *fb = strstr(err, "dshbox: timing: fall back ");
	return strstr(fb ? fb : err, "dshbox: timing: id maps ") != NULL;
}

Test(start_decides, linux_ns_runs_unprobed_where_it_can)
{
	if (!host_has_linux_ns())
		DSH_SKIP("linux-ns is unavailable here (see dshbox probe)");
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run(&r, NULL, ws, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "ran\n");
	cr_expect(ran_linux_ns(r.err), "%s", r.err);
	cr_expect_null(strstr(r.err, "fall back"), "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(start_decides, without_user_namespaces_landlock_runs)
{
	if (!host_has_landlock())
		DSH_SKIP("no Landlock here: the fallback cannot be shown");
	const char *modes[] = { "userns", "userns-nosys" };
	for (size_t i = 0; i < 2; i++) {
		char *ws = dsh_test_mkdtemp();
		struct dsh_proc r;
		run(&r, modes[i], ws, NULL);
		cr_expect_eq(r.exit_code, 0, "%s: %s", modes[i], r.err);
		cr_expect_str_eq(r.out, "ran\n", "%s", modes[i]);
		cr_expect_null(strstr(r.err, "dshbox: error"), "%s: %s", modes[i], r.err);
		cr_expect(strstr(r.err, "dshbox: timing: fall back "), "%s: %s", modes[i], r.err);
		cr_expect(!ran_linux_ns(r.err), "%s: %s", modes[i], r.err);
		dsh_proc_clear(&r);
		dsh_test_rmtree(ws);
		free(ws);
	}
}

Test(start_decides, network_off_without_network_namespaces_runs_landlock)
{
	if (!host_has_landlock())
		DSH_SKIP("no Landlock here: the fallback cannot be shown");
	char *ws = dsh_test_mkdtemp();
	char *extra[] = { "--network", "off", NULL };
	struct dsh_proc r;
	run(&r, "netns", ws, extra);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "ran\n");
	cr_expect(!ran_linux_ns(r.err), "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(start_decides, nothing_can_enforce_names_both_and_runs_nothing)
{
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run(&r, "userns,landlock", ws, NULL);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect_str_eq(r.out, "", "the command did not run");
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "dshbox: error: no backend can enforce this policy here: backend 'linux-ns': "), "%s",
		  r.err);
	cr_expect(strstr(r.err, "backend 'landlock'"), "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(start_decides, an_explicit_linux_ns_never_falls_back)
{
	char *ws = dsh_test_mkdtemp();
	char *extra[] = { "--backend", "linux-ns", NULL };
	struct dsh_proc r;
	run(&r, "userns", ws, extra);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect_str_eq(r.out, "");
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "clone(CLONE_NEWUSER"), "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

/* The report's backend; NULL unless text is one JSON object and nothing after it (a report written
   twice, or over an older one, is not). */
static char *backend_of(const char *text, size_t flags)
{
	json_error_t e;
	json_t *j = text ? json_loads(text, flags, &e) : NULL;
	const char *b = j ? json_string_value(json_object_get(j, "backend")) : NULL;
	char *ret = b ? strdup(b) : NULL;
	json_decref(j);
	return ret;
}

Test(start_decides, a_report_in_a_file_names_the_backend_that_ran)
{
	if (!host_has_landlock())
		DSH_SKIP("no Landlock here: the fallback cannot be shown");
	char *ws = dsh_test_mkdtemp();
	_cleanup_free_ char *file = NULL;
	cr_assert(asprintf(&file, "%s.report.json", ws) > 0);
	char *extra[] = { "--report", file, NULL };
	struct dsh_proc r;
	/* The host refuses the namespaces: the start, not a probe, finds it out, and the report that
	   named linux-ns is written again for landlock before the command runs. */
	run(&r, "userns", ws, extra);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "ran\n");
	cr_expect(strstr(r.err, "dshbox: timing: fall back "), "the start decided, no probe first: %s", r.err);
	_cleanup_free_ char *text = dsh_test_read_file(file), *backend = backend_of(text, 0);
	cr_expect_str_eq(backend ? backend : "(no single report)", "landlock", "%s", text ? text : "(none)");
	dsh_proc_clear(&r);
	if (host_has_linux_ns()) {
		run(&r, NULL, ws, extra);
		cr_expect_eq(r.exit_code, 0, "%s", r.err);
		cr_expect(ran_linux_ns(r.err) && !strstr(r.err, "fall back"), "%s", r.err);
		_cleanup_free_ char *t2 = dsh_test_read_file(file), *b2 = backend_of(t2, 0);
		cr_expect_str_eq(b2 ? b2 : "(no single report)", "linux-ns", "%s", t2 ? t2 : "(none)");
		dsh_proc_clear(&r);
	}
	unlink(file);
	dsh_test_rmtree(ws);
	free(ws);
}

/* --report-fd's descriptor is closed before the sandbox starts, and a pipe cannot take a report
   back: auto probes first.  how: the report's options and redirections for the shell, %s the file. */
static void report_fd(const char *how)
{
	char *ws = dsh_test_mkdtemp();
	_cleanup_free_ char *file = NULL, *script = NULL, *shim = dsh_test_helper("esc_shim");
	cr_assert(asprintf(&file, "%s.report.json", ws) > 0);
	dsh_test_write_file(file, "");
	_cleanup_free_ char *redirect = NULL;
	cr_assert(asprintf(&redirect, how, file) > 0);
	cr_assert(asprintf(&script, "'%s' userns -- '%s' run --timing --workspace '%s' %s", shim, dsh_test_dshbox(), ws,
			   redirect) > 0);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
	cr_log_info("%s: exit %d\n%s%s", redirect, r.exit_code, r.out, r.err);
	cr_expect_eq(r.exit_code, 0, "%s: %s", redirect, r.err);
	cr_expect_null(strstr(r.err, "fall back"), "%s: auto probed first: %s", redirect, r.err);
	_cleanup_free_ char *text = dsh_test_read_file(file), *backend = backend_of(text, 0);
	cr_expect_str_eq(backend ? backend : "(no single report)", "landlock", "%s: %s", redirect, text ? text : "(none)");
	dsh_proc_clear(&r);
	unlink(file);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(start_decides, a_report_on_a_descriptor_or_a_pipe_keeps_the_probe)
{
	if (!host_has_landlock())
		DSH_SKIP("no Landlock here: the fallback cannot be shown");
	report_fd("--report-fd 3 -- true 3>'%s'");
	report_fd("--report /dev/fd/3 -- true 3>&1 >/dev/null | cat >'%s'");
}

Test(start_decides, a_report_on_stdout_keeps_the_probe)
{
	if (!host_has_landlock())
		DSH_SKIP("no Landlock here: the fallback cannot be shown");
	char *ws = dsh_test_mkdtemp();
	char *extra[] = { "--report", "-", NULL };
	struct dsh_proc r;
	run(&r, "userns", ws, extra);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_null(strstr(r.err, "fall back"), "stdout cannot take a report back: auto probed first: %s", r.err);
	/* The report, then the command's own output. */
	cr_expect(strstr(r.out, "}\nran\n"), "%s", r.out);
	_cleanup_free_ char *backend = backend_of(r.out, JSON_DISABLE_EOF_CHECK);
	cr_expect_str_eq(backend ? backend : "(no report)", "landlock", "%s", r.out);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}
