/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The command's resolver (SPEC 12.2): an allowed name gets its pool address (A, TTL 60), AAAA and
 * every other type an empty NOERROR (clients fall back to A), a denied name REFUSED.  The query is
 * answered here and never forwarded: a name outside the lists must not leave the machine, even
 * as a lookup (`<secret>.attacker.example`).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/dns_struct.h>
#include <event2/event.h>

#include "net/state.h"

#define ANSWER_TTL 60

/* The answer for an allowed name: its pool address for A, an empty answer for any other type. */
static void respond_allowed(struct dsh_netsvc *s, struct evdns_server_request *req, const char *name)
{
	const struct evdns_server_question *q = req->questions[0];
	int rcode = 0;
	if (q->dns_question_class == EVDNS_CLASS_INET && q->type == EVDNS_TYPE_A) {
		uint32_t addr = dsh_netsvc_map_name(s->state, name);
		if (!addr) {
			dsh_netsvc_event(s, name, 0, "dns", "no mapped address left");
			rcode = DNS_ERR_REFUSED;
		} else {
			uint32_t be = htonl(addr);
			/* The answer names the question as asked: resolvers compare it case-insensitively. */
			if (evdns_server_request_add_a_reply(req, q->name, 1, &be, ANSWER_TTL) < 0)
				rcode = DNS_ERR_SERVERFAILED;
		}
	}
	evdns_server_request_respond(req, rcode);
}

/* A query for a name in neither list, held while the host is asked (SPEC 12.4). */
struct asked {
	struct dsh_netsvc *s;
	struct evdns_server_request *req;
	char *name;
};

static void on_answer(bool allowed, void *arg)
{
	struct asked *k = arg;
	if (allowed)
		respond_allowed(k->s, k->req, k->name);
	else
		evdns_server_request_respond(k->req, DNS_ERR_REFUSED);
	free(k->name);
	free(k);
}

static bool ask_host(struct dsh_netsvc *s, struct evdns_server_request *req, char *name)
{
	struct asked *k = calloc(1, sizeof(*k));
	if (!k)
		return false;
	*k = (struct asked){ s, req, name };
	if (!dsh_netsvc_ask(s, name, 0, "dns", on_answer, k)) {
		free(k);
		return false;
	}
	return true;
}

static void on_query(struct evdns_server_request *req, void *arg)
{
	struct dsh_netsvc *s = arg;

	/* One question is what every resolver sends; more is refused rather than half answered. */
	if (req->nquestions != 1) {
		evdns_server_request_respond(req, DNS_ERR_FORMAT);
		return;
	}
	const struct evdns_server_question *q = req->questions[0];
	char *name = NULL;
	struct dsh_error *e = NULL;
	if (dsh_net_name_normalize(q->name, &name, &e) < 0) {
		dsh_error_free(e);
		dsh_netsvc_event(s, q->name, 0, "dns", "not a host name");
		evdns_server_request_respond(req, DNS_ERR_REFUSED);
		return;
	}
	enum dsh_net_verdict v = dsh_netsvc_decide_any_port(s->policy, name);
	if (v == DSH_NET_ALLOW) {
		respond_allowed(s, req, name);
	} else if (v == DSH_NET_ASK && ask_host(s, req, name)) {
		return; /* answered when the host has: the name is the question's now */
	} else {
		dsh_netsvc_event(s, name, 0, "dns", "denied");
		evdns_server_request_respond(req, DNS_ERR_REFUSED);
	}
	free(name);
}

int dsh_netsvc_dns_start(struct dsh_netsvc *s, struct dsh_error **err)
{
	if (s->dns_udp_fd < 0)
		return 0;
	/* evdns reads until EAGAIN: a blocking socket would stall every other part of the loop. */
	evutil_make_socket_nonblocking(s->dns_udp_fd);
	s->state->dns_udp = evdns_add_server_port_with_base(s->state->base, s->dns_udp_fd, 0, on_query, s);
	if (!s->state->dns_udp)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the command's resolver: evdns_add_server_port failed");
	return 0;
}

void dsh_netsvc_dns_stop(struct dsh_netsvc *s)
{
	if (s->state && s->state->dns_udp) {
		evdns_close_server_port(s->state->dns_udp);
		s->state->dns_udp = NULL;
	}
}
