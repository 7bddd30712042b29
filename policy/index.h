/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_INDEX_H
#define DSH_POLICY_INDEX_H

#include "policy/policy.h"

/* Built once by dsh_policy_new() over the final rules (policy/index.c); -ENOMEM on failure. */
int dsh_rule_index_build(struct dsh_rule_index *x, const struct dsh_rule *rules, size_t n);
void dsh_rule_index_clear(struct dsh_rule_index *x);

/* The first rule in policy order, as a scan of every rule would find it, or NULL. */
const struct dsh_rule *dsh_index_first_deny(const struct dsh_policy *p, const char *path);
void dsh_index_first_deny_ro(const struct dsh_policy *p, const char *path, const struct dsh_rule **deny,
			     const struct dsh_rule **ro);
/* The first non-rw rule covering path or with a target at or beneath it; path is 2 bytes or more. */
const struct dsh_rule *dsh_index_first_guarding(const struct dsh_policy *p, const char *path);

#endif
