/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SOCKS5 greeting and request the proxy reads (SPEC 12.2): what it takes, what it refuses
 * with which reply, and that every prefix of a message waits for more instead of deciding. */
#include <string.h>

#include <criterion/criterion.h>

#include "net/socks5.h"

#define MSG(...) ((const unsigned char[]){ __VA_ARGS__ }), sizeof((const unsigned char[]){ __VA_ARGS__ })

static enum dsh_socks5_result request(const unsigned char *b, size_t n, struct dsh_socks5_request *r, size_t *used)
{
	memset(r, 0x55, sizeof(*r));
	return dsh_socks5_request(b, n, used, r);
}

/* Every proper prefix of b answers NEED_MORE. */
static void prefixes_wait(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct dsh_socks5_request r;
		size_t used;
		cr_expect_eq(request(b, i, &r, &used), DSH_SOCKS5_NEED_MORE, "prefix of %zu of %zu bytes", i, n);
		cr_expect_eq(used, 0);
	}
}

Test(socks5, a_greeting_offering_no_auth_is_taken)
{
	size_t used;
	bool no_auth;
	cr_assert_eq(dsh_socks5_greeting(MSG(5, 2, 2, 0), &used, &no_auth), DSH_SOCKS5_FOUND);
	cr_assert_eq(used, 4);
	cr_assert(no_auth);
	cr_assert_eq(dsh_socks5_greeting(MSG(5, 1, 2, 9, 9), &used, &no_auth), DSH_SOCKS5_FOUND);
	cr_assert_eq(used, 3, "the bytes after the greeting are the next message's");
	cr_assert_not(no_auth, "only user/password offered");
}

Test(socks5, a_greeting_not_socks5_or_without_methods_is_bad)
{
	size_t used;
	bool no_auth;
	cr_assert_eq(dsh_socks5_greeting(MSG(4, 1, 0), &used, &no_auth), DSH_SOCKS5_BAD);
	cr_assert_eq(dsh_socks5_greeting(MSG('C', 'O', 'N'), &used, &no_auth), DSH_SOCKS5_BAD);
	cr_assert_eq(dsh_socks5_greeting(MSG(5, 0), &used, &no_auth), DSH_SOCKS5_BAD);
	cr_assert_eq(dsh_socks5_greeting(MSG(5, 3, 0, 1), &used, &no_auth), DSH_SOCKS5_NEED_MORE);
	cr_assert_eq(dsh_socks5_greeting(NULL, 0, &used, &no_auth), DSH_SOCKS5_NEED_MORE);
}

Test(socks5, connect_to_a_name)
{
	static const unsigned char b[] = { 5, 1, 0, 3, 19, 'R', 'e', 'g', 'i', 's', 't', 'r', 'y', '.', 'n', 'p', 'm',
					   'j', 's', '.', 'o', 'r', 'g', '.', 0x01, 0xbb, 0xee };
	struct dsh_socks5_request r;
	size_t used;
	cr_assert_eq(request(b, sizeof(b), &r, &used), DSH_SOCKS5_FOUND);
	cr_assert_str_eq(r.host, "registry.npmjs.org.");
	cr_assert_eq(r.port, 443);
	cr_assert(r.is_name);
	cr_assert_eq(r.reply, DSH_SOCKS5_OK);
	cr_assert_eq(used, sizeof(b) - 1, "the byte after the request is the command's first");
	prefixes_wait(b, sizeof(b) - 1);
}

Test(socks5, connect_to_addresses)
{
	struct dsh_socks5_request r;
	size_t used;
	static const unsigned char v4[] = { 5, 1, 0, 1, 192, 0, 2, 7, 0, 80 };
	cr_assert_eq(request(v4, sizeof(v4), &r, &used), DSH_SOCKS5_FOUND);
	cr_assert_str_eq(r.host, "192.0.2.7");
	cr_assert_eq(r.port, 80);
	cr_assert_not(r.is_name);
	cr_assert_eq(used, sizeof(v4));
	prefixes_wait(v4, sizeof(v4));
	static const unsigned char v6[] = { 5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1f, 0x90 };
	cr_assert_eq(request(v6, sizeof(v6), &r, &used), DSH_SOCKS5_FOUND);
	cr_assert_str_eq(r.host, "2001:db8::1");
	cr_assert_eq(r.port, 8080);
	cr_assert_eq(used, sizeof(v6));
	prefixes_wait(v6, sizeof(v6));
}

Test(socks5, bind_and_udp_are_refused_with_their_reply)
{
	struct dsh_socks5_request r;
	size_t used;
	cr_assert_eq(request(MSG(5, 2, 0, 1, 127, 0, 0, 1, 0, 80), &r, &used), DSH_SOCKS5_UNSUPPORTED);
	cr_assert_eq(r.reply, DSH_SOCKS5_BAD_COMMAND);
	cr_assert_eq(request(MSG(5, 3), &r, &used), DSH_SOCKS5_UNSUPPORTED, "decided on the command byte");
	cr_assert_eq(r.reply, DSH_SOCKS5_BAD_COMMAND);
	cr_assert_eq(request(MSG(5, 1, 0, 2, 1, 2), &r, &used), DSH_SOCKS5_UNSUPPORTED);
	cr_assert_eq(r.reply, DSH_SOCKS5_BAD_ADDRESS);
	cr_assert_str_eq(r.host, "");
}

Test(socks5, malformed_requests_are_bad)
{
	struct dsh_socks5_request r;
	size_t used;
	cr_expect_eq(request(MSG(4, 1, 0, 1, 1, 2, 3, 4, 0, 80), &r, &used), DSH_SOCKS5_BAD, "SOCKS4");
	cr_expect_eq(request(MSG(5, 1, 1, 1, 1, 2, 3, 4, 0, 80), &r, &used), DSH_SOCKS5_BAD, "reserved byte set");
	cr_expect_eq(request(MSG(5, 1, 0, 3, 0, 0, 80), &r, &used), DSH_SOCKS5_BAD, "empty name");
	cr_expect_eq(request(MSG(5, 1, 0, 1, 1, 2, 3, 4, 0, 0), &r, &used), DSH_SOCKS5_BAD, "port 0");
	cr_expect_eq(request(MSG(5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80), &r, &used), DSH_SOCKS5_BAD, "NUL in the name");
	cr_expect_eq(request(MSG(5, 1, 0, 3, 3, 'a', ' ', 'b', 0, 80), &r, &used), DSH_SOCKS5_BAD, "space");
	cr_expect_eq(request(MSG(5, 1, 0, 3, 3, 'a', '\n', 'b', 0, 80), &r, &used), DSH_SOCKS5_BAD, "newline");
	/* Judged as the bytes land: a bad byte before the name is whole already decides. */
	cr_expect_eq(request(MSG(5, 1, 0, 3, 9, 'a', 0), &r, &used), DSH_SOCKS5_BAD, "NUL, the rest not yet here");
	cr_expect_eq(used, 0);
	cr_expect_eq(r.reply, DSH_SOCKS5_FAILURE);
}

Test(socks5, a_name_of_255_bytes_fits)
{
	unsigned char b[5 + 255 + 2] = { 5, 1, 0, 3, 255 };
	memset(b + 5, 'x', 255);
	b[5 + 255] = 0;
	b[5 + 256] = 22;
	struct dsh_socks5_request r;
	size_t used;
	cr_assert_eq(request(b, sizeof(b), &r, &used), DSH_SOCKS5_FOUND);
	cr_assert_eq(strlen(r.host), 255);
	cr_assert_eq(r.port, 22);
}

Test(socks5, the_reply_names_no_address)
{
	unsigned char out[DSH_SOCKS5_REPLY_LEN];
	memset(out, 0x55, sizeof(out));
	cr_assert_eq(dsh_socks5_reply(out, DSH_SOCKS5_NOT_ALLOWED), 10);
	static const unsigned char want[] = { 5, 2, 0, 1, 0, 0, 0, 0, 0, 0 };
	cr_assert_arr_eq(out, want, sizeof(want));
}
