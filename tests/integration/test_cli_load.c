/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Load errors a user meets first (SPEC 1.3, 1.5; issue 12), each one `dshbox: error:` line (and a
 * hint), exit 125, nothing on stdout and nothing run: a workspace that does not exist, is a file, or
 * is / in workspace-write (dshbox started from / without --workspace); a rule holding $NAME; a rule
 * error from a file names the file and line; diffBasisMaxBytes: 0; a blank failure signature.  And
 * `--workspace X/link/..` lands where chdir lands.
 */
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strv.h"
#include "tests/lib/harness.h"

static char *base_env[] = { "HOME=/home/u", "PATH=/usr/bin:/bin", NULL };

static void dshbox(struct dsh_proc *r, ...)
{
	char **argv = NULL;
	dsh_strv_push(&argv, dsh_test_dshbox());
	va_list ap;
	va_start(ap, r);
	for (const char *a; (a = va_arg(ap, const char *));)
		dsh_strv_push(&argv, a);
	va_end(ap);
	cr_assert_eq(dsh_proc_run(argv, base_env, NULL, r), 0);
	dsh_strv_free(argv);
}

/* exit 125, one error line holding needle, at most one hint line, nothing on stdout. */
static void expect_load_error(struct dsh_proc *r, const char *what, const char *needle, const char *hint)
{
	cr_expect_eq(r->exit_code, 125, "%s: exit %d: %s", what, r->exit_code, r->err);
	cr_expect_eq(dsh_count_lines_with_prefix(r->err, "dshbox: error: "), 1, "%s: %s", what, r->err);
	int lines = 0;
	for (const char *s = r->err; *s; s++)
		lines += *s == '\n';
	cr_expect_eq(lines, 1 + dsh_count_lines_with_prefix(r->err, "dshbox: hint: "), "%s: %s", what, r->err);
	cr_expect_str_eq(r->out, "", "%s: stdout (the command ran?)", what);
	cr_expect(strstr(r->err, needle), "%s: '%s' not in: %s", what, needle, r->err);
	if (hint)
		cr_expect(strstr(r->err, hint), "%s: hint '%s' not in: %s", what, hint, r->err);
}

Test(cli_load, a_workspace_that_does_not_exist_or_is_a_file)
{
	char *dir = dsh_test_mkdtemp(), *missing = NULL, *file = NULL;
	cr_assert(asprintf(&missing, "%s/nope", dir) > 0 && asprintf(&file, "%s/file", dir) > 0);
	dsh_test_write_file(file, "x");
	struct dsh_proc r;
	dshbox(&r, "run", "--workspace", missing, "--", "/bin/echo", "ran", NULL);
	expect_load_error(&r, "missing", "does not exist", "dshbox: hint: ");
	dsh_proc_clear(&r);
	dshbox(&r, "check", "--workspace", missing, "--read", "/etc/hostname", NULL);
	expect_load_error(&r, "missing (check)", "does not exist", NULL);
	dsh_proc_clear(&r);
	dshbox(&r, "run", "--workspace", file, "--", "/bin/echo", "ran", NULL);
	expect_load_error(&r, "a file", "is not a directory", "dshbox: hint: ");
	dsh_proc_clear(&r);
	dsh_test_rmtree(dir);
	free(dir), free(missing), free(file);
}

Test(cli_load, started_from_the_root_without_a_workspace)
{
	cr_assert_eq(chdir("/"), 0);
	struct dsh_proc r;
	dshbox(&r, "run", "--", "/bin/echo", "ran", NULL);
	expect_load_error(&r, "from /", "workspace / in workspace-write", "--workspace");
	dsh_proc_clear(&r);
	dshbox(&r, "run", "--workspace", "/tmp/..", "--", "/bin/echo", "ran", NULL);
	expect_load_error(&r, "/tmp/..", "workspace / in workspace-write", NULL);
	dsh_proc_clear(&r);
	/* Read-only makes nothing writable: / is a fine workspace there. */
	dshbox(&r, "check", "--mode", "read-only", "--read", "/etc/hostname", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	dsh_proc_clear(&r);
}

Test(cli_load, a_shell_variable_in_a_rule_is_refused_with_the_template_as_hint)
{
	char *ws = dsh_test_mkdtemp();
	static const char *const rules[][2] = {
		{ "r- $HOME/.ssh", "{{ env.HOME }}" },
		{ "-- ${XDG_CONFIG_HOME}/gh", "{{ env.XDG_CONFIG_HOME }}" },
		{ "rw /srv/$USER", "{{ env.USER }}" },
		{ "-- **/$_secret", "{{ env._secret }}" },
	};
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct dsh_proc r;
		dshbox(&r, "run", "--workspace", ws, "--access", rules[i][0], "--", "/bin/echo", "ran", NULL);
		expect_load_error(&r, rules[i][0], "is not expanded here", rules[i][1]);
		cr_expect(strstr(r.err, rules[i][0]), "names the rule: %s", r.err);
		dsh_proc_clear(&r);
	}
	/* A dollar that names nothing, or an escaped one, is a plain character. */
	static const char *const fine[] = { "-- /srv/a$", "-- /srv/$1", "-- /srv/price$$", "-- /srv/\\$HOME" };
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		struct dsh_proc r;
		dshbox(&r, "check", "--workspace", ws, "--access", fine[i], "--read", "/etc/hostname", NULL);
		cr_expect_eq(r.exit_code, 0, "%s: %s", fine[i], r.err);
		dsh_proc_clear(&r);
	}
	dsh_test_rmtree(ws);
	free(ws);
}

Test(cli_load, a_rule_error_from_a_file_names_the_file_and_line)
{
	char *ws = dsh_test_mkdtemp(), *cfg = NULL, *acc = NULL;
	cr_assert(asprintf(&cfg, "%s/dshbox.yml", ws) > 0 && asprintf(&acc, "%s/rules.txt", ws) > 0);
	struct dsh_proc r;
	char *want = NULL;

	/* a literal block: one rule per line, the blank line counted */
	dsh_test_write_file(cfg, "mode: workspace-write\naccess: |\n  -- **/*.pem\n\n  r- /srv/[oops\n");
	dshbox(&r, "run", "--config", cfg, "--workspace", ws, "--", "/bin/echo", "ran", NULL);
	cr_assert(asprintf(&want, "dshbox: error: %s:5: rule \"r- /srv/[oops\": ", cfg) > 0);
	expect_load_error(&r, "block", want, NULL);
	dsh_proc_clear(&r);
	free(want);

	/* a list */
	dsh_test_write_file(cfg, "# policy\naccess:\n  - \"-- **/*.pem\"\n  - r- $HOME/.config\n");
	dshbox(&r, "run", "--config", cfg, "--workspace", ws, "--", "/bin/echo", "ran", NULL);
	cr_assert(asprintf(&want, "dshbox: error: %s:4: rule \"r- $HOME/.config\": ", cfg) > 0);
	expect_load_error(&r, "list", want, "{{ env.HOME }}");
	dsh_proc_clear(&r);
	free(want);

	/* an access file, comments and blank lines counted */
	dsh_test_write_file(acc, "# rules\n\n-- **/*.pem\nrw /srv/*\n");
	dshbox(&r, "check", "--access-file", acc, "--workspace", ws, "--read", "/etc/hostname", NULL);
	cr_assert(asprintf(&want, "dshbox: error: %s:4: rule \"rw /srv/*\": ", acc) > 0);
	expect_load_error(&r, "access file", want, NULL);
	dsh_proc_clear(&r);
	free(want);

	/* from the command line: no file to name */
	dshbox(&r, "check", "--access", "rw /srv/*", "--workspace", ws, "--read", "/etc/hostname", NULL);
	expect_load_error(&r, "--access", "dshbox: error: rule \"rw /srv/*\": ", NULL);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws), free(cfg), free(acc);
}

Test(cli_load, zero_diff_bound_and_blank_signatures_are_configuration_errors)
{
	char *ws = dsh_test_mkdtemp(), *cfg = NULL;
	cr_assert(asprintf(&cfg, "%s/dshbox.yml", ws) > 0);
	static const char *const cases[][2] = {
		{ "diffBasisMaxBytes: 0\n", "diffBasisMaxBytes: must be positive" },
		{ "diffBasisMaxBytes: -1\n", "diffBasisMaxBytes: must be positive" },
		{ "runnerCommand: [bwrap]\nrunnerFailureSignatures: [\"bwrap:\", \"   \"]\n", "runnerFailureSignatures[1]: only whitespace" },
		{ "runnerCommand: [bwrap]\nrunnerFailureSignatures: [\"\\t\"]\n", "runnerFailureSignatures[0]: only whitespace" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dsh_test_write_file(cfg, cases[i][0]);
		struct dsh_proc r;
		dshbox(&r, "run", "--config", cfg, "--workspace", ws, "--", "/bin/echo", "ran", NULL);
		expect_load_error(&r, cases[i][0], cases[i][1], NULL);
		dsh_proc_clear(&r);
	}
	dsh_test_rmtree(ws);
	free(ws), free(cfg);
}

Test(cli_load, workspace_and_cwd_through_a_symlink_and_dot_dot_land_where_chdir_lands)
{
	/* root/x/link -> root/a/b: root/x/link/.. is root/a, not root/x. */
	char *root = dsh_test_mkdtemp(), *p = NULL, *target = NULL, *via = NULL;
	cr_assert(asprintf(&p, "%s/a/b/keep", root) > 0);
	dsh_test_write_file(p, "");
	free(p);
	cr_assert(asprintf(&p, "%s/x/keep", root) > 0);
	dsh_test_write_file(p, "");
	free(p);
	cr_assert(asprintf(&p, "%s/x/link", root) > 0 && asprintf(&target, "%s/a/b", root) > 0);
	cr_assert_eq(symlink(target, p), 0);
	cr_assert(asprintf(&via, "%s/x/link/..", root) > 0);
	char real[PATH_MAX], *want = NULL;
	cr_assert_not_null(realpath(root, real));
	cr_assert(asprintf(&want, "%s/a\n", real) > 0);

	struct dsh_proc r;
	dshbox(&r, "run", "--workspace", via, "--cwd", via, "--", "/bin/pwd", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, want, "the command starts where chdir lands");
	dsh_proc_clear(&r);

	/* and the writable root is that directory: a/new is writable, x/new is not */
	char *in_a = NULL, *in_x = NULL;
	cr_assert(asprintf(&in_a, "%s/a/new", real) > 0 && asprintf(&in_x, "%s/x/new", real) > 0);
	dshbox(&r, "check", "--workspace", via, "--write", in_a, NULL);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	dsh_proc_clear(&r);
	dshbox(&r, "check", "--workspace", via, "--write", in_x, NULL);
	cr_expect_eq(r.exit_code, 1, "%s%s", r.out, r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(root);
	free(root), free(p), free(target), free(via), free(want), free(in_a), free(in_x);
}

/*
 * The runner backend (issue 12): a command that ran and exited 0, or died of a signal, keeps its
 * status even when its stderr holds a failure signature; a runner that refused (non-zero exit with a
 * signature) is one error line and 125.
 */
Test(cli_load, a_runner_signature_from_a_command_that_ran_is_not_a_runner_failure)
{
	char *ws = dsh_test_mkdtemp(), *runner = NULL, *cfg = NULL, *refuser = NULL, *cfg2 = NULL;
	cr_assert(asprintf(&runner, "%s/fake-runner", ws) > 0 && asprintf(&cfg, "%s/dshbox.yml", ws) > 0 &&
		  asprintf(&refuser, "%s/refusing-runner", ws) > 0 && asprintf(&cfg2, "%s/refuse.yml", ws) > 0);
	/* bubblewrap's dialect: options, "--", the command */
	dsh_test_write_file(runner, "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done; shift\nexec \"$@\"\n");
	dsh_test_write_file(refuser, "#!/bin/sh\necho 'fake-runner: setting up the uid map: Permission denied' >&2\nexit 1\n");
	cr_assert_eq(chmod(runner, 0755), 0);
	cr_assert_eq(chmod(refuser, 0755), 0);
	char *yaml = NULL;
	cr_assert(asprintf(&yaml, "mode: read-only\nrunnerCommand: [\"%s\"]\nrunnerFailureSignatures: [\"fake-runner:\"]\n",
			   runner) > 0);
	dsh_test_write_file(cfg, yaml);
	free(yaml);
	cr_assert(asprintf(&yaml, "mode: read-only\nrunnerCommand: [\"%s\"]\nrunnerFailureSignatures: [\"fake-runner:\"]\n",
			   refuser) > 0);
	dsh_test_write_file(cfg2, yaml);
	free(yaml);

	struct dsh_proc r;
	dshbox(&r, "run", "--config", cfg, "--workspace", ws, "--backend", "runner", "--", "/bin/sh", "-c",
	       "echo 'log: fake-runner: retried' >&2; echo ok", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "ok\n");
	cr_expect_str_eq(r.err, "log: fake-runner: retried\n", "relayed, and nothing of dshbox's own");
	dsh_proc_clear(&r);

	dshbox(&r, "run", "--config", cfg, "--workspace", ws, "--backend", "runner", "--", "/bin/sh", "-c",
	       "echo 'fake-runner: bye' >&2; kill -TERM $$", NULL);
	cr_expect_eq(r.signal, SIGTERM, "exit %d signal %d: %s", r.exit_code, r.signal, r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 0, "%s", r.err);
	dsh_proc_clear(&r);

	dshbox(&r, "run", "--config", cfg2, "--workspace", ws, "--backend", "runner", "--", "/bin/echo", "ran", NULL);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect_str_eq(r.out, "");
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: runner "), 1, "%s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws), free(runner), free(cfg), free(refuser), free(cfg2);
}
