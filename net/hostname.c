/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "net/hostname.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

static bool digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool name_byte(unsigned char c)
{
	unsigned char l = c | 0x20;
	return digit(c) || (l >= 'a' && l <= 'z') || c == '-' || c == '_' || c == '.';
}

const char *dsh_net_host_name_copy(const unsigned char *p, size_t n, char *ret, size_t room)
{
	if (n == 0)
		return "an empty host";
	if (n > 253)
		return "a host longer than 253 bytes";
	if (n + 1 > room)
		return "a host longer than the room for it";
	size_t label = 0;
	bool numeric = false; /* the last label's digits only */
	for (size_t i = 0; i < n; i++) {
		if (!name_byte(p[i]))
			return "a byte no host name has";
		if (p[i] != '.') {
			if (label == 0)
				numeric = true;
			numeric = numeric && digit(p[i]);
			if (++label > 63)
				return "a label longer than 63 bytes";
			continue;
		}
		if (label == 0)
			return "an empty label in the host";
		label = 0;
	}
	bool trailing_dot = label == 0;
	if (numeric) {
		char v4[16];
		struct in_addr a;
		if (trailing_dot || n >= sizeof(v4))
			return "a numeric host that is no dotted IPv4 address";
		memcpy(v4, p, n);
		v4[n] = '\0';
		if (inet_pton(AF_INET, v4, &a) != 1)
			return "a numeric host that is no dotted IPv4 address";
	}
	for (size_t i = 0; i < n; i++)
		ret[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] | 0x20 : p[i]);
	ret[n] = '\0';
	return NULL;
}

const char *dsh_net_host_v6_copy(const unsigned char *p, size_t n, char *ret, size_t room)
{
	char text[INET6_ADDRSTRLEN];
	struct in6_addr a;
	if (n == 0 || n >= sizeof(text))
		return "no IPv6 address between the brackets";
	memcpy(text, p, n);
	text[n] = '\0';
	if (memchr(text, '\0', n) || inet_pton(AF_INET6, text, &a) != 1)
		return "no IPv6 address between the brackets";
	if (!inet_ntop(AF_INET6, &a, ret, (socklen_t)(room < sizeof(text) ? room : sizeof(text))))
		return "an IPv6 address longer than the room for it";
	return NULL;
}
