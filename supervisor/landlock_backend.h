/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_LANDLOCK_BACKEND_H
#define DSH_SUPERVISOR_LANDLOCK_BACKEND_H

#include "dshbox/backend.h"
#include "landlock/landlock.h"
#include "broker/broker.h"
#include "seccomp/seccomp.h"

/* The landlock backend's plan: everything heavy is done before fork. */
/* How the plan expresses each policy rule, decided once at compile; describe() only reads it. */
struct dsh_landlock_rule_plan {
	int expr;                    /* enum expr of backend_landlock.c */
	const struct dsh_root *root; /* the writable root that swallows the rule (or that a glob reaches
					into), or NULL */
	char *where;                 /* what exists inside that root now (a glob's first match), or NULL */
	bool sockets;                /* a glob matched a directory or socket: sockets beneath stay connectable */
};

struct dsh_landlock_plan {
	const struct dsh_run_options *opts;
	struct dsh_landlock_spec spec;
	struct dsh_seccomp_prog seccomp;
	struct dsh_landlock_rule_plan *rules; /* one per policy rule */
	size_t n_rules;
	struct dsh_seccomp_prog notify;       /* the runtime broker's filter (empty: off) */
	struct dsh_broker broker;
	char **broker_targets;                /* glob matches found at start */
};

int dsh_landlock_plan_build(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_landlock_plan **ret,
			    struct dsh_error **err);
/* The same at a given Landlock ABI (>= 1) instead of the kernel's: what an older kernel enforces,
   for tests (a seccomp shim cannot make landlock_create_ruleset answer a smaller version). */
int dsh_landlock_plan_build_abi(const struct dsh_policy *p, const struct dsh_run_options *o, int abi,
				struct dsh_landlock_plan **ret, struct dsh_error **err);
void dsh_landlock_plan_free(struct dsh_landlock_plan *plan);
int dsh_landlock_confine(const struct dsh_policy *p, void *plan, const struct dsh_run_request *req,
			 struct dsh_run_result *ret, struct dsh_error **err);

#endif
