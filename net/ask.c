/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Asking the host (SPEC 12.4): a name in neither list is one JSON line on s->ask_fd,
 *   {"id":7,"name":"x.example","port":443,"via":"http"}       (port 0: a DNS query)
 * and the host answers on the same descriptor, in any order,
 *   {"id":7,"decision":"allow-once"|"allow-run"|"deny"}
 * (schema/ask.schema.json).  No answer within askTimeoutMs, a malformed one, or the host gone:
 * denied.  "allow-run" answers the same name and port at once for the rest of the run.  Every
 * answer reaches its caller through the event loop, never from inside dsh_netsvc_ask().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <jansson.h>

#include "net/state.h"

/* Questions in flight at once: beyond, a new one is denied rather than queued without end. */
#define ASK_MAX_PENDING 256
/* A line from the host longer than this is malformed. */
#define ASK_LINE_MAX 4096

struct dsh_netsvc_ask {
	struct dsh_netsvc_asker *a;
	unsigned long long id;
	char *name;
	uint16_t port;
	dsh_netsvc_answer_fn fn;
	void *arg;
	struct event *timer; /* askTimeoutMs, or the deferred answer */
	bool allowed;        /* the answer, once given */
	struct dsh_netsvc_ask *prev, *nx;
};

struct allowed_run {
	char *name;
	uint16_t port;
	struct allowed_run *nx;
};

struct dsh_netsvc_asker {
	struct dsh_netsvc *s;
	struct bufferevent *bev; /* NULL: no host to ask, or it is gone */
	unsigned long long next_id;
	size_t n_pending;
	struct dsh_netsvc_ask *head;
	struct allowed_run *run;
};

static void unlink_ask(struct dsh_netsvc_ask *q)
{
	struct dsh_netsvc_asker *a = q->a;
	if (q->prev)
		q->prev->nx = q->nx;
	else if (a->head == q)
		a->head = q->nx;
	if (q->nx)
		q->nx->prev = q->prev;
	q->prev = q->nx = NULL;
	a->n_pending--;
}

static void ask_free(struct dsh_netsvc_ask *q)
{
	if (q->timer)
		event_free(q->timer);
	free(q->name);
	free(q);
}

/* The answer goes out: q is gone once fn returns. */
static void answer(struct dsh_netsvc_ask *q, bool allowed, const char *why)
{
	unlink_ask(q);
	if (!allowed && why)
		dsh_netsvc_event(q->a->s, q->name, q->port, "ask", why);
	dsh_netsvc_answer_fn fn = q->fn;
	void *arg = q->arg;
	ask_free(q);
	fn(allowed, arg);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct dsh_netsvc_ask *q = arg;
	(void)fd;
	(void)what;
	/* A deferred answer (allowed for the run, or no host) carries its verdict; else the clock ran out. */
	if (q->id == 0)
		answer(q, q->allowed, q->allowed ? NULL : "denied: the host cannot be asked");
	else
		answer(q, false, "denied: the host did not answer within askTimeoutMs");
}

static bool allowed_for_run(const struct dsh_netsvc_asker *a, const char *name, uint16_t port)
{
	for (const struct allowed_run *r = a->run; r; r = r->nx)
		if (r->port == port && strcmp(r->name, name) == 0)
			return true;
	return false;
}

static void allow_for_run(struct dsh_netsvc_asker *a, const char *name, uint16_t port)
{
	struct allowed_run *r = calloc(1, sizeof(*r));
	if (!r || !(r->name = strdup(name))) {
		free(r);
		return; /* asked again next time: never wider than the host said */
	}
	r->port = port;
	r->nx = a->run;
	a->run = r;
}

/* One answer line: the question it names is answered; anything else is dropped. */
static void on_line(struct dsh_netsvc_asker *a, const char *line)
{
	json_t *o = json_loads(line, 0, NULL);
	json_int_t id = json_integer_value(json_object_get(o, "id"));
	const char *d = json_string_value(json_object_get(o, "decision"));
	struct dsh_netsvc_ask *q = a->head;
	while (q && (json_int_t)q->id != id)
		q = q->nx;
	if (q && d) {
		bool run = strcmp(d, "allow-run") == 0, once = strcmp(d, "allow-once") == 0;
		if (run)
			allow_for_run(a, q->name, q->port);
		answer(q, run || once, run || once ? NULL : "denied by the host");
	}
	json_decref(o);
}

static void deny_all(struct dsh_netsvc_asker *a, const char *why)
{
	while (a->head)
		answer(a->head, false, why);
}

static void on_read(struct bufferevent *b, void *arg)
{
	struct dsh_netsvc_asker *a = arg;
	struct evbuffer *in = bufferevent_get_input(b);
	char *line;
	size_t n;
	while ((line = evbuffer_readln(in, &n, EVBUFFER_EOL_LF))) {
		on_line(a, line);
		free(line);
	}
	if (evbuffer_get_length(in) > ASK_LINE_MAX) {
		/* No end of line in sight: a host that speaks something else is no host to ask. */
		bufferevent_free(a->bev);
		a->bev = NULL;
		deny_all(a, "denied: the host's answer was malformed");
	}
}

static void on_event(struct bufferevent *b, short what, void *arg)
{
	struct dsh_netsvc_asker *a = arg;
	(void)b;
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	bufferevent_free(a->bev);
	a->bev = NULL;
	deny_all(a, "denied: the host closed --ask-fd");
}

/* A question answered without asking, through the loop all the same. */
static struct dsh_netsvc_ask *deferred(struct dsh_netsvc_ask *q, bool allowed)
{
	static const struct timeval now = { 0, 0 };
	q->allowed = allowed;
	q->timer = evtimer_new(q->a->s->state->base, on_timer, q);
	if (!q->timer || evtimer_add(q->timer, &now) < 0) {
		unlink_ask(q);
		ask_free(q);
		return NULL;
	}
	return q;
}

static int send_question(struct dsh_netsvc_ask *q, const char *via)
{
	json_t *o = json_pack("{s:I, s:s, s:i, s:s}", "id", (json_int_t)q->id, "name", q->name, "port", (int)q->port,
			      "via", via);
	char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	int r = line && bufferevent_write(q->a->bev, line, strlen(line)) == 0 &&
			bufferevent_write(q->a->bev, "\n", 1) == 0 ? 0 : -ENOMEM;
	free(line);
	return r;
}

struct dsh_netsvc_ask *dsh_netsvc_ask(struct dsh_netsvc *s, const char *name, uint16_t port, const char *via,
				      dsh_netsvc_answer_fn fn, void *arg)
{
	struct dsh_netsvc_asker *a = s->state->asker;
	struct dsh_netsvc_ask *q = a && a->n_pending < ASK_MAX_PENDING ? calloc(1, sizeof(*q)) : NULL;
	if (!q || !(q->name = strdup(name))) {
		free(q);
		return NULL;
	}
	*q = (struct dsh_netsvc_ask){ .a = a, .name = q->name, .port = port, .fn = fn, .arg = arg, .nx = a->head };
	if (a->head)
		a->head->prev = q;
	a->head = q;
	a->n_pending++;
	if (allowed_for_run(a, name, port) || !a->bev)
		return deferred(q, a->bev != NULL);
	q->id = ++a->next_id;
	unsigned ms = s->policy->ask_timeout_ms;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	q->timer = evtimer_new(s->state->base, on_timer, q);
	if (!q->timer || evtimer_add(q->timer, &tv) < 0 || send_question(q, via) < 0) {
		unlink_ask(q);
		ask_free(q);
		return NULL;
	}
	return q;
}

void dsh_netsvc_ask_cancel(struct dsh_netsvc_ask *q)
{
	if (!q)
		return;
	unlink_ask(q);
	ask_free(q);
}

int dsh_netsvc_ask_start(struct dsh_netsvc *s, struct dsh_error **err)
{
	struct dsh_netsvc_asker *a = calloc(1, sizeof(*a));
	if (!a)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "asking the host: out of memory");
	a->s = s;
	s->state->asker = a;
	if (s->ask_fd < 0 || !s->policy->ask)
		return 0;
	if (evutil_make_socket_nonblocking(s->ask_fd) < 0)
		return dsh_err_sys(err, errno, "asking the host: --ask-fd %d", s->ask_fd);
	a->bev = bufferevent_socket_new(s->state->base, s->ask_fd, BEV_OPT_CLOSE_ON_FREE);
	if (!a->bev)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "asking the host: bufferevent_socket_new failed");
	bufferevent_setcb(a->bev, on_read, NULL, on_event, a);
	bufferevent_enable(a->bev, EV_READ);
	return 0;
}

void dsh_netsvc_ask_stop(struct dsh_netsvc *s)
{
	struct dsh_netsvc_asker *a = s->state ? s->state->asker : NULL;
	if (!a)
		return;
	/* The callers are going away too: their questions end without an answer. */
	while (a->head)
		dsh_netsvc_ask_cancel(a->head);
	while (a->run) {
		struct allowed_run *r = a->run;
		a->run = r->nx;
		free(r->name);
		free(r);
	}
	if (a->bev)
		bufferevent_free(a->bev);
	free(a);
	s->state->asker = NULL;
}
