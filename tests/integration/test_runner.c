/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runner backend with the real bubblewrap (runnerCommand: [bwrap], from a YAML --config):
 * every no-rule line of verdicts.tsv gives the same outcome under `--backend runner` as under
 * `--backend linux-ns`, and both give the vector's verdict; a runner failure is exit 125 with the
 * runner's stderr relayed and one `dshbox: error:` line; a rule with runnerCommand is refused before
 * anything runs; exit statuses pass through.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "tests/lib/harness.h"

static bool have_bwrap(void)
{
	return access("/usr/bin/bwrap", X_OK) == 0 || access("/bin/bwrap", X_OK) == 0;
}

#define NEED_BWRAP()                                                              \
	do {                                                                      \
		if (!have_bwrap()) {                                              \
			DSH_SKIP("bubblewrap is not installed (apt-get install bubblewrap)"); \
			return;                                                   \
		}                                                                 \
	} while (0)

static char *write_config(const char *dir, const char *body)
{
	char *path = NULL;
	cr_assert(asprintf(&path, "%s/dshbox.yml", dir) > 0);
	dsh_test_write_file(path, body);
	return path;
}

static const char *const bwrap_config = "runnerCommand: [bwrap]\n"
					"runnerFailureSignatures: [\"bwrap:\"]\n";

static void mkparents(const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0)
			cr_assert_eq(errno, EEXIST, "mkdir %s: %s", p, strerror(errno));
		*s = '/';
	}
}

static bool under_tmp(const char *path)
{
	return strcmp(path, "/tmp") == 0 || strncmp(path, "/tmp/", 5) == 0;
}

/* allow, deny, or what the probe said when it is neither. */
static const char *outcome(const struct dsh_proc *r)
{
	if (strcmp(r->out, "ok\n") == 0 && r->exit_code == 0)
		return "allow";
	if ((strcmp(r->out, "EACCES\n") == 0 || strcmp(r->out, "EROFS\n") == 0) && r->exit_code == 1)
		return "deny";
	return r->out[0] ? r->out : "(nothing)";
}

Test(runner_bwrap, no_rule_verdicts_agree_with_linux_ns, .timeout = 300)
{
	NEED_BWRAP();
	struct dsh_vectors v;
	dsh_vectors_load("verdicts.tsv", &v);
	_cleanup_free_ char *probe = dsh_test_helper("probe_access");
	size_t ran = 0;
	for (size_t i = 0; i < v.n_cases; i++) {
		struct dsh_vector *c = &v.cases[i];
		cr_assert_eq(c->n_fields, 5, "verdicts.tsv:%d: 5 fields", c->line);
		if (strcmp(c->fields[1], "-") != 0)
			continue; /* rules are refused with runnerCommand (SPEC 1.5) */
		const char *mode = c->fields[0], *op = c->fields[2], *want = c->fields[4];
		/* SPEC 3.6: read-only mode gets a private writable /tmp under linux-ns (nothing reaches the
		   host), the runner's official arguments a read-only one; the vectors' deny is the policy's
		   (the file fence's), checked by the fence conformance. */
		if (strcmp(mode, "read-only") == 0 && under_tmp(c->fields[3]))
			continue;
		_cleanup_free_ char *root = dsh_test_mkdtemp();
		_cleanup_free_ char *ws = NULL, *path = NULL;
		cr_assert(asprintf(&ws, "%s%s", root, v.workspace) > 0);
		/* /tmp is private in both sandboxes (tmp: private for linux-ns): its paths stay /tmp
		   (TMPDIR=/tmp, as the vectors say);
		   every other path is re-rooted under the scratch tree. */
		if (under_tmp(c->fields[3]))
			path = strdup(c->fields[3]);
		else
			cr_assert(asprintf(&path, "%s%s", root, c->fields[3]) > 0);
		mkparents(ws);
		mkdir(ws, 0755);
		_cleanup_free_ char *cfg = write_config(root, bwrap_config);
		/* tmp: private for linux-ns too, so that /tmp/x never lands in the host's /tmp. */
		_cleanup_free_ char *private_dir = NULL;
		cr_assert(asprintf(&private_dir, "%s/private-tmp", root) > 0);
		mkdir(private_dir, 0755);
		_cleanup_free_ char *private_cfg = write_config(private_dir, "tmp: private\n");

		_cleanup_strv_ char **env = NULL;
		dsh_strv_push(&env, "PATH=/usr/bin:/bin");
		dsh_strv_push(&env, "TMPDIR=/tmp");
		dsh_strv_pushf(&env, "HOME=%s/home/u", root);

		const char *results[2];
		int exits[2];
		for (int b = 0; b < 2; b++) {
			/* A fresh host file for each backend (a directory: no earlier probe's file). */
			if (!under_tmp(path)) {
				struct stat st;
				if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
					_cleanup_free_ char *old = NULL;
					cr_assert(asprintf(&old, "%s/.probe-write", path) > 0);
					unlink(old);
				} else {
					mkparents(path);
					dsh_test_write_file(path, "orig\n");
				}
			}
			char *argv[32];
			int n = 0;
			argv[n++] = (char *)dsh_test_dshbox();
			argv[n++] = "run";
			argv[n++] = "--config";
			argv[n++] = b == 1 ? cfg : private_cfg;
			argv[n++] = "--backend";
			argv[n++] = b == 0 ? "linux-ns" : "runner";
			argv[n++] = "--mode";
			argv[n++] = (char *)mode;
			argv[n++] = "--workspace";
			argv[n++] = ws;
			argv[n++] = "--cwd";
			argv[n++] = ws;
			argv[n++] = "--";
			argv[n++] = probe;
			argv[n++] = (char *)op;
			argv[n++] = path;
			if (strcmp(op, "write") == 0)
				argv[n++] = "written\n";
			argv[n] = NULL;
			struct dsh_proc r;
			cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
			results[b] = strdup(outcome(&r));
			exits[b] = r.exit_code;
			const char *name = b == 0 ? "linux-ns" : "runner";
			cr_expect_str_eq(results[b], want, "verdicts.tsv:%d (%s %s %s) under %s: %s, stderr: %s", c->line,
					 mode, op, c->fields[3], name, results[b], r.err);
			if (strcmp(want, "allow") == 0) {
				cr_expect_str_eq(r.err, "", "verdicts.tsv:%d under %s: a successful run prints nothing: %s",
						 c->line, name, r.err);
				if (strcmp(op, "write") == 0 && !under_tmp(path)) {
					/* a directory is written into, as PATH/.probe-write */
					struct stat st;
					_cleanup_free_ char *landed = NULL;
					if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
						cr_assert(asprintf(&landed, "%s/.probe-write", path) > 0);
					_cleanup_free_ char *content = dsh_test_read_file(landed ? landed : path);
					cr_expect_str_eq(content ? content : "", "written\n",
							 "verdicts.tsv:%d under %s: the allowed write did not land", c->line,
							 name);
				}
			}
			if (strcmp(want, "deny") == 0 && strcmp(op, "write") == 0 && !under_tmp(path)) {
				_cleanup_free_ char *content = dsh_test_read_file(path);
				cr_expect_str_eq(content ? content : "", "orig\n",
						 "verdicts.tsv:%d under %s: a denied write changed the host file", c->line, name);
			}
			dsh_proc_clear(&r);
		}
		cr_expect_str_eq(results[0], results[1], "verdicts.tsv:%d: linux-ns says %s, runner says %s", c->line,
				 results[0], results[1]);
		cr_expect_eq(exits[0], exits[1], "verdicts.tsv:%d: exit %d under linux-ns, %d under runner", c->line,
			     exits[0], exits[1]);
		free((char *)results[0]);
		free((char *)results[1]);
		dsh_test_rmtree(root);
		ran++;
	}
	fprintf(stderr, "runner: %zu no-rule lines of verdicts.tsv agree between linux-ns and bwrap\n", ran);
	cr_expect_gt(ran, 0);
	dsh_vectors_clear(&v);
}

static void run_in(struct dsh_proc *r, const char *dir, const char *cfg, const char *const *extra,
		   const char *const *cmd)
{
	char *argv[48];
	int n = 0;
	argv[n++] = (char *)dsh_test_dshbox();
	argv[n++] = "run";
	argv[n++] = "--config";
	argv[n++] = (char *)cfg;
	argv[n++] = "--backend";
	argv[n++] = "runner";
	argv[n++] = "--workspace";
	argv[n++] = (char *)dir;
	argv[n++] = "--cwd";
	argv[n++] = (char *)dir;
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = (char *)extra[i];
	argv[n++] = "--";
	for (size_t i = 0; cmd[i]; i++)
		argv[n++] = (char *)cmd[i];
	argv[n] = NULL;
	char *env[] = { "PATH=/usr/bin:/bin", NULL };
	cr_assert_eq(dsh_proc_run(argv, env, NULL, r), 0);
}

Test(runner_bwrap, exit_status_and_stderr_pass_through)
{
	NEED_BWRAP();
	_cleanup_free_ char *dir = dsh_test_mkdtemp();
	_cleanup_free_ char *cfg = write_config(dir, bwrap_config);
	struct dsh_proc r;
	run_in(&r, dir, cfg, NULL, (const char *const[]){ "sh", "-c", "echo out; echo err >&2; exit 7", NULL });
	cr_expect_eq(r.exit_code, 7, "stderr: %s", r.err);
	cr_expect_str_eq(r.out, "out\n");
	cr_expect_str_eq(r.err, "err\n");
	dsh_proc_clear(&r);
	/* bwrap reports a command killed by SIGTERM as 128+15; dshbox passes that on. */
	run_in(&r, dir, cfg, NULL, (const char *const[]){ "sh", "-c", "kill -TERM $$", NULL });
	cr_expect(r.exit_code == 143 || r.signal == 15, "exit %d signal %d", r.exit_code, r.signal);
	dsh_proc_clear(&r);
	dsh_test_rmtree(dir);
}

Test(runner_bwrap, runner_failure_is_125_with_its_stderr_relayed)
{
	NEED_BWRAP();
	_cleanup_free_ char *dir = dsh_test_mkdtemp();
	_cleanup_free_ char *cfg = write_config(dir, "runnerCommand: [bwrap, --no-such-option]\n"
						     "runnerFailureSignatures: [\"BWRAP: Unknown option\"]\n");
	_cleanup_free_ char *mark = NULL;
	cr_assert(asprintf(&mark, "%s/ran", dir) > 0);
	struct dsh_proc r;
	run_in(&r, dir, cfg, NULL, (const char *const[]){ "touch", mark, NULL });
	cr_expect_eq(r.exit_code, 125, "stderr: %s", r.err);
	cr_expect(strstr(r.err, "bwrap: Unknown option --no-such-option"), "the runner's own line is relayed: %s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "runnerFailureSignatures"), "%s", r.err);
	cr_expect_eq(access(mark, F_OK), -1, "the command ran");
	dsh_proc_clear(&r);
	dsh_test_rmtree(dir);
}

Test(runner_bwrap, a_rule_with_runner_command_is_refused_before_anything_runs)
{
	NEED_BWRAP();
	_cleanup_free_ char *dir = dsh_test_mkdtemp();
	_cleanup_free_ char *cfg = write_config(dir, bwrap_config);
	_cleanup_free_ char *mark = NULL;
	cr_assert(asprintf(&mark, "%s/ran", dir) > 0);
	struct dsh_proc r;
	run_in(&r, dir, cfg, (const char *const[]){ "--access", "r- .git", NULL },
	       (const char *const[]){ "touch", mark, NULL });
	cr_expect_eq(r.exit_code, 125);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "runnerCommand cannot be combined with access rules"), "%s", r.err);
	cr_expect(strstr(r.err, "r- .git"), "%s", r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: hint: "), 1, "%s", r.err);
	cr_expect_str_eq(r.out, "");
	cr_expect_eq(access(mark, F_OK), -1, "the command ran");
	dsh_proc_clear(&r);
	dsh_test_rmtree(dir);
}

Test(runner_bwrap, danger_without_rules_runs_directly)
{
	_cleanup_free_ char *dir = dsh_test_mkdtemp();
	/* a runner that would fail loudly: it must not be used */
	_cleanup_free_ char *cfg = write_config(dir, "runnerCommand: [/bin/false]\n"
						     "runnerFailureSignatures: [\"never\"]\n");
	struct dsh_proc r;
	run_in(&r, dir, cfg, (const char *const[]){ "--mode", "danger-full-access", NULL },
	       (const char *const[]){ "sh", "-c", "exit 3", NULL });
	cr_expect_eq(r.exit_code, 3, "stderr: %s", r.err);
	dsh_proc_clear(&r);
	run_in(&r, dir, cfg, (const char *const[]){ "--mode", "danger-full-access", NULL },
	       (const char *const[]){ "dshbox-no-such-command", NULL });
	cr_expect_eq(r.exit_code, 127, "stderr: %s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(dir);
}

Test(runner_bwrap, network_off_reaches_the_runner)
{
	NEED_BWRAP();
	_cleanup_free_ char *dir = dsh_test_mkdtemp();
	_cleanup_free_ char *cfg = write_config(dir, bwrap_config);
	_cleanup_free_ char *probe = dsh_test_helper("probe_access");
	struct dsh_proc r;
	/* loopback works, the outside is unreachable (no route in a fresh network namespace) */
	run_in(&r, dir, cfg, (const char *const[]){ "--network", "off", NULL },
	       (const char *const[]){ probe, "listen-connect", NULL });
	cr_expect_str_eq(r.out, "ok\n", "loopback under --network off: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	run_in(&r, dir, cfg, (const char *const[]){ "--network", "off", NULL },
	       (const char *const[]){ probe, "connect", "192.0.2.1", "9", NULL });
	cr_expect_str_eq(r.out, "ENETUNREACH\n", "outside under --network off: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(dir);
}
