/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connector and the relays (net/state.h): every connection the command makes through the
 * service is decided here on the name it asked for, resolved on the host side, connected, and
 * relayed only once its first bytes agree with that name (SPEC 12.2: no fronting).
 *
 * A connection lives in one struct conn from dsh_netsvc_connect() to its close: RESOLVING (an
 * evdns_getaddrinfo in flight), CONNECTING (one address after another), INSPECTING (the command's
 * first bytes are held back until they are judged) and RELAYING.  Each is on st->relays, so the
 * service's stop frees them all.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>

#include "net/httpreq.h"
#include "net/sni.h"
#include "net/splice.h"
#include "net/state.h"

/* Resolution and connection together: an upstream that never answers holds nothing for long. */
#define CONNECT_TIMEOUT_S 10
/* What one side may have queued for the other before reading from it stops (a slow reader
 * throttles its writer instead of growing our buffers), and where reading resumes. */
#define RELAY_HIGH (256 * 1024)
#define RELAY_LOW (RELAY_HIGH / 2)
/* The most the relay holds back while it judges the first bytes: a byte more than either parser
 * may need, so that "no end within the bound" can be told from "not yet". */
#define INSPECT_MAX ((DSH_SNI_MAX_HELLO > DSH_HTTPREQ_MAX_HEAD ? DSH_SNI_MAX_HELLO : DSH_HTTPREQ_MAX_HEAD) + 1)
/* A refusal's reply is given this long to reach the client. */
#define LINGER_S 5

enum phase { ASKING, RESOLVING, CONNECTING, INSPECTING, RELAYING };

struct side {
	struct bufferevent *bev;
	bool eof;       /* it will send nothing more */
	bool shut;      /* we will send it nothing more (shutdown(SHUT_WR) done) */
	bool throttled; /* reading from it stopped: the other side's output is full */
};

struct conn {
	struct dsh_netsvc *s;
	struct side cl, up;
	char name[DSH_NET_HOST_ROOM]; /* normalised name, or the literal in inet_ntop's spelling */
	bool literal, literal_tried, timed_out;
	uint16_t port;
	const char *via;
	dsh_netsvc_connected_fn done;
	void *arg;
	enum phase phase;
	struct evdns_getaddrinfo_request *gai;
	struct evutil_addrinfo *ai, *next;
	struct sockaddr_storage lit;
	socklen_t lit_len;
	struct event *timer;
	struct dsh_netsvc_ask *ask; /* ASKING: the host's question (SPEC 12.4) */
	struct dsh_netsvc_splice *sp; /* RELAYING by splice: it holds both sockets, cl.bev and up.bev are gone */
	int last_err;
	struct conn *prev, *nx;
};

struct dsh_netsvc_relays {
	struct conn *head;
};

static void on_read(struct bufferevent *b, void *arg);

static void conn_unlink(struct conn *c)
{
	struct dsh_netsvc_relays *rl = c->s->state->relays;
	if (c->prev)
		c->prev->nx = c->nx;
	else
		rl->head = c->nx;
	if (c->nx)
		c->nx->prev = c->prev;
	if (c->timer)
		event_free(c->timer);
	if (c->ai)
		evutil_freeaddrinfo(c->ai);
	if (c->up.bev)
		bufferevent_free(c->up.bev);
	dsh_netsvc_splice_free(c->sp);
	c->sp = NULL;
	dsh_netsvc_ask_cancel(c->ask);
	c->ask = NULL;
}

/* The end of a relayed (or refused) connection: both sides close. */
static void conn_free(struct conn *c)
{
	conn_unlink(c);
	if (c->cl.bev)
		bufferevent_free(c->cl.bev);
	free(c);
}

static struct side *side_of(struct conn *c, struct bufferevent *b)
{
	return b == c->cl.bev ? &c->cl : &c->up;
}

static struct side *peer_of(struct conn *c, struct side *s)
{
	return s == &c->cl ? &c->up : &c->cl;
}

/* --- Lingering close: a refusal's reply, then the close ------------------------------------- */

static void linger_event(struct bufferevent *b, short what, void *arg)
{
	(void)what;
	(void)arg;
	bufferevent_free(b);
}

/* Whatever the client still sends is read and dropped until it closes: closing with unread input
 * would reset the connection, and the client might lose the reply. */
static void linger_read(struct bufferevent *b, void *arg)
{
	(void)arg;
	evbuffer_drain(bufferevent_get_input(b), evbuffer_get_length(bufferevent_get_input(b)));
}

static void linger_write(struct bufferevent *b, void *arg)
{
	(void)arg;
	if (evbuffer_get_length(bufferevent_get_output(b)) > 0)
		return;
	shutdown(bufferevent_getfd(b), SHUT_WR);
	bufferevent_setcb(b, linger_read, NULL, linger_event, NULL);
	bufferevent_enable(b, EV_READ);
}

void dsh_netsvc_close_after_write(struct dsh_netsvc *s, struct bufferevent *b)
{
	struct timeval tv = { LINGER_S, 0 };
	if (!b)
		return;
	if (s->state->stopping) {
		bufferevent_free(b);
		return;
	}
	bufferevent_disable(b, EV_READ);
	bufferevent_setwatermark(b, EV_WRITE, 0, 0);
	bufferevent_setcb(b, NULL, linger_write, linger_event, NULL);
	bufferevent_set_timeouts(b, &tv, &tv);
	bufferevent_enable(b, EV_WRITE);
	if (evbuffer_get_length(bufferevent_get_output(b)) == 0)
		linger_write(b, NULL);
}

/* --- The relay ------------------------------------------------------------------------------ */

/* got names what the connection was decided on: the same spelling after normalising. */
static bool same_name(const struct conn *c, const char *got)
{
	unsigned char a[16];
	char canon[INET6_ADDRSTRLEN];
	if (c->literal) {
		int fam = strchr(got, ':') ? AF_INET6 : AF_INET;
		return inet_pton(fam, got, a) == 1 && inet_ntop(fam, a, canon, sizeof(canon)) &&
		       strcmp(canon, c->name) == 0;
	}
	char *norm = NULL;
	struct dsh_error *e = NULL;
	if (dsh_net_name_normalize(got, &norm, &e) < 0) {
		dsh_error_free(e);
		return false;
	}
	bool same = strcmp(norm, c->name) == 0;
	free(norm);
	return same;
}

static int refuse(struct conn *c, const char *via, const char *why)
{
	dsh_netsvc_event(c->s, c->name, c->port, via, why);
	return -1;
}

/* A TLS record: its ClientHello must name the decided name.  A literal's hello may name none
 * (RFC 6066 3 forbids an address there), but not some name that the address did not decide. */
static int judge_tls(struct conn *c, const unsigned char *p, size_t n)
{
	char sni[256], why[320];
	switch (dsh_sni_parse(p, n, sni, sizeof(sni))) {
	case DSH_SNI_NEED_MORE:
		return n >= INSPECT_MAX ? refuse(c, "sni", "a ClientHello over 16384 bytes") : 0;
	case DSH_SNI_NOT_TLS:
		return refuse(c, "sni", "a TLS record that is no ClientHello");
	case DSH_SNI_NONE:
		return c->literal ? 1 : refuse(c, "sni", "a ClientHello without a server name");
	case DSH_SNI_FOUND:
		if (same_name(c, sni))
			return 1;
		snprintf(why, sizeof(why), "the ClientHello names %s", sni);
		return refuse(c, "sni", why);
	}
	return refuse(c, "sni", "a TLS record that is no ClientHello");
}

/* A plain HTTP request: its Host header (and an absolute URI's host) must be the decided name.
 * Only the first request can be read (where a second one starts depends on the first's body), so
 * the head is rewritten to ask for Connection: close: the upstream answers this request alone
 * (RFC 9112 9.6) and a request pipelined or kept alive behind it, unjudged, is never served.
 * The price: no Upgrade (ws://) through a tunnel or a mapped address; wss:// is TLS. */
static int judge_http(struct conn *c, const unsigned char *p, size_t n)
{
	struct dsh_httpreq r;
	char why[DSH_NET_HOST_ROOM + 64];
	switch (dsh_httpreq_parse_at_server(p, n, &r)) {
	case DSH_HTTPREQ_NEED_MORE:
		return 0;
	case DSH_HTTPREQ_FOUND:
		break;
	case DSH_HTTPREQ_BAD:
	case DSH_HTTPREQ_TOO_LARGE:
	case DSH_HTTPREQ_UNSUPPORTED:
		return refuse(c, "host", r.why);
	}
	if (!r.has_host_header)
		return refuse(c, "host", "a request without a Host header");
	if (!same_name(c, r.host_header)) {
		snprintf(why, sizeof(why), "the Host header names %s", r.host_header);
		return refuse(c, "host", why);
	}
	if (r.host[0] && !same_name(c, r.host)) {
		snprintf(why, sizeof(why), "the request names %s", r.host);
		return refuse(c, "host", why);
	}
	if (dsh_netsvc_head_close(bufferevent_get_input(c->cl.bev), p, &r, false) < 0)
		return refuse(c, "host", "out of memory");
	return 1;
}

/* Whether the first line reads as an HTTP request line: 1 yes, 0 not yet known, -1 no.  Generous
 * on purpose (any line with "HTTP/" after a token and a space): what a server might read as a
 * request is judged as one; other line protocols (SMTP's EHLO, ssh's banner) are not. */
static int looks_http(const unsigned char *p, size_t n)
{
	size_t i = 0;
	unsigned char l = p[0] | 0x20;
	/* A server may skip empty lines before a request (RFC 9112 2.2): judged, and refused. */
	if (p[0] == '\r' || p[0] == '\n')
		return 1;
	if (!(l >= 'a' && l <= 'z'))
		return -1;
	while (i < n && p[i] != ' ') {
		if (p[i] < 0x21 || p[i] >= 0x7f)
			return -1;
		i++;
	}
	for (; i < n && p[i] != '\n'; i++) {
		if ((p[i] < 0x20 && p[i] != '\r' && p[i] != '\t') || p[i] >= 0x7f)
			return -1;
		if (i + 5 <= n && memcmp(p + i, "HTTP/", 5) == 0)
			return 1;
	}
	return i < n || n >= INSPECT_MAX ? -1 : 0;
}

/* The command's first bytes: 1 relay them, 0 wait for more, -1 refused (an event is written). */
static int inspect(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cl.bev);
	size_t n = evbuffer_get_length(in);
	if (n == 0)
		return 0;
	if (n > INSPECT_MAX)
		n = INSPECT_MAX;
	const unsigned char *p = evbuffer_pullup(in, (ssize_t)n);
	if (!p)
		return -1;
	if (p[0] == 0x16)
		return judge_tls(c, p, n);
	int h = looks_http(p, n);
	return h > 0 ? judge_http(c, p, n) : h == 0 ? 0 : 1;
}

static void shut(struct side *s)
{
	if (s->shut)
		return;
	shutdown(bufferevent_getfd(s->bev), SHUT_WR);
	s->shut = true;
}

/* Both directions ended and were passed on: the connection is done. */
static void maybe_done(struct conn *c)
{
	if (c->cl.eof && c->up.eof && c->cl.shut && c->up.shut)
		conn_free(c);
}

static void move(struct conn *c, struct side *src)
{
	struct side *dst = peer_of(c, src);
	struct evbuffer *out = bufferevent_get_output(dst->bev);
	evbuffer_add_buffer(out, bufferevent_get_input(src->bev));
	if (evbuffer_get_length(out) >= RELAY_HIGH && !src->throttled) {
		src->throttled = true;
		bufferevent_disable(src->bev, EV_READ);
		bufferevent_setwatermark(dst->bev, EV_WRITE, RELAY_LOW, 0);
	}
}

static void on_spliced_end(void *arg)
{
	conn_free(arg);
}

/* The splice has the socket now: the bufferevent goes without closing it. */
static void drop_bev(struct side *s)
{
	bufferevent_setfd(s->bev, -1);
	bufferevent_free(s->bev);
	s->bev = NULL;
}

/* Judged: the rest goes by splice (net/splice.h), what the bufferevents hold first.  Without the
 * pipes (out of descriptors) the bufferevents relay on. */
static void to_splice(struct conn *c)
{
	move(c, &c->cl);
	move(c, &c->up);
	struct dsh_netsvc_splice_side sides[2] = {
		{ (int)bufferevent_getfd(c->cl.bev), bufferevent_get_output(c->cl.bev), c->cl.eof, c->cl.shut },
		{ (int)bufferevent_getfd(c->up.bev), bufferevent_get_output(c->up.bev), c->up.eof, c->up.shut },
	};
	c->sp = dsh_netsvc_splice_start(c->s->state->base, sides, on_spliced_end, c);
	if (!c->sp)
		return;
	drop_bev(&c->cl);
	drop_bev(&c->up);
}

static void on_read(struct bufferevent *b, void *arg)
{
	struct conn *c = arg;
	struct side *src = side_of(c, b);
	if (src == &c->cl && c->phase == INSPECTING) {
		int v = inspect(c);
		if (v < 0) {
			conn_free(c);
			return;
		}
		if (v == 0)
			return;
		c->phase = RELAYING;
		bufferevent_setwatermark(b, EV_READ, 0, 0);
		to_splice(c);
		if (c->sp)
			return;
	}
	move(c, src);
}

/* dst's output fell to its low-water mark: resume its writer, or pass an EOF on once drained. */
static void on_write(struct bufferevent *b, void *arg)
{
	struct conn *c = arg;
	struct side *dst = side_of(c, b), *src = peer_of(c, dst);
	if (src->throttled) {
		src->throttled = false;
		bufferevent_setwatermark(dst->bev, EV_WRITE, 0, 0);
		if (!src->eof)
			bufferevent_enable(src->bev, EV_READ);
	}
	if (src->eof && evbuffer_get_length(bufferevent_get_output(b)) == 0) {
		shut(dst);
		maybe_done(c);
	}
}

static void on_event(struct bufferevent *b, short what, void *arg)
{
	struct conn *c = arg;
	struct side *s = side_of(c, b), *p = peer_of(c, s);
	if (!(what & BEV_EVENT_EOF)) {
		conn_free(c); /* an error or a timeout: neither side can be trusted to finish */
		return;
	}
	s->eof = true;
	bufferevent_disable(b, EV_READ);
	/* What the command sent but never finished cannot be judged, so it never leaves. */
	if (s == &c->cl && c->phase == INSPECTING && evbuffer_get_length(bufferevent_get_input(b)) > 0) {
		conn_free(c);
		return;
	}
	if (evbuffer_get_length(bufferevent_get_output(p->bev)) == 0)
		shut(p);
	maybe_done(c);
}

static void relay_start(struct conn *c)
{
	c->phase = INSPECTING;
	bufferevent_setcb(c->cl.bev, on_read, on_write, on_event, c);
	bufferevent_setcb(c->up.bev, on_read, on_write, on_event, c);
	bufferevent_setwatermark(c->cl.bev, EV_READ, 0, INSPECT_MAX);
	/* Until the first bytes are judged (and for good when no pipe can be made) the bufferevents
	   relay: libevent 2.1 reads at most 4 KiB a call whatever the limit set here, but writes
	   what one side may queue in one. */
	bufferevent_set_max_single_read(c->cl.bev, RELAY_HIGH);
	bufferevent_set_max_single_read(c->up.bev, RELAY_HIGH);
	bufferevent_set_max_single_write(c->cl.bev, RELAY_HIGH);
	bufferevent_set_max_single_write(c->up.bev, RELAY_HIGH);
	bufferevent_enable(c->cl.bev, EV_READ | EV_WRITE);
	bufferevent_enable(c->up.bev, EV_READ | EV_WRITE);
	if (evbuffer_get_length(bufferevent_get_input(c->cl.bev)) > 0)
		on_read(c->cl.bev, c);
}

/* --- Connecting ----------------------------------------------------------------------------- */

/* The connector's one call of done(): on failure the conn goes and done frees the client; on
 * success done writes its reply and the relay takes the client. */
static void finish(struct conn *c, int status)
{
	if (c->timer) {
		event_free(c->timer);
		c->timer = NULL;
	}
	if (c->ai) {
		evutil_freeaddrinfo(c->ai);
		c->ai = c->next = NULL;
	}
	if (status < 0) {
		struct bufferevent *client = c->cl.bev;
		dsh_netsvc_connected_fn done = c->done;
		void *arg = c->arg;
		c->cl.bev = NULL;
		conn_free(c);
		done(client, status, arg);
		return;
	}
	c->done(c->cl.bev, 0, c->arg);
	relay_start(c);
}

static void try_next(struct conn *c);

static void on_up_connect(struct bufferevent *b, short what, void *arg)
{
	struct conn *c = arg;
	if (what & BEV_EVENT_CONNECTED) {
		finish(c, 0);
		return;
	}
	c->last_err = EVUTIL_SOCKET_ERROR();
	bufferevent_free(b);
	c->up.bev = NULL;
	try_next(c);
}

/* Each address in turn (IPv6 and IPv4, as the resolver ordered them), until one connects. */
static void try_next(struct conn *c)
{
	for (;;) {
		const struct sockaddr *sa;
		socklen_t len;
		if (c->literal) {
			if (c->literal_tried)
				break;
			c->literal_tried = true;
			sa = (const struct sockaddr *)&c->lit, len = c->lit_len;
		} else {
			if (!c->next)
				break;
			sa = c->next->ai_addr, len = (socklen_t)c->next->ai_addrlen;
			c->next = c->next->ai_next;
		}
		struct bufferevent *up = bufferevent_socket_new(c->s->state->base, -1, BEV_OPT_CLOSE_ON_FREE);
		if (!up) {
			finish(c, -ENOMEM);
			return;
		}
		/* The callback is set once the call returned: a failure it reports at once is the
		 * return value's, not a second report. */
		if (bufferevent_socket_connect(up, sa, (int)len) == 0) {
			bufferevent_setcb(up, NULL, NULL, on_up_connect, c);
			c->up.bev = up;
			return;
		}
		c->last_err = EVUTIL_SOCKET_ERROR();
		bufferevent_free(up);
	}
	finish(c, c->last_err > 0 ? -c->last_err : -ECONNREFUSED);
}

static void on_resolved(int result, struct evutil_addrinfo *res, void *arg)
{
	struct conn *c = arg;
	c->gai = NULL;
	switch (result) {
	case 0:
		c->ai = c->next = res;
		c->phase = CONNECTING;
		try_next(c);
		return;
	case EVUTIL_EAI_CANCEL:
		finish(c, c->timed_out ? -ETIMEDOUT : -ECANCELED);
		return;
	case EVUTIL_EAI_AGAIN:
		finish(c, -ETIMEDOUT);
		return;
	default: /* NONAME, NODATA, FAIL: the host's resolver has no address for it */
		finish(c, -ENOENT);
		return;
	}
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	(void)fd;
	(void)what;
	c->timed_out = true;
	if (c->gai) {
		evdns_getaddrinfo_cancel(c->gai); /* its callback finishes, with -ETIMEDOUT */
		return;
	}
	finish(c, -ETIMEDOUT);
}

/* The verdict, before anything is looked up: 0 allowed (c->name and c->lit filled), 1 the host is
 * to be asked, -EACCES. */
static int decide(struct conn *c, const char *name)
{
	const struct dsh_net_policy *np = c->s->policy;
	unsigned char a[16];
	enum dsh_net_verdict v;
	int fam = inet_pton(AF_INET, name, a) == 1 ? AF_INET : inet_pton(AF_INET6, name, a) == 1 ? AF_INET6 : 0;
	if (fam) {
		c->literal = true;
		inet_ntop(fam, a, c->name, sizeof(c->name));
		if (fam == AF_INET) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&c->lit;
			sin->sin_family = AF_INET, sin->sin_port = htons(c->port);
			memcpy(&sin->sin_addr, a, 4);
			c->lit_len = sizeof(*sin);
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&c->lit;
			sin6->sin6_family = AF_INET6, sin6->sin6_port = htons(c->port);
			memcpy(&sin6->sin6_addr, a, 16);
			c->lit_len = sizeof(*sin6);
		}
		v = dsh_net_decide_addr(np, fam, a, c->port);
	} else {
		char *norm = NULL;
		struct dsh_error *e = NULL;
		if (dsh_net_name_normalize(name, &norm, &e) < 0 || strlen(norm) >= sizeof(c->name)) {
			dsh_error_free(e);
			free(norm);
			dsh_netsvc_event(c->s, name, c->port, c->via, "not a host name");
			return -EACCES;
		}
		strcpy(c->name, norm);
		free(norm);
		v = dsh_net_decide_name(np, c->name, c->port);
	}
	if (v == DSH_NET_ALLOW)
		return 0;
	if (v == DSH_NET_ASK)
		return 1; /* the host decides (SPEC 12.4): ask.c says why if it denies */
	dsh_netsvc_event(c->s, c->name, c->port, c->via, "denied");
	return -EACCES;
}

static void conn_link(struct conn *c)
{
	struct dsh_netsvc_relays *rl = c->s->state->relays;
	c->nx = rl->head;
	if (rl->head)
		rl->head->prev = c;
	rl->head = c;
}

static void go(struct conn *c);
static void on_asked(bool allowed, void *arg);

void dsh_netsvc_connect(struct dsh_netsvc *s, struct bufferevent *client, const struct dsh_netsvc_conn_req *req,
			dsh_netsvc_connected_fn done, void *arg)
{
	struct dsh_netsvc_state *st = s->state;
	if (!st->relays)
		st->relays = calloc(1, sizeof(*st->relays));
	struct conn *c = st->relays ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		done(client, -ENOMEM, arg);
		return;
	}
	*c = (struct conn){ .s = s, .cl.bev = client, .port = req->port, .via = req->via, .done = done, .arg = arg };
	/* The command's bytes wait in client's input until the relay has judged them; the front
	 * end's timeout for its own exchange must not end an idle tunnel later. */
	bufferevent_disable(client, EV_READ);
	bufferevent_setcb(client, NULL, NULL, NULL, NULL);
	bufferevent_set_timeouts(client, NULL, NULL);
	int r = decide(c, req->name);
	if (r < 0) {
		free(c);
		done(client, r, arg);
		return;
	}
	conn_link(c);
	if (r == 1) {
		/* Bounded by askTimeoutMs in ask.c, then by the connection's own timeout. */
		c->phase = ASKING;
		c->ask = dsh_netsvc_ask(s, c->name, c->port, c->via, on_asked, c);
		if (!c->ask) {
			dsh_netsvc_event(s, c->name, c->port, c->via, "denied: the host cannot be asked");
			finish(c, -EACCES);
		}
		return;
	}
	go(c);
}

/* The host's answer to an ASKING connection. */
static void on_asked(bool allowed, void *arg)
{
	struct conn *c = arg;
	c->ask = NULL;
	if (allowed)
		go(c);
	else
		finish(c, -EACCES);
}

/* An allowed connection: looked up (a name) and connected, within CONNECT_TIMEOUT_S. */
static void go(struct conn *c)
{
	struct dsh_netsvc_state *st = c->s->state;
	struct timeval tv = { CONNECT_TIMEOUT_S, 0 };
	c->timer = evtimer_new(st->base, on_timeout, c);
	if (!c->timer || evtimer_add(c->timer, &tv) < 0) {
		finish(c, -ENOMEM);
		return;
	}
	if (c->literal) {
		c->phase = CONNECTING;
		try_next(c);
		return;
	}
	char port[8];
	snprintf(port, sizeof(port), "%u", (unsigned)c->port);
	struct evutil_addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
					 .ai_protocol = IPPROTO_TCP, .ai_flags = EVUTIL_AI_NUMERICSERV };
	c->phase = RESOLVING;
	/* NULL: the callback has run already (and c may be gone). */
	struct evdns_getaddrinfo_request *g = evdns_getaddrinfo(st->resolver, c->name, port, &hints, on_resolved, c);
	if (g)
		c->gai = g;
}

void dsh_netsvc_relays_stop(struct dsh_netsvc *s)
{
	struct dsh_netsvc_state *st = s->state;
	struct dsh_netsvc_relays *rl = st ? st->relays : NULL;
	struct conn *c;
	if (!rl)
		return;
	st->stopping = 1;
	/* A cancelled lookup reports through a deferred callback: one turn of the loop lets each
	 * land (and call its done()) before the rest is freed. */
	for (c = rl->head; c; c = c->nx)
		if (c->gai)
			evdns_getaddrinfo_cancel(c->gai);
	event_base_loop(st->base, EVLOOP_NONBLOCK);
	while ((c = rl->head)) {
		if (c->phase == ASKING || c->phase == RESOLVING || c->phase == CONNECTING)
			finish(c, -ECANCELED);
		else
			conn_free(c);
	}
	free(rl);
	st->relays = NULL;
}
