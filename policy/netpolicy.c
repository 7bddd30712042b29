/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network policy as a container (SPEC 12); the patterns themselves: netpattern.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/netpolicy.h"

void dsh_net_pattern_clear(struct dsh_net_pattern *p)
{
	free(p->name);
	free(p->text);
	free(p->origin);
	memset(p, 0, sizeof(*p));
}

void dsh_net_policy_init(struct dsh_net_policy *np)
{
	memset(np, 0, sizeof(*np));
	np->allow_local_binding = true;
	np->ask_timeout_ms = 30000;
}

void dsh_net_policy_clear(struct dsh_net_policy *np)
{
	for (size_t i = 0; i < np->n_allow; i++)
		dsh_net_pattern_clear(&np->allow[i]);
	for (size_t i = 0; i < np->n_deny; i++)
		dsh_net_pattern_clear(&np->deny[i]);
	free(np->allow);
	free(np->deny);
	dsh_net_policy_init(np);
}

void dsh_net_policy_free(struct dsh_net_policy *np)
{
	if (!np)
		return;
	dsh_net_policy_clear(np);
	free(np);
}

int dsh_net_policy_add(struct dsh_net_policy *np, bool deny, struct dsh_net_pattern *p, struct dsh_error **err)
{
	struct dsh_net_pattern **v = deny ? &np->deny : &np->allow;
	size_t *n = deny ? &np->n_deny : &np->n_allow;
	struct dsh_net_pattern *grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	*v = grown;
	grown[(*n)++] = *p;
	memset(p, 0, sizeof(*p));
	return 0;
}

static int copy_one(const struct dsh_net_pattern *from, struct dsh_net_pattern *to)
{
	*to = *from;
	to->name = from->name ? strdup(from->name) : NULL;
	to->text = strdup(from->text);
	to->origin = strdup(from->origin);
	if ((from->name && !to->name) || !to->text || !to->origin) {
		dsh_net_pattern_clear(to);
		return -ENOMEM;
	}
	return 0;
}

int dsh_net_policy_copy(const struct dsh_net_policy *from, struct dsh_net_policy **ret, struct dsh_error **err)
{
	struct dsh_net_policy *np = calloc(1, sizeof(*np));
	if (!np)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	dsh_net_policy_init(np);
	np->allow_local_binding = from->allow_local_binding;
	np->ask = from->ask;
	np->ask_timeout_ms = from->ask_timeout_ms;
	for (int deny = 0; deny < 2; deny++) {
		const struct dsh_net_pattern *v = deny ? from->deny : from->allow;
		size_t n = deny ? from->n_deny : from->n_allow;
		for (size_t i = 0; i < n; i++) {
			struct dsh_net_pattern p;
			if (copy_one(&v[i], &p) < 0 || dsh_net_policy_add(np, deny, &p, NULL) < 0) {
				dsh_net_policy_free(np);
				return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			}
		}
	}
	*ret = np;
	return 0;
}
