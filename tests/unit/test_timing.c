/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The timing view's ledger (common/timing.c): each stage runs from the end of the previous one, so
 * the stages add up to the run; a clock read in another process a hair earlier counts as 0, never
 * negative; a full ledger and a NULL one take nothing.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "dshbox/dshbox.h"

Test(timing, stages_add_up_to_the_run)
{
	struct dsh_timing t = { .last_ns = 1000000 };
	dsh_timing_mark(&t, "policy", 1250000);
	dsh_timing_mark(&t, "id maps", 1300000);
	dsh_timing_mark(&t, "a stage name far longer than the ledger keeps", 2300000);
	cr_assert_eq(t.n, 3);
	cr_expect_str_eq(t.e[0].stage, "policy");
	cr_expect_eq(t.e[0].usec, 250);
	cr_expect_str_eq(t.e[1].stage, "id maps");
	cr_expect_eq(t.e[1].usec, 50);
	cr_expect_eq(t.e[2].usec, 1000);
	cr_expect_eq(strlen(t.e[2].stage), sizeof(t.e[2].stage) - 1, "cut, still terminated");
	cr_expect_eq(t.last_ns, 2300000);
}

Test(timing, an_earlier_clock_counts_as_zero)
{
	struct dsh_timing t = { .last_ns = 5000000 };
	dsh_timing_mark(&t, "exec", 4999000);
	cr_assert_eq(t.n, 1);
	cr_expect_eq(t.e[0].usec, 0);
	cr_expect_eq(t.last_ns, 5000000, "the end never moves back");
	dsh_timing_mark(&t, "command", 5002000);
	cr_expect_eq(t.e[1].usec, 2);
}

Test(timing, full_or_null_takes_nothing)
{
	struct dsh_timing t = { 0 };
	for (int i = 0; i < DSH_TIMING_MAX + 5; i++)
		dsh_timing_mark(&t, "x", (long long)(i + 1) * 1000);
	cr_expect_eq(t.n, DSH_TIMING_MAX);
	dsh_timing_mark(NULL, "x", 1);
	cr_expect_gt(dsh_timing_now(), 0);
}
