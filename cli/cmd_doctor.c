/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/doctor.h"

static const char usage[] =
	"Usage: dshbox doctor [--row ID] PATCH.yml...\n"
	"\n"
	"Read the dsh host's patch files (cordis.patch.yml) in layer order — bundle patches, profile\n"
	"patches, home patches, overlays — and report the effective rules of the sandbox row and the\n"
	"assembly mistakes: the official 'sandbox' / 'fs-sandbox' rows not disabled, rules written but\n"
	"the row never inserted, the row inserted twice, a configuration that does not load.\n"
	"\n"
	"Exit status: 0 no mistakes, 1 mistakes found, 125 a file could not be read.\n"
	"\n"
	"  --row ID        the row that adopts dshbox (default: sandbox-local)\n"
	"  -h, --help      show this help\n";

int cmd_doctor(int argc, char **argv, char **envp)
{
	static const struct option opts[] = {
		{ "row", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *row = "sandbox-local";
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			row = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_usage_error("doctor", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("doctor", "no patch file given");

	_cleanup_error_ struct dsh_error *err = NULL;
	struct dsh_doctor d;
	if (dsh_doctor_init(&d, row, &err) < 0)
		return cli_fail(err);
	for (int i = optind; i < argc; i++) {
		if (dsh_doctor_add_file(&d, argv[i], &err) < 0) {
			dsh_doctor_clear(&d);
			return cli_fail(err);
		}
	}

	printf("layers (in order):\n");
	for (int i = optind; i < argc; i++)
		printf("  %d. %s\n", i - optind + 1, argv[i]);
	printf("\nrow '%s': ", d.row);
	if (!d.insert_origins)
		printf("never inserted\n");
	for (size_t i = 0; d.insert_origins && d.insert_origins[i]; i++)
		printf("%sinserted at %s", i ? ", " : "", d.insert_origins[i]);
	if (d.insert_origins)
		printf("%s\n", d.row_disabled ? " (disabled)" : "");
	for (int i = 0; i < 2; i++)
		printf("official row '%s': %s%s%s\n", dsh_doctor_official_rows[i],
		       d.official_disabled[i] ? "disabled" : "enabled", d.official_origin[i] ? " at " : "",
		       d.official_origin[i] ? d.official_origin[i] : "");

	printf("\neffective configuration: %s\n", d.config_origin ? d.config_origin : "(none written: defaults)");
	printf("  mode: %s\n", dsh_mode_to_string(d.config->mode));
	printf("  access:%s\n", d.config->access ? "" : " (none)");
	for (size_t i = 0; d.config->access && d.config->access[i]; i++)
		for (const char *l = d.config->access[i]; l && *l;) {
			const char *nl = strchr(l, '\n');
			int n = nl ? (int)(nl - l) : (int)strlen(l);
			if (strspn(l, " \t") < (size_t)n)
				printf("    %.*s\n", n, l);
			l = nl ? nl + 1 : NULL;
		}

	if (d.config->runner_command) {
		printf("  runnerCommand:");
		for (size_t i = 0; d.config->runner_command[i]; i++)
			printf(" %s", d.config->runner_command[i]);
		printf("\n  runnerFailureSignatures: %zu\n", dsh_strv_len(d.config->runner_failure_signatures));
	}

	_cleanup_strv_ char **findings = dsh_doctor_findings(&d);
	/* The row's configuration as `run` reads it: the run options too (a runner without its failure
	   signatures loads as rules but fails every run).  The dsh services run commands through
	   runnerCommand when it is set: backend runner. */
	if (!d.config_error) {
		struct dsh_run_options ro;
		_cleanup_error_ struct dsh_error *oerr = NULL;
		if (d.config->runner_command && d.config->backend == DSH_BACKEND_AUTO)
			d.config->backend = DSH_BACKEND_RUNNER;
		if (dsh_run_options_init(&ro, d.config, envp, &oerr) < 0)
			dsh_strv_pushf(&findings, "the effective configuration does not load as a run reads it: %s", oerr->msg);
		else
			dsh_run_options_clear(&ro);
	}
	/* The rules are also compiled here, in this environment, as the host would at load time. */
	if (!d.config_error && d.config->access) {
		char cwd[PATH_MAX];
		struct dsh_policy *p = NULL;
		_cleanup_error_ struct dsh_error *perr = NULL;
		if (getcwd(cwd, sizeof(cwd)) && dsh_policy_new(d.config, envp, cwd, &p, &perr) < 0)
			dsh_strv_pushf(&findings, "the effective rules do not load here: %s", perr->msg);
		for (size_t i = 0; p && dsh_policy_warnings(p)[i]; i++)
			printf("  warning: %s\n", dsh_policy_warnings(p)[i]);
		dsh_policy_free(p);
	}
	for (size_t i = 0; d.notes && d.notes[i]; i++)
		printf("note: %s\n", d.notes[i]);
	printf("\nproblems:%s\n", findings ? "" : " none");
	for (size_t i = 0; findings && findings[i]; i++)
		printf("  - %s\n", findings[i]);
	dsh_doctor_clear(&d);
	return findings ? DSH_EXIT_DENIED : DSH_EXIT_OK;
}
