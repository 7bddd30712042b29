/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_BWRAP_ARGS_H
#define DSH_BWRAP_ARGS_H

/*
 * bubblewrap's argv as data (SPEC 8): an ordered list of setup operations, each with its own
 * --perms/--size (those apply to the next operation only, as in bubblewrap), plus the namespace,
 * process and descriptor options and the command.  Parsing is pure: it reads no descriptor itself
 * (--args FD goes through the caller's read_fd hook) and changes nothing.  Messages are bubblewrap's
 * own wording where bubblewrap has one, so that a front end can print them as "bwrap: MSG".
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "dshbox/error.h"

#define DSH_BWRAP_OPS(X)                                        \
	X(DSH_BWRAP_RO_BIND, "ro-bind")                         \
	X(DSH_BWRAP_BIND, "bind")                               \
	X(DSH_BWRAP_DEV_BIND, "dev-bind")                       \
	X(DSH_BWRAP_REMOUNT_RO, "remount-ro")                   \
	X(DSH_BWRAP_PROC, "proc")                               \
	X(DSH_BWRAP_DEV, "dev")                                 \
	X(DSH_BWRAP_TMPFS, "tmpfs")                             \
	X(DSH_BWRAP_MQUEUE, "mqueue")                           \
	X(DSH_BWRAP_DIR, "dir")                                 \
	X(DSH_BWRAP_FILE, "file")                               \
	X(DSH_BWRAP_BIND_DATA, "bind-data")                     \
	X(DSH_BWRAP_RO_BIND_DATA, "ro-bind-data")               \
	X(DSH_BWRAP_SYMLINK, "symlink")                         \
	X(DSH_BWRAP_CHMOD, "chmod")

enum dsh_bwrap_op_kind {
#define DSH_BWRAP_X(e, s) e,
	DSH_BWRAP_OPS(DSH_BWRAP_X)
#undef DSH_BWRAP_X
};
const char *dsh_bwrap_op_to_string(enum dsh_bwrap_op_kind k);

struct dsh_bwrap_op {
	enum dsh_bwrap_op_kind kind;
	char *source;     /* bind source, symlink target; NULL otherwise */
	char *dest;       /* the path inside the sandbox */
	int fd;           /* --file, --bind-data, --ro-bind-data: the data's descriptor; -1 otherwise */
	bool try_;        /* the -try variants: a missing source is skipped */
	int perms;        /* the mode it creates with (bubblewrap's default, or --perms); -1: none */
	bool have_perms;  /* --perms was given for this operation */
	unsigned long long size; /* --size for --tmpfs; 0: the kernel's default */
};

/* One --cap-add or --cap-drop: a capability number, or ALL. */
#define DSH_BWRAP_CAP_ALL (-1)
struct dsh_bwrap_cap_op {
	bool add;
	int cap;
};

enum dsh_bwrap_env_kind { DSH_BWRAP_SETENV, DSH_BWRAP_UNSETENV, DSH_BWRAP_CLEARENV };
struct dsh_bwrap_env_op {
	enum dsh_bwrap_env_kind kind;
	char *name;   /* NULL for clearenv */
	char *value;  /* setenv only */
};

/* Options bubblewrap has that dshbox bwrap recognises but does not carry out (the front end
   refuses them with one "bwrap: " line rather than run with less). */
struct dsh_bwrap_args {
	struct dsh_bwrap_op *ops;
	size_t n_ops;
	struct dsh_bwrap_env_op *env;
	size_t n_env;
	bool unshare_user, unshare_user_try, unshare_pid, unshare_net, unshare_ipc, unshare_uts;
	bool unshare_cgroup, unshare_cgroup_try;
	bool die_with_parent, new_session, as_pid_1;
	bool disable_userns, assert_userns_disabled;
	/* --cap-add and --cap-drop in argv order (bubblewrap applies them in order to one set). */
	struct dsh_bwrap_cap_op *cap_ops;
	size_t n_cap_ops;
	bool level_prefix;
	bool help, version;       /* seen first: the front end prints and exits 0 */
	char *chdir;
	char **lock_files;        /* --lock-file, in argv order */
	bool chdir_repeated;      /* --chdir given more than once: bubblewrap warns that the last wins */
	char *argv0;
	char *hostname;
	bool have_uid, have_gid;
	uid_t uid;
	gid_t gid;
	int seccomp_fd;           /* -1: none */
	int *add_seccomp_fds;
	size_t n_add_seccomp_fds;
	int info_fd, json_status_fd, block_fd, sync_fd; /* -1: none */
	char **unsupported;       /* bubblewrap options recognised but not carried out, as given */
	char **argv;              /* the command (NULL-terminated; may be empty) */
};

/*
 * The --args FD hook: read everything from fd into a malloc'ed buffer (*ret_len bytes, then a NUL
 * the length does not count).  Returns 0 or a negative errno.
 */
typedef int (*dsh_bwrap_read_fd_fn)(int fd, char **ret_buf, size_t *ret_len, void *userdata);

/*
 * Parse argv (without the program name).  Stops at "--" or at the first argument that does not
 * start with '-' (bubblewrap's rule); the rest is the command.  Errors are DSH_ERR_USAGE with
 * bubblewrap's message ("Unknown option --frob", "--bind takes two arguments").
 */
int dsh_bwrap_parse(int argc, char *const *argv, dsh_bwrap_read_fd_fn read_fd, void *userdata,
		    struct dsh_bwrap_args *ret, struct dsh_error **err);
void dsh_bwrap_args_clear(struct dsh_bwrap_args *a);

/*
 * bubblewrap's checks across options, after parsing, for a caller with these ids (--uid needs a
 * user namespace, which every caller but root gets anyway; --hostname needs --unshare-uts;
 * --as-pid-1 needs --unshare-pid; --disable-userns needs an explicit --unshare-user).
 */
int dsh_bwrap_validate(const struct dsh_bwrap_args *a, uid_t uid, gid_t gid, struct dsh_error **err);

/*
 * The capabilities bubblewrap would leave the command: `initial` (what bubblewrap starts from: the
 * caller's effective set for uid 0, nothing otherwise) with the --cap-add/--cap-drop ops applied in
 * order; ALL is every bit, as in bubblewrap (the kernel ignores those past its last capability).
 */
unsigned long long dsh_bwrap_caps(const struct dsh_bwrap_args *a, unsigned long long initial);

/* The environment the command gets: envp with the --setenv/--unsetenv/--clearenv ops applied. */
int dsh_bwrap_apply_env(const struct dsh_bwrap_args *a, char *const *envp, char ***ret, struct dsh_error **err);

/* The parsed argv as text, one operation per line (for --dry-run). */
char *dsh_bwrap_render(const struct dsh_bwrap_args *a);

#endif
