/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef DSH_TESTS_FUZZ_H
#define DSH_TESTS_FUZZ_H
/*
 * What the libFuzzer harnesses of tests/fuzz/ share (make fuzz, docs/HACKING.md).  libFuzzer's
 * bytes are not NUL-terminated: the parsers taking C strings get a terminated copy, so that an
 * overread is the parser's and not the harness's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A refusal is one error line: abort (a finding) on none, or on a message of several lines. */
#define FUZZ_CHECK_ERROR(err)                                                                    \
	do {                                                                                     \
		if (!(err) || !(err)->msg || strchr((err)->msg, '\n')) {                          \
			fprintf(stderr, "fuzz: bad error: %s\n", (err) && (err)->msg ? (err)->msg : "(none)"); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

#endif
