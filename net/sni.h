/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_SNI_H
#define DSH_NET_SNI_H

/*
 * The server name a TLS ClientHello asks for (RFC 8446 4.1.2, RFC 6066 3), read from the first
 * bytes a client sends, so the relay can hold it to the name it was allowed to reach.  Pure and
 * bounded: every length is checked against the bytes at hand before it is followed.
 */

#include <stddef.h>

/* The ClientHello is longer than this: refuse it rather than buffer without end. */
#define DSH_SNI_MAX_HELLO 16384

enum dsh_sni_result {
	DSH_SNI_FOUND,      /* ret_name holds the host_name, NUL-terminated */
	DSH_SNI_NONE,       /* a whole ClientHello without a server_name extension */
	DSH_SNI_NEED_MORE,  /* a prefix of a ClientHello: read more and call again */
	DSH_SNI_NOT_TLS,    /* not a TLS handshake record carrying a ClientHello, or malformed */
};

/* buf, len: the bytes received so far.  ret_name: room for name_size bytes (a host name is at most
 * 253 characters: 256 is enough; a longer one is NOT_TLS). */
enum dsh_sni_result dsh_sni_parse(const unsigned char *buf, size_t len, char *ret_name, size_t name_size);

#endif
