/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_NET_H
#define DSH_NS_NET_H

#include "dshbox/error.h"

/* Bring up the loopback interface of the current (new) network namespace through rtnetlink. */
int dsh_net_loopback_up(struct dsh_error **err);

#endif
