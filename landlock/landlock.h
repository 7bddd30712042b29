/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_LANDLOCK_LANDLOCK_H
#define DSH_LANDLOCK_LANDLOCK_H

/*
 * Landlock (Linux 5.13+), the one chokepoint for its three syscalls.
 *
 * Two halves:
 *  - pure: the access masks each ABI knows, and a ruleset *spec* (handled access, scopes, a list of
 *    grants "path or O_PATH descriptor -> access mask"), including what to grant for a policy;
 *  - effectful: probe the ABI, turn a spec into a ruleset descriptor, restrict the calling thread.
 *
 *   int abi = dsh_landlock_abi();                      (>= 1, or -ENOSYS / -EOPNOTSUPP)
 *   struct dsh_landlock_spec s;  dsh_landlock_spec_init(&s, abi);
 *   dsh_landlock_spec_add(&s, "/", -1, dsh_landlock_fs_read(abi), &err);
 *   dsh_landlock_spec_add(&s, "/ws", -1, dsh_landlock_fs_rw(abi), &err);
 *   prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
 *   dsh_landlock_apply(&s, &err);                      (build + restrict_self)
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dshbox/error.h"
#include "landlock/syscalls.h"

struct dsh_policy;

/* The newest ABI this code knows (Linux 6.15: ABI 7, audit logging flags; no new access rights). */
#define DSH_LANDLOCK_ABI_KNOWN 7

/*
 * The running kernel's ABI: >= 1, or -ENOSYS (not built in), -EOPNOTSUPP (built in, disabled at
 * boot: add "landlock" to the lsm= kernel parameter).  Asks the kernel every time; cheap.
 */
int dsh_landlock_abi(void);

/* Access masks for an ABI (0 for abi < 1).  Read = execute, read files, list directories. */
uint64_t dsh_landlock_fs_handled(int abi);
uint64_t dsh_landlock_fs_read(int abi);
uint64_t dsh_landlock_fs_write(int abi); /* every handled right that is not read */
uint64_t dsh_landlock_fs_rw(int abi);    /* read | write */
/* The rights the kernel accepts on a rule whose target is not a directory. */
uint64_t dsh_landlock_fs_file_only(int abi);
uint64_t dsh_landlock_net_handled(int abi); /* TCP bind + connect from ABI 4 */
uint64_t dsh_landlock_scopes(int abi);      /* signal + abstract unix socket from ABI 6 */
/* Access rights as names ("read_file|write_file"), for --dry-run and debug; newly allocated. */
char *dsh_landlock_fs_access_to_string(uint64_t access);

struct dsh_landlock_grant {
	char *path;       /* absolute path opened at build time, or NULL when fd is set */
	int fd;           /* an O_PATH descriptor owned by the caller, or -1 */
	uint64_t access;  /* LANDLOCK_ACCESS_FS_*; masked to what is handled at build time */
	unsigned rule;    /* the policy rule index that produced it, or DSH_LANDLOCK_NO_RULE */
	bool no_symlinks; /* open with RESOLVE_NO_SYMLINKS: a symlink there now fails the build */
	bool check_id;    /* the opened object must still be dev/ino (what the plan saw) */
	bool skip_stale;  /* swapped (as above): grant nothing instead of failing (sibling grants,
			     where granting less is always safe and a rename nearby is no attack) */
	dev_t dev;
	ino_t ino;
};
#define DSH_LANDLOCK_NO_RULE ((unsigned)-1)

/* A ruleset as data: built before clone, applied in the child. */
struct dsh_landlock_spec {
	int abi;
	uint64_t handled_fs;
	uint64_t handled_net;   /* handled with no port rule: every TCP bind/connect is denied */
	uint64_t scoped;
	struct dsh_landlock_grant *grants;
	size_t n_grants, cap_grants;
};

/* handled_fs and scoped from the ABI (everything it knows), handled_net 0 (the network is left
   to the namespace layer unless the caller sets it). */
void dsh_landlock_spec_init(struct dsh_landlock_spec *s, int abi);
void dsh_landlock_spec_clear(struct dsh_landlock_spec *s);
/* Add a grant on path (copied) or on fd (path NULL; the descriptor stays the caller's). */
int dsh_landlock_spec_add(struct dsh_landlock_spec *s, const char *path, int fd, uint64_t access,
			  struct dsh_error **err);
int dsh_landlock_spec_add_rule(struct dsh_landlock_spec *s, const char *path, uint64_t access,
			       unsigned rule, struct dsh_error **err);

/*
 * Express "everything but these" with an allow-only ruleset: walk from / down to each target and
 * grant sibling_access on every entry met on the way that is neither a target nor a directory
 * leading to one; a target gets its own access (0: nothing).  The directories on the way get
 * way_access, of which only READ_DIR is kept: listing them grants listing beneath them too (a
 * Landlock rule holds for the whole hierarchy below it), so a target directory's entries can then be
 * listed by name, never opened; 0 leaves them unlistable.  Symlinks get no grant (following one is checked
 * at its target); each grant remembers the dev/ino the walk saw and is opened without following
 * symlinks, so a sibling swapped (for a link, or for the denied directory itself) after the walk
 * grants nothing.  A directory that cannot be listed ends the walk there (fewer grants, never
 * more).  Targets are canonical absolute paths; at most max_grants grants (else -E2BIG).
 */
struct dsh_landlock_target {
	const char *path;
	uint64_t access;
	unsigned rule;
};
int dsh_landlock_spec_add_siblings(struct dsh_landlock_spec *s, const struct dsh_landlock_target *targets,
				   size_t n_targets, uint64_t sibling_access, uint64_t way_access, size_t max_grants,
				   struct dsh_error **err);

/* Device nodes a command needs written (SPEC 3.6), never all of /dev; no terminal but /dev/tty
   (the caller's own): the host's /dev/pts holds every other terminal of the user. */
extern const char *const dsh_landlock_devices[];

enum {
	/* /dev/shm is a private tmpfs in this sandbox (linux-ns): it may be written.  Without the
	   flag /dev/shm is the host's shared memory and stays read-only. */
	DSH_LANDLOCK_PRIVATE_DEV_SHM = 1 << 0,
	/* /tmp is a private tmpfs (linux-ns: read-only mode, tmp: private): it may be written, and
	   nothing written there reaches the host (SPEC 3.6). */
	DSH_LANDLOCK_PRIVATE_TMP = 1 << 1,
	/* /proc is the sandbox's own procfs (linux-ns), its system files read-only mounts (ns/mount.c):
	   a process may write its own entry (comm, oom_score_adj, its mem) as under bubblewrap.  The
	   landlock backend's /proc is the host's: no grant, since a file there such as another
	   process's oom_score_adj is guarded by its owner alone. */
	DSH_LANDLOCK_OWN_PROC = 1 << 2,
};

/*
 * The grants of the linux-ns sandbox (pure): read + execute beneath /, read + write beneath every
 * live writable root that no r- rule covers, write on the device nodes, plus /dev/shm with
 * DSH_LANDLOCK_PRIVATE_DEV_SHM, /tmp with DSH_LANDLOCK_PRIVATE_TMP, writes beneath /proc with
 * DSH_LANDLOCK_OWN_PROC.  The mount tree does the masking; Landlock is the second wall.
 */
int dsh_landlock_spec_for_sandbox(const struct dsh_policy *p, int abi, unsigned flags,
				  struct dsh_landlock_spec *ret, struct dsh_error **err);

/*
 * Open every grant's path (O_PATH; a grant on a symlink is a grant on its target, as the kernel
 * resolves it, unless no_symlinks) and add it to a new ruleset.  A path that does not exist is
 * skipped (that only ever grants less); a path swapped since the plan was made (a symlink where
 * no_symlinks said none, another dev/ino where check_id) fails with -ESTALE: never a grant that
 * lands somewhere else.  Rights a file cannot carry are dropped for non-directories.  ret_fd is
 * CLOEXEC.
 */
int dsh_landlock_build(const struct dsh_landlock_spec *s, int *ret_fd, struct dsh_error **err);
/* landlock_restrict_self(fd).  The thread must have no_new_privs (or CAP_SYS_ADMIN). */
int dsh_landlock_restrict(int ruleset_fd, struct dsh_error **err);
/* Build and restrict in one step (the stage of the sandbox). */
int dsh_landlock_apply(const struct dsh_landlock_spec *s, struct dsh_error **err);

/*
 * Grant read + write beneath every live writable root of p, each checked now and re-checked when
 * opened (no symlink on the way, same dev/ino): the one "writable roots -> grants" of the project.
 */
struct dsh_policy;
int dsh_landlock_spec_add_roots(struct dsh_landlock_spec *s, const struct dsh_policy *p, struct dsh_error **err);

#endif
