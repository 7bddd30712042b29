/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The command's resolver (SPEC 12.2): an allowed name gets its pool address (A, TTL 60), AAAA and
 * every other type an empty NOERROR (clients fall back to A), a denied name REFUSED.  The query is
 * answered here and never forwarded: a name outside the lists must not leave the machine, even
 * as a lookup (`<secret>.attacker.example`).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/dns_struct.h>
#include <event2/event.h>

#include "net/state.h"

#define ANSWER_TTL 60

static void on_query(struct evdns_server_request *req, void *arg)
{
	struct dsh_netsvc *s = arg;
	struct dsh_netsvc_state *st = s->state;
	int rcode = 0;

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
	/* ask: the DNS side cannot wait for the host (SPEC 12.4 asks per connection): refuse. */
	if (dsh_netsvc_decide_any_port(s->policy, name) != DSH_NET_ALLOW) {
		dsh_netsvc_event(s, name, 0, "dns", "denied");
		rcode = DNS_ERR_REFUSED;
	} else if (q->dns_question_class == EVDNS_CLASS_INET && q->type == EVDNS_TYPE_A) {
		uint32_t addr = dsh_netsvc_map_name(st, name);
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
	free(name);
	evdns_server_request_respond(req, rcode);
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
