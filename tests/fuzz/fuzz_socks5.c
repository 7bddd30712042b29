/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SOCKS5 greeting and request readers (net/socks5.c) on whatever the command sends first:
 * the greeting, then the request from the bytes it did not use, as the proxy reads them.  Every
 * parse gets a heap copy of exactly the bytes it may read, so that ASan sees a read past len.
 * Invariants:
 *  - what is used lies within the input, and is 0 unless FOUND;
 *  - a found request has a NUL-terminated host of 1 to 255 bytes with no NUL, control byte or
 *    space, port nonzero, and reply OK; a refused one names a reply code other than OK;
 *  - a prefix answers NEED_MORE or what the whole input answers (with the same host and port).
 */
#include "net/socks5.h"
#include "tests/fuzz/fuzz.h"

static unsigned char *copy_of(const uint8_t *data, size_t len)
{
	unsigned char *c = malloc(len ? len : 1);
	if (!c)
		abort();
	memcpy(c, data, len);
	return c;
}

static void fail(const char *what, size_t len)
{
	fprintf(stderr, "fuzz_socks5: %s (%zu bytes)\n", what, len);
	abort();
}

static enum dsh_socks5_result greeting(const uint8_t *data, size_t len, size_t *used, bool *no_auth)
{
	unsigned char *c = copy_of(data, len);
	enum dsh_socks5_result r = dsh_socks5_greeting(c, len, used, no_auth);
	free(c);
	if (*used > len || (r != DSH_SOCKS5_FOUND && *used != 0))
		fail("greeting: used past the input, or without FOUND", len);
	return r;
}

static enum dsh_socks5_result request(const uint8_t *data, size_t len, size_t *used, struct dsh_socks5_request *req)
{
	unsigned char *c = copy_of(data, len);
	memset(req, 0x55, sizeof(*req));
	enum dsh_socks5_result r = dsh_socks5_request(c, len, used, req);
	free(c);
	if (*used > len || (r != DSH_SOCKS5_FOUND && *used != 0))
		fail("request: used past the input, or without FOUND", len);
	if (r == DSH_SOCKS5_FOUND) {
		size_t n = strnlen(req->host, sizeof(req->host));
		if (n == 0 || n == sizeof(req->host))
			fail("request: host empty or not NUL-terminated", len);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)req->host[i] <= 0x20 || req->host[i] == 0x7f)
				fail("request: a control byte or space in the host", len);
		if (req->port == 0 || req->reply != DSH_SOCKS5_OK)
			fail("request: port 0 or a reply other than OK", len);
	} else if ((r == DSH_SOCKS5_BAD || r == DSH_SOCKS5_UNSUPPORTED) && req->reply == DSH_SOCKS5_OK) {
		fail("request: refused with reply OK", len);
	}
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used = 0, cut_used;
	bool no_auth, cut_no_auth;
	enum dsh_socks5_result g = greeting(data, size, &used, &no_auth);
	for (size_t cut = 0; cut < size && cut < 300; cut++) {
		enum dsh_socks5_result r = greeting(data, cut, &cut_used, &cut_no_auth);
		if (r != DSH_SOCKS5_NEED_MORE &&
		    (r != g || cut_used != used || cut_no_auth != no_auth))
			fail("greeting: a prefix answers other than the whole", cut);
	}
	/* The request starts where the greeting ended; without a greeting, at the start. */
	const uint8_t *rest = g == DSH_SOCKS5_FOUND ? data + used : data;
	size_t rest_len = g == DSH_SOCKS5_FOUND ? size - used : size;
	struct dsh_socks5_request whole, part;
	size_t whole_used;
	enum dsh_socks5_result w = request(rest, rest_len, &whole_used, &whole);
	for (size_t cut = 0; cut < rest_len && cut < 300; cut++) {
		enum dsh_socks5_result r = request(rest, cut, &cut_used, &part);
		if (r == DSH_SOCKS5_NEED_MORE)
			continue;
		if (r != w || (r == DSH_SOCKS5_FOUND && (strcmp(part.host, whole.host) != 0 ||
							 part.port != whole.port || cut_used != whole_used)))
			fail("request: a prefix answers other than the whole", cut);
	}
	return 0;
}
