/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spliced relay (net/splice.h).  Each direction is a pump: what its source socket holds goes
 * into its pipe and out to the other socket.  Its events are level-triggered and only as many as
 * the pump needs: reading while the pipe is empty, writing while the other socket is full, so a
 * steady transfer costs one wait and two splices a wake-up and no epoll_ctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "net/splice.h"

/* Each pipe's size: what one direction may hold in flight (as the bufferevent relay's bound). */
#define PIPE_ROOM (256 * 1024)
/* Moves one pump makes a wake-up before the others get theirs. */
#define TURN_MAX 16

struct pump {
	struct dsh_netsvc_splice *sp;
	int from, to;
	int pipe[2];
	size_t held, room;     /* bytes in the pipe, and what it holds */
	struct evbuffer *head; /* sent before the pipe's bytes */
	struct event *rd, *wr; /* from readable, to writable */
	bool rd_on, wr_on;
	bool eof;  /* from sent its last byte */
	bool shut; /* ... and it was passed on: to shut down for writing */
};

struct dsh_netsvc_splice {
	int fd[2];
	struct pump pump[2]; /* pump[i]: fd[i] to fd[1 - i] */
	void (*ended)(void *arg);
	void *arg;
	bool over;
};

static void want(struct pump *p, bool rd, bool wr)
{
	if (rd != p->rd_on) {
		(void)(rd ? event_add(p->rd, NULL) : event_del(p->rd));
		p->rd_on = rd;
	}
	if (wr != p->wr_on) {
		(void)(wr ? event_add(p->wr, NULL) : event_del(p->wr));
		p->wr_on = wr;
	}
}

/* The end, once: no pump moves again, and the owner frees the splice. */
static void end(struct dsh_netsvc_splice *sp)
{
	if (sp->over)
		return;
	sp->over = true;
	for (int i = 0; i < 2; i++)
		want(&sp->pump[i], false, false);
	sp->ended(sp->arg);
}

static bool would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Everything held out to p->to: 1 all sent, 0 it is full, -1 it failed. */
static int flush(struct pump *p)
{
	while (evbuffer_get_length(p->head) > 0) {
		int n = evbuffer_write(p->head, p->to);
		if (n <= 0)
			return n < 0 && would_block() ? 0 : -1;
	}
	while (p->held > 0) {
		ssize_t n = splice(p->pipe[0], NULL, p->to, NULL, p->held, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n <= 0)
			return n < 0 && would_block() ? 0 : -1;
		p->held -= (size_t)n;
	}
	return 1;
}

/* Move what can move now, then wait for what the pump needs next. */
static void turn(struct pump *p)
{
	struct dsh_netsvc_splice *sp = p->sp;
	/* A read short of the pipe's room most likely emptied the socket: once its bytes are out, the
	   next byte is the wait's to announce (one splice fewer a wake-up than reading until EAGAIN). */
	bool drained = false;
	for (int moves = 0;; moves++) {
		int f = flush(p);
		if (f < 0) {
			end(sp);
			return;
		}
		if (f == 0) {
			want(p, false, true);
			return;
		}
		if (p->eof) {
			if (!p->shut)
				shutdown(p->to, SHUT_WR);
			p->shut = true;
			want(p, false, false);
			if (sp->pump[0].shut && sp->pump[1].shut)
				end(sp);
			return;
		}
		if (drained || moves == TURN_MAX) {
			want(p, true, false);
			return;
		}
		ssize_t n = splice(p->from, NULL, p->pipe[1], NULL, p->room, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n == 0) {
			p->eof = true;
			continue;
		}
		if (n < 0) {
			if (!would_block()) {
				end(sp);
				return;
			}
			want(p, true, false);
			return;
		}
		p->held = (size_t)n;
		drained = (size_t)n < p->room;
	}
}

static void on_ready(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct pump *p = arg;
	if (!p->sp->over)
		turn(p);
}

static int pump_init(struct dsh_netsvc_splice *sp, struct event_base *base, int i)
{
	struct pump *p = &sp->pump[i];
	*p = (struct pump){ .sp = sp, .from = sp->fd[i], .to = sp->fd[1 - i], .pipe = { -1, -1 } };
	if (pipe2(p->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		return -1;
	/* The default 64 KiB a pipe is a quarter of what a wake-up could move; a user over
	   pipe-user-pages-soft keeps the smaller pipe, which works the same. */
	int room = fcntl(p->pipe[1], F_SETPIPE_SZ, PIPE_ROOM);
	if (room < 0)
		room = fcntl(p->pipe[1], F_GETPIPE_SZ);
	p->room = room > 0 ? (size_t)room : 65536;
	p->head = evbuffer_new();
	p->rd = event_new(base, p->from, EV_READ | EV_PERSIST, on_ready, p);
	p->wr = event_new(base, p->to, EV_WRITE | EV_PERSIST, on_ready, p);
	return p->head && p->rd && p->wr ? 0 : -1;
}

static void pump_clear(struct pump *p)
{
	if (p->rd)
		event_free(p->rd);
	if (p->wr)
		event_free(p->wr);
	if (p->head)
		evbuffer_free(p->head);
	for (int k = 0; k < 2; k++)
		if (p->pipe[k] >= 0)
			close(p->pipe[k]);
}

/* A pump's socket must not block the loop: splice(2)'s SPLICE_F_NONBLOCK covers the pipe only. */
static int nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fl & O_NONBLOCK ? 0 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

struct dsh_netsvc_splice *dsh_netsvc_splice_start(struct event_base *base, const struct dsh_netsvc_splice_side sides[2],
						  void (*ended)(void *arg), void *arg)
{
	struct dsh_netsvc_splice *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	*sp = (struct dsh_netsvc_splice){ .fd = { sides[0].fd, sides[1].fd }, .ended = ended, .arg = arg,
					  .pump = { { .pipe = { -1, -1 } }, { .pipe = { -1, -1 } } } };
	int r = pump_init(sp, base, 0);
	if (r == 0)
		r = pump_init(sp, base, 1);
	for (int i = 0; r == 0 && i < 2; i++)
		r = nonblocking(sp->fd[i]);
	if (r < 0) {
		for (int i = 0; i < 2; i++)
			pump_clear(&sp->pump[i]);
		free(sp);
		return NULL;
	}
	/* side i's head, EOF and shutdown are those of the pump towards it, or from it. */
	for (int i = 0; i < 2; i++) {
		struct pump *to_i = &sp->pump[1 - i];
		evbuffer_add_buffer(to_i->head, sides[i].head);
		to_i->shut = sides[i].shut;
		sp->pump[i].eof = sides[i].eof;
	}
	/* Each pump's first turn from the loop: ended() is never called from inside this one. */
	for (int i = 0; i < 2; i++)
		event_active(sp->pump[i].wr, EV_WRITE, 0);
	return sp;
}

void dsh_netsvc_splice_free(struct dsh_netsvc_splice *sp)
{
	if (!sp)
		return;
	for (int i = 0; i < 2; i++) {
		pump_clear(&sp->pump[i]);
		close(sp->fd[i]);
	}
	free(sp);
}
