/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What `edit` calls text, and its line ends (pure). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fence/fence.h"

size_t dsh_utf8_sequence(const unsigned char *s, size_t n)
{
	/* RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF. */
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool dsh_text_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < n;) {
		if (s[i] == 0)
			return false;
		size_t len = dsh_utf8_sequence(s + i, n - i);
		if (!len)
			return false;
		i += len;
	}
	return true;
}

bool dsh_text_is_crlf(const char *s, size_t n)
{
	bool any = false;
	for (const char *p = s; (p = memchr(p, '\n', n - (size_t)(p - s))); p++) {
		if (p == s || p[-1] != '\r')
			return false;
		any = true;
	}
	return any;
}

char *dsh_text_lf_to_crlf(const char *s, size_t n, size_t *ret_len)
{
	size_t bare = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r'))
			bare++;
	char *out = malloc(n + bare + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r'))
			out[o++] = '\r';
		out[o++] = s[i];
	}
	out[o] = '\0';
	*ret_len = o;
	return out;
}
