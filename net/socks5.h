/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_SOCKS5_H
#define DSH_NET_SOCKS5_H

/*
 * The two messages a SOCKS5 client sends before its bytes are relayed (RFC 1928 3 and 4): the
 * greeting and the request, each read from the bytes received so far.  Pure and bounded; a prefix
 * answers NEED_MORE or exactly what the whole input answers.  The proxy offers no authentication
 * (SPEC 12.2: it listens on the command's own loopback) and serves CONNECT only.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/hostname.h"

enum dsh_socks5_result {
	DSH_SOCKS5_FOUND,       /* a whole message: ret is filled */
	DSH_SOCKS5_NEED_MORE,   /* a prefix of one */
	DSH_SOCKS5_BAD,         /* malformed (not SOCKS5, say): reply GENERAL_FAILURE, or close */
	DSH_SOCKS5_UNSUPPORTED, /* a request the proxy does not serve: reply ret->reply */
};

/* RFC 1928 6. */
enum dsh_socks5_reply {
	DSH_SOCKS5_SUCCEEDED = 0x00,
	DSH_SOCKS5_GENERAL_FAILURE = 0x01,
	DSH_SOCKS5_NOT_ALLOWED = 0x02,
	DSH_SOCKS5_NET_UNREACHABLE = 0x03,
	DSH_SOCKS5_HOST_UNREACHABLE = 0x04,
	DSH_SOCKS5_REFUSED = 0x05,
	DSH_SOCKS5_TTL_EXPIRED = 0x06,
	DSH_SOCKS5_CMD_UNSUPPORTED = 0x07,
	DSH_SOCKS5_ATYP_UNSUPPORTED = 0x08,
};

struct dsh_socks5_greeting {
	bool no_auth;  /* NO AUTHENTICATION REQUIRED (0x00) is offered: answer 05 00, else 05 FF */
	size_t len;    /* the greeting's bytes: the request follows */
	const char *why; /* BAD: a short reason; else NULL */
};

enum dsh_socks5_result dsh_socks5_parse_greeting(const unsigned char *buf, size_t len, struct dsh_socks5_greeting *ret);

struct dsh_socks5_request {
	/* Dotted IPv4, IPv6 in inet_ntop's spelling, or the DOMAINNAME lowercased (which must have a
	 * host name's shape, net/hostname.h), NUL-terminated. */
	char host[DSH_NET_HOST_ROOM];
	uint16_t port;   /* nonzero */
	bool is_domain;  /* host came as a DOMAINNAME, to be decided as a name */
	size_t len;      /* the request's bytes: what follows is the command's to relay */
	enum dsh_socks5_reply reply; /* BAD, UNSUPPORTED: the reply to send before closing */
	const char *why; /* BAD, UNSUPPORTED: a short reason; else NULL */
};

enum dsh_socks5_result dsh_socks5_parse_request(const unsigned char *buf, size_t len, struct dsh_socks5_request *ret);

/* The reply to a request, BND.ADDR 0.0.0.0 and BND.PORT 0 (the command has no use for the
 * upstream's side of the connection, and the host's addresses are none of its business). */
#define DSH_SOCKS5_REPLY_LEN 10
void dsh_socks5_reply(enum dsh_socks5_reply code, unsigned char ret[DSH_SOCKS5_REPLY_LEN]);

/* The reply for the connector's status (net/state.h's dsh_netsvc_connect: 0 or a negative errno). */
enum dsh_socks5_reply dsh_socks5_reply_for(int status);

#endif
