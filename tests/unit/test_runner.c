/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runner backend: the exact argv a runner receives, rules refused at confine time, stderr
 * relayed unchanged while runnerFailureSignatures are searched in it, exit status passed through.
 * A fake runner (a shell script that records its argv, then runs what follows "--") stands in for
 * bwrap here; tests/integration/test_runner.c runs the real one.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "common/strv.h"
#include "supervisor/backends.h"
#include "supervisor/runner_exec.h"
#include "tests/lib/harness.h"
#include "tests/unit/test_backend_fixture.h"

extern char **environ;

static void expect_argv(char **got, const char *const *want)
{
	size_t i = 0;
	for (; want[i]; i++) {
		cr_assert_not_null(got[i], "argv ends at %zu, want \"%s\"", i, want[i]);
		cr_expect_str_eq(got[i], want[i], "argv[%zu]", i);
	}
	cr_expect_null(got[i], "argv has extra \"%s\" at %zu", got[i] ? got[i] : "", i);
}

Test(runner, official_args_read_only)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_READ_ONLY, "/ws");
	char **args = NULL;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_runner_profile_args(&p, fx_ro.network, &args, &e), 0);
	expect_argv(args, (const char *const[]){ "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc",
						 "/proc", "--die-with-parent", NULL });
	dsh_strv_free(args);
	fx_clear(&p);
}

Test(runner, official_args_workspace_write_network_off)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/w s");
	fx_ro.network = false;
	char **args = NULL;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_runner_profile_args(&p, fx_ro.network, &args, &e), 0);
	expect_argv(args, (const char *const[]){ "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc",
						 "/proc", "--die-with-parent", "--unshare-net", "--tmpfs", "/tmp",
						 "--bind", "/w s", "/w s", NULL });
	dsh_strv_free(args);
	fx_clear(&p);
}

Test(runner, rule_dialect)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
	fx_literal(&p, DSH_RULE_RW, "rw /opt/x", "/opt/x", NULL);
	fx_literal(&p, DSH_RULE_RO, "r- /ws/a\\[1]", "/ws/a\\[1]", NULL);
	fx_literal(&p, DSH_RULE_DENY, "-- link/k", "/real/k", "/ws/link/k");
	fx_glob(&p, DSH_RULE_DENY, "-- **/*.pem", "/ws/**/*.pem", "^/ws/(.*/)?[^/]*\\.pem(/.*)?$");
	char **v = NULL;
	cr_assert_eq(dsh_runner_rule_args(&p.rules[0], &v), 1);
	cr_assert_eq(dsh_runner_rule_args(&p.rules[1], &v), 1);
	cr_assert_eq(dsh_runner_rule_args(&p.rules[2], &v), 1);
	cr_assert_eq(dsh_runner_rule_args(&p.rules[3], &v), 0);
	expect_argv(v, (const char *const[]){ "--bind-try", "/opt/x", "/opt/x", "--ro-bind-try", "/ws/a\\[1]",
					      "/ws/a\\[1]", "--ro-bind-try", "/real/k", "/real/k", "--ro-bind-try",
					      "/ws/link/k", "/ws/link/k", NULL });
	dsh_strv_free(v);

	const struct dsh_backend *b = &dsh_backend_runner;
	struct dsh_description d;
	struct dsh_error *e = NULL;
	void *plan = NULL;
	cr_assert_eq(b->compile(&p, &fx_ro, &plan, &e), 0);
	cr_assert_eq(b->describe(&p, plan, &d, &e), 0);
	b->free(plan);
	cr_expect_eq(d.n_rules, 4);
	cr_expect_eq(d.overall, DSH_ENFORCE_PARTIAL);
	cr_assert_eq(dsh_strv_len(d.warnings), 4);
	for (size_t i = 0; i < 4; i++) {
		cr_expect_eq(d.rules[i].level, DSH_ENFORCE_PARTIAL);
		char want[128];
		snprintf(want, sizeof(want), "rule \"%s\": backend runner: ", p.rules[i].text);
		cr_expect(strncmp(d.warnings[i], want, strlen(want)) == 0, "%s", d.warnings[i]);
	}
	cr_expect(strstr(d.warnings[2], "read-only"), "%s", d.warnings[2]);
	cr_expect(strstr(d.warnings[3], "glob"), "%s", d.warnings[3]);
	dsh_description_clear(&d);
	fx_clear(&p);
}

Test(runner, describe_without_rules)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
	const struct dsh_backend *b = &dsh_backend_runner;
	struct dsh_description d;
	struct dsh_error *e = NULL;
	void *plan = NULL;
	cr_assert_eq(b->compile(&p, &fx_ro, &plan, &e), 0);
	cr_assert_eq(b->describe(&p, plan, &d, &e), 0);
	b->free(plan);
	cr_expect_eq(d.overall, DSH_ENFORCE_FULL);
	cr_expect_eq(dsh_strv_len(d.warnings), 0);
	cr_expect(dsh_strv_contains(d.denial_signatures, "permission denied"));
	cr_expect(dsh_strv_contains(d.denial_signatures, "read-only file system"));
	dsh_description_clear(&d);
	fx_clear(&p);
}

/* ---- the signature scanner ---- */

Test(runner, sigscan_chunks_and_case)
{
	char *sigs[] = { "bwrap: creating new namespace failed", "Permission Denied by runner", NULL };
	const char *text = "noise\nBWRAP: Creating New NAMESPACE failed: Operation not permitted\n";
	for (size_t chunk = 1; chunk <= strlen(text); chunk++) {
		struct dsh_sigscan s;
		dsh_sigscan_init(&s, sigs);
		for (size_t off = 0; off < strlen(text); off += chunk) {
			size_t n = strlen(text) - off < chunk ? strlen(text) - off : chunk;
			dsh_sigscan_feed(&s, text + off, n);
		}
		cr_expect_eq(s.matched, 0, "chunk size %zu", chunk);
		dsh_sigscan_clear(&s);
	}
	struct dsh_sigscan s;
	dsh_sigscan_init(&s, sigs);
	dsh_sigscan_feed(&s, "bwrap: creating new namespace", 29);
	dsh_sigscan_feed(&s, " succeeded\npermission denied by", 31);
	cr_expect_eq(s.matched, -1);
	dsh_sigscan_feed(&s, " RUNNER", 7);
	cr_expect_eq(s.matched, 1);
	dsh_sigscan_clear(&s);
}

/* ---- running a fake runner ---- */

struct tree {
	char *dir, *runner, *argv_file;
};

static void fake_runner(struct tree *t, const char *extra)
{
	t->dir = dsh_test_mkdtemp();
	cr_assert(asprintf(&t->runner, "%s/fake-runner", t->dir) > 0);
	cr_assert(asprintf(&t->argv_file, "%s/argv", t->dir) > 0);
	char *script = NULL;
	cr_assert(asprintf(&script,
			   "#!/bin/sh\n"
			   "for a in \"$@\"; do printf '%%s\\n' \"$a\"; done > '%s'\n"
			   "%s\n"
			   "while [ \"$1\" != \"--\" ]; do shift; done; shift\n"
			   "exec \"$@\"\n",
			   t->argv_file, extra ? extra : "") > 0);
	dsh_test_write_file(t->runner, script);
	chmod(t->runner, 0755);
	free(script);
}

static void tree_clear(struct tree *t)
{
	dsh_test_rmtree(t->dir);
	free(t->dir), free(t->runner), free(t->argv_file);
}

/* Run the backend's confine with stderr redirected to a file; returns confine's result. */
static int confine_capture(struct dsh_policy *p, char *const *argv, struct dsh_run_result *res, char **ret_err_text,
			   struct dsh_error **e, const char *dir)
{
	const struct dsh_backend *b = &dsh_backend_runner;
	void *plan = NULL;
	cr_assert_eq(b->compile(p, &fx_ro, &plan, e), 0);
	char *errfile = NULL;
	cr_assert(asprintf(&errfile, "%s/stderr", dir) > 0);
	int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	int saved = dup(2);
	dup2(fd, 2);
	close(fd);
	struct dsh_run_request req = { .argv = argv, .envp = environ };
	int r = b->confine(p, plan, &req, res, e);
	dup2(saved, 2);
	close(saved);
	*ret_err_text = dsh_test_read_file(errfile);
	free(errfile);
	b->free(plan);
	return r;
}

/* One run of the runner backend under a fake runner, and what it left to look at. */
struct fake_run {
	struct tree t;
	struct dsh_policy p;
	struct dsh_run_result res;
	struct dsh_error *e;
	char *errtext; /* the stderr dshbox relayed */
};

/*
 * A fake runner (extra: shell it runs before the command), a policy in mode for its directory,
 * runnerCommand the fake runner alone and runnerFailureSignatures the signatures (NULL-terminated).
 */
static void fake_run_init(struct fake_run *f, const char *extra, enum dsh_mode mode, const char *const *signatures)
{
	memset(f, 0, sizeof(*f));
	/* Not what confine leaves: a check of the status cannot pass unless confine set it. */
	f->res.exit_code = f->res.signal = -1;
	fake_runner(&f->t, extra);
	fx_init(&f->p, mode, f->t.dir);
	fx_ro.runner_command = fx_strv((const char *const[]){ f->t.runner, NULL });
	fx_ro.runner_failure_signatures = fx_strv(signatures);
}

/* Confine argv under the fake runner; returns confine's result. */
static int fake_run(struct fake_run *f, char *const *argv)
{
	return confine_capture(&f->p, argv, &f->res, &f->errtext, &f->e, f->t.dir);
}

/* Confine argv under the fake runner, which must succeed: the command's status is in f->res. */
static void fake_run_ok(struct fake_run *f, char *const *argv)
{
	cr_assert_eq(fake_run(f, argv), 0, "%s", f->e ? f->e->msg : "");
}

static void fake_run_clear(struct fake_run *f)
{
	dsh_error_free(f->e);
	free(f->errtext);
	fx_clear(&f->p);
	tree_clear(&f->t);
}

Test(runner, confine_passes_the_official_argv)
{
	struct fake_run f;
	fake_run_init(&f, NULL, DSH_MODE_WORKSPACE_WRITE, (const char *const[]){ "fake-runner: refused", NULL });
	dsh_strv_free(fx_ro.runner_command);
	fx_ro.runner_command = fx_strv((const char *const[]){ f.t.runner, "--extra", NULL });
	char *argv[] = { "sh", "-c", "echo 'to stderr: fine' >&2; exit 7", NULL };
	fake_run_ok(&f, argv);
	cr_expect_eq(f.res.exit_code, 7);
	cr_expect_eq(f.res.signal, 0);
	cr_expect_str_eq(f.errtext, "to stderr: fine\n");
	char *got = dsh_test_read_file(f.t.argv_file), *want = NULL;
	cr_assert(asprintf(&want,
			   "--extra\n--ro-bind\n/\n/\n--dev\n/dev\n--unshare-pid\n--proc\n/proc\n--die-with-parent\n"
			   "--tmpfs\n/tmp\n--bind\n%s\n%s\n--\nsh\n-c\necho 'to stderr: fine' >&2; exit 7\n",
			   f.t.dir, f.t.dir) > 0);
	cr_expect_str_eq(got, want);
	free(got), free(want);
	fake_run_clear(&f);
}

Test(runner, confine_refuses_any_rule_before_running)
{
	struct fake_run f;
	fake_run_init(&f, NULL, DSH_MODE_WORKSPACE_WRITE, (const char *const[]){ "refused", NULL });
	fx_literal(&f.p, DSH_RULE_RO, "r- .git", "/ws/.git", NULL);
	char *argv[] = { "true", NULL };
	cr_assert_lt(fake_run(&f, argv), 0);
	cr_assert_not_null(f.e);
	cr_expect(strstr(f.e->msg, "runnerCommand cannot be combined with access rules"), "%s", f.e->msg);
	cr_expect(strstr(f.e->msg, "r- .git"), "%s", f.e->msg);
	cr_expect_not_null(f.e->hint);
	cr_expect_eq(access(f.t.argv_file, F_OK), -1, "the runner ran although the run was refused");
	fake_run_clear(&f);
}

Test(runner, confine_reports_a_runner_failure)
{
	struct fake_run f;
	fake_run_init(&f, "echo 'noise'; echo 'FAKE-RUNNER: Refused to set up' >&2; exit 1", DSH_MODE_READ_ONLY,
		      (const char *const[]){ "unrelated", "fake-runner: refused", NULL });
	char *argv[] = { "true", NULL };
	cr_assert_eq(fake_run(&f, argv), -EPROTO);
	cr_assert_not_null(f.e);
	cr_expect(strstr(f.e->msg, "runnerFailureSignatures entry \"fake-runner: refused\""), "%s", f.e->msg);
	/* relayed unchanged, before dshbox's own line */
	cr_expect_str_eq(f.errtext, "FAKE-RUNNER: Refused to set up\n");
	fake_run_clear(&f);
}

Test(runner, confine_passes_a_signal_through)
{
	struct fake_run f;
	fake_run_init(&f, NULL, DSH_MODE_READ_ONLY, (const char *const[]){ "refused", NULL });
	char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	fake_run_ok(&f, argv);
	cr_expect_eq(f.res.signal, SIGTERM);
	fake_run_clear(&f);
}

/* dshbox ignores SIGPIPE while it relays; the runner and the command must not inherit that. */
Test(runner, the_command_does_not_inherit_an_ignored_sigpipe)
{
	struct fake_run f;
	fake_run_init(&f, NULL, DSH_MODE_READ_ONLY, (const char *const[]){ "refused", NULL });
	char *argv[] = { "sh", "-c", "grep '^SigIgn:' /proc/self/status >&2", NULL };
	fake_run_ok(&f, argv);
	cr_expect_eq(f.res.exit_code, 0);
	unsigned long long ign = 0;
	cr_assert_eq(sscanf(f.errtext, "SigIgn: %llx", &ign), 1, "%s", f.errtext);
	cr_expect_eq(ign & (1ULL << (SIGPIPE - 1)), 0, "SIGPIPE is ignored in the command: %s", f.errtext);
	fake_run_clear(&f);
}

Test(runner, missing_runner_is_a_dshbox_failure)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_READ_ONLY, "/");
	fx_ro.runner_command = fx_strv((const char *const[]){ "dshbox-no-such-runner", NULL });
	fx_ro.runner_failure_signatures = fx_strv((const char *const[]){ "refused", NULL });
	struct dsh_error *e = NULL;
	cr_expect_eq(dsh_backend_runner.probe(&p, &fx_ro, &e), -ENOENT);
	cr_expect(e && strstr(e->msg, "dshbox-no-such-runner"));
	cr_expect(e && e->hint);
	dsh_error_free(e);
	fx_clear(&p);
}

Test(runner, stderr_relayed_byte_for_byte)
{
	/* 1 MiB of every byte value (NUL, invalid UTF-8, CR) from the runner's stderr, unchanged. */
	struct fake_run f;
	fake_run_init(&f, NULL, DSH_MODE_READ_ONLY, (const char *const[]){ "never printed", NULL });
	char *blob = NULL, *gen = NULL;
	cr_assert(asprintf(&blob, "%s/blob", f.t.dir) > 0);
	FILE *bf = fopen(blob, "w");
	cr_assert_not_null(bf);
	for (int i = 0; i < (1 << 20); i++)
		fputc((i * 7 + (i >> 8)) & 0xff, bf);
	fclose(bf);
	cr_assert(asprintf(&gen, "cat '%s' >&2", blob) > 0);
	char *argv[] = { "sh", "-c", gen, NULL };
	fake_run_ok(&f, argv);
	cr_expect_eq(f.res.exit_code, 0);
	/* compare as files: the captured stderr may hold NUL bytes */
	char *errfile = NULL, *cmp = NULL;
	cr_assert(asprintf(&errfile, "%s/stderr", f.t.dir) > 0);
	cr_assert(asprintf(&cmp, "cmp -s '%s' '%s'", blob, errfile) > 0);
	cr_expect_eq(system(cmp), 0, "the relayed stderr differs from what the runner wrote");
	free(blob), free(gen), free(errfile), free(cmp);
	fake_run_clear(&f);
}

Test(runner, a_signal_sent_to_dshbox_reaches_the_runner)
{
	/*
	 * SIGTERM sent to the dshbox process alone (as `kill PID` does) is passed on to the runner.  That
	 * process has one thread; this test's has Criterion's too, and a multithreaded host's signals
	 * stay its own (tests/integration/test_threaded_host.c): the run is made from a fork of it,
	 * which has one, and says by its exit status what the runner's command died of.
	 */
	struct fake_run f;
	fake_run_init(&f, NULL, DSH_MODE_READ_ONLY, (const char *const[]){ "refused", NULL });
	pid_t runs = fork();
	cr_assert_geq(runs, 0);
	if (runs == 0) {
		char *argv[] = { "sleep", "30", NULL };
		int r = fake_run(&f, argv);
		_exit(r < 0 ? 125 : f.res.signal);
	}
	/* once the runner has started (it records its argv first), signal the process that runs it */
	for (int i = 0; i < 1000 && access(f.t.argv_file, F_OK) < 0; i++)
		usleep(10000);
	usleep(100000);
	kill(runs, SIGTERM);
	int st = 0;
	cr_assert_eq(waitpid(runs, &st, 0), runs);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == SIGTERM, "the runner's command died of %d (wait status %#x)",
		  WIFEXITED(st) ? WEXITSTATUS(st) : -1, st);
	fake_run_clear(&f);
}

static bool occurs_ci(const char *text, size_t n, const char *sig)
{
	size_t m = strlen(sig);
	for (size_t i = 0; i + m <= n; i++)
		if (strncasecmp(text + i, sig, m) == 0)
			return true;
	return false;
}

Test(runner, sigscan_random_chunks_against_a_plain_search)
{
	unsigned long long x = 88172645463325252ull;
#define RND(n) (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (size_t)(x % (n)))
	static const char alpha[] = "abAB:  \n\0x";
	for (int round = 0; round < 3000; round++) {
		char text[600], sig0[8], sig1[8];
		size_t n = 1 + RND(sizeof(text) - 1);
		for (size_t i = 0; i < n; i++)
			text[i] = alpha[RND(sizeof(alpha) - 1)];
		char *sigs_buf[2] = { sig0, sig1 };
		for (int k = 0; k < 2; k++) {
			size_t m = 1 + RND(6);
			for (size_t i = 0; i < m; i++) {
				char c = alpha[RND(sizeof(alpha) - 3)]; /* no NUL in a signature */
				sigs_buf[k][i] = c;
			}
			sigs_buf[k][m] = '\0';
		}
		char *sigs[] = { sig0, sig1, NULL };
		bool want = occurs_ci(text, n, sig0) || occurs_ci(text, n, sig1);
		struct dsh_sigscan s;
		dsh_sigscan_init(&s, sigs);
		for (size_t off = 0; off < n && s.matched < 0;) {
			size_t chunk = 1 + RND(12);
			if (chunk > n - off)
				chunk = n - off;
			dsh_sigscan_feed(&s, text + off, chunk);
			off += chunk;
		}
		cr_assert_eq(s.matched >= 0, want, "round %d: scanner %d, plain search %d (\"%s\", \"%s\")", round,
			     s.matched, want, sig0, sig1);
		if (s.matched >= 0)
			cr_assert(occurs_ci(text, n, sigs[s.matched]));
		dsh_sigscan_clear(&s);
	}
#undef RND
}

/*
 * Issue 12: a command that ran is never turned into a runner failure by what it printed.  Only a
 * non-zero exit can be the runner's refusal; a status of 0 and a death by signal pass through.
 */
Test(runner, a_signature_in_the_stderr_of_a_command_that_succeeded_is_not_a_failure)
{
	struct fake_run f;
	fake_run_init(&f, NULL, DSH_MODE_READ_ONLY, (const char *const[]){ "fake-runner: refused", NULL });
	char *argv[] = { "sh", "-c", "echo 'grep: fake-runner: refused (a log line)' >&2; exit 0", NULL };
	fake_run_ok(&f, argv);
	cr_expect_eq(f.res.exit_code, 0);
	cr_expect_eq(f.res.signal, 0);
	cr_expect_str_eq(f.errtext, "grep: fake-runner: refused (a log line)\n", "relayed unchanged");
	fake_run_clear(&f);
}

Test(runner, a_signature_from_a_command_killed_by_a_signal_is_not_a_failure)
{
	struct fake_run f;
	fake_run_init(&f, NULL, DSH_MODE_READ_ONLY, (const char *const[]){ "refused", NULL });
	char *argv[] = { "sh", "-c", "echo 'REFUSED by the test' >&2; kill -KILL $$", NULL };
	fake_run_ok(&f, argv);
	cr_expect_eq(f.res.signal, SIGKILL);
	fake_run_clear(&f);
}

Test(runner, a_signature_with_a_non_zero_exit_is_a_runner_failure)
{
	struct fake_run f;
	fake_run_init(&f, "echo 'fake-runner: refused: no user namespaces' >&2; exit 1", DSH_MODE_READ_ONLY,
		      (const char *const[]){ "fake-runner: refused", NULL });
	char *argv[] = { "true", NULL };
	cr_assert_eq(fake_run(&f, argv), -EPROTO);
	cr_assert_not_null(f.e);
	cr_expect(strstr(f.e->msg, "(exit 1)"), "%s", f.e->msg);
	fake_run_clear(&f);
}
