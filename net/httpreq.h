/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_HTTPREQ_H
#define DSH_NET_HTTPREQ_H

/*
 * The head of a request to the HTTP proxy (SPEC 12.2; RFC 9112 3): `CONNECT host:port HTTP/1.1`
 * for a tunnel, or `METHOD http://host[:port]/path HTTP/1.x` for a request the proxy forwards in
 * origin form.  Pure and bounded, read from the bytes received so far in one pass that decides
 * at the first byte or line that settles it, so a prefix answers NEED_MORE or what the whole
 * answers.  Strict where leniency would let two readers disagree on where a request goes: lines
 * end in CRLF (a bare CR or LF is BAD), no control bytes, no folded headers, one Host header, no
 * userinfo, exactly one space between the request line's three parts.
 */

#include <stddef.h>
#include <stdint.h>

/* A head longer than this (request line and headers, through the blank line) is TOO_LARGE. */
#define DSH_HTTPREQ_MAX_HEAD 16384

enum dsh_httpreq_result {
	DSH_HTTPREQ_FOUND,       /* the head is whole: *ret filled */
	DSH_HTTPREQ_NEED_MORE,   /* a prefix: read more and call again */
	DSH_HTTPREQ_BAD,         /* malformed: answer 400 and close */
	DSH_HTTPREQ_TOO_LARGE,   /* no end of head within DSH_HTTPREQ_MAX_HEAD: answer 431 and close */
	DSH_HTTPREQ_UNSUPPORTED, /* well-formed, not served: a scheme other than http (https is
				  * CONNECT's), or origin form sent to the proxy: answer 400 */
};

enum dsh_httpreq_kind {
	DSH_HTTPREQ_CONNECT, /* a tunnel to host:port */
	DSH_HTTPREQ_FORWARD, /* a request to forward to http://host:port */
};

struct dsh_httpreq {
	enum dsh_httpreq_kind kind;
	char host[254];          /* letters lowercased; an IPv6 literal without its brackets */
	uint16_t port;           /* CONNECT: as given (required); FORWARD: as given, else 80 */
	/* Offsets into the caller's bytes, for rewriting the request line to origin form:
	 * METHOD is buf[0, method_len); for FORWARD the target's rest after the authority is
	 * buf[rest_at, rest_at + rest_len) (empty, or starting with '/' or '?': origin form is "/"
	 * before it unless it starts with '/'); the version and what follows the request line
	 * start at version_at. */
	size_t method_len, rest_at, rest_len, version_at;
	size_t line_len;         /* the request line with its CRLF */
	size_t head_len;         /* through the blank line's CRLF: the body or tunnel starts here */
	size_t host_at, host_len; /* the Host header's value, its whitespace trimmed; host_len 0: none */
};

enum dsh_httpreq_result dsh_httpreq_parse(const unsigned char *buf, size_t len, struct dsh_httpreq *ret);

#endif
