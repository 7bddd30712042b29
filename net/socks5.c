/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "net/socks5.h"

#include <arpa/inet.h>
#include <string.h>

#define SOCKS_VERSION 5
#define METHOD_NO_AUTH 0x00
#define CMD_CONNECT 1
#define CMD_BIND 2
#define CMD_UDP 3
#define ATYP_IPV4 1
#define ATYP_NAME 3
#define ATYP_IPV6 4

enum dsh_socks5_result dsh_socks5_greeting(const unsigned char *buf, size_t len, size_t *ret_used, bool *ret_no_auth)
{
	*ret_used = 0;
	*ret_no_auth = false;
	if (len < 1)
		return DSH_SOCKS5_NEED_MORE;
	if (buf[0] != SOCKS_VERSION)
		return DSH_SOCKS5_BAD;
	if (len < 2)
		return DSH_SOCKS5_NEED_MORE;
	size_t n = buf[1];
	if (n == 0) /* RFC 1928 3: at least one method */
		return DSH_SOCKS5_BAD;
	if (len < 2 + n)
		return DSH_SOCKS5_NEED_MORE;
	for (size_t i = 0; i < n; i++)
		if (buf[2 + i] == METHOD_NO_AUTH)
			*ret_no_auth = true;
	*ret_used = 2 + n;
	return DSH_SOCKS5_FOUND;
}

static enum dsh_socks5_result refuse(struct dsh_socks5_request *r, enum dsh_socks5_result res, unsigned char code)
{
	r->host[0] = '\0';
	r->port = 0;
	r->reply = code;
	return res;
}

/* A domain name's bytes as text.  Bytes above ASCII pass (a client may send UTF-8; the policy's
 * IDNA step decides them); what could end or split a name in a log or a lookup does not. */
static bool name_text(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		if (c <= 0x20 || c == 0x7f)
			return false;
		out[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	out[n] = '\0';
	return true;
}

enum dsh_socks5_result dsh_socks5_request(const unsigned char *buf, size_t len, size_t *ret_used,
					  struct dsh_socks5_request *ret)
{
	*ret_used = 0;
	ret->is_name = false;
	ret->reply = DSH_SOCKS5_FAILURE;
	ret->host[0] = '\0';
	ret->port = 0;
	/* Each byte is judged as it arrives, so a prefix never answers other than the whole. */
	if (len < 1)
		return DSH_SOCKS5_NEED_MORE;
	if (buf[0] != SOCKS_VERSION)
		return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_FAILURE);
	if (len < 2)
		return DSH_SOCKS5_NEED_MORE;
	if (buf[1] != CMD_CONNECT)
		return refuse(ret, DSH_SOCKS5_UNSUPPORTED, DSH_SOCKS5_BAD_COMMAND);
	if (len < 3)
		return DSH_SOCKS5_NEED_MORE;
	if (buf[2] != 0) /* RSV */
		return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_FAILURE);
	if (len < 4)
		return DSH_SOCKS5_NEED_MORE;
	size_t addr_at = 4, addr_len;
	switch (buf[3]) {
	case ATYP_IPV4:
		addr_len = 4;
		break;
	case ATYP_IPV6:
		addr_len = 16;
		break;
	case ATYP_NAME:
		if (len < 5)
			return DSH_SOCKS5_NEED_MORE;
		addr_at = 5;
		addr_len = buf[4];
		if (addr_len == 0)
			return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_FAILURE);
		break;
	default:
		return refuse(ret, DSH_SOCKS5_UNSUPPORTED, DSH_SOCKS5_BAD_ADDRESS);
	}
	/* A name's bytes are judged before the port arrives, as each lands. */
	size_t have = len - addr_at < addr_len ? len - addr_at : addr_len;
	if (buf[3] == ATYP_NAME && !name_text(buf + addr_at, have, ret->host))
		return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_FAILURE);
	size_t used = addr_at + addr_len + 2;
	if (len < used) {
		ret->host[0] = '\0';
		return DSH_SOCKS5_NEED_MORE;
	}
	uint16_t port = (uint16_t)(buf[used - 2] << 8 | buf[used - 1]);
	if (port == 0)
		return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_FAILURE);
	if (buf[3] == ATYP_NAME)
		ret->is_name = true;
	else if (!inet_ntop(buf[3] == ATYP_IPV4 ? AF_INET : AF_INET6, buf + addr_at, ret->host, sizeof(ret->host)))
		return refuse(ret, DSH_SOCKS5_BAD, DSH_SOCKS5_FAILURE);
	ret->port = port;
	ret->reply = DSH_SOCKS5_OK;
	*ret_used = used;
	return DSH_SOCKS5_FOUND;
}

size_t dsh_socks5_reply(unsigned char out[DSH_SOCKS5_REPLY_LEN], unsigned char code)
{
	memset(out, 0, DSH_SOCKS5_REPLY_LEN);
	out[0] = SOCKS_VERSION;
	out[1] = code;
	out[3] = ATYP_IPV4;
	return DSH_SOCKS5_REPLY_LEN;
}
