/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "dshbox/version.h"

/* Functions, not the macros, so that the answer comes from the library the program loaded. */
const char *dsh_version(void)
{
	return DSHBOX_VERSION;
}

int dsh_abi(void)
{
	return DSHBOX_ABI;
}
