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
#include <sys/stat.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli.h"
#include "policy/netpolicy.h"
#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "common/write_all.h"
#include "dshbox/backend.h"

static void help(void)
{
	printf("Usage: dshbox run [POLICY OPTIONS] [--dry-run] [--report FILE|-] [--report-fd N] [--preserve-fd N]\n"
	       "                  [--ask-fd N]\n"
	       "                  -- CMD [ARG...]\n\n"
	       "Run CMD confined by the kernel: the policy's read-only, writable and masked paths hold for CMD\n"
	       "and every process it starts.\n\n"
	       "Run options:\n"
	       "  --dry-run            print the backend's plan (the mount plan for linux-ns) and exit\n"
	       "  --report FILE|-      write a JSON report: backend, enforcement, how each rule is enforced\n"
	       "  --report-fd N        write the report to descriptor N (above 2), closed before CMD starts\n"
	       "  --ask-fd N           ask the host on socket N about names in neither list (SPEC 12.4;\n"
	       "                       implies network ask: true)\n"
	       "  --preserve-fd N      keep descriptor N (above 2) open in CMD (repeatable)\n"
	       "  --timing             print each stage of the start and end with its wall-clock\n"
	       "                       microseconds on stderr (also DSHBOX_TIMING=1)\n"
	       "  -h, --help           show this help\n\n"
	       CLI_POLICY_HELP
	       "\nExit status: CMD's own (a death by signal N is reproduced, or 128+N); 125 dshbox failed and\n"
	       "CMD did not run; 126 CMD could not be executed; 127 CMD was not found.\n");
}

enum { OPT_DRY_RUN = 1, OPT_REPORT, OPT_REPORT_FD, OPT_PRESERVE_FD, OPT_TIMING, OPT_ASK_FD };

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

/* The report on its own descriptor, which is then closed: the reader sees its end before the
   command starts, and the command never inherits it. */
static int write_report_fd(int fd, const char *json)
{
	int r = dsh_write_all(fd, json, strlen(json)) < 0 || dsh_write_all(fd, "\n", 1) < 0 ? errno : 0;
	if (close(fd) < 0 && !r && errno != EINTR)
		r = errno;
	if (!r)
		return 0;
	struct dsh_error *err = NULL;
	dsh_err_sys(&err, r, "--report-fd %d", fd);
	int rc = cli_fail(err);
	dsh_error_free(err);
	return rc;
}

/*
 * Where --report goes.  The report names the backend before the command runs, so a run with one
 * used to probe auto's first choice, a throw-away namespace (2-4 ms, docs/run.md).  Where the report
 * can be written again — a regular file named by --report, /dev/fd/N included, opened afresh for
 * each write — the start decides instead, as on a plain run: the report is written for the
 * unprobed linux-ns and, should the host refuse that start and auto fall back, written again for
 * the backend that runs, before its command starts.  Stdout, a pipe, a terminal cannot take a
 * report back, and --report-fd's descriptor is closed before the sandbox starts (init must not hold
 * it while it serves, SPEC 9): there auto probes first, as before.
 */
struct report {
	const char *path; /* --report FILE|-, or NULL */
	int fd;           /* --report-fd N, or -1 */
	int written_for;  /* the backend (enum dsh_backend_id) the report names; -1: none yet */
};

/* No report, or one that can be written again: the start may decide the backend. */
static bool report_lets_start_decide(const struct report *rp)
{
	struct stat st;
	if (!rp->path)
		return rp->fd < 0;
	if (strcmp(rp->path, "-") == 0)
		return false;
	return stat(rp->path, &st) < 0 ? errno == ENOENT : S_ISREG(st.st_mode);
}

/* The report for setup's backend (after the run: with res's refusals): 0, or the exit status after
   the error said. */
static int report_write_res(struct report *rp, const struct dsh_policy *policy, const struct dsh_run_options *ro,
			    const struct dsh_run_setup *setup, const struct dsh_run_result *res)
{
	_cleanup_free_ char *json = NULL;
	_cleanup_error_ struct dsh_error *rerr = NULL;
	if (dsh_run_report_json_after(policy, ro, &setup->description, res, &json, &rerr) < 0)
		return cli_fail(rerr);
	int rc;
	if (rp->path)
		rc = write_report(rp->path, json);
	else {
		rc = write_report_fd(rp->fd, json);
		rp->fd = -1;
	}
	if (rc == 0)
		rp->written_for = (int)setup->backend->id;
	return rc;
}

static int report_write(struct report *rp, const struct dsh_policy *policy, const struct dsh_run_options *ro,
			const struct dsh_run_setup *setup)
{
	return report_write_res(rp, policy, ro, setup, NULL);
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

/* Whether a hidden entry ("PATH (rule ...)") lies where the command works: beneath cwd. */
static bool hidden_near(const char *entry, const char *cwd)
{
	size_t n = strlen(cwd);
	if (strcmp(cwd, "/") == 0)
		return true;
	return strncmp(entry, cwd, n) == 0 && entry[n] == '/';
}

/*
 * A command that failed on a path the run hides saw only the kernel's EACCES ("error: open(".env"):
 * Permission denied" from git): one line names what the run hides where the command works (beneath
 * its directory: a hidden ~/.ssh is no news to a failing test suite), and the first call the broker
 * refused, so the user and the agent see it is the policy.  Only after a failure (a successful run
 * prints nothing of dshbox's own) the command itself ended, not after Ctrl-C, and never in the
 * words of a denial signature, which would make a host take any failure for a denial.
 */
static void name_hidden(int status, char *const *hidden, const char *cwd, char *const *env_removed,
			const struct dsh_run_result *res)
{
	if (status == 130)
		return;
	size_t n = 0, shown = 0;
	struct dsh_buf b = { 0 };
	for (size_t i = 0; hidden && hidden[i]; i++) {
		if (!hidden_near(hidden[i], cwd))
			continue;
		if (n++ < 3)
			dsh_buf_addf(&b, "%s%s", shown++ ? "; " : "; this run hides from it: ", hidden[i]);
	}
	if (n > 3)
		dsh_buf_addf(&b, "; and %zu more (dshbox run --dry-run lists them)", n - 3);
	/* What the runtime broker would not do for it: creating .git/hooks under the default rule
	   fails `git init` with nothing but "Permission denied". */
	if (res->refused && res->refusal[0])
		dsh_buf_addf(&b, "; the runtime broker refused %lu of its calls, the first at %s", res->refused,
			     res->refusal);
	/* SPEC 12.3: a name the network refused fails an install with "could not resolve host". */
	for (size_t i = 0; i < res->n_net_refused && i < 3; i++) {
		const struct dsh_net_refusal *f = &res->net_refused[i];
		dsh_buf_addf(&b, "%s%s%s%.0u (%s: %s)", i ? ", " : "; the network refused: ", f->name, f->port ? ":" : "",
			     f->port, f->via, f->reason);
	}
	if (res->n_net_refused > 3)
		dsh_buf_addf(&b, " and %zu more (--report FILE lists them)", res->n_net_refused - 3);
	/* A token the environment policy kept out fails a push or an install with words of its own. */
	for (size_t i = 0; env_removed && env_removed[i]; i++)
		dsh_buf_addf(&b, "%s%s", i ? ", " : "; its environment lacks (env.exclude; --allow-env NAME passes one): ",
			     env_removed[i]);
	_cleanup_free_ char *list = dsh_buf_steal(&b);
	if (list && *list)
		cli_note("the command exited %d%s", status, list);
}

struct before_confine {
	struct dsh_timing **tm;
	struct report *report;
	const struct dsh_policy *policy;
	const struct dsh_run_options *ro;
};

/* Just before a backend confines: the report again when auto fell back to another backend than it
   names, its lost rules, and for none (which execs in place of dshbox) the timing view, as there
   will be no after. */
static void before_confine(void *data, const struct dsh_run_setup *s)
{
	struct before_confine *bc = data;
	struct report *rp = bc->report;
	if (rp->written_for >= 0 && rp->written_for != (int)s->backend->id) {
		/* Nothing of the command has run; a report that would name the wrong backend must not
		   stand, so a failure to write it stops the run here (125). */
		int rc = report_write(rp, bc->policy, bc->ro, s);
		if (rc != 0) {
			fflush(NULL);
			exit(rc);
		}
	}
	/* allowDegraded: each lost rule is said at every run, whatever --warnings says (SPEC 2). */
	for (size_t i = 0; s->degraded && s->degraded[i]; i++)
		cli_warn("%s", s->degraded[i]);
	if (*bc->tm && s->backend->id == DSH_BACKEND_NONE) {
		print_timing(*bc->tm);
		*bc->tm = NULL;
	}
	fflush(NULL);
}

/* What the command line asked for. */
struct run_args {
	struct cli_policy_opts po;
	bool dry_run;
	struct report report;
	int *keep;   /* --preserve-fd */
	size_t n_keep;
	bool timing;
	int ask_fd; /* --ask-fd N: where names in neither list are asked (SPEC 12.4), or -1 */
	char **cmd;
};

/* A descriptor number above 2 given to option, or -1 after the usage error. */
static int fd_arg(const char *option, const char *arg)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || !end || *end || v < 3 || v > INT_MAX) {
		cli_usage_error("run", "%s: expected a descriptor number above 2, got '%s'", option, arg);
		return -1;
	}
	return (int)v;
}

static bool fd_kept(const struct run_args *a, int fd)
{
	for (size_t i = 0; i < a->n_keep; i++)
		if (a->keep[i] == fd)
			return true;
	return false;
}

/* 0 to run; otherwise the exit status (help: 0 and *ret_done). */
static int parse_args(int argc, char **argv, struct run_args *a, bool *ret_done)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "report-fd", required_argument, NULL, OPT_REPORT_FD },
		{ "ask-fd", required_argument, NULL, OPT_ASK_FD },
		{ "preserve-fd", required_argument, NULL, OPT_PRESERVE_FD },
		{ "timing", no_argument, NULL, OPT_TIMING },
		CLI_POLICY_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			*ret_done = true;
			return 0;
		case OPT_DRY_RUN:
			a->dry_run = true;
			break;
		case OPT_REPORT:
			a->report.path = optarg;
			break;
		case OPT_REPORT_FD:
			if ((a->report.fd = fd_arg("--report-fd", optarg)) < 0)
				return DSH_EXIT_FAILURE;
			break;
		case OPT_ASK_FD:
			if ((a->ask_fd = fd_arg("--ask-fd", optarg)) < 0)
				return DSH_EXIT_FAILURE;
			break;
		case OPT_TIMING:
			a->timing = true;
			break;
		case OPT_PRESERVE_FD: {
			int v = fd_arg("--preserve-fd", optarg);
			if (v < 0)
				return DSH_EXIT_FAILURE;
			int *k = realloc(a->keep, (a->n_keep + 1) * sizeof(*k));
			if (!k)
				return cli_usage_error("run", "out of memory");
			a->keep = k;
			a->keep[a->n_keep++] = v;
			break;
		}
		case '?':
			return cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
		case ':':
			return cli_usage_error("run", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (opt >= CLI_OPT_POLICY_BASE && opt < CLI_OPT_POLICY_END) {
				if ((rc = cli_policy_option(&a->po, opt, optarg, "run")) != 0)
					return rc;
				break;
			}
			return cli_usage_error("run", "unknown option");
		}
	}
	a->cmd = argv + optind;
	if (!a->dry_run && !a->cmd[0])
		return cli_usage_error("run", "no command given (dshbox run [OPTIONS] -- CMD [ARG...])");
	for (size_t i = 0; i < a->n_keep; i++) {
		if (fcntl(a->keep[i], F_GETFD) < 0)
			return cli_usage_error("run", "--preserve-fd %d: not an open descriptor", a->keep[i]);
		if (a->keep[i] == a->report.fd)
			return cli_usage_error("run", "--report-fd %d: also given to --preserve-fd (the report's "
						"descriptor is closed before the command starts)", a->report.fd);
	}
	if (a->report.fd >= 0 && fcntl(a->report.fd, F_GETFD) < 0)
		return cli_usage_error("run", "--report-fd %d: not an open descriptor", a->report.fd);
	if (a->report.path && a->report.fd >= 0)
		return cli_usage_error("run", "--report and --report-fd: give one");
	/* The host answers on it: a socket, read and written (SPEC 12.4). */
	int type = 0;
	socklen_t tl = sizeof(type);
	if (a->ask_fd >= 0 && (getsockopt(a->ask_fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM))
		return cli_usage_error("run", "--ask-fd %d: not an open stream socket (the host answers on it)", a->ask_fd);
	if (a->ask_fd >= 0 && (a->ask_fd == a->report.fd || fd_kept(a, a->ask_fd)))
		return cli_usage_error("run", "--ask-fd %d: also given to --report-fd or --preserve-fd", a->ask_fd);
	return 0;
}

/* "start" ends where the clock starts: here, the options read. */
static void timing_start(struct dsh_timing *tm)
{
	long long started = start_usec();
	tm->last_ns = dsh_timing_now();
	if (started >= 0) {
		tm->e[tm->n].usec = started;
		snprintf(tm->e[tm->n++].stage, sizeof(tm->e[0].stage), "start");
	}
}

/*
 * --report and --dry-run, from what the library prepared: a refusal for lost rules still leaves
 * the description, so that --report says what is lost.  -1 to go on and run; otherwise the exit
 * status.
 */
static int before_run(struct run_args *a, const struct dsh_policy *policy, const struct dsh_run_options *ro,
		      const struct dsh_run_setup *setup, int prepared, struct dsh_error *err)
{
	if (!setup->described)
		return cli_fail(err);
	if (a->report.path || a->report.fd >= 0) {
		int rc = report_write(&a->report, policy, ro, setup);
		if (rc != 0)
			return rc;
	}
	/* A dry run runs nothing: it prints the plan whatever the run would lose (explain and --report
	   say what). */
	if (a->dry_run) {
		_cleanup_free_ char *text = NULL;
		_cleanup_error_ struct dsh_error *rerr = NULL;
		if (setup->backend->render(policy, setup->plan, &text, &rerr) < 0)
			return cli_fail(rerr);
		fputs(text, stdout);
		return fflush(stdout) == 0 ? 0 : DSH_EXIT_FAILURE;
	}
	return prepared < 0 ? cli_fail(err) : -1;
}

/* How the command ended, said as `dshbox run` says it: its exit status, or *ret_sig to die of. */
static int outcome(bool loud, const char *cwd, char *const *env_removed, const struct dsh_run_setup *setup,
		   struct dsh_run_result *res, int *ret_sig)
{
	int rc;
	/* Said only when asked (loud: --warnings=stderr), or when the run was allowed to degrade (each
	   loss said at every run, SPEC 4): a successful run prints nothing of dshbox's own. */
	for (size_t i = 0; res->warnings && res->warnings[i]; i++)
		if (loud)
			cli_warn("%s", res->warnings[i]);
	if (res->message) {
		/* Like env(1): the command could not be run; say why, keep its 126/127. */
		struct dsh_error e = { .kind = DSH_ERR_SYSTEM, .code = 0, .msg = res->message };
		cli_fail(&e);
	}
	if (res->signal) {
		rc = 128 + res->signal;
		*ret_sig = res->signal;
	} else {
		rc = res->exit_code;
		if (rc != 0 && !res->message)
			name_hidden(rc, setup->description.hidden, cwd, env_removed, res);
	}
	dsh_run_result_clear(res);
	return rc;
}

int cmd_run(int argc, char **argv, char **envp)
{
	struct run_args a = { .report = { .fd = -1, .written_for = -1 }, .ask_fd = -1 };
	int rc, sig = 0;
	bool done = false, ran = false; /* the timing view is printed for a run only, never after bad input */
	struct dsh_config config;
	struct dsh_policy *policy = NULL;
	struct dsh_run_options ro;
	_cleanup_error_ struct dsh_error *err = NULL;
	struct dsh_run_setup setup = { 0 };
	struct dsh_timing timing = { 0 };
	struct dsh_timing *tm = NULL;

	if ((rc = parse_args(argc, argv, &a, &done)) != 0 || done)
		goto out;
	if (a.timing || timing_from_env(envp))
		timing_start(tm = &timing);
	if ((rc = cli_policy_load(&a.po, envp, &config, &policy, &ro)) != 0)
		goto out_policy;
	ro.timing = tm;
	if (a.ask_fd >= 0 && !ro.net) {
		rc = cli_usage_error("run", "--ask-fd %d: the network is not filtered by name (--allow-domain, or "
					    "network: as a mapping)", a.ask_fd);
		goto out_policy;
	}
	/* Giving the host's channel is asking: names in neither list go to it. */
	if (a.ask_fd >= 0) {
		ro.ask_fd = a.ask_fd;
		ro.net->ask = true;
	}
	/* A run lets the start decide (no probe) unless it names its backend before anything runs and
	   could not take that back: --dry-run, a report that cannot be written again (struct report). */
	ro.start_decides = !a.dry_run && report_lets_start_decide(&a.report);
	dsh_timing_mark(tm, "policy", tm ? dsh_timing_now() : 0);
	cli_policy_print_warnings(&a.po, policy);

	/* The library decides (SPEC 4): backend, plan, what it enforces, and whether a lost rule refuses
	   the run. */
	int prepared = dsh_run_prepare(policy, &ro, &setup, &err);
	if ((rc = before_run(&a, policy, &ro, &setup, prepared, err)) >= 0)
		goto out_plan;
	fflush(NULL);
	/* The command sees the environment the env policy left (SPEC 1.7), never dshbox's own. */
	struct dsh_run_request req = { .argv = a.cmd, .envp = ro.command_env, .preserve_fds = a.keep,
				       .n_preserve_fds = a.n_keep };
	struct dsh_run_result res = { 0 };
	size_t n_before = tm ? tm->n : 0;
	ran = true;
	struct before_confine bc = { .tm = &tm, .report = &a.report, .policy = policy, .ro = &ro };
	struct dsh_run_hooks hooks = { .before_confine = before_confine, .data = &bc, .none_execs_in_place = true };
	if (dsh_run(policy, &ro, &req, &hooks, &setup, &res, &err) < 0) {
		rc = cli_fail(err);
		goto out_plan;
	}
	/* SPEC 12.3: what the network refused goes into a report that can be written again. */
	if (ro.net && a.report.path && report_lets_start_decide(&a.report) &&
	    (rc = report_write_res(&a.report, policy, &ro, &setup, &res)) != 0) {
		dsh_run_result_clear(&res);
		goto out_plan;
	}
	/* Backends without a stage table (none, runner): the whole run is one stage. */
	if (tm && tm->n == n_before)
		dsh_timing_mark(tm, "run", dsh_timing_now());
	rc = outcome(a.po.warnings_to_stderr || ro.allow_degraded, dsh_policy_cwd(policy), ro.env_removed, &setup, &res,
		     &sig);
out_plan:
	dsh_run_setup_clear(&setup);
out_policy:
	dsh_policy_free(policy);
	dsh_run_options_clear(&ro);
	dsh_config_clear(&config);
out:
	cli_policy_opts_clear(&a.po);
	free(a.keep);
	if (tm && ran) {
		/* From the command's end to here; what follows (exit) is the process's own teardown. */
		dsh_timing_mark(tm, "cleanup", dsh_timing_now());
		print_timing(tm);
	}
	return sig ? reproduce_signal(sig) : rc;
}
