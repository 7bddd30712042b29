/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host that links libdshbox and has threads (Node, Go, tokio) calls dsh_run while its other
 * threads allocate, print and hold locks.  Every run must come back with the command's own
 * outcome, the sandbox as strong as from the single-threaded program, and the host still there.
 * A deadlock in the start (a lock copied held into the clone) shows as the test's timeout.
 * Every backend is run so (issue 40, one process model), the runner with a fake runner and with
 * bubblewrap (skipped, with the reason, where it is missing), also from hosts that keep signals
 * to themselves, reap every child, or ignore SIGCHLD: a hang there shows as the timeout too.
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
#include <sys/wait.h>
#include <time.h>
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

static void sandbox_holds(const char *yaml, enum dsh_backend_id backend)
{
	struct host h;
	host_start(&h, yaml, backend);
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
	sandbox_holds("mode: workspace-write\n", DSH_BACKEND_LINUX_NS);
}

Test(threaded_host, landlock_holds_from_a_threaded_host, .timeout = 300)
{
	dsh_test_require_landlock();
	sandbox_holds("mode: workspace-write\n", DSH_BACKEND_LANDLOCK);
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

/* ---- every backend from one host (issue 40: one process model) ---- */

static bool have_bwrap(void)
{
	return access("/usr/bin/bwrap", X_OK) == 0 || access("/bin/bwrap", X_OK) == 0;
}

/* The runner with the real bubblewrap, as test_runner.c runs it. */
static char *bwrap_config(const char *mode)
{
	if (!have_bwrap())
		DSH_SKIP("bubblewrap is not installed (apt-get install bubblewrap): the runner's bwrap row is not run");
	char *yaml = NULL;
	cr_assert(asprintf(&yaml, "mode: %s\nrunnerCommand: [bwrap]\nrunnerFailureSignatures: [\"bwrap:\"]\n", mode) > 0);
	return yaml;
}

enum host_backend { HB_LINUX_NS, HB_LANDLOCK, HB_NONE, HB_RUNNER_FAKE, HB_RUNNER_BWRAP };

/* The host for one backend, in workspace-write (none: danger-full-access, the only mode it runs);
   what the backend needs is checked first, and a skip says what is missing.  *ret_dir: a fake
   runner's directory, or NULL. */
static void host_start_backend(struct host *h, enum host_backend b, char **ret_dir)
{
	_cleanup_free_ char *yaml = NULL;
	enum dsh_backend_id id = DSH_BACKEND_LINUX_NS;
	*ret_dir = NULL;
	switch (b) {
	case HB_LINUX_NS:
		dsh_test_require_backend();
		break;
	case HB_LANDLOCK:
		dsh_test_require_landlock();
		id = DSH_BACKEND_LANDLOCK;
		break;
	case HB_NONE:
		id = DSH_BACKEND_NONE;
		break;
	case HB_RUNNER_FAKE:
		yaml = fake_runner_config("workspace-write", ret_dir);
		id = DSH_BACKEND_RUNNER;
		break;
	case HB_RUNNER_BWRAP:
		yaml = bwrap_config("workspace-write");
		id = DSH_BACKEND_RUNNER;
		break;
	}
	host_start(h, yaml ? yaml : b == HB_NONE ? "mode: danger-full-access\n" : "mode: workspace-write\n", id);
}

static void host_stop_backend(struct host *h, char *dir)
{
	host_stop(h);
	if (dir) {
		dsh_test_rmtree(dir);
		free(dir);
	}
}

Test(threaded_host, runner_bwrap_runs_come_back_while_threads_allocate, .timeout = 600)
{
	_cleanup_free_ char *yaml = bwrap_config("workspace-write");
	struct host h;
	host_start(&h, yaml, DSH_BACKEND_RUNNER);
	expect_runs(&h, 25);
	host_stop(&h);
}

Test(threaded_host, runner_bwrap_holds_from_a_threaded_host, .timeout = 300)
{
	_cleanup_free_ char *yaml = bwrap_config("workspace-write");
	sandbox_holds(yaml, DSH_BACKEND_RUNNER);
}

/* The hang of issue 40 with the real runner: the host's threads leave SIGCHLD unblocked. */
Test(threaded_host, runner_bwrap_comes_back_while_other_threads_take_sigchld, .timeout = 120)
{
	_cleanup_free_ char *yaml = bwrap_config("workspace-write");
	struct host h;
	host_start(&h, yaml, DSH_BACKEND_RUNNER);
	sigset_t cur;
	cr_assert_eq(pthread_sigmask(SIG_SETMASK, NULL, &cur), 0);
	cr_assert(!sigismember(&cur, SIGCHLD), "the host's threads were started with SIGCHLD unblocked");
	expect_runs(&h, 10);
	host_stop(&h);
}

/* The runner's direct run (danger-full-access, no rules) with runnerCommand [bwrap]: bwrap is not
   used, and the host is not replaced by the command. */
Test(threaded_host, runner_bwrap_direct_run_leaves_the_host_in_place, .timeout = 120)
{
	_cleanup_free_ char *yaml = bwrap_config("danger-full-access");
	struct host h;
	host_start(&h, yaml, DSH_BACKEND_RUNNER);
	pid_t self = getpid();
	for (int i = 0; i < 3; i++) {
		struct dsh_run_result res = { 0 };
		_cleanup_error_ struct dsh_error *err = NULL;
		cr_assert_eq(host_run(&h, "exit 9", &res, &err), 0, "%s", err ? err->msg : "");
		cr_expect_eq(res.exit_code, 9, "run %d: the command's status, and the host still runs to say so", i);
		cr_expect_eq(getpid(), self, "the host is the same process");
		dsh_run_result_clear(&res);
	}
	host_stop(&h);
}

/* A file's appearance, looked for every 5 ms for at most 20 s. */
static bool wait_for_file(const char *path)
{
	for (int i = 0; i < 4000; i++) {
		if (access(path, F_OK) == 0)
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	}
	return false;
}

struct signaller {
	char *started, *sent;
	bool ok;
};

/* The host's own business during the run: once the command runs, SIGUSR1 to the host process. */
static void *signal_the_host(void *arg)
{
	struct signaller *s = arg;
	s->ok = wait_for_file(s->started) && kill(getpid(), SIGUSR1) == 0;
	dsh_test_write_file(s->sent, "");
	return NULL;
}

/*
 * A host that blocks SIGUSR1 in every thread, to take it with sigwait when it chooses, gets SIGUSR1
 * while a run is under way: it is still pending for the host afterwards, and the command never saw
 * it.  (The runner's wait read it from its signalfd in the host's own process, passed it on to the
 * runner and dropped it with the rest at the end.)
 */
static void hosts_signal_stays_the_hosts(enum host_backend b)
{
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, &usr1, &old), 0); /* before the threads: theirs too */
	struct host h;
	char *dir;
	host_start_backend(&h, b, &dir);
	struct signaller s = { 0 };
	cr_assert(asprintf(&s.started, "%s/started", h.ws) > 0);
	cr_assert(asprintf(&s.sent, "%s/sent", h.ws) > 0);
	_cleanup_free_ char *script = NULL;
	cr_assert(asprintf(&script, "touch %s; while [ ! -e %s ]; do sleep 0.01; done; exit 5", s.started, s.sent) > 0);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, signal_the_host, &s), 0);
	struct dsh_run_result res = { 0 };
	_cleanup_error_ struct dsh_error *err = NULL;
	int r = host_run(&h, script, &res, &err);
	pthread_join(t, NULL);
	cr_assert_eq(r, 0, "%s", err ? err->msg : "");
	cr_assert(s.ok, "the command ran and the host signalled itself");
	cr_expect_eq(res.signal, 0);
	cr_expect_eq(res.exit_code, 5, "the command's own status");
	sigset_t pending;
	cr_assert_eq(sigpending(&pending), 0);
	cr_expect(sigismember(&pending, SIGUSR1), "the host's SIGUSR1 is still the host's, pending");
	cr_expect_eq(sigtimedwait(&usr1, NULL, &(struct timespec){ 0 }), SIGUSR1, "and the host takes it");
	dsh_run_result_clear(&res);
	free(s.started);
	free(s.sent);
	host_stop_backend(&h, dir);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

Test(threaded_host, linux_ns_leaves_the_hosts_signals_to_it, .timeout = 120)
{
	hosts_signal_stays_the_hosts(HB_LINUX_NS);
}

Test(threaded_host, landlock_leaves_the_hosts_signals_to_it, .timeout = 120)
{
	hosts_signal_stays_the_hosts(HB_LANDLOCK);
}

Test(threaded_host, none_leaves_the_hosts_signals_to_it, .timeout = 120)
{
	hosts_signal_stays_the_hosts(HB_NONE);
}

Test(threaded_host, runner_leaves_the_hosts_signals_to_it, .timeout = 120)
{
	hosts_signal_stays_the_hosts(HB_RUNNER_FAKE);
}

Test(threaded_host, runner_bwrap_leaves_the_hosts_signals_to_it, .timeout = 120)
{
	hosts_signal_stays_the_hosts(HB_RUNNER_BWRAP);
}

/* A host that reaps every child it has (PID 1 of a container; a reaper thread on waitpid(-1)). */
static void *reap_everything(void *arg)
{
	(void)arg;
	/* Blocking, as a reaper waits: woken the moment a child ends, before its parent's poll is. */
	while (!atomic_load(&stop))
		if (waitpid(-1, NULL, 0) < 0)
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	return NULL;
}

/*
 * Runs from a host whose reaper thread takes every child's status: each still comes back with the
 * command's own.  (The runner's child was the host's own; the reaper took its status and the
 * runner's wait looked for it for ever.)  None execs the command in the host's child, whose status
 * is all there is: such a host cannot have it, and none is not run here.
 */
static void runs_come_back_while_the_host_reaps(enum host_backend b)
{
	struct host h;
	char *dir;
	host_start_backend(&h, b, &dir);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, reap_everything, NULL), 0);
	expect_runs(&h, 5);
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	host_stop_backend(&h, dir);
}

Test(threaded_host, linux_ns_runs_come_back_while_the_host_reaps_every_child, .timeout = 120)
{
	runs_come_back_while_the_host_reaps(HB_LINUX_NS);
}

Test(threaded_host, landlock_runs_come_back_while_the_host_reaps_every_child, .timeout = 120)
{
	runs_come_back_while_the_host_reaps(HB_LANDLOCK);
}

Test(threaded_host, runner_runs_come_back_while_the_host_reaps_every_child, .timeout = 120)
{
	runs_come_back_while_the_host_reaps(HB_RUNNER_FAKE);
}

Test(threaded_host, runner_bwrap_runs_come_back_while_the_host_reaps_every_child, .timeout = 120)
{
	runs_come_back_while_the_host_reaps(HB_RUNNER_BWRAP);
}

/*
 * A host that ignores SIGCHLD (its children are reaped by the kernel, no status kept): the wait
 * has a status to wait for all the same, and the host's disposition is its own afterwards.  None
 * is not run here, as above: the host's child is the command.
 */
static void runs_come_back_while_the_host_ignores_sigchld(enum host_backend b)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	cr_assert_eq(sigaction(SIGCHLD, &ign, &old), 0);
	struct host h;
	char *dir;
	host_start_backend(&h, b, &dir);
	expect_runs(&h, 5);
	struct sigaction now;
	cr_assert_eq(sigaction(SIGCHLD, NULL, &now), 0);
	cr_expect(now.sa_handler == SIG_IGN, "the host's SIGCHLD is still ignored");
	host_stop_backend(&h, dir);
	sigaction(SIGCHLD, &old, NULL);
}

Test(threaded_host, linux_ns_runs_come_back_while_the_host_ignores_sigchld, .timeout = 120)
{
	runs_come_back_while_the_host_ignores_sigchld(HB_LINUX_NS);
}

Test(threaded_host, landlock_runs_come_back_while_the_host_ignores_sigchld, .timeout = 120)
{
	runs_come_back_while_the_host_ignores_sigchld(HB_LANDLOCK);
}

Test(threaded_host, runner_runs_come_back_while_the_host_ignores_sigchld, .timeout = 120)
{
	runs_come_back_while_the_host_ignores_sigchld(HB_RUNNER_FAKE);
}

Test(threaded_host, runner_bwrap_runs_come_back_while_the_host_ignores_sigchld, .timeout = 120)
{
	runs_come_back_while_the_host_ignores_sigchld(HB_RUNNER_BWRAP);
}
