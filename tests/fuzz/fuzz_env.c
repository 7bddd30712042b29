/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * {{ env.NAME }} expansion (policy/expand.c): the first byte chooses escaping (as for r-/-- rules)
 * and the rest is the template.
 */
#include "policy/rule.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	bool escape = data[0] & 1;
	char *s = fuzz_cstr(data + 1, size - 1);
	char *env[] = { "HOME=/home/u", "X=/x*[?]", "EMPTY=", "A_B=\\{{", "LONG=/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL };
	char *out = NULL;
	struct dsh_error *err = NULL;
	if (dsh_expand_env(s, env, escape, &out, &err) == 0) {
		if (!out)
			abort();
	} else {
		FUZZ_CHECK_ERROR(err);
	}
	free(out);
	dsh_error_free(err);
	free(s);
	return 0;
}
