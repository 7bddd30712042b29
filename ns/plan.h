/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_PLAN_H
#define DSH_NS_PLAN_H

/*
 * The mount plan (SPEC 3.1, 3.3): the policy compiled into a sorted list of entries, each with the
 * path, the action and the rule (or default) that produced it.  Building it reads the filesystem
 * (stat, the glob walker) but changes nothing; ns/mount.c applies it.  Normalisation is
 * deterministic: entries sorted component-wise parents first (dsh_path_compare: /a, /a/b, /a-b),
 * and every entry dropped (hidden by a mask, beaten by precedence, absent) leaves a note.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "dshbox/error.h"
#include "policy/policy.h"

/* In apply order for one path: the order of this list is the tie-break of the sort. */
enum dsh_mount_action {
	DSH_MOUNT_RO_ROOT,      /* "/": the whole tree read-only, recursively */
	DSH_MOUNT_TMP,          /* a private tmpfs on /tmp (host /tmp invisible) */
	DSH_MOUNT_BIND_RW,      /* a writable root: cloned before the read-only pass, moved back */
	DSH_MOUNT_BIND_RW_TMP,  /* a writable root under /tmp: bound at its path inside the private /tmp */
	DSH_MOUNT_BIND_RO_TMP,  /* the workspace or cwd under /tmp, no root: bound read-only there */
	DSH_MOUNT_DEV,          /* a minimal /dev */
	DSH_MOUNT_PROC,         /* a fresh procfs for the new pid namespace */
	DSH_MOUNT_BIND_RO,      /* r-: self-bound read-only, recursively */
	DSH_MOUNT_MASK_DIR,     /* --: an empty read-only tmpfs of mode 000 */
	DSH_MOUNT_MASK_FILE,    /* --: an empty mode-000 file bound over it */
	DSH_MOUNT_RUN_USER,     /* /run/user/UID: an empty private tmpfs (protectSockets, SPEC 3.11) */
	/* Only in plan->ordered (applied in the order given); dev and proc may be there too. */
	DSH_MOUNT_BIND,         /* source (host path, as the host showed it before any entry) onto path */
	DSH_MOUNT_TMPFS,        /* a new tmpfs, mode perms, size bytes (0: the kernel's default) */
	DSH_MOUNT_REMOUNT_RO,   /* path read-only, that mount only */
	DSH_MOUNT_MKDIR,        /* a directory at path (perms) */
	DSH_MOUNT_SYMLINK,      /* a symlink at path -> source */
	DSH_MOUNT_FILE,         /* a file at path with fd's data (perms) */
	DSH_MOUNT_BIND_DATA,    /* fd's data in a file of a private tmpfs, bound onto path */
	DSH_MOUNT_CHMOD,        /* chmod path perms */
	DSH_MOUNT_ATTR,         /* mount attributes set/cleared on path, recursively (MOUNT_ATTR_*) */
	DSH_MOUNT_NEWROOT,      /* a fresh tmpfs (mode 0755) becomes "/": pivot_root, the old tree detached */
	DSH_MOUNT_MQUEUE,       /* a new mqueue filesystem (the current IPC namespace's) on path */
	DSH_MOUNT_ABSENT,       /* nothing: path is held absent by a rule; fails if it exists when applied */
};
#define DSH_MOUNT_ACTION_COUNT (DSH_MOUNT_ABSENT + 1)
const char *dsh_mount_action_to_string(enum dsh_mount_action a);

struct dsh_mount_entry {
	char *path;                   /* the host path, and its name inside (path-transparent) */
	enum dsh_mount_action action;
	const struct dsh_rule *rule;  /* the rule that produced it, or NULL for a default */
	char *why;                    /* rule "-- KEY", workspace, mode read-only, ... */
	bool have_id;                 /* dev/ino as seen while planning; re-checked when applied */
	int probe_err;                /* planning: -errno of the lstat that found no identity (0: not looked at) */
	dev_t dev;
	ino_t ino;
	bool dev_mqueue;              /* dev: with an empty mqueue directory (for an mqueue mounted later) */
	bool dev_core;                /* dev: with bubblewrap's core -> /proc/kcore (dshbox bwrap) */
	/* The operations in plan->ordered only. */
	char *source;                 /* bind: the host path; symlink: the link's text */
	bool readonly;                /* bind, bind-data */
	bool devices;                 /* bind: device nodes usable */
	bool optional;                /* bind: a missing source is skipped */
	int fd;                       /* file, bind-data: the data (borrowed: it outlives the plan) */
	int perms;                    /* tmpfs, mkdir, file, bind-data, chmod; -1: none given */
	unsigned long long size;      /* tmpfs */
	unsigned long long attr_set, attr_clr;
};

struct dsh_mount_plan {
	struct dsh_mount_entry *entries;
	size_t n, cap;
	char **notes;        /* one line per dropped entry or fact worth telling (--dry-run shows them) */
	size_t n_notes;
	size_t absent_uncounted; /* absent targets dropped without a note of their own */
	bool ro_root;        /* the tree is read-only outside the writable roots */
	bool private_tmp;    /* /tmp is a private tmpfs */
	bool tmp_writable;   /* ... writable (workspace-write) */
	bool proc;           /* a fresh procfs is mounted on /proc */
	bool proc_fallback;  /* allowDegraded: a refused fresh procfs binds the host's /proc (its
				processes visible inside); otherwise the run refuses */
	bool dev;            /* a minimal /dev replaces the host's */
	/* Root keeping CAP_DAC_OVERRIDE (supervisor/root_caps.c): the masks are owned by the highest
	   ids of the range, which the locked namespace leaves unmapped (ns/userns.h), so that mode 000
	   still refuses the command. */
	bool masks_unmapped;
	size_t glob_matches; /* masks and read-only binds that came from glob matches */
	size_t dirs_read;    /* directories the glob walker read */
	/*
	 * Then operations applied in the order given, after every entry and before the lock, where
	 * "a later mount covers an earlier one" must hold exactly (`dshbox bwrap`: bubblewrap's
	 * operations that have no place in the sorted entries).  Through the same wrappers and the same
	 * applier.  Names are made only beneath a tmpfs this run mounted (those listed in creatable,
	 * then every tmpfs and new root in ordered): never on the host.
	 */
	struct dsh_mount_entry *ordered;
	size_t n_ordered;
	char **creatable;
};

/* Build the plan for p.  Fails on a scan error or more glob matches than o->max_masks. */
int dsh_mount_plan_build(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_mount_plan **ret,
			 struct dsh_error **err);
void dsh_mount_plan_free(struct dsh_mount_plan *plan);
/*
 * The first file (anything but a directory or a symlink) on the way to path, in *ret: a target
 * beneath it cannot exist, but some readers follow the file itself (git, a .git file's
 * "gitdir:"), so the backends keep it as the rule would keep the target.  1 found, 0 none
 * (a symlink on the way ends the search: the broker keeps the link), -ENOMEM.
 */
int dsh_path_file_on_the_way(const char *path, char **ret);
/* The plan as text, one entry per line (--dry-run). */
char *dsh_mount_plan_render(const struct dsh_mount_plan *plan);


#endif
