/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dsh patch files `doctor` reads (policy/doctor.c): the input is layers separated by a line
 * "---8<---"; each is applied in order, then the findings are made.
 */
#include "dshbox/doctor.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *buf = fuzz_cstr(data, size);
	struct dsh_doctor d;
	struct dsh_error *err = NULL;
	if (dsh_doctor_init(&d, "sandbox-local", &err) < 0)
		abort();
	char *p = buf;
	for (int layer = 0; p; layer++) {
		char *end = strstr(p, "---8<---\n");
		size_t len = end ? (size_t)(end - p) : size - (size_t)(p - buf);
		if (dsh_doctor_add_layer(&d, p, len, layer ? "profile.yml" : "bundle.yml", &err) < 0) {
			FUZZ_CHECK_ERROR(err);
			dsh_error_free(err);
			err = NULL;
		}
		p = end ? end + 9 : NULL;
	}
	char **f = dsh_doctor_findings(&d);
	for (char **q = f; q && *q; q++)
		free(*q);
	free(f);
	dsh_doctor_clear(&d);
	free(buf);
	return 0;
}
