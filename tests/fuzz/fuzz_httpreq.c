/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The HTTP proxy's request head parser (net/httpreq.c) on whatever the command sends.  Every parse
 * gets a heap copy of exactly the bytes it may read, so that ASan sees a read past len.  Invariants:
 *  - a found host (and Host header's host) is NUL-terminated within its room and has a host's
 *    shape: a name of 1 to 253 bytes without an empty label, or an IPv6 address; the port is
 *    nonzero; every offset lies within the head, which lies within the input and ends in CRLFCRLF;
 *  - the proxy reads in pieces: a prefix answers NEED_MORE or what the whole input answers, with
 *    the same reason, and the head alone answers what the head and more do;
 *  - what was found is a target the parser itself accepts: CONNECT to it parses back to it;
 *  - input that stays unfinished, padded past the bound, is refused: never NEED_MORE for ever.
 */
#include <arpa/inet.h>
#include <stdbool.h>

#include "net/httpreq.h"
#include "tests/fuzz/fuzz.h"

static enum dsh_httpreq_result parse(const uint8_t *data, size_t len, struct dsh_httpreq *r)
{
	unsigned char *copy = malloc(len ? len : 1);
	if (!copy)
		abort();
	memcpy(copy, data, len);
	memset(r, 0x55, sizeof(*r)); /* no NUL but the parser's */
	enum dsh_httpreq_result res = dsh_httpreq_parse(copy, len, r);
	free(copy);
	return res;
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz_httpreq: %s\n", what);
	abort();
}

static void check_host(const char *h)
{
	size_t n = strnlen(h, DSH_NET_HOST_ROOM);
	unsigned char a[16];
	if (n == DSH_NET_HOST_ROOM)
		die("a host not NUL-terminated within its room");
	if (strchr(h, ':')) {
		if (inet_pton(AF_INET6, h, a) != 1)
			die("a host with ':' that is no IPv6 address");
		return;
	}
	if (n == 0 || n > 253 || h[0] == '.' || strstr(h, ".."))
		die("a host of no host name's shape");
	for (size_t i = 0; i < n; i++)
		if (!(h[i] == '-' || h[i] == '_' || h[i] == '.' || (h[i] >= '0' && h[i] <= '9') ||
		      (h[i] >= 'a' && h[i] <= 'z')))
			die("a host with a byte no lowercased host name has");
}

static void check_found(const uint8_t *data, size_t size, const struct dsh_httpreq *r)
{
	check_host(r->host);
	if (r->port == 0 || r->why)
		die("port 0, or a reason given with FOUND");
	if (r->head_len > size || r->head_len > DSH_HTTPREQ_MAX_HEAD || r->head_len < r->line_len + 2 ||
	    memcmp(data + r->head_len - 4, "\r\n\r\n", 4) != 0)
		die("a head that is not within the input or does not end in CRLFCRLF");
	if (r->line_len < 12 || memcmp(data + r->line_len - 2, "\r\n", 2) != 0 || r->version_off + 10 != r->line_len ||
	    memcmp(data + r->version_off, "HTTP/1.", 7) != 0 || r->minor > 9)
		die("a request line not ending in HTTP/1.x CRLF");
	if (r->method_len == 0 || r->method_len >= r->version_off || data[r->method_len] != ' ')
		die("a method not ending in a space");
	if (r->kind == DSH_HTTPREQ_CONNECT ? r->path_len != 0 :
	    r->path_off + r->path_len + 1 != r->version_off ||
	    (r->path_len && data[r->path_off] != '/' && data[r->path_off] != '?'))
		die("a path outside the request-target, or one not starting with '/' or '?'");
	if (r->has_host_header)
		check_host(r->host_header);
}

static void check_round_trip(const struct dsh_httpreq *r)
{
	char again[DSH_NET_HOST_ROOM + 64];
	struct dsh_httpreq back;
	bool v6 = strchr(r->host, ':') != NULL;
	int n = snprintf(again, sizeof(again), "CONNECT %s%s%s:%u HTTP/1.1\r\n\r\n", v6 ? "[" : "", r->host, v6 ? "]" : "",
			 (unsigned)r->port);
	if (n <= 0 || (size_t)n >= sizeof(again))
		die("no room for the round trip");
	if (parse((const uint8_t *)again, (size_t)n, &back) != DSH_HTTPREQ_FOUND || strcmp(back.host, r->host) != 0 ||
	    back.port != r->port)
		die("a found host and port that do not parse back to themselves");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dsh_httpreq whole, part;
	enum dsh_httpreq_result w = parse(data, size, &whole);
	if (w == DSH_HTTPREQ_FOUND) {
		check_found(data, size, &whole);
		check_round_trip(&whole);
	} else if ((w == DSH_HTTPREQ_NEED_MORE) != (whole.why == NULL)) {
		die("a refusal without a reason, or NEED_MORE with one");
	}

	size_t cuts[] = { size / 2, size > 0 ? size - 1 : 0, size > 40 ? 40 : 0, 0, 0 };
	if (w == DSH_HTTPREQ_FOUND)
		cuts[3] = whole.head_len - 1, cuts[4] = whole.head_len;
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		enum dsh_httpreq_result p = parse(data, cuts[i], &part);
		if (p == DSH_HTTPREQ_NEED_MORE && !(i == 4 && w == DSH_HTTPREQ_FOUND))
			continue;
		if (p != w || part.why != whole.why ||
		    (p == DSH_HTTPREQ_FOUND && (part.head_len != whole.head_len || strcmp(part.host, whole.host) != 0 ||
						part.port != whole.port || part.path_off != whole.path_off)))
			die("a prefix answers other than the whole input");
	}

	if (w == DSH_HTTPREQ_NEED_MORE) {
		size_t big = DSH_HTTPREQ_MAX_HEAD + 1;
		uint8_t *pad = malloc(big);
		if (!pad)
			abort();
		memcpy(pad, data, size < big ? size : big);
		if (size < big)
			memset(pad + size, 'a', big - size);
		enum dsh_httpreq_result p = parse(pad, big, &part);
		free(pad);
		if (p != DSH_HTTPREQ_BAD && p != DSH_HTTPREQ_TOO_LARGE)
			die("an unfinished head padded past the bound is not refused");
	}
	return 0;
}
