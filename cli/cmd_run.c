/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/backend.h"

static void help(void)
{
	printf("Usage: dshbox run [POLICY OPTIONS] [--dry-run] [--report FILE|-] [--preserve-fd N] -- CMD [ARG...]\n\n"
	       "Run CMD confined by the kernel: the policy's read-only, writable and masked paths hold for CMD\n"
	       "and every process it starts.\n\n"
	       "Run options:\n"
	       "  --dry-run            print the backend's plan (the mount plan for linux-ns) and exit\n"
	       "  --report FILE|-      write a JSON report: backend, enforcement, how each rule is enforced\n"
	       "  --preserve-fd N      keep descriptor N (above 2) open in CMD (repeatable)\n"
	       "  -h, --help           show this help\n\n"
	       CLI_POLICY_HELP
	       "\nExit status: CMD's own (a death by signal N is reproduced, or 128+N); 125 dshbox failed and\n"
	       "CMD did not run; 126 CMD could not be executed; 127 CMD was not found.\n");
}

enum { OPT_DRY_RUN = 1, OPT_REPORT, OPT_PRESERVE_FD };

static int write_report(const char *dest, const char *json)
{
	if (strcmp(dest, "-") == 0) {
		printf("%s\n", json);
		fflush(stdout);
		return 0;
	}
	FILE *f = fopen(dest, "we");
	if (!f || fprintf(f, "%s\n", json) < 0 || fclose(f) != 0) {
		int e = errno;
		struct dsh_error *err = NULL;
		dsh_err_sys(&err, e, "--report '%s'", dest);
		int r = cli_fail(err);
		dsh_error_free(err);
		return r;
	}
	return 0;
}

/* Die of the command's signal, core dumps disabled; 128+N where that cannot be done. */
static int reproduce_signal(int sig)
{
	struct rlimit nocore = { 0, 0 };
	setrlimit(RLIMIT_CORE, &nocore);
	fflush(NULL);
	signal(sig, SIG_DFL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);
	return 128 + sig;
}

int cmd_run(int argc, char **argv, char **envp)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "preserve-fd", required_argument, NULL, OPT_PRESERVE_FD },
		CLI_POLICY_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli_policy_opts po = { 0 };
	bool dry_run = false;
	const char *report = NULL;
	_cleanup_free_ int *keep = NULL;
	size_t n_keep = 0;
	int rc = 0, opt;
	struct dsh_config config;
	struct dsh_policy *policy = NULL;
	struct dsh_run_options ro;
	_cleanup_error_ struct dsh_error *err = NULL;
	struct dsh_run_setup setup = { 0 };
	const struct dsh_backend *b;
	void *plan;
	char **cmd = NULL;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			cli_policy_opts_clear(&po);
			return 0;
		case OPT_DRY_RUN:
			dry_run = true;
			break;
		case OPT_REPORT:
			report = optarg;
			break;
		case OPT_PRESERVE_FD: {
			char *end = NULL;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || !end || *end || v < 3 || v > INT_MAX) {
				rc = cli_usage_error("run", "--preserve-fd: expected a descriptor number above 2, got '%s'", optarg);
				goto out;
			}
			int *k = realloc(keep, (n_keep + 1) * sizeof(*k));
			if (!k) {
				rc = cli_usage_error("run", "out of memory");
				goto out;
			}
			keep = k;
			keep[n_keep++] = (int)v;
			break;
		}
		case '?':
			rc = cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
			goto out;
		case ':':
			rc = cli_usage_error("run", "option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			if (opt >= CLI_OPT_POLICY_BASE && opt < CLI_OPT_POLICY_END) {
				if ((rc = cli_policy_option(&po, opt, optarg, "run")) != 0)
					goto out;
				break;
			}
			rc = cli_usage_error("run", "unknown option");
			goto out;
		}
	}
	cmd = argv + optind;
	if (!dry_run && !cmd[0]) {
		rc = cli_usage_error("run", "no command given (dshbox run [OPTIONS] -- CMD [ARG...])");
		goto out;
	}
	for (size_t i = 0; i < n_keep; i++)
		if (fcntl(keep[i], F_GETFD) < 0) {
			rc = cli_usage_error("run", "--preserve-fd %d: not an open descriptor", keep[i]);
			goto out;
		}

	if ((rc = cli_policy_load(&po, envp, &config, &policy, &ro)) != 0)
		goto out_policy;
	cli_policy_print_warnings(&po, policy);

	/* The library decides (SPEC 4): backend, plan, what it enforces, and whether a lost rule refuses
	   the run.  A refusal still leaves the description, so that --report says what is lost. */
	int prepared = dsh_run_prepare(policy, &ro, &setup, &err);
	if (!setup.described) {
		rc = cli_fail(err);
		goto out_plan;
	}
	if (report) {
		_cleanup_free_ char *json = NULL;
		_cleanup_error_ struct dsh_error *rerr = NULL;
		if (dsh_run_report_json(policy, &ro, &setup.description, &json, &rerr) < 0) {
			rc = cli_fail(rerr);
			goto out_plan;
		}
		if ((rc = write_report(report, json)) != 0)
			goto out_plan;
	}
	/* A dry run runs nothing: it prints the plan whatever the run would lose (explain and --report
	   say what). */
	if (dry_run) {
		_cleanup_free_ char *text = NULL;
		_cleanup_error_ struct dsh_error *rerr = NULL;
		if (setup.backend->render(policy, setup.plan, &text, &rerr) < 0) {
			rc = cli_fail(rerr);
			goto out_plan;
		}
		fputs(text, stdout);
		rc = fflush(stdout) == 0 ? 0 : DSH_EXIT_FAILURE;
		goto out_plan;
	}
	if (prepared < 0) {
		rc = cli_fail(err);
		goto out_plan;
	}
	/* allowDegraded: each lost rule is said at every run, whatever --warnings says (SPEC 2). */
	for (size_t i = 0; setup.degraded && setup.degraded[i]; i++)
		cli_warn("%s", setup.degraded[i]);
	b = setup.backend;
	plan = setup.plan;
	fflush(NULL);
	/* The command sees the environment the env policy left (SPEC 1.7), never dshbox's own. */
	struct dsh_run_request req = { .argv = cmd, .envp = ro.command_env, .preserve_fds = keep, .n_preserve_fds = n_keep };
	struct dsh_run_result res = { 0 };
	if (b->confine(policy, plan, &req, &res, &err) < 0) {
		rc = cli_fail(err);
		goto out_plan;
	}
	/* Said only when asked: a successful run prints nothing of dshbox's own. */
	for (size_t i = 0; res.warnings && res.warnings[i]; i++)
		if (po.warnings_to_stderr)
			cli_warn("%s", res.warnings[i]);
	dsh_strv_free(res.warnings);
	if (res.message) {
		/* Like env(1): the command could not be run; say why, keep its 126/127. */
		struct dsh_error e = { .kind = DSH_ERR_SYSTEM, .code = 0, .msg = res.message };
		cli_fail(&e);
		free(res.message);
	}
	rc = res.signal ? reproduce_signal(res.signal) : res.exit_code;
out_plan:
	dsh_run_setup_clear(&setup);
out_policy:
	dsh_policy_free(policy);
	dsh_run_options_clear(&ro);
	dsh_config_clear(&config);
out:
	cli_policy_opts_clear(&po);
	return rc;
}
