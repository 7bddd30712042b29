/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The HTTP proxy on s->http_fd (SPEC 12.2): CONNECT host:port opens a tunnel, an absolute-URI
 * request is forwarded in origin form; either way through the connector (connect.c), which
 * decides the name and holds the connection to it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "net/httpreq.h"
#include "net/state.h"

/* A client that sends no whole head in this time is dropped: it holds a descriptor. */
#define HEAD_TIMEOUT_S 30

/* One client still sending its head; once the head is read it is the connector's done() arg. */
struct hclient {
	struct dsh_netsvc *s;
	struct bufferevent *bev;
	bool tunnel;                  /* CONNECT: done() answers 200 */
	char host[DSH_NET_HOST_ROOM]; /* for the refusal's body */
	struct hclient *prev, *nx;
};

struct dsh_netsvc_http {
	struct evconnlistener *ls;
	struct hclient *head; /* the clients still sending their heads */
};

static void unlink_client(struct hclient *hc)
{
	struct dsh_netsvc_http *h = hc->s->state->http;
	if (hc->prev)
		hc->prev->nx = hc->nx;
	else if (h && h->head == hc)
		h->head = hc->nx;
	if (hc->nx)
		hc->nx->prev = hc->prev;
	hc->prev = hc->nx = NULL;
}

/* The answer to a request not served (or refused), then the close. */
static void reply(struct dsh_netsvc *s, struct bufferevent *b, int code, const char *text, const char *body)
{
	evbuffer_add_printf(bufferevent_get_output(b),
			    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			    code, text, strlen(body), body);
	dsh_netsvc_close_after_write(s, b);
}

static void on_connected(struct bufferevent *client, int status, void *arg)
{
	struct hclient *hc = arg;
	char body[DSH_NET_HOST_ROOM + 96];
	if (status == 0) {
		if (hc->tunnel)
			evbuffer_add_printf(bufferevent_get_output(client), "HTTP/1.1 200 Connection Established\r\n\r\n");
		free(hc);
		return;
	}
	switch (status) {
	case -EACCES:
		snprintf(body, sizeof(body), "dshbox: the sandbox's network policy does not allow %s\n", hc->host);
		reply(hc->s, client, 403, "Forbidden", body);
		break;
	case -ETIMEDOUT:
		snprintf(body, sizeof(body), "dshbox: %s did not answer in time\n", hc->host);
		reply(hc->s, client, 504, "Gateway Timeout", body);
		break;
	case -ENOENT:
		snprintf(body, sizeof(body), "dshbox: no such name: %s\n", hc->host);
		reply(hc->s, client, 502, "Bad Gateway", body);
		break;
	default:
		snprintf(body, sizeof(body), "dshbox: %s could not be reached: %s\n", hc->host, strerror(-status));
		reply(hc->s, client, 502, "Bad Gateway", body);
		break;
	}
	free(hc);
}

static bool hop_by_hop(const unsigned char *line, size_t n)
{
	static const char *const names[] = { "connection", "proxy-connection", "keep-alive", "proxy-authorization" };
	const unsigned char *colon = memchr(line, ':', n);
	size_t l = colon ? (size_t)(colon - line) : n;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == l && strncasecmp((const char *)line, names[i], l) == 0)
			return true;
	return false;
}

/*
 * The upstream is asked for one response only (Connection: close, the client's hop-by-hop headers
 * dropped): the relay judges the first request's Host, and a second request on a kept-alive
 * connection could name another host unseen.  Bytes after the head (a body) stay where they are.
 */
int dsh_netsvc_head_close(struct evbuffer *in, const unsigned char *buf, const struct dsh_httpreq *r,
			  bool to_origin_form)
{
	struct evbuffer *nb = evbuffer_new();
	int ok = nb != NULL;
	if (!nb)
		return -ENOMEM;
	if (!to_origin_form) {
		ok = evbuffer_add(nb, buf, r->line_len) == 0;
	} else {
		ok = evbuffer_add(nb, buf, r->method_len) == 0 && evbuffer_add(nb, " ", 1) == 0;
		if (r->path_len == 0 || buf[r->path_off] == '?')
			ok = ok && evbuffer_add(nb, "/", 1) == 0;
		ok = ok && evbuffer_add(nb, buf + r->path_off, r->path_len) == 0 && evbuffer_add(nb, " ", 1) == 0;
		ok = ok && evbuffer_add(nb, buf + r->version_off, 8) == 0 && evbuffer_add(nb, "\r\n", 2) == 0;
	}
	for (size_t pos = r->line_len; ok && pos + 2 < r->head_len;) {
		const unsigned char *e = memmem(buf + pos, r->head_len - pos, "\r\n", 2);
		size_t n = (size_t)(e - (buf + pos));
		if (!hop_by_hop(buf + pos, n))
			ok = evbuffer_add(nb, buf + pos, n + 2) == 0;
		pos += n + 2;
	}
	ok = ok && evbuffer_add(nb, "Connection: close\r\n\r\n", 21) == 0;
	ok = ok && evbuffer_drain(in, r->head_len) == 0 && evbuffer_prepend_buffer(in, nb) == 0;
	evbuffer_free(nb);
	return ok ? 0 : -ENOMEM;
}

static void hand_over(struct hclient *hc, const struct dsh_httpreq *r)
{
	struct dsh_netsvc_conn_req req = { .name = r->host, .port = r->port, .via = "http" };
	unlink_client(hc);
	hc->tunnel = r->kind == DSH_HTTPREQ_CONNECT;
	snprintf(hc->host, sizeof(hc->host), "%s", r->host);
	dsh_netsvc_connect(hc->s, hc->bev, &req, on_connected, hc);
}

static void refuse(struct hclient *hc, int code, const char *text, const char *why)
{
	char body[256];
	snprintf(body, sizeof(body), "dshbox: %s\n", why ? why : text);
	unlink_client(hc);
	reply(hc->s, hc->bev, code, text, body);
	free(hc);
}

static void on_head(struct bufferevent *b, void *arg)
{
	struct hclient *hc = arg;
	struct evbuffer *in = bufferevent_get_input(b);
	size_t n = evbuffer_get_length(in);
	struct dsh_httpreq r;
	char why[2 * DSH_NET_HOST_ROOM + 64];
	if (n > DSH_HTTPREQ_MAX_HEAD + 1)
		n = DSH_HTTPREQ_MAX_HEAD + 1;
	const unsigned char *buf = evbuffer_pullup(in, (ssize_t)n);
	switch (dsh_httpreq_parse(buf, n, &r)) {
	case DSH_HTTPREQ_NEED_MORE:
		return;
	case DSH_HTTPREQ_BAD:
		refuse(hc, 400, "Bad Request", r.why);
		return;
	case DSH_HTTPREQ_TOO_LARGE:
		refuse(hc, 431, "Request Header Fields Too Large", r.why);
		return;
	case DSH_HTTPREQ_UNSUPPORTED:
		if (r.why && strstr(r.why, "HTTP version"))
			refuse(hc, 505, "HTTP Version Not Supported", r.why);
		else
			refuse(hc, 501, "Not Implemented", r.why);
		return;
	case DSH_HTTPREQ_FOUND:
		break;
	}
	if (r.kind == DSH_HTTPREQ_CONNECT) {
		evbuffer_drain(in, r.head_len);
		hand_over(hc, &r);
		return;
	}
	if (!r.has_host_header) {
		refuse(hc, 400, "Bad Request", "a request without a Host header");
		return;
	}
	if (!dsh_httpreq_host_agrees(&r)) {
		snprintf(why, sizeof(why), "the Host header names %s, the URI %s", r.host_header, r.host);
		dsh_netsvc_event(hc->s, r.host, r.port, "host", why);
		refuse(hc, 403, "Forbidden", "the Host header does not name the URI's host");
		return;
	}
	if (dsh_netsvc_head_close(in, buf, &r, true) < 0) {
		refuse(hc, 500, "Internal Server Error", "out of memory");
		return;
	}
	hand_over(hc, &r);
}

static void on_head_event(struct bufferevent *b, short what, void *arg)
{
	struct hclient *hc = arg;
	(void)what;
	unlink_client(hc);
	bufferevent_free(b);
	free(hc);
}

static void on_accept(struct evconnlistener *ls, evutil_socket_t fd, struct sockaddr *sa, int socklen, void *arg)
{
	struct dsh_netsvc *s = arg;
	struct dsh_netsvc_http *h = s->state->http;
	struct timeval tv = { HEAD_TIMEOUT_S, 0 };
	(void)ls;
	(void)sa;
	(void)socklen;
	struct bufferevent *b = bufferevent_socket_new(s->state->base, fd, BEV_OPT_CLOSE_ON_FREE);
	struct hclient *hc = b ? calloc(1, sizeof(*hc)) : NULL;
	if (!hc) {
		if (b)
			bufferevent_free(b);
		else
			evutil_closesocket(fd);
		return;
	}
	hc->s = s, hc->bev = b;
	hc->nx = h->head;
	if (h->head)
		h->head->prev = hc;
	h->head = hc;
	bufferevent_setcb(b, on_head, NULL, on_head_event, hc);
	/* A byte past the bound, so the parser can say TOO_LARGE rather than wait. */
	bufferevent_setwatermark(b, EV_READ, 0, DSH_HTTPREQ_MAX_HEAD + 1);
	bufferevent_set_timeouts(b, &tv, NULL);
	bufferevent_enable(b, EV_READ);
}

int dsh_netsvc_http_start(struct dsh_netsvc *s, struct dsh_error **err)
{
	struct dsh_netsvc_state *st = s->state;
	if (s->http_fd < 0)
		return 0;
	st->http = calloc(1, sizeof(*st->http));
	if (!st->http)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the HTTP proxy: out of memory");
	return dsh_netsvc_listen(s, s->http_fd, on_accept, s, "the HTTP proxy", &st->http->ls, err);
}

void dsh_netsvc_http_stop(struct dsh_netsvc *s)
{
	struct dsh_netsvc_http *h = s->state ? s->state->http : NULL;
	if (!h)
		return;
	if (h->ls)
		evconnlistener_free(h->ls);
	while (h->head) {
		struct hclient *hc = h->head;
		h->head = hc->nx;
		bufferevent_free(hc->bev);
		free(hc);
	}
	free(h);
	s->state->http = NULL;
}
