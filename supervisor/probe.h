/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_PROBE_H
#define DSH_SUPERVISOR_PROBE_H

/*
 * What this kernel can enforce, found by trying it (SPEC 4, STYLE 7): each probe forks a child that
 * makes the real calls (ENOSYS, EOPNOTSUPP, EPERM are the answers), bounded by a deadline after
 * which the child is killed and the probe counts as failed.  Never a version string.
 */

#include <stdbool.h>

#include "dshbox/error.h"

enum dsh_probe_id {
	DSH_PROBE_USERNS,          /* unprivileged user + mount namespace with identity maps */
	DSH_PROBE_MOUNT_API,       /* fsopen/fsmount/open_tree/move_mount/mount_setattr */
	DSH_PROBE_LANDLOCK,        /* landlock_create_ruleset(VERSION); value = ABI */
	DSH_PROBE_SECCOMP,         /* dshbox's own filter loads and refuses keyctl with EPERM */
	DSH_PROBE_SECCOMP_NOTIFY,  /* SECCOMP_GET_NOTIF_SIZES */
	DSH_PROBE_PIDFD,           /* pidfd_open */
	DSH_PROBE_CLONE3,          /* clone3 makes a child */
	DSH_PROBE_NETNS_LOOPBACK,  /* a network namespace whose loopback carries a TCP connection */
	DSH_PROBE__MAX,
};

struct dsh_probe_result {
	enum dsh_probe_id id;
	bool ok;
	int code;          /* positive errno of the failing step; ETIMEDOUT at the deadline; 0 when ok */
	int value;         /* the Landlock ABI for DSH_PROBE_LANDLOCK */
	char step[64];     /* the call that failed: "unshare(CLONE_NEWUSER)" */
	char reason[192];  /* why, when known (a sysctl, an AppArmor restriction), else "" */
	const char *remedy; /* one line, static; NULL when ok */
};

const char *dsh_probe_name(enum dsh_probe_id id);
/* Run one probe in a child bounded by timeout_ms (> 0).  Always fills ret; returns 0 when the
   feature works, else -code. */
int dsh_probe_run(enum dsh_probe_id id, long long timeout_ms, struct dsh_probe_result *ret);

/* The landlock backend's probe: Landlock and seccomp both work.  0, or -errno with err naming the
   missing piece and a hint.  (linux-ns probes itself: supervisor/backend_linux_ns.c.) */
int dsh_probe_backend_landlock(long long timeout_ms, struct dsh_error **err);

#endif
