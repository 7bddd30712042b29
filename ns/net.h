/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_NET_H
#define DSH_NS_NET_H

#include <stdint.h>

#include "dshbox/error.h"

/* Bring up the loopback interface of the current (new) network namespace through rtnetlink. */
int dsh_net_loopback_up(struct dsh_error **err);
/* Give lo addr/prefix (host order): a loopback address's prefix is local as a whole, so every
   address in it can be listened on and connected to. */
int dsh_net_loopback_add(uint32_t addr, unsigned prefix, struct dsh_error **err);
/* A socket of type (SOCK_STREAM: listening, SOCK_DGRAM) bound to addr:port (host order), CLOEXEC
   and non-blocking, in the current network namespace. */
int dsh_net_listen(int type, uint32_t addr, uint16_t port, int *ret_fd, struct dsh_error **err);

#endif
