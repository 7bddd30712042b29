/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SOCKS5 proxy's parsers (SPEC 12.2, RFC 1928): greeting, request, reply bytes. */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "net/socks5.h"

#define B(...) ((const unsigned char[]){ __VA_ARGS__ }), sizeof((const unsigned char[]){ __VA_ARGS__ })

static enum dsh_socks5_result req(const unsigned char *b, size_t n, struct dsh_socks5_request *r)
{
	return dsh_socks5_parse_request(b, n, r);
}

Test(socks5, greeting)
{
	struct dsh_socks5_greeting g;
	cr_assert_eq(dsh_socks5_parse_greeting(B(5, 2, 2, 0, 0xaa), &g), DSH_SOCKS5_FOUND);
	cr_expect(g.no_auth);
	cr_expect_eq(g.len, 4, "the byte after the methods is the request's");
	cr_assert_eq(dsh_socks5_parse_greeting(B(5, 1, 2), &g), DSH_SOCKS5_FOUND);
	cr_expect_not(g.no_auth, "username/password only: answer 05 FF");
	for (size_t k = 0; k < 4; k++)
		cr_expect_eq(dsh_socks5_parse_greeting((const unsigned char[]){ 5, 2, 2, 0 }, k, &g), DSH_SOCKS5_NEED_MORE,
			     "prefix %zu", k);
}

Test(socks5, greeting_refusals)
{
	struct dsh_socks5_greeting g;
	cr_expect_eq(dsh_socks5_parse_greeting(B(4, 1, 0, 80), &g), DSH_SOCKS5_BAD);
	cr_expect(g.why && strstr(g.why, "SOCKS4"));
	cr_expect_eq(dsh_socks5_parse_greeting(B('G'), &g), DSH_SOCKS5_BAD);
	cr_expect_eq(dsh_socks5_parse_greeting(B(5, 0), &g), DSH_SOCKS5_BAD);
	cr_expect(g.why && strstr(g.why, "no method"));
}

Test(socks5, connect_by_domain)
{
	const unsigned char m[] = { 5, 1, 0, 3, 11, 'E', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'O', 'r', 'g', 1, 187, 'x' };
	struct dsh_socks5_request r;
	cr_assert_eq(req(m, sizeof(m), &r), DSH_SOCKS5_FOUND, "%s", r.why);
	cr_expect_str_eq(r.host, "example.org");
	cr_expect_eq(r.port, 443);
	cr_expect(r.is_domain);
	cr_expect_eq(r.len, sizeof(m) - 1);
	for (size_t k = 0; k < sizeof(m) - 1; k++)
		cr_expect_eq(req(m, k, &r), DSH_SOCKS5_NEED_MORE, "prefix %zu", k);
}

Test(socks5, connect_by_address)
{
	struct dsh_socks5_request r;
	cr_assert_eq(req(B(5, 1, 0, 1, 192, 0, 2, 7, 0, 22), &r), DSH_SOCKS5_FOUND);
	cr_expect_str_eq(r.host, "192.0.2.7");
	cr_expect_eq(r.port, 22);
	cr_expect_not(r.is_domain);
	cr_expect_eq(r.len, 10);
	cr_assert_eq(req(B(5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1f, 0x90), &r),
		     DSH_SOCKS5_FOUND);
	cr_expect_str_eq(r.host, "2001:db8::1");
	cr_expect_eq(r.port, 8080);
	cr_expect_eq(r.len, 22);
}

Test(socks5, unsupported_commands_and_address_types)
{
	struct dsh_socks5_request r;
	cr_expect_eq(req(B(5, 2), &r), DSH_SOCKS5_UNSUPPORTED, "BIND, known from its second byte");
	cr_expect_eq(r.reply, DSH_SOCKS5_CMD_UNSUPPORTED);
	cr_expect_eq(req(B(5, 3, 0, 1, 0, 0, 0, 0, 0, 0), &r), DSH_SOCKS5_UNSUPPORTED);
	cr_expect_eq(r.reply, DSH_SOCKS5_CMD_UNSUPPORTED);
	cr_expect_eq(req(B(5, 1, 0, 2, 1, 2, 3, 4, 0, 80), &r), DSH_SOCKS5_UNSUPPORTED);
	cr_expect_eq(r.reply, DSH_SOCKS5_ATYP_UNSUPPORTED);
}

Test(socks5, malformed_requests)
{
	struct dsh_socks5_request r;
	cr_expect_eq(req(B(4, 1, 0, 80), &r), DSH_SOCKS5_BAD);
	cr_expect_eq(req(B(5, 1, 1, 1, 1, 2, 3, 4, 0, 80), &r), DSH_SOCKS5_BAD);
	cr_expect(r.why && strstr(r.why, "reserved"));
	cr_expect_eq(req(B(5, 1, 0, 3, 0, 0, 80), &r), DSH_SOCKS5_BAD);
	cr_expect(r.why && strstr(r.why, "empty"));
	cr_expect_eq(req(B(5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80), &r), DSH_SOCKS5_BAD);
	cr_expect(r.why && strstr(r.why, "NUL"));
	cr_expect_eq(req(B(5, 1, 0, 3, 3, 'a', ' ', 'b', 0, 80), &r), DSH_SOCKS5_BAD);
	cr_expect(r.why && strstr(r.why, "host name"));
	cr_expect_eq(req(B(5, 1, 0, 3, 5, '1', '2', '7', '.', '1', 0, 80), &r), DSH_SOCKS5_BAD);
	cr_expect(r.why && strstr(r.why, "dotted IPv4"));
	cr_expect_eq(req(B(5, 1, 0, 1, 1, 2, 3, 4, 0, 0), &r), DSH_SOCKS5_BAD);
	cr_expect(r.why && strstr(r.why, "port 0"));
	cr_expect_eq(r.reply, DSH_SOCKS5_GENERAL_FAILURE);
}

Test(socks5, domain_lengths)
{
	unsigned char m[4 + 1 + 255 + 2] = { 5, 1, 0, 3, 255 };
	struct dsh_socks5_request r;
	memset(m + 5, 'a', 255);
	for (size_t i = 63; i < 255; i += 64)
		m[5 + i] = '.';
	m[260] = 0, m[261] = 80;
	cr_expect_eq(req(m, sizeof(m), &r), DSH_SOCKS5_BAD, "255 bytes: the wire's limit, longer than a host name");
	cr_expect(r.why && strstr(r.why, "253"));
	m[4] = 253;
	m[258] = 0, m[259] = 80;
	cr_assert_eq(req(m, 4 + 1 + 253 + 2, &r), DSH_SOCKS5_FOUND, "%s", r.why);
	cr_expect_eq(strlen(r.host), 253);
	cr_expect_eq(r.len, 260);
}

Test(socks5, reply_bytes)
{
	unsigned char b[DSH_SOCKS5_REPLY_LEN];
	dsh_socks5_reply(DSH_SOCKS5_NOT_ALLOWED, b);
	cr_expect_arr_eq(b, ((unsigned char[]){ 5, 2, 0, 1, 0, 0, 0, 0, 0, 0 }), sizeof(b));
	cr_expect_eq(dsh_socks5_reply_for(0), DSH_SOCKS5_SUCCEEDED);
	cr_expect_eq(dsh_socks5_reply_for(-EACCES), DSH_SOCKS5_NOT_ALLOWED);
	cr_expect_eq(dsh_socks5_reply_for(-ENOENT), DSH_SOCKS5_HOST_UNREACHABLE);
	cr_expect_eq(dsh_socks5_reply_for(-ECONNREFUSED), DSH_SOCKS5_REFUSED);
	cr_expect_eq(dsh_socks5_reply_for(-ENETUNREACH), DSH_SOCKS5_NET_UNREACHABLE);
	cr_expect_eq(dsh_socks5_reply_for(-ENOMEM), DSH_SOCKS5_GENERAL_FAILURE);
}
