/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ClientHello reader (net/sni.c) on whatever the command sends first.  Every parse gets a heap
 * copy of exactly the bytes it may read, so that ASan sees a read past len.  Invariants:
 *  - a found name is NUL-terminated within the room and has a host name's shape: 1 to 253
 *    printable ASCII bytes, no empty label (no leading, doubled or trailing dot; RFC 6066 3);
 *  - the relay reads in pieces: a prefix answers NEED_MORE or what the whole input answers (with the
 *    same name), since a verdict once given must not change as more bytes arrive;
 *  - a name that fits is found in a room of exactly its size, and refused in one a byte smaller.
 */
#include <stdbool.h>

#include "net/sni.h"
#include "tests/fuzz/fuzz.h"

static enum dsh_sni_result parse(const uint8_t *data, size_t len, char *name, size_t name_size)
{
	unsigned char *copy = malloc(len ? len : 1);
	if (!copy)
		abort();
	memcpy(copy, data, len);
	enum dsh_sni_result r = dsh_sni_parse(copy, len, name, name_size);
	free(copy);
	return r;
}

static void check_name(const char *name, size_t name_size)
{
	size_t n = strnlen(name, name_size);
	if (n == name_size) {
		fprintf(stderr, "fuzz_sni: the name is not NUL-terminated within %zu bytes\n", name_size);
		abort();
	}
	bool shape = n > 0 && n <= 253 && name[0] != '.' && name[n - 1] != '.' && !strstr(name, "..");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] <= 0x20 || (unsigned char)name[i] >= 0x7f)
			shape = false;
	if (!shape) {
		fprintf(stderr, "fuzz_sni: found a name of no host name's shape: '%.*s' (%zu bytes)\n", (int)n, name, n);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[256], again[256];
	memset(name, 0x55, sizeof(name)); /* no NUL but the parser's */
	enum dsh_sni_result whole = parse(data, size, name, sizeof(name));
	if (whole == DSH_SNI_FOUND)
		check_name(name, sizeof(name));

	const size_t cuts[] = { size / 2, size > 0 ? size - 1 : 0, size > 5 ? 5 : 0 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		memset(again, 0x55, sizeof(again));
		enum dsh_sni_result r = parse(data, cuts[i], again, sizeof(again));
		if (r == DSH_SNI_NEED_MORE)
			continue;
		if (r != whole || (r == DSH_SNI_FOUND && strcmp(name, again) != 0)) {
			fprintf(stderr, "fuzz_sni: %zu of %zu bytes answer %d, all of them %d\n", cuts[i], size, r, whole);
			abort();
		}
	}

	if (whole == DSH_SNI_FOUND) {
		size_t n = strlen(name);
		char *room = malloc(n + 1);
		if (!room)
			abort();
		if (parse(data, size, room, n + 1) != DSH_SNI_FOUND || strcmp(room, name) != 0) {
			fprintf(stderr, "fuzz_sni: '%s' not found in a room of %zu bytes\n", name, n + 1);
			abort();
		}
		if (parse(data, size, room, n) == DSH_SNI_FOUND) {
			fprintf(stderr, "fuzz_sni: '%s' found in a room of %zu bytes\n", name, n);
			abort();
		}
		free(room);
	}
	return 0;
}
