/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Planning fails closed (SPEC 3.13): a target that cannot be looked at for any reason but absence
 * fails the run; a directory of another user that this user cannot search is skipped with a note.
 * Planned as an unprivileged user: run as root, the test plans in a child that becomes nobody.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "landlock/landlock.h"
#include "ns/plan.h"
#include "tests/lib/harness.h"

#define NOBODY 65534

static char *base_env[] = { "PATH=/usr/bin:/bin", NULL };

/* Plan the rules (NULL-terminated) in ws as an unprivileged user: 0 planned (out: the plan's notes,
   then a line "entry PATH" for each target it masks or binds), 1 refused (out: the error), anything
   else: the child's own setup failed. */
static int plan_rules_as_user(const char *ws, const char *const *rules, char *out, size_t out_len)
{
	int pipefd[2];
	cr_assert_eq(pipe(pipefd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(pipefd[0]);
		if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
				       setresuid(NOBODY, NOBODY, NOBODY) < 0))
			_exit(10);
		struct dsh_config cfg;
		dsh_config_init(&cfg);
		cfg.workspace = strdup(ws);
		cfg.protect_defaults = false;
		cfg.protect_sockets = false;
		for (size_t i = 0; rules[i]; i++)
			dsh_strv_push(&cfg.access, rules[i]);
		struct dsh_policy *p = NULL;
		struct dsh_error *err = NULL;
		struct dsh_run_options ro;
		if (dsh_policy_new(&cfg, base_env, ws, &p, &err) < 0 || dsh_run_options_init(&ro, &cfg, base_env, &err) < 0)
			_exit(11);
		struct dsh_mount_plan *plan = NULL;
		int r = dsh_mount_plan_build(p, &ro, &plan, &err);
		struct dsh_buf b = { 0 };
		if (r < 0)
			dsh_buf_add(&b, err->msg);
		for (size_t i = 0; r >= 0 && plan->notes && plan->notes[i]; i++)
			dsh_buf_addf(&b, "%s\n", plan->notes[i]);
		for (size_t i = 0; r >= 0 && i < plan->n; i++)
			if (plan->entries[i].rule)
				dsh_buf_addf(&b, "entry %s\n", plan->entries[i].path);
		if (b.s && write(pipefd[1], b.s, b.len) < 0)
			_exit(12);
		_exit(r < 0 ? 1 : 0);
	}
	close(pipefd[1]);
	ssize_t n = read(pipefd[0], out, out_len - 1);
	out[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int plan_as_user(const char *ws, const char *rule, char *out, size_t out_len)
{
	const char *const rules[] = { rule, NULL };
	return plan_rules_as_user(ws, rules, out, out_len);
}

/* The scratch tree belongs to the planning user (when root: to nobody). */
static void own(const char *path)
{
	if (geteuid() == 0)
		cr_assert_eq(chown(path, NOBODY, NOBODY), 0);
}

Test(run_planning, an_unsearchable_own_directory_fails_the_run)
{
	char *root = dsh_test_mkdtemp();
	cr_assert_eq(chmod(root, 0755), 0);
	_cleanup_free_ char *ws = NULL, *d = NULL, *secret = NULL, *rule = NULL;
	cr_assert(asprintf(&ws, "%s/ws", root) > 0 && asprintf(&d, "%s/d", ws) > 0 &&
		  asprintf(&secret, "%s/secret", d) > 0 && asprintf(&rule, "-- %s", secret) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(mkdir(d, 0755), 0);
	dsh_test_write_file(secret, "s\n");
	own(ws), own(d), own(secret);
	/* What a command did in an earlier run: the directory above the target made unsearchable. */
	cr_assert_eq(chmod(d, 0), 0);
	char out[4096];
	int r = plan_as_user(ws, rule, out, sizeof(out));
	cr_expect_eq(r, 1, "planned anyway (%d): %s", r, out);
	cr_expect(strstr(out, secret) && strstr(out, "Permission denied"), "%s", out);
	cr_assert_eq(chmod(d, 0755), 0);
	dsh_test_rmtree(root);
	free(root);
}

Test(run_planning, a_directory_of_another_user_is_skipped_with_a_note)
{
	char *root = dsh_test_mkdtemp();
	cr_assert_eq(chmod(root, 0755), 0);
	_cleanup_free_ char *ws = NULL, *db = NULL, *rule = NULL;
	cr_assert(asprintf(&ws, "%s/ws", root) > 0 && asprintf(&rule, "-- **/*.pem") > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
	own(ws);
	if (geteuid() == 0) {
		/* A database volume: root's own, unreadable to the planning user. */
		cr_assert(asprintf(&db, "%s/pgdata", ws) > 0);
		cr_assert_eq(mkdir(db, 0700), 0);
	} else {
		/* Unprivileged: a directory of another user on this host that we cannot read. */
		struct stat st;
		if (stat("/root", &st) < 0 || st.st_uid == geteuid() || access("/root", R_OK | X_OK) == 0)
			DSH_SKIP("no directory of another user that this user cannot read (/root is readable here)");
		free(rule);
		cr_assert(asprintf(&rule, "-- /root/**/*.pem") > 0);
		db = strdup("/root");
	}
	char out[4096];
	int r = plan_as_user(ws, rule, out, sizeof(out));
	cr_expect_eq(r, 0, "the run failed (%d): %s", r, out);
	cr_expect(strstr(out, db) && strstr(out, "another user"), "no note names %s: %s", db, out);
	dsh_test_rmtree(root);
	free(root);
}

/* Absent targets are dropped with a note whether their directory exists or not, and one answer
   about an absent directory does not leak to a target that exists beside it (the plan looks a
   directory up once for all the rules in it). */
Test(run_planning, absent_targets_and_absent_directories)
{
	char *ws = dsh_test_mkdtemp();
	cr_assert_eq(chmod(ws, 0755), 0);
	_cleanup_free_ char *here = NULL, *file = NULL;
	cr_assert(asprintf(&here, "%s/here", ws) > 0 && asprintf(&file, "%s/file", here) > 0);
	cr_assert_eq(mkdir(here, 0755), 0);
	dsh_test_write_file(file, "s\n");
	own(ws), own(here), own(file);
	const char *const rules[] = { "-- gone/a", "-- gone/b", "-- gone/deeper/c", "-- here/absent", "-- here/file",
				      "r- gone/d", NULL };
	char out[8192];
	int r = plan_rules_as_user(ws, rules, out, sizeof(out));
	cr_assert_eq(r, 0, "the plan failed (%d): %s", r, out);
	const char *absent[] = { "gone/a", "gone/b", "gone/deeper/c", "here/absent", "gone/d" };
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		_cleanup_free_ char *note = NULL, *entry = NULL;
		cr_assert(asprintf(&note, "%s/%s (rule", ws, absent[i]) > 0 && asprintf(&entry, "entry %s/%s\n", ws, absent[i]) > 0);
		cr_expect(strstr(out, note) && strstr(out, "does not exist"), "no note for %s: %s", absent[i], out);
		cr_expect(!strstr(out, entry), "%s is planned though absent: %s", absent[i], out);
	}
	_cleanup_free_ char *want = NULL;
	cr_assert(asprintf(&want, "entry %s\n", file) > 0);
	cr_expect(strstr(out, want), "the existing target is not masked: %s", out);
	dsh_test_rmtree(ws);
	free(ws);
}

/* Beneath /proc and /dev, which the sandbox replaces with its own, a target absent on the host is
   still planned, to be looked for inside, also after the 20 absent targets that get a note each
   (the rest are only counted); absent elsewhere it is skipped. */
Test(run_planning, absent_under_the_sandboxes_own_proc_and_dev_is_looked_for_inside)
{
	char *ws = dsh_test_mkdtemp();
	cr_assert_eq(chmod(ws, 0755), 0);
	own(ws);
	char **rules = NULL;
	for (int i = 0; i < 22; i++)
		cr_assert_geq(dsh_strv_pushf(&rules, "-- gone/f%d", i), 0);
	cr_assert_geq(dsh_strv_push(&rules, "-- /dev/dshbox-no-such-node"), 0);
	cr_assert_geq(dsh_strv_push(&rules, "r- /proc/dshbox-no-such-entry"), 0);
	char out[16384];
	int r = plan_rules_as_user(ws, (const char *const *)rules, out, sizeof(out));
	cr_assert_eq(r, 0, "the plan failed (%d): %s", r, out);
	cr_expect(strstr(out, "entry /dev/dshbox-no-such-node\n"), "not planned: %s", out);
	cr_expect(strstr(out, "entry /proc/dshbox-no-such-entry\n"), "not planned: %s", out);
	cr_expect(strstr(out, "skipped 2 more targets that do not exist"), "%s", out);
	_cleanup_free_ char *note = NULL;
	cr_assert(asprintf(&note, "skipped mask %s/gone/f19 (rule", ws) > 0);
	cr_expect(strstr(out, note), "%s", out);
	dsh_strv_free(rules);
	dsh_test_rmtree(ws);
	free(ws);
}

/* A workspace in /dev/shm: linux-ns replaces /dev, so the run refuses and says why; nothing runs.
   The landlock backend keeps the host's /dev and runs it. */
Test(run_planning, a_workspace_inside_dev_refuses_under_linux_ns)
{
	dsh_test_require_backend();
	char tmpl[] = "/dev/shm/dshbox-test.XXXXXX";
	if (!mkdtemp(tmpl))
		DSH_SKIP("no writable /dev/shm here (%s)", strerror(errno));
	_cleanup_free_ char *marker = NULL;
	cr_assert(asprintf(&marker, "%s/ran", tmpl) > 0);
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--backend", "linux-ns", "--workspace", tmpl, "--cwd", tmpl, "--", "/bin/sh", "-c",
			 "echo x > ran", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, base_env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect(strstr(r.err, "dshbox: error: writable root ") && strstr(r.err, "is inside /dev"), "%s", r.err);
	cr_expect(access(marker, F_OK) < 0, "the command ran");
	dsh_proc_clear(&r);
	if (dsh_landlock_abi() >= 1) {
		argv[3] = "landlock";
		cr_assert_eq(dsh_proc_run(argv, base_env, NULL, &r), 0);
		cr_expect_eq(r.exit_code, 0, "landlock: %s", r.err);
		cr_expect(access(marker, F_OK) == 0, "landlock: the write did not land");
		dsh_proc_clear(&r);
	}
	dsh_test_rmtree(tmpl);
}
