/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The names the service hands out: one pool address per allowed name, stable for the run, and the
 * verdict on a name asked for without a port (a DNS query). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/state.h"

enum dsh_net_verdict dsh_netsvc_decide_any_port(const struct dsh_net_policy *np, const char *name)
{
	/* A query carries no port: allow the name when any port the patterns allow it on would. */
	enum dsh_net_verdict v = dsh_net_decide_name(np, name, 443), w;
	if (v == DSH_NET_ALLOW)
		return v;
	w = dsh_net_decide_name(np, name, 80);
	if (w == DSH_NET_ALLOW)
		return w;
	if (w == DSH_NET_ASK)
		v = w;
	for (size_t i = 0; i < np->n_allow; i++) {
		uint16_t port = np->allow[i].port;
		if (port == 0 || port == 80 || port == 443)
			continue;
		w = dsh_net_decide_name(np, name, port);
		if (w == DSH_NET_ALLOW)
			return w;
		if (w == DSH_NET_ASK)
			v = w;
	}
	return v;
}

uint32_t dsh_netsvc_map_name(struct dsh_netsvc_state *st, const char *name)
{
	for (size_t i = 0; i < st->n_given; i++)
		if (strcmp(st->slots[i].name, name) == 0)
			return st->slots[i].addr;
	if (st->n_given == st->n_slots)
		return 0;
	char *copy = strdup(name);
	if (!copy)
		return 0;
	st->slots[st->n_given].name = copy;
	return st->slots[st->n_given++].addr;
}

const char *dsh_netsvc_name_of(const struct dsh_netsvc_state *st, uint32_t addr)
{
	for (size_t i = 0; i < st->n_given; i++)
		if (st->slots[i].addr == addr)
			return st->slots[i].name;
	return NULL;
}

/* JSON string contents: what the command sent may hold any byte. */
static void json_escape(char *out, size_t size, const char *in)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && o + 7 < size; p++) {
		if (*p == '"' || *p == '\\') {
			out[o++] = '\\';
			out[o++] = (char)*p;
		} else if (*p < 0x20 || *p >= 0x7f) {
			o += (size_t)snprintf(out + o, size - o, "\\u%04x", *p);
		} else {
			out[o++] = (char)*p;
		}
	}
	out[o] = '\0';
}

void dsh_netsvc_event(const struct dsh_netsvc *s, const char *name, uint16_t port, const char *via,
		      const char *reason)
{
	char en[256 * 6 + 8], er[256];
	if (s->events_fd < 0)
		return;
	json_escape(en, sizeof(en), name ? name : "");
	json_escape(er, sizeof(er), reason ? reason : "");
	char line[sizeof(en) + sizeof(er) + 96];
	int n = snprintf(line, sizeof(line), "{\"name\":\"%s\",\"port\":%u,\"via\":\"%s\",\"reason\":\"%s\"}\n", en,
			 (unsigned)port, via, er);
	if (n <= 0 || (size_t)n >= sizeof(line))
		return;
	/* One write per line so the supervisor never sees half of one; a full pipe drops the event
	 * rather than stall every connection. */
	ssize_t w;
	do
		w = write(s->events_fd, line, (size_t)n);
	while (w < 0 && errno == EINTR);
}
