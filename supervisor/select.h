/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_SELECT_H
#define DSH_SUPERVISOR_SELECT_H

#include "dshbox/backend.h"
#include "policy/policy.h"

/*
 * Choose the backend for a run (SPEC 4).  An explicit backend is used as asked.  auto: danger-full-
 * access without r-/-- rules runs with none (argv verbatim); otherwise linux-ns, then landlock, each
 * probe bounded by probe_timeout_ms; when neither can enforce, fail closed (-ENOTSUP, with a hint),
 * except in danger-full-access, which falls back to none (describe says what is not enforced).
 */
int dsh_backend_select(const struct dsh_policy *p, const struct dsh_backend **ret, struct dsh_error **err);

/* Whether the policy has any r- or -- rule. */
bool dsh_policy_has_deny_rules(const struct dsh_policy *p);

/* The --report JSON object (SPEC 2) for a chosen backend and its description. */
int dsh_run_report_json(const struct dsh_policy *p, const struct dsh_description *d, char **ret,
			struct dsh_error **err);

#endif
