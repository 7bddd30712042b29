/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ordinary work is unchanged with the runtime broker on (issue 10): every call that makes or
 * removes a name goes through it, so these are the workloads that would show a difference — a
 * tarball of 10,000 files unpacked and removed, a parallel build of this project's library, a
 * Python virtual environment — each inside `dshbox run`, with a `--` glob in force: every `.key`
 * file anywhere (not `.pem`: pip itself ships a cacert.pem, which that rule rightly keeps it
 * from writing).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

static void run_in(const char *ws, const char *script, struct dsh_proc *r)
{
	const char *argv[] = { dsh_test_dshbox(), "run", "--workspace", ws, "--cwd", ws, "--access", "-- **/*.key",
			       "--", "sh", "-c", script, NULL };
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, r), 0);
}

/* The sources as they are (a git checkout or not), without what builds leave. */
static void copy_sources(const char *ws)
{
	_cleanup_free_ char *copy = NULL;
	cr_assert(asprintf(&copy, "tar -C '%s' --exclude=./.git --exclude='./build*' -cf - . | tar -xf - -C '%s'", DSH_TOP,
			   ws) > 0);
	cr_assert_eq(system(copy), 0, "cannot copy the source tree at %s", DSH_TOP);
}

Test(run_workloads, ten_thousand_files_unpacked_and_removed, .timeout = 300)
{
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run_in(ws,
	       "set -e; mkdir src; cd src; for d in $(seq 1 100); do mkdir d$d; "
	       "for f in $(seq 1 100); do : > d$d/f$f; done; done; cd ..; "
	       "tar cf t.tar src; rm -rf src; tar xf t.tar; test $(find src -type f | wc -l) = 10000; "
	       "rm -rf src t.tar; echo ok",
	       &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "ok\n");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_workloads, a_parallel_build_of_this_project, .timeout = 600)
{
	char *ws = dsh_test_mkdtemp();
	copy_sources(ws);
	struct dsh_proc r;
	run_in(ws, "make -j2 BUILD=build-inside build-inside/libdshbox.a >/dev/null && test -s build-inside/libdshbox.a && echo built",
	       &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "built\n");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

/*
 * Brokered calls from threads that do not lead their process (Go, Java, Rust runtimes and
 * Criterion's own test runner make names from worker threads): a descriptor of the caller, a dirfd
 * base and a socket address must all be found through the thread.
 */
Test(run_workloads, brokered_calls_from_worker_threads, .timeout = 120)
{
	if (access("/usr/bin/python3", X_OK) < 0)
		DSH_SKIP("python3 is not installed");
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run_in(ws,
	       "python3 -c '\n"
	       "import os, socket, threading\n"
	       "out = []\n"
	       "def work():\n"
	       "    d = os.open(\".\", os.O_RDONLY | os.O_DIRECTORY)\n"
	       "    fd = os.open(\"made\", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=d)\n"
	       "    os.fchmod(fd, 0o640)\n"
	       "    os.mkdir(\"dir\", dir_fd=d)\n"
	       "    s = socket.socket(socket.AF_UNIX)\n"
	       "    s.bind(\"t.sock\")\n"
	       "    s.listen(1)\n"
	       "    c = socket.socket(socket.AF_UNIX)\n"
	       "    c.connect(os.getcwd() + \"/t.sock\")\n"
	       "    out.append(oct(os.stat(\"made\").st_mode & 0o777))\n"
	       "t = threading.Thread(target=work)\n"
	       "t.start()\n"
	       "t.join()\n"
	       "print(*out)\n"
	       "'",
	       &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "0o640\n", "%s", r.err);
	dsh_proc_clear(&r);
	_cleanup_free_ char *made = NULL;
	cr_assert(asprintf(&made, "%s/made", ws) > 0);
	struct stat st;
	cr_expect_eq(stat(made, &st), 0, "the thread's file is on the host");
	dsh_test_rmtree(ws);
	free(ws);
}

/* This project's own unit suite, built and run inside (issue 12): what a developer's agent does. */
Test(run_workloads, this_projects_unit_tests_pass_inside, .timeout = 900)
{
	char *ws = dsh_test_mkdtemp();
	copy_sources(ws);
	struct dsh_proc r;
	/* The README's kind of rules, none of which names what the suite makes in its scratch trees
	   (those live in the workspace here: /var/tmp is read-only inside). */
	const char *argv[] = { dsh_test_dshbox(), "run", "--workspace", ws, "--cwd", ws, "--access", "-- .env",
			       "--access", "-- secrets/**", "--", "sh", "-c",
			       "make -j2 BUILD=build-inside test-unit >out.log 2>&1; s=$?; tail -n 3 out.log; exit $s",
			       NULL };
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "make test-unit inside: %s%s", r.out, r.err);
	cr_expect(strstr(r.out, "Failing: 0") && strstr(r.out, "Crashing: 0"), "%s", r.out);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

/* A command that fails on a hidden path is told which rule hides it; one that succeeds hears nothing. */
Test(run_workloads, a_commit_of_a_masked_tracked_file_names_the_rule, .timeout = 120)
{
	if (access("/usr/bin/git", X_OK) < 0)
		DSH_SKIP("git is not installed");
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	_cleanup_free_ char *setup = NULL;
	cr_assert(asprintf(&setup, "cd '%s' && export HOME=\"$PWD\" && git init -q . && echo A=1 > .env && echo hi > a && git add -A && "
			   "git -c user.email=t@t -c user.name=t commit -qm one && echo A=2 > .env", ws) > 0);
	cr_assert_eq(system(setup), 0);
	const char *argv[] = { dsh_test_dshbox(), "run", "--workspace", ws, "--cwd", ws, "--access", "-- .env", "--",
			       "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "two", NULL };
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 128, "%s", r.err);
	cr_expect(strstr(r.err, "open(\".env\")"), "git says which file: %s", r.err);
	_cleanup_free_ char *note = NULL;
	cr_assert(asprintf(&note, "dshbox: note: the command exited 128; this run hides from it: %s/.env (rule \"-- .env\")\n",
			   ws) > 0);
	cr_expect(strstr(r.err, note), "the note names the path and the rule: %s", r.err);
	/* Never in a denial signature's words: a host would take every failure for a denial. */
	const char *line = strstr(r.err, "dshbox: note:");
	cr_expect(line && !strcasestr(line, "permission denied") && !strcasestr(line, "read-only file system"), "%s", r.err);
	dsh_proc_clear(&r);
	/* Host-side: nothing committed, the file as the user left it. */
	_cleanup_free_ char *log = NULL, *envf = NULL;
	cr_assert(asprintf(&log, "test $(git -C '%s' rev-list --count HEAD) = 1", ws) > 0);
	cr_expect_eq(system(log), 0, "a commit was made");
	cr_assert(asprintf(&envf, "%s/.env", ws) > 0);
	_cleanup_free_ char *c = dsh_test_read_file(envf);
	cr_expect_str_eq(c, "A=2\n");
	/* A successful run with the same rule says nothing of dshbox's own. */
	const char *ok[] = { dsh_test_dshbox(), "run", "--workspace", ws, "--cwd", ws, "--access", "-- .env", "--", "true", NULL };
	cr_assert_eq(dsh_proc_run((char *const *)ok, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0);
	cr_expect_str_eq(r.err, "");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

/*
 * `git init` at the root of a workspace makes .git/hooks, which the default r- rule protects
 * (SPEC 1.6) and the broker will not create: git says only "Permission denied", so the run's note
 * names the call the broker refused and the rule.  In a subdirectory the same init works.
 */
Test(run_workloads, a_refused_call_is_named_after_a_failure, .timeout = 120)
{
	if (access("/usr/bin/git", X_OK) < 0)
		DSH_SKIP("git is not installed");
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run_in(ws, "git init -q", &r);
	cr_expect_neq(r.exit_code, 0, "git init made .git/hooks: %s", r.err);
	_cleanup_free_ char *note = NULL;
	cr_assert(asprintf(&note, "dshbox: note: the command exited %d; the runtime broker refused 1 of its calls, the "
				  "first at %s/.git/hooks (rule \"r- %s/.git/hooks\")\n", r.exit_code, ws, ws) > 0);
	cr_expect(strstr(r.err, note), "the note names the call and the rule: %s", r.err);
	const char *line = strstr(r.err, "dshbox: note:");
	cr_expect(line && !strcasestr(line, "permission denied"), "%s", r.err);
	dsh_proc_clear(&r);
	_cleanup_free_ char *hooks = NULL;
	cr_assert(asprintf(&hooks, "%s/.git/hooks", ws) > 0);
	cr_expect_neq(access(hooks, F_OK), 0, ".git/hooks was made on the host");
	run_in(ws, "git init -q sub", &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.err, "");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_workloads, a_python_virtual_environment, .timeout = 300)
{
	if (access("/usr/bin/python3", X_OK) < 0 || system("/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null") != 0)
		DSH_SKIP("python3 with venv and ensurepip (Debian's python3-venv) is not installed");
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run_in(ws, "python3 -m venv v && v/bin/python -c 'import sys; print(sys.prefix != sys.base_prefix)'", &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "True\n");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}
