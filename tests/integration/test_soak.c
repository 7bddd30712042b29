/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make soak, small (issue 38): the soak host (tests/soak/soak_host.c) makes 200 dsh_run() calls
 * from two threads, every way a run can end, and must end holding what it held after its warm-up:
 * descriptors, mounts, threads, memory within its bounds, no child and nothing a command started.
 * A few seconds here; `make soak` makes 10,000.  Run as its own process, so that the figures are a
 * plain host's, not the test runner's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/harness.h"

Test(soak, two_threads_200_runs_leave_nothing_behind, .timeout = 300)
{
	dsh_test_require_backend();
	const char *no_skip = getenv("DSHBOX_TEST_NO_SKIP");
	char ns[64];
	snprintf(ns, sizeof(ns), "DSHBOX_TEST_NO_SKIP=%s", no_skip ? no_skip : "0");
	char *argv[] = { DSH_BUILD "/soak/soak_host", NULL };
	char *env[] = { "SOAK_RUNS=200", "PATH=/usr/bin:/bin", "HOME=/nonexistent", ns, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0, "%s could not start", argv[0]);
	fprintf(stderr, "%s", r.out);
	if (r.exit_code == 77)
		DSH_SKIP("%s", r.err);
	cr_expect_eq(r.exit_code, 0, "the soak host failed (exit %d, signal %d):\n%s%s", r.exit_code, r.signal, r.err,
		     r.out);
	cr_expect(strstr(r.out, "soak: 200 runs") && strstr(r.out, ": ok\n"), "its summary line: %s", r.out);
	dsh_proc_clear(&r);
}
