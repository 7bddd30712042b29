/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_SELECT_H
#define DSH_SUPERVISOR_SELECT_H

#include "dshbox/backend.h"
#include "policy/policy.h"

/* Whether the policy has any r- or -- rule. */
bool dsh_policy_has_deny_rules(const struct dsh_policy *p);

#endif
