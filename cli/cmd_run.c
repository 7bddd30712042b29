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
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/strbuf.h"
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
	       "  --timing             print each stage of the start and end with its wall-clock\n"
	       "                       microseconds on stderr (also DSHBOX_TIMING=1)\n"
	       "  -h, --help           show this help\n\n"
	       CLI_POLICY_HELP
	       "\nExit status: CMD's own (a death by signal N is reproduced, or 128+N); 125 dshbox failed and\n"
	       "CMD did not run; 126 CMD could not be executed; 127 CMD was not found.\n");
}

enum { OPT_DRY_RUN = 1, OPT_REPORT, OPT_PRESERVE_FD, OPT_TIMING };

/*
 * The timing view's first stage, from the fork that started dshbox to here: the process's time on a
 * CPU (CLOCK_PROCESS_CPUTIME_ID, exact) and waiting for one (the run queue delay of
 * /proc/self/schedstat, counted at each switch), which covers the exec and the C start-up.  A start
 * blocked on a disk read is not counted; -1 when the kernel does not say.
 */
static long long start_usec(void)
{
	struct timespec cpu;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) < 0)
		return -1;
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/self/schedstat", "re");
	if (f) {
		if (fscanf(f, "%llu %llu", &run, &wait) != 2)
			wait = 0;
		fclose(f);
	}
	return ((long long)cpu.tv_sec * 1000000000LL + cpu.tv_nsec + (long long)wait) / 1000;
}

/* DSHBOX_TIMING=1 (any value but empty and "0") turns the timing view on like --timing. */
static bool timing_from_env(char **envp)
{
	const char *v = dsh_env_get(envp, "DSHBOX_TIMING");
	return v && *v && strcmp(v, "0") != 0;
}

static void print_timing(const struct dsh_timing *t)
{
	for (size_t i = 0; i < t->n; i++)
		fprintf(stderr, "dshbox: timing: %s %lld\n", t->e[i].stage, t->e[i].usec);
	fflush(stderr);
}

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

/*
 * A command that failed on a path the run hides saw only the kernel's EACCES ("error: open(".env"):
 * Permission denied" from git): one line names what the run hides and the rules, so the user and
 * the agent see it is the policy.  Only after a failure (a successful run prints nothing of
 * dshbox's own), and never in the words of a denial signature, which would make a host take any
 * failure for a denial.
 */
static void name_hidden(int status, char *const *hidden, const struct dsh_run_result *res)
{
	size_t n = dsh_strv_len(hidden);
	struct dsh_buf b = { 0 };
	if (n)
		dsh_buf_addf(&b, "; this run hides from it: ");
	for (size_t i = 0; i < n && i < 3; i++)
		dsh_buf_addf(&b, "%s%s", i ? "; " : "", hidden[i]);
	if (n > 3)
		dsh_buf_addf(&b, "; and %zu more (dshbox run --dry-run lists them)", n - 3);
	/* What the runtime broker would not do for it: creating .git/hooks under the default rule
	   fails `git init` with nothing but "Permission denied". */
	if (res->refused && res->refusal[0])
		dsh_buf_addf(&b, "; the runtime broker refused %lu of its calls, the first at %s", res->refused,
			     res->refusal);
	_cleanup_free_ char *list = dsh_buf_steal(&b);
	if (list && *list)
		cli_note("the command exited %d%s", status, list);
}

int cmd_run(int argc, char **argv, char **envp)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "preserve-fd", required_argument, NULL, OPT_PRESERVE_FD },
		{ "timing", no_argument, NULL, OPT_TIMING },
		CLI_POLICY_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli_policy_opts po = { 0 };
	bool dry_run = false;
	const char *report = NULL;
	_cleanup_free_ int *keep = NULL;
	size_t n_keep = 0;
	int rc = 0, opt, sig = 0;
	bool ran = false; /* the timing view is printed for a run only, never after bad input */
	struct dsh_config config;
	struct dsh_policy *policy = NULL;
	struct dsh_run_options ro;
	_cleanup_error_ struct dsh_error *err = NULL;
	struct dsh_run_setup setup = { 0 };
	const struct dsh_backend *b;
	void *plan;
	char **cmd = NULL;
	struct dsh_timing timing = { 0 };
	struct dsh_timing *tm = timing_from_env(envp) ? &timing : NULL;

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
		case OPT_TIMING:
			tm = &timing;
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

	if (tm) {
		/* "start" ends where the clock starts: here, the options read. */
		long long started = start_usec();
		tm->last_ns = dsh_timing_now();
		if (started >= 0) {
			tm->e[tm->n].usec = started;
			snprintf(tm->e[tm->n++].stage, sizeof(tm->e[0].stage), "start");
		}
	}
	if ((rc = cli_policy_load(&po, envp, &config, &policy, &ro)) != 0)
		goto out_policy;
	ro.timing = tm;
	/* A run that says nothing of its backend beforehand lets the start decide (no probe); --report
	   and --dry-run name the backend before anything runs, so they keep the probe. */
	ro.start_decides = !report && !dry_run;
	dsh_timing_mark(tm, "policy", tm ? dsh_timing_now() : 0);
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
	size_t before_run = tm ? tm->n : 0;
	ran = true;
	/* none execs the command in place of dshbox: what there is to say, said now. */
	if (tm && b->id == DSH_BACKEND_NONE) {
		print_timing(tm);
		tm = NULL;
	}
	if (b->confine(policy, plan, &req, &res, &err) < 0) {
		/* auto's unprobed linux-ns refused by the host before the command ran: the next backend. */
		const struct dsh_backend *next = NULL;
		_cleanup_error_ struct dsh_error *why = TAKE_PTR(err);
		int r = dsh_backend_fall_back(policy, &ro, b, why, &next, &err);
		if (r == -ENOTSUP && !err) {
			rc = cli_fail(why);
			goto out_plan;
		}
		if (r < 0) {
			rc = cli_fail(err);
			goto out_plan;
		}
		memset(&res, 0, sizeof(res));
		dsh_timing_mark(tm, "fall back", tm ? dsh_timing_now() : 0);
		/* The next backend answers for its own losses, as a first choice would (SPEC 4). */
		dsh_run_setup_clear(&setup);
		if (dsh_run_prepare_backend(policy, &ro, next, &setup, &err) < 0) {
			rc = cli_fail(err);
			goto out_plan;
		}
		for (size_t i = 0; setup.degraded && setup.degraded[i]; i++)
			cli_warn("%s", setup.degraded[i]);
		b = setup.backend;
		plan = setup.plan;
		if (b->confine(policy, plan, &req, &res, &err) < 0) {
			rc = cli_fail(err);
			goto out_plan;
		}
	}
	/* Backends without a stage table (none, runner): the whole run is one stage. */
	if (tm && tm->n == before_run)
		dsh_timing_mark(tm, "run", dsh_timing_now());
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
	if (res.signal) {
		rc = 128 + res.signal;
		sig = res.signal;
	} else {
		rc = res.exit_code;
		if (rc != 0 && !res.message)
			name_hidden(rc, setup.description.hidden, &res);
	}
out_plan:
	dsh_run_setup_clear(&setup);
out_policy:
	dsh_policy_free(policy);
	dsh_run_options_clear(&ro);
	dsh_config_clear(&config);
out:
	cli_policy_opts_clear(&po);
	if (tm && ran) {
		/* From the command's end to here; what follows (exit) is the process's own teardown. */
		dsh_timing_mark(tm, "cleanup", dsh_timing_now());
		print_timing(tm);
	}
	return sig ? reproduce_signal(sig) : rc;
}
