/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SECCOMP_CAPS_H
#define DSH_SECCOMP_CAPS_H

/*
 * Capabilities: the one chokepoint (capget/capset and the capability prctls).
 *
 * dsh_caps_drop_all() locks the securebits (no root magic on exec, no setuid fixups, no keep-caps,
 * no ambient raise, each locked) and then clears every set: effective, permitted, inheritable,
 * bounding and ambient.  The securebits and the bounding set need CAP_SETPCAP in the current user
 * namespace: the linux-ns child (root of its own namespace) has it; an unprivileged caller of the
 * landlock backend does not, and there the two steps are skipped and reported in *ret_partial
 * (no_new_privs already makes file capabilities and setuid bits inert for it).
 */

#include <stdbool.h>

#include "dshbox/error.h"

struct dsh_caps_result {
	bool securebits_locked;
	bool bounding_cleared;
};

int dsh_caps_drop_all(struct dsh_caps_result *ret, struct dsh_error **err);
/*
 * dshbox bwrap --cap-add: every set but `keep` (bit N: capability N) cleared, as bubblewrap leaves
 * the command its requested set — effective, permitted, inheritable, bounding and ambient (so that
 * it survives execve under no_new_privs) — with the securebits locked as dsh_caps_drop_all locks
 * them, but for the ambient raise, which has to happen after.  Needs CAP_SETPCAP (the linux-ns
 * child has every capability of its namespace).
 */
int dsh_caps_keep(unsigned long long keep, struct dsh_error **err);
/* True when no capability is left in any set (effective, permitted, inheritable, ambient;
   and bounding when bounding_too). */
bool dsh_caps_none_left(bool bounding_too);

#endif
