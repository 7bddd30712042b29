/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The landlock backend (SPEC 4): for hosts that forbid unprivileged user namespaces.  No namespace
 * at all: Landlock, no_new_privs, seccomp and the capability drop, applied to the command itself.
 *
 * Landlock only ever allows, so "deny" is said by granting around it: a `--` path outside the
 * writable roots gets no grant while every sibling along its path from / gets read (landlock/walk.c).
 * Inside a writable root a grant cannot be taken back: `r-` and `--` there are lost, each with one
 * load-time warning, and describe() — hence --report — claims only what is enforced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "landlock/landlock.h"
#include "ns/walk.h"
#include "policy/policy.h"
#include "supervisor/backends.h"
#include "supervisor/landlock_backend.h"
#include "supervisor/probe.h"
#include "supervisor/sandbox.h"
#include "supervisor/seccomp.h"

/* How this backend expresses one rule. */
enum expr {
	EXPR_WRITE_GRANT,   /* rw: read + write beneath the root */
	EXPR_IGNORED,       /* rw in read-only mode: ignored by the policy itself */
	EXPR_NO_GRANT,      /* r- outside the writable roots: nothing there is granted write */
	EXPR_SIBLINGS,      /* --: siblings along the path granted, the path itself not */
	EXPR_SIBLINGS_READ, /* r- in danger-full-access: the path read-only, its siblings read + write */
	EXPR_LOST_IN_ROOT,  /* r- or -- inside a writable root: Landlock cannot take a grant back */
	EXPR_GLOB,          /* -- glob outside the writable roots: each match found at start, as -- dir */
	EXPR_SIBLINGS_DIR,  /* --  on a directory: as EXPR_SIBLINGS, but sockets in it stay connectable */
	EXPR_SOCKET,        /* -- on a unix socket: Landlock does not mediate connect() */
};

static bool danger(const struct dsh_policy *p)
{
	return p->mode == DSH_MODE_DANGER_FULL_ACCESS;
}

/* The live writable root (neither dead nor read-only) that holds path, or NULL. */
static const struct dsh_root *live_root_holding(const struct dsh_policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_roots; i++) {
		const struct dsh_root *r = &p->roots[i];
		if (!r->dead_by && !r->readonly_by && dsh_path_is_beneath(path, r->path))
			return r;
	}
	return NULL;
}

/* A live writable root beneath dir (a glob rooted at dir may reach into it), or NULL. */
static const struct dsh_root *live_root_beneath(const struct dsh_policy *p, const char *dir)
{
	for (size_t i = 0; i < p->n_roots; i++) {
		const struct dsh_root *r = &p->roots[i];
		if (!r->dead_by && !r->readonly_by && dsh_path_is_beneath(r->path, dir))
			return r;
	}
	return NULL;
}

static enum expr classify(const struct dsh_policy *p, const struct dsh_rule *rule, const struct dsh_root **ret_root)
{
	*ret_root = NULL;
	if (rule->kind == DSH_RULE_RW)
		return p->mode == DSH_MODE_READ_ONLY ? EXPR_IGNORED : EXPR_WRITE_GRANT;
	if (danger(p)) {
		/* Everything is writable: the walk grants read + write around the rules' paths. */
		if (rule->glob)
			return *ret_root = &p->roots[0], EXPR_LOST_IN_ROOT;
		if (rule->kind == DSH_RULE_RO)
			return EXPR_SIBLINGS_READ;
	} else {
		const char *where = rule->glob ? rule->literal_dir : rule->canonical;
		if ((*ret_root = live_root_holding(p, where)))
			return EXPR_LOST_IN_ROOT;
		if (rule->glob && (*ret_root = live_root_beneath(p, where)))
			return EXPR_LOST_IN_ROOT;
		if (rule->kind == DSH_RULE_RO)
			return EXPR_NO_GRANT;
		if (rule->glob)
			return EXPR_GLOB;
	}
	struct stat st;
	if (stat(rule->canonical, &st) == 0 && S_ISSOCK(st.st_mode))
		return EXPR_SOCKET;
	if (stat(rule->canonical, &st) == 0 && S_ISDIR(st.st_mode))
		return EXPR_SIBLINGS_DIR;
	return EXPR_SIBLINGS;
}

static enum dsh_enforcement level_of(enum expr e)
{
	switch (e) {
	case EXPR_WRITE_GRANT:
	case EXPR_IGNORED:
	case EXPR_NO_GRANT:
	case EXPR_SIBLINGS:
	case EXPR_SIBLINGS_READ:
		return DSH_ENFORCE_FULL;
	case EXPR_GLOB:
	case EXPR_SIBLINGS_DIR:
		return DSH_ENFORCE_PARTIAL;
	case EXPR_LOST_IN_ROOT:
	case EXPR_SOCKET:
		return DSH_ENFORCE_NONE;
	}
	return DSH_ENFORCE_NONE;
}

static int describe_rule(const struct dsh_policy *p, const struct dsh_rule *rule,
			 const struct dsh_landlock_rule_plan *rp, struct dsh_rule_report *ret)
{
	const struct dsh_root *root = rp->root;
	enum expr e = (enum expr)rp->expr;
	const char *path = rule->canonical;
	char *how = NULL, *lost = NULL;
	int r = 0;
	switch (e) {
	case EXPR_WRITE_GRANT:
		r = asprintf(&how, "write grant beneath %s", path);
		break;
	case EXPR_IGNORED:
		r = asprintf(&how, "ignored (read-only mode)");
		break;
	case EXPR_NO_GRANT:
		r = asprintf(&how, "no write grant beneath %s", path);
		break;
	case EXPR_SIBLINGS:
	case EXPR_SIBLINGS_DIR:
		r = asprintf(&how, "no grant on %s; its siblings along the path from / are granted%s", path,
			     danger(p) ? " read and write" : " read");
		if (r >= 0 && e == EXPR_SIBLINGS_DIR)
			r = asprintf(&lost, "unix sockets beneath %s stay connectable and its names can be looked up "
					    "(stat): Landlock mediates neither", path);
		break;
	case EXPR_SOCKET:
		r = asprintf(&how, "not expressible: %s is a unix socket", path);
		if (r >= 0)
			r = asprintf(&lost, "%s stays connectable: Landlock does not mediate connect() to a pathname socket",
				     path);
		break;
	case EXPR_SIBLINGS_READ:
		r = asprintf(&how, "read grant on %s; its siblings along the path from / are granted read and write", path);
		break;
	case EXPR_LOST_IN_ROOT:
		r = asprintf(&how, "not expressible: inside writable root %s", root->path);
		if (r >= 0)
			r = asprintf(&lost, "%s stays %s: a Landlock grant on writable root %s cannot be taken back beneath it",
				     path, rule->kind == DSH_RULE_DENY ? "readable and writable" : "writable", root->path);
		break;
	case EXPR_GLOB:
		r = asprintf(&how, "each match found at start gets no grant; its siblings along the path from / are "
				   "granted read");
		if (r >= 0)
			r = asprintf(&lost, "unix sockets beneath matches of %s stay connectable and their names can be "
					    "looked up (stat); files matching later are covered only where nothing was granted",
				     path);
		break;
	}
	if (r < 0) {
		free(how);
		return -ENOMEM;
	}
	*ret = (struct dsh_rule_report){ .level = level_of(e), .how = how, .lost = lost };
	return 0;
}

static int ll_describe(const struct dsh_policy *p, const void *plan_, struct dsh_description *ret,
		       struct dsh_error **err)
{
	const struct dsh_landlock_plan *plan = plan_;
	struct dsh_description d = { .backend = "landlock", .overall = DSH_ENFORCE_FULL };
	int r = 0;
	d.rules = calloc(p->n_rules ? p->n_rules : 1, sizeof(*d.rules));
	if (!d.rules)
		return dsh_err_sys(err, ENOMEM, "describe");
	for (size_t i = 0; i < p->n_rules && i < plan->n_rules; i++) {
		if ((r = describe_rule(p, &p->rules[i], &plan->rules[i], &d.rules[i])) < 0)
			break;
		d.n_rules++;
		if (d.rules[i].level > d.overall)
			d.overall = d.rules[i].level;
		if (d.rules[i].lost &&
		    (r = dsh_strv_pushf(&d.warnings, "rule \"%s\": backend landlock: %s", p->rules[i].text,
					d.rules[i].lost)) < 0)
			break;
	}
	if (r >= 0 && plan->opts->protect_sockets)
		r = dsh_strv_push(&d.warnings,
				  "host daemon sockets: backend landlock: not masked — Landlock does not mediate connect() "
				  "to a pathname socket, so the Docker socket, the session bus and agent sockets stay reachable");
	if (r >= 0 && !plan->opts->network)
		r = dsh_strv_push(&d.notes, "network off: every socket but AF_UNIX is refused (seccomp) and TCP "
					    "bind/connect are denied (Landlock ABI 4+); there is no loopback");
	if (r >= 0)
		r = dsh_strv_push(&d.notes, "no namespaces: /tmp is the host's /tmp (no private tmpfs: in read-only mode "
					    "and with tmp: private it stays read-only), host processes are visible "
					    "(signals to them and their abstract sockets are refused by Landlock scoping, ABI 6+), "
					    "SysV IPC and opening or removing POSIX message queues are refused (seccomp)");
	if (r >= 0 && plan->opts->nested_sandbox)
		r = dsh_strv_push(&d.notes, "nestedSandbox: not in the landlock backend: new user namespaces stay refused "
					    "(Landlock refuses every mount to its domain, and there is no user namespace of "
					    "dshbox's own to keep the host's mounts locked)");
	if (r >= 0)
		r = dsh_strv_push(&d.notes, "the directories along a -- path get no grant of their own: they cannot "
					    "be listed, entries created in them later are not readable, and nothing can be "
					    "created directly in them (even in danger-full-access)");
	if (r >= 0)
		r = dsh_strv_push(&d.notes, "/dev is the host's: only null, zero, full, random, urandom, tty, ptmx and "
					    "pts are granted; /dev/shm (host storage) is not (POSIX shared memory fails); "
					    "so / itself, on the way to /dev, cannot be listed");
	static const char *const sigs[] = { "permission denied", "operation not permitted",
					    "invalid cross-device link", NULL };
	for (size_t i = 0; r >= 0 && sigs[i]; i++)
		r = dsh_strv_push(&d.denial_signatures, sigs[i]);
	if (r < 0) {
		dsh_description_clear(&d);
		return dsh_err_sys(err, ENOMEM, "describe");
	}
	*ret = d;
	return 0;
}

static int add_glob_matches(const struct dsh_rule *rule, size_t max, struct dsh_walk_result *res,
			    struct dsh_error **err)
{
	struct dsh_pathset none = { 0 };
	int r = dsh_glob_walk(rule, &none, NULL, max, res, err);
	if (r < 0)
		return dsh_err_prefix(err, "rule \"%s\"", rule->text);
	return 0;
}

void dsh_landlock_plan_free(struct dsh_landlock_plan *plan)
{
	if (!plan)
		return;
	dsh_landlock_spec_clear(&plan->spec);
	dsh_seccomp_prog_clear(&plan->seccomp);
	dsh_seccomp_prog_clear(&plan->notify);
	dsh_strv_free(plan->broker_targets);
	free(plan->rules);
	free(plan);
}

static void ll_free(void *plan)
{
	dsh_landlock_plan_free(plan);
}

int dsh_landlock_plan_build(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_landlock_plan **ret,
			    struct dsh_error **err)
{
	int abi = dsh_landlock_abi();
	if (abi < 1)
		return dsh_err(err, DSH_ERR_UNSUPPORTED, -abi, "backend 'landlock': Landlock is not available (%s)",
			       strerror(-abi));
	struct dsh_landlock_plan *plan = calloc(1, sizeof(*plan));
	if (!plan)
		return dsh_err_sys(err, ENOMEM, "landlock plan");
	plan->opts = o;
	dsh_landlock_spec_init(&plan->spec, abi);
	plan->rules = calloc(p->n_rules + 1, sizeof(*plan->rules));
	if (!plan->rules) {
		dsh_landlock_plan_free(plan);
		return dsh_err_sys(err, ENOMEM, "landlock plan");
	}
	plan->n_rules = p->n_rules;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_root *root;
		plan->rules[i].expr = classify(p, &p->rules[i], &root);
		plan->rules[i].root = root;
	}
	if (!o->network)
		plan->spec.handled_net = dsh_landlock_net_handled(abi);

	/* The rules said by the walk: -- outside the writable roots (and r- in danger-full-access);
	   a -- glob there contributes each match the glob walker finds now (ns/walk.c, bounded). */
	size_t n = 0, max = o->max_masks > 0 ? (size_t)o->max_masks : 65536;
	struct dsh_walk_result matches = { 0 };
	struct dsh_landlock_target *t = NULL;
	int r = 0;
	for (size_t i = 0; r >= 0 && i < p->n_rules; i++) {
		if (plan->rules[i].expr == EXPR_GLOB)
			r = add_glob_matches(&p->rules[i], max, &matches, err);
	}
	if (r >= 0 && !(t = calloc(p->n_rules + matches.n + 1, sizeof(*t))))
		r = dsh_err_sys(err, ENOMEM, "landlock plan");
	/* The host's /dev holds raw disks and every other device: nothing of it but the device
	   nodes a command needs (granted below), never all of it. */
	if (t)
		t[n++] = (struct dsh_landlock_target){ "/dev", 0, DSH_LANDLOCK_NO_RULE };
	for (size_t i = 0; t && i < matches.n; i++)
		t[n++] = (struct dsh_landlock_target){ matches.m[i].path, 0, DSH_LANDLOCK_NO_RULE };
	for (size_t i = 0; r >= 0 && i < p->n_rules; i++) {
		switch ((enum expr)plan->rules[i].expr) {
		case EXPR_SIBLINGS:
		case EXPR_SIBLINGS_DIR:
			t[n++] = (struct dsh_landlock_target){ p->rules[i].canonical, 0, p->rules[i].index };
			break;
		case EXPR_SIBLINGS_READ:
			t[n++] = (struct dsh_landlock_target){ p->rules[i].canonical, dsh_landlock_fs_read(abi),
								p->rules[i].index };
			break;
		case EXPR_WRITE_GRANT:
		case EXPR_IGNORED:
		case EXPR_NO_GRANT:
		case EXPR_GLOB:
		case EXPR_LOST_IN_ROOT:
		case EXPR_SOCKET:
			break;
		}
	}
	uint64_t around = danger(p) ? dsh_landlock_fs_rw(abi) : dsh_landlock_fs_read(abi);
	if (r >= 0)
		r = dsh_landlock_spec_add_siblings(&plan->spec, t, n, around, max, err);
	free(t);
	for (size_t i = 0; r >= 0 && o->runtime_broker && i < matches.n; i++)
		if (dsh_strv_push(&plan->broker_targets, matches.m[i].path) < 0)
			r = dsh_err_sys(err, ENOMEM, "landlock plan");
	dsh_walk_result_clear(&matches);
	/* Writable roots (in danger-full-access the walk did it), then the devices. */
	if (r >= 0 && !danger(p))
		r = dsh_landlock_spec_add_roots(&plan->spec, p, err);
	for (size_t i = 0; r >= 0 && dsh_landlock_devices[i]; i++)
		r = dsh_landlock_spec_add(&plan->spec, dsh_landlock_devices[i], -1, dsh_landlock_fs_rw(abi), err);
	struct dsh_seccomp_opts so = { .deny_inet = !o->network, .deny_sysv_ipc = true };
	if (r >= 0)
		r = dsh_seccomp_compile(&so, &plan->seccomp, err);
	/* The runtime broker (SPEC 3.12): here also what Landlock has no right for — metadata changes,
	   renames and removals of what a rule names, new names a rule covers. */
	if (r >= 0 && o->runtime_broker) {
		plan->broker = (struct dsh_broker){ .policy = p, .targets = plan->broker_targets };
		r = dsh_seccomp_compile_notify(&plan->notify, err);
	}
	if (r < 0) {
		dsh_landlock_plan_free(plan);
		return dsh_err_prefix(err, "backend 'landlock'");
	}
	*ret = plan;
	return 0;
}

static int ll_compile(const struct dsh_policy *p, const struct dsh_run_options *o, void **ret_plan,
		      struct dsh_error **err)
{
	struct dsh_landlock_plan *plan;
	int r = dsh_landlock_plan_build(p, o, &plan, err);
	if (r < 0)
		return r;
	*ret_plan = plan;
	return 0;
}

static int ll_render(const struct dsh_policy *p, const void *plan_, char **ret, struct dsh_error **err)
{
	const struct dsh_landlock_plan *plan = plan_;
	struct dsh_buf b = { 0 };
	(void)p;
	_cleanup_free_ char *handled = dsh_landlock_fs_access_to_string(plan->spec.handled_fs);
	dsh_buf_addf(&b, "landlock ABI %d\nhandled: %s\n", plan->spec.abi, handled ? handled : "?");
	dsh_buf_addf(&b, "scoped: %s%s\n", plan->spec.scoped & LANDLOCK_SCOPE_SIGNAL ? "signal " : "",
		     plan->spec.scoped & LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET ? "abstract-unix-socket" : "");
	if (plan->spec.handled_net)
		dsh_buf_add(&b, "net: tcp bind and connect denied\n");
	for (size_t i = 0; i < plan->spec.n_grants; i++) {
		const struct dsh_landlock_grant *g = &plan->spec.grants[i];
		const char *what = g->access == dsh_landlock_fs_read(plan->spec.abi) ? "read"
				   : g->access == dsh_landlock_fs_rw(plan->spec.abi) ? "read+write"
										       : "other";
		dsh_buf_addf(&b, "grant %-10s %s", what, g->path ? g->path : "(fd)");
		if (g->rule != DSH_LANDLOCK_NO_RULE)
			dsh_buf_addf(&b, "  (rule %u)", g->rule);
		dsh_buf_addc(&b, '\n');
	}
	dsh_buf_addf(&b, "seccomp: %u instructions\n", plan->seccomp.len);
	if (!(*ret = dsh_buf_steal(&b)))
		return dsh_err_sys(err, ENOMEM, "render");
	return 0;
}

/* The run lifecycle is the linux-ns backend's (supervisor/sandbox.c) without its namespaces. */
int dsh_landlock_confine(const struct dsh_policy *p, void *plan_, const struct dsh_run_request *req,
			 struct dsh_run_result *ret, struct dsh_error **err)
{
	struct dsh_landlock_plan *plan = plan_;
	struct dsh_sandbox_spec spec = {
		.policy = p,
		.opts = plan->opts,
		.req = req,
		.uid = getuid(),
		.gid = getgid(),
		.no_namespaces = true,
		.landlock = &plan->spec,
		.seccomp = &plan->seccomp,
		.notify = plan->notify.insns ? &plan->notify : NULL,
		.broker = &plan->broker,
	};
	return dsh_sandbox_run(&spec, ret, err);
}

const struct dsh_backend dsh_backend_landlock = {
	.name = "landlock",
	.id = DSH_BACKEND_LANDLOCK,
	.probe = dsh_probe_backend_landlock, /* supervisor/probe.c: entries of the one probe table */
	.compile = ll_compile,
	.describe = ll_describe,
	.render = ll_render,
	.confine = dsh_landlock_confine,
	.free = ll_free,
};
