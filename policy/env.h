/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_ENV_H
#define DSH_POLICY_ENV_H

#include <stdbool.h>

#include "dshbox/dshbox.h"
#include "policy/options.h"

/*
 * The command's environment (SPEC 1.7), a pure function of the configuration and the caller's
 * environment: the inherited variables (all, the core set, or none), less those whose name matches
 * an exclude pattern (c->env_exclude, or the defaults when it is NULL), then c->env_set in order.
 * *ret_env is the new NULL-terminated vector; *ret_removed the names envp held that it does not
 * (each once, in envp's order; never a value).  Errors name the configuration key.
 */
int dsh_env_command(const struct dsh_config *c, char *const *envp, char ***ret_env, char ***ret_removed,
		    struct dsh_error **err);

/* Whether name matches pattern: '*' any run of bytes, '?' one byte, everything else itself. */
bool dsh_env_name_match(const char *pattern, const char *name, bool ignore_case);

#endif
