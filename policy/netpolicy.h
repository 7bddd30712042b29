/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_NETPOLICY_H
#define DSH_POLICY_NETPOLICY_H

/*
 * The network by name (SPEC 12): the patterns of a `network:` mapping and the verdict on a name or
 * an address the command asks for.  Pure: no lookup, no socket; the served side (net/) asks here.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dshbox/error.h"

enum dsh_net_kind {
	DSH_NET_NAME,   /* "example.org": that name only */
	DSH_NET_BELOW,  /* "*.example.org": every name below it, not the name itself */
	DSH_NET_ADDR,   /* an IP literal or a CIDR block, matched only against addresses */
};

struct dsh_net_pattern {
	enum dsh_net_kind kind;
	char *name;             /* NAME and BELOW: lower-case ASCII (IDNA), no trailing dot, no "*." */
	int family;             /* ADDR: AF_INET or AF_INET6 */
	unsigned char addr[16]; /* ADDR: network byte order, host bits cleared */
	unsigned prefix;        /* ADDR: 32 or 128 for a literal */
	uint16_t port;          /* 0: ports 80 and 443 (SPEC 12.1) */
	char *text;             /* as written, trimmed */
	char *origin;           /* "FILE:LINE", "--allow-domain" or "--deny-domain" */
};

struct dsh_net_policy {
	struct dsh_net_pattern *allow, *deny;
	size_t n_allow, n_deny;
	bool allow_local_binding; /* the command may listen on its own loopback (default true) */
	bool ask;                 /* names in neither list go to the host (SPEC 12.4) */
	unsigned ask_timeout_ms;  /* askTimeoutMs, default 30000 */
};

enum dsh_net_verdict {
	DSH_NET_DENY,
	DSH_NET_ALLOW,
	DSH_NET_ASK, /* in neither list, and the policy asks the host */
};

const char *dsh_net_verdict_to_string(enum dsh_net_verdict v);

/* Parse one pattern; origin is copied into it and names it in errors (bad patterns fail the load). */
int dsh_net_pattern_parse(const char *text, const char *origin, struct dsh_net_pattern *ret, struct dsh_error **err);
void dsh_net_pattern_clear(struct dsh_net_pattern *p);

/* A name as a command may spell it (any case, a trailing dot, UTF-8) in the form patterns hold:
 * lower-case ASCII, IDNA-encoded, no trailing dot.  -EINVAL for what is no host name. */
int dsh_net_name_normalize(const char *name, char **ret, struct dsh_error **err);

/* The verdict on a name (normalised here; one that is no host name is denied) on a port.  Deny beats
 * allow; a name never matches an address pattern, even when it spells one. */
enum dsh_net_verdict dsh_net_decide_name(const struct dsh_net_policy *np, const char *name, uint16_t port);
/* The verdict on an address the command connects to by number: only ADDR patterns can allow it. */
enum dsh_net_verdict dsh_net_decide_addr(const struct dsh_net_policy *np, int family, const void *addr, uint16_t port);

/* Append a parsed pattern to allow (deny false) or deny.  Takes *p's contents; *p is cleared. */
int dsh_net_policy_add(struct dsh_net_policy *np, bool deny, struct dsh_net_pattern *p, struct dsh_error **err);
void dsh_net_policy_init(struct dsh_net_policy *np);
void dsh_net_policy_clear(struct dsh_net_policy *np);
/* A deep copy (the run options own theirs). */
int dsh_net_policy_copy(const struct dsh_net_policy *from, struct dsh_net_policy **ret, struct dsh_error **err);
void dsh_net_policy_free(struct dsh_net_policy *np);

#endif
