/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "net/httpreq.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#define MAX_METHOD 32

/* RFC 9110 5.6.2's tchar: what a method or a header name may hold. */
static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool all_digits(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return n > 0;
}

/* "1".."65535", no sign, no leading zeros beyond five digits' room. */
static bool parse_port(const unsigned char *p, size_t n, uint16_t *ret)
{
	if (n > 5 || !all_digits(p, n))
		return false;
	unsigned long v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (p[i] - '0');
	if (v == 0 || v > 65535)
		return false;
	*ret = (uint16_t)v;
	return true;
}

/*
 * host[:port] of an authority: a bracketed IPv6 literal or a name (letters, digits, '-', '.',
 * '_'; an IPv4 literal is one too).  Percent-encoding, a zone id and userinfo are refused: the
 * proxy decides on the name it is given, and an encoding a resolver reads otherwise would not be
 * that name.  port_required: CONNECT's authority form has no default.
 */
static bool parse_authority(const unsigned char *p, size_t n, bool port_required, struct dsh_httpreq *r)
{
	size_t host_end, colon;
	const unsigned char *h = p;
	size_t hn;
	if (n && p[0] == '[') {
		const unsigned char *close = memchr(p, ']', n);
		if (!close)
			return false;
		h = p + 1;
		hn = (size_t)(close - h);
		host_end = (size_t)(close - p) + 1;
		if (hn == 0 || hn >= 46)
			return false;
		for (size_t i = 0; i < hn; i++)
			if (!strchr("0123456789abcdefABCDEF:.", h[i]) || !h[i])
				return false;
		char text[46];
		unsigned char bin[16];
		memcpy(text, h, hn);
		text[hn] = '\0';
		if (inet_pton(AF_INET6, text, bin) != 1)
			return false;
	} else {
		const unsigned char *c = memchr(p, ':', n);
		host_end = c ? (size_t)(c - p) : n;
		hn = host_end;
		if (hn == 0 || hn > 253)
			return false;
		for (size_t i = 0; i < hn; i++) {
			unsigned char ch = h[i];
			if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			      ch == '-' || ch == '.' || ch == '_'))
				return false;
		}
	}
	for (size_t i = 0; i < hn; i++)
		r->host[i] = (char)(h[i] >= 'A' && h[i] <= 'Z' ? h[i] - 'A' + 'a' : h[i]);
	r->host[hn] = '\0';
	colon = host_end;
	if (colon == n) {
		r->port = 80;
		return !port_required;
	}
	if (p[colon] != ':')
		return false;
	return parse_port(p + colon + 1, n - colon - 1, &r->port);
}

/* METHOD SP TARGET SP HTTP/1.x, the line without its CRLF. */
static enum dsh_httpreq_result request_line(const unsigned char *b, size_t n, struct dsh_httpreq *r)
{
	const unsigned char *sp1 = memchr(b, ' ', n);
	if (!sp1 || sp1 == b || (size_t)(sp1 - b) > MAX_METHOD)
		return DSH_HTTPREQ_BAD;
	size_t m = (size_t)(sp1 - b);
	for (size_t i = 0; i < m; i++)
		if (!tchar(b[i]))
			return DSH_HTTPREQ_BAD;
	const unsigned char *t = sp1 + 1;
	const unsigned char *sp2 = memchr(t, ' ', n - (size_t)(t - b));
	if (!sp2 || sp2 == t)
		return DSH_HTTPREQ_BAD;
	size_t tn = (size_t)(sp2 - t);
	const unsigned char *v = sp2 + 1;
	size_t vn = n - (size_t)(v - b);
	if (vn != 8 || (memcmp(v, "HTTP/1.1", 8) != 0 && memcmp(v, "HTTP/1.0", 8) != 0))
		return DSH_HTTPREQ_BAD;
	for (size_t i = 0; i < tn; i++)
		if (t[i] <= 0x20 || t[i] >= 0x7f || t[i] == '#')
			return DSH_HTTPREQ_BAD;
	r->method_len = m;
	r->version_at = (size_t)(v - b);
	if (m == 7 && memcmp(b, "CONNECT", 7) == 0) {
		r->kind = DSH_HTTPREQ_CONNECT;
		r->rest_at = r->version_at;
		r->rest_len = 0;
		return parse_authority(t, tn, true, r) ? DSH_HTTPREQ_FOUND : DSH_HTTPREQ_BAD;
	}
	r->kind = DSH_HTTPREQ_FORWARD;
	if (tn < 7 || strncasecmp((const char *)t, "http://", 7) != 0) {
		/* Another scheme, or origin form ("/x"): not a request for this proxy to forward. */
		const unsigned char *colon = memchr(t, ':', tn);
		bool scheme = colon && colon > t && colon + 2 < t + tn && colon[1] == '/' && colon[2] == '/';
		return scheme || t[0] == '/' ? DSH_HTTPREQ_UNSUPPORTED : DSH_HTTPREQ_BAD;
	}
	const unsigned char *a = t + 7;
	size_t an = 0;
	while (a + an < t + tn && a[an] != '/' && a[an] != '?')
		an++;
	if (memchr(a, '@', an))
		return DSH_HTTPREQ_BAD;
	r->rest_at = (size_t)(a + an - b);
	r->rest_len = tn - 7 - an;
	return parse_authority(a, an, false, r) ? DSH_HTTPREQ_FOUND : DSH_HTTPREQ_BAD;
}

/* One header line without its CRLF: NAME ":" OWS VALUE OWS.  The Host header is recorded. */
static enum dsh_httpreq_result header_line(const unsigned char *buf, size_t at, size_t n, struct dsh_httpreq *r)
{
	const unsigned char *l = buf + at;
	if (l[0] == ' ' || l[0] == '\t') /* obs-fold (RFC 9112 5.2) */
		return DSH_HTTPREQ_BAD;
	const unsigned char *colon = memchr(l, ':', n);
	if (!colon || colon == l)
		return DSH_HTTPREQ_BAD;
	size_t nn = (size_t)(colon - l);
	for (size_t i = 0; i < nn; i++)
		if (!tchar(l[i]))
			return DSH_HTTPREQ_BAD;
	if (nn != 4 || strncasecmp((const char *)l, "host", 4) != 0)
		return DSH_HTTPREQ_FOUND;
	if (r->host_len) /* two Host headers: which one a server reads is its choice, not ours */
		return DSH_HTTPREQ_BAD;
	size_t s = nn + 1, e = n;
	while (s < e && (l[s] == ' ' || l[s] == '\t'))
		s++;
	while (e > s && (l[e - 1] == ' ' || l[e - 1] == '\t'))
		e--;
	if (s == e)
		return DSH_HTTPREQ_BAD;
	r->host_at = at + s;
	r->host_len = e - s;
	return DSH_HTTPREQ_FOUND;
}

enum dsh_httpreq_result dsh_httpreq_parse(const unsigned char *buf, size_t len, struct dsh_httpreq *ret)
{
	memset(ret, 0, sizeof(*ret));
	size_t line = 0;
	for (size_t i = 0;; i++) {
		if (i >= DSH_HTTPREQ_MAX_HEAD)
			return DSH_HTTPREQ_TOO_LARGE;
		if (i >= len)
			return DSH_HTTPREQ_NEED_MORE;
		unsigned char c = buf[i];
		if (c == '\n' || c == 0 || c == 0x7f || (c < 0x20 && c != '\t' && c != '\r'))
			return DSH_HTTPREQ_BAD;
		if (c != '\r')
			continue;
		/* A CRLF reaching past the bound is too large whatever follows, so a prefix ending
		 * at the bound answers as the whole does. */
		if (i + 1 >= DSH_HTTPREQ_MAX_HEAD)
			return DSH_HTTPREQ_TOO_LARGE;
		if (i + 1 >= len)
			return DSH_HTTPREQ_NEED_MORE;
		if (buf[i + 1] != '\n')
			return DSH_HTTPREQ_BAD;
		enum dsh_httpreq_result r;
		if (line == 0) {
			if (i == 0)
				return DSH_HTTPREQ_BAD;
			r = request_line(buf, i, ret);
			ret->line_len = i + 2;
		} else if (i == line) {
			ret->head_len = i + 2;
			return DSH_HTTPREQ_FOUND;
		} else {
			r = header_line(buf, line, i - line, ret);
		}
		if (r != DSH_HTTPREQ_FOUND)
			return r;
		line = i + 2;
		i++;
	}
}
