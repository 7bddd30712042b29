/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `serve`'s JSON request lines (fence/serve.c): parsed and keyed, never answered, since an answer
 * carries out the file operation the line asks for.  The policy is built once.
 */
#include "common/strv.h"
#include "fence/serve.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

static struct dsh_policy *policy;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!policy) {
		struct dsh_config c;
		dsh_config_init(&c);
		c.workspace = strdup("/ws");
		dsh_strv_push(&c.access, "-- **/*.pem");
		char *env[] = { "HOME=/home/u", NULL };
		struct dsh_error *err = NULL;
		if (dsh_policy_new(&c, env, "/", &policy, &err) < 0)
			abort();
		dsh_config_clear(&c);
	}
	if (size > 65536)
		return 0;
	struct dsh_serve_request *r = NULL;
	struct dsh_error *err = NULL;
	if (dsh_serve_parse(policy, (const char *)data, size, &r, &err) == 0) {
		const char *key = dsh_serve_request_key(r);
		if (key && key[0] != '/')
			abort(); /* the key is an absolute path */
		dsh_serve_request_free(r);
	}
	dsh_error_free(err);
	return 0;
}
