/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A short fuzz smoke of every policy parser, run in CI (and under ASan+UBSan by check-asan):
 * random and mutated rules, globs and YAML must give a clean verdict or a clean error, never a
 * crash, a leak or an overread.
 */
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/glob.h"
#include "policy/policy.h"
#include "tests/lib/harness.h"

static unsigned long long s = 0x2545f4914f6cdd1dull;
static unsigned rnd(unsigned n)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (unsigned)(s % n);
}

static const char *const seeds[] = {
	"rw {{ env.HOME }}/.cache", "-- **/*.pem",      "r- src/[!.]*.c", "-- app/\\[id\\]/page.tsx",
	"-- {{env.X}}}/y",          "r- /a/b/../../c", "-- [abc",       "rw /opt/x",
};

static void mutate(char *buf, size_t cap)
{
	size_t len = strlen(buf);
	int n = 1 + (int)rnd(4);
	static const char alphabet[] = "*?[]!{}\\/. -rw\t~ae\x01\xff";
	for (int i = 0; i < n; i++) {
		size_t at = len ? rnd((unsigned)len + 1) : 0;
		switch (rnd(3)) {
		case 0:
			if (len + 1 < cap) {
				memmove(buf + at + 1, buf + at, len - at + 1);
				buf[at] = alphabet[rnd(sizeof(alphabet) - 1)];
				len++;
			}
			break;
		case 1:
			if (at < len) {
				memmove(buf + at, buf + at + 1, len - at);
				len--;
			}
			break;
		default:
			if (at < len)
				buf[at] = alphabet[rnd(sizeof(alphabet) - 1)];
			break;
		}
	}
}

Test(fuzz_smoke, rules_and_verdicts)
{
	char *env[] = { "HOME=/home/u", "X=/x", NULL };
	for (int i = 0; i < 20000; i++) {
		char buf[128];
		strcpy(buf, seeds[rnd(sizeof(seeds) / sizeof(seeds[0]))]);
		mutate(buf, sizeof(buf));
		struct dsh_config c;
		dsh_config_init(&c);
		c.workspace = strdup("/ws");
		dsh_strv_push(&c.access, buf);
		struct dsh_policy *p = NULL;
		struct dsh_error *err = NULL;
		if (dsh_policy_new(&c, env, "/", &p, &err) == 0) {
			struct dsh_verdict v;
			dsh_policy_verdict(p, DSH_OP_WRITE, "/ws/a/b.pem", &v);
			dsh_policy_verdict(p, DSH_OP_READ, "/x/y", &v);
			dsh_policy_free(p);
		} else {
			cr_assert_not_null(err);
			cr_assert_not_null(err->msg);
			cr_assert_null(strchr(err->msg, '\n'), "error messages are one line: %s", err->msg);
		}
		dsh_error_free(err);
		dsh_config_clear(&c);
	}
}

Test(fuzz_smoke, yaml_configuration)
{
	static const char *const docs[] = {
		"mode: read-only\naccess:\n  - \"-- x\"\n", "access: |\n  rw /a\n  -- b\n", "network: off\nmaxMasks: 3\n",
		"runnerCommand: [a]\nrunnerFailureSignatures: [b]\n", "{mode: workspace-write, access: []}\n",
	};
	for (int i = 0; i < 5000; i++) {
		char buf[256];
		strcpy(buf, docs[rnd(sizeof(docs) / sizeof(docs[0]))]);
		mutate(buf, sizeof(buf));
		struct dsh_config c;
		dsh_config_init(&c);
		struct dsh_error *err = NULL;
		int r = dsh_config_load_string(&c, buf, strlen(buf), "fuzz.yml", &err);
		if (r < 0)
			cr_assert(err && err->msg);
		dsh_error_free(err);
		dsh_config_clear(&c);
	}
}
