/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_SOCKS5_H
#define DSH_NET_SOCKS5_H

/*
 * The two messages a SOCKS5 client sends the proxy before its bytes flow (RFC 1928 3 and 4): the
 * greeting naming the methods it offers, and the request naming where to connect.  Pure and
 * bounded, read from the bytes received so far: a prefix answers NEED_MORE or what the whole
 * message answers, so the proxy may call again as bytes arrive.  The proxy offers no
 * authentication (loopback inside the command's namespace: there is no one else to keep out).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dsh_socks5_result {
	DSH_SOCKS5_FOUND,       /* the message is whole; *ret_used bytes of it */
	DSH_SOCKS5_NEED_MORE,   /* a prefix: read more and call again */
	DSH_SOCKS5_BAD,         /* not SOCKS5, or malformed: close (after the reply, for a request) */
	DSH_SOCKS5_UNSUPPORTED, /* a well-formed request the proxy does not serve: reply, close */
};

/* RFC 1928 6's reply codes the proxy sends. */
enum {
	DSH_SOCKS5_OK = 0x00,
	DSH_SOCKS5_FAILURE = 0x01,
	DSH_SOCKS5_NOT_ALLOWED = 0x02,
	DSH_SOCKS5_NET_UNREACHABLE = 0x03,
	DSH_SOCKS5_HOST_UNREACHABLE = 0x04,
	DSH_SOCKS5_REFUSED = 0x05,
	DSH_SOCKS5_TTL_EXPIRED = 0x06,
	DSH_SOCKS5_BAD_COMMAND = 0x07,
	DSH_SOCKS5_BAD_ADDRESS = 0x08,
};

/* The greeting; *ret_no_auth: whether it offers method 0x00 (no authentication), the only one
 * the proxy takes (else it answers 0xFF and closes). */
enum dsh_socks5_result dsh_socks5_greeting(const unsigned char *buf, size_t len, size_t *ret_used, bool *ret_no_auth);

struct dsh_socks5_request {
	/* Where to connect, as text: dotted IPv4, an IPv6 literal without brackets, or a domain name
	 * with ASCII letters lowercased (the policy normalises it further).  At most 255 bytes. */
	char host[256];
	uint16_t port;
	bool is_name;           /* host came as a domain name, not as an address */
	unsigned char reply;    /* on BAD or UNSUPPORTED: the reply code to send */
};

/* The request.  Only CONNECT is served (BIND and UDP ASSOCIATE answer UNSUPPORTED with
 * BAD_COMMAND); a name holding NUL, a control byte or a space, an empty name, or port 0 is BAD. */
enum dsh_socks5_result dsh_socks5_request(const unsigned char *buf, size_t len, size_t *ret_used,
					  struct dsh_socks5_request *ret);

/* The reply (RFC 1928 6) with BND.ADDR 0.0.0.0:0: what the proxy bound says nothing the command
 * needs.  Writes 10 bytes to out and returns 10. */
#define DSH_SOCKS5_REPLY_LEN 10
size_t dsh_socks5_reply(unsigned char out[DSH_SOCKS5_REPLY_LEN], unsigned char code);

#endif
