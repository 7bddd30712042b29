/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_STATE_H
#define DSH_NET_STATE_H

/* The service's own state, shared by its parts (dns.c, the proxies, the relays); not for callers. */

#include <stdint.h>

#include "net/service.h"

struct event_base;
struct evdns_base;
struct evdns_server_port;

/* One address of the pool and the name dns.c gave it (NULL: not given yet). */
struct dsh_netsvc_slot {
	uint32_t addr; /* host order */
	char *name;    /* normalised */
};

struct dsh_netsvc_state {
	struct event_base *base;
	struct evdns_base *resolver;        /* the host side: names the policy allowed, nothing else */
	struct evdns_server_port *dns_udp;  /* the command side */
	struct dsh_netsvc_slot *slots;      /* the distinct addresses of s->mapped, in order */
	size_t n_slots, n_given;
};

/* Port 0 means "any port the patterns allow": the verdict for 443, else 80, else the first explicit
 * allow pattern's port that allows it. */
enum dsh_net_verdict dsh_netsvc_decide_any_port(const struct dsh_net_policy *np, const char *name);

/* The pool address for an allowed, normalised name: the one it was given, else the next free one;
 * 0 when the pool is exhausted. */
uint32_t dsh_netsvc_map_name(struct dsh_netsvc_state *st, const char *name);
/* The name given to addr, or NULL. */
const char *dsh_netsvc_name_of(const struct dsh_netsvc_state *st, uint32_t addr);

/* One refusal as a JSON line on s->events_fd (SPEC 12.2's format); nothing when it is -1. */
void dsh_netsvc_event(const struct dsh_netsvc *s, const char *name, uint16_t port, const char *via,
		      const char *reason);

/* The command's resolver on s->dns_udp_fd (dns.c). */
int dsh_netsvc_dns_start(struct dsh_netsvc *s, struct dsh_error **err);
void dsh_netsvc_dns_stop(struct dsh_netsvc *s);

#endif
