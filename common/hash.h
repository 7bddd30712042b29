/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_HASH_H
#define DSH_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/*
 * FNV-1a, 64 bits: the one string hash of the project's tables (the rule index, the path sets, the
 * canonical-path cache, the serve workers) and of the fence's temporary names, which are on disk:
 * changing it changes those names.
 */
#define DSH_FNV1A_INIT 1469598103934665603ULL

static inline uint64_t dsh_fnv1a_step(uint64_t h, unsigned char c)
{
	return (h ^ c) * 1099511628211ULL;
}

static inline uint64_t dsh_fnv1a(const char *s, size_t n)
{
	uint64_t h = DSH_FNV1A_INIT;
	for (size_t i = 0; i < n; i++)
		h = dsh_fnv1a_step(h, (unsigned char)s[i]);
	return h;
}

static inline uint64_t dsh_fnv1a_str(const char *s)
{
	uint64_t h = DSH_FNV1A_INIT;
	for (; *s; s++)
		h = dsh_fnv1a_step(h, (unsigned char)*s);
	return h;
}

#endif
