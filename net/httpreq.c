/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "net/httpreq.h"

#include <string.h>

struct span {
	const unsigned char *p;
	size_t n;
};

static enum dsh_httpreq_result fail(struct dsh_httpreq *ret, enum dsh_httpreq_result r, const char *why)
{
	ret->why = why;
	return r;
}

static bool tchar(unsigned char c)
{
	unsigned char l = c | 0x20;
	return (c >= '0' && c <= '9') || (l >= 'a' && l <= 'z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool span_is(struct span s, const char *lit)
{
	return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

static bool span_is_nocase(struct span s, const char *lit)
{
	if (s.n != strlen(lit))
		return false;
	for (size_t i = 0; i < s.n; i++)
		if ((s.p[i] >= 'A' && s.p[i] <= 'Z' ? s.p[i] | 0x20 : s.p[i]) != (unsigned char)lit[i])
			return false;
	return true;
}

/* Judged byte by byte as a line arrives, so that what cannot be HTTP (a TLS ClientHello, say) is
 * refused at once rather than after DSH_HTTPREQ_MAX_HEAD bytes. */
static const char *byte_bad(unsigned char c, bool request_line, bool first)
{
	if (request_line)
		return c > 0x20 && c < 0x7f ? NULL : c == ' ' ? NULL : "a control or non-ASCII byte in the request line";
	if (first && (c == ' ' || c == '\t'))
		return "a folded header line (obs-fold)";
	return (c >= 0x20 && c != 0x7f) || c == '\t' ? NULL : "a control byte in a header";
}

static const char *port_parse(struct span s, uint16_t *ret)
{
	unsigned v = 0;
	if (s.n == 0 || s.n > 5)
		return "a port that is not 1 to 65535";
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return "a port that is not 1 to 65535";
		v = v * 10 + (s.p[i] - '0');
	}
	if (v == 0 || v > 65535)
		return "a port that is not 1 to 65535";
	*ret = (uint16_t)v;
	return NULL;
}

/* host [":" port] with no userinfo; *port is 0 when none is given. */
static const char *authority(struct span a, char *host, uint16_t *port)
{
	size_t hend;
	const char *why;
	*port = 0;
	if (memchr(a.p, '@', a.n))
		return "userinfo in the authority";
	if (a.n > 0 && a.p[0] == '[') {
		const unsigned char *close = memchr(a.p, ']', a.n);
		if (!close)
			return "an IPv6 literal without ']'";
		hend = (size_t)(close - a.p) + 1;
		why = dsh_net_host_v6_copy(a.p + 1, hend - 2, host, DSH_NET_HOST_ROOM);
	} else {
		const unsigned char *colon = memchr(a.p, ':', a.n);
		hend = colon ? (size_t)(colon - a.p) : a.n;
		why = dsh_net_host_name_copy(a.p, hend, host, DSH_NET_HOST_ROOM);
	}
	if (why)
		return why;
	if (hend == a.n)
		return NULL;
	if (a.p[hend] != ':')
		return "bytes after the IPv6 literal";
	return port_parse((struct span){ a.p + hend + 1, a.n - hend - 1 }, port);
}

/* The absolute form: scheme "://" authority [path-abempty] ["?" query]. */
static enum dsh_httpreq_result absolute(const unsigned char *buf, struct span t, struct dsh_httpreq *ret)
{
	if ((t.n > 0 && t.p[0] == '/') || span_is(t, "*"))
		return fail(ret, DSH_HTTPREQ_UNSUPPORTED, "a request to a server, not to a proxy (no absolute URI)");
	if (memchr(t.p, '#', t.n))
		return fail(ret, DSH_HTTPREQ_BAD, "a fragment in the request-target");
	size_t i = 0;
	unsigned char l = t.p[0] | 0x20;
	if (!(l >= 'a' && l <= 'z'))
		return fail(ret, DSH_HTTPREQ_BAD, "a request-target that is no URI");
	while (i < t.n && t.p[i] != ':') {
		l = t.p[i] | 0x20;
		if (!((l >= 'a' && l <= 'z') || (t.p[i] >= '0' && t.p[i] <= '9') || strchr("+-.", t.p[i])))
			return fail(ret, DSH_HTTPREQ_BAD, "a request-target that is no URI");
		i++;
	}
	if (i == t.n)
		return fail(ret, DSH_HTTPREQ_BAD, "a request-target that is no URI");
	struct span scheme = { t.p, i };
	if (span_is_nocase(scheme, "https"))
		return fail(ret, DSH_HTTPREQ_UNSUPPORTED, "an https:// URI (a client asks for those by CONNECT)");
	if (!span_is_nocase(scheme, "http"))
		return fail(ret, DSH_HTTPREQ_UNSUPPORTED, "a scheme other than http");
	if (t.n - i < 3 || memcmp(t.p + i, "://", 3) != 0)
		return fail(ret, DSH_HTTPREQ_BAD, "an http URI without an authority");
	struct span a = { t.p + i + 3, 0 };
	while (a.n < t.n - i - 3 && a.p[a.n] != '/' && a.p[a.n] != '?')
		a.n++;
	const char *why = authority(a, ret->host, &ret->port);
	if (why)
		return fail(ret, DSH_HTTPREQ_BAD, why);
	if (ret->port == 0)
		ret->port = 80;
	ret->kind = DSH_HTTPREQ_FORWARD;
	ret->path_off = (size_t)(a.p + a.n - buf);
	ret->path_len = (size_t)(t.p + t.n - (a.p + a.n));
	return DSH_HTTPREQ_FOUND;
}

/* method SP request-target SP HTTP-version, single spaces (RFC 9112 3). */
static enum dsh_httpreq_result request_line(const unsigned char *buf, size_t end, bool at_server, struct dsh_httpreq *ret)
{
	const unsigned char *sp1 = memchr(buf, ' ', end);
	if (end == 0)
		return fail(ret, DSH_HTTPREQ_BAD, "an empty line before the request line");
	if (!sp1 || sp1 == buf)
		return fail(ret, DSH_HTTPREQ_BAD, "a request line without a method and a target");
	struct span method = { buf, (size_t)(sp1 - buf) };
	for (size_t i = 0; i < method.n; i++)
		if (!tchar(method.p[i]))
			return fail(ret, DSH_HTTPREQ_BAD, "a method that is no token");
	struct span t = { sp1 + 1, 0 };
	const unsigned char *sp2 = memchr(t.p, ' ', (size_t)(buf + end - t.p));
	if (!sp2)
		return fail(ret, DSH_HTTPREQ_BAD, "a request line without an HTTP version");
	t.n = (size_t)(sp2 - t.p);
	if (t.n == 0)
		return fail(ret, DSH_HTTPREQ_BAD, "an empty request-target");
	struct span v = { sp2 + 1, (size_t)(buf + end - sp2 - 1) };
	if (v.n != 8 || memcmp(v.p, "HTTP/", 5) != 0 || v.p[6] != '.' || v.p[5] < '0' || v.p[5] > '9' ||
	    v.p[7] < '0' || v.p[7] > '9')
		return fail(ret, DSH_HTTPREQ_BAD, "a request line without an HTTP version");
	if (v.p[5] != '1')
		return fail(ret, DSH_HTTPREQ_UNSUPPORTED, "an HTTP version other than 1.x");
	ret->method_len = method.n;
	ret->version_off = (size_t)(v.p - buf);
	ret->minor = v.p[7] - '0';
	ret->line_len = end + 2;
	if (at_server && !span_is(method, "CONNECT") && ((t.p[0] == '/') || span_is(t, "*"))) {
		/* What a server reads: the host is the Host header's alone. */
		ret->kind = DSH_HTTPREQ_FORWARD;
		ret->path_off = (size_t)(t.p - buf);
		ret->path_len = t.n;
		return DSH_HTTPREQ_FOUND;
	}
	if (!span_is(method, "CONNECT"))
		return absolute(buf, t, ret);
	const char *why = authority(t, ret->host, &ret->port);
	if (!why && ret->port == 0)
		why = "a CONNECT target without a port";
	if (why)
		return fail(ret, DSH_HTTPREQ_BAD, why);
	ret->kind = DSH_HTTPREQ_CONNECT;
	return DSH_HTTPREQ_FOUND;
}

/* field-name ":" OWS field-value OWS; only Host is read. */
static enum dsh_httpreq_result header(struct span l, struct dsh_httpreq *ret)
{
	const unsigned char *colon = memchr(l.p, ':', l.n);
	if (!colon || colon == l.p)
		return fail(ret, DSH_HTTPREQ_BAD, "a header line without a name and ':'");
	struct span name = { l.p, (size_t)(colon - l.p) };
	for (size_t i = 0; i < name.n; i++)
		if (!tchar(name.p[i]))
			return fail(ret, DSH_HTTPREQ_BAD, "a header name that is no token (space before ':'?)");
	if (!span_is_nocase(name, "host"))
		return DSH_HTTPREQ_FOUND;
	if (ret->has_host_header)
		return fail(ret, DSH_HTTPREQ_BAD, "two Host headers");
	struct span v = { colon + 1, (size_t)(l.p + l.n - colon - 1) };
	while (v.n > 0 && (v.p[0] == ' ' || v.p[0] == '\t'))
		v.p++, v.n--;
	while (v.n > 0 && (v.p[v.n - 1] == ' ' || v.p[v.n - 1] == '\t'))
		v.n--;
	const char *why = authority(v, ret->host_header, &ret->host_header_port);
	if (why)
		return fail(ret, DSH_HTTPREQ_BAD, why);
	ret->has_host_header = true;
	return DSH_HTTPREQ_FOUND;
}

static enum dsh_httpreq_result parse(const unsigned char *buf, size_t len, bool at_server, struct dsh_httpreq *ret)
{
	/* Only the first DSH_HTTPREQ_MAX_HEAD bytes are ever looked at: whatever follows cannot
	 * change the verdict on them, which keeps every prefix's answer the whole input's. */
	size_t limit = len < DSH_HTTPREQ_MAX_HEAD ? len : DSH_HTTPREQ_MAX_HEAD;
	memset(ret, 0, sizeof(*ret));
	for (size_t pos = 0, line = 0;; line++) {
		size_t e = pos;
		const char *why = NULL;
		while (e < limit && buf[e] != '\r' && buf[e] != '\n' && !(why = byte_bad(buf[e], line == 0, e == pos)))
			e++;
		if (why)
			return fail(ret, DSH_HTTPREQ_BAD, why);
		if (e < limit && buf[e] == '\n')
			return fail(ret, DSH_HTTPREQ_BAD, "a bare LF (a line ends in CRLF)");
		if (e + 1 >= limit) {
			if (len > limit)
				return fail(ret, DSH_HTTPREQ_TOO_LARGE, "a request head over 16384 bytes");
			return DSH_HTTPREQ_NEED_MORE;
		}
		if (buf[e + 1] != '\n')
			return fail(ret, DSH_HTTPREQ_BAD, "a bare CR (a line ends in CRLF)");
		enum dsh_httpreq_result r;
		if (line == 0) {
			r = request_line(buf, e, at_server, ret);
		} else if (e == pos) {
			ret->head_len = e + 2;
			return DSH_HTTPREQ_FOUND;
		} else {
			r = header((struct span){ buf + pos, e - pos }, ret);
		}
		if (r != DSH_HTTPREQ_FOUND)
			return r;
		pos = e + 2;
	}
}

enum dsh_httpreq_result dsh_httpreq_parse(const unsigned char *buf, size_t len, struct dsh_httpreq *ret)
{
	return parse(buf, len, false, ret);
}

enum dsh_httpreq_result dsh_httpreq_parse_at_server(const unsigned char *buf, size_t len, struct dsh_httpreq *ret)
{
	return parse(buf, len, true, ret);
}

bool dsh_httpreq_host_agrees(const struct dsh_httpreq *r)
{
	if (r->kind == DSH_HTTPREQ_CONNECT)
		return true;
	return r->has_host_header && strcmp(r->host_header, r->host) == 0 &&
	       (r->host_header_port ? r->host_header_port : 80) == r->port;
}
