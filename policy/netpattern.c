/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <ctype.h>
#include <errno.h>
#include <idn2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cleanup.h"
#include "policy/netpolicy.h"

const char *dsh_net_verdict_to_string(enum dsh_net_verdict v)
{
	switch (v) {
	case DSH_NET_DENY:
		return "deny";
	case DSH_NET_ALLOW:
		return "allow";
	case DSH_NET_ASK:
		return "ask";
	}
	return "?";
}

/* RFC 1123 labels after IDNA: letters, digits, '-' inside, at most 63 each, 253 in all.  '_' is
 * kept: service names (_acme-challenge) are looked up as names too. */
static bool host_name_ok(const char *s)
{
	size_t n = strlen(s), label = 0;
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = s[i];
		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63 || s[i - 1] == '-' || s[i - label] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)c) && c != '-' && c != '_')
			return false;
		label++;
	}
	return true;
}

int dsh_net_name_normalize(const char *name, char **ret, struct dsh_error **err)
{
	size_t n = strlen(name);
	_cleanup_free_ char *s = strndup(name, n && name[n - 1] == '.' ? n - 1 : n);
	if (!s)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	bool ascii = true;
	for (char *c = s; *c; c++) {
		if ((unsigned char)*c >= 0x80)
			ascii = false;
		else
			*c = (char)tolower((unsigned char)*c);
	}
	if (!ascii) {
		char *out = NULL;
		int r = idn2_to_ascii_8z(s, &out, IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
		if (r != IDN2_OK)
			return dsh_err(err, DSH_ERR_USAGE, EINVAL, "'%s' is no host name (IDNA: %s)", name, idn2_strerror(r));
		free(s);
		s = out;
		for (char *c = s; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	}
	if (!host_name_ok(s))
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "'%s' is no host name", name);
	*ret = TAKE_PTR(s);
	return 0;
}

static int bad(struct dsh_error **err, const char *origin, const char *text, const char *why)
{
	return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "%s: network pattern '%s': %s", origin, text, why);
}

/* ":PORT" at the end of s, cut off; 0 when there is none. */
static int cut_port(char *s, const char *origin, const char *text, uint16_t *ret, struct dsh_error **err)
{
	*ret = 0;
	char *colon = strrchr(s, ':');
	if (!colon)
		return 0;
	char *end;
	errno = 0;
	unsigned long v = strtoul(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end || errno || v == 0 || v > 65535 || !isdigit((unsigned char)colon[1]))
		return bad(err, origin, text, "the port is not a number from 1 to 65535");
	*ret = (uint16_t)v;
	*colon = '\0';
	return 0;
}

/* ::ffff:a.b.c.d is a.b.c.d on the wire: one spelling, so a pattern holds for both and a deny
   cannot be passed by the other.  True when a was such an address, now the v4 one. */
static bool unmap_v4(int *family, unsigned char a[16])
{
	if (*family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED((struct in6_addr *)a))
		return false;
	memmove(a, a + 12, 4);
	memset(a + 4, 0, 12);
	*family = AF_INET;
	return true;
}

/* "a.b.c.d", "a.b.c.d/N", "v6", "v6/N" into p; 1 when s is an address, 0 when it is not one. */
static int parse_addr(char *s, struct dsh_net_pattern *p, const char *origin, const char *text, struct dsh_error **err)
{
	char *slash = strchr(s, '/');
	if (slash)
		*slash = '\0';
	unsigned char a[16] = { 0 };
	int family = 0;
	if (inet_pton(AF_INET, s, a) == 1)
		family = AF_INET;
	else if (inet_pton(AF_INET6, s, a) == 1)
		family = AF_INET6;
	if (!family) {
		if (slash)
			return bad(err, origin, text, "a CIDR block needs an IP address before '/'");
		return 0;
	}
	unsigned max = family == AF_INET ? 32 : 128, prefix = max;
	if (slash) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(slash + 1, &end, 10);
		if (!isdigit((unsigned char)slash[1]) || *end || errno || v > max)
			return bad(err, origin, text, family == AF_INET ? "the prefix length is not 0 to 32" : "the prefix length is not 0 to 128");
		prefix = (unsigned)v;
	}
	if (prefix >= 96 && unmap_v4(&family, a)) {
		prefix -= 96;
		max = 32;
	}
	for (unsigned bit = prefix; bit < max; bit++)
		a[bit / 8] &= (unsigned char)~(0x80u >> (bit % 8));
	p->kind = DSH_NET_ADDR;
	p->family = family;
	p->prefix = prefix;
	memcpy(p->addr, a, sizeof(a));
	return 1;
}

int dsh_net_pattern_parse(const char *text, const char *origin, struct dsh_net_pattern *ret, struct dsh_error **err)
{
	while (isspace((unsigned char)*text))
		text++;
	size_t n = strlen(text);
	while (n && isspace((unsigned char)text[n - 1]))
		n--;
	struct dsh_net_pattern p = { 0 };
	_cleanup_free_ char *t = strndup(text, n);
	p.text = strndup(text, n);
	p.origin = strdup(origin);
	if (!t || !p.text || !p.origin) {
		dsh_net_pattern_clear(&p);
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	int r = 0;
	if (n == 0) {
		r = bad(err, origin, p.text, "empty");
		goto fail;
	}
	char *s = t;
	if (s[0] == '[') {
		/* "[v6]" or "[v6/N]", with a port after it when one is wanted. */
		char *close = strchr(s, ']');
		if (!close) {
			r = bad(err, origin, p.text, "'[' without ']'");
			goto fail;
		}
		*close = '\0';
		if (close[1] == ':') {
			if ((r = cut_port(close + 1, origin, p.text, &p.port, err)) < 0)
				goto fail;
		} else if (close[1]) {
			r = bad(err, origin, p.text, "only ':PORT' may follow ']'");
			goto fail;
		}
		r = parse_addr(s + 1, &p, origin, p.text, err);
		if (r == 0 || (r > 0 && p.family != AF_INET6))
			r = bad(err, origin, p.text, "'[...]' holds an IPv6 address");
		if (r < 0)
			goto fail;
		*ret = p;
		return 0;
	}
	/* A bare IPv6 address has colons of its own and takes no port: "[v6]:PORT" says one. */
	if (strchr(s, ':') == strrchr(s, ':') && (r = cut_port(s, origin, p.text, &p.port, err)) < 0)
		goto fail;
	if ((r = parse_addr(s, &p, origin, p.text, err)) != 0) {
		if (r < 0)
			goto fail;
		*ret = p;
		return 0;
	}
	if (strchr(s, ':')) {
		r = bad(err, origin, p.text, "not a name, an address or 'name:PORT'");
		goto fail;
	}
	if (s[0] == '*') {
		if (s[1] != '.' || !s[2]) {
			r = bad(err, origin, p.text, "'*' is allowed only as a whole first label ('*.example.org')");
			goto fail;
		}
		p.kind = DSH_NET_BELOW;
		s += 2;
	} else {
		p.kind = DSH_NET_NAME;
	}
	if (strchr(s, '*')) {
		r = bad(err, origin, p.text, "'*' is allowed only as a whole first label ('*.example.org')");
		goto fail;
	}
	struct dsh_error *why = NULL;
	if (dsh_net_name_normalize(s, &p.name, &why) < 0) {
		r = bad(err, origin, p.text, why ? why->msg : "not a host name");
		dsh_error_free(why);
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	dsh_net_pattern_clear(&p);
	return r;
}

static bool port_ok(const struct dsh_net_pattern *p, uint16_t port)
{
	return p->port ? p->port == port : port == 80 || port == 443;
}

static bool name_matches(const struct dsh_net_pattern *p, const char *name, uint16_t port)
{
	if (!port_ok(p, port))
		return false;
	switch (p->kind) {
	case DSH_NET_NAME:
		return strcmp(p->name, name) == 0;
	case DSH_NET_BELOW: {
		size_t n = strlen(name), k = strlen(p->name);
		return n > k + 1 && name[n - k - 1] == '.' && strcmp(name + n - k, p->name) == 0;
	}
	case DSH_NET_ADDR:
		return false;
	}
	return false;
}

static bool addr_matches(const struct dsh_net_pattern *p, int family, const unsigned char *a, uint16_t port)
{
	if (p->kind != DSH_NET_ADDR || p->family != family || !port_ok(p, port))
		return false;
	for (unsigned bit = 0; bit < p->prefix; bit++) {
		unsigned m = 0x80u >> (bit % 8);
		if ((a[bit / 8] & m) != (p->addr[bit / 8] & m))
			return false;
	}
	return true;
}

static enum dsh_net_verdict undecided(const struct dsh_net_policy *np)
{
	return np->ask ? DSH_NET_ASK : DSH_NET_DENY;
}

enum dsh_net_verdict dsh_net_decide_name(const struct dsh_net_policy *np, const char *name, uint16_t port)
{
	_cleanup_free_ char *n = NULL;
	struct dsh_error *e = NULL;
	if (dsh_net_name_normalize(name, &n, &e) < 0) {
		dsh_error_free(e);
		return DSH_NET_DENY;
	}
	for (size_t i = 0; i < np->n_deny; i++)
		if (name_matches(&np->deny[i], n, port))
			return DSH_NET_DENY;
	for (size_t i = 0; i < np->n_allow; i++)
		if (name_matches(&np->allow[i], n, port))
			return DSH_NET_ALLOW;
	return undecided(np);
}

enum dsh_net_verdict dsh_net_decide_addr(const struct dsh_net_policy *np, int family, const void *addr, uint16_t port)
{
	unsigned char a[16] = { 0 };
	memcpy(a, addr, family == AF_INET ? 4 : 16);
	(void)unmap_v4(&family, a);
	for (size_t i = 0; i < np->n_deny; i++)
		if (addr_matches(&np->deny[i], family, a, port))
			return DSH_NET_DENY;
	for (size_t i = 0; i < np->n_allow; i++)
		if (addr_matches(&np->allow[i], family, a, port))
			return DSH_NET_ALLOW;
	/* A number is never asked about: the host decides names (SPEC 12.4). */
	return DSH_NET_DENY;
}
