/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NET_HOSTNAME_H
#define DSH_NET_HOSTNAME_H

/*
 * The spelling of a host as the proxies' request parsers meet it (an HTTP authority, a SOCKS5
 * DOMAINNAME), checked once for both.  Syntax only: whether the name may be reached is the
 * policy's (policy/netpolicy.h), which normalises it again.  Pure: no lookup.
 */

#include <stddef.h>

/* 253 characters and a NUL, rounded up. */
#define DSH_NET_HOST_ROOM 256

/* A name or a dotted IPv4 address: 1 to 253 bytes of letters, digits, '-', '_' and '.', labels of
 * 1 to 63 (a trailing dot is kept).  A last label of digits only makes it an address, which must
 * then be a strict dotted quad: "127.1" or "2130706433" would be an address to a resolver and a
 * name to the policy.  Copied lowercased and NUL-terminated into ret (room bytes); returns NULL,
 * or why not. */
const char *dsh_net_host_name_copy(const unsigned char *p, size_t n, char *ret, size_t room);

/* An IPv6 literal without its brackets (no zone), copied in inet_ntop's canonical spelling, so
 * that two spellings of one address compare equal. */
const char *dsh_net_host_v6_copy(const unsigned char *p, size_t n, char *ret, size_t room);

#endif
