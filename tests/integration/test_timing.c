/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The timing view (issue 14): `dshbox run --timing` or DSHBOX_TIMING=1 prints one
 * `dshbox: timing: STAGE USEC` line on stderr for every stage of the start and the end, each stage
 * of the stage table (supervisor/stages.c) among them exactly once, in order; without the switch a
 * run prints nothing of dshbox's own, and the command's output is untouched either way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"
#include "supervisor/probe.h"
#include "supervisor/sandbox.h"
#include "tests/lib/harness.h"

static char *env_on[] = { "PATH=/usr/bin:/bin", "DSHBOX_TIMING=1", NULL };
static char *env_zero[] = { "PATH=/usr/bin:/bin", "DSHBOX_TIMING=0", NULL };
static char *env_off[] = { "PATH=/usr/bin:/bin", NULL };

static void run(struct dsh_proc *r, char **env, const char *ws, const char *backend, bool flag)
{
	char **argv = NULL;
	dsh_strv_push(&argv, dsh_test_dshbox());
	dsh_strv_push(&argv, "run");
	dsh_strv_push(&argv, "--workspace");
	dsh_strv_push(&argv, ws);
	dsh_strv_push(&argv, "--backend");
	dsh_strv_push(&argv, backend);
	if (flag)
		dsh_strv_push(&argv, "--timing");
	dsh_strv_push(&argv, "--");
	dsh_strv_push(&argv, "echo");
	dsh_strv_push(&argv, "out");
	cr_assert_eq(dsh_proc_run(argv, env, NULL, r), 0);
	dsh_strv_free(argv);
	cr_log_info("exit %d\n%s", r->exit_code, r->err);
}

/* How many lines are exactly `dshbox: timing: STAGE N` (N digits); every other line fails. */
static int count_stage(const char *err, const char *stage)
{
	int n = 0;
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "dshbox: timing: %s ", stage);
	for (const char *l = err; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (len > strlen(prefix) && strncmp(l, prefix, strlen(prefix)) == 0 &&
		    strspn(l + strlen(prefix), "0123456789") == len - strlen(prefix))
			n++;
		l = nl ? nl + 1 : l + len;
	}
	return n;
}

static void expect_well_formed(const char *err)
{
	int lines = 0;
	for (const char *l = err; *l;) {
		const char *nl = strchr(l, '\n');
		cr_assert_not_null(nl, "an unterminated line: %s", l);
		cr_expect(strncmp(l, "dshbox: timing: ", 16) == 0, "not a timing line: %.*s", (int)(nl - l), l);
		const char *sp = nl;
		while (sp > l && sp[-1] != ' ')
			sp--;
		cr_expect(sp < nl && strspn(sp, "0123456789") == (size_t)(nl - sp), "no microseconds: %.*s",
			  (int)(nl - l), l);
		lines++;
		l = nl + 1;
	}
	cr_expect_gt(lines, 0, "no timing line at all");
}

static bool host_has_linux_ns(void)
{
	struct dsh_probe_result r;
	return dsh_probe_run(DSH_PROBE_USERNS, 5000, &r) == 0 && dsh_probe_run(DSH_PROBE_MOUNT_API, 5000, &r) == 0;
}

static bool host_has_landlock(void)
{
	struct dsh_probe_result r;
	return dsh_probe_run(DSH_PROBE_LANDLOCK, 5000, &r) == 0 && dsh_probe_run(DSH_PROBE_SECCOMP, 5000, &r) == 0;
}

/* The frame around the stage table: the start in dshbox, the clones, the command's run, the end. */
static const char *const frame[] = { "start", "policy", "select", "compile", "prepare", "clone",
				     "init", "fork", "command", "cleanup" };

static void expect_every_stage(const char *err, bool with_ns)
{
	expect_well_formed(err);
	for (const struct dsh_stage *s = dsh_stages; s->name; s++) {
		int want = s->needs_ns && !with_ns ? 0 : 1;
		cr_expect_eq(count_stage(err, s->name), want, "stage '%s': %d lines, expected %d:\n%s", s->name,
			     count_stage(err, s->name), want, err);
	}
	for (size_t i = 0; i < sizeof(frame) / sizeof(frame[0]); i++)
		cr_expect_eq(count_stage(err, frame[i]), 1, "'%s': %d lines:\n%s", frame[i], count_stage(err, frame[i]),
			     err);
	/* In the order they ran: the table's stages follow one another as the table lists them. */
	const char *prev = err;
	for (const struct dsh_stage *s = dsh_stages; s->name; s++) {
		if (s->needs_ns && !with_ns)
			continue;
		char needle[64];
		snprintf(needle, sizeof(needle), "dshbox: timing: %s ", s->name);
		const char *at = strstr(err, needle);
		cr_expect(at && at >= prev, "stage '%s' out of order:\n%s", s->name, err);
		if (at)
			prev = at;
	}
}

Test(timing, the_flag_prints_every_stage_once)
{
	if (!host_has_linux_ns())
		DSH_SKIP("linux-ns is unavailable here (see dshbox probe)");
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run(&r, env_off, ws, "linux-ns", true);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "out\n", "the command's output is its own");
	expect_every_stage(r.err, true);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(timing, the_environment_switch_prints_every_stage_once)
{
	if (!host_has_linux_ns())
		DSH_SKIP("linux-ns is unavailable here (see dshbox probe)");
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run(&r, env_on, ws, "linux-ns", false);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "out\n");
	expect_every_stage(r.err, true);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(timing, the_landlock_backend_prints_the_stages_it_runs)
{
	if (!host_has_landlock())
		DSH_SKIP("no Landlock here (see dshbox probe)");
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run(&r, env_off, ws, "landlock", true);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "out\n");
	expect_every_stage(r.err, false);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(timing, nothing_is_printed_without_the_switch)
{
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run(&r, env_off, ws, "auto", false);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "out\n");
	cr_expect_str_eq(r.err, "", "a run without --timing prints nothing of dshbox's own");
	dsh_proc_clear(&r);
	run(&r, env_zero, ws, "auto", false);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.err, "", "DSHBOX_TIMING=0 is off");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(timing, bad_input_is_still_one_error_line)
{
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--timing", "--access", "rw: ", "--", "true", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, env_off, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect_null(strstr(r.err, "dshbox: timing:"), "%s", r.err);
	dsh_proc_clear(&r);
}
