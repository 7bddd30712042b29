/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "net/socks5.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

enum dsh_socks5_result dsh_socks5_parse_greeting(const unsigned char *buf, size_t len, struct dsh_socks5_greeting *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (len < 1)
		return DSH_SOCKS5_NEED_MORE;
	if (buf[0] != 5) {
		ret->why = buf[0] == 4 ? "a SOCKS4 greeting (SOCKS5 only)" : "not a SOCKS5 greeting";
		return DSH_SOCKS5_BAD;
	}
	if (len < 2)
		return DSH_SOCKS5_NEED_MORE;
	if (buf[1] == 0) {
		ret->why = "a greeting offering no method";
		return DSH_SOCKS5_BAD;
	}
	if (len < 2 + (size_t)buf[1])
		return DSH_SOCKS5_NEED_MORE;
	ret->len = 2 + (size_t)buf[1];
	ret->no_auth = memchr(buf + 2, 0x00, buf[1]) != NULL;
	return DSH_SOCKS5_FOUND;
}

static enum dsh_socks5_result refuse(struct dsh_socks5_request *ret, enum dsh_socks5_result r,
				     enum dsh_socks5_reply reply, const char *why)
{
	ret->reply = reply;
	ret->why = why;
	return r;
}

enum dsh_socks5_result dsh_socks5_parse_request(const unsigned char *buf, size_t len, struct dsh_socks5_request *ret)
{
	/* Each field is judged as soon as it is there, in the order it comes, so that a prefix
	 * answers what the whole request does. */
	memset(ret, 0, sizeof(*ret));
	if (len < 1)
		return DSH_SOCKS5_NEED_MORE;
	if (buf[0] != 5)
		return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_GENERAL_FAILURE, "not a SOCKS5 request");
	if (len < 2)
		return DSH_SOCKS5_NEED_MORE;
	if (buf[1] != 1)
		return refuse(ret, DSH_SOCKS5_UNSUPPORTED, DSH_SOCKS5_CMD_UNSUPPORTED,
			      "a command other than CONNECT (BIND, UDP ASSOCIATE)");
	if (len < 3)
		return DSH_SOCKS5_NEED_MORE;
	if (buf[2] != 0)
		return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_GENERAL_FAILURE, "a reserved byte that is not 0");
	if (len < 4)
		return DSH_SOCKS5_NEED_MORE;
	size_t addr_len;
	switch (buf[3]) {
	case 1:
		addr_len = 4;
		break;
	case 4:
		addr_len = 16;
		break;
	case 3:
		if (len < 5)
			return DSH_SOCKS5_NEED_MORE;
		if (buf[4] == 0)
			return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_GENERAL_FAILURE, "an empty DOMAINNAME");
		addr_len = 1 + (size_t)buf[4];
		break;
	default:
		return refuse(ret, DSH_SOCKS5_UNSUPPORTED, DSH_SOCKS5_ATYP_UNSUPPORTED, "an unknown address type");
	}
	if (len < 4 + addr_len + 2)
		return DSH_SOCKS5_NEED_MORE;
	const unsigned char *a = buf + 4, *p = a + addr_len;
	const char *why = NULL;
	if (buf[3] == 3) {
		ret->is_domain = true;
		if (memchr(a + 1, '\0', addr_len - 1))
			why = "a NUL in the DOMAINNAME";
		else
			why = dsh_net_host_name_copy(a + 1, addr_len - 1, ret->host, sizeof(ret->host));
	} else if (!inet_ntop(buf[3] == 1 ? AF_INET : AF_INET6, a, ret->host, sizeof(ret->host))) {
		why = "an address inet_ntop cannot spell";
	}
	if (why)
		return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_GENERAL_FAILURE, why);
	ret->port = (uint16_t)(p[0] << 8 | p[1]);
	if (ret->port == 0)
		return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_GENERAL_FAILURE, "port 0");
	ret->len = 4 + addr_len + 2;
	return DSH_SOCKS5_FOUND;
}

void dsh_socks5_reply(enum dsh_socks5_reply code, unsigned char ret[DSH_SOCKS5_REPLY_LEN])
{
	memset(ret, 0, DSH_SOCKS5_REPLY_LEN);
	ret[0] = 5;
	ret[1] = (unsigned char)code;
	ret[3] = 1; /* ATYP IPv4 */
}

enum dsh_socks5_reply dsh_socks5_reply_for(int status)
{
	switch (status) {
	case 0:
		return DSH_SOCKS5_SUCCEEDED;
	case -EACCES:
		return DSH_SOCKS5_NOT_ALLOWED;
	case -ENETUNREACH:
		return DSH_SOCKS5_NET_UNREACHABLE;
	case -ENOENT:
	case -EHOSTUNREACH:
	case -ETIMEDOUT:
		return DSH_SOCKS5_HOST_UNREACHABLE;
	case -ECONNREFUSED:
		return DSH_SOCKS5_REFUSED;
	default:
		return DSH_SOCKS5_GENERAL_FAILURE;
	}
}
