/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/cli.h"

/* Placeholder until the 'serve' subcommand lands: it refuses rather than pretending to work. */
int cmd_serve(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
	return cli_usage_error(NULL, "'serve' is not available in this build");
}
