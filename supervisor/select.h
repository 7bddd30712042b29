/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_SELECT_H
#define DSH_SUPERVISOR_SELECT_H

#include "dshbox/backend.h"
#include "policy/policy.h"
#include "policy/netpolicy.h"

#include <jansson.h>

/* Whether the policy has any r- or -- rule. */
bool dsh_policy_has_deny_rules(const struct dsh_policy *p);

/* SPEC 12.3: 0 when backend b can enforce o's network (a filter by name: linux-ns only); else -ENOTSUP. */
int dsh_backend_check_network(const struct dsh_backend *b, const struct dsh_run_options *o, struct dsh_error **err);
/*
 * auto's choice among order[0..n) (NULL entries skipped), each probed with what is left of one
 * probeTimeoutMs; prior: an earlier backend's refusal, counted as its probe's.  A probe that gives no
 * answer in time, or a budget spent before the last backend, fails closed (ETIMEDOUT, kind
 * DSH_ERR_SYSTEM) naming the probe and the bound: never a fall back to the next backend.  Tests
 * pass backends of their own here (a probe that hangs).
 */
int dsh_backend_select_among(const struct dsh_policy *p, const struct dsh_run_options *o,
			     const struct dsh_backend *const *order, size_t n, const struct dsh_error *prior,
			     const struct dsh_backend **ret, struct dsh_error **err);

/* A filtered network's patterns as explain and the report show them (SPEC 12.3). */
json_t *dsh_net_policy_json(const struct dsh_net_policy *np);

#endif
