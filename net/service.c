/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The service's life: prepare (before confinement: the loop, the host's resolver configuration, the
 * pool), serve until stop_fd says so, and free everything on the way out. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "net/state.h"

static void state_free(struct dsh_netsvc_state *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n_slots; i++)
		free(st->slots[i].name);
	free(st->slots);
	if (st->resolver)
		evdns_base_free(st->resolver, 0);
	if (st->base)
		event_base_free(st->base);
	free(st);
}

/* The distinct addresses of the mapped listeners, in their order: one per name. */
static int build_slots(struct dsh_netsvc *s, struct dsh_netsvc_state *st, struct dsh_error **err)
{
	st->slots = calloc(s->n_mapped ? s->n_mapped : 1, sizeof(*st->slots));
	if (!st->slots)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the mapped pool: out of memory");
	for (size_t i = 0; i < s->n_mapped; i++) {
		uint32_t a = s->mapped[i].addr;
		bool seen = false;
		if (a >> (32 - DSH_NETSVC_MAPPED_BITS) != DSH_NETSVC_MAPPED_BASE >> (32 - DSH_NETSVC_MAPPED_BITS))
			return dsh_err(err, DSH_ERR_USAGE, EINVAL, "the mapped pool: address %u.%u.%u.%u is outside 198.18.0.0/16",
				       a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255);
		for (size_t j = 0; j < st->n_slots && !seen; j++)
			seen = st->slots[j].addr == a;
		if (!seen)
			st->slots[st->n_slots++].addr = a;
	}
	return 0;
}

int dsh_netsvc_prepare(struct dsh_netsvc *s, struct dsh_error **err)
{
	struct dsh_netsvc_state *st = calloc(1, sizeof(*st));
	int r;
	if (!st)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the network service: out of memory");
	r = build_slots(s, st, err);
	if (r < 0)
		goto fail;
	st->base = event_base_new();
	if (!st->base) {
		r = dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the network service: event_base_new failed");
		goto fail;
	}
	/* The host side's resolver, configured now: once confined the service opens no file. */
	st->resolver = evdns_base_new(st->base, 0);
	if (!st->resolver) {
		r = dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the network service: evdns_base_new failed");
		goto fail;
	}
	const char *conf = s->resolv_conf ? s->resolv_conf : "/etc/resolv.conf";
	r = evdns_base_resolv_conf_parse(st->resolver, DNS_OPTIONS_ALL, conf);
	/* 6: the file is missing or empty, and evdns falls back to 127.0.0.1, which in the host's
	 * namespace may be anything: fail rather than guess. */
	if (r != 0 || evdns_base_count_nameservers(st->resolver) == 0) {
		r = dsh_err(err, DSH_ERR_CONFIG, EINVAL, "the network service: no name server in %s (evdns code %d)", conf, r);
		goto fail;
	}
	/* A name is looked up as it was decided, never with the host's search domains appended. */
	evdns_base_search_clear(st->resolver);
	s->state = st;
	return 0;
fail:
	state_free(st);
	return r;
}

int dsh_netsvc_listen(struct dsh_netsvc *s, int fd, evconnlistener_cb cb, void *arg, const char *what,
		      struct evconnlistener **ret, struct dsh_error **err)
{
	evutil_make_socket_nonblocking(fd);
	*ret = evconnlistener_new(s->state->base, cb, arg, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
				  0, fd);
	if (!*ret)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "%s: evconnlistener_new failed", what);
	return 0;
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

int dsh_netsvc_serve(struct dsh_netsvc *s, struct dsh_error **err)
{
	struct dsh_netsvc_state *st = s->state;
	struct event *stop = NULL;
	int r = 0;
	if (!st)
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "the network service: dsh_netsvc_prepare() was not called");
	if (s->stop_fd >= 0) {
		stop = event_new(st->base, s->stop_fd, EV_READ, on_stop, st->base);
		if (!stop || event_add(stop, NULL) < 0) {
			r = dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the network service: watching stop_fd failed");
			goto out;
		}
	}
	/* A client that vanishes mid-relay makes a write fail with EPIPE, not end the service. */
	signal(SIGPIPE, SIG_IGN);
	r = dsh_netsvc_ask_start(s, err);
	if (r >= 0)
		r = dsh_netsvc_dns_start(s, err);
	if (r >= 0)
		r = dsh_netsvc_http_start(s, err);
	if (r >= 0)
		r = dsh_netsvc_socks_start(s, err);
	if (r >= 0)
		r = dsh_netsvc_mapped_start(s, err);
	if (r < 0)
		goto out;
	if (event_base_dispatch(st->base) < 0)
		r = dsh_err(err, DSH_ERR_SYSTEM, EIO, "the network service: the event loop failed");
out:
	/* The listeners first, so nothing new arrives; the connections in flight last. */
	dsh_netsvc_http_stop(s);
	dsh_netsvc_socks_stop(s);
	dsh_netsvc_mapped_stop(s);
	dsh_netsvc_dns_stop(s);
	dsh_netsvc_relays_stop(s);
	dsh_netsvc_ask_stop(s); /* after the relays, which cancel their questions */
	if (stop)
		event_free(stop);
	state_free(st);
	s->state = NULL;
	return r;
}
