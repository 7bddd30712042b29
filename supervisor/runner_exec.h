/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_RUNNER_EXEC_H
#define DSH_SUPERVISOR_RUNNER_EXEC_H

/*
 * The runner backend (SPEC 1.5, 4): runnerCommand + bubblewrap-dialect profile arguments + "--" +
 * the command.  The argv builder and the failure-signature scanner are pure; dsh_runner_run()
 * spawns the runner, relays its stderr unchanged while scanning it, and waits.
 */

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/backend.h"
#include "policy/policy.h"

/* The official bubblewrap-dialect arguments for the policy's mode (no rules): NULL-terminated. */
int dsh_runner_profile_args(const struct dsh_policy *p, bool network, char ***ret, struct dsh_error **err);

/*
 * What the dialect would say for one rule (SPEC 4: rw -> --bind-try, r- -> --ro-bind-try, -- ->
 * --ro-bind-try, degraded), appended to *v; 0 when it has no spelling for it (a glob), 1 when added.
 * Never used to run: any rule with runnerCommand is refused (SPEC 1.5, docs/backends.md).
 */
int dsh_runner_rule_args(const struct dsh_rule *r, char ***v);

/* Case-insensitive substring search over a byte stream delivered in chunks. */
struct dsh_sigscan {
	char *const *sigs;
	size_t max_len;
	char *window;      /* the last max_len-1 bytes seen (then the head of the next chunk) */
	size_t window_len;
	int matched;       /* index of the first signature seen, or -1 */
};
void dsh_sigscan_init(struct dsh_sigscan *s, char *const *sigs);
void dsh_sigscan_feed(struct dsh_sigscan *s, const char *buf, size_t n);
void dsh_sigscan_clear(struct dsh_sigscan *s);

struct dsh_runner_spawn {
	const char *path;          /* the runner executable, absolute */
	char *const *argv;
	char *const *envp;
	const char *cwd;           /* NULL: stay */
	const int *preserve_fds;
	size_t n_preserve_fds;
	char *const *signatures;   /* runnerFailureSignatures; NULL: stderr is not relayed */
	int stderr_fd;             /* where the relayed stderr goes (2 in a run) */
};

/*
 * Run and wait.  *ret_matched is the index of the first signature the runner's stderr held, or -1.
 * Signals a terminal sends (INT, TERM, HUP, QUIT, USR1, USR2, WINCH) are passed on.
 */
int dsh_runner_run(const struct dsh_runner_spawn *s, struct dsh_run_result *ret, int *ret_matched,
		   struct dsh_error **err);

/* The executable for name: itself when it holds a '/', else the first match in PATH of envp. */
int dsh_runner_find_program(const char *name, char *const *envp, char **ret, struct dsh_error **err);

#endif
