/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The HTTP proxy's request head reader (net/httpreq.c) on whatever the command sends first.
 * Every parse gets a heap copy of exactly the bytes it may read, so that ASan sees a read past
 * len.  Invariants:
 *  - a found head lies within the input and the bound, ends in CRLF CRLF, and its offsets
 *    (method, rest, version, Host value, request line) lie within it, in order;
 *  - the host is 1 to 253 bytes of a host's shape (no upper case, no byte outside the name
 *    and IPv6 alphabets), the port nonzero;
 *  - a prefix answers NEED_MORE or what the whole answers, with the same host and port.
 */
#include <stdbool.h>

#include "net/httpreq.h"
#include "tests/fuzz/fuzz.h"

static void fail(const char *what, size_t len)
{
	fprintf(stderr, "fuzz_httpreq: %s (%zu bytes)\n", what, len);
	abort();
}

static enum dsh_httpreq_result parse(const uint8_t *data, size_t len, struct dsh_httpreq *r)
{
	unsigned char *c = malloc(len ? len : 1);
	if (!c)
		abort();
	memcpy(c, data, len);
	memset(r, 0x55, sizeof(*r));
	enum dsh_httpreq_result res = dsh_httpreq_parse(c, len, r);
	free(c);
	return res;
}

static void check_found(const uint8_t *data, size_t len, const struct dsh_httpreq *r)
{
	if (r->head_len < 4 || r->head_len > len || r->head_len > DSH_HTTPREQ_MAX_HEAD ||
	    memcmp(data + r->head_len - 4, "\r\n\r\n", 4) != 0)
		fail("the head does not end in CRLF CRLF within the input and the bound", len);
	if (r->method_len == 0 || r->method_len >= r->line_len || r->version_at + 10 != r->line_len ||
	    r->rest_at + r->rest_len > r->version_at || r->line_len > r->head_len)
		fail("an offset of the request line out of order", len);
	if (r->host_len && (r->host_at < r->line_len || r->host_at + r->host_len > r->head_len))
		fail("the Host value outside the headers", len);
	size_t n = strnlen(r->host, sizeof(r->host));
	if (n == 0 || n > 253)
		fail("host empty, over 253 bytes, or not NUL-terminated", len);
	for (size_t i = 0; i < n; i++) {
		char c = r->host[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == ':'))
			fail("a byte outside a host's alphabet", len);
	}
	if (r->port == 0)
		fail("port 0", len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dsh_httpreq whole, part;
	enum dsh_httpreq_result w = parse(data, size, &whole);
	if (w == DSH_HTTPREQ_FOUND)
		check_found(data, size, &whole);
	const size_t cuts[] = { size / 2, size > 0 ? size - 1 : 0, size > 9 ? 9 : 0,
				whole.head_len <= size && w == DSH_HTTPREQ_FOUND ? whole.head_len : 0 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		enum dsh_httpreq_result r = parse(data, cuts[i], &part);
		if (r == DSH_HTTPREQ_NEED_MORE)
			continue;
		if (r != w || (r == DSH_HTTPREQ_FOUND && (strcmp(part.host, whole.host) != 0 ||
							  part.port != whole.port || part.head_len != whole.head_len)))
			fail("a prefix answers other than the whole", cuts[i]);
	}
	return 0;
}
