/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Large policies cost what they hold (issue 24: 200,000 rules took 35 s to check).  No clock here:
 * the guard counts what the load built.  The rules' index is a hash of the literal spellings and
 * of their prefixes; sized for every prefix of every rule it held mostly copies of the workspace's
 * own prefixes (hundreds of megabytes for 200,000 rules, each touched at random).  It must hold
 * each distinct key once and be at most four times their number.  The times themselves are
 * measured by `make bench` (tools/bench.d/policy-scale.sh).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "policy/policy.h"
#include "tests/lib/harness.h"

#define N_RULES 20000

Test(policy_scale, the_rule_index_holds_each_key_once_and_is_sized_by_them)
{
	_cleanup_free_ char *ws = dsh_test_mkdtemp();
	/* One access entry of N lines, as a YAML block gives it: a third absolute, each in its own
	   absent directory; a third relative in the workspace; a third spelled through a symlink to the
	   workspace, each in its own absent directory (two spellings: the one as written brings new
	   keys after its own). */
	_cleanup_free_ char *link = NULL;
	cr_assert(asprintf(&link, "%s-link", ws) > 0);
	cr_assert_eq(symlink(ws, link), 0);
	size_t cap = (size_t)N_RULES * (64 + strlen(link)) + 1, len = 0;
	char *block = malloc(cap);
	cr_assert(block);
	for (unsigned i = 0; i < N_RULES; i++)
		len += i % 3 == 0 ? (size_t)snprintf(block + len, cap - len, "-- /nonexistent-dsh/d%u/f\n", i)
		     : i % 3 == 1 ? (size_t)snprintf(block + len, cap - len, "r- src/f%u\n", i)
				  : (size_t)snprintf(block + len, cap - len, "r- %s/e%u/f\n", link, i);
	struct dsh_config c;
	dsh_config_init(&c);
	c.workspace = strdup(ws);
	c.protect_defaults = false;
	c.access = calloc(2, sizeof(char *));
	cr_assert(c.workspace && c.access);
	c.access[0] = block;
	char *env[] = { "HOME=/nonexistent", NULL };
	struct dsh_policy *p = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_policy_new(&c, env, ws, &p, &err), 0, "%s", err ? err->msg : "");
	dsh_config_clear(&c);
	cr_assert_eq(p->n_rules, N_RULES);

	/* The distinct keys: the workspace's prefixes, src and the symlink; per absolute rule its path,
	   its directory (and their parent once); per relative rule its path; per rule through the link
	   its two spellings and their two directories. */
	size_t depth = 0;
	for (const char *s = ws; *s; s++)
		depth += *s == '/';
	size_t per3 = N_RULES / 3;
	size_t keys = depth + 1 + 1 + (2 * (per3 + 1) + 1) + (per3 + 1) + 4 * per3;
	cr_expect_eq(p->index.n_slots, keys, "the index holds %zu keys, %zu are distinct", p->index.n_slots, keys);
	cr_expect_leq(p->index.mask + 1, 4 * p->index.n_slots, "%zu slots for %zu keys", p->index.mask + 1,
		      p->index.n_slots);

	/* Every rule still decides what lies beneath its path as written: the table grows while rules are added, and a slot
	   taken before a growth would be written where the table no longer is. */
	struct dsh_verdict v;
	size_t lost = 0;
	for (size_t i = 0; i < p->n_rules; i++) {
		char path[4096]; /* beneath the rule: decided by its spelling's key alone */
		snprintf(path, sizeof(path), "%s/x", p->rules[i].resolved);
		cr_assert_eq(dsh_policy_decide(p, p->rules[i].kind == DSH_RULE_DENY ? DSH_OP_READ : DSH_OP_WRITE, path,
					       NULL, &v), 0);
		if (!v.allow && v.rule == &p->rules[i])
			continue;
		if (lost++ < 5)
			cr_log_error("rule %zu \"%s\" does not decide %s", i, p->rules[i].text, path);
	}
	cr_expect_eq(lost, 0, "%zu of %d rules do not decide a path beneath theirs", lost, N_RULES);
	/* And a path no rule names, beside them. */
	_cleanup_free_ char *src0 = NULL, *src_none = NULL;
	cr_assert(asprintf(&src0, "%s/src/f1", ws) > 0 && asprintf(&src_none, "%s/src/g", ws) > 0);
	cr_assert_eq(dsh_policy_decide(p, DSH_OP_WRITE, src0, NULL, &v), 0);
	cr_expect_not(v.allow, "r- src/f1 let a write through");
	cr_assert_eq(dsh_policy_decide(p, DSH_OP_READ, "/nonexistent-dsh/d19998/f/x", NULL, &v), 0);
	cr_expect_not(v.allow, "-- /nonexistent-dsh/d19998/f let a read of its child through");
	cr_assert_eq(dsh_policy_decide(p, DSH_OP_WRITE, src_none, NULL, &v), 0);
	cr_expect(v.allow, "a path no rule names was denied");
	dsh_policy_free(p);
	unlink(link);
	dsh_test_rmtree(ws);
}
