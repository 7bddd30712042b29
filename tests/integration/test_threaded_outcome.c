/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Two threads of a host call dsh_run() at once, their commands ending together: each must get
 * its own command's status.  The supervising child's outcome was once read into one static buffer
 * shared by every thread of the host (supervisor/forked_run.c), and a run came back with the other
 * thread's status now and then (~5 in 1,000 in make soak's mix).  A barrier before each run puts
 * both reads in the same moment, as often as it can.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "dshbox/backend.h"
#include "dshbox/dshbox.h"
#include "tests/lib/harness.h"

#define RUNS 150

static pthread_barrier_t together;
static struct dsh_policy *policy;
static struct dsh_run_options *options;
static atomic_int crossed, errors;

static void *runs(void *arg)
{
	int mine = (int)(long)arg; /* 3 or 4: the status of this thread's commands */
	char script[32];
	snprintf(script, sizeof(script), "exit %d", mine);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct dsh_run_request req = { .argv = argv, .envp = dsh_run_options_command_env(options) };
	for (int i = 0; i < RUNS; i++) {
		struct dsh_run_setup setup = { 0 };
		struct dsh_run_result res = { 0 };
		struct dsh_error *err = NULL;
		pthread_barrier_wait(&together);
		if (dsh_run(policy, options, &req, NULL, &setup, &res, &err) < 0)
			atomic_fetch_add(&errors, 1);
		else if (res.signal != 0 || res.exit_code != mine)
			atomic_fetch_add(&crossed, 1);
		dsh_run_result_clear(&res);
		dsh_run_setup_clear(&setup);
		dsh_error_free(err);
	}
	return NULL;
}

Test(threaded_outcome, each_thread_gets_its_own_commands_status, .timeout = 300)
{
	dsh_test_require_backend();
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	char *env[] = { "HOME=/nonexistent", "PATH=/usr/bin:/bin", NULL };
	struct dsh_config *c = dsh_config_new();
	struct dsh_error *err = NULL;
	cr_assert(c);
	cr_assert_eq(dsh_config_set_workspace(c, ws, &err), 0);
	cr_assert_eq(dsh_config_set_protect_defaults(c, false, &err), 0);
	cr_assert_eq(dsh_config_set_backend(c, DSH_BACKEND_LINUX_NS, &err), 0);
	cr_assert_eq(dsh_run_options_new(c, env, &options, &err), 0, "%s", err ? err->msg : "");
	cr_assert_eq(dsh_policy_new(c, env, ws, &policy, &err), 0, "%s", err ? err->msg : "");

	pthread_barrier_init(&together, NULL, 2);
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, runs, (void *)(3 + i)), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&together);
	cr_expect_eq(atomic_load(&errors), 0, "every run ran");
	cr_expect_eq(atomic_load(&crossed), 0, "%d of %d runs came back with the other thread's status",
		     atomic_load(&crossed), 2 * RUNS);

	dsh_policy_free(policy);
	dsh_run_options_free(options);
	dsh_config_free(c);
	dsh_test_rmtree(ws);
}
