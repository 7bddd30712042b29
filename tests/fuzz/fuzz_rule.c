/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rule lines (policy/rule.c) through the whole policy build (dsh_policy_new): the input is access
 * rules, one a line; a policy that loads answers a few verdicts, a refusal is one line.
 */
#include "common/strv.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *buf = fuzz_cstr(data, size);
	char *env[] = { "HOME=/home/u", "X=/x", "EMPTY=", "XDG_CACHE_HOME=/home/u/.cache", NULL };
	struct dsh_config c;
	dsh_config_init(&c);
	c.workspace = strdup("/ws");
	for (char *line = buf, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (dsh_strv_push(&c.access, line) < 0)
			abort();
	}
	struct dsh_policy *p = NULL;
	struct dsh_error *err = NULL;
	if (dsh_policy_new(&c, env, "/", &p, &err) == 0) {
		static const char *const paths[] = { "/ws/a/b.pem", "/x/y", "/home/u/.cache/z", "/ws", "/etc/passwd" };
		struct dsh_verdict v;
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
			dsh_policy_verdict(p, DSH_OP_WRITE, paths[i], &v);
			dsh_policy_verdict(p, DSH_OP_READ, paths[i], &v);
		}
		dsh_policy_free(p);
	} else {
		FUZZ_CHECK_ERROR(err);
	}
	dsh_error_free(err);
	dsh_config_clear(&c);
	free(buf);
	return 0;
}
