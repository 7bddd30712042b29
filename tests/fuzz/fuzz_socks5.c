/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SOCKS5 parsers (net/socks5.c) on whatever the command sends: a greeting, then a request in
 * the bytes after it (or in all of them when the greeting is not found).  Every parse gets a heap
 * copy of exactly the bytes it may read.  Invariants:
 *  - a found greeting or request consumes no more than it was given; a found host is
 *    NUL-terminated within its room, has a host's shape (an address inet_pton reads back, or a
 *    lowercased name of 1 to 253 bytes without an empty label), and the port is nonzero;
 *  - each prefix answers NEED_MORE or what the whole input answers, with the same reason;
 *  - a found request, written again from its host and port, parses back to them;
 *  - a refusal names its reply: 0x07 or 0x08 for UNSUPPORTED, 0x01 for BAD.
 */
#include <arpa/inet.h>
#include <stdbool.h>

#include "net/socks5.h"
#include "tests/fuzz/fuzz.h"

static void die(const char *what)
{
	fprintf(stderr, "fuzz_socks5: %s\n", what);
	abort();
}

static enum dsh_socks5_result greeting(const uint8_t *data, size_t len, struct dsh_socks5_greeting *g)
{
	unsigned char *copy = malloc(len ? len : 1);
	if (!copy)
		abort();
	memcpy(copy, data, len);
	enum dsh_socks5_result r = dsh_socks5_parse_greeting(copy, len, g);
	free(copy);
	return r;
}

static enum dsh_socks5_result request(const uint8_t *data, size_t len, struct dsh_socks5_request *q)
{
	unsigned char *copy = malloc(len ? len : 1);
	if (!copy)
		abort();
	memcpy(copy, data, len);
	memset(q, 0x55, sizeof(*q));
	enum dsh_socks5_result r = dsh_socks5_parse_request(copy, len, q);
	free(copy);
	return r;
}

static void check_request(const struct dsh_socks5_request *q, size_t size)
{
	size_t n = strnlen(q->host, sizeof(q->host));
	unsigned char a[16];
	if (n == sizeof(q->host))
		die("a host not NUL-terminated within its room");
	if (q->port == 0 || q->len > size || q->len < 8 || q->why)
		die("port 0, a length beyond the input, or a reason given with FOUND");
	if (!q->is_domain) {
		if (inet_pton(AF_INET, q->host, a) != 1 && inet_pton(AF_INET6, q->host, a) != 1)
			die("an address that inet_pton does not read back");
		return;
	}
	if (n == 0 || n > 253 || q->host[0] == '.' || strstr(q->host, ".."))
		die("a DOMAINNAME of no host name's shape");
	for (size_t i = 0; i < n; i++)
		if (q->host[i] >= 'A' && q->host[i] <= 'Z')
			die("a DOMAINNAME not lowercased");
}

static void check_round_trip(const struct dsh_socks5_request *q)
{
	unsigned char m[4 + 1 + 255 + 2] = { 5, 1, 0 };
	size_t n;
	if (q->is_domain) {
		size_t l = strlen(q->host);
		m[3] = 3, m[4] = (unsigned char)l;
		memcpy(m + 5, q->host, l);
		n = 5 + l;
	} else if (inet_pton(AF_INET, q->host, m + 4) == 1) {
		m[3] = 1, n = 8;
	} else if (inet_pton(AF_INET6, q->host, m + 4) == 1) {
		m[3] = 4, n = 20;
	} else {
		die("an address that inet_pton does not read back");
		return;
	}
	m[n] = (unsigned char)(q->port >> 8), m[n + 1] = (unsigned char)q->port;
	struct dsh_socks5_request back;
	if (request(m, n + 2, &back) != DSH_SOCKS5_FOUND || strcmp(back.host, q->host) != 0 || back.port != q->port ||
	    back.len != n + 2)
		die("a found request that does not parse back to itself");
}

static void check_refusal(enum dsh_socks5_result r, const struct dsh_socks5_request *q)
{
	if (r == DSH_SOCKS5_UNSUPPORTED && q->reply != DSH_SOCKS5_CMD_UNSUPPORTED && q->reply != DSH_SOCKS5_ATYP_UNSUPPORTED)
		die("UNSUPPORTED with a reply other than 0x07 or 0x08");
	if (r == DSH_SOCKS5_BAD && q->reply != DSH_SOCKS5_GENERAL_FAILURE)
		die("BAD with a reply other than 0x01");
	if ((r == DSH_SOCKS5_BAD || r == DSH_SOCKS5_UNSUPPORTED) && !q->why)
		die("a refusal without a reason");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dsh_socks5_greeting g, gp;
	struct dsh_socks5_request q, qp;
	enum dsh_socks5_result gr = greeting(data, size, &g);
	if (gr == DSH_SOCKS5_FOUND && (g.len > size || g.len < 3 || g.len != 2 + (size_t)data[1]))
		die("a greeting's length beyond the input or not its methods'");
	/* Messages are short: every prefix of the first few hundred bytes. */
	size_t upto = size < 300 ? size : 300;
	for (size_t k = 0; k < upto; k++) {
		enum dsh_socks5_result p = greeting(data, k, &gp);
		if (p != DSH_SOCKS5_NEED_MORE && (p != gr || gp.why != g.why || gp.no_auth != g.no_auth || gp.len != g.len))
			die("a prefix of a greeting answers other than the whole");
	}

	size_t off = gr == DSH_SOCKS5_FOUND ? g.len : 0;
	const uint8_t *rq = data + off;
	size_t rn = size - off;
	enum dsh_socks5_result qr = request(rq, rn, &q);
	if (qr == DSH_SOCKS5_FOUND) {
		check_request(&q, rn);
		check_round_trip(&q);
	} else {
		check_refusal(qr, &q);
	}
	upto = rn < 300 ? rn : 300;
	for (size_t k = 0; k < upto; k++) {
		enum dsh_socks5_result p = request(rq, k, &qp);
		if (p == DSH_SOCKS5_NEED_MORE)
			continue;
		if (p != qr || qp.why != q.why || qp.reply != q.reply ||
		    (p == DSH_SOCKS5_FOUND && (qp.len != q.len || strcmp(qp.host, q.host) != 0 || qp.port != q.port)))
			die("a prefix of a request answers other than the whole");
	}

	unsigned char reply[DSH_SOCKS5_REPLY_LEN];
	dsh_socks5_reply(q.reply, reply);
	if (reply[0] != 5 || reply[1] != (unsigned char)q.reply || reply[2] != 0 || reply[3] != 1 ||
	    memcmp(reply + 4, "\0\0\0\0\0\0", 6) != 0)
		die("a reply that is not 05 REP 00 01 0.0.0.0:0");
	return 0;
}
