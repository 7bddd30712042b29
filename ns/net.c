/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netlink/addr.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* An rtnetlink socket of the current namespace in *ret: 0, or the error said. */
static int route_socket(struct nl_sock **ret, struct dsh_error **err)
{
	struct nl_sock *sk = nl_socket_alloc();
	if (!sk)
		return dsh_err_sys(err, ENOMEM, "loopback: nl_socket_alloc");
	int r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0) {
		nl_socket_free(sk);
		return nl_fail(err, r, "nl_connect");
	}
	*ret = sk;
	return 0;
}

int dsh_net_loopback_up(struct dsh_error **err)
{
	struct nl_sock *sk;
	int r = route_socket(&sk, err);
	if (r < 0)
		return r;
	struct rtnl_link *link = NULL, *change = NULL;
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

int dsh_net_loopback_add(uint32_t addr, unsigned prefix, struct dsh_error **err)
{
	struct nl_sock *sk;
	int r = route_socket(&sk, err);
	if (r < 0)
		return r;
	struct rtnl_addr *ra = rtnl_addr_alloc();
	struct nl_addr *local = NULL;
	uint32_t be = htonl(addr);
	if (!ra) {
		r = dsh_err_sys(err, ENOMEM, "loopback: rtnl_addr_alloc");
		goto out;
	}
	local = nl_addr_build(AF_INET, &be, sizeof(be));
	if (!local) {
		r = dsh_err_sys(err, ENOMEM, "loopback: nl_addr_build");
		goto out;
	}
	nl_addr_set_prefixlen(local, (int)prefix);
	rtnl_addr_set_ifindex(ra, 1); /* lo is always 1 in a namespace of its own */
	rtnl_addr_set_family(ra, AF_INET);
	r = rtnl_addr_set_local(ra, local);
	if (r >= 0)
		r = rtnl_addr_add(sk, ra, 0);
	if (r < 0)
		r = nl_fail(err, r, "add the mapped range to lo");
out:
	if (local)
		nl_addr_put(local);
	if (ra)
		rtnl_addr_put(ra);
	nl_socket_free(sk);
	return r < 0 ? r : 0;
}

int dsh_net_listen(int type, uint32_t addr, uint16_t port, int *ret_fd, struct dsh_error **err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(addr) };
	char text[INET_ADDRSTRLEN];
	int fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
	if (fd < 0)
		return dsh_err_sys(err, errno, "socket for %s:%u", inet_ntop(AF_INET, &sa.sin_addr, text, sizeof(text)),
				   (unsigned)port);
	/* The namespace is new: nothing else holds these ports, but a TIME_WAIT of ours might. */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || (type == SOCK_STREAM && listen(fd, 512) < 0)) {
		int e = errno;
		close(fd);
		return dsh_err_sys(err, e, "listen on %s:%u", inet_ntop(AF_INET, &sa.sin_addr, text, sizeof(text)),
				   (unsigned)port);
	}
	*ret_fd = fd;
	return 0;
}
