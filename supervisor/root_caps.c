/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "ns/userns.h"
#include "supervisor/sandbox.h"

/*
 * Root's command and its files (issue 22 item 5).  `dshbox check` and `serve` act as the caller:
 * root writes a workspace another user owns (a dev container's bind-mounted checkout).  A command
 * stripped of every capability could not, so the two entry points disagreed.  The command keeps
 * the caller's CAP_DAC_OVERRIDE (and under linux-ns CAP_FOWNER): the permission bits and the owner
 * checks, nothing more.  What still binds it: the read-only mounts (EROFS, whatever the
 * capabilities), the masks over -- paths, Landlock (capabilities do not bypass it) and the seccomp
 * filter.  Never CAP_DAC_READ_SEARCH (open_by_handle_at reaches around the mount tree), never
 * CAP_SYS_ADMIN, CAP_SETUID or CAP_SETPCAP (a hold over the sandbox's own namespaces): a
 * capability inside a user namespace counts for an inode only when its owner is mapped there
 * (privileged_wrt_inode_uidgid), hence the whole id range mapped, which names nobody the caller
 * could not name already.
 */

static unsigned long long effective_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	return d[0].effective | (unsigned long long)d[1].effective << 32;
}

#define BIT(c) (1ULL << (c))

bool dsh_root_maps_range(void)
{
	unsigned long long need = BIT(CAP_SETUID) | BIT(CAP_SETGID) | BIT(CAP_SETFCAP);
	if (geteuid() != 0 || (effective_caps() & need) != need)
		return false;
	/* A namespace of one id (unshare -r) has no range to map, nor an id left over for the masks. */
	char buf[1024];
	_cleanup_error_ struct dsh_error *e = NULL;
	return dsh_userns_range_map("uid_map", true, buf, sizeof(buf), &e) == 0 &&
	       dsh_userns_range_map("gid_map", true, buf, sizeof(buf), &e) == 0;
}

unsigned long long dsh_root_keep_caps(bool namespaces)
{
	if (geteuid() != 0)
		return 0;
	/* Without namespaces (landlock backend) nothing but Landlock stands between the command and
	   the host's files, and Landlock does not cover chmod, utimes or xattrs: CAP_FOWNER stays out. */
	unsigned long long want = BIT(CAP_DAC_OVERRIDE) | (namespaces ? BIT(CAP_FOWNER) : 0);
	return effective_caps() & want;
}

void dsh_root_caps_render(unsigned long long caps, struct dsh_buf *b)
{
	if (!caps)
		return;
	dsh_buf_add(b, "capabilities kept:");
	if (caps & BIT(CAP_DAC_OVERRIDE))
		dsh_buf_add(b, " CAP_DAC_OVERRIDE");
	if (caps & BIT(CAP_FOWNER))
		dsh_buf_add(b, " CAP_FOWNER");
	dsh_buf_add(b, " (root: the command writes files other users own where check and serve say it may; "
		       "the mounts, Landlock and the filter still bind it)\n");
}
