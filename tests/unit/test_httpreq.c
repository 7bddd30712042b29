/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The HTTP proxy's request head reader (SPEC 12.2): CONNECT and absolute-URI requests, what each
 * refuses, the bound on a head, and that every prefix of a head waits for more. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "net/httpreq.h"

static enum dsh_httpreq_result parse(const char *s, struct dsh_httpreq *r)
{
	return dsh_httpreq_parse((const unsigned char *)s, strlen(s), r);
}

static void prefixes_wait(const char *s)
{
	struct dsh_httpreq r;
	for (size_t i = 0; i < strlen(s); i++)
		cr_expect_eq(dsh_httpreq_parse((const unsigned char *)s, i, &r), DSH_HTTPREQ_NEED_MORE,
			     "prefix of %zu bytes of %s", i, s);
}

Test(httpreq, connect_names_the_tunnel)
{
	static const char req[] = "CONNECT Registry.NPMjs.org:443 HTTP/1.1\r\nHost: registry.npmjs.org:443\r\n\r\n\x16\x03\x01";
	struct dsh_httpreq r;
	cr_assert_eq(parse(req, &r), DSH_HTTPREQ_FOUND);
	cr_assert_eq(r.kind, DSH_HTTPREQ_CONNECT);
	cr_assert_str_eq(r.host, "registry.npmjs.org");
	cr_assert_eq(r.port, 443);
	cr_assert_eq(r.head_len, strlen(req) - 3, "the tunnel's bytes start after the blank line");
	cr_assert_eq(r.line_len, strlen("CONNECT Registry.NPMjs.org:443 HTTP/1.1\r\n"));
	cr_assert_eq(r.host_len, strlen("registry.npmjs.org:443"));
	cr_assert_eq(memcmp(req + r.host_at, "registry.npmjs.org:443", r.host_len), 0);
	prefixes_wait("CONNECT Registry.NPMjs.org:443 HTTP/1.1\r\nHost: registry.npmjs.org:443\r\n\r\n");
}

Test(httpreq, connect_to_address_literals)
{
	struct dsh_httpreq r;
	cr_assert_eq(parse("CONNECT [2001:DB8::1]:8443 HTTP/1.1\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_assert_str_eq(r.host, "2001:db8::1");
	cr_assert_eq(r.port, 8443);
	cr_assert_eq(r.host_len, 0, "no Host header");
	cr_assert_eq(parse("CONNECT 192.0.2.1:22 HTTP/1.0\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_assert_str_eq(r.host, "192.0.2.1");
	cr_assert_eq(r.port, 22);
}

Test(httpreq, an_absolute_uri_is_forwarded_in_origin_form)
{
	static const char req[] = "GET http://Example.com/a/b?c=d HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n";
	struct dsh_httpreq r;
	cr_assert_eq(parse(req, &r), DSH_HTTPREQ_FOUND);
	cr_assert_eq(r.kind, DSH_HTTPREQ_FORWARD);
	cr_assert_str_eq(r.host, "example.com");
	cr_assert_eq(r.port, 80);
	cr_assert_eq(r.method_len, 3);
	cr_assert_eq(r.rest_len, strlen("/a/b?c=d"));
	cr_assert_eq(memcmp(req + r.rest_at, "/a/b?c=d", r.rest_len), 0);
	cr_assert_eq(memcmp(req + r.version_at, "HTTP/1.1\r\n", 10), 0);
	cr_assert_eq(memcmp(req + r.host_at, "example.com", r.host_len), 0);
	cr_assert_eq(r.head_len, strlen(req));
	prefixes_wait(req);

	cr_assert_eq(parse("POST http://10.0.0.1:8080 HTTP/1.0\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_assert_str_eq(r.host, "10.0.0.1");
	cr_assert_eq(r.port, 8080);
	cr_assert_eq(r.rest_len, 0, "no path: origin form is /");
	cr_assert_eq(parse("GET http://h?q HTTP/1.1\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_assert_eq(r.rest_len, 2);
	cr_assert_eq(parse("GET http://[::1]:81/x HTTP/1.1\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_assert_str_eq(r.host, "::1");
	cr_assert_eq(r.port, 81);
}

Test(httpreq, other_schemes_and_origin_form_are_not_served)
{
	struct dsh_httpreq r;
	cr_expect_eq(parse("GET https://example.com/ HTTP/1.1\r\n\r\n", &r), DSH_HTTPREQ_UNSUPPORTED);
	cr_expect_eq(parse("GET ftp://example.com/ HTTP/1.1\r\n\r\n", &r), DSH_HTTPREQ_UNSUPPORTED);
	cr_expect_eq(parse("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", &r), DSH_HTTPREQ_UNSUPPORTED);
	/* Decided on the request line: the headers need not arrive. */
	cr_expect_eq(parse("GET https://example.com/ HTTP/1.1\r\n", &r), DSH_HTTPREQ_UNSUPPORTED);
}

Test(httpreq, malformed_heads_are_bad)
{
	static const char *const bad[] = {
		"CONNECT example.com HTTP/1.1\r\n\r\n",           /* no port */
		"CONNECT example.com:0 HTTP/1.1\r\n\r\n",
		"CONNECT example.com:65536 HTTP/1.1\r\n\r\n",
		"CONNECT example.com:+443 HTTP/1.1\r\n\r\n",
		"CONNECT example.com: HTTP/1.1\r\n\r\n",
		"CONNECT :443 HTTP/1.1\r\n\r\n",
		"CONNECT [::1 HTTP/1.1\r\n\r\n",
		"CONNECT [fe80::1%eth0]:443 HTTP/1.1\r\n\r\n",    /* zone id */
		"CONNECT [nothex]:443 HTTP/1.1\r\n\r\n",
		"CONNECT ::1:443 HTTP/1.1\r\n\r\n",               /* IPv6 without brackets */
		"CONNECT exa%6dple.com:443 HTTP/1.1\r\n\r\n",    /* percent-encoding */
		"GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",
		"GET http:///x HTTP/1.1\r\n\r\n",                 /* empty host */
		"GET http://example.com/#frag HTTP/1.1\r\n\r\n",
		"GET  http://example.com/ HTTP/1.1\r\n\r\n",      /* two spaces */
		"GET http://example.com/ HTTP/1.1 \r\n\r\n",
		"GET http://example.com/ HTTP/2.0\r\n\r\n",
		"GET http://example.com/\r\n\r\n",                /* HTTP/0.9 */
		"G\"T http://example.com/ HTTP/1.1\r\n\r\n",
		"\r\nGET http://example.com/ HTTP/1.1\r\n\r\n",   /* leading empty line */
		"GET http://example.com/ HTTP/1.1\nHost: x\n\n",  /* bare LF */
		"GET http://example.com/ HTTP/1.1\r\nHost: a\rb\r\n\r\n", /* bare CR */
		"GET http://example.com/ HTTP/1.1\r\nX: a\x01\r\n\r\n",
		"GET http://example.com/ HTTP/1.1\r\n folded\r\n\r\n",
		"GET http://example.com/ HTTP/1.1\r\nHost: a\r\nHOST: b\r\n\r\n",
		"GET http://example.com/ HTTP/1.1\r\nHost:  \r\n\r\n",
		"GET http://example.com/ HTTP/1.1\r\nBad Name: x\r\n\r\n",
		"GET http://example.com/ HTTP/1.1\r\nno colon\r\n\r\n",
		"GET http://example.com/ HTTP/1.1\r\n: empty name\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dsh_httpreq r;
		cr_expect_eq(parse(bad[i], &r), DSH_HTTPREQ_BAD, "%s", bad[i]);
	}
	struct dsh_httpreq r;
	cr_expect_eq(dsh_httpreq_parse((const unsigned char *)"GET http://a/\0 HTTP/1.1\r\n\r\n", 27, &r),
		     DSH_HTTPREQ_BAD, "NUL in the target");
	char longname[300];
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "CONNECT ", 8);
	strcpy(longname + 8 + 254, ":443 HTTP/1.1\r\n\r\n");
	cr_expect_eq(parse(longname, &r), DSH_HTTPREQ_BAD, "a host of 254 bytes");
	longname[8 + 253] = ':';
	strcpy(longname + 8 + 253, ":443 HTTP/1.1\r\n\r\n");
	cr_expect_eq(parse(longname, &r), DSH_HTTPREQ_FOUND, "a host of 253 bytes");
	cr_expect_eq(strlen(r.host), 253);
}

Test(httpreq, a_head_past_the_bound_is_too_large)
{
	size_t n = DSH_HTTPREQ_MAX_HEAD + 100;
	char *b = malloc(n + 1);
	cr_assert_not_null(b);
	strcpy(b, "GET http://example.com/ HTTP/1.1\r\nX: ");
	size_t at = strlen(b);
	memset(b + at, 'x', n - at);
	b[n] = '\0';
	struct dsh_httpreq r;
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, n, &r), DSH_HTTPREQ_TOO_LARGE);
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, DSH_HTTPREQ_MAX_HEAD, &r), DSH_HTTPREQ_TOO_LARGE);
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, DSH_HTTPREQ_MAX_HEAD - 1, &r), DSH_HTTPREQ_NEED_MORE);
	/* A head ending exactly at the bound fits; one whose last CRLF crosses it does not. */
	memcpy(b + DSH_HTTPREQ_MAX_HEAD - 4, "\r\n\r\n", 4);
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, n, &r), DSH_HTTPREQ_FOUND);
	cr_expect_eq(r.head_len, DSH_HTTPREQ_MAX_HEAD);
	memset(b + DSH_HTTPREQ_MAX_HEAD - 4, 'x', 4);
	memcpy(b + DSH_HTTPREQ_MAX_HEAD - 3, "\r\n\r\n", 4);
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, n, &r), DSH_HTTPREQ_TOO_LARGE);
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, DSH_HTTPREQ_MAX_HEAD, &r), DSH_HTTPREQ_TOO_LARGE);
	free(b);
}
