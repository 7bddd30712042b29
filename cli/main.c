/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv, char **envp);
	const char *summary;
} commands[] = {
	{ "run", cmd_run, "run a command inside the sandbox" },
	{ "check", cmd_check, "ask whether paths may be read or written" },
	{ "fs", cmd_fs, "read, write, edit or list a file through the fence" },
	{ "serve", cmd_serve, "answer file-fence requests as JSON lines on stdin/stdout" },
	{ "explain", cmd_explain, "show the effective policy and what each backend enforces" },
	{ "probe", cmd_probe, "report what this kernel can enforce" },
	{ "doctor", cmd_doctor, "check dsh host patch files for assembly mistakes" },
	{ "bwrap", cmd_bwrap, "run bubblewrap's argv, enforced by dshbox" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: dshbox COMMAND [OPTIONS] ...\n\n"
		   "A sandbox for the commands and file tools of AI-agent hosts: one policy, enforced\n"
		   "by the kernel at both entry points.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'dshbox COMMAND --help' for a command's options; see dshbox(1).\n");
}

int main(int argc, char **argv, char **envp)
{
	/* Invoked as "bwrap" (a symlink first on PATH): hosts that emit bubblewrap's argv run dshbox. */
	const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
	base = base ? base + 1 : argc > 0 && argv[0] ? argv[0] : "";
	if (strcmp(base, "bwrap") == 0)
		return cmd_bwrap(argc, argv, envp);
	/* Run again by another name with a bubblewrap option first: bubblewrap's nesting runs
	   "/proc/self/exe --ro-bind / / ..." inside the sandbox (no dshbox command starts with "--"). */
	size_t bl = strlen(base);
	if (argc >= 2 && strncmp(argv[1], "--", 2) == 0 && argv[1][2] && strcmp(argv[1], "--help") != 0 &&
	    strcmp(argv[1], "--version") != 0 && (bl < 6 || strcmp(base + bl - 6, "dshbox") != 0))
		return cmd_bwrap(argc, argv, envp);
	if (argc < 2) {
		usage(stderr);
		return cli_usage_error(NULL, "no command given");
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("dshbox %s\n", DSHBOX_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1, envp);
	return cli_usage_error(NULL, "unknown command '%s'", cmd);
}
