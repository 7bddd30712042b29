/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policy at the command line: every rejection class of SPEC 1.2 and the configuration checks
 * of 1.5 give exit 125, exactly one "dshbox: error:" line naming the rule and the reason, and
 * nothing on stdout; check's verdicts and exit codes; explain's report.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strv.h"
#include "tests/lib/harness.h"

/* A controlled environment: the rules' {{ env.* }} see only these. */
static char *base_env[] = { "HOME=/home/u", "EMPTY=", "PATH=/usr/bin:/bin", "TMPDIR=/tmp", NULL };

static void run_dshbox(struct dsh_proc *r, const char *stdin_data, ...)
{
	char *argv[64];
	int n = 0;
	argv[n++] = (char *)dsh_test_dshbox();
	va_list ap;
	va_start(ap, stdin_data);
	for (char *a; (a = va_arg(ap, char *)) && n < 63;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run(argv, base_env, stdin_data, r), 0);
}

/* exit 125, one error line containing every needle, nothing on stdout. */
static void expect_rejected(struct dsh_proc *r, const char *what, const char *needle1, const char *needle2)
{
	cr_expect_eq(r->exit_code, 125, "%s: exit %d, stderr: %s", what, r->exit_code, r->err);
	cr_expect_eq(dsh_count_lines_with_prefix(r->err, "dshbox: error: "), 1, "%s: stderr: %s", what, r->err);
	int lines = 0;
	for (const char *s = r->err; *s; s++)
		lines += *s == '\n';
	int hints = dsh_count_lines_with_prefix(r->err, "dshbox: hint: ");
	cr_expect_eq(lines, 1 + hints, "%s: only the error and a hint may be printed: %s", what, r->err);
	cr_expect_str_eq(r->out, "", "%s: stdout must stay empty", what);
	if (needle1)
		cr_expect(strstr(r->err, needle1), "%s: '%s' not in: %s", what, needle1, r->err);
	if (needle2)
		cr_expect(strstr(r->err, needle2), "%s: '%s' not in: %s", what, needle2, r->err);
}

struct reject_case {
	const char *rule;
	const char *reason;
};

static const struct reject_case reject_cases[] = {
	{ "/etc/shadow", "missing or unknown prefix" },
	{ "xx /a", "missing or unknown prefix" },
	{ "RW /a", "missing or unknown prefix" },
	{ "rw/a", "unknown prefix" },
	{ "--", "nothing follows the prefix" },
	{ "r-    ", "nothing follows the prefix" },
	{ "rw /opt/*", "must be concrete" },
	{ "rw /opt/[ab]", "must be concrete" },
	{ "-- {{ env.DSHBOX_UNSET_VARIABLE }}/x", "DSHBOX_UNSET_VARIABLE is not set" },
	{ "-- {{ env.EMPTY }}/x", "EMPTY is empty" },
	{ "-- {{ env.HOME /x", "not closed" },
	{ "-- {{ HOME }}/x", "may only hold env.NAME" },
	{ "-- {{ env.HOME | x }}", "may only hold env.NAME" },
	{ "-- /a/[bc", "unclosed '['" },
	{ "-- /a/[]/b", "empty class" },
	{ "-- /a\tb", "control character" },
	{ "-- /a\x1b[31m", "control character" },
	{ "-- ~/.ssh", "may not start with '~'" },
};

Test(cli_policy, every_rejection_class_is_one_error_line_and_exit_125)
{
	for (size_t i = 0; i < sizeof(reject_cases) / sizeof(reject_cases[0]); i++) {
		struct dsh_proc r;
		run_dshbox(&r, NULL, "check", "--read", "--access", reject_cases[i].rule, "/etc/passwd", NULL);
		expect_rejected(&r, reject_cases[i].rule, reject_cases[i].reason, "rule \"");
		dsh_proc_clear(&r);
	}
}

Test(cli_policy, tilde_rule_gets_a_hint)
{
	struct dsh_proc r;
	run_dshbox(&r, NULL, "explain", "--access", "-- ~/.ssh", NULL);
	expect_rejected(&r, "tilde", "~", NULL);
	cr_expect(strstr(r.err, "dshbox: hint: write {{ env.HOME }}"), "%s", r.err);
	dsh_proc_clear(&r);
}

Test(cli_policy, path_longer_than_path_max_is_rejected)
{
	char rule[5000] = "-- /";
	memset(rule + 4, 'a', 4200);
	rule[4204] = '\0';
	struct dsh_proc r;
	run_dshbox(&r, NULL, "check", "--read", "--access", rule, "/etc/passwd", NULL);
	expect_rejected(&r, "PATH_MAX", "longer than PATH_MAX", NULL);
	dsh_proc_clear(&r);
}

Test(cli_policy, workspace_inside_a_deny_rule_is_a_load_error)
{
	struct dsh_proc r;
	run_dshbox(&r, NULL, "check", "--read", "--workspace", "/var/lib/dshbox-ws", "--access", "-- /var/lib",
		   "/etc/passwd", NULL);
	expect_rejected(&r, "workspace inside --", "workspace", "-- /var/lib");
	dsh_proc_clear(&r);
}

static char *write_config(const char *dir, const char *yaml)
{
	char *path = NULL;
	cr_assert(asprintf(&path, "%s/dshbox.yml", dir) > 0);
	dsh_test_write_file(path, yaml);
	return path;
}

struct config_case {
	const char *yaml;
	const char *needle;
};

static const struct config_case config_cases[] = {
	{ "mode: workspace-write\nbogus: 1\n", "bogus: unknown key" },
	{ "mode: sideways\n", "unknown mode 'sideways'" },
	{ "runnerCommand: [bwrap]\n", "runnerFailureSignatures: required" },
	{ "runnerCommand: [bwrap]\nrunnerFailureSignatures: []\n", "runnerFailureSignatures: required" },
	{ "runnerFailureSignatures: [\"bwrap:\"]\n", "only allowed together with runnerCommand" },
	{ "runnerCommand: [bwrap]\nrunnerFailureSignatures: [\"\"]\n", "empty" },
	{ "runnerCommand: [bwrap]\nrunnerFailureSignatures: [\"a\\nb\"]\n", "single line" },
	{ "probeTimeoutMs: 0\n", "probeTimeoutMs: must be positive" },
	{ "probeTimeoutMs: -5\n", "probeTimeoutMs: must be positive" },
	{ "probeTimeoutMs: soon\n", "expected an integer" },
	{ "maxMasks: 0\n", "maxMasks: must be positive" },
	{ "network: maybe\n", "expected 'on' or 'off'" },
	{ "protectSockets: perhaps\n", "expected true or false" },
	{ "allowUnixSockets: [relative/agent.sock]\n", "allowUnixSockets[0]: 'relative/agent.sock' is neither an absolute path nor an abstract name (@name)" },
	{ "allowUnixSockets: [\"{{ env.DSHBOX_TEST_UNSET_SOCK }}\"]\n", "allowUnixSockets[0]: environment variable DSHBOX_TEST_UNSET_SOCK is not set" },
	{ "allowUnixSockets: /run/agent.sock\n", "allowUnixSockets: expected a list" },
	{ "access: [\"-- /a/[b\"]\n", "unclosed '['" },
	{ "access: |\n  -- /ok\n  rw /bad/*\n", "must be concrete" },
	{ "mode: read-only\nmode: read-only\n", "duplicate key" },
	{ "- just\n- a list\n", "expected a mapping" },
	{ "mode: [unclosed\n", "dshbox.yml:" },
};

Test(cli_policy, configuration_mistakes_are_one_error_line_and_exit_125)
{
	char *dir = dsh_test_mkdtemp();
	for (size_t i = 0; i < sizeof(config_cases) / sizeof(config_cases[0]); i++) {
		char *cfg = write_config(dir, config_cases[i].yaml);
		struct dsh_proc r;
		run_dshbox(&r, NULL, "check", "--config", cfg, "--read", "/etc/passwd", NULL);
		expect_rejected(&r, config_cases[i].yaml, config_cases[i].needle, NULL);
		dsh_proc_clear(&r);
		free(cfg);
	}
	dsh_test_rmtree(dir);
	free(dir);
}

Test(cli_policy, usage_mistakes_are_one_error_line_and_exit_125)
{
	struct dsh_proc r;
	run_dshbox(&r, NULL, "check", "/etc/passwd", NULL);
	expect_rejected(&r, "no --read/--write", "--read or --write", NULL);
	dsh_proc_clear(&r);
	run_dshbox(&r, NULL, "check", "--read", "--mode", "yolo", "/x", NULL);
	expect_rejected(&r, "bad mode", "unknown mode 'yolo'", NULL);
	dsh_proc_clear(&r);
	run_dshbox(&r, NULL, "check", "--read", "--network", "maybe", "/x", NULL);
	expect_rejected(&r, "bad network", "expected 'on' or 'off'", NULL);
	dsh_proc_clear(&r);
	run_dshbox(&r, NULL, "nonsense", NULL);
	expect_rejected(&r, "unknown command", "unknown command", NULL);
	dsh_proc_clear(&r);
	run_dshbox(&r, NULL, "check", "--read", "--config", "/nonexistent/dshbox.yml", "/x", NULL);
	expect_rejected(&r, "missing config", "/nonexistent/dshbox.yml", NULL);
	dsh_proc_clear(&r);
}

Test(cli_policy, check_answers_with_the_deciding_rule_and_exit_code)
{
	char *ws = dsh_test_mkdtemp();
	char *key = NULL, *src = NULL;
	cr_assert(asprintf(&key, "%s/deep/id.pem", ws) > 0);
	cr_assert(asprintf(&src, "%s/src/main.c", ws) > 0);
	dsh_test_write_file(key, "k");
	dsh_test_write_file(src, "int main;");

	struct dsh_proc r;
	run_dshbox(&r, NULL, "check", "--workspace", ws, "--access", "-- **/*.pem", "--write", src, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "allow write "), "%s", r.out);
	cr_expect(strstr(r.out, "writable root"), "%s", r.out);
	dsh_proc_clear(&r);

	run_dshbox(&r, NULL, "check", "--workspace", ws, "--access", "-- **/*.pem", "--read", src, key, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect(strstr(r.out, "deny read "), "%s", r.out);
	cr_expect(strstr(r.out, "(rule \"-- **/*.pem\")"), "%s", r.out);
	cr_expect_str_eq(r.err, "", "nothing of dshbox's own on stderr");
	dsh_proc_clear(&r);

	/* A symlink into the denied file is denied: matching is on the canonical path. */
	char *link = NULL;
	cr_assert(asprintf(&link, "%s/innocent.txt", ws) > 0);
	cr_assert_eq(symlink(key, link), 0);
	run_dshbox(&r, NULL, "check", "--workspace", ws, "--access", "-- **/*.pem", "--read", link, NULL);
	cr_expect_eq(r.exit_code, 1, "symlink to a denied file: %s", r.out);
	dsh_proc_clear(&r);

	/* A deny rule covering the path as spelled denies even where the target is elsewhere, as the
	   file fence does. */
	char *spelled = NULL, *other = NULL;
	cr_assert(asprintf(&spelled, "%s/secret", ws) > 0);
	cr_assert(asprintf(&other, "%s/src", ws) > 0);
	cr_assert_eq(symlink(other, spelled), 0);
	run_dshbox(&r, NULL, "check", "--workspace", ws, "--access", "-- secret*", "--read", spelled, other, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.out);
	cr_expect(strstr(r.out, "deny read "), "%s", r.out);
	cr_expect(strstr(r.out, "allow read "), "the target by its own name stays readable: %s", r.out);
	dsh_proc_clear(&r);
	free(spelled);
	free(other);

	run_dshbox(&r, NULL, "check", "--workspace", ws, "--mode", "read-only", "--write", src, NULL);
	cr_expect_eq(r.exit_code, 1);
	cr_expect(strstr(r.out, "(mode read-only)"), "%s", r.out);
	dsh_proc_clear(&r);

	dsh_test_rmtree(ws);
	free(ws);
	free(key);
	free(src);
	free(link);
}

/* An absolute path of the vectors moved under root; a relative one as it is. */
static char *reroot(const char *root, const char *p)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s%s", p[0] == '/' ? root : "", p) > 0);
	return s;
}

Test(cli_policy, check_runs_the_verdict_vectors)
{
	/*
	 * verdicts.tsv through the command line, in its own environment, as a host would call it.  The
	 * CLI refuses a workspace that does not exist (SPEC 1.3) and the vectors' /ws does not, so every
	 * absolute path of the file (workspace, TMPDIR, the environment, rules, paths) is moved under a
	 * scratch root where the workspace is made.
	 */
	struct dsh_vectors v;
	dsh_vectors_load("verdicts.tsv", &v);
	char *root = dsh_test_mkdtemp();
	char *ws = reroot(root, v.workspace);
	cr_assert(mkdir(ws, 0755) == 0);
	char **env = NULL;
	for (size_t i = 0; v.env && v.env[i]; i++) {
		const char *eq = strchr(v.env[i], '=');
		dsh_strv_pushf(&env, "%.*s=%s%s", (int)(eq - v.env[i]), v.env[i], eq[1] == '/' ? root : "", eq + 1);
	}
	dsh_strv_pushf(&env, "TMPDIR=%s%s", root, v.tmpdir ? v.tmpdir : "/tmp");
	size_t ran = 0;
	for (size_t i = 0; i < v.n_cases; i++) {
		struct dsh_vector *c = &v.cases[i];
		char **argv = NULL;
		dsh_strv_push(&argv, dsh_test_dshbox());
		dsh_strv_push(&argv, "check");
		dsh_strv_push(&argv, "--mode");
		dsh_strv_push(&argv, c->fields[0]);
		dsh_strv_push(&argv, "--workspace");
		dsh_strv_push(&argv, ws);
		if (dsh_vectors_config(&v)) {
			dsh_strv_push(&argv, "--config");
			dsh_strv_push(&argv, dsh_vectors_config(&v));
		}
		if (strcmp(c->fields[1], "-") != 0) {
			char *rules = strdup(c->fields[1]), *save = NULL;
			for (char *rl = strtok_r(rules, ";", &save); rl; rl = strtok_r(NULL, ";", &save)) {
				rl += strspn(rl, " ");
				dsh_strv_push(&argv, "--access");
				dsh_strv_pushf(&argv, "%.3s%s%s", rl, rl[3] == '/' ? root : "", rl + 3);
			}
			free(rules);
		}
		dsh_strv_pushf(&argv, "--%s", c->fields[2]);
		dsh_strv_push_take(&argv, reroot(root, c->fields[3]));
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
		int want = strcmp(c->fields[4], "allow") == 0 ? 0 : 1;
		cr_expect_eq(r.exit_code, want, "verdicts.tsv:%d: exit %d: %s%s", c->line, r.exit_code, r.out, r.err);
		dsh_proc_clear(&r);
		dsh_strv_free(argv);
		ran++;
	}
	fprintf(stderr, "conformance: verdicts.tsv through 'dshbox check': %zu vector lines ran\n", ran);
	cr_expect_eq(ran, v.n_cases);
	dsh_strv_free(env);
	dsh_vectors_clear(&v);
	dsh_test_rmtree(root);
	free(root);
	free(ws);
}

Test(cli_policy, explain_reports_roots_rules_and_warnings)
{
	char *ws = dsh_test_mkdtemp();
	char *cache = NULL;
	cr_assert(asprintf(&cache, "%s/cache", ws) > 0);
	struct dsh_proc r;
	run_dshbox(&r, NULL, "explain", "--json", "--workspace", ws, "--access", "-- /var/tmp/dshbox-nope",
		   "--access", "r- {{ env.HOME }}/.config", "--access", "-- /srv/secret", "--access", "rw /srv/secret/cache",
		   NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"mode\": \"workspace-write\""), "%s", r.out);
	cr_expect(strstr(r.out, "/home/u/.config"), "%s", r.out);
	cr_expect(strstr(r.out, "neither readable nor writable"), "a dead writable root is warned: %s", r.out);
	cr_expect_str_eq(r.err, "", "explain prints its warnings on stdout only");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
	free(cache);
}

Test(cli_policy, warnings_go_to_stderr_only_when_asked)
{
	struct dsh_proc r;
	run_dshbox(&r, NULL, "check", "--read", "--mode", "read-only", "--access", "rw /srv/x", "/etc/passwd", NULL);
	cr_expect_eq(r.exit_code, 0);
	cr_expect_str_eq(r.err, "");
	dsh_proc_clear(&r);
	run_dshbox(&r, NULL, "check", "--warnings=stderr", "--read", "--mode", "read-only", "--access", "rw /srv/x",
		   "/etc/passwd", NULL);
	cr_expect_eq(r.exit_code, 0);
	cr_expect(strstr(r.err, "dshbox: warning: rule \"rw /srv/x\" is ignored in read-only mode"), "%s", r.err);
	dsh_proc_clear(&r);
}

Test(cli_policy, check_takes_options_after_the_paths)
{
	struct dsh_proc r;
	run_dshbox(&r, NULL, "check", "--write", "/etc/hosts", "--warnings=stderr", "--mode", "read-only", "--access",
		   "rw /srv/x", NULL);
	cr_expect_eq(r.exit_code, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "deny write /etc/hosts (mode read-only)"), "%s", r.out);
	cr_expect(strstr(r.err, "dshbox: warning: "), "%s", r.err);
	dsh_proc_clear(&r);
}

Test(cli_policy, a_large_stdin_does_not_deadlock_the_harness)
{
	/* cat answers while it reads: the harness must interleave its writes with its reads. */
	size_t n = 4 << 20;
	char *big = malloc(n + 1);
	memset(big, 'x', n);
	big[n] = '\0';
	char *argv[] = { "cat", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, NULL, big, &r), 0);
	cr_expect_eq(strlen(r.out), n);
	dsh_proc_clear(&r);
	free(big);
}

/*
 * From a directory that was deleted under it, every command that loads a policy fails cleanly:
 * one error line with a hint, exit 125, nothing run (it used to free a configuration it had never
 * initialised).  The ASan build runs this too.
 */
Test(cli_policy, a_deleted_current_directory_is_one_error)
{
	char *dir = dsh_test_mkdtemp();
	cr_assert_eq(chdir(dir), 0);
	cr_assert_eq(rmdir(dir), 0);
	static const char *const cmds[][4] = {
		{ "check", "--read", "/etc/hostname", NULL },
		{ "explain", NULL },
		{ "run", "--", "true", NULL },
		{ "fs", "read", "/etc/hostname", NULL },
		{ "serve", "--stdio", NULL },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct dsh_proc r;
		run_dshbox(&r, "", cmds[i][0], cmds[i][1], cmds[i][2], cmds[i][3], NULL);
		expect_rejected(&r, cmds[i][0], "cannot read the current directory", NULL);
		cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: hint: "), 1, "%s: %s", cmds[i][0], r.err);
		dsh_proc_clear(&r);
	}
	cr_assert_eq(chdir("/"), 0);
	free(dir);
}
