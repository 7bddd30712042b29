/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runtime version query (common/version.c) answers what the headers say: the test is compiled
 * against include/dshbox/version.h (through dshbox.h, as programs written before version.h
 * existed include it) and linked with the library built from the same tree.
 */
#include <criterion/criterion.h>

#include "dshbox/dshbox.h"

Test(version, runtime_matches_the_header)
{
	cr_assert_not_null(dsh_version());
	cr_expect_str_eq(dsh_version(), DSHBOX_VERSION);
	cr_expect_eq(dsh_abi(), DSHBOX_ABI);
}
