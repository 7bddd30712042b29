/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The seams a host meets when it drives the CLI (SPEC 11, issue 24): a configuration from a pipe
 * (--config -, /dev/fd/N) instead of a temporary file, the report on its own descriptor
 * (--report-fd N) instead of sharing stdout with the command, backend as a configuration key, and a
 * runnerCommand no backend would use refused instead of ignored.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "tests/lib/harness.h"

static char *base_env[] = { "HOME=/home/u", "PATH=/usr/bin:/bin", NULL };

/* dshbox ARGS... with stdin_data on its standard input. */
static void dshbox_in(struct dsh_proc *r, const char *stdin_data, ...)
{
	char **argv = NULL;
	dsh_strv_push(&argv, dsh_test_dshbox());
	va_list ap;
	va_start(ap, stdin_data);
	for (const char *a; (a = va_arg(ap, const char *));)
		dsh_strv_push(&argv, a);
	va_end(ap);
	cr_assert_eq(dsh_proc_run(argv, base_env, stdin_data, r), 0);
	dsh_strv_free(argv);
}

/* sh -c script, with DSHBOX set to the binary under test. */
static void shell(struct dsh_proc *r, const char *script)
{
	_cleanup_free_ char *env_dshbox = NULL;
	cr_assert(asprintf(&env_dshbox, "DSHBOX=%s", dsh_test_dshbox()) > 0);
	char *env[] = { "HOME=/home/u", "PATH=/usr/bin:/bin", env_dshbox, NULL };
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	cr_assert_eq(dsh_proc_run(argv, env, NULL, r), 0);
}

Test(cli_seams, a_configuration_from_standard_input_decides_the_run)
{
	dsh_test_require_backend();
	_cleanup_free_ char *ws = dsh_test_mkdtemp(), *out = NULL, *script = NULL;
	cr_assert(asprintf(&out, "%s/out", ws) > 0);
	cr_assert(asprintf(&script, "echo x > %s", out) > 0);
	struct dsh_proc r;
	dshbox_in(&r, "mode: read-only\n", "run", "--config", "-", "--workspace", ws, "--", "/bin/sh", "-c", script, NULL);
	cr_expect_neq(r.exit_code, 0, "read-only from the pipe: the write fails: %s", r.err);
	struct stat st;
	cr_expect_eq(stat(out, &st), -1, "nothing written under read-only");
	dsh_proc_clear(&r);
	dshbox_in(&r, "mode: workspace-write\n", "run", "--config", "-", "--workspace", ws, "--", "/bin/sh", "-c", script,
		  NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_eq(stat(out, &st), 0, "written under workspace-write");
	dsh_proc_clear(&r);
	/* The fence reads it the same way. */
	_cleanup_free_ char *secret = NULL;
	cr_assert(asprintf(&secret, "%s/secret", ws) > 0);
	dshbox_in(&r, "access: [\"-- secret\"]\n", "check", "--config", "-", "--workspace", ws, "--write", secret, NULL);
	cr_expect_neq(r.exit_code, 0, "the rule from the pipe denies: %s%s", r.out, r.err);
	cr_expect(strstr(r.out, "-- secret") || strstr(r.err, "-- secret"), "names the rule: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

Test(cli_seams, a_configuration_on_another_descriptor_and_its_errors)
{
	dsh_test_require_backend(); /* the --dry-run below plans for a backend */
	_cleanup_free_ char *ws = dsh_test_mkdtemp(), *script = NULL;
	struct dsh_proc r;
	/* /dev/fd/3 from a here-document: a pipe or a deleted file, never a name on disk to clean up. */
	cr_assert(asprintf(&script, "\"$DSHBOX\" run --config /dev/fd/3 --workspace %s --dry-run 3<<EOF\n"
				    "mode: read-only\nEOF\n", ws) > 0);
	shell(&r, script);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "mode: read-only"), "%s", r.out);
	dsh_proc_clear(&r);
	/* A bad value names where it came from. */
	dshbox_in(&r, "mode: sideways\n", "check", "--config", "-", "--workspace", ws, "--read", "/etc/hostname", NULL);
	cr_expect_eq(r.exit_code, 125);
	cr_expect(strstr(r.err, "dshbox: error: (standard input):1: mode: unknown mode 'sideways'"), "%s", r.err);
	dsh_proc_clear(&r);
	/* serve reads its requests from standard input: the configuration cannot come from there. */
	dshbox_in(&r, "mode: read-only\n", "serve", "--stdio", "--config", "-", "--workspace", ws, NULL);
	cr_expect_eq(r.exit_code, 125);
	cr_expect(strstr(r.err, "dshbox: error: --config -: standard input carries the requests"), "%s", r.err);
	cr_expect_str_eq(r.out, "", "no answer was served");
	dsh_proc_clear(&r);
	/* A directory is neither a file nor a pipe. */
	dshbox_in(&r, NULL, "check", "--config", ws, "--workspace", ws, "--read", "/etc/hostname", NULL);
	cr_expect_eq(r.exit_code, 125);
	cr_expect(strstr(r.err, "is not a regular file or a pipe"), "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

Test(cli_seams, backend_is_a_configuration_key_and_an_unused_runner_is_refused)
{
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	dshbox_in(&r, "mode: danger-full-access\nbackend: none\n", "run", "--config", "-", "--workspace", ws,
		  "--dry-run", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "backend: none"), "the configuration chose the backend: %s", r.out);
	dsh_proc_clear(&r);
	/* --backend still overrides it. */
	dshbox_in(&r, "backend: none\n", "run", "--config", "-", "--backend", "linux-ns", "--workspace", ws, "--dry-run",
		  NULL);
	cr_expect(strstr(r.out, "backend: linux-ns"), "the flag overrides: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	dshbox_in(&r, "runnerCommand: [bwrap]\nrunnerFailureSignatures: [\"bwrap: \"]\n", "run", "--config", "-",
		  "--workspace", ws, "--", "/bin/echo", "ran", NULL);
	cr_expect_eq(r.exit_code, 125);
	cr_expect(strstr(r.err, "runnerCommand: set, but the backend is auto"), "%s", r.err);
	cr_expect(strstr(r.err, "dshbox: hint: add 'backend: runner'"), "%s", r.err);
	cr_expect_str_eq(r.out, "", "nothing ran");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

Test(cli_seams, the_report_on_its_own_descriptor_is_complete_before_the_command_and_not_inherited)
{
	dsh_test_require_backend();
	_cleanup_free_ char *ws = dsh_test_mkdtemp(), *script = NULL, *report = NULL;
	cr_assert(asprintf(&report, "%s.report", ws) > 0);
	/* The command looks for the report's descriptor in itself, and reads the report, already whole. */
	cr_assert(asprintf(&script,
			   "\"$DSHBOX\" run --report-fd 3 --workspace %s --access 'r- %s' -- /bin/sh -c "
			   "'if [ -e /proc/$$/fd/3 ]; then echo inherited; else echo closed; fi; "
			   "grep -c \"\\\"backend\\\": \\\"linux-ns\\\"\" %s' 3>%s",
			   ws, report, report, report) > 0);
	struct dsh_proc r;
	shell(&r, script);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "closed\n"), "the command does not hold the report's descriptor: %s", r.out);
	cr_expect(strstr(r.out, "\n1\n"), "the report was whole before the command started: %s", r.out);
	dsh_proc_clear(&r);
	_cleanup_free_ char *json = dsh_test_read_file(report);
	cr_expect(json && strstr(json, "\"enforcement\""), "the report: %s", json ? json : "(none)");
	unlink(report);

	static const char *const bad[][3] = {
		{ "2", NULL, "--report-fd: expected a descriptor number above 2, got '2'" },
		{ "9", NULL, "--report-fd 9: not an open descriptor" },
		{ "3", "3", "--report-fd 3: also given to --preserve-fd" },
	};
	for (size_t i = 0; i < 3; i++) {
		_cleanup_free_ char *s = NULL;
		cr_assert(asprintf(&s, "\"$DSHBOX\" run --report-fd %s %s%s --workspace %s -- /bin/echo ran 3>/dev/null",
				   bad[i][0], bad[i][1] ? "--preserve-fd " : "", bad[i][1] ? bad[i][1] : "", ws) > 0);
		shell(&r, s);
		cr_expect_eq(r.exit_code, 125, "%s: %s", s, r.err);
		cr_expect(strstr(r.err, bad[i][2]), "%s: %s", s, r.err);
		cr_expect_str_eq(r.out, "", "nothing ran: %s", s);
		dsh_proc_clear(&r);
	}
	dsh_test_rmtree(ws);
}

/* The note after a failure names only what is hidden where the command works, and nothing after
   Ctrl-C: an unrelated hidden name read as a denial sends an agent the wrong way. */
Test(cli_seams, the_failure_note_names_only_what_is_hidden_where_the_command_works)
{
	dsh_test_require_backend();
	_cleanup_free_ char *ws = dsh_test_mkdtemp(), *near = NULL, *far = NULL, *sub = NULL, *out = NULL;
	_cleanup_free_ char *outside = dsh_test_mkdtemp();
	cr_assert(asprintf(&near, "-- %s/.env", ws) > 0 && asprintf(&far, "-- %s/key", outside) > 0);
	cr_assert(asprintf(&sub, "%s/sub", ws) > 0);
	cr_assert_eq(mkdir(sub, 0755), 0);
	_cleanup_free_ char *env_file = NULL, *key_file = NULL;
	cr_assert(asprintf(&env_file, "%s/.env", ws) > 0 && asprintf(&key_file, "%s/key", outside) > 0);
	dsh_test_write_file(env_file, "A=1\n");
	dsh_test_write_file(key_file, "k\n");
	struct dsh_proc r;
	dshbox_in(&r, NULL, "run", "--workspace", ws, "--cwd", ws, "--access", near, "--access", far, "--", "/bin/sh", "-c",
		  "exit 3", NULL);
	cr_expect_eq(r.exit_code, 3);
	cr_assert(asprintf(&out, "dshbox: note: the command exited 3; this run hides from it: %s/.env (rule \"%s\")\n", ws,
			   near) > 0);
	cr_expect_str_eq(r.err, out, "only the name beneath the command's directory");
	dsh_proc_clear(&r);
	/* From a subdirectory the workspace's .env is not where the command works. */
	dshbox_in(&r, NULL, "run", "--workspace", ws, "--cwd", sub, "--access", near, "--", "/bin/sh", "-c", "exit 3", NULL);
	cr_expect_eq(r.exit_code, 3);
	cr_expect_str_eq(r.err, "", "nothing hidden there");
	dsh_proc_clear(&r);
	/* Interrupted: the user knows why it ended. */
	dshbox_in(&r, NULL, "run", "--workspace", ws, "--cwd", ws, "--access", near, "--", "/bin/sh", "-c", "kill -INT $$",
		  NULL);
	cr_expect(r.exit_code == 130 || r.signal == SIGINT, "exit %d signal %d", r.exit_code, r.signal);
	cr_expect(!strstr(r.err, "dshbox: note:"), "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	dsh_test_rmtree(outside);
}

/* explain numbers the rules it prints one after another: the defaults it folds leave no gap. */
Test(cli_seams, explain_numbers_the_rules_it_shows_without_gaps)
{
	dsh_test_require_landlock();
	_cleanup_free_ char *ws = dsh_test_mkdtemp(), *rc = NULL;
	cr_assert(asprintf(&rc, "%s/.bashrc", ws) > 0);
	dsh_test_write_file(rc, "# the user's\n");
	struct dsh_proc r;
	dshbox_in(&r, NULL, "explain", "--backend", "landlock", "--workspace", ws, "--access", "-- x", "--access", "r- /etc",
		  NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\n  1. -- x\n") && strstr(r.out, "\n  2. r- /etc\n"), "%s", r.out);
	/* the default that is not folded (it exists inside a writable root) comes third */
	const char *third = strstr(r.out, "\n  3. r- ");
	cr_expect(third && strstr(third, ".bashrc"), "%s", r.out);
	/* a fourth only for the program in use, from a checkout inside a writable root (/tmp) */
	const char *fourth = strstr(r.out, "\n  4. ");
	cr_expect(!fourth || (strstr(fourth, "(program in use)") && strstr(fourth, "(program in use)") < strchr(fourth + 1, '\n')),
		  "%s", r.out);
	cr_expect_null(strstr(r.out, "\n  5. "), "%s", r.out);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

/* A secret the environment policy keeps out is said when the command fails, and --allow-env passes one. */
Test(cli_seams, removed_secrets_are_said_on_failure_and_allow_env_passes_one)
{
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	char *env[] = { "HOME=/home/u", "PATH=/usr/bin:/bin", "GITHUB_TOKEN=g", "NPM_TOKEN=n", NULL };
	dsh_test_require_backend();
	const char *argv[] = { dsh_test_dshbox(), "run", "--workspace", ws,
			       "--allow-env", "GITHUB_TOKEN", "--", "/bin/sh", "-c", "echo g=$GITHUB_TOKEN n=$NPM_TOKEN; exit 4",
			       NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 4);
	cr_expect_str_eq(r.out, "g=g n=\n", "GITHUB_TOKEN passed, NPM_TOKEN kept out");
	cr_expect(strstr(r.err, "its environment lacks (env.exclude; --allow-env NAME passes one): NPM_TOKEN\n"), "%s",
		  r.err);
	cr_expect_null(strstr(r.err, "GITHUB_TOKEN"), "%s", r.err);
	cr_expect_null(strstr(r.err, "=n"), "never a value: %s", r.err);
	dsh_proc_clear(&r);
	const char *bad[] = { dsh_test_dshbox(), "run", "--allow-env", "A=B", "--", "/bin/true", NULL };
	cr_assert_eq(dsh_proc_run((char *const *)bad, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 125);
	cr_expect(strstr(r.err, "dshbox: error: --allow-env: expected a variable's name, got 'A=B'"), "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}
