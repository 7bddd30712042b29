/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Exit codes are an interface (SPEC 2, docs/serve.md): one table from an error's kind to a code. */
#include "cli/cli.h"

static const int fs_exit_codes[] = {
	[DSH_ERR_DENIED] = 1,
	[DSH_ERR_NOT_FOUND] = 2,
	[DSH_ERR_CONFLICT] = 3,
	[DSH_ERR_NOT_REGULAR] = 4,
	[DSH_ERR_TOO_LARGE] = 5,
	[DSH_ERR_INVALID] = 6,
	[DSH_ERR_SYSTEM] = 7,
	[DSH_ERR_NOT_TEXT] = 8,
	[DSH_ERR_POLICY] = DSH_EXIT_FAILURE,
	[DSH_ERR_CONFIG] = DSH_EXIT_FAILURE,
	[DSH_ERR_USAGE] = DSH_EXIT_FAILURE,
	[DSH_ERR_UNSUPPORTED] = DSH_EXIT_FAILURE,
};

int cli_fs_exit_code(enum dsh_err_kind k)
{
	return (size_t)k < sizeof(fs_exit_codes) / sizeof(fs_exit_codes[0]) ? fs_exit_codes[k] : 7;
}
