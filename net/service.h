/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_SERVICE_H
#define DSH_NET_SERVICE_H

/*
 * The network's served side (SPEC 12.2): one process outside the command's network namespace that
 * holds listening sockets made inside it, answers the command's DNS queries, proxies HTTP and
 * SOCKS5, and relays TCP connections to mapped addresses, each to the name the policy allows,
 * connected from the host's namespace after resolving the name there.
 *
 * The supervisor makes the listeners inside the command's namespace (ns/net.c), forks, and in the
 * child calls dsh_netsvc_prepare() (reads the host's resolver configuration while it still can),
 * dsh_netsvc_confine() and dsh_netsvc_serve(), which returns when stop_fd hangs up or is readable.
 */

#include <stddef.h>
#include <stdint.h>

#include "dshbox/error.h"
#include "policy/netpolicy.h"

/* The command's side of the addresses, fixed for every run (its own namespace: no clash). */
#define DSH_NETSVC_HTTP_PORT 3128      /* 127.0.0.1: HTTP proxy, CONNECT and absolute-URI */
#define DSH_NETSVC_SOCKS_PORT 1080     /* 127.0.0.1: SOCKS5, CONNECT by name or address */
#define DSH_NETSVC_DNS_PORT 53         /* 127.0.0.1: UDP and TCP; /etc/resolv.conf names it */
/* The range the resolver answers allowed names from (RFC 2544's benchmarking block, never routed):
 * a local route on the command's loopback covers it, so each address can be listened on. */
#define DSH_NETSVC_MAPPED_BASE 0xC6120000u /* 198.18.0.0, host order */
#define DSH_NETSVC_MAPPED_BITS 16

struct dsh_netsvc_mapped {
	int fd;        /* listening TCP socket bound to addr:port in the command's namespace */
	uint32_t addr; /* host order, inside DSH_NETSVC_MAPPED_BASE/BITS */
	uint16_t port;
};

struct dsh_netsvc {
	const struct dsh_net_policy *policy;
	int http_fd, socks_fd, dns_udp_fd, dns_tcp_fd; /* listening, in the command's namespace */
	struct dsh_netsvc_mapped *mapped;               /* the pool of mapped addresses and ports */
	size_t n_mapped;
	/* One JSON line per refusal, written as it happens:
	 *   {"name":"x.example","port":443,"via":"dns|http|socks|mapped|sni|host","reason":"..."}
	 * (name may be an address literal).  The supervisor counts them for the report.  -1: none. */
	int events_fd;
	int stop_fd;   /* readable or hung up: close everything and return 0 */
	/* SPEC 12.4, ask: true: one JSON line per undecided name on ask_fd, the answer read back on it
	 * (schema/ask.json); -1: undecided names are denied. */
	int ask_fd;
	/* Where names are resolved (tests point it at their own server); NULL: the host's
	 * /etc/resolv.conf, read by dsh_netsvc_prepare(). */
	const char *resolv_conf;
	struct dsh_netsvc_state *state; /* dsh_netsvc_prepare()'s, freed by dsh_netsvc_serve() */
};

/* Before confinement: the event loop, the host's resolver configuration, the name table. */
int dsh_netsvc_prepare(struct dsh_netsvc *s, struct dsh_error **err);
/* no_new_privs, not dumpable, Landlock with no filesystem access, the seccomp allow-list. */
int dsh_netsvc_confine(struct dsh_error **err);
/* Serve until stop_fd says so. */
int dsh_netsvc_serve(struct dsh_netsvc *s, struct dsh_error **err);

#endif
