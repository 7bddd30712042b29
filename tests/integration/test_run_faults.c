/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Faults (issue 38): `dshbox run` killed with SIGKILL at points spread over its whole life, from
 * before the sandbox exists to the command running.  Whatever the point, nothing is left on the
 * host: no process of the run (init, the broker and the keeper carry the supervisor's argv, so
 * the run's workspace names them; the command and what it starts run in the workspace, --cwd), no
 * mount, no file of the workspace changed or added; and the next run enforces the same rules as
 * if nothing had happened.  Under landlock, without a pid namespace, init catches its death
 * signal and kills what the command started (supervisor/sandbox.c, death_signal).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

extern char **environ;

#define TRIALS 24
/* ... and as many again in the first 12 ms, a quarter of a millisecond apart: where the supervisor
   forks its children, each of which must die with it even when it dies before the child said so. */
#define EARLY_TRIALS 48

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
	nanosleep(&ts, NULL);
}

static void sleep_ms(long ms)
{
	sleep_us(ms * 1000);
}

/* The host processes whose command line holds needle or whose directory is needle, other than
 * this one; their pids in pids.  Killed once found, so one trial's leftovers do not fail the next. */
static int processes_naming(const char *needle, char *pids, size_t size, bool kill_them)
{
	int n = 0;
	pids[0] = '\0';
	DIR *d = opendir("/proc");
	cr_assert_not_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || atoi(e->d_name) == getpid())
			continue;
		char path[300], buf[8192], cwd[PATH_MAX];
		snprintf(path, sizeof(path), "/proc/%s/cwd", e->d_name);
		ssize_t cn = readlink(path, cwd, sizeof(cwd) - 1);
		cwd[cn > 0 ? cn : 0] = '\0';
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		for (size_t i = 0; i < len; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[len] = '\0';
		if (strstr(buf, needle) || strcmp(cwd, needle) == 0) {
			n++;
			size_t used = strlen(pids);
			snprintf(pids + used, size - used, " %s(%.60s)", e->d_name, buf);
			if (kill_them)
				kill(atoi(e->d_name), SIGKILL);
		}
	}
	closedir(d);
	return n;
}

/* The mount table's lines that name needle, and the table's length. */
static int mounts_naming(const char *needle, int *ret_lines)
{
	_cleanup_free_ char *t = dsh_test_read_file("/proc/self/mountinfo");
	int n = 0, lines = 0;
	for (char *l = t; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		lines++;
		if (strstr(l, needle))
			n++;
		l = nl ? nl + 1 : l + strlen(l);
	}
	*ret_lines = lines;
	return n;
}

/* The workspace's names and contents, one line each: what the run must not change. */
static char *tree_of(const char *ws)
{
	char *cmd = dsh_test_fmt("cd '%s' && find . -printf '%%p %%y %%s %%m\\n' | sort && cat secret kept", ws);
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, NULL, NULL, &r), 0);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	free(cmd);
	char *out = r.out;
	r.out = NULL;
	dsh_proc_clear(&r);
	return out;
}

/*
 * SIGKILL to each child of dshbox's as it appears, until dshbox ends; its wait status.  The first
 * may be a probe's child that ended by itself before the kill, so the next one (init) gets it too.
 */
static int kill_children_until_it_ends(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	int st = 0;
	for (int t = 0; t < 30000; t++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		FILE *f = fopen(path, "r");
		for (int child; f && fscanf(f, "%d", &child) == 1;)
			kill(child, SIGKILL);
		if (f)
			fclose(f);
		sleep_us(1000);
	}
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_fail("dshbox did not end within 30 s of its children's kills");
	return st;
}

/* victim: dshbox itself, or its init (and any probe's child before it). */
enum victim { DSHBOX, INIT };

/*
 * The environment for a dshbox whose children are all killed: in the sanitizer build, the leak
 * check at its exit runs in a child of its own, which must not be one of them.
 */
static char **env_without_exit_child(void)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof(*env));
	cr_assert_not_null(env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "ASAN_OPTIONS=", 13) != 0)
			env[k++] = environ[i];
	env[k++] = "ASAN_OPTIONS=detect_leaks=0";
	env[k] = NULL;
	return env;
}

static void faults(const char *backend, bool with_rules, enum victim victim)
{
	_cleanup_free_ char *top = dsh_test_mkdtemp();
	_cleanup_free_ char *ws = dsh_test_fmt("%s/ws", top);
	_cleanup_free_ char *rules = dsh_test_fmt("%s/rules", top);
	_cleanup_free_ char *secret = dsh_test_fmt("%s/secret", ws), *kept = dsh_test_fmt("%s/kept", ws);
	_cleanup_free_ char *rules_text = dsh_test_fmt("-- %s\nr- %s\n", secret, kept);
	dsh_test_write_file(secret, "s3cret\n");
	dsh_test_write_file(kept, "kept\n");
	dsh_test_write_file(rules, rules_text);
	_cleanup_free_ char *before = tree_of(ws);
	int table_before;
	mounts_naming(ws, &table_before);

	_cleanup_free_ char **env = env_without_exit_child();
	for (int i = 0; i < TRIALS + EARLY_TRIALS; i++) {
		/* Spread over setup and the command's life: 0 ms to about 0.5 s, a different point
		 * each trial (deterministic, so a failure names its delay), then the early ones. */
		long delay_us = i < TRIALS ? (long)(i * 23 % TRIALS) * 20000 : (long)(i - TRIALS) * 250;
		char *script = dsh_test_fmt("echo x > '%s/new' 2>/dev/null; cat '%s/secret' 2>/dev/null; sleep 1000", ws, ws);
		char *argv[] = { (char *)dsh_test_dshbox(), "run", "--backend", (char *)backend, "--workspace", ws, "--cwd", ws,
				 with_rules ? "--access-file" : "--mode", with_rules ? rules : "workspace-write",
				 "--", "/bin/sh", "-c", script, NULL };
		pid_t pid;
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		cr_assert_eq(posix_spawn(&pid, argv[0], &fa, NULL, argv, victim == INIT ? env : environ), 0);
		posix_spawn_file_actions_destroy(&fa);
		sleep_us(delay_us);
		int st;
		if (victim == INIT) {
			st = kill_children_until_it_ends(pid);
		} else {
			kill(pid, SIGKILL);
			cr_assert_eq(waitpid(pid, &st, 0), pid);
		}
		free(script);
		if (victim == INIT)
			/* dshbox itself lives on, says what happened and fails as dshbox (125) */
			cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 125, "init killed after %ld µs: dshbox's status %#x",
				  delay_us, st);

		/* The run's other processes end with it: a bounded wait, then none may name ws. */
		char pids[2048];
		int left = 0;
		for (int t = 0; t < 100 && (left = processes_naming(ws, pids, sizeof(pids), false)); t++)
			sleep_ms(50);
		cr_assert_eq(left, 0, "killed after %ld µs (%s): %d processes of the run left:%s", delay_us,
			     WIFSIGNALED(st) ? "by the signal" : "it had ended", left, pids);
		int table;
		cr_assert_eq(mounts_naming(ws, &table), 0, "killed after %ld µs: a mount naming the workspace on the host", delay_us);
		cr_assert_eq(table, table_before, "killed after %ld µs: the host's mount table changed (%d lines, %d before)",
			     delay_us, table, table_before);
		if (with_rules) {
			/* The new file may exist (the command may have run); the protected ones never change. */
			_cleanup_free_ char *newf = dsh_test_fmt("%s/new", ws);
			unlink(newf);
			_cleanup_free_ char *now = tree_of(ws);
			cr_assert_str_eq(now, before, "killed after %ld µs: the workspace changed", delay_us);
		}
	}

	/* The next run: the rules hold as they did before any kill. */
	char *script = dsh_test_fmt("cat '%s/kept'; cat '%s/secret' || echo hidden; echo y > '%s/kept' || echo refused",
				    ws, ws, ws);
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--backend", (char *)backend, "--workspace", ws,
			 with_rules ? "--access-file" : "--mode", with_rules ? rules : "workspace-write",
			 "--", "/bin/sh", "-c", script, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, NULL, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "the next run: %s", r.err);
	if (with_rules)
		cr_expect_str_eq(r.out, "kept\nhidden\nrefused\n", "the next run: %s", r.err);
	else
		cr_expect_str_eq(r.out, "kept\ns3cret\n", "the next run: %s", r.err);
	dsh_proc_clear(&r);
	free(script);
	dsh_test_rmtree(top);
}

Test(run_faults, killed_anywhere_the_linux_ns_run_leaves_nothing, .timeout = 240)
{
	dsh_test_require_backend();
	faults("auto", true, DSHBOX);
}

Test(run_faults, init_killed_anywhere_in_the_linux_ns_run_leaves_nothing_and_fails_as_dshbox, .timeout = 240)
{
	dsh_test_require_backend_named("linux-ns");
	faults("linux-ns", true, INIT);
}

Test(run_faults, init_killed_anywhere_in_the_landlock_run_leaves_nothing_and_fails_as_dshbox, .timeout = 240)
{
	dsh_test_require_landlock();
	faults("landlock", false, INIT);
}

Test(run_faults, killed_anywhere_the_landlock_run_leaves_nothing, .timeout = 240)
{
	dsh_test_require_landlock();
	faults("landlock", false, DSHBOX);
}
