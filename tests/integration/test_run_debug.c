/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Debuggers and sanitizers inside `dshbox run` (SPEC 3.7, issue 12): ptrace and process_vm_* work
 * on the sandbox's own processes, so strace, gdb and LeakSanitizer (which ptraces its own threads)
 * do their job; the command keeps the caller's core limits and may raise its soft one.  What stays
 * out of reach (init, processes outside) is the escape suite's: tests/escape/test_escape.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL };

static bool have(const char *prog)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

static void run_in(struct dsh_proc *r, const char *ws, char *const *env_, char *const cmd[])
{
	char *argv[32] = { (char *)dsh_test_dshbox(), "run", "--workspace", (char *)ws, "--cwd", (char *)ws, "--" };
	size_t n = 7;
	for (size_t i = 0; cmd[i] && n < 31; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run(argv, env_, NULL, r), 0);
}

Test(run_debug, strace_follows_a_command)
{
	if (!have("strace"))
		DSH_SKIP("strace is not installed (tools/install-deps.sh installs it)");
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run_in(&r, ws, env, (char *[]){ "strace", "-f", "true", NULL });
	cr_expect_eq(r.exit_code, 0, "strace -f true: exit %d: %s", r.exit_code, r.err);
	cr_expect(strstr(r.err, "execve(") != NULL, "strace traced no execve: %s", r.err);
	cr_expect(strstr(r.err, "+++ exited with 0 +++") != NULL, "strace did not see the exit: %s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

Test(run_debug, gdb_runs_a_program)
{
	if (!have("gdb"))
		DSH_SKIP("gdb is not installed (tools/install-deps.sh installs it)");
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	/* HOME: gdb reads ~/.gdbinit; the workspace keeps the caller's out of it. */
	char home[4200];
	snprintf(home, sizeof(home), "HOME=%s", ws);
	char *genv[] = { env[0], env[1], home, NULL };
	run_in(&r, ws, genv, (char *[]){ "gdb", "-nx", "-batch", "-ex", "run", "--args", "true", NULL });
	cr_expect_eq(r.exit_code, 0, "gdb: exit %d: %s", r.exit_code, r.err);
	cr_expect(strstr(r.out, "exited normally") != NULL, "gdb did not run the program:\n%s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, "ptrace: Operation not permitted") == NULL, "gdb could not trace: %s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

/* LeakSanitizer stops the world with ptrace; refused, it dies with "fatal error" and no report. */
Test(run_debug, leak_sanitizer_reports_a_leak)
{
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	char src[4200], bin[4200], cmd[9000];
	snprintf(src, sizeof(src), "%s/leak.c", ws);
	snprintf(bin, sizeof(bin), "%s/leak", ws);
	dsh_test_write_file(src, "#include <stdio.h>\n#include <stdlib.h>\n"
				 "void *volatile keep;\n"
				 "int main(void) { keep = malloc(4242); keep = NULL; puts(\"leaking\"); fflush(stdout); return 0; }\n");
	snprintf(cmd, sizeof(cmd), "cc -fsanitize=address -g -O0 -o '%s' '%s' >/dev/null 2>&1", bin, src);
	if (system(cmd) != 0)
		DSH_SKIP("no compiler with AddressSanitizer (cc -fsanitize=address)");
	/* A status of its own, so that a leak report cannot be mistaken for any other failure. */
	char *aenv[] = { env[0], env[1], "ASAN_OPTIONS=detect_leaks=1:exitcode=23", NULL };
	struct dsh_proc r;
	run_in(&r, ws, aenv, (char *[]){ bin, NULL });
	cr_expect_eq(r.exit_code, 23, "the leak check's status: exit %d: %s", r.exit_code, r.err);
	cr_expect_str_eq(r.out, "leaking\n");
	cr_expect(strstr(r.err, "ERROR: LeakSanitizer: detected memory leaks") != NULL, "no leak report: %s", r.err);
	cr_expect(strstr(r.err, "4242 byte(s) in 1 object(s)") != NULL, "the report misses the leak: %s", r.err);
	cr_expect(strstr(r.err, "fatal error") == NULL, "LeakSanitizer failed: %s", r.err);
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

/*
 * SPEC 3.7: only dshbox's own processes are held at core limit 0.  A caller whose soft limit is 0
 * but whose hard limit allows more leaves the command free to raise it (`ulimit -c unlimited`
 * before running a test that should dump core).
 */
Test(run_debug, the_command_can_raise_its_core_limit)
{
	struct rlimit rl;
	cr_assert_eq(getrlimit(RLIMIT_CORE, &rl), 0);
	if (rl.rlim_max == 0)
		DSH_SKIP("the caller's hard core limit is 0: nothing to raise");
	rl.rlim_cur = 0;
	cr_assert_eq(setrlimit(RLIMIT_CORE, &rl), 0);
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	char *aenv[] = { env[0], env[1], "ASAN_OPTIONS=disable_coredump=0", NULL };
	struct dsh_proc r;
	run_in(&r, ws, aenv, (char *[]){ "/bin/sh", "-c", "ulimit -Sc; ulimit -Sc \"$(ulimit -Hc)\" && ulimit -Sc; ulimit -Hc", NULL });
	char want[128];
	if (rl.rlim_max == RLIM_INFINITY)
		snprintf(want, sizeof(want), "0\nunlimited\nunlimited\n");
	else
		snprintf(want, sizeof(want), "0\n%llu\n%llu\n", (unsigned long long)(rl.rlim_max / 512),
			 (unsigned long long)(rl.rlim_max / 512));
	cr_expect_eq(r.exit_code, 0, "raising the soft core limit: %s", r.err);
	cr_expect_str_eq(r.out, want, "soft before, soft after, hard");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}
