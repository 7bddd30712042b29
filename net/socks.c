/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SOCKS5 proxy on s->socks_fd (SPEC 12.2): no authentication (it listens on the command's own
 * loopback), CONNECT by name or by address, through the connector (connect.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "net/socks5.h"
#include "net/state.h"

/* A client that has not sent its greeting and request in this time is dropped. */
#define NEGOTIATION_TIMEOUT_S 30

/* One client before its request is handed to the connector. */
struct sclient {
	struct dsh_netsvc *s;
	struct bufferevent *bev;
	bool greeted;
	struct sclient *prev, *nx;
};

struct dsh_netsvc_socks {
	struct evconnlistener *ls;
	struct sclient *head;
};

static void unlink_client(struct sclient *sc)
{
	struct dsh_netsvc_socks *k = sc->s->state->socks;
	if (sc->prev)
		sc->prev->nx = sc->nx;
	else if (k && k->head == sc)
		k->head = sc->nx;
	if (sc->nx)
		sc->nx->prev = sc->prev;
	sc->prev = sc->nx = NULL;
}

static void on_connected(struct bufferevent *client, int status, void *arg)
{
	struct dsh_netsvc *s = arg;
	unsigned char rep[DSH_SOCKS5_REPLY_LEN];
	dsh_socks5_reply(dsh_socks5_reply_for(status), rep);
	bufferevent_write(client, rep, sizeof(rep));
	if (status < 0)
		dsh_netsvc_close_after_write(s, client);
}

/* Answer with what was written to the output (or nothing) and close. */
static void end(struct sclient *sc)
{
	unlink_client(sc);
	dsh_netsvc_close_after_write(sc->s, sc->bev);
	free(sc);
}

static void on_request(struct sclient *sc, struct evbuffer *in)
{
	size_t n = evbuffer_get_length(in);
	const unsigned char *buf = evbuffer_pullup(in, (ssize_t)n);
	struct dsh_socks5_request r;
	unsigned char rep[DSH_SOCKS5_REPLY_LEN];
	switch (dsh_socks5_parse_request(buf, n, &r)) {
	case DSH_SOCKS5_NEED_MORE:
		return;
	case DSH_SOCKS5_BAD:
	case DSH_SOCKS5_UNSUPPORTED:
		dsh_socks5_reply(r.reply, rep);
		bufferevent_write(sc->bev, rep, sizeof(rep));
		end(sc);
		return;
	case DSH_SOCKS5_FOUND:
		break;
	}
	evbuffer_drain(in, r.len);
	struct dsh_netsvc_conn_req req = { .name = r.host, .port = r.port, .via = "socks" };
	struct dsh_netsvc *s = sc->s;
	struct bufferevent *b = sc->bev;
	unlink_client(sc);
	free(sc);
	dsh_netsvc_connect(s, b, &req, on_connected, s);
}

static void on_read(struct bufferevent *b, void *arg)
{
	struct sclient *sc = arg;
	struct evbuffer *in = bufferevent_get_input(b);
	if (!sc->greeted) {
		size_t n = evbuffer_get_length(in);
		struct dsh_socks5_greeting g;
		switch (dsh_socks5_parse_greeting(evbuffer_pullup(in, (ssize_t)n), n, &g)) {
		case DSH_SOCKS5_NEED_MORE:
			return;
		case DSH_SOCKS5_BAD:
		case DSH_SOCKS5_UNSUPPORTED:
			end(sc);
			return;
		case DSH_SOCKS5_FOUND:
			break;
		}
		/* RFC 1928 3: X'FF', no acceptable method, and the client closes. */
		bufferevent_write(b, g.no_auth ? "\x05\x00" : "\x05\xff", 2);
		if (!g.no_auth) {
			end(sc);
			return;
		}
		evbuffer_drain(in, g.len);
		sc->greeted = true;
	}
	on_request(sc, in);
}

static void on_event(struct bufferevent *b, short what, void *arg)
{
	struct sclient *sc = arg;
	(void)what;
	unlink_client(sc);
	bufferevent_free(b);
	free(sc);
}

static void on_accept(struct evconnlistener *ls, evutil_socket_t fd, struct sockaddr *sa, int socklen, void *arg)
{
	struct dsh_netsvc *s = arg;
	struct dsh_netsvc_socks *k = s->state->socks;
	struct timeval tv = { NEGOTIATION_TIMEOUT_S, 0 };
	(void)ls;
	(void)sa;
	(void)socklen;
	struct bufferevent *b = bufferevent_socket_new(s->state->base, fd, BEV_OPT_CLOSE_ON_FREE);
	struct sclient *sc = b ? calloc(1, sizeof(*sc)) : NULL;
	if (!sc) {
		if (b)
			bufferevent_free(b);
		else
			evutil_closesocket(fd);
		return;
	}
	sc->s = s, sc->bev = b;
	sc->nx = k->head;
	if (k->head)
		k->head->prev = sc;
	k->head = sc;
	bufferevent_setcb(b, on_read, NULL, on_event, sc);
	/* The greeting and a request are at most 2 + 255 and 7 + 255 + 2 bytes. */
	bufferevent_setwatermark(b, EV_READ, 0, 1024);
	bufferevent_set_timeouts(b, &tv, NULL);
	bufferevent_enable(b, EV_READ);
}

int dsh_netsvc_socks_start(struct dsh_netsvc *s, struct dsh_error **err)
{
	struct dsh_netsvc_state *st = s->state;
	if (s->socks_fd < 0)
		return 0;
	st->socks = calloc(1, sizeof(*st->socks));
	if (!st->socks)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the SOCKS5 proxy: out of memory");
	return dsh_netsvc_listen(s, s->socks_fd, on_accept, s, "the SOCKS5 proxy", &st->socks->ls, err);
}

void dsh_netsvc_socks_stop(struct dsh_netsvc *s)
{
	struct dsh_netsvc_socks *k = s->state ? s->state->socks : NULL;
	if (!k)
		return;
	if (k->ls)
		evconnlistener_free(k->ls);
	while (k->head) {
		struct sclient *sc = k->head;
		k->head = sc->nx;
		bufferevent_free(sc->bev);
		free(sc);
	}
	free(k);
	s->state->socks = NULL;
}
