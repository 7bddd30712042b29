/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_PROBE_H
#define DSHBOX_PROBE_H

/*
 * What this kernel can enforce, found by trying it (SPEC 4, STYLE 7): one table of probes, each
 * run in a child that makes the real calls (ENOSYS, EOPNOTSUPP, EPERM are the answers) and is
 * killed at probeTimeoutMs.  The backends' probe slots (linux-ns, landlock) run entries of this
 * same table, so `dshbox probe` and `--backend auto` cannot disagree about a feature.
 */

#include <stdbool.h>

#include "dshbox/export.h"

enum dsh_probe_id {
	DSH_PROBE_USERNS,          /* unprivileged user + mount namespace with identity maps */
	DSH_PROBE_MOUNT_API,       /* fsopen/fsmount/open_tree/move_mount/mount_setattr, openat2 */
	DSH_PROBE_LANDLOCK,        /* landlock_create_ruleset(VERSION); value = ABI */
	DSH_PROBE_SECCOMP,         /* dshbox's own filter loads and refuses keyctl with EPERM */
	DSH_PROBE_SECCOMP_NOTIFY,  /* SECCOMP_GET_NOTIF_SIZES */
	DSH_PROBE_PIDFD,           /* pidfd_open */
	DSH_PROBE_CLONE3,          /* clone3 makes a child */
	DSH_PROBE_NETNS_LOOPBACK,  /* a network namespace whose loopback, brought up as runs do, carries TCP */
	DSH_PROBE_VM_READV,        /* process_vm_readv on itself: how the broker reads a caller's arguments */
	DSH_PROBE_PIDFD_GETFD,     /* pidfd_getfd on itself: how the broker takes a caller's descriptors */
	DSH_PROBE_PROCFS,          /* a fresh procfs in a user + pid namespace, as a run mounts on /proc */
	DSH_PROBE__MAX,
};

struct dsh_probe_result {
	enum dsh_probe_id id;
	bool ok;
	int code;          /* positive errno of the failing step; 0 when ok; ETIMEDOUT when the probe
			      gave no answer by the deadline, ECHILD when it died: step then says it all */
	int value;         /* the Landlock ABI for DSH_PROBE_LANDLOCK */
	char step[64];     /* the call that failed: "unshare(CLONE_NEWUSER)" */
	char reason[192];  /* why, when known (a sysctl, an AppArmor restriction), else "" */
	const char *remedy; /* one line, static; NULL when ok */
};

/* The entry's short name ("user namespaces") and what it tries, one line; "?" for a bad id. */
DSH_PUBLIC const char *dsh_probe_name(enum dsh_probe_id id);
DSH_PUBLIC const char *dsh_probe_checks(enum dsh_probe_id id);
/* Run one entry in its own child bounded by timeout_ms (> 0).  Always fills ret; returns 0 when the
   feature works, else -code. */
DSH_PUBLIC int dsh_probe_run(enum dsh_probe_id id, long long timeout_ms, struct dsh_probe_result *ret);

#endif
