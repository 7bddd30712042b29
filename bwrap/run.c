/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "common/write_all.h"
#include "ns/plan_entries.h"
#include "bwrap/absent.h"
#include "policy/glob.h"
#include "bwrap/run.h"
#include "supervisor/probe.h"
#include "supervisor/sandbox.h"

/* `dshbox bwrap`: bubblewrap's operations as a dshbox mount plan (bwrap/run.h). */

struct dsh_bwrap_plan {
	bool strict;
	struct dsh_config config;
	struct dsh_policy *policy;
	struct dsh_run_options opts;
	struct dsh_mount_plan *mounts;
	bool landlock;
	struct dsh_landlock_spec ll;
	struct dsh_seccomp_prog seccomp;
	struct dsh_seccomp_prog notify;
	struct dsh_broker broker;
	char **defaults;
	bool any_writable;
	char **writable;             /* the argv's writable destinations (Landlock grants, opened inside) */
	bool new_root;               /* a root built from nothing */
	unsigned long long caps;     /* --cap-add: what the command keeps, in its user namespace */
	bool nested_userns;          /* new user namespaces inside allowed (no --disable-userns) */
	const int *pass_fds;         /* the caller's descriptors the command inherits (borrowed) */
	size_t n_pass_fds;
	const struct dsh_seccomp_prog *user_seccomp; /* the argv's programs (borrowed) */
	size_t n_user_seccomp;
	int info_fd, json_status_fd; /* -1: none */
	/* The one sandbox plan (supervisor/sandbox.h) all of the above makes: its namespaces (the
	   hostname is the args', which outlive the plan), ids, mounts, process and confinement. */
	struct dsh_sandbox_plan sb;
	const char *argv0;           /* --argv0 (the args' string) */
	bool list_ns[6];             /* the namespaces bubblewrap reports for this argv (ns_names) */
};

/* bubblewrap's order, and its rule: a namespace the argv unshares, and always mnt. */
static const char *const ns_names[6] = { "cgroup", "ipc", "mnt", "net", "pid", "uts" };

static int cannot(struct dsh_error **err, const char *fmt, ...) DSH_PRINTF(2, 3);
static int cannot(struct dsh_error **err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *m = NULL;
	int r = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (r < 0)
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	return dsh_err(err, DSH_ERR_UNSUPPORTED, EOPNOTSUPP, "%s", m);
}

/* What dshbox cannot carry out of the process options, each refused by name. */
static int check_options(const struct dsh_bwrap_args *a, bool strict, struct dsh_error **err)
{
	if (a->unsupported)
		return cannot(err, "%s: not supported by dshbox bwrap", a->unsupported[0]);
	/* New user namespaces inside are refused by dshbox's seccomp list: the ask is met only with it. */
	if (strict && (a->disable_userns || a->assert_userns_disabled))
		return cannot(err, "%s: needs dshbox's seccomp list, which --dshbox-compat=strict turns off",
			      a->disable_userns ? "--disable-userns" : "--assert-userns-disabled");
	if (strict && a->new_session)
		return cannot(err, "--new-session: dshbox keeps the session and refuses TIOCSTI with its seccomp "
				   "list, which --dshbox-compat=strict turns off");
	return 0;
}

/*
 * Capabilities whose use depends on which user namespace owns a namespace of the sandbox.  Under
 * bubblewrap the command's user namespace owns the namespaces the argv unshares (and its mount
 * namespace); under dshbox the command holds its capabilities in the nested user namespace that
 * locks the mounts, which owns no namespace but the locked mount copy.  Such a capability would do
 * less here than under bubblewrap, so it is refused by name.  Capabilities over files and
 * processes act on the same ids either way (both map the caller's ids alone).
 */
static const struct {
	int cap;
	const char *name;
	int needs;       /* the unshare it matters under: 0 always, else one of the NS_ values below */
	const char *what;
} ns_caps[] = {
#define NS_NET 1
#define NS_IPC 2
#define NS_PID 3
	{ 21, "CAP_SYS_ADMIN", 0, "the sandbox's mount namespace (dshbox's mounts are locked) and its hostname" },
	{ 12, "CAP_NET_ADMIN", NS_NET, "the sandbox's network namespace" },
	{ 13, "CAP_NET_RAW", NS_NET, "the sandbox's network namespace" },
	{ 10, "CAP_NET_BIND_SERVICE", NS_NET, "the sandbox's network namespace" },
	{ 11, "CAP_NET_BROADCAST", NS_NET, "the sandbox's network namespace" },
	{ 15, "CAP_IPC_OWNER", NS_IPC, "the sandbox's IPC namespace" },
	{ 40, "CAP_CHECKPOINT_RESTORE", NS_PID, "the sandbox's pid namespace" },
};

/* The caller's effective set: what bubblewrap starts from for uid 0. */
static unsigned long long effective_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	return (unsigned long long)d[0].effective | (unsigned long long)d[1].effective << 32;
}

/* Bits of the capabilities this kernel knows. */
static unsigned long long known_caps(void)
{
	int last = 40;
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	if (f) {
		if (fscanf(f, "%d", &last) != 1 || last < 0 || last > 63)
			last = 40;
		fclose(f);
	}
	return last >= 63 ? ~0ULL : (1ULL << (last + 1)) - 1;
}

/*
 * --cap-add/--cap-drop as bubblewrap applies them (bubblewrap's set starts from the caller's
 * effective set for uid 0, empty otherwise, then each option in order).  The result is kept in the
 * command's user namespace: bubblewrap's own when the argv makes one (every caller but root does),
 * so root without --unshare-user, to whom bubblewrap leaves the host's capabilities, is refused.
 */
static int plan_caps(const struct dsh_bwrap_args *a, unsigned long long *ret, struct dsh_error **err)
{
	*ret = 0;
	if (a->n_cap_ops == 0)
		return 0; /* root's own set is dropped, as documented: the argv did not ask for it */
	uid_t uid = getuid();
	unsigned long long caps = dsh_bwrap_caps(a, uid == 0 ? effective_caps() : 0) & known_caps();
	if (caps == 0)
		return 0;
	bool userns = a->unshare_user || a->unshare_user_try || uid != 0;
	if (!userns)
		return cannot(err, "--cap-add: run by root without --unshare-user, bubblewrap leaves the command "
				   "capabilities in the host's user namespace; dshbox bwrap gives them only in a user "
				   "namespace of its own (add --unshare-user)");
	for (size_t i = 0; i < sizeof(ns_caps) / sizeof(ns_caps[0]); i++) {
		bool matters = ns_caps[i].needs == 0 || (ns_caps[i].needs == NS_NET && a->unshare_net) ||
			       (ns_caps[i].needs == NS_IPC && a->unshare_ipc) ||
			       (ns_caps[i].needs == NS_PID && a->unshare_pid);
		if (matters && (caps & (1ULL << ns_caps[i].cap)))
			return cannot(err, "--cap-add %s: acts on %s, which bubblewrap's user namespace owns and the "
					   "nested one dshbox bwrap keeps capabilities in does not (add --cap-drop %s)",
				      ns_caps[i].name, ns_caps[i].what, ns_caps[i].name);
	}
	*ret = caps;
	return 0;
}

/* --mqueue shows the message queues of the IPC namespace the command is in. */
static int check_mqueue(const struct dsh_bwrap_args *a, struct dsh_error **err)
{
	for (size_t i = 0; i < a->n_ops; i++)
		if (a->ops[i].kind == DSH_BWRAP_MQUEUE && !a->unshare_ipc)
			return cannot(err, "--mqueue %s: without --unshare-ipc bubblewrap mounts the caller's message "
					   "queues (run by root) or fails; dshbox bwrap mounts those of an IPC namespace "
					   "of the sandbox's own only (add --unshare-ipc)", a->ops[i].dest);
	return 0;
}

static const char *opname(const struct dsh_bwrap_op *op)
{
	static char buf[32];
	snprintf(buf, sizeof(buf), "--%s%s", dsh_bwrap_op_to_string(op->kind), op->try_ ? "-try" : "");
	return buf;
}

static bool is_bind(enum dsh_bwrap_op_kind k)
{
	return k == DSH_BWRAP_BIND || k == DSH_BWRAP_RO_BIND || k == DSH_BWRAP_DEV_BIND;
}

/* A bind's source must exist (bubblewrap's wording when it does not); a -try source that does not
   is skipped: 1.  The failure is never -ENOENT, which would read as the skip to a caller. */
static int check_source(const struct dsh_bwrap_op *op, struct dsh_error **err)
{
	struct stat st;
	if (stat(op->source, &st) == 0)
		return 0;
	int e = errno;
	if (e == ENOENT && op->try_)
		return 1;
	int r = dsh_err(err, DSH_ERR_USAGE, e, "Can't find source path %s: %s", op->source, strerror(e));
	return r < 0 ? r : -EINVAL;
}

/* The canonical path of a bind of a path onto itself, or NULL (then it is not a plan entry). */
static char *self_bind_path(const struct dsh_bwrap_op *op)
{
	char src[PATH_MAX], dst[PATH_MAX];
	if (!realpath(op->source, src) || !realpath(op->dest, dst) || strcmp(src, dst) != 0)
		return NULL;
	if (dsh_path_is_beneath(src, "/proc") || dsh_path_is_beneath(src, "/dev") || strcmp(src, "/") == 0)
		return NULL;
	return strdup(src);
}

/* A writable destination the policy (broker, Landlock) must agree is writable. */
static int add_writable(struct dsh_bwrap_plan *bp, const char *dest, bool *have_ws, struct dsh_error **err)
{
	char real[PATH_MAX];
	if (!realpath(dest, real))
		return 0; /* made inside a tmpfs of the argv: that tmpfs's own root covers it */
	if (!*have_ws) {
		free(bp->config.workspace);
		if (!(bp->config.workspace = strdup(real)))
			return dsh_err_sys(err, ENOMEM, "bwrap plan");
		*have_ws = true;
		return 0;
	}
	if (dsh_strv_pushf(&bp->config.access, "rw %s", real) < 0)
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	return 0;
}

static int push_op(struct dsh_bwrap_plan *bp, struct dsh_mount_entry op, const char *why, struct dsh_error **err)
{
	op.why = (char *)why;
	return dsh_mount_plan_push_ordered(bp->mounts, &op, err);
}

/* An operation of the argv applied in its order (ns/plan.h's ordered operations). */
static int add_ordered(struct dsh_bwrap_plan *bp, const struct dsh_bwrap_op *op, const char *why,
		       struct dsh_error **err)
{
	struct dsh_mount_entry e = { .source = (char *)op->source, .path = (char *)op->dest, .fd = op->fd,
				     .perms = op->perms, .size = op->size, .optional = op->try_ };
	switch (op->kind) {
	case DSH_BWRAP_RO_BIND:
		e.readonly = true;
		e.action = DSH_MOUNT_BIND;
		break;
	case DSH_BWRAP_BIND:
		e.action = DSH_MOUNT_BIND;
		break;
	case DSH_BWRAP_DEV_BIND:
		e.devices = true;
		e.action = DSH_MOUNT_BIND;
		break;
	case DSH_BWRAP_TMPFS:
		e.action = DSH_MOUNT_TMPFS;
		break;
	case DSH_BWRAP_REMOUNT_RO:
		e.action = DSH_MOUNT_REMOUNT_RO;
		break;
	case DSH_BWRAP_DIR:
		e.action = DSH_MOUNT_MKDIR;
		break;
	case DSH_BWRAP_SYMLINK:
		e.action = DSH_MOUNT_SYMLINK;
		break;
	case DSH_BWRAP_FILE:
		e.action = DSH_MOUNT_FILE;
		break;
	case DSH_BWRAP_RO_BIND_DATA:
		e.readonly = true;
		e.action = DSH_MOUNT_BIND_DATA;
		break;
	case DSH_BWRAP_BIND_DATA:
		e.action = DSH_MOUNT_BIND_DATA;
		break;
	case DSH_BWRAP_CHMOD:
		e.action = DSH_MOUNT_CHMOD;
		break;
	case DSH_BWRAP_MQUEUE:
		e.action = DSH_MOUNT_MQUEUE;
		e.perms = 0755;
		break;
	case DSH_BWRAP_PROC:
	case DSH_BWRAP_DEV:
	default:
		return cannot(err, "%s: not applied by dshbox bwrap yet", why);
	}
	return push_op(bp, e, why, err);
}

static int add_attr(struct dsh_bwrap_plan *bp, const char *dest, unsigned long long set, unsigned long long clr,
		    const char *why, struct dsh_error **err)
{
	return push_op(bp, (struct dsh_mount_entry){ .action = DSH_MOUNT_ATTR, .path = (char *)dest, .attr_set = set,
						     .attr_clr = clr, .fd = -1 },
		       why, err);
}

/* A writable destination: Landlock's grant is opened inside the finished tree. */
static int note_writable(struct dsh_bwrap_plan *bp, const char *dest, struct dsh_error **err)
{
	bp->any_writable = true;
	return dsh_strv_push(&bp->writable, dest) < 0 ? dsh_err_sys(err, ENOMEM, "bwrap plan") : 0;
}

/*
 * A root built from nothing, as bubblewrap does: a fresh tmpfs becomes "/" (pivot_root), then
 * every operation in argv order inside it — binds from the host's tree (cloned before), names
 * made only inside tmpfs mounts of this run.  The mount plan stays empty.
 */
static int translate_new_root(const struct dsh_bwrap_args *a, struct dsh_bwrap_plan *bp, struct dsh_error **err)
{
	struct dsh_mount_plan *m = bp->mounts;
	int r = push_op(bp, (struct dsh_mount_entry){ .action = DSH_MOUNT_NEWROOT, .path = "/", .fd = -1 },
			"new root (tmpfs, pivot_root)", err);
	/* bubblewrap's new root is a tmpfs its owner may write: Landlock leaves that to the mounts. */
	if (r >= 0)
		r = note_writable(bp, "/", err);
	for (size_t i = 0; i < a->n_ops && r >= 0; i++) {
		const struct dsh_bwrap_op *op = &a->ops[i];
		_cleanup_free_ char *why = NULL;
		if (asprintf(&why, "%s %s%s%s", opname(op), op->source ? op->source : "", op->source ? " " : "",
			     op->dest) < 0)
			return dsh_err_sys(err, ENOMEM, "bwrap plan");
		if (op->dest[0] != '/')
			return cannot(err, "%s: a relative destination is not applied by dshbox bwrap", why);
		/* Codex's probe starts with --tmpfs /: first, with bubblewrap's mode and no size, it is
		   the new root itself (a fresh tmpfs of mode 0755), which is already there. */
		if (i == 0 && op->kind == DSH_BWRAP_TMPFS && strcmp(op->dest, "/") == 0 && op->perms == 0755 &&
		    !op->size) {
			if (dsh_mount_plan_note(m, "--tmpfs / first: the new root is that tmpfs") < 0)
				return dsh_err_sys(err, ENOMEM, "bwrap plan");
			continue;
		}
		/* A mount stacked on the new root would not be seen (lookups start below it). */
		if (strcmp(op->dest, "/") == 0)
			return cannot(err, "%s: a mount on / itself is not applied by dshbox bwrap yet (only --ro-bind / / "
					   "first)", why);
		if (is_bind(op->kind) && (r = check_source(op, err)) != 0) {
			if (r < 0)
				return r;
			r = 0;
			continue;
		}
		if (op->kind == DSH_BWRAP_PROC || op->kind == DSH_BWRAP_DEV) {
			bool dev = op->kind == DSH_BWRAP_DEV;
			if (strcmp(op->dest, dev ? "/dev" : "/proc") != 0)
				return cannot(err, "%s: not applied by dshbox bwrap yet (only %s)", why, dev ? "/dev" : "/proc");
			*(dev ? &m->dev : &m->proc) = true;
			bool mq = false;
			for (size_t k = i + 1; dev && k < a->n_ops; k++)
				mq |= a->ops[k].kind == DSH_BWRAP_MQUEUE && strcmp(a->ops[k].dest, "/dev/mqueue") == 0;
			r = push_op(bp, (struct dsh_mount_entry){ .action = dev ? DSH_MOUNT_DEV : DSH_MOUNT_PROC,
								  .path = (char *)op->dest, .fd = -1, .dev_mqueue = mq },
				    why, err);
			continue;
		}
		if ((r = add_ordered(bp, op, why, err)) < 0)
			return r;
		if (op->kind == DSH_BWRAP_BIND || op->kind == DSH_BWRAP_DEV_BIND || op->kind == DSH_BWRAP_TMPFS ||
		    op->kind == DSH_BWRAP_BIND_DATA)
			r = note_writable(bp, op->dest, err);
	}
	if (r < 0)
		return r;
	if (!m->proc)
		return cannot(err, "a new root without --proc /proc is not applied by dshbox bwrap yet");
	bp->new_root = true;
	bp->config.mode = bp->any_writable ? DSH_MODE_WORKSPACE_WRITE : DSH_MODE_READ_ONLY;
	return 0;
}

/*
 * An absent destination under a writable bind of the host's tree: held absent by an r- rule the
 * runtime broker enforces, nothing mounted and nothing made on the host (bwrap/absent.h).  Without
 * the broker nothing would hold it: refused.
 */
static int hold_absent(struct dsh_bwrap_plan *bp, const struct dsh_bwrap_op *op, const char *why,
		       struct dsh_error **err)
{
	if (bp->strict)
		return cannot(err, "%s: %s does not exist; dshbox makes no name on the host and holds it absent with "
				   "its runtime broker, which --dshbox-compat=strict turns off", why, op->dest);
	_cleanup_free_ char *canon = dsh_bwrap_absent_canonical(op->dest);
	if (!canon)
		return dsh_err_sys(err, errno, "%s: resolve %s", why, op->dest);
	/* A rule's "{{" would be read as an expansion: such a name cannot be held by its spelling. */
	if (strstr(canon, "{{"))
		return cannot(err, "%s: %s does not exist and its name cannot be held absent", why, canon);
	_cleanup_free_ char *esc = dsh_glob_escape(canon), *held = NULL;
	if (!esc || dsh_strv_pushf(&bp->config.access, "r- %s", esc) < 0 ||
	    asprintf(&held, "%s: held absent, nothing made on the host; the broker refuses making it", why) < 0)
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	/* In argv order: still absent when the tree is built (checked there), else the run fails. */
	return push_op(bp, (struct dsh_mount_entry){ .action = DSH_MOUNT_ABSENT, .path = (char *)op->dest, .fd = -1 },
		       held, err);
}

/* Codex's --perms 555 --tmpfs X --remount-ro X: X held absent is no mount to remount. */
static int note_held_remount(struct dsh_mount_plan *m, const char *why, struct dsh_error **err)
{
	_cleanup_free_ char *n = NULL;
	if (asprintf(&n, "%s: held absent, nothing to remount", why) < 0 || dsh_mount_plan_note(m, n) < 0)
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	return 0;
}

/* After the host tree's operations: what the stages need of the plan, and the mode it implies. */
static int finish_host_root(struct dsh_bwrap_plan *bp, bool root_rw, struct dsh_error **err)
{
	struct dsh_mount_plan *m = bp->mounts;
	int r;
	/* The lock stage writes the nested user namespace's id maps through /proc/self, which the
	   read-only root covers unless a fresh procfs is mounted (SPEC 3.3's pitfall). */
	if (!m->proc && !root_rw)
		return cannot(err, "--ro-bind / / without --proc /proc is not applied by dshbox bwrap yet");
	/* dshbox's /dev is read-only once made: the mount point of --mqueue /dev/mqueue is made with it. */
	bool dev_mqueue = false;
	for (size_t i = 0; m->dev && i < m->n_ordered; i++)
		if (m->ordered[i].action == DSH_MOUNT_MQUEUE && strcmp(m->ordered[i].path, "/dev/mqueue") == 0)
			dev_mqueue = true;
	for (size_t i = 0; dev_mqueue && i < m->n; i++)
		if (m->entries[i].action == DSH_MOUNT_DEV)
			m->entries[i].dev_mqueue = true;
	if (m->dev) {
		/* Right after the nodev pass, before the operations in argv order. */
		if ((r = add_attr(bp, "/dev", 0, MOUNT_ATTR_NODEV, "--dev /dev (its devices)", err)) < 0)
			return r;
		struct dsh_mount_entry last = m->ordered[m->n_ordered - 1];
		memmove(&m->ordered[2], &m->ordered[1], (m->n_ordered - 2) * sizeof(*m->ordered));
		m->ordered[1] = last;
	}
	if (m->private_tmp && dsh_strv_push(&m->creatable, "/tmp") < 0)
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	bp->config.mode = bp->any_writable ? DSH_MODE_WORKSPACE_WRITE : DSH_MODE_READ_ONLY;
	return 0;
}

/*
 * bubblewrap applies operations in argv order, a later mount covering an earlier one; dshbox's plan
 * is applied parents first.  An operation becomes a plan entry when it is one (the table in
 * docs/bwrap.md) and nothing before it in the plan lies beneath its destination, so that sorting
 * cannot change the result; from the first one that is not, the rest are applied in argv order
 * after the sorted entries (ns/plan.h's ordered operations).  --dev /dev and --proc /proc are always plan entries,
 * refused after an ordered operation beneath them.
 */
static int translate(const struct dsh_bwrap_args *a, struct dsh_bwrap_plan *bp, struct dsh_error **err)
{
	/*
	 * bubblewrap mounts everything on a fresh root in argv order, so a --ro-bind / / covers every
	 * operation before it: those happened inside the tmpfs it hides (sandbox-runtime binds its proxy
	 * socket first).  They are checked as bubblewrap checks them (a missing source fails) and left
	 * out; the tree starts at the last --ro-bind / /.
	 */
	size_t first = a->n_ops;
	for (size_t i = 0; i < a->n_ops; i++)
		if (is_bind(a->ops[i].kind) && strcmp(a->ops[i].source, "/") == 0 && strcmp(a->ops[i].dest, "/") == 0)
			first = i;
	if (first == a->n_ops)
		return translate_new_root(a, bp, err);
	/* The host's whole tree: read-only (--ro-bind), writable (--bind), with its devices (--dev-bind). */
	const struct dsh_bwrap_op *root = &a->ops[first];
	bool root_rw = root->kind != DSH_BWRAP_RO_BIND;
	_cleanup_free_ char *root_why = NULL;
	if (asprintf(&root_why, "%s / /", opname(root)) < 0)
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	struct dsh_mount_plan *m = bp->mounts;
	int r;
	for (size_t i = 0; i < first; i++) {
		const struct dsh_bwrap_op *op = &a->ops[i];
		if (op->dest[0] != '/')
			return cannot(err, "%s %s: a relative destination is not applied by dshbox bwrap", opname(op),
				      op->dest);
		if (is_bind(op->kind) && (r = check_source(op, err)) < 0)
			return r;
		_cleanup_free_ char *n = NULL;
		if (asprintf(&n, "left out %s %s: covered by the %s after it", opname(op), op->dest, root_why) < 0 ||
		    dsh_mount_plan_note(m, n) < 0)
			return dsh_err_sys(err, ENOMEM, "bwrap plan");
	}
	/* A writable root is the plan's root entry with nothing made read-only (ns/plan.h's ro_root). */
	m->ro_root = !root_rw;
	r = dsh_mount_plan_push(m, "/", DSH_MOUNT_RO_ROOT, root_why, err);
	if (r < 0)
		return r;
	/* bubblewrap's binds are nosuid, and nodev but for --dev-bind, all the way down: device nodes
	   of the host tree cannot be opened, only those of --dev and --dev-bind.  First of the ordered
	   operations, with the plan's minimal /dev given its devices back right after. */
	_cleanup_free_ char *attr_why = NULL;
	if (asprintf(&attr_why, "%s (%s)", root_why, root->kind == DSH_BWRAP_DEV_BIND ? "nosuid" : "nodev, nosuid") < 0)
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	if ((r = add_attr(bp, "/", (root->kind == DSH_BWRAP_DEV_BIND ? 0 : MOUNT_ATTR_NODEV) | MOUNT_ATTR_NOSUID, 0,
			  attr_why, err)) < 0)
		return r;
	bool have_ws = false, ordered = false;
	if (root_rw) {
		if ((r = add_writable(bp, "/", &have_ws, err)) < 0 || (r = note_writable(bp, "/", err)) < 0)
			return r;
	}
	_cleanup_free_ bool *skip = calloc(a->n_ops + 1, sizeof(bool)), *held = calloc(a->n_ops + 1, sizeof(bool));
	if (!skip || !held)
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	for (size_t i = first + 1; i < a->n_ops; i++) {
		const struct dsh_bwrap_op *op = &a->ops[i];
		_cleanup_free_ char *why = NULL, *path = NULL;
		if (asprintf(&why, "%s %s%s%s", opname(op), op->source ? op->source : "", op->source ? " " : "",
			     op->dest) < 0)
			return dsh_err_sys(err, ENOMEM, "bwrap plan");
		if (op->dest[0] != '/')
			return cannot(err, "%s: a relative destination is not applied by dshbox bwrap", why);
		/* A mount stacked on / would not be seen (lookups start below it). */
		if (strcmp(op->dest, "/") == 0)
			return cannot(err, "%s: a mount on / itself is not applied by dshbox bwrap yet (only --ro-bind / / "
					   "first)", why);
		if (is_bind(op->kind) && (r = check_source(op, err)) != 0) {
			if (r < 0)
				return r;
			_cleanup_free_ char *n = NULL;
			if (asprintf(&n, "skipped %s: the source does not exist", why) < 0 || dsh_mount_plan_note(m, n) < 0)
				return dsh_err_sys(err, ENOMEM, "bwrap plan");
			skip[i] = true;
			continue;
		}
		if (op->kind == DSH_BWRAP_REMOUNT_RO && dsh_bwrap_absent_remount(a->ops, first + 1, i, skip, held)) {
			if ((r = note_held_remount(m, why, err)) < 0)
				return r;
			continue;
		}
		if (dsh_bwrap_absent_held(a->ops, first + 1, i, skip, held)) {
			held[i] = true;
			if ((r = hold_absent(bp, op, why, err)) < 0)
				return r;
			continue;
		}
		bool writable = (op->kind == DSH_BWRAP_BIND || op->kind == DSH_BWRAP_DEV_BIND ||
				 op->kind == DSH_BWRAP_TMPFS || op->kind == DSH_BWRAP_BIND_DATA);
		if ((op->kind == DSH_BWRAP_DEV && strcmp(op->dest, "/dev") == 0) ||
		    (op->kind == DSH_BWRAP_PROC && strcmp(op->dest, "/proc") == 0)) {
			for (size_t k = 0; k < m->n_ordered; k++)
				if (dsh_path_is_beneath(m->ordered[k].path, op->dest))
					return cannot(err, "%s after %s: not applied by dshbox bwrap yet", why, m->ordered[k].why);
			bool dev = op->kind == DSH_BWRAP_DEV;
			if (dev ? m->dev : m->proc)
				continue; /* twice: the same fresh instance */
			*(dev ? &m->dev : &m->proc) = true;
			r = dsh_mount_plan_push(m, op->dest, dev ? DSH_MOUNT_DEV : DSH_MOUNT_PROC, why, err);
			if (r < 0)
				return r;
			continue;
		}
		/* Could it be a plan entry, and does the plan order keep the argv's result? */
		enum dsh_mount_action act = DSH_MOUNT_RO_ROOT;
		/* The plan's private /tmp has mode 1777; bubblewrap's tmpfs has the argv's mode (0755 by
		   default), so only a --perms 1777 /tmp is that entry, any other one is applied in order. */
		if (!ordered && op->kind == DSH_BWRAP_TMPFS && strcmp(op->dest, "/tmp") == 0 && !op->size &&
		    op->perms == 01777 && !m->private_tmp)
			act = DSH_MOUNT_TMP;
		else if (!ordered && (op->kind == DSH_BWRAP_BIND || op->kind == DSH_BWRAP_RO_BIND) &&
			 (path = self_bind_path(op)) && !(m->private_tmp && strcmp(path, "/tmp") == 0))
			act = op->kind == DSH_BWRAP_RO_BIND ? DSH_MOUNT_BIND_RO
			      : m->private_tmp && dsh_path_is_beneath(path, "/tmp") ? DSH_MOUNT_BIND_RW_TMP
										    : DSH_MOUNT_BIND_RW;
		const char *target = path ? path : op->dest;
		for (size_t k = 1; act != DSH_MOUNT_RO_ROOT && k < m->n; k++)
			if (m->entries[k].action != DSH_MOUNT_DEV && m->entries[k].action != DSH_MOUNT_PROC &&
			    dsh_path_is_beneath(m->entries[k].path, target))
				act = DSH_MOUNT_RO_ROOT;
		if (act == DSH_MOUNT_RO_ROOT) {
			ordered = true;
			if ((r = add_ordered(bp, op, why, err)) < 0)
				return r;
		} else {
			if (act == DSH_MOUNT_TMP)
				m->private_tmp = m->tmp_writable = true;
			if ((r = dsh_mount_plan_push(m, target, act, why, err)) < 0)
				return r == -ENOENT ? dsh_err_sys(err, ENOENT, "Can't find source path %s", op->source) : r;
		}
		if (writable && op->kind != DSH_BWRAP_TMPFS && (r = add_writable(bp, op->dest, &have_ws, err)) < 0)
			return r;
		if (op->kind == DSH_BWRAP_TMPFS && strcmp(op->dest, "/tmp") != 0 &&
		    (r = add_writable(bp, op->dest, &have_ws, err)) < 0)
			return r;
		if (writable && (r = note_writable(bp, target, err)) < 0)
			return r;
	}
	return finish_host_root(bp, root_rw, err);
}

static int add_socket_masks(struct dsh_bwrap_plan *bp, const struct dsh_bwrap_args *a, struct dsh_error **err)
{
	char *const *socks = dsh_policy_host_sockets(bp->policy);
	for (size_t i = 0; socks && socks[i]; i++) {
		char real[PATH_MAX];
		if (!realpath(socks[i], real))
			continue; /* absent: nothing to mask */
		/* A socket the argv binds in stays reachable: an addition never takes what the argv gives. */
		bool bound = false;
		for (size_t k = 0; k < a->n_ops; k++)
			if ((a->ops[k].kind == DSH_BWRAP_BIND || a->ops[k].kind == DSH_BWRAP_RO_BIND) &&
			    strcmp(a->ops[k].dest, "/") != 0 &&
			    (dsh_path_is_beneath(real, a->ops[k].dest) || dsh_path_is_beneath(socks[i], a->ops[k].dest)))
				bound = true;
		if (bound || (bp->mounts->private_tmp && dsh_path_is_beneath(real, "/tmp")))
			continue;
		int r = dsh_mount_plan_push(bp->mounts, real, DSH_MOUNT_MASK_FILE, "dshbox default: host daemon socket",
					    err);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	return 0;
}

/* What dshbox adds on top of the argv (SPEC 8), said in --dry-run.  -ENOMEM or 0. */
static int list_additions(const struct dsh_bwrap_args *a, const struct dsh_bwrap_settings *s, struct dsh_bwrap_plan *bp)
{
	char ***d = &bp->defaults;
	int r = 0;
	if (bp->seccomp.insns)
		r |= dsh_strv_push(d, bp->nested_userns
					      ? "seccomp: dshbox's deny list (keyctl, bpf, TIOCSTI, ...; refusals are EPERM); "
						"new user namespaces and their mounts stay allowed, as under bubblewrap"
					      : "seccomp: dshbox's deny list (mount family, new user namespaces, keyctl, bpf, "
						"TIOCSTI, ...; refusals are EPERM)");
	if (bp->notify.insns)
		r |= dsh_strv_push(d, "runtime broker (SPEC 3.12): creations, renames, removals and metadata changes "
				      "carried out by the broker");
	if (!s->strict && !a->unshare_ipc)
		r |= dsh_strv_push(d, "namespace: ipc");
	if (!a->unshare_pid)
		r |= dsh_strv_push(d, "namespace: pid (always: dshbox's init reaps and forwards signals)");
	if (a->as_pid_1)
		r |= dsh_strv_push(d, "--as-pid-1: the command is pid 1 of a pid namespace nested in the sandbox's; "
				      "dshbox's init, the broker, stays outside it as its parent");
	if (bp->opts.protect_sockets)
		r |= dsh_strv_push(d, "host daemon sockets masked (docker, podman, the session bus, ssh and gpg "
				      "agents), except those the argv binds");
	if (bp->landlock && bp->nested_userns)
		r |= dsh_strv_push(d, "Landlock scopes only (signals and abstract sockets outside the sandbox): its file "
				      "layer would refuse the id maps and mounts of a user namespace made inside");
	else if (bp->landlock)
		r |= dsh_strv_push(d, "Landlock (second wall): writes beneath the argv's writable destinations (and the policy's /tmp and $TMPDIR)");
	if (bp->caps)
		r |= dsh_strv_pushf(d, "capabilities: only the argv's (%#llx), held in the nested user namespace; "
				       "no_new_privs; mounts locked there", bp->caps);
	else
		r |= dsh_strv_push(d, "capabilities: all dropped; no_new_privs; mounts locked in a nested user namespace");
	return r < 0 ? -ENOMEM : 0;
}

/*
 * --info-fd and the first line of --json-status-fd, bubblewrap's JSON: init's pid as the caller sees
 * it and the inode numbers of the namespaces, written by init once they are final (the command's).
 * init then closes its copies; the supervisor closed its --info-fd copy after the clone, so the
 * reader sees the end there.
 */
static int write_info(void *data, pid_t pid, struct dsh_error **err)
{
	struct dsh_bwrap_plan *bp = data;
	struct dsh_buf lines = { 0 }, inline_ = { 0 };
	dsh_buf_addf(&lines, "{\n    \"child-pid\": %d", (int)pid);
	dsh_buf_addf(&inline_, "{ \"child-pid\": %d", (int)pid);
	for (size_t i = 0; i < 6; i++) {
		char path[64];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_names[i]);
		if (!bp->list_ns[i] || stat(path, &st) < 0)
			continue;
		dsh_buf_addf(&lines, ",\n    \"%s-namespace\": %ju", ns_names[i], (uintmax_t)st.st_ino);
		dsh_buf_addf(&inline_, ", \"%s-namespace\": %ju", ns_names[i], (uintmax_t)st.st_ino);
	}
	dsh_buf_add(&lines, "\n}\n");
	dsh_buf_add(&inline_, " }\n");
	_cleanup_free_ char *a = dsh_buf_steal(&lines), *b = dsh_buf_steal(&inline_);
	if (!a || !b)
		return dsh_err_sys(err, ENOMEM, "--info-fd");
	int r = 0;
	if (bp->info_fd >= 0) {
		if (dsh_write_all(bp->info_fd, a, strlen(a)) < 0)
			r = dsh_err_sys(err, errno, "Write to info_fd");
		close(bp->info_fd);
	}
	if (r >= 0 && bp->json_status_fd >= 0) {
		if (dsh_write_all(bp->json_status_fd, b, strlen(b)) < 0)
			r = dsh_err_sys(err, errno, "Write to json_status_fd");
		close(bp->json_status_fd);
	}
	return r;
}

int dsh_bwrap_plan_build(const struct dsh_bwrap_args *a, const struct dsh_bwrap_settings *s,
			 struct dsh_bwrap_plan **ret, struct dsh_error **err)
{
	int r = check_options(a, s->strict, err);
	if (r < 0)
		return r;
	struct dsh_bwrap_plan *bp = calloc(1, sizeof(*bp));
	if (!bp)
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	bp->strict = s->strict;
	bp->pass_fds = s->pass_fds;
	bp->n_pass_fds = s->n_pass_fds;
	bp->user_seccomp = s->user_seccomp;
	bp->n_user_seccomp = s->n_user_seccomp;
	bp->argv0 = a->argv0;
	bp->info_fd = a->info_fd;
	bp->json_status_fd = a->json_status_fd;
	bool listed[6] = { a->unshare_cgroup || a->unshare_cgroup_try, a->unshare_ipc, true, a->unshare_net,
			   a->unshare_pid, a->unshare_uts };
	memcpy(bp->list_ns, listed, sizeof(listed));
	if ((r = plan_caps(a, &bp->caps, err)) < 0 || (r = check_mqueue(a, err)) < 0)
		goto fail;
	dsh_config_init(&bp->config);
	if (!(bp->mounts = dsh_mount_plan_new())) {
		r = dsh_err_sys(err, ENOMEM, "bwrap plan");
		goto fail;
	}
	if ((r = translate(a, bp, err)) < 0)
		goto fail;
	/* bubblewrap's /dev has a core symlink to /proc/kcore; dshbox run's has none. */
	for (size_t i = 0; i < bp->mounts->n; i++)
		bp->mounts->entries[i].dev_core |= bp->mounts->entries[i].action == DSH_MOUNT_DEV;
	for (size_t i = 0; i < bp->mounts->n_ordered; i++)
		bp->mounts->ordered[i].dev_core |= bp->mounts->ordered[i].action == DSH_MOUNT_DEV;

	/* The policy behind the plan: what the broker and Landlock ask about.  The tree itself comes
	   from the argv; the policy agrees with it (its writable roots are the argv's binds). */
	struct dsh_config *c = &bp->config;
	c->protect_defaults = false;          /* bubblewrap protects no names of its own */
	c->network = !a->unshare_net;
	c->protect_sockets = !s->strict;
	c->runtime_broker = !s->strict;
	c->backend = DSH_BACKEND_LINUX_NS;
	if (a->chdir) {
		free(c->cwd);
		if (!(c->cwd = strdup(a->chdir))) {
			r = dsh_err_sys(err, ENOMEM, "bwrap plan");
			goto fail;
		}
	}
	if ((r = dsh_policy_new(c, s->envp, s->cwd, &bp->policy, err)) < 0 ||
	    (r = dsh_run_options_init(&bp->opts, c, s->envp, err)) < 0)
		goto fail;
	/* A new root shows only what the argv binds: no host socket is there to mask. */
	if (!s->strict && !bp->new_root && (r = add_socket_masks(bp, a, err)) < 0)
		goto fail;
	dsh_mount_plan_sort(bp->mounts);
	struct dsh_sandbox_plan *sb = &bp->sb;
	sb->ns.net = a->unshare_net;
	sb->ns.uts = a->unshare_uts;
	sb->ns.share_ipc = !(a->unshare_ipc || !s->strict);
	/* Every kernel dshbox runs on has cgroup namespaces (4.6): -try always finds one. */
	sb->ns.cgroup = a->unshare_cgroup || a->unshare_cgroup_try;
	sb->ns.hostname = a->hostname;
	/* --uid/--gid: the nested user namespace maps them to the caller's ids, as bubblewrap's does. */
	sb->ids.uid = getuid();
	sb->ids.gid = getgid();
	sb->ids.inner_uid = a->have_uid ? a->uid : getuid();
	sb->ids.inner_gid = a->have_gid ? a->gid : getgid();
	sb->ids.inner = sb->ids.inner_uid != getuid() || sb->ids.inner_gid != getgid();
	sb->proc.cwd_fallback = a->chdir == NULL;
	sb->proc.keep_caps = bp->caps;
	sb->proc.as_pid_1 = a->as_pid_1;
	sb->proc.lock_files = a->lock_files;

	/* bubblewrap lets the command make user namespaces unless the argv says --disable-userns
	   (sandbox-runtime's seccomp helper makes one): the list then allows them and the mount calls a
	   sandbox inside needs, while dshbox's own mounts stay locked. */
	bp->nested_userns = !a->disable_userns && !a->assert_userns_disabled;
	int abi = s->strict ? 0 : dsh_landlock_abi();
	bp->landlock = abi >= 1;
	if (bp->landlock &&
	    (r = dsh_landlock_spec_for_sandbox(bp->policy, abi, bp->mounts->dev ? DSH_LANDLOCK_PRIVATE_DEV_SHM : 0,
					       &bp->ll, err)) < 0)
		goto fail;
	/* Landlock follows the argv: every writable destination, as the finished tree shows it. */
	for (size_t i = 0; bp->landlock && bp->writable && bp->writable[i]; i++)
		if ((r = dsh_landlock_spec_add(&bp->ll, bp->writable[i], -1, dsh_landlock_fs_rw(abi), err)) < 0)
			goto fail;
	if (bp->landlock && bp->nested_userns) {
		/* A sandbox inside writes its id maps in /proc and mounts its own tree, and Landlock's file
		   layer refuses both: an addition must not take what the argv allows.  The locked mount tree
		   stays the wall; only the scopes remain (ABI 6). */
		dsh_landlock_spec_clear(&bp->ll);
		dsh_landlock_spec_init(&bp->ll, abi);
		bp->ll.handled_fs = 0;
		bp->landlock = bp->ll.scoped != 0;
	}
	struct dsh_seccomp_opts so = { .nested_sandbox = bp->nested_userns };
	if (!s->strict || a->disable_userns || a->assert_userns_disabled || a->new_session)
		if ((r = dsh_seccomp_compile(&so, &bp->seccomp, err)) < 0)
			goto fail;
	if (bp->opts.runtime_broker) {
		/* Inside, the command may make namespaces of its own (nested user namespaces allowed, or
		   capabilities kept): paths start at its root, in its mount namespace. */
		bp->broker = (struct dsh_broker){ .policy = bp->policy, .nested = bp->nested_userns || bp->caps,
						  .own_dev = bp->mounts->dev };
		/* Sockets the argv binds in (a proxy's) stay reachable: the broker leaves sockets alone here. */
		if ((r = dsh_seccomp_compile_notify(&bp->notify, false, err)) < 0)
			goto fail;
	}

	if ((r = list_additions(a, s, bp)) < 0) {
		r = dsh_err_sys(err, ENOMEM, "bwrap plan");
		goto fail;
	}
	sb->policy = bp->policy;
	sb->opts = &bp->opts;
	sb->mounts = bp->mounts;
	sb->landlock = bp->landlock ? &bp->ll : NULL;
	sb->seccomp = bp->seccomp.insns ? &bp->seccomp : NULL;
	sb->notify = bp->notify.insns ? &bp->notify : NULL;
	sb->broker = &bp->broker;
	sb->extra_seccomp = bp->user_seccomp;
	sb->n_extra_seccomp = bp->n_user_seccomp;
	if (bp->info_fd >= 0 || bp->json_status_fd >= 0) {
		sb->hooks.on_locked = write_info;
		sb->hooks.on_locked_data = bp;
	}
	if (bp->info_fd >= 0) {
		sb->hooks.close_after_spawn = &bp->info_fd;
		sb->hooks.n_close_after_spawn = 1;
	}
	*ret = bp;
	return 0;
fail:
	dsh_bwrap_plan_free(bp);
	return r;
}

char *const *dsh_bwrap_plan_defaults(const struct dsh_bwrap_plan *plan)
{
	return plan->defaults;
}

char *dsh_bwrap_plan_render(const struct dsh_bwrap_plan *bp)
{
	struct dsh_buf b = { 0 };
	dsh_buf_addf(&b, "backend: linux-ns (dshbox bwrap%s)\n", bp->strict ? ", --dshbox-compat=strict" : "");
	_cleanup_free_ char *rest = dsh_sandbox_plan_render(&bp->sb, bp->defaults);
	if (rest)
		dsh_buf_add(&b, rest);
	return dsh_buf_steal(&b);
}

int dsh_bwrap_plan_run(struct dsh_bwrap_plan *bp, char *const *argv, char *const *envp,
		       struct dsh_run_result *ret, struct dsh_error **err)
{
	/* --argv0: the command is looked up by its name and told another (bubblewrap's execvp). */
	_cleanup_free_ char **told = NULL;
	if (bp->argv0 && argv[0]) {
		size_t n = 0;
		while (argv[n])
			n++;
		if (!(told = calloc(n + 1, sizeof(*told))))
			return dsh_err_sys(err, ENOMEM, "--argv0");
		memcpy(told, argv, n * sizeof(*told));
		told[0] = (char *)bp->argv0;
	}
	/* bubblewrap sets PWD to the directory the command starts in, after the argv's environment
	   options: the chdir stage fills the slot (supervisor/sandbox.h). */
	size_t n_env = 0;
	while (envp && envp[n_env])
		n_env++;
	_cleanup_free_ char **env = calloc(n_env + 2, sizeof(*env));
	_cleanup_free_ char *pwd = calloc(1, DSH_PWD_SLOT);
	if (!env || !pwd)
		return dsh_err_sys(err, ENOMEM, "PWD");
	size_t out = 0;
	for (size_t i = 0; i < n_env; i++)
		if (strncmp(envp[i], "PWD=", 4) != 0)
			env[out++] = envp[i];
	snprintf(pwd, DSH_PWD_SLOT, "PWD=/");
	env[out] = pwd;
	bp->sb.proc.pwd_slot = pwd;
	struct dsh_run_request req = { .argv = told ? told : argv, .envp = env, .preserve_fds = bp->pass_fds,
				       .n_preserve_fds = bp->n_pass_fds };
	bp->sb.proc.exec_name = told ? argv[0] : NULL;
	int r = dsh_sandbox_run(&bp->sb, &req, ret, err);
	bp->sb.proc.pwd_slot = NULL;
	return r;
}

void dsh_bwrap_plan_free(struct dsh_bwrap_plan *bp)
{
	if (!bp)
		return;
	dsh_mount_plan_free(bp->mounts);
	dsh_landlock_spec_clear(&bp->ll);
	dsh_seccomp_prog_clear(&bp->seccomp);
	dsh_seccomp_prog_clear(&bp->notify);
	dsh_strv_free(bp->defaults);
	dsh_strv_free(bp->writable);
	dsh_policy_free(bp->policy);
	dsh_run_options_clear(&bp->opts);
	dsh_config_clear(&bp->config);
	free(bp);
}
