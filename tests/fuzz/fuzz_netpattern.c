/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The network patterns (policy/netpattern.c, SPEC 12.1) and the verdicts they give.  The first
 * byte: bit 0 sets `ask`.  The rest is lines (at most MAX_LINES): "-PATTERN" denies, "+PATTERN" or
 * a bare PATTERN allows.  Every line is parsed as a pattern, normalised as a name and asked about.
 * Invariants:
 *  - a refusal is one error line; normalising is idempotent and does not change a verdict;
 *  - a parsed pattern is in its documented form, and its canonical spelling parses back to it;
 *  - alone, it allows what it names (a NAME its name, a BELOW a name below it and not the name
 *    itself, an ADDR its block) on its ports and nothing on another port; a name never matches an
 *    address pattern and an address never a name pattern;
 *  - with the same pattern also denied, none of those is allowed (deny beats allow);
 *  - the whole policy's verdict is what the patterns give one by one: DENY when a deny pattern
 *    matches, else ALLOW when an allow pattern does, else ASK or DENY as `ask` says (never ASK for
 *    an address); a deep copy gives the same verdicts; DNS's port-less verdict
 *    (dsh_netsvc_decide_any_port) is ALLOW exactly when a port it tries is allowed.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "net/state.h"
#include "policy/netpolicy.h"
#include "tests/fuzz/fuzz.h"

#define MAX_LINES 8
#define MAX_NAMES (MAX_LINES * 4)
#define MAX_PORTS (4 + 2 * MAX_LINES)

#define FAIL(...)                                                                                \
	do {                                                                                     \
		fprintf(stderr, "fuzz_netpattern: " __VA_ARGS__);                               \
		fputc('\n', stderr);                                                             \
		abort();                                                                         \
	} while (0)

struct addr {
	int family;
	unsigned char a[16];
};

/*
 * Whether x, an address of a pattern's block, gets want.  A v6 block reaching into
 * ::ffff:0:0/96 (::/80, say) holds v4 addresses spelled as v6, and those are decided as the v4
 * address they reach (SPEC 12.1), not by the v6 block: for them, the verdict must be their v4
 * address's.
 */
static bool block_addr_gets(const struct dsh_net_policy *np, const struct addr *x, uint16_t port, enum dsh_net_verdict want)
{
	if (x->family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)x->a))
		return dsh_net_decide_addr(np, AF_INET6, x->a, port) == dsh_net_decide_addr(np, AF_INET, x->a + 12, port);
	return dsh_net_decide_addr(np, x->family, x->a, port) == want;
}

struct queries {
	char *names[MAX_NAMES];
	size_t n_names;
	struct addr addrs[MAX_LINES * 2];
	size_t n_addrs;
	uint16_t ports[MAX_PORTS];
	size_t n_ports;
};

static void add_name(struct queries *q, const char *s)
{
	if (q->n_names < MAX_NAMES && (q->names[q->n_names] = strdup(s)))
		q->n_names++;
}

static void add_port(struct queries *q, uint16_t port)
{
	for (size_t i = 0; i < q->n_ports; i++)
		if (q->ports[i] == port)
			return;
	if (q->n_ports < MAX_PORTS)
		q->ports[q->n_ports++] = port;
}

static const char *v(enum dsh_net_verdict x)
{
	return dsh_net_verdict_to_string(x);
}

/* A policy of one pattern, allowed, and also denied when deny: no copy, nothing to free. */
static struct dsh_net_policy one(const struct dsh_net_pattern *p, bool deny)
{
	struct dsh_net_policy np;
	dsh_net_policy_init(&np);
	np.allow = (struct dsh_net_pattern *)p;
	np.n_allow = 1;
	if (deny) {
		np.deny = (struct dsh_net_pattern *)p;
		np.n_deny = 1;
	}
	return np;
}

static void check_normalize(const char *s)
{
	char *n = NULL, *again = NULL;
	struct dsh_error *err = NULL;
	if (dsh_net_name_normalize(s, &n, &err) < 0) {
		FUZZ_CHECK_ERROR(err);
		dsh_error_free(err);
		return;
	}
	if (dsh_net_name_normalize(n, &again, &err) < 0)
		FAIL("'%s' normalises to '%s', which does not normalise: %s", s, n, err ? err->msg : "");
	if (strcmp(n, again) != 0)
		FAIL("'%s' normalises to '%s', and that to '%s'", s, n, again);
	free(again);
	free(n);
}

/* The spelling a pattern is written in by a careful user; a name gets a trailing dot, so that one
 * spelling an address ("1.2.3.4." is a name) stays a name. */
static void canonical(const struct dsh_net_pattern *p, char *out, size_t size)
{
	char a[INET6_ADDRSTRLEN], port[8] = "";
	if (p->port)
		snprintf(port, sizeof(port), ":%u", (unsigned)p->port);
	switch (p->kind) {
	case DSH_NET_NAME:
	case DSH_NET_BELOW:
		snprintf(out, size, "%s%s.%s", p->kind == DSH_NET_BELOW ? "*." : "", p->name, port);
		return;
	case DSH_NET_ADDR:
		inet_ntop(p->family, p->addr, a, sizeof(a));
		if (p->family == AF_INET6 && p->port)
			snprintf(out, size, "[%s/%u]%s", a, p->prefix, port);
		else
			snprintf(out, size, "%s/%u%s", a, p->prefix, port);
		return;
	}
	abort();
}

static bool same(const struct dsh_net_pattern *a, const struct dsh_net_pattern *b)
{
	if (a->kind != b->kind || a->port != b->port)
		return false;
	if (a->kind == DSH_NET_ADDR)
		return a->family == b->family && a->prefix == b->prefix && memcmp(a->addr, b->addr, 16) == 0;
	return strcmp(a->name, b->name) == 0;
}

static void check_form(const struct dsh_net_pattern *p)
{
	if (!p->text || !p->origin || strcmp(p->origin, "fuzz:1") != 0)
		FAIL("'%s': no text or origin", p->text ? p->text : "(null)");
	switch (p->kind) {
	case DSH_NET_NAME:
	case DSH_NET_BELOW: {
		char *n = NULL;
		if (!p->name || dsh_net_name_normalize(p->name, &n, NULL) < 0 || strcmp(n, p->name) != 0)
			FAIL("'%s': its name '%s' is not normal", p->text, p->name ? p->name : "(null)");
		free(n);
		break;
	}
	case DSH_NET_ADDR: {
		unsigned max = p->family == AF_INET ? 32 : 128;
		if (p->name || (p->family != AF_INET && p->family != AF_INET6) || p->prefix > max)
			FAIL("'%s': a malformed address pattern", p->text);
		for (unsigned bit = p->prefix; bit < 128; bit++)
			if (p->addr[bit / 8] & (0x80u >> (bit % 8)))
				FAIL("'%s': host bits left set after /%u", p->text, p->prefix);
		break;
	}
	default:
		FAIL("'%s': kind %d", p->text, (int)p->kind);
	}
	char c[600];
	canonical(p, c, sizeof(c));
	struct dsh_net_pattern back;
	struct dsh_error *err = NULL;
	if (dsh_net_pattern_parse(c, "fuzz:1", &back, &err) < 0)
		FAIL("'%s' spelled '%s' does not parse: %s", p->text, c, err ? err->msg : "");
	if (!same(p, &back))
		FAIL("'%s' spelled '%s' parses to another pattern", p->text, c);
	dsh_net_pattern_clear(&back);
}

/* Alone it allows what it names on its ports, nothing on another; denied too, nothing. */
static void check_alone(const struct dsh_net_pattern *p, struct queries *q)
{
	uint16_t yes[2] = { 80, 443 }, no = 8080;
	size_t n_yes = 2;
	if (p->port) {
		yes[0] = p->port;
		n_yes = 1;
		no = p->port == 1 ? 2 : (uint16_t)(p->port - 1);
	}
	add_port(q, yes[0]);
	add_port(q, no);
	for (int deny = 0; deny < 2; deny++) {
		struct dsh_net_policy np = one(p, deny);
		enum dsh_net_verdict want = deny ? DSH_NET_DENY : DSH_NET_ALLOW;
		char name[300], upper[300];
		unsigned char other[16] = { 192, 0, 2, 1 };
		switch (p->kind) {
		case DSH_NET_NAME:
		case DSH_NET_BELOW:
			if (p->kind == DSH_NET_BELOW) {
				if (strlen(p->name) + 2 > 253)
					break; /* nothing below it is a host name */
				snprintf(name, sizeof(name), "x.%s", p->name);
				if (dsh_net_decide_name(&np, p->name, yes[0]) == DSH_NET_ALLOW)
					FAIL("'%s' allows '%s' itself", p->text, p->name);
			} else {
				snprintf(name, sizeof(name), "%s", p->name);
			}
			snprintf(upper, sizeof(upper), "%s.", name);
			for (char *c = upper; *c; c++)
				*c = (char)toupper((unsigned char)*c);
			for (size_t i = 0; i < n_yes; i++) {
				if (dsh_net_decide_name(&np, name, yes[i]) != want)
					FAIL("'%s'%s: '%s' on %u is not %s", p->text, deny ? " also denied" : "", name, yes[i], v(want));
				if (dsh_net_decide_name(&np, upper, yes[i]) != want)
					FAIL("'%s'%s: '%s' on %u is not %s", p->text, deny ? " also denied" : "", upper, yes[i], v(want));
			}
			if (dsh_net_decide_name(&np, name, no) == DSH_NET_ALLOW)
				FAIL("'%s': '%s' allowed on %u", p->text, name, no);
			if (dsh_net_decide_addr(&np, AF_INET, other, yes[0]) != DSH_NET_DENY)
				FAIL("'%s': a name pattern decides an address", p->text);
			if (!deny)
				add_name(q, name);
			break;
		case DSH_NET_ADDR: {
			struct addr first = { p->family, { 0 } }, last, out;
			memcpy(first.a, p->addr, 16);
			last = first;
			unsigned max = p->family == AF_INET ? 32 : 128;
			for (unsigned bit = p->prefix; bit < max; bit++)
				last.a[bit / 8] |= (unsigned char)(0x80u >> (bit % 8));
			for (size_t i = 0; i < n_yes; i++) {
				if (!block_addr_gets(&np, &first, yes[i], want) || !block_addr_gets(&np, &last, yes[i], want))
					FAIL("'%s'%s: its block on %u is not %s", p->text, deny ? " also denied" : "", yes[i], v(want));
			}
			if (dsh_net_decide_addr(&np, first.family, first.a, no) != DSH_NET_DENY)
				FAIL("'%s': its block allowed on %u", p->text, no);
			if (dsh_net_decide_addr(&np, p->family == AF_INET ? AF_INET6 : AF_INET, first.a, yes[0]) != DSH_NET_DENY)
				FAIL("'%s': an address of the other family allowed", p->text);
			if (p->prefix > 0) {
				out = first;
				out.a[(p->prefix - 1) / 8] ^= (unsigned char)(0x80u >> ((p->prefix - 1) % 8));
				if (dsh_net_decide_addr(&np, out.family, out.a, yes[0]) != DSH_NET_DENY)
					FAIL("'%s': an address outside the block allowed", p->text);
			}
			char a[INET6_ADDRSTRLEN];
			inet_ntop(p->family, p->addr, a, sizeof(a));
			if (dsh_net_decide_name(&np, a, yes[0]) == DSH_NET_ALLOW || dsh_net_decide_name(&np, p->text, yes[0]) == DSH_NET_ALLOW)
				FAIL("'%s': a name matches an address pattern", p->text);
			if (!deny && q->n_addrs + 2 <= sizeof(q->addrs) / sizeof(q->addrs[0])) {
				q->addrs[q->n_addrs++] = first;
				q->addrs[q->n_addrs++] = last;
			}
			break;
		}
		}
	}
}

/* The verdict the patterns give one by one. */
static enum dsh_net_verdict expected(const struct dsh_net_policy *np, const char *name, const struct addr *a, uint16_t port)
{
	bool denied = false, allowed = false;
	for (int deny = 0; deny < 2; deny++) {
		const struct dsh_net_pattern *list = deny ? np->deny : np->allow;
		size_t n = deny ? np->n_deny : np->n_allow;
		for (size_t i = 0; i < n; i++) {
			struct dsh_net_policy o = one(&list[i], false);
			bool hit = name ? dsh_net_decide_name(&o, name, port) == DSH_NET_ALLOW
					: dsh_net_decide_addr(&o, a->family, a->a, port) == DSH_NET_ALLOW;
			if (hit && deny)
				denied = true;
			else if (hit)
				allowed = true;
		}
	}
	if (denied)
		return DSH_NET_DENY;
	if (allowed)
		return DSH_NET_ALLOW;
	return name && np->ask ? DSH_NET_ASK : DSH_NET_DENY;
}

static void check_whole(const struct dsh_net_policy *np, const struct queries *q)
{
	struct dsh_net_policy *copy = NULL;
	if (dsh_net_policy_copy(np, &copy, NULL) < 0)
		abort();
	for (size_t i = 0; i < q->n_names; i++) {
		const char *name = q->names[i];
		char *n = NULL;
		bool normal = dsh_net_name_normalize(name, &n, NULL) == 0;
		bool any = false;
		for (size_t k = 0; k < q->n_ports; k++) {
			uint16_t port = q->ports[k];
			enum dsh_net_verdict got = dsh_net_decide_name(np, name, port);
			enum dsh_net_verdict want = normal ? expected(np, name, NULL, port) : DSH_NET_DENY;
			if (got != want)
				FAIL("'%s' on %u: %s, the patterns one by one say %s", name, port, v(got), v(want));
			if (dsh_net_decide_name(copy, name, port) != got)
				FAIL("'%s' on %u: the copy decides otherwise", name, port);
			if (normal && dsh_net_decide_name(np, n, port) != got)
				FAIL("'%s' and its normal form '%s' decided otherwise on %u", name, n, port);
			bool tried = port == 80 || port == 443;
			for (size_t j = 0; j < np->n_allow; j++)
				tried = tried || np->allow[j].port == port;
			any = any || (tried && got == DSH_NET_ALLOW);
		}
		if ((dsh_netsvc_decide_any_port(np, name) == DSH_NET_ALLOW) != any)
			FAIL("'%s': the port-less verdict disagrees with the ports'", name);
		free(n);
	}
	for (size_t i = 0; i < q->n_addrs; i++)
		for (size_t k = 0; k < q->n_ports; k++) {
			enum dsh_net_verdict got = dsh_net_decide_addr(np, q->addrs[i].family, q->addrs[i].a, q->ports[k]);
			enum dsh_net_verdict want = expected(np, NULL, &q->addrs[i], q->ports[k]);
			if (got != want)
				FAIL("address %zu on %u: %s, the patterns one by one say %s", i, q->ports[k], v(got), v(want));
			if (dsh_net_decide_addr(copy, q->addrs[i].family, q->addrs[i].a, q->ports[k]) != got)
				FAIL("address %zu on %u: the copy decides otherwise", i, q->ports[k]);
		}
	dsh_net_policy_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	struct dsh_net_policy np;
	dsh_net_policy_init(&np);
	np.ask = data[0] & 1;
	struct queries q = { .n_names = 0 };
	add_port(&q, 80);
	add_port(&q, 443);
	add_port(&q, 22);
	char *buf = fuzz_cstr(data + 1, size - 1);
	size_t lines = 0;
	for (char *line = buf, *next; line && lines < MAX_LINES; line = next, lines++) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		bool deny = line[0] == '-';
		if (line[0] == '-' || line[0] == '+')
			line++;
		check_normalize(line);
		add_name(&q, line);
		struct dsh_net_pattern p;
		struct dsh_error *err = NULL;
		if (dsh_net_pattern_parse(line, "fuzz:1", &p, &err) < 0) {
			FUZZ_CHECK_ERROR(err);
			if (strncmp(err->msg, "fuzz:1: network pattern '", 25) != 0)
				FAIL("'%s': the error does not name the pattern: %s", line, err->msg);
			dsh_error_free(err);
			continue;
		}
		check_form(&p);
		check_alone(&p, &q);
		if (dsh_net_policy_add(&np, deny, &p, NULL) < 0)
			abort();
	}
	check_whole(&np, &q);
	for (size_t i = 0; i < q.n_names; i++)
		free(q.names[i]);
	dsh_net_policy_clear(&np);
	free(buf);
	return 0;
}
