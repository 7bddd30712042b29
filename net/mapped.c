/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mapped addresses (SPEC 12.2): one listener per s->mapped[i], each a pool address and port
 * in the command's namespace.  A connection to one reaches the name the resolver (dns.c) gave
 * that address, on that port, through the connector (connect.c): tools that ignore the proxy
 * variables reach allowed names and nothing else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "net/state.h"

struct mapped_ls {
	struct dsh_netsvc *s;
	size_t i; /* s->mapped[i] */
	struct evconnlistener *ls;
};

struct dsh_netsvc_mapped_ls {
	struct mapped_ls *v;
	size_t n;
};

static void on_connected(struct bufferevent *client, int status, void *arg)
{
	(void)arg;
	/* Nothing to answer with on a raw connection: a failure is its close. */
	if (status < 0)
		bufferevent_free(client);
}

/* The listener's own entry says which address was dialled: the listener was made for it, and
 * getsockname() would say no more (less, where the socket is bound wider). */
static void on_accept(struct evconnlistener *ls, evutil_socket_t fd, struct sockaddr *sa, int socklen, void *arg)
{
	struct mapped_ls *m = arg;
	struct dsh_netsvc *s = m->s;
	const struct dsh_netsvc_mapped *e = &s->mapped[m->i];
	(void)ls;
	(void)sa;
	(void)socklen;
	const char *name = dsh_netsvc_name_of(s->state, e->addr);
	if (!name) {
		char a[16];
		snprintf(a, sizeof(a), "%u.%u.%u.%u", e->addr >> 24, e->addr >> 16 & 255, e->addr >> 8 & 255, e->addr & 255);
		dsh_netsvc_event(s, a, e->port, "mapped", "address not given");
		evutil_closesocket(fd);
		return;
	}
	struct bufferevent *b = bufferevent_socket_new(s->state->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!b) {
		evutil_closesocket(fd);
		return;
	}
	struct dsh_netsvc_conn_req req = { .name = name, .port = e->port, .via = "mapped" };
	dsh_netsvc_connect(s, b, &req, on_connected, NULL);
}

int dsh_netsvc_mapped_start(struct dsh_netsvc *s, struct dsh_error **err)
{
	struct dsh_netsvc_state *st = s->state;
	st->mapped = calloc(1, sizeof(*st->mapped));
	if (!st->mapped || !(st->mapped->v = calloc(s->n_mapped ? s->n_mapped : 1, sizeof(*st->mapped->v))))
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the mapped addresses: out of memory");
	for (size_t i = 0; i < s->n_mapped; i++) {
		struct mapped_ls *m = &st->mapped->v[st->mapped->n];
		if (s->mapped[i].fd < 0)
			continue;
		*m = (struct mapped_ls){ .s = s, .i = i };
		int r = dsh_netsvc_listen(s, s->mapped[i].fd, on_accept, m, "a mapped address", &m->ls, err);
		if (r < 0)
			return r;
		st->mapped->n++;
	}
	return 0;
}

void dsh_netsvc_mapped_stop(struct dsh_netsvc *s)
{
	struct dsh_netsvc_mapped_ls *ml = s->state ? s->state->mapped : NULL;
	if (!ml)
		return;
	for (size_t i = 0; i < ml->n; i++)
		evconnlistener_free(ml->v[i].ls);
	free(ml->v);
	free(ml);
	s->state->mapped = NULL;
}
