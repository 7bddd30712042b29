/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_STATE_H
#define DSH_NET_STATE_H

/* The service's own state, shared by its parts (dns.c, the proxies, the relays); not for callers. */

#include <stdbool.h>
#include <stdint.h>

#include <event2/listener.h>

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
	/* Each part's own state, opaque here, made by its start and freed by its stop. */
	struct dsh_netsvc_http *http;       /* http.c */
	struct dsh_netsvc_socks *socks;     /* socks.c */
	struct dsh_netsvc_mapped_ls *mapped; /* mapped.c */
	struct dsh_netsvc_relays *relays;   /* connect.c: the connections in flight, freed at stop */
	struct dsh_netsvc_asker *asker;     /* ask.c: the host's questions in flight */
	int stopping;                       /* set by dsh_netsvc_serve() on the way out */
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

/*
 * The connector (connect.c), shared by the front ends (http.c, socks.c, mapped.c): decide name:port
 * (an address literal by dsh_net_decide_addr, a name by dsh_net_decide_name; ASK is denied until
 * SPEC 12.4 lands), resolve an allowed name with st->resolver on the host side, connect there, and
 * call done(client, status, arg) once: status 0 when connected (done writes its success reply to
 * client's output; when done returns, the relay owns client and starts), or a negative errno when
 * not (-EACCES denied, -ENOENT no such name, -ECONNREFUSED, -ETIMEDOUT, -ENETUNREACH, -ENOMEM): done
 * writes its failure reply and frees client.  Each refusal is one dsh_netsvc_event() with via.
 *
 * The relay holds a connection to the name it was decided on (SPEC 12.2, no fronting): the first
 * bytes the command sends through are read before any reaches the upstream; a TLS ClientHello whose
 * server name is not that name, or a plain HTTP request whose Host is not, ends the connection with
 * an event (via "sni" or "host").  Bytes already in client's input (an absolute-URI request
 * rewritten by the proxy, say) are the first bytes.
 */
struct bufferevent;
struct dsh_netsvc_conn_req {
	const char *name; /* as the command asked: a host name, or an IPv4/IPv6 address literal */
	uint16_t port;
	const char *via;  /* "http", "socks" or "mapped": for events; a string literal (kept) */
};
typedef void (*dsh_netsvc_connected_fn)(struct bufferevent *client, int status, void *arg);
void dsh_netsvc_connect(struct dsh_netsvc *s, struct bufferevent *client, const struct dsh_netsvc_conn_req *req,
			dsh_netsvc_connected_fn done, void *arg);

/* Free b once its output has been written (a refusal's reply must reach the client before the
 * close), at once when it cannot be or when the service is stopping. */
void dsh_netsvc_close_after_write(struct dsh_netsvc *s, struct bufferevent *b);

/* Replace the request head at the start of in (buf, r: as parsed from it) by one asking for
 * Connection: close, without the client's Connection, Keep-Alive, Proxy-Connection and
 * Proxy-Authorization; to_origin_form: the request line in origin form, for a FORWARD (http.c). */
struct evbuffer;
struct dsh_httpreq;
int dsh_netsvc_head_close(struct evbuffer *in, const unsigned char *buf, const struct dsh_httpreq *r,
			  bool to_origin_form);

/* A listener on fd, a socket already listening in the command's namespace (backlog 0: not
 * listened again), made non-blocking: the listener accepts until EAGAIN, so a blocking socket
 * would stall the loop.  what names it in the error. */
int dsh_netsvc_listen(struct dsh_netsvc *s, int fd, evconnlistener_cb cb, void *arg, const char *what,
		      struct evconnlistener **ret, struct dsh_error **err);

/* The front ends: listeners on s->http_fd (http.c), s->socks_fd (socks.c), s->mapped (mapped.c). */
int dsh_netsvc_http_start(struct dsh_netsvc *s, struct dsh_error **err);
void dsh_netsvc_http_stop(struct dsh_netsvc *s);
int dsh_netsvc_socks_start(struct dsh_netsvc *s, struct dsh_error **err);
void dsh_netsvc_socks_stop(struct dsh_netsvc *s);
int dsh_netsvc_mapped_start(struct dsh_netsvc *s, struct dsh_error **err);
void dsh_netsvc_mapped_stop(struct dsh_netsvc *s);
/* The connections connect.c holds, closed by dsh_netsvc_serve() on the way out. */
void dsh_netsvc_relays_stop(struct dsh_netsvc *s);

/* SPEC 12.4 (ask.c): ask the host whether name:port (port 0: a DNS query) may be reached; fn(allowed,
 * arg) is called once, from the event loop, never from inside the call.  NULL when it cannot even
 * be asked (out of memory, too many questions in flight): denied, and fn is never called. */
struct dsh_netsvc_ask;
typedef void (*dsh_netsvc_answer_fn)(bool allowed, void *arg);
struct dsh_netsvc_ask *dsh_netsvc_ask(struct dsh_netsvc *s, const char *name, uint16_t port, const char *via,
				      dsh_netsvc_answer_fn fn, void *arg);
/* The caller goes away first: fn will not be called. */
void dsh_netsvc_ask_cancel(struct dsh_netsvc_ask *q);
int dsh_netsvc_ask_start(struct dsh_netsvc *s, struct dsh_error **err);
void dsh_netsvc_ask_stop(struct dsh_netsvc *s);

/* The command's resolver on s->dns_udp_fd (dns.c). */
int dsh_netsvc_dns_start(struct dsh_netsvc *s, struct dsh_error **err);
void dsh_netsvc_dns_stop(struct dsh_netsvc *s);

#endif
