/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The eight ways out that started from a rule bound to what its path named at start (issue 10),
 * each tried from inside `dshbox run` and judged on the host: the protected file is unchanged,
 * readable only where the rule allows, and the next run (or the file fence) still refuses it.
 * The backend is DSHBOX_ESCAPE_BACKEND (default auto), so CI runs them against landlock too.  Where
 * the landlock backend loses the rule (its target exists inside the workspace, a writable root: a
 * Landlock grant cannot be taken back beneath it), the run must refuse (exit 125, the rule named,
 * the remedy given) and nothing run: the host oracle is the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *top, *ws;

static char *at(const char *rel)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", ws, rel) > 0);
	return s;
}

/* SPEC 4: a backend that loses a rule refuses the run, naming it, unless allowDegraded. */
static void expect_refused(const struct dsh_proc *r, const char *rule)
{
	cr_expect_eq(r->exit_code, 125, "exit %d: %s", r->exit_code, r->err);
	cr_expect_eq(dsh_count_lines_with_prefix(r->err, "dshbox: error: "), 1, "%s", r->err);
	cr_expect(strstr(r->err, "cannot enforce"), "%s", r->err);
	_cleanup_free_ char *quoted = NULL;
	cr_assert(asprintf(&quoted, "\"%s\"", rule) > 0);
	cr_expect(strstr(r->err, quoted), "the error does not name %s: %s", quoted, r->err);
	cr_expect_eq(dsh_count_lines_with_prefix(r->err, "dshbox: hint: "), 1, "%s", r->err);
	cr_expect(strstr(r->err, "--allow-degraded"), "%s", r->err);
	cr_expect_str_eq(r->out, "", "the command ran");
}

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

/* dshbox run --backend B --workspace WS --cwd WS [--access RULE]... -- sh -c SCRIPT; rules end at NULL. */
static void run_sh(struct dsh_proc *r, const char *script, ...)
{
	va_list ap;
	va_start(ap, script);
	dsh_test_run_sh(r, env, dsh_test_escape_backend(), ws, script, ap);
	va_end(ap);
}

static void setup(void)
{
	top = dsh_test_mkdtemp();
	cr_assert(asprintf(&ws, "%s/ws", top) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
}

static void teardown(void)
{
	dsh_test_rmtree(top);
	free(ws);
	free(top);
}

TestSuite(broker_escape, .init = setup, .fini = teardown, .timeout = 60);

static void expect_file(const char *path, const char *content)
{
	_cleanup_free_ char *got = dsh_test_read_file(path);
	cr_expect(got && strcmp(got, content) == 0, "%s is '%s' on the host, want '%s'", path, got ? got : "(missing)",
		  content);
}

Test(broker_escape, renaming_the_directory_of_a_masked_file)
{
	_cleanup_free_ char *secret = at("sub/secret.txt"), *moved = at("moved/secret.txt");
	dsh_test_write_file(secret, "s3cret\n");
	struct dsh_proc r;
	run_sh(&r, "mv sub moved; cat moved/secret.txt sub/secret.txt", "-- sub/secret.txt", NULL);
	cr_expect_null(strstr(r.out, "s3cret"), "the secret was read: %s", r.out);
	if (dsh_test_escape_landlock())
		expect_refused(&r, "-- sub/secret.txt");
	else
		cr_expect(strstr(r.err, "Permission denied"), "%s", r.err);
	cr_expect_eq(access(moved, F_OK), -1, "the masked file's directory was renamed on the host");
	expect_file(secret, "s3cret\n");
	dsh_proc_clear(&r);
}

Test(broker_escape, replacing_a_read_only_directory_by_a_copy)
{
	_cleanup_free_ char *hook = at(".git/hooks/pre-commit");
	dsh_test_write_file(hook, "#!/bin/sh\nexit 0\n");
	struct dsh_proc r;
	run_sh(&r, "mv .git .git.old; cp -a .git.old .git 2>/dev/null; echo evil >> .git/hooks/pre-commit; exit 0",
	       "r- .git/hooks", NULL);
	if (dsh_test_escape_landlock())
		expect_refused(&r, "r- .git/hooks");
	expect_file(hook, "#!/bin/sh\nexit 0\n");
	_cleanup_free_ char *old = at(".git.old");
	cr_expect_eq(access(old, F_OK), -1, ".git was renamed on the host");
	dsh_proc_clear(&r);
}

Test(broker_escape, creating_an_absent_read_only_name)
{
	_cleanup_free_ char *envrc = at(".envrc");
	struct dsh_proc r;
	run_sh(&r, "echo 'export EVIL=1' > .envrc", "r- .envrc", NULL);
	cr_expect_neq(r.exit_code, 0);
	cr_expect(strstr(r.err, "Permission denied"), "%s", r.err);
	cr_expect_eq(access(envrc, F_OK), -1, ".envrc was created on the host");
	dsh_proc_clear(&r);
}

Test(broker_escape, replacing_a_symlink_a_rule_was_spelled_through)
{
	_cleanup_free_ char *real = at("real-build"), *f = at("real-build/out"), *link = at("build");
	dsh_test_write_file(f, "built\n");
	cr_assert_eq(symlink("real-build", link), 0);
	struct dsh_proc r;
	run_sh(&r, "rm -f build; mkdir build && echo evil > build/out; exit 0", "r- build", NULL);
	if (dsh_test_escape_landlock())
		expect_refused(&r, "r- build");
	struct stat st;
	cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the symlink the rule names was replaced");
	expect_file(f, "built\n");
	dsh_proc_clear(&r);
}

Test(broker_escape, chmod_000_above_a_protected_path)
{
	_cleanup_free_ char *d = at("d"), *secret = at("d/secret");
	dsh_test_write_file(secret, "s3cret\n");
	struct dsh_proc r;
	run_sh(&r, "chmod 000 d", "-- d/secret", NULL);
	cr_expect_neq(r.exit_code, 0, "chmod of a protected ancestor succeeded");
	if (dsh_test_escape_landlock())
		expect_refused(&r, "-- d/secret");
	struct stat st;
	cr_assert_eq(stat(d, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0755, "the directory's mode changed on the host");
	dsh_proc_clear(&r);
	/* The next run still masks it. */
	run_sh(&r, "cat d/secret", "-- d/secret", NULL);
	cr_expect_null(strstr(r.out, "s3cret"));
	if (dsh_test_escape_landlock())
		expect_refused(&r, "-- d/secret");
	dsh_proc_clear(&r);
}

Test(broker_escape, a_new_file_matching_a_glob)
{
	_cleanup_free_ char *pem = at("new.pem"), *deep = at("a/b/new.pem");
	struct dsh_proc r;
	run_sh(&r, "mkdir -p a/b; echo key > new.pem; echo key > a/b/new.pem; ln -s /etc/passwd x.pem; exit 0",
	       "-- **/*.pem", NULL);
	cr_expect_eq(access(pem, F_OK), -1, "new.pem was created");
	cr_expect_eq(access(deep, F_OK), -1, "a/b/new.pem was created");
	_cleanup_free_ char *sym = at("x.pem");
	struct stat st;
	cr_expect_eq(lstat(sym, &st), -1, "x.pem (a symlink) was created");
	dsh_proc_clear(&r);
}

Test(broker_escape, the_configuration_file_in_use_stays_as_it_is)
{
	_cleanup_free_ char *cfg = at("dshbox.yml");
	dsh_test_write_file(cfg, "mode: workspace-write\naccess:\n  - \"-- secret\"\n");
	const char *argv[] = { dsh_test_dshbox(), "run", "--backend", dsh_test_escape_backend(), "--config", cfg, "--workspace", ws,
			       "--cwd", ws, "--", "sh", "-c",
			       "echo 'mode: danger-full-access' > dshbox.yml; mv dshbox.yml x.yml; exit 0", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	if (dsh_test_escape_landlock()) {
		/* the configuration file in use is r- (SPEC 1.6) and exists in the workspace */
		_cleanup_free_ char *self = NULL;
		cr_assert(asprintf(&self, "r- %s", cfg) > 0);
		expect_refused(&r, self);
	}
	expect_file(cfg, "mode: workspace-write\naccess:\n  - \"-- secret\"\n");
	dsh_proc_clear(&r);
}

Test(broker_escape, metadata_of_protected_targets)
{
	_cleanup_free_ char *ro = at("ro.txt");
	dsh_test_write_file(ro, "keep\n");
	cr_assert_eq(chmod(ro, 0644), 0);
	struct dsh_proc r;
	run_sh(&r, "chmod 666 ro.txt; touch -d 2001-01-01 ro.txt; exit 0", "r- ro.txt", NULL);
	if (dsh_test_escape_landlock())
		expect_refused(&r, "r- ro.txt");
	struct stat st;
	cr_assert_eq(stat(ro, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0644, "the mode of an r- file changed");
	cr_expect_gt(st.st_mtime, 1000000000 + 30000000, "the mtime of an r- file changed");
	dsh_proc_clear(&r);
}

/* Ordinary work is unchanged with the broker on (issue 10's "done means"). */
Test(broker_escape, ordinary_work_goes_through, .timeout = 120)
{
	struct dsh_proc r;
	run_sh(&r,
	       "set -e; mkdir -p t/a/b; for i in $(seq 1 200); do echo $i > t/a/b/f$i; done; "
	       "tar cf t.tar t; rm -rf t; tar xf t.tar; test -f t/a/b/f200; rm -rf t t.tar; "
	       "git init -q g && cd g && git config user.email a@b && git config user.name a && "
	       "echo x > x && git add x && git commit -qm x && git checkout -qb br && echo y > x && "
	       "git stash -q && git stash pop -q && git gc -q && echo done",
	       "-- **/*.pem", NULL);
	cr_expect_eq(r.exit_code, 0, "stdout: %s\nstderr: %s", r.out, r.err);
	cr_expect(strstr(r.out, "done"), "%s", r.err);
	dsh_proc_clear(&r);
}
