/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One probe table (issue 9): `dshbox probe --json` and `dshbox run` with --backend auto decide with
 * the same probes and the same selection code, so they name the same backend on this host and on
 * hosts faked by esc_shim.  And every probe is bounded: a probe that hangs is killed at
 * probeTimeoutMs and named in the error (a test-only table passed to dsh_probe_run_entries; the
 * library's own table is never mutable).
 */
#include <errno.h>
#include <jansson.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "supervisor/probe.h"
#include "tests/lib/harness.h"

/* ---- dshbox probe and dshbox run agree ---- */

static json_t *run_json(const char *shim_modes, const char *sub, char *const *extra, struct dsh_proc *r)
{
	const char *argv[40];
	size_t n = 0;
	_cleanup_free_ char *shim = dsh_test_helper("esc_shim");
	char *ws = dsh_test_mkdtemp();
	if (shim_modes) {
		argv[n++] = shim;
		argv[n++] = shim_modes;
		argv[n++] = "--";
	}
	argv[n++] = dsh_test_dshbox();
	argv[n++] = sub;
	argv[n++] = "--workspace";
	argv[n++] = ws;
	argv[n++] = "--cwd";
	argv[n++] = ws;
	if (strcmp(sub, "probe") == 0)
		argv[n++] = "--json";
	else {
		argv[n++] = "--report";
		argv[n++] = "-";
	}
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	if (strcmp(sub, "run") == 0) {
		argv[n++] = "--";
		argv[n++] = "true";
	}
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run((char *const *)argv, NULL, NULL, r), 0);
	cr_log_info("%s %s: exit %d\n%s%s", shim_modes ? shim_modes : "-", sub, r->exit_code, r->out, r->err);
	dsh_test_rmtree(ws);
	free(ws);
	return r->out[0] ? json_loads(r->out, 0, NULL) : NULL;
}

/* The backend auto chose: from probe's "auto", from run's report; NULL when none could enforce. */
static void agree(const char *shim_modes, char *const *extra, const char *want)
{
	struct dsh_proc p, r;
	json_t *po = run_json(shim_modes, "probe", extra, &p);
	cr_assert_not_null(po, "probe --json printed no JSON: %s%s", p.out, p.err);
	const char *from_probe = json_string_value(json_object_get(po, "auto"));
	json_t *ro = run_json(shim_modes, "run", extra, &r);
	const char *from_run = ro ? json_string_value(json_object_get(ro, "backend")) : NULL;
	if (!from_probe) {
		cr_expect_null(from_run, "probe says no backend, run chose %s", from_run);
		cr_expect_eq(r.exit_code, 125, "run without a backend: exit %d", r.exit_code);
		cr_expect(strstr(r.err, "no backend can enforce"), "%s", r.err);
	} else {
		cr_expect_eq(r.exit_code, 0, "%s", r.err);
		cr_assert_not_null(from_run, "run --report - printed no report: %s%s", r.out, r.err);
		cr_expect_str_eq(from_probe, from_run, "dshbox probe and dshbox run disagree");
	}
	if (want)
		cr_expect(from_probe && strcmp(from_probe, want) == 0, "auto is %s, expected %s", from_probe, want);
	else
		cr_expect_null(from_probe, "auto is %s, expected none", from_probe);
	json_decref(po);
	json_decref(ro);
	dsh_proc_clear(&p);
	dsh_proc_clear(&r);
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

Test(probe_agree, on_this_host)
{
	agree(NULL, NULL, host_has_linux_ns() ? "linux-ns" : host_has_landlock() ? "landlock" : NULL);
}

Test(probe_agree, on_this_host_network_off)
{
	char *extra[] = { "--network", "off", NULL };
	agree(NULL, extra, host_has_linux_ns() ? "linux-ns" : host_has_landlock() ? "landlock" : NULL);
}

Test(probe_agree, without_user_namespaces)
{
	if (!host_has_landlock())
		DSH_SKIP("no Landlock here: the fallback cannot be shown");
	agree("userns", NULL, "landlock");
}

/* network: off needs a network namespace from linux-ns: refused, auto must not pick linux-ns. */
Test(probe_agree, without_network_namespaces_network_off)
{
	if (!host_has_landlock())
		DSH_SKIP("no Landlock here: the fallback cannot be shown");
	char *extra[] = { "--network", "off", NULL };
	agree("netns", extra, "landlock");
}

/* With the network on, no network namespace is made: linux-ns still serves. */
Test(probe_agree, without_network_namespaces_network_on)
{
	if (!host_has_linux_ns())
		DSH_SKIP("linux-ns is unavailable here (see dshbox probe)");
	char *extra[] = { "--network", "on", NULL };
	agree("netns", extra, "linux-ns");
}

Test(probe_agree, nothing_can_enforce)
{
	agree("userns,landlock", NULL, NULL);
}

Test(probe_agree, danger_full_access_needs_no_backend)
{
	char *extra[] = { "--mode", "danger-full-access", NULL };
	agree(NULL, extra, "none");
}

/* ---- every probe is bounded by probeTimeoutMs ---- */

static int t_works(struct dsh_probe_ctx *c)
{
	c->value = 42;
	return 0;
}

static int t_hangs(struct dsh_probe_ctx *c)
{
	(void)c;
	/* Blocks every catchable signal too: only SIGKILL may end it, as with a stuck kernel call. */
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	for (;;)
		pause();
	return 0;
}

static int t_refused(struct dsh_probe_ctx *c)
{
	errno = EPERM;
	return dsh_probe_fail(c, "t_refused(step)");
}

static int t_dies(struct dsh_probe_ctx *c)
{
	(void)c;
	/* SIGKILL: no handler can turn it into an exit (a sanitizer catches SIGSEGV and exits 1). */
	raise(SIGKILL);
	return 0;
}

enum { T_WORKS, T_HANGS, T_REFUSED, T_DIES };
static const struct dsh_probe_entry test_table[] = {
	[T_WORKS] = { "works", "nothing", "none needed", t_works },
	[T_HANGS] = { "hangs", "pause() forever", "raise probeTimeoutMs", t_hangs },
	[T_REFUSED] = { "refused", "fails with EPERM", "allow it", t_refused },
	[T_DIES] = { "dies", "raises SIGKILL", "fix it", t_dies },
};

static long long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000LL + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void no_child_left(void)
{
	errno = 0;
	cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1, "a probe child was left behind");
	cr_expect_eq(errno, ECHILD);
}

Test(probe_bound, a_hanging_probe_is_killed_at_the_deadline)
{
	size_t ids[] = { T_WORKS, T_HANGS, T_WORKS };
	struct dsh_probe_result r;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_expect_eq(dsh_probe_run_entries(test_table, ARRAY_SIZE(test_table), ids, ARRAY_SIZE(ids), 300, &r), -ETIMEDOUT);
	long long took = ms_since(&t0);
	cr_expect_geq(took, 300, "returned before the deadline: %lld ms", took);
	cr_expect_lt(took, 2300, "not cut off at probeTimeoutMs (300 ms): %lld ms", took);
	cr_expect_not(r.ok);
	cr_expect_eq(r.code, ETIMEDOUT);
	cr_expect_eq((int)r.id, T_HANGS, "the error names the entry that hung, not the one before");
	cr_expect_str_eq(r.step, "no answer within probeTimeoutMs (300 ms)");
	cr_expect_str_eq(r.remedy, "raise probeTimeoutMs");
	no_child_left();
}

/* Without pidfd_open (a runtime that filters it): the deadline is kept by the pipe's hang-up.  Each
   Criterion test is its own process, so this one may install a seccomp filter on itself. */
Test(probe_bound, the_deadline_holds_without_pidfd)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	cr_assert_not_null(ctx);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(pidfd_open), 0), 0);
	cr_assert_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
	size_t ids[] = { T_WORKS, T_HANGS };
	struct dsh_probe_result r;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_expect_eq(dsh_probe_run_entries(test_table, ARRAY_SIZE(test_table), ids, ARRAY_SIZE(ids), 300, &r), -ETIMEDOUT);
	long long took = ms_since(&t0);
	cr_expect(took >= 300 && took < 2300, "not cut off at probeTimeoutMs (300 ms): %lld ms", took);
	cr_expect_eq((int)r.id, T_HANGS);
	no_child_left();
	size_t ok[] = { T_WORKS };
	cr_expect_eq(dsh_probe_run_entries(test_table, ARRAY_SIZE(test_table), ok, 1, 5000, &r), 0);
	cr_expect_eq(r.value, 42);
	no_child_left();
}

Test(probe_bound, the_backend_error_names_the_hanging_probe)
{
	size_t ids[] = { T_WORKS, T_HANGS };
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_expect_eq(dsh_probe_require(test_table, ARRAY_SIZE(test_table), "test", ids, ARRAY_SIZE(ids), 200, &err),
		     -ETIMEDOUT);
	cr_assert_not_null(err);
	cr_expect_str_eq(err->msg, "backend 'test': probe 'hangs' gave no answer within probeTimeoutMs (200 ms) and was killed");
	cr_expect_not_null(err->hint);
	no_child_left();
}

Test(probe_bound, entries_run_in_order_and_stop_at_the_first_failure)
{
	/* T_HANGS after the failure never runs: the answer comes long before the deadline. */
	size_t ids[] = { T_WORKS, T_REFUSED, T_HANGS };
	struct dsh_probe_result r;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_expect_eq(dsh_probe_run_entries(test_table, ARRAY_SIZE(test_table), ids, ARRAY_SIZE(ids), 10000, &r), -EPERM);
	cr_expect_lt(ms_since(&t0), 5000);
	cr_expect_eq((int)r.id, T_REFUSED);
	cr_expect_str_eq(r.step, "t_refused(step)");
	cr_expect_str_eq(r.remedy, "allow it");
	no_child_left();

	size_t ok[] = { T_WORKS, T_WORKS };
	cr_expect_eq(dsh_probe_run_entries(test_table, ARRAY_SIZE(test_table), ok, ARRAY_SIZE(ok), 5000, &r), 0);
	cr_expect(r.ok);
	cr_expect_eq(r.value, 42);
	no_child_left();
}

Test(probe_bound, a_probe_that_dies_fails)
{
	size_t ids[] = { T_DIES };
	struct dsh_probe_result r;
	cr_expect_eq(dsh_probe_run_entries(test_table, ARRAY_SIZE(test_table), ids, 1, 5000, &r), -ECHILD);
	cr_expect_eq((int)r.id, T_DIES);
	cr_expect(strstr(r.step, "signal 9"), "%s", r.step);
	no_child_left();
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_expect_eq(dsh_probe_require(test_table, ARRAY_SIZE(test_table), "test", ids, 1, 5000, &err), -ECHILD);
	cr_assert_not_null(err);
	cr_expect_str_eq(err->msg, "backend 'test': probe 'dies' failed: the probe child died of signal 9");
	no_child_left();
}

Test(probe_bound, bad_requests_are_refused)
{
	size_t ids[] = { 99 };
	struct dsh_probe_result r;
	cr_expect_eq(dsh_probe_run_entries(test_table, ARRAY_SIZE(test_table), ids, 1, 5000, &r), -EINVAL);
	size_t one[] = { T_WORKS };
	cr_expect_eq(dsh_probe_run_entries(test_table, ARRAY_SIZE(test_table), one, 1, 0, &r), -EINVAL);
	cr_expect_eq(dsh_probe_run_entries(test_table, ARRAY_SIZE(test_table), one, 0, 5000, &r), -EINVAL);
}

/* The real table: each entry has a name and says what it checks; the public API reads the same. */
Test(probe_bound, the_table_names_each_entry)
{
	for (int i = 0; i < DSH_PROBE__MAX; i++) {
		cr_expect_neq(strcmp(dsh_probe_name((enum dsh_probe_id)i), "?"), 0, "entry %d has no name", i);
		cr_expect_gt(strlen(dsh_probe_checks((enum dsh_probe_id)i)), 5, "entry %d does not say what it checks", i);
	}
	cr_expect_str_eq(dsh_probe_name(DSH_PROBE__MAX), "?");
}
