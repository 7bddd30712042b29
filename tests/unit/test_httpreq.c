/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The HTTP proxy's request head parser (SPEC 12.2): the forms it serves, each refusal by its
 * reason, and that every prefix of a request answers NEED_MORE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "net/httpreq.h"

static enum dsh_httpreq_result parse(const char *s, struct dsh_httpreq *r)
{
	return dsh_httpreq_parse((const unsigned char *)s, strlen(s), r);
}

/* The result and, for a refusal, that its reason names what was wrong. */
static void expect(const char *req, enum dsh_httpreq_result want, const char *why_part)
{
	struct dsh_httpreq r;
	enum dsh_httpreq_result got = parse(req, &r);
	cr_expect_eq(got, want, "'%s': %d, not %d (%s)", req, got, want, r.why ? r.why : "");
	if (why_part)
		cr_expect(r.why && strstr(r.why, why_part), "'%s': '%s', not '%s'", req, r.why ? r.why : "", why_part);
}

static void every_prefix_needs_more(const char *req)
{
	struct dsh_httpreq r;
	for (size_t k = 0; k < strlen(req); k++)
		cr_assert_eq(dsh_httpreq_parse((const unsigned char *)req, k, &r), DSH_HTTPREQ_NEED_MORE, "prefix %zu of '%s'", k, req);
}

Test(httpreq, connect)
{
	const char *req = "CONNECT Registry.NPMJS.org:443 HTTP/1.1\r\nHost: registry.npmjs.org:443\r\n\r\nTLS";
	struct dsh_httpreq r;
	cr_assert_eq(parse(req, &r), DSH_HTTPREQ_FOUND, "%s", r.why);
	cr_expect_eq(r.kind, DSH_HTTPREQ_CONNECT);
	cr_expect_str_eq(r.host, "registry.npmjs.org");
	cr_expect_eq(r.port, 443);
	cr_expect_eq(r.method_len, 7);
	cr_expect_eq(r.path_len, 0);
	cr_expect_eq(r.minor, 1);
	cr_expect_eq(r.line_len, strlen("CONNECT Registry.NPMJS.org:443 HTTP/1.1\r\n"));
	cr_expect_eq(r.head_len, strlen(req) - 3);
	cr_expect(r.has_host_header);
	cr_expect_str_eq(r.host_header, "registry.npmjs.org");
	cr_expect_eq(r.host_header_port, 443);
	cr_expect(dsh_httpreq_host_agrees(&r));
	cr_expect_null(r.why);
}

Test(httpreq, connect_ipv6_and_ipv4)
{
	struct dsh_httpreq r;
	cr_assert_eq(parse("CONNECT [2001:DB8:0::1]:8443 HTTP/1.1\r\n\r\n", &r), DSH_HTTPREQ_FOUND, "%s", r.why);
	cr_expect_str_eq(r.host, "2001:db8::1");
	cr_expect_eq(r.port, 8443);
	cr_expect_not(r.has_host_header);
	cr_assert_eq(parse("CONNECT 192.0.2.7:22 HTTP/1.0\r\n\r\n", &r), DSH_HTTPREQ_FOUND, "%s", r.why);
	cr_expect_str_eq(r.host, "192.0.2.7");
	cr_expect_eq(r.port, 22);
	cr_expect_eq(r.minor, 0);
}

Test(httpreq, forward_rewrites_to_origin_form)
{
	const char *req = "GET http://Example.ORG:8080/a/b?c=d HTTP/1.1\r\nHost: example.org:8080\r\nAccept: */*\r\n\r\n";
	struct dsh_httpreq r;
	cr_assert_eq(parse(req, &r), DSH_HTTPREQ_FOUND, "%s", r.why);
	cr_expect_eq(r.kind, DSH_HTTPREQ_FORWARD);
	cr_expect_str_eq(r.host, "example.org");
	cr_expect_eq(r.port, 8080);
	char line[128];
	snprintf(line, sizeof(line), "%.*s %.*s %.8s", (int)r.method_len, req, (int)r.path_len, req + r.path_off,
		 req + r.version_off);
	cr_expect_str_eq(line, "GET /a/b?c=d HTTP/1.1");
	cr_expect_eq(strncmp(req + r.line_len, "Host:", 5), 0);
	cr_expect_eq(r.head_len, strlen(req));
	cr_expect(dsh_httpreq_host_agrees(&r));
}

Test(httpreq, forward_default_port_and_empty_path)
{
	struct dsh_httpreq r;
	const char *req = "HEAD HTTP://a.example HTTP/1.1\r\nhost:\ta.example \r\n\r\n";
	cr_assert_eq(parse(req, &r), DSH_HTTPREQ_FOUND, "%s", r.why);
	cr_expect_eq(r.port, 80);
	cr_expect_eq(r.path_len, 0);
	cr_expect_eq(r.host_header_port, 0);
	cr_expect(dsh_httpreq_host_agrees(&r));
	req = "GET http://a.example?q HTTP/1.1\r\n\r\n";
	cr_assert_eq(parse(req, &r), DSH_HTTPREQ_FOUND, "%s", r.why);
	cr_expect_eq(r.path_len, 2);
	cr_expect_eq(req[r.path_off], '?');
}

Test(httpreq, host_agreement)
{
	struct dsh_httpreq r;
	cr_assert_eq(parse("GET http://a.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_expect_not(dsh_httpreq_host_agrees(&r));
	cr_assert_eq(parse("GET http://a.example/ HTTP/1.1\r\nHost: a.example:81\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_expect_not(dsh_httpreq_host_agrees(&r));
	cr_assert_eq(parse("GET http://a.example/ HTTP/1.1\r\nHost: a.example:80\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_expect(dsh_httpreq_host_agrees(&r));
	cr_assert_eq(parse("GET http://a.example/ HTTP/1.0\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_expect_not(dsh_httpreq_host_agrees(&r), "no Host header: nothing to hold the request to");
	cr_assert_eq(parse("GET http://[::1]/ HTTP/1.1\r\nHost: [0:0::1]\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_expect(dsh_httpreq_host_agrees(&r), "two spellings of one IPv6 address");
}

Test(httpreq, every_prefix_needs_more)
{
	every_prefix_needs_more("CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\nUser-Agent: x\r\n\r\n");
	every_prefix_needs_more("POST http://[::1]:81/p HTTP/1.1\r\nHost: [::1]:81\r\nContent-Length: 0\r\n\r\n");
}

Test(httpreq, refused_schemes_and_forms)
{
	expect("GET https://a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_UNSUPPORTED, "CONNECT");
	expect("GET ftp://a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_UNSUPPORTED, "scheme");
	expect("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", DSH_HTTPREQ_UNSUPPORTED, "not to a proxy");
	expect("OPTIONS * HTTP/1.1\r\n\r\n", DSH_HTTPREQ_UNSUPPORTED, "not to a proxy");
	expect("GET http://a.example/ HTTP/2.0\r\n\r\n", DSH_HTTPREQ_UNSUPPORTED, "1.x");
	expect("GET a.example:80 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_UNSUPPORTED, "scheme");
	expect("GET 1http://a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "no URI");
	expect("GET http:a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "without an authority");
	expect("GET http://a.example/#f HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "fragment");
	expect("connect a.example:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_UNSUPPORTED, "scheme");
}

Test(httpreq, refused_authorities)
{
	expect("CONNECT user:pw@a.example:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "userinfo");
	expect("GET http://user@a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "userinfo");
	expect("CONNECT :443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "empty host");
	expect("GET http:///x HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "empty host");
	expect("CONNECT a.example HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "without a port");
	expect("CONNECT a.example: HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "port");
	expect("CONNECT a.example:0 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "port");
	expect("CONNECT a.example:65536 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "port");
	expect("CONNECT a.example:000443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "port");
	expect("CONNECT a.example:+443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "port");
	expect("CONNECT a.example:443:1 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "port");
	expect("GET http://a.example:/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "port");
	expect("CONNECT [::1:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "without ']'");
	expect("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "after the IPv6");
	expect("CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "IPv6");
	expect("CONNECT [a.example]:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "IPv6");
	expect("CONNECT ::1:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "empty host");
	expect("CONNECT a..example:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "empty label");
	expect("CONNECT .a.example:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "empty label");
	expect("CONNECT a%2eexample:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "byte no host name has");
	expect("CONNECT 127.1:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "dotted IPv4");
	expect("CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "dotted IPv4");
	expect("CONNECT 1.2.3.256:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "dotted IPv4");
	expect("CONNECT a.example.:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_FOUND, NULL);
	expect("CONNECT 1a.example:443 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_FOUND, NULL);
}

Test(httpreq, host_length)
{
	char req[600], label[64];
	memset(label, 'a', 63);
	label[63] = '\0';
	/* 4 labels of 63 and one of 1: 4 * 64 + 1 = 257 > 253; 3 * 64 + 61 = 253 fits exactly. */
	snprintf(req, sizeof(req), "CONNECT %s.%s.%s.%.61s:443 HTTP/1.1\r\n\r\n", label, label, label, label);
	struct dsh_httpreq r;
	cr_assert_eq(parse(req, &r), DSH_HTTPREQ_FOUND, "%s", r.why);
	cr_expect_eq(strlen(r.host), 253);
	snprintf(req, sizeof(req), "CONNECT %s.%s.%s.%.62s:443 HTTP/1.1\r\n\r\n", label, label, label, label);
	expect(req, DSH_HTTPREQ_BAD, "253");
	snprintf(req, sizeof(req), "CONNECT %sa.example:443 HTTP/1.1\r\n\r\n", label);
	expect(req, DSH_HTTPREQ_BAD, "63");
}

Test(httpreq, refused_request_lines)
{
	expect("\r\nGET http://a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "empty line before");
	expect("GET  http://a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "empty request-target");
	expect(" GET http://a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "method");
	expect("GET http://a.example/ HTTP/1.1 \r\n\r\n", DSH_HTTPREQ_BAD, "HTTP version");
	expect("GET http://a.example/\r\n\r\n", DSH_HTTPREQ_BAD, "HTTP version");
	expect("GET http://a.example/ HTTP/1.10\r\n\r\n", DSH_HTTPREQ_BAD, "HTTP version");
	expect("GET http://a.example/ http/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "HTTP version");
	expect("G(T http://a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "token");
	expect("GET\thttp://a.example/ HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "control");
	expect("GET http://a.example/\x7f HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "control");
	expect("GET http://a.example/\xc3\xa9 HTTP/1.1\r\n\r\n", DSH_HTTPREQ_BAD, "non-ASCII");
	expect("\x16\x03\x01\x02", DSH_HTTPREQ_BAD, "control");
	struct dsh_httpreq r;
	cr_expect_eq(dsh_httpreq_parse((const unsigned char *)"GET http://a\0.example/ HTTP/1.1\r\n\r\n", 35, &r),
		     DSH_HTTPREQ_BAD, "a NUL in the request line");
}

Test(httpreq, line_ends_and_headers)
{
	expect("GET http://a.example/ HTTP/1.1\n\n", DSH_HTTPREQ_BAD, "bare LF");
	expect("GET http://a.example/ HTTP/1.1\r\nHost: a.example\n\r\n", DSH_HTTPREQ_BAD, "bare LF");
	expect("GET http://a.example/ HTTP/1.1\rX", DSH_HTTPREQ_BAD, "bare CR");
	expect("GET http://a.example/ HTTP/1.1\r\nX: a\rb\r\n\r\n", DSH_HTTPREQ_BAD, "bare CR");
	expect("GET http://a.example/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", DSH_HTTPREQ_BAD, "obs-fold");
	expect("GET http://a.example/ HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n", DSH_HTTPREQ_BAD, "obs-fold");
	expect("GET http://a.example/ HTTP/1.1\r\nHost : a.example\r\n\r\n", DSH_HTTPREQ_BAD, "space before");
	expect("GET http://a.example/ HTTP/1.1\r\nno colon\r\n\r\n", DSH_HTTPREQ_BAD, "without a name");
	expect("GET http://a.example/ HTTP/1.1\r\n: x\r\n\r\n", DSH_HTTPREQ_BAD, "without a name");
	expect("GET http://a.example/ HTTP/1.1\r\nX: a\x01\r\n\r\n", DSH_HTTPREQ_BAD, "control byte in a header");
	expect("GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nHOST: a.example\r\n\r\n", DSH_HTTPREQ_BAD,
	       "two Host");
	expect("GET http://a.example/ HTTP/1.1\r\nHost: \r\n\r\n", DSH_HTTPREQ_BAD, "empty host");
	expect("GET http://a.example/ HTTP/1.1\r\nHost: u@a.example\r\n\r\n", DSH_HTTPREQ_BAD, "userinfo");
	expect("GET http://a.example/ HTTP/1.1\r\nHost: a.example:99999\r\n\r\n", DSH_HTTPREQ_BAD, "port");
	/* Values may carry obs-text and tabs; only Host's is read. */
	expect("GET http://a.example/ HTTP/1.1\r\nX-Y: caf\xc3\xa9\tz\r\n\r\n", DSH_HTTPREQ_FOUND, NULL);
	/* A refusal is given as soon as its byte is there, without the rest of the head. */
	expect("GET http://a.example/ HTTP/1.1\r\nX: a\r\n b", DSH_HTTPREQ_BAD, "obs-fold");
	expect("GET http://a.example/ HTTP/1.1\r\n\x01", DSH_HTTPREQ_BAD, "control byte");
}

/* Builds a head of exactly n bytes: a request line, one padding header, the final CRLF. */
static char *head_of(size_t n)
{
	const char *line = "GET http://a.example/ HTTP/1.1\r\nX: ";
	char *b = malloc(n + 1);
	cr_assert_not_null(b);
	size_t l = strlen(line);
	cr_assert_gt(n, l + 4);
	memcpy(b, line, l);
	memset(b + l, 'a', n - l - 4);
	memcpy(b + n - 4, "\r\n\r\n", 4);
	b[n] = '\0';
	return b;
}

Test(httpreq, oversized_heads)
{
	struct dsh_httpreq r;
	char *b = head_of(DSH_HTTPREQ_MAX_HEAD);
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, DSH_HTTPREQ_MAX_HEAD, &r), DSH_HTTPREQ_FOUND, "%s", r.why);
	cr_expect_eq(r.head_len, DSH_HTTPREQ_MAX_HEAD);
	free(b);
	b = head_of(DSH_HTTPREQ_MAX_HEAD + 1);
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, DSH_HTTPREQ_MAX_HEAD, &r), DSH_HTTPREQ_NEED_MORE);
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, DSH_HTTPREQ_MAX_HEAD + 1, &r), DSH_HTTPREQ_TOO_LARGE);
	free(b);
	/* A head without an end: the bound holds however much more arrives. */
	size_t big = 3 * DSH_HTTPREQ_MAX_HEAD;
	b = malloc(big);
	cr_assert_not_null(b);
	memset(b, 'a', big);
	memcpy(b, "GET http://a.example/ HTTP/1.1\r\nX: ", 35);
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, big, &r), DSH_HTTPREQ_TOO_LARGE);
	cr_expect_str_eq(r.why, "a request head over 16384 bytes");
	/* An error within the bound is still that error, not the bound. */
	b[100] = '\x01';
	cr_expect_eq(dsh_httpreq_parse((unsigned char *)b, big, &r), DSH_HTTPREQ_BAD);
	free(b);
}

/* Every byte flipped in turn: any verdict, but within the buffer (ASan), and a verdict given on a
 * prefix is the verdict on the whole. */
Test(httpreq, corrupted_bytes_stay_in_bounds)
{
	const char *req = "GET http://a.example:81/x?y HTTP/1.1\r\nHost: a.example:81\r\nA: b\r\n\r\n";
	size_t n = strlen(req);
	for (size_t i = 0; i < n; i++) {
		unsigned char *copy = malloc(n);
		cr_assert_not_null(copy);
		memcpy(copy, req, n);
		copy[i] ^= 0xff;
		struct dsh_httpreq whole, part;
		enum dsh_httpreq_result w = dsh_httpreq_parse(copy, n, &whole);
		for (size_t k = 0; k < n; k++) {
			enum dsh_httpreq_result p = dsh_httpreq_parse(copy, k, &part);
			cr_assert(p == DSH_HTTPREQ_NEED_MORE || (p == w && part.why == whole.why), "byte %zu, prefix %zu", i, k);
		}
		free(copy);
	}
}

/* The relay's reading of a request as the upstream server sees it (net/connect.c). */
static enum dsh_httpreq_result at_server(const char *s, struct dsh_httpreq *r)
{
	return dsh_httpreq_parse_at_server((const unsigned char *)s, strlen(s), r);
}

Test(httpreq, at_server_reads_the_origin_form_and_its_host_header)
{
	const char *req = "GET /a?b HTTP/1.1\r\nHost: Allowed.Test:8080\r\nAccept: */*\r\n\r\nbody";
	struct dsh_httpreq r;
	cr_assert_eq(at_server(req, &r), DSH_HTTPREQ_FOUND, "%s", r.why);
	cr_expect_eq(r.kind, DSH_HTTPREQ_FORWARD);
	cr_expect_str_eq(r.host, "", "the origin form names no host");
	cr_expect(r.has_host_header);
	cr_expect_str_eq(r.host_header, "allowed.test");
	cr_expect_eq(r.host_header_port, 8080);
	cr_expect_eq(r.path_len, 4);
	cr_expect_eq(memcmp(req + r.path_off, "/a?b", 4), 0);
	cr_expect_eq(r.head_len, strlen(req) - 4);
	cr_assert_eq(at_server("OPTIONS * HTTP/1.1\r\nHost: x.test\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_expect_eq(dsh_httpreq_parse((const unsigned char *)req, strlen(req), &r), DSH_HTTPREQ_UNSUPPORTED,
		     "the proxy's own reading still refuses the origin form");
	for (size_t k = 0; k < strlen(req) - 4; k++)
		cr_assert_eq(dsh_httpreq_parse_at_server((const unsigned char *)req, k, &r), DSH_HTTPREQ_NEED_MORE, "prefix %zu", k);
}

Test(httpreq, at_server_keeps_the_other_forms_and_the_strict_rules)
{
	struct dsh_httpreq r;
	cr_assert_eq(at_server("GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_expect_str_eq(r.host, "a.test", "an absolute URI's host, which a server prefers to Host");
	cr_expect_str_eq(r.host_header, "b.test");
	cr_expect_eq(at_server("GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n", &r), DSH_HTTPREQ_BAD);
	cr_expect_eq(at_server("GET / HTTP/1.1\nHost: a.test\r\n\r\n", &r), DSH_HTTPREQ_BAD);
	cr_expect_eq(at_server("GET / HTTP/2.0\r\nHost: a.test\r\n\r\n", &r), DSH_HTTPREQ_UNSUPPORTED);
	cr_assert_eq(at_server("GET / HTTP/1.0\r\n\r\n", &r), DSH_HTTPREQ_FOUND);
	cr_expect_not(r.has_host_header);
}
