/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * probeTimeoutMs bounds auto (issue 24): a probe that gives no answer makes auto fail closed,
 * naming the probe and the bound, instead of choosing the next (weaker) backend; and auto's linux-ns,
 * chosen without a probe because its start stands for one, is bounded the same way.  The slow probe
 * is a backend of the test's own passed to dsh_backend_select_among (the library's backends are
 * never replaceable); the assertions are on the outcome, never on the time taken.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "policy/options.h"
#include "supervisor/probe.h"
#include "supervisor/select.h"
#include "tests/lib/harness.h"

static int t_hangs(struct dsh_probe_ctx *c)
{
	(void)c;
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	for (;;)
		pause();
	return 0;
}

static int t_works(struct dsh_probe_ctx *c)
{
	(void)c;
	return 0;
}

static const struct dsh_probe_entry table[] = {
	{ "stuck call", "pause() forever, as a kernel call that never returns", "raise probeTimeoutMs", t_hangs },
	{ "works", "nothing", "none", t_works },
};

static int probe_slow(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err)
{
	(void)p;
	size_t ids[] = { 1, 0 };
	return dsh_probe_require(table, 2, "slow", ids, 2, o->probe_timeout_ms, err);
}

static int probe_fast(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err)
{
	(void)p;
	size_t ids[] = { 1 };
	return dsh_probe_require(table, 2, "fast", ids, 1, o->probe_timeout_ms, err);
}

static int no_confine(const struct dsh_policy *p, void *plan, const struct dsh_run_request *req,
		      struct dsh_run_result *ret, struct dsh_error **err)
{
	(void)p, (void)plan, (void)req, (void)ret;
	return dsh_err(err, DSH_ERR_SYSTEM, ENOTSUP, "not for running");
}

static const struct dsh_backend slow = { .name = "slow", .probe = probe_slow, .confine = no_confine };
static const struct dsh_backend fast = { .name = "fast", .probe = probe_fast, .confine = no_confine };

static void no_child_left(void)
{
	errno = 0;
	cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1, "a probe child was left behind");
	cr_expect_eq(errno, ECHILD);
}

Test(auto_bound, a_probe_past_the_bound_fails_closed)
{
	char *ws = dsh_test_mkdtemp();
	struct dsh_policy *p = dsh_test_policy(ws, NULL);
	struct dsh_run_options o = { .probe_timeout_ms = 250 };
	const struct dsh_backend *order[] = { &slow, &fast };
	const struct dsh_backend *chosen = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_expect_eq(dsh_backend_select_among(p, &o, order, 2, NULL, &chosen, &err), -ETIMEDOUT);
	cr_expect_null(chosen, "auto chose '%s' after a probe hung", chosen ? chosen->name : "");
	cr_assert_not_null(err);
	cr_expect_eq(err->kind, DSH_ERR_SYSTEM, "a kind auto's fallback would take as a refusal");
	cr_expect(strstr(err->msg, "probe 'stuck call'") && strstr(err->msg, "probeTimeoutMs"), "%s", err->msg);
	no_child_left();
	/* The same backends, the one that answers first: no false alarm.  Under a bound no loaded
	   machine misses (a probe child under -j2 beside other suites took over 250 ms in CI), so the
	   outcome does not depend on the time a fork takes. */
	const struct dsh_backend *fine[] = { &fast, &slow };
	struct dsh_run_options roomy = { .probe_timeout_ms = 60000 };
	cr_expect_eq(dsh_backend_select_among(p, &roomy, fine, 2, NULL, &chosen, NULL), 0);
	cr_expect_eq(chosen, &fast);
	dsh_policy_free(p);
	dsh_test_rmtree(ws);
	free(ws);
}

/* auto's linux-ns start with a bound no start can meet (a clone, the mounts and an exec take
   longer than a millisecond): 125, the bound named, nothing run, no fallback to landlock. */
Test(auto_bound, the_unprobed_start_is_bounded)
{
	dsh_test_require_backend();
	char *ws = dsh_test_mkdtemp();
	_cleanup_free_ char *cfg = NULL;
	cr_assert(asprintf(&cfg, "%s/bound.yml", ws) > 0);
	dsh_test_write_file(cfg, "probeTimeoutMs: 1\n");
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--workspace", ws, "--config", cfg, "--", "echo", "ran", NULL };
	char *env[] = { "PATH=/usr/bin:/bin", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 125, "%s%s", r.out, r.err);
	cr_expect(!strstr(r.out, "ran"), "the command ran: %s", r.out);
	cr_expect(strstr(r.err, "dshbox: error: ") && strstr(r.err, "probeTimeoutMs (1 ms)"), "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}
