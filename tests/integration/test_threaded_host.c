/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host that links libdshbox and has threads (Node, Go, tokio) calls dsh_run while its other
 * threads allocate, print and hold locks.  Every run must come back with the command's own
 * outcome, the sandbox as strong as from the single-threaded program, and the host still there.
 * A deadlock in the start (a lock copied held into the clone) shows as the test's timeout.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "dshbox/backend.h"
#include "policy/options.h"
#include "tests/lib/harness.h"
#include "supervisor/forked_run.h"

static atomic_bool stop;

/* What a busy host's threads do: allocate and free in every size class, format, and take
   stdio's locks, all the time. */
static void *busy(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	FILE *null = fopen("/dev/null", "we");
	while (!atomic_load(&stop)) {
		void *v[32];
		for (size_t i = 0; i < 32; i++)
			v[i] = malloc((size_t)(rand_r(&seed) % 65536) + 1);
		if (null)
			fprintf(null, "%u %p\n", seed, v[0]);
		for (size_t i = 0; i < 32; i++)
			free(v[i]);
	}
	if (null)
		fclose(null);
	return NULL;
}

struct host {
	pthread_t t[4];
	char *ws;
	struct dsh_config c;
	struct dsh_policy *p;
	struct dsh_run_options o;
};

static void host_start(struct host *h, const char *yaml, enum dsh_backend_id backend)
{
	memset(h, 0, sizeof(*h));
	h->ws = dsh_test_mkdtemp();
	_cleanup_error_ struct dsh_error *err = NULL;
	char *env[] = { "HOME=/nonexistent", "PATH=/usr/bin:/bin", NULL };
	dsh_config_init(&h->c);
	cr_assert_eq(dsh_config_load_string(&h->c, yaml, strlen(yaml), "test", &err), 0, "%s", err ? err->msg : "");
	h->c.workspace = strdup(h->ws);
	h->c.protect_defaults = false;
	h->c.backend = backend;
	cr_assert_eq(dsh_run_options_init(&h->o, &h->c, env, &err), 0, "%s", err ? err->msg : "");
	cr_assert_eq(dsh_policy_new(&h->c, env, h->ws, &h->p, &err), 0, "%s", err ? err->msg : "");
	atomic_store(&stop, false);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&h->t[i], NULL, busy, (void *)(uintptr_t)(i + 1)), 0);
	cr_assert(dsh_process_is_threaded(), "the host has threads while it runs");
}

static void host_stop(struct host *h)
{
	atomic_store(&stop, true);
	for (size_t i = 0; i < 4; i++)
		pthread_join(h->t[i], NULL);
	dsh_policy_free(h->p);
	dsh_run_options_clear(&h->o);
	dsh_config_clear(&h->c);
	dsh_test_rmtree(h->ws);
	free(h->ws);
}

/* dsh_run of sh -c script; the result in *res, the return value returned. */
static int host_run(struct host *h, const char *script, struct dsh_run_result *res, struct dsh_error **err)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct dsh_run_request req = { .argv = argv, .envp = h->o.command_env };
	struct dsh_run_setup setup = { 0 };
	int r = dsh_run(h->p, &h->o, &req, NULL, &setup, res, err);
	dsh_run_setup_clear(&setup);
	return r;
}

/* n runs of "exit 3..7" from the host, each with the command's own status. */
static void expect_runs(struct host *h, int n)
{
	for (int i = 0; i < n; i++) {
		char script[64];
		snprintf(script, sizeof(script), "exit %d", 3 + i % 5);
		struct dsh_run_result res = { 0 };
		_cleanup_error_ struct dsh_error *err = NULL;
		cr_assert_eq(host_run(h, script, &res, &err), 0, "run %d: %s", i, err ? err->msg : "");
		cr_expect_eq(res.signal, 0);
		cr_expect_eq(res.exit_code, 3 + i % 5, "run %d: the command's own status", i);
		dsh_run_result_clear(&res);
	}
}

static void runs_come_back(enum dsh_backend_id backend)
{
	struct host h;
	host_start(&h, "mode: workspace-write\n", backend);
	expect_runs(&h, 25);
	host_stop(&h);
}

Test(threaded_host, runs_come_back_while_threads_allocate, .timeout = 600)
{
	dsh_test_require_backend();
	runs_come_back(DSH_BACKEND_LINUX_NS);
}

Test(threaded_host, landlock_runs_come_back_while_threads_allocate, .timeout = 600)
{
	dsh_test_require_landlock();
	runs_come_back(DSH_BACKEND_LANDLOCK);
}

static void sandbox_holds(enum dsh_backend_id backend)
{
	struct host h;
	host_start(&h, "mode: workspace-write\n", backend);
	_cleanup_free_ char *outside = dsh_test_mkdtemp();
	_cleanup_free_ char *victim = NULL, *script = NULL, *made = NULL;
	cr_assert(asprintf(&victim, "%s/victim", outside) > 0);
	cr_assert(asprintf(&made, "%s/made", h.ws) > 0);
	/* The command writes in the workspace (allowed) and outside it (refused by the kernel). */
	cr_assert(asprintf(&script, "echo in > %s; echo out > %s; echo $? > %s.status", made, victim, made) > 0);
	struct dsh_run_result res = { 0 };
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(host_run(&h, script, &res, &err), 0, "%s", err ? err->msg : "");
	struct stat st;
	cr_expect_eq(stat(victim, &st), -1, "nothing was written outside the workspace");
	cr_expect_eq(errno, ENOENT);
	_cleanup_free_ char *in = dsh_test_read_file(made);
	cr_expect_str_eq(in ? in : "", "in\n", "the workspace is writable");
	dsh_run_result_clear(&res);
	dsh_test_rmtree(outside);
	host_stop(&h);
}

Test(threaded_host, the_sandbox_holds_from_a_threaded_host, .timeout = 300)
{
	dsh_test_require_backend();
	sandbox_holds(DSH_BACKEND_LINUX_NS);
}

Test(threaded_host, landlock_holds_from_a_threaded_host, .timeout = 300)
{
	dsh_test_require_landlock();
	sandbox_holds(DSH_BACKEND_LANDLOCK);
}

Test(threaded_host, exec_failures_and_signals_come_back, .timeout = 300)
{
	dsh_test_require_backend();
	struct host h;
	host_start(&h, "mode: workspace-write\n", DSH_BACKEND_LINUX_NS);
	char *argv[] = { "dshbox-no-such-command", NULL };
	struct dsh_run_request req = { .argv = argv, .envp = h.o.command_env };
	struct dsh_run_setup setup = { 0 };
	struct dsh_run_result res = { 0 };
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_run(h.p, &h.o, &req, NULL, &setup, &res, &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(res.exit_code, 127);
	cr_expect(res.message && strstr(res.message, "dshbox-no-such-command"), "the message names the command: %s",
		  res.message ? res.message : "(none)");
	dsh_run_result_clear(&res);
	dsh_run_setup_clear(&setup);

	cr_assert_eq(host_run(&h, "kill -TERM $$", &res, &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(res.signal, SIGTERM, "the command's death by signal, as it died");
	dsh_run_result_clear(&res);

	/* A setup failure is an error with its words, nothing run. */
	int bad = 1000;
	req = (struct dsh_run_request){ .argv = argv, .envp = h.o.command_env, .preserve_fds = &bad, .n_preserve_fds = 1 };
	setup = (struct dsh_run_setup){ 0 };
	cr_expect_lt(dsh_run(h.p, &h.o, &req, NULL, &setup, &res, &err), 0);
	cr_expect(err && err->msg && strstr(err->msg, "1000"), "the error crossed over: %s", err ? err->msg : "(none)");
	dsh_run_setup_clear(&setup);
	dsh_run_result_clear(&res);
	host_stop(&h);
}

/* Backend none from a host: the host is not replaced by the command; it waits for it. */
Test(threaded_host, none_leaves_the_host_in_place, .timeout = 120)
{
	struct host h;
	host_start(&h, "mode: danger-full-access\n", DSH_BACKEND_NONE);
	struct dsh_run_result res = { 0 };
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(host_run(&h, "exit 9", &res, &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(res.exit_code, 9, "the command's status, and the host still runs to say so");
	dsh_run_result_clear(&res);
	cr_assert_eq(host_run(&h, "kill -KILL $$", &res, &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(res.signal, SIGKILL);
	dsh_run_result_clear(&res);
	host_stop(&h);
}

/* A runner in bubblewrap's dialect that runs what follows "--" as it is; its path in *ret_dir. */
static char *fake_runner_config(const char *mode, char **ret_dir)
{
	*ret_dir = dsh_test_mkdtemp();
	char *runner = NULL, *yaml = NULL;
	cr_assert(asprintf(&runner, "%s/fake-runner", *ret_dir) > 0);
	dsh_test_write_file(runner, "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done; shift\nexec \"$@\"\n");
	cr_assert_eq(chmod(runner, 0755), 0);
	cr_assert(asprintf(&yaml, "mode: %s\nrunnerCommand: [\"%s\"]\nrunnerFailureSignatures: [\"fake-runner:\"]\n",
			   mode, runner) > 0);
	free(runner);
	return yaml;
}

/* The host's threads leave SIGCHLD unblocked (as Node's and Go's do): the signal may go to one of
   them, and the runner's wait must still see its child end (issue 40). */
Test(threaded_host, the_runner_comes_back_while_other_threads_take_sigchld, .timeout = 120)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *yaml = fake_runner_config("read-only", &dir);
	struct host h;
	host_start(&h, yaml, DSH_BACKEND_RUNNER);
	sigset_t cur;
	cr_assert_eq(pthread_sigmask(SIG_SETMASK, NULL, &cur), 0);
	cr_assert(!sigismember(&cur, SIGCHLD), "the host's threads were started with SIGCHLD unblocked");
	expect_runs(&h, 10);
	host_stop(&h);
	dsh_test_rmtree(dir);
}

/* danger-full-access without rules: the runner runs the command directly, and from a host that is
   in a child, as with none; exec'd in place, the test's own process would end with the command. */
Test(threaded_host, the_runners_direct_run_leaves_the_host_in_place, .timeout = 120)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *yaml = fake_runner_config("danger-full-access", &dir);
	struct host h;
	host_start(&h, yaml, DSH_BACKEND_RUNNER);
	struct dsh_run_result res = { 0 };
	_cleanup_error_ struct dsh_error *err = NULL;
	pid_t self = getpid();
	cr_assert_eq(host_run(&h, "exit 9", &res, &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(res.exit_code, 9, "the command's status, and the host still runs to say so");
	cr_expect_eq(getpid(), self);
	dsh_run_result_clear(&res);
	cr_assert_eq(host_run(&h, "kill -KILL $$", &res, &err), 0, "%s", err ? err->msg : "");
	cr_expect_eq(res.signal, SIGKILL);
	dsh_run_result_clear(&res);
	host_stop(&h);
	dsh_test_rmtree(dir);
}
