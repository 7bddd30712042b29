/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPEC 12.1: the network patterns and the verdicts they give. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <sys/socket.h>

#include "policy/netpolicy.h"

static void add(struct dsh_net_policy *np, bool deny, const char *text)
{
	struct dsh_net_pattern p;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_net_pattern_parse(text, "test", &p, &e), 0, "%s: %s", text, e ? e->msg : "");
	cr_assert_eq(dsh_net_policy_add(np, deny, &p, NULL), 0);
}

Test(netpattern, names_ports_and_precedence)
{
	struct dsh_net_policy np;
	dsh_net_policy_init(&np);
	add(&np, false, "Example.ORG.");
	add(&np, false, "*.npmjs.org");
	add(&np, false, "git.example.org:22");
	add(&np, false, "bücher.example");
	add(&np, true, "bad.npmjs.org");
	cr_expect_eq(dsh_net_decide_name(&np, "example.org", 443), DSH_NET_ALLOW);
	cr_expect_eq(dsh_net_decide_name(&np, "EXAMPLE.org.", 80), DSH_NET_ALLOW);
	cr_expect_eq(dsh_net_decide_name(&np, "example.org", 22), DSH_NET_DENY, "no port given: 80 and 443 only");
	cr_expect_eq(dsh_net_decide_name(&np, "www.example.org", 443), DSH_NET_DENY, "a name is that name only");
	cr_expect_eq(dsh_net_decide_name(&np, "registry.npmjs.org", 443), DSH_NET_ALLOW);
	cr_expect_eq(dsh_net_decide_name(&np, "npmjs.org", 443), DSH_NET_DENY, "*.name is not the name itself");
	cr_expect_eq(dsh_net_decide_name(&np, "evilnpmjs.org", 443), DSH_NET_DENY);
	cr_expect_eq(dsh_net_decide_name(&np, "bad.npmjs.org", 443), DSH_NET_DENY, "deny beats allow");
	cr_expect_eq(dsh_net_decide_name(&np, "git.example.org", 22), DSH_NET_ALLOW);
	cr_expect_eq(dsh_net_decide_name(&np, "git.example.org", 443), DSH_NET_DENY);
	cr_expect_eq(dsh_net_decide_name(&np, "xn--bcher-kva.example", 443), DSH_NET_ALLOW, "IDNA: one spelling");
	cr_expect_eq(dsh_net_decide_name(&np, "BÜCHER.example", 443), DSH_NET_ALLOW);
	cr_expect_eq(dsh_net_decide_name(&np, "a..b", 443), DSH_NET_DENY);
	unsigned char a[4];
	inet_pton(AF_INET, "93.184.216.34", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET, a, 443), DSH_NET_DENY, "an address only when a pattern spells it");
	np.ask = true;
	cr_expect_eq(dsh_net_decide_name(&np, "other.example", 443), DSH_NET_ASK);
	cr_expect_eq(dsh_net_decide_name(&np, "bad.npmjs.org", 443), DSH_NET_DENY);
	dsh_net_policy_clear(&np);
}

Test(netpattern, addresses_only_when_spelled)
{
	struct dsh_net_policy np;
	dsh_net_policy_init(&np);
	add(&np, false, "10.0.0.0/8");
	add(&np, false, "[::1]:8080");
	add(&np, true, "10.9.0.0/16");
	unsigned char a[16];
	inet_pton(AF_INET, "10.1.2.3", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET, a, 443), DSH_NET_ALLOW);
	inet_pton(AF_INET, "10.9.2.3", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET, a, 443), DSH_NET_DENY);
	inet_pton(AF_INET6, "::1", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET6, a, 8080), DSH_NET_ALLOW);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET6, a, 443), DSH_NET_DENY);
	cr_expect_eq(dsh_net_decide_name(&np, "10.1.2.3", 443), DSH_NET_DENY, "a name never matches an address pattern");
	dsh_net_policy_clear(&np);
}

/* ::ffff:a.b.c.d reaches a.b.c.d: it is decided as that address, so a denied block stays denied
   and an allowed one is reached either way. */
Test(netpattern, v4_mapped_is_the_v4_address)
{
	struct dsh_net_policy np;
	dsh_net_policy_init(&np);
	add(&np, false, "10.0.0.0/8");
	add(&np, true, "10.9.0.0/16");
	add(&np, false, "::ffff:10.9.1.1");
	unsigned char a[16];
	inet_pton(AF_INET6, "::ffff:10.9.2.3", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET6, a, 443), DSH_NET_DENY, "the v4 deny holds for its v6 spelling");
	inet_pton(AF_INET6, "::ffff:10.1.2.3", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET6, a, 443), DSH_NET_ALLOW);
	inet_pton(AF_INET6, "::ffff:10.9.1.1", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET6, a, 443), DSH_NET_DENY, "a mapped pattern is its v4 address too");
	dsh_net_policy_clear(&np);
}

/* Found by fuzz_netpattern (tests/fuzz/regress/fuzz_netpattern/v6-block-reaching-v4-mapped): a v6
 * block that reaches into ::ffff:0:0/96 does not allow the v4 addresses spelled there; only a v4
 * pattern does. */
Test(netpattern, a_v6_block_reaching_mapped_space_allows_no_v4_address)
{
	struct dsh_net_policy np;
	dsh_net_policy_init(&np);
	add(&np, false, "::1/80");
	unsigned char a[16];
	inet_pton(AF_INET6, "::ffff:255.255.255.255", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET6, a, 80), DSH_NET_DENY, "a v4 address through a v6 block");
	inet_pton(AF_INET6, "::fffe:1:2", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET6, a, 80), DSH_NET_ALLOW, "a v6 address of the block");
	add(&np, false, "255.255.255.255");
	inet_pton(AF_INET6, "::ffff:255.255.255.255", a);
	cr_expect_eq(dsh_net_decide_addr(&np, AF_INET6, a, 80), DSH_NET_ALLOW, "allowed by its v4 pattern");
	dsh_net_policy_clear(&np);
}

Test(netpattern, bad_patterns_name_their_origin)
{
	const char *bad[] = { "", "foo*.org", "*.", "*", "a.*.org", "x.org:0", "x.org:70000", "x.org:", "10.0.0.0/33",
			      "[::1", "[10.0.0.1]", "-a.org", "a_b c", NULL };
	for (size_t i = 0; bad[i]; i++) {
		struct dsh_net_pattern p;
		struct dsh_error *e = NULL;
		cr_expect_lt(dsh_net_pattern_parse(bad[i], "f.yml:3", &p, &e), 0, "'%s' accepted", bad[i]);
		cr_expect(e && strncmp(e->msg, "f.yml:3: network pattern", 24) == 0, "'%s': %s", bad[i], e ? e->msg : "no error");
		dsh_error_free(e);
	}
}
