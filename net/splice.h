/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_SPLICE_H
#define DSH_NET_SPLICE_H

/*
 * A relayed connection once its first bytes were judged (connect.c): both directions moved
 * between the two sockets by splice(2), through a pipe each, so the bytes never pass through the
 * service's memory and each wake-up moves what the socket holds.  libevent 2.1's bufferevents
 * read at most 4 KiB a call whatever the limits set on them: four calls a page held a 1 GiB
 * transfer to a tenth of a direct one (make bench, network).
 */

#include <stdbool.h>

struct event_base;
struct evbuffer;
struct dsh_netsvc_splice;

/* One socket of the pair, as the bufferevent relay leaves it. */
struct dsh_netsvc_splice_side {
	int fd;                /* connected; the splice owns it once started */
	struct evbuffer *head; /* bytes for fd read from the other side already: sent first (moved out) */
	bool eof;              /* fd's peer has sent its last byte */
	bool shut;             /* fd is shut down for writing */
};

/* The relay of sides[0] and sides[1] from here on; ended(arg) is called once, from the event loop,
 * when both directions have ended (each EOF passed on as a shutdown) or either failed, and the
 * caller then frees it.  NULL when the pipes cannot be made: nothing was taken (the heads keep
 * their bytes, the sockets stay the caller's) and the caller relays on as before. */
struct dsh_netsvc_splice *dsh_netsvc_splice_start(struct event_base *base, const struct dsh_netsvc_splice_side sides[2],
						  void (*ended)(void *arg), void *arg);
/* Close both sockets and the pipes (NULL: nothing). */
void dsh_netsvc_splice_free(struct dsh_netsvc_splice *sp);

#endif
