/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <net/if.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>

#include "ns/net.h"

/* libnl answers NLE_* codes, not errno values: translated here, once (STYLE 8). */
static int nl_fail(struct dsh_error **err, int nle, const char *what)
{
	int e;
	switch (nle < 0 ? -nle : nle) {
	case NLE_NOMEM:
		e = ENOMEM;
		break;
	case NLE_PERM:
		e = EPERM;
		break;
	case NLE_NODEV:
	case NLE_OBJ_NOTFOUND:
		e = ENODEV;
		break;
	default:
		e = EIO;
		break;
	}
	return dsh_err(err, DSH_ERR_SYSTEM, e, "loopback: %s: %s", what, nl_geterror(nle));
}

int dsh_net_loopback_up(struct dsh_error **err)
{
	struct nl_sock *sk = nl_socket_alloc();
	if (!sk)
		return dsh_err_sys(err, ENOMEM, "loopback: nl_socket_alloc");
	struct rtnl_link *link = NULL, *change = NULL;
	int r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0) {
		r = nl_fail(err, r, "nl_connect");
		goto out;
	}
	r = rtnl_link_get_kernel(sk, 0, "lo", &link);
	if (r < 0) {
		r = nl_fail(err, r, "get link lo");
		goto out;
	}
	change = rtnl_link_alloc();
	if (!change) {
		r = dsh_err_sys(err, ENOMEM, "loopback: rtnl_link_alloc");
		goto out;
	}
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, link, change, 0);
	if (r < 0)
		r = nl_fail(err, r, "set lo up");
out:
	if (change)
		rtnl_link_put(change);
	if (link)
		rtnl_link_put(link);
	nl_socket_free(sk);
	return r < 0 ? r : 0;
}
