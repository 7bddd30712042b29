/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "common/write_all.h"
#include "ns/plan.h"
#include "ns/plan_entries.h"
#include "ns/sys.h"
#include "policy/netpolicy.h"
#include "supervisor/backends.h"
#include "supervisor/probe.h"
#include "supervisor/sandbox.h"

/* The linux-ns backend (SPEC 3): user + mount + pid + IPC (+ net) namespaces and its own mount tree. */

struct linux_ns_plan {
	const struct dsh_run_options *opts;
	struct dsh_mount_plan *mounts;
	bool new_net;
	bool landlock;                    /* the Landlock stage runs (not in danger-full-access) */
	struct dsh_landlock_spec ll;      /* its grants, opened inside the finished tree */
	struct dsh_seccomp_prog seccomp;  /* compiled here, loaded as the last stage */
	struct dsh_seccomp_prog notify;   /* the runtime broker's filter (empty: runtimeBroker off) */
	struct dsh_broker broker;         /* served by init */
	char **broker_targets;            /* the glob matches the plan protects */
	int resolv_fd;                    /* a filtered network: the command's /etc/resolv.conf, or -1 */
	struct dsh_sandbox_plan sb;       /* all of it as the one sandbox plan the stages apply */
};

static bool new_net(const struct dsh_policy *p, const struct dsh_run_options *o)
{
	/* SPEC 12.3: danger-full-access with a filtered network still filters. */
	return o->net || (!o->network && p->mode != DSH_MODE_DANGER_FULL_ACCESS);
}

/*
 * A filtered network (SPEC 12.2): the command's resolver is the service's, on its loopback.  The
 * host's /etc/resolv.conf is covered read-only for the run (a bind of a private file: nothing
 * changes on the host), so every stub resolver asks the service and nothing else.
 */
static const char resolv_conf[] = "# dshbox: names are served by the run's network service (SPEC 12.2)\n"
				  "nameserver 127.0.0.1\n"
				  "options edns0\n";

static int net_plan(struct linux_ns_plan *lp, struct dsh_error **err)
{
	lp->resolv_fd = memfd_create("dshbox-resolv.conf", MFD_CLOEXEC);
	if (lp->resolv_fd < 0)
		return dsh_err_sys(err, errno, "memfd_create for /etc/resolv.conf");
	if (dsh_write_all(lp->resolv_fd, resolv_conf, sizeof(resolv_conf) - 1) < 0)
		return dsh_err_sys(err, errno, "write the command's /etc/resolv.conf");
	struct dsh_mount_entry op = { .path = "/etc/resolv.conf", .action = DSH_MOUNT_BIND_DATA,
				      .why = "bind-data /etc/resolv.conf (network: filtered: the run's resolver)", .readonly = true,
				      .fd = lp->resolv_fd, .perms = 0644 };
	return dsh_mount_plan_push_ordered(lp->mounts, &op, err);
}

/*
 * SPEC 3.11: abstract unix sockets live in the network namespace.  With the network on it is the
 * host's, and only Landlock's scoping (ABI 6) keeps the host's abstract sockets (X11, ...) out of
 * reach; without it the report says partial and a warning says why.
 */
static const char abstract_lost[] = "abstract unix sockets: backend linux-ns: the host's (X11, ...) stay "
				    "reachable with network on: Landlock scoping (ABI 6, Linux 6.12) is missing and the "
				    "runtime broker is off";

static bool abstract_reachable(const struct dsh_policy *p, const struct linux_ns_plan *lp)
{
	/* The runtime broker serves abstract connects and sends as it serves pathname ones. */
	if (lp->new_net || p->mode == DSH_MODE_DANGER_FULL_ACCESS || !lp->opts->protect_sockets ||
	    lp->opts->runtime_broker)
		return false;
	return !(lp->landlock && lp->ll.abi >= 6 && (lp->ll.scoped & LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET));
}

static void plan_free(void *plan)
{
	struct linux_ns_plan *lp = plan;
	if (!lp)
		return;
	dsh_mount_plan_free(lp->mounts);
	dsh_landlock_spec_clear(&lp->ll);
	dsh_seccomp_prog_clear(&lp->seccomp);
	dsh_seccomp_prog_clear(&lp->notify);
	dsh_broker_clear(&lp->broker);
	dsh_strv_free(lp->broker_targets);
	if (lp->resolv_fd >= 0)
		close(lp->resolv_fd);
	free(lp);
}

/*
 * The runtime broker (SPEC 3.12): its filter, and the names it guards beyond the rules' own — the
 * matches of r-/-- globs that the plan masks or binds read-only now.
 */
static int broker_plan(const struct dsh_policy *p, struct linux_ns_plan *lp, struct dsh_error **err)
{
	for (size_t i = 0; i < lp->mounts->n; i++) {
		const struct dsh_mount_entry *e = &lp->mounts->entries[i];
		if (e->rule && e->rule->glob && dsh_strv_push(&lp->broker_targets, e->path) < 0)
			return dsh_err_sys(err, ENOMEM, "broker plan");
	}
	lp->broker = (struct dsh_broker){ .policy = p, .targets = lp->broker_targets,
					  .sockets = lp->opts->protect_sockets,
					  .allowed_sockets = lp->opts->allow_unix_sockets,
					  .nested = lp->opts->nested_sandbox, .own_dev = lp->mounts->dev };
	int r = dsh_broker_check_routes(&lp->broker, err);
	if (r >= 0)
		r = dsh_seccomp_compile_notify(&lp->notify, lp->opts->protect_sockets, err);
	return r < 0 || !lp->opts->protect_sockets ? r : dsh_broker_hold_sockets(&lp->broker, err);
}

static int ln_compile(const struct dsh_policy *p, const struct dsh_run_options *o, void **ret_plan,
		      struct dsh_error **err)
{
	struct linux_ns_plan *lp = calloc(1, sizeof(*lp));
	if (!lp)
		return dsh_err_sys(err, ENOMEM, "linux-ns plan");
	lp->opts = o;
	lp->resolv_fd = -1;
	int r = dsh_mount_plan_build(p, o, &lp->mounts, err);
	if (r >= 0)
		lp->mounts->masks_unmapped = dsh_root_maps_range();
	if (r < 0) {
		free(lp);
		return r;
	}
	lp->new_net = new_net(p, o);
	if (o->net)
		r = net_plan(lp, err);
	/* Landlock is the second wall, best effort (the mount tree is the first): skipped when the
	   kernel has none, and in danger-full-access, where everything is writable anyway. */
	int abi = dsh_landlock_abi();
	lp->landlock = abi >= 1 && p->mode != DSH_MODE_DANGER_FULL_ACCESS;
	if (r >= 0 && lp->landlock)
		r = dsh_landlock_spec_for_sandbox(p, abi,
						  (lp->mounts->dev ? DSH_LANDLOCK_PRIVATE_DEV_SHM : 0) |
							  (lp->mounts->private_tmp ? DSH_LANDLOCK_PRIVATE_TMP : 0) |
							  (lp->mounts->proc ? DSH_LANDLOCK_OWN_PROC : 0),
						  &lp->ll, err);
	if (r >= 0 && lp->landlock && o->nested_sandbox) {
		/* nestedSandbox: Landlock refuses every mount to a domain that handles file access, and
		   a sandbox inside mounts its own tree.  The locked mount tree stays the wall; only the
		   scopes remain (ABI 6), which keep init and host abstract sockets out of reach. */
		dsh_landlock_spec_clear(&lp->ll);
		dsh_landlock_spec_init(&lp->ll, abi);
		lp->ll.handled_fs = 0;
		lp->landlock = lp->ll.scoped != 0;
	}
	struct dsh_seccomp_opts so = { .nested_sandbox = o->nested_sandbox };
	if (r >= 0)
		r = dsh_seccomp_compile(&so, &lp->seccomp, err);
	if (r >= 0 && o->runtime_broker)
		r = broker_plan(p, lp, err);
	if (r < 0) {
		plan_free(lp);
		return r;
	}
	lp->sb = (struct dsh_sandbox_plan){
		.policy = p,
		.opts = o,
		.ns.net = lp->new_net,
		.ns.net_filter = o->net,
		.ids = { .uid = getuid(), .gid = getgid(), .range = dsh_root_maps_range() },
		/* Root writes as check and serve say it may (supervisor/root_caps.c); without the whole
		   id range mapped no capability would count for another user's file. */
		.proc.keep_caps = dsh_root_maps_range() ? dsh_root_keep_caps(true) : 0,
		.mounts = lp->mounts,
		.landlock = lp->landlock ? &lp->ll : NULL,
		.seccomp = &lp->seccomp,
		.notify = lp->notify.insns ? &lp->notify : NULL,
		.broker = &lp->broker,
	};
	*ret_plan = lp;
	return 0;
}

static const char *const denial_signatures[] = { "permission denied", "read-only file system", NULL };

static int rule_report(const struct dsh_policy *p, const struct dsh_rule *r, struct dsh_rule_report *out)
{
	const char *how = NULL;
	char *dyn = NULL;
	out->level = DSH_ENFORCE_FULL;
	switch (r->kind) {
	case DSH_RULE_RW:
		if (p->mode == DSH_MODE_READ_ONLY)
			how = "ignored: mode read-only is never widened";
		else if (p->mode == DSH_MODE_DANGER_FULL_ACCESS)
			how = "nothing to do: everything is writable in danger-full-access";
		else {
			const struct dsh_root *root = NULL;
			for (size_t i = 0; i < p->n_roots; i++)
				if (p->roots[i].rule == r)
					root = &p->roots[i];
			if (root && root->dead_by) {
				if (asprintf(&dyn, "none: inside rule \"%s\" (masked)", root->dead_by->text) < 0)
					return -ENOMEM;
			} else if (root && root->readonly_by) {
				if (asprintf(&dyn, "read-only: inside rule \"%s\"", root->readonly_by->text) < 0)
					return -ENOMEM;
			} else if (r->canonical && dsh_path_is_beneath(r->canonical, "/tmp") && p->tmp == DSH_TMP_PRIVATE)
				how = "writable bind, at its path inside the private /tmp";
			else
				how = "writable bind (cloned before the read-only pass)";
		}
		break;
	case DSH_RULE_RO:
		how = r->glob ? "read-only self-bind (recursive) of each match found at start"
			      : "read-only self-bind (recursive)";
		break;
	case DSH_RULE_DENY:
		how = r->glob ? "mask of each match found at start (read and write fail with EACCES)"
			      : "mask (read and write fail with EACCES; the name stays listable)";
		break;
	}
	out->how = dyn ? dyn : strdup(how);
	return out->how ? 0 : -ENOMEM;
}

/* A live writable root (neither dead nor read-only) that holds path, or that path (a glob's
   directory) reaches into; NULL when there is none. */
static const struct dsh_root *root_near(const struct dsh_policy *p, const char *path, bool glob)
{
	for (size_t i = 0; i < p->n_roots; i++) {
		const struct dsh_root *r = &p->roots[i];
		if (!r->dead_by && !r->readonly_by &&
		    (dsh_path_is_beneath(path, r->path) || (glob && dsh_path_is_beneath(r->path, path))))
			return r;
	}
	return NULL;
}

/*
 * runtimeBroker: off (SPEC 3.12): the mount tree binds what each path named at start, and inside a
 * writable root nothing else keeps a name from being created, or a directory on the way to a
 * protected path from being renamed away from the rule.  What is lost then, or NULL.
 */
static int broker_off_loss(const struct dsh_policy *p, const struct dsh_rule *r, char **ret)
{
	*ret = NULL;
	if (r->kind == DSH_RULE_RW)
		return 0;
	const char *where = r->glob ? r->literal_dir : r->canonical;
	const struct dsh_root *root = root_near(p, where, r->glob);
	if (!root)
		return 0;
	struct stat st;
	int k;
	if (r->glob)
		k = asprintf(ret, "a file matching it can be created by the command inside writable root %s, and a "
				  "directory holding a match renamed: the runtime broker is off", root->path);
	else if (lstat(r->canonical, &st) < 0 && (errno == ENOENT || errno == ENOTDIR))
		k = asprintf(ret, "%s is absent now and can be created by the command inside writable root %s: the "
				  "runtime broker is off", r->canonical, root->path);
	else
		k = asprintf(ret, "a directory on the way to %s inside writable root %s can be renamed, moving it "
				  "away from the rule for later runs and the file fence: the runtime broker is off",
			     r->canonical, root->path);
	if (k < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int ln_describe(const struct dsh_policy *p, const void *plan, struct dsh_description *ret,
		       struct dsh_error **err)
{
	const struct linux_ns_plan *lp = plan;
	memset(ret, 0, sizeof(*ret));
	ret->backend = "linux-ns";
	ret->overall = DSH_ENFORCE_FULL;
	ret->rules = calloc(p->n_rules ? p->n_rules : 1, sizeof(*ret->rules));
	if (!ret->rules)
		goto oom;
	ret->n_rules = p->n_rules;
	bool globs = false;
	for (size_t i = 0; i < p->n_rules; i++) {
		if (rule_report(p, &p->rules[i], &ret->rules[i]) < 0)
			goto oom;
		if (!lp->opts->runtime_broker) {
			if (broker_off_loss(p, &p->rules[i], &ret->rules[i].lost) < 0)
				goto oom;
			if (ret->rules[i].lost) {
				ret->rules[i].level = ret->overall = DSH_ENFORCE_PARTIAL;
				if (dsh_strv_pushf(&ret->warnings, "rule \"%s\": backend linux-ns: %s", p->rules[i].text,
						   ret->rules[i].lost) < 0)
					goto oom;
			}
		}
		globs |= p->rules[i].glob && p->rules[i].kind != DSH_RULE_RW;
	}
	for (size_t i = 0; denial_signatures[i]; i++)
		if (dsh_strv_push(&ret->denial_signatures, denial_signatures[i]) < 0)
			goto oom;
	if (dsh_strv_push(&ret->notes, "a masked path's name stays visible in its parent's listing") < 0)
		goto oom;
	if (globs && dsh_strv_push(&ret->notes, "globs are expanded when the run starts: files that appear later "
						 "inside a writable root are not covered by the mount tree (the file "
						 "fence still enforces them)") < 0)
		goto oom;
	if (lp->mounts->private_tmp &&
	    dsh_strv_push(&ret->notes, "/tmp is a private writable tmpfs: host files under /tmp outside the writable "
				       "roots are invisible, and writes there never reach the host") < 0)
		goto oom;
	if (!lp->mounts->private_tmp && p->mode == DSH_MODE_WORKSPACE_WRITE &&
	    dsh_strv_push(&ret->notes, "/tmp is the host's, writable (tmp: host): the same /tmp the file fence "
				       "writes; tmp: private makes it a private tmpfs") < 0)
		goto oom;
	if (lp->opts->net && lp->opts->net->ask &&
	    dsh_strv_push(&ret->notes, lp->opts->ask_fd >= 0
		? "network: ask: names in neither list are asked of the host on --ask-fd, each connection waiting up "
		  "to askTimeoutMs (SPEC 12.4)"
		: "network: ask: names in neither list are refused: no --ask-fd to ask the host on (SPEC 12.4)") < 0)
		goto oom;
	if (lp->opts->net &&
	    dsh_strv_push(&ret->notes, "network: filtered: names resolve inside to addresses of 198.18.0.0/16 mapped to "
				       "them; an IPv6 lookup has no answer; UDP reaches the run's resolver only") < 0)
		goto oom;
	if (lp->opts->nested_sandbox &&
	    dsh_strv_push(&ret->notes, "nestedSandbox: new user namespaces and their mounts are allowed inside; the "
				       "sandbox's own mounts stay locked, and Landlock keeps only its scopes (its file "
				       "layer would refuse every mount)") < 0)
		goto oom;
	if (lp->opts->protect_sockets) {
		char *const *socks = dsh_policy_host_sockets(p);
		for (size_t i = 0; socks && socks[i]; i++)
			if (dsh_strv_pushf(&ret->notes, "host daemon socket masked when present: %s", socks[i]) < 0)
				goto oom;
		if (dsh_strv_pushf(&ret->notes, "/run/user/%u, where it exists, is an empty read-only directory inside",
				   (unsigned)getuid()) < 0)
			goto oom;
		if (dsh_strv_push(&ret->notes, lp->broker.sockets
			? "connect() and sends to a pathname unix socket reach only sockets the command bound itself or "
			  "allowUnixSockets lists (the broker refuses others with EACCES)"
			: "runtimeBroker off: pathname unix sockets visible in the tree outside /run/user stay connectable") < 0)
			goto oom;
	}
	if (abstract_reachable(p, lp)) {
		if (dsh_strv_push(&ret->warnings, abstract_lost) < 0)
			goto oom;
		ret->overall = DSH_ENFORCE_PARTIAL;
	}
	size_t n_notes = dsh_strv_len(ret->notes);
	for (size_t i = 0; lp && lp->mounts->notes && lp->mounts->notes[i]; i++)
		if (dsh_strv_push_take_n(&ret->notes, &n_notes, strdup(lp->mounts->notes[i])) < 0)
			goto oom;
	for (size_t i = 0; lp && i < lp->mounts->n; i++) {
		const struct dsh_mount_entry *e = &lp->mounts->entries[i];
		if ((e->action == DSH_MOUNT_MASK_DIR || e->action == DSH_MOUNT_MASK_FILE) && e->rule &&
		    dsh_strv_pushf(&ret->hidden, "%s (%s)", e->path, e->why) < 0)
			goto oom;
	}
	return 0;
oom:
	dsh_description_clear(ret);
	return dsh_err_sys(err, ENOMEM, "describe");
}

static int ln_render(const struct dsh_policy *p, const void *plan, char **ret, struct dsh_error **err)
{
	const struct linux_ns_plan *lp = plan;
	struct dsh_buf b = { 0 };
	dsh_buf_addf(&b, "backend: linux-ns\nmode: %s\n", dsh_mode_to_string(p->mode));
	_cleanup_free_ char *m = dsh_sandbox_plan_render(&lp->sb, NULL);
	if (!m) {
		dsh_buf_free(&b);
		return dsh_err_sys(err, ENOMEM, "render");
	}
	dsh_buf_add(&b, m);
	*ret = dsh_buf_steal(&b);
	if (!*ret)
		return dsh_err_sys(err, ENOMEM, "render");
	return 0;
}

static int ln_confine(const struct dsh_policy *p, void *plan, const struct dsh_run_request *req,
		      struct dsh_run_result *ret, struct dsh_error **err)
{
	struct linux_ns_plan *lp = plan;
	struct dsh_run_request with_proxy;
	_cleanup_strv_ char **env = NULL;
	if (lp->opts->net) {
		/* The applier copies the data from the descriptor's offset, which init shares with us. */
		if (lseek(lp->resolv_fd, 0, SEEK_SET) < 0)
			return dsh_err_sys(err, errno, "lseek the command's /etc/resolv.conf");
		int r = dsh_sandbox_net_env(req->envp, &env, err);
		if (r < 0)
			return r;
		with_proxy = *req;
		with_proxy.envp = env;
		req = &with_proxy;
	}
	int r = dsh_sandbox_run(&lp->sb, req, ret, err);
	if (r >= 0 && abstract_reachable(p, lp) && dsh_strv_push(&ret->warnings, abstract_lost) < 0)
		return dsh_err_sys(err, ENOMEM, "run");
	return r;
}

const struct dsh_backend dsh_backend_linux_ns = {
	.name = "linux-ns",
	.id = DSH_BACKEND_LINUX_NS,
	.probe = dsh_probe_backend_linux_ns, /* supervisor/probe.c: entries of the one probe table */
	.compile = ln_compile,
	.describe = ln_describe,
	.render = ln_render,
	.confine = ln_confine,
	.free = plan_free,
};
