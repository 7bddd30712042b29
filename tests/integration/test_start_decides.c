/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auto without a throw-away probe (issue 14): a plain `dshbox run` lets the start of linux-ns decide,
 * and where the host refuses the namespaces (faked by esc_shim) it runs with landlock, fails with
 * both reasons where neither can enforce, exactly as the probing auto of --report does
 * (tests/integration/test_probe.c).  An explicit --backend linux-ns never falls back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
