/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_HTTPREQ_H
#define DSH_NET_HTTPREQ_H

/*
 * The head of a request to the HTTP proxy (SPEC 12.2), read from the bytes received so far:
 * `CONNECT host:port HTTP/1.x` (authority form, RFC 9112 3.2.3) or `METHOD http://host[:port]/path
 * HTTP/1.x` (absolute form, 3.2.2).  Pure and bounded; a prefix of the input answers NEED_MORE or
 * exactly what the whole input answers, so the proxy may call again as bytes arrive.
 *
 * Strict where a looser reading would let the proxy and the upstream disagree on what was asked:
 * a line ends in CRLF only (a bare LF or a bare CR is BAD, not read as an end of line: RFC 9112
 * 2.2 allows either choice), no empty line before the request line, single spaces in it, no
 * obs-fold (RFC 9112 5.2), no space before a header's ':', at most one Host header, and only
 * visible ASCII in the request line.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/hostname.h"

/* The head, its final CRLFCRLF included, is longer than this: TOO_LARGE, not buffered further. */
#define DSH_HTTPREQ_MAX_HEAD 16384

enum dsh_httpreq_result {
	DSH_HTTPREQ_FOUND,       /* a whole head: ret is filled */
	DSH_HTTPREQ_NEED_MORE,   /* a prefix of one: read more and call again */
	DSH_HTTPREQ_BAD,         /* malformed: answer 400 */
	DSH_HTTPREQ_TOO_LARGE,   /* no end within DSH_HTTPREQ_MAX_HEAD bytes: answer 431 */
	DSH_HTTPREQ_UNSUPPORTED, /* well-formed, not served: a scheme but http (https:// asks for
				  * CONNECT), an origin or asterisk form target (a request to a
				  * server, not a proxy), HTTP other than 1.x: answer 501 (505) */
};

enum dsh_httpreq_kind {
	DSH_HTTPREQ_CONNECT, /* a tunnel to host:port */
	DSH_HTTPREQ_FORWARD, /* a request to forward in origin form */
};

/* Offsets are into the caller's buffer; host strings are lowercased and NUL-terminated, an IPv6
 * literal without its brackets in inet_ntop's spelling. */
struct dsh_httpreq {
	enum dsh_httpreq_kind kind;
	char host[DSH_NET_HOST_ROOM];
	uint16_t port;             /* CONNECT: as given (required); FORWARD: as given, else 80 */
	size_t method_len;         /* the method is buf[0, method_len) */
	/* FORWARD: the target after its authority: path and query, each byte visible ASCII.  Empty,
	 * or starting with '?', means the origin form's path is "/" followed by it.  CONNECT: 0, 0. */
	size_t path_off, path_len;
	size_t version_off;        /* "HTTP/1.x", 8 bytes, ending the request line */
	unsigned minor;            /* x */
	size_t line_len;           /* the request line, its CRLF included: the headers follow */
	size_t head_len;           /* through the CRLFCRLF: the body, or a tunnel's bytes, follow */
	bool has_host_header;
	char host_header[DSH_NET_HOST_ROOM]; /* the Host header's host, spelled as host is */
	uint16_t host_header_port; /* 0: the Host header gave none */
	const char *why;           /* BAD, TOO_LARGE, UNSUPPORTED: a short reason; else NULL */
};

/* buf, len: the bytes received so far (any bytes: no NUL terminator needed). */
enum dsh_httpreq_result dsh_httpreq_parse(const unsigned char *buf, size_t len, struct dsh_httpreq *ret);

/* The head as the upstream server reads it (the relay's check of plain HTTP through a tunnel or a
 * mapped address): an origin-form or asterisk-form target is FOUND as FORWARD with an empty host
 * (the Host header names it), its path at path_off, path_len (the target as sent); the absolute
 * and authority forms, and every other rule, as dsh_httpreq_parse() reads them. */
enum dsh_httpreq_result dsh_httpreq_parse_at_server(const unsigned char *buf, size_t len, struct dsh_httpreq *ret);

/* A FORWARD request's Host header names the URI's host and port (80 when it gives none): SPEC 12.2
 * holds a plain HTTP request to the name it was decided on.  False without a Host header; true
 * for CONNECT, whose tunnel the relay holds to its name by the ClientHello. */
bool dsh_httpreq_host_agrees(const struct dsh_httpreq *r);

#endif
