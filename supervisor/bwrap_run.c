/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "ns/plan_entries.h"
#include "supervisor/bwrap_run.h"
#include "supervisor/probe.h"
#include "supervisor/sandbox.h"

/* `dshbox bwrap`: bubblewrap's operations as a dshbox mount plan (supervisor/bwrap_run.h). */

struct dsh_bwrap_plan {
	bool strict;
	struct dsh_config config;
	struct dsh_policy *policy;
	struct dsh_run_options opts;
	struct dsh_mount_plan *mounts;
	bool new_net;
	bool landlock;
	struct dsh_landlock_spec ll;
	struct dsh_seccomp_prog seccomp;
	struct dsh_seccomp_prog notify;
	struct dsh_broker broker;
	char **defaults;
};

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
	if (a->cap_add)
		return cannot(err, "%s: dshbox bwrap runs the command with no capabilities", a->cap_add[0]);
	if (a->have_uid && a->uid != getuid())
		return cannot(err, "--uid %u: dshbox bwrap maps the caller's uid (%u) to itself", (unsigned)a->uid,
			      (unsigned)getuid());
	if (a->have_gid && a->gid != getgid())
		return cannot(err, "--gid %u: dshbox bwrap maps the caller's gid (%u) to itself", (unsigned)a->gid,
			      (unsigned)getgid());
	if (a->hostname)
		return cannot(err, "--hostname: dshbox bwrap makes no UTS namespace");
	if (a->unshare_cgroup)
		return cannot(err, "--unshare-cgroup: dshbox bwrap makes no cgroup namespace");
	if (a->as_pid_1)
		return cannot(err, "--as-pid-1: dshbox runs its own init as pid 1 (it reaps and forwards signals)");
	if (a->argv0)
		return cannot(err, "--argv0: not supported by dshbox bwrap yet");
	if (a->seccomp_fd >= 0 || a->n_add_seccomp_fds)
		return cannot(err, "%s: loading a caller's seccomp program is not supported by dshbox bwrap yet",
			      a->seccomp_fd >= 0 ? "--seccomp" : "--add-seccomp-fd");
	if (a->info_fd >= 0)
		return cannot(err, "--info-fd: not supported by dshbox bwrap yet");
	if (a->json_status_fd >= 0)
		return cannot(err, "--json-status-fd: not supported by dshbox bwrap yet");
	/* New user namespaces inside are refused by dshbox's seccomp list: the ask is met only with it. */
	if (strict && (a->disable_userns || a->assert_userns_disabled))
		return cannot(err, "%s: needs dshbox's seccomp list, which --dshbox-compat=strict turns off",
			      a->disable_userns ? "--disable-userns" : "--assert-userns-disabled");
	if (strict && a->new_session)
		return cannot(err, "--new-session: dshbox keeps the session and refuses TIOCSTI with its seccomp "
				   "list, which --dshbox-compat=strict turns off");
	return 0;
}

static const char *opname(const struct dsh_bwrap_op *op)
{
	static char buf[32];
	snprintf(buf, sizeof(buf), "--%s%s", dsh_bwrap_op_to_string(op->kind), op->try_ ? "-try" : "");
	return buf;
}

/* The canonical form of a bind's source, which must name the same place as its destination. */
static int self_bind_path(const struct dsh_bwrap_op *op, char **ret, struct dsh_error **err)
{
	char src[PATH_MAX], dst[PATH_MAX];
	if (!realpath(op->source, src)) {
		int e = errno;
		if (e == ENOENT && op->try_)
			return -ENOENT;
		/* bubblewrap's wording for a missing source. */
		return dsh_err(err, DSH_ERR_USAGE, e, "Can't find source path %s: %s", op->source, strerror(e));
	}
	if (!realpath(op->dest, dst) || strcmp(src, dst) != 0)
		return cannot(err, "%s %s %s: dshbox bwrap binds a path onto itself only (its tree keeps every "
				   "host path's name)", opname(op), op->source, op->dest);
	if (!(*ret = strdup(src)))
		return dsh_err_sys(err, ENOMEM, "bwrap plan");
	return 0;
}

/* bubblewrap applies in argv order and a later mount covers an earlier one; dshbox applies parents
   first.  The two agree unless a later operation lands on a parent of (or on) an earlier one. */
static int check_order(const struct dsh_bwrap_args *a, struct dsh_error **err)
{
	for (size_t j = 1; j < a->n_ops; j++)
		for (size_t i = 1; i < j; i++)
			if (dsh_path_is_beneath(a->ops[i].dest, a->ops[j].dest))
				return cannot(err, "%s %s after %s %s: a later mount over an earlier one's parent is not "
						   "applied by dshbox bwrap yet",
					      opname(&a->ops[j]), a->ops[j].dest, dsh_bwrap_op_to_string(a->ops[i].kind),
					      a->ops[i].dest);
	return 0;
}

static int translate(const struct dsh_bwrap_args *a, struct dsh_bwrap_plan *bp, struct dsh_error **err)
{
	if (a->n_ops == 0 || a->ops[0].kind != DSH_BWRAP_RO_BIND || strcmp(a->ops[0].source, "/") != 0 ||
	    strcmp(a->ops[0].dest, "/") != 0)
		return cannot(err, "the first operation must be --ro-bind / /: a root built from nothing is not "
				   "supported by dshbox bwrap yet (its tree is the host's, path-transparent)");
	int r = check_order(a, err);
	if (r < 0)
		return r;
	struct dsh_mount_plan *m = bp->mounts;
	m->ro_root = true;
	if ((r = dsh_mount_plan_push(m, "/", DSH_MOUNT_RO_ROOT, "--ro-bind / /", err)) < 0)
		return r;
	bool have_bind = false;
	for (size_t i = 1; i < a->n_ops; i++) {
		const struct dsh_bwrap_op *op = &a->ops[i];
		_cleanup_free_ char *why = NULL, *path = NULL;
		if (asprintf(&why, "%s %s%s%s", opname(op), op->source ? op->source : "", op->source ? " " : "",
			     op->dest) < 0)
			return dsh_err_sys(err, ENOMEM, "bwrap plan");
		switch (op->kind) {
		case DSH_BWRAP_DEV:
			if (strcmp(op->dest, "/dev") != 0)
				goto unsupported;
			m->dev = true;
			r = dsh_mount_plan_push(m, "/dev", DSH_MOUNT_DEV, why, err);
			break;
		case DSH_BWRAP_PROC:
			if (strcmp(op->dest, "/proc") != 0)
				goto unsupported;
			m->proc = true;
			r = dsh_mount_plan_push(m, "/proc", DSH_MOUNT_PROC, why, err);
			break;
		case DSH_BWRAP_TMPFS:
			if (strcmp(op->dest, "/tmp") != 0 || op->size)
				goto unsupported;
			m->private_tmp = m->tmp_writable = true;
			r = dsh_mount_plan_push(m, "/tmp", DSH_MOUNT_TMP, why, err);
			if (r >= 0 && op->perms != 01777)
				r = dsh_mount_plan_note(m, "the private /tmp has mode 1777 (the argv asks for a tmpfs of "
							   "its own mode; only the caller's uid exists inside either way)");
			break;
		case DSH_BWRAP_BIND:
		case DSH_BWRAP_RO_BIND:
			r = self_bind_path(op, &path, err);
			if (r == -ENOENT) {
				_cleanup_free_ char *n = NULL;
				if (asprintf(&n, "skipped %s: the source does not exist", why) < 0)
					return dsh_err_sys(err, ENOMEM, "bwrap plan");
				r = dsh_mount_plan_note(m, n);
				break;
			}
			if (r < 0)
				return r;
			if (dsh_path_is_beneath(path, "/proc") || dsh_path_is_beneath(path, "/dev"))
				goto unsupported;
			if (op->kind == DSH_BWRAP_RO_BIND) {
				r = dsh_mount_plan_push(m, path, DSH_MOUNT_BIND_RO, why, err);
			} else {
				bool in_tmp = m->private_tmp && dsh_path_is_beneath(path, "/tmp");
				if (strcmp(path, "/tmp") == 0 && m->private_tmp)
					goto unsupported;
				r = dsh_mount_plan_push(m, path, in_tmp ? DSH_MOUNT_BIND_RW_TMP : DSH_MOUNT_BIND_RW, why, err);
				if (r >= 0 && !have_bind) {
					free(bp->config.workspace);
					if (!(bp->config.workspace = strdup(path)))
						return dsh_err_sys(err, ENOMEM, "bwrap plan");
					have_bind = true;
				} else if (r >= 0 && dsh_strv_pushf(&bp->config.access, "rw %s", path) < 0)
					return dsh_err_sys(err, ENOMEM, "bwrap plan");
			}
			if (r == -ENOENT) /* gone between realpath and lstat */
				r = dsh_err_sys(err, ENOENT, "Can't find source path %s", op->source);
			break;
		case DSH_BWRAP_DEV_BIND:
		case DSH_BWRAP_REMOUNT_RO:
		case DSH_BWRAP_MQUEUE:
		case DSH_BWRAP_DIR:
		case DSH_BWRAP_FILE:
		case DSH_BWRAP_BIND_DATA:
		case DSH_BWRAP_RO_BIND_DATA:
		case DSH_BWRAP_SYMLINK:
		case DSH_BWRAP_CHMOD:
		default:
			goto unsupported;
		}
		if (r < 0)
			return r;
		continue;
unsupported:
		return cannot(err, "%s: not applied by dshbox bwrap yet", why);
	}
	/* The lock stage writes the nested user namespace's id maps through /proc/self, which the
	   read-only root covers unless a fresh procfs is mounted (SPEC 3.3's pitfall). */
	if (!m->proc)
		return cannot(err, "--ro-bind / / without --proc /proc is not applied by dshbox bwrap yet");
	/* A private /tmp hides a writable root under it unless the root is bound inside it: done above
	   by the tmpfs-first order check.  The mode follows from the binds. */
	bp->config.mode = have_bind || m->tmp_writable ? DSH_MODE_WORKSPACE_WRITE : DSH_MODE_READ_ONLY;
	return 0;
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
		for (size_t k = 1; k < a->n_ops; k++)
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
	dsh_config_init(&bp->config);
	if (!(bp->mounts = dsh_mount_plan_new())) {
		r = dsh_err_sys(err, ENOMEM, "bwrap plan");
		goto fail;
	}
	if ((r = translate(a, bp, err)) < 0)
		goto fail;

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
	if (!s->strict && (r = add_socket_masks(bp, a, err)) < 0)
		goto fail;
	dsh_mount_plan_sort(bp->mounts);
	bp->new_net = a->unshare_net;

	int abi = s->strict ? 0 : dsh_landlock_abi();
	bp->landlock = abi >= 1;
	if (bp->landlock &&
	    (r = dsh_landlock_spec_for_sandbox(bp->policy, abi, bp->mounts->dev ? DSH_LANDLOCK_PRIVATE_DEV_SHM : 0,
					       &bp->ll, err)) < 0)
		goto fail;
	if (!s->strict || a->disable_userns || a->assert_userns_disabled || a->new_session)
		if ((r = dsh_seccomp_compile(NULL, &bp->seccomp, err)) < 0)
			goto fail;
	if (bp->opts.runtime_broker) {
		bp->broker = (struct dsh_broker){ .policy = bp->policy };
		if ((r = dsh_seccomp_compile_notify(&bp->notify, err)) < 0)
			goto fail;
	}

	/* What dshbox adds on top of the argv (SPEC 8), said in --dry-run. */
	char ***d = &bp->defaults;
	r = 0;
	if (bp->seccomp.insns)
		r |= dsh_strv_push(d, "seccomp: dshbox's deny list (mount family, new user namespaces, keyctl, bpf, "
				      "TIOCSTI, ...; refusals are EPERM)");
	if (bp->notify.insns)
		r |= dsh_strv_push(d, "runtime broker: creations, renames, metadata changes and pathname-socket "
				      "connects checked against the plan");
	if (!s->strict)
		r |= dsh_strv_push(d, "namespace: ipc");
	if (!a->unshare_pid)
		r |= dsh_strv_push(d, "namespace: pid (always: dshbox's init reaps and forwards signals)");
	if (bp->opts.protect_sockets)
		r |= dsh_strv_push(d, "host daemon sockets masked (docker, podman, the session bus, ssh and gpg "
				      "agents), except those the argv binds");
	if (bp->landlock)
		r |= dsh_strv_push(d, "Landlock (second wall): writes beneath the argv's writable binds, /tmp and $TMPDIR");
	r |= dsh_strv_push(d, "capabilities: all dropped; no_new_privs; mounts locked in a nested user namespace");
	if (r < 0) {
		r = dsh_err_sys(err, ENOMEM, "bwrap plan");
		goto fail;
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
	dsh_buf_addf(&b, "namespaces: user mount pid%s%s\n", bp->strict ? "" : " ipc",
		     bp->new_net ? " net (loopback only)" : "");
	for (size_t i = 0; bp->defaults && bp->defaults[i]; i++)
		dsh_buf_addf(&b, "dshbox adds: %s\n", bp->defaults[i]);
	dsh_buf_addf(&b, "mounts: %zu\n", bp->mounts->n);
	char *m = dsh_mount_plan_render(bp->mounts);
	if (m)
		dsh_buf_add(&b, m);
	free(m);
	return dsh_buf_steal(&b);
}

int dsh_bwrap_plan_run(struct dsh_bwrap_plan *bp, char *const *argv, char *const *envp,
		       struct dsh_run_result *ret, struct dsh_error **err)
{
	struct dsh_run_request req = { .argv = argv, .envp = envp };
	struct dsh_sandbox_spec spec = {
		.policy = bp->policy,
		.opts = &bp->opts,
		.mounts = bp->mounts,
		.req = &req,
		.new_net = bp->new_net,
		.share_ipc = bp->strict,
		.uid = getuid(),
		.gid = getgid(),
		.landlock = bp->landlock ? &bp->ll : NULL,
		.seccomp = bp->seccomp.insns ? &bp->seccomp : NULL,
		.notify = bp->notify.insns ? &bp->notify : NULL,
		.broker = &bp->broker,
	};
	return dsh_sandbox_run(&spec, ret, err);
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
	dsh_policy_free(bp->policy);
	dsh_run_options_clear(&bp->opts);
	dsh_config_clear(&bp->config);
	free(bp);
}
