/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The landlock backend (SPEC 4): for hosts that forbid unprivileged user namespaces.  No namespace
 * at all: Landlock, no_new_privs, seccomp and the capability drop, applied to the command itself.
 *
 * Landlock only ever allows, so "deny" is said by granting around it: a `--` path outside the
 * writable roots gets no grant while every sibling along its path from / gets read (landlock/walk.c).
 * Inside a writable root a grant cannot be taken back: an `r-` or `--` target that exists there now
 * is lost; one that is absent holds, because the runtime broker refuses its creation by the command
 * (SPEC 3.12), and is lost too when the broker is off.  describe() — hence --report and the refusal
 * of a run that would lose a rule (dsh_run_check_degraded) — claims only what is in force: the
 * Landlock ABI of the plan and the broker on or off.
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
#include "ns/plan.h"
#include "ns/walk.h"
#include "policy/policy.h"
#include "supervisor/backends.h"
#include "supervisor/landlock_backend.h"
#include "supervisor/probe.h"
#include "supervisor/sandbox.h"
#include "seccomp/seccomp.h"

/* How this backend expresses one rule. */
enum expr {
	EXPR_WRITE_GRANT,   /* rw: read + write beneath the root */
	EXPR_IGNORED,       /* rw in read-only mode: ignored by the policy itself */
	EXPR_NO_GRANT,      /* r- outside the writable roots: nothing there is granted write */
	EXPR_SIBLINGS,      /* --: siblings along the path granted, the path itself not */
	EXPR_SIBLINGS_READ, /* r- in danger-full-access: the path read-only, its siblings read + write */
	EXPR_LOST_IN_ROOT,  /* r- or -- on what exists inside a writable root: a grant cannot be taken back */
	EXPR_ABSENT_IN_ROOT, /* r- or -- inside a writable root, nothing there now: the broker refuses its creation */
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


/* Whether a rule's target exists now; an error other than "absent" counts as present (fail closed). */
static bool exists_now(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

/* The first of a glob's matches (found at start) that a live writable root holds, or NULL. */
static const char *match_in_root(const struct dsh_policy *p, const struct dsh_walk_result *m,
				 const struct dsh_root **ret_root)
{
	for (size_t i = 0; i < m->n; i++)
		if ((*ret_root = live_root_holding(p, m->m[i].path)))
			return m->m[i].path;
	*ret_root = NULL;
	return NULL;
}

/*
 * How this backend expresses rule; matches are a glob's matches found now (r-/-- globs only).  What
 * a writable root holds is lost only when it exists now (ret_where: the path, for the warning).
 */
static enum expr classify(const struct dsh_policy *p, const struct dsh_rule *rule, const struct dsh_walk_result *matches,
			  const struct dsh_root **ret_root, const char **ret_where, char **ret_file)
{
	*ret_root = NULL;
	*ret_where = rule->canonical;
	if (rule->kind == DSH_RULE_RW)
		return p->mode == DSH_MODE_READ_ONLY ? EXPR_IGNORED : EXPR_WRITE_GRANT;
	if (danger(p)) {
		/* Everything is writable: the walk grants read + write around the rules' paths. */
		if (rule->glob) {
			*ret_root = &p->roots[0];
			if (matches->n == 0)
				return EXPR_ABSENT_IN_ROOT;
			*ret_where = matches->m[0].path;
			return EXPR_LOST_IN_ROOT;
		}
		if (rule->kind == DSH_RULE_RO)
			return EXPR_SIBLINGS_READ;
	} else if (rule->glob) {
		const char *hit = match_in_root(p, matches, ret_root);
		if (hit) {
			*ret_where = hit;
			return EXPR_LOST_IN_ROOT;
		}
		if ((*ret_root = live_root_holding(p, rule->literal_dir)))
			return EXPR_ABSENT_IN_ROOT;
		/* Matches outside the roots get no grant; one created later inside a root beneath the
		   glob's directory (ret_root) is the broker's to refuse. */
		*ret_root = dsh_policy_live_root_beneath(p, rule->literal_dir);
		return rule->kind == DSH_RULE_RO ? EXPR_NO_GRANT : EXPR_GLOB;
	} else {
		if ((*ret_root = live_root_holding(p, rule->canonical))) {
			if (exists_now(rule->canonical))
				return EXPR_LOST_IN_ROOT;
			/* A file where the target's path needs a directory (.git in a git worktree): the
			   rule keeps it in linux-ns (ns/plan.c), and a grant here cannot be taken back. */
			int f = dsh_path_file_on_the_way(rule->canonical, ret_file);
			if (f < 0 || (f > 0 && dsh_path_is_beneath(*ret_file, (*ret_root)->path))) {
				*ret_where = f > 0 ? *ret_file : rule->canonical;
				return EXPR_LOST_IN_ROOT;
			}
			return EXPR_ABSENT_IN_ROOT;
		}
		if (rule->kind == DSH_RULE_RO)
			return EXPR_NO_GRANT;
	}
	struct stat st;
	if (stat(rule->canonical, &st) == 0 && S_ISSOCK(st.st_mode))
		return EXPR_SOCKET;
	if (stat(rule->canonical, &st) == 0 && S_ISDIR(st.st_mode))
		return EXPR_SIBLINGS_DIR;
	return EXPR_SIBLINGS;
}

/* One more loss of a rule, "; "-separated. */
static void lose(struct dsh_buf *b, const char *fmt, ...) DSH_PRINTF(2, 3);
static void lose(struct dsh_buf *b, const char *fmt, ...)
{
	va_list ap;
	if (b->len)
		dsh_buf_add(b, "; ");
	va_start(ap, fmt);
	_cleanup_free_ char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		b->oom = true;
	else
		dsh_buf_add(b, s);
	va_end(ap);
}

/*
 * SPEC 16: the executable this process runs cannot be opened for writing or truncated while it runs
 * (the kernel's deny-write on an executing file), and dshbox runs it for the whole run; every other
 * change is a call by name, the broker's.  A libdshbox a host loaded has no such guard.
 */
static bool running_executable(const struct dsh_policy *p, const struct dsh_rule *rule)
{
	enum dsh_program_guard g;
	/* dsh_program_in_use() names the executable first */
	return rule->origin == DSH_ORIGIN_PROGRAM && dsh_policy_program_count(p) > 0 &&
	       strcmp(dsh_policy_program(p, 0, &g), rule->canonical) == 0;
}

/*
 * What this backend enforces of one rule, from what is in force: the expression the plan chose, the
 * Landlock ABI of the plan (truncation is governed from ABI 3) and the runtime broker on or off.
 * Anything lost makes the rule partial and is said in lost.
 */
static int describe_rule(const struct dsh_policy *p, const struct dsh_landlock_plan *plan, const struct dsh_rule *rule,
			 const struct dsh_landlock_rule_plan *rp, struct dsh_rule_report *ret)
{
	const struct dsh_root *root = rp->root;
	enum expr e = (enum expr)rp->expr;
	const char *path = rule->canonical;
	const char *where = rp->where ? rp->where : path;
	bool broker = plan->opts->runtime_broker, deny = rule->kind == DSH_RULE_DENY;
	/* connect() and sends to a pathname socket are the broker's to answer (SPEC 3.11, 10): it reaches
	   only sockets the run bound itself or allowUnixSockets names. */
	bool sockets = broker && plan->broker.sockets;
	int abi = plan->spec.abi;
	char *how = NULL;
	struct dsh_buf lost = { 0 };
	int r = 0;
	switch (e) {
	case EXPR_WRITE_GRANT:
		r = asprintf(&how, "write grant beneath %s", path);
		break;
	case EXPR_IGNORED:
		r = asprintf(&how, "ignored (read-only mode)");
		break;
	case EXPR_NO_GRANT:
		r = asprintf(&how, "no write grant beneath %s%s", path, rule->glob ? " (each match)" : "");
		break;
	case EXPR_SIBLINGS:
	case EXPR_SIBLINGS_DIR:
		r = asprintf(&how, "no grant on %s; its siblings along the path from / are granted%s, the directories "
				   "on the way listing only%s%s", path, danger(p) ? " read and write" : " read",
			     e == EXPR_SIBLINGS_DIR ? " (so the names of its entries can be listed, and looked up with "
						      "stat, but none opened: Landlock's listing right holds beneath)" : "",
			     e == EXPR_SIBLINGS_DIR && sockets ? "; connect() and sends to a unix socket beneath it go "
								 "through the runtime broker, which refuses them" : "");
		if (e == EXPR_SIBLINGS_DIR && !sockets)
			lose(&lost, "unix sockets beneath %s stay connectable: Landlock does not mediate connect() to a "
				    "pathname socket, and %s", path, broker ? "protectSockets is off" : "the runtime broker is off");
		break;
	case EXPR_SOCKET:
		r = asprintf(&how, "%s is a unix socket: %s", path,
			     sockets ? "connect() and sends to it go through the runtime broker, which refuses them"
				     : "not expressible");
		if (!sockets)
			lose(&lost, "%s stays connectable: Landlock does not mediate connect() to a pathname socket, and %s",
			     path, broker ? "protectSockets is off" : "the runtime broker is off");
		break;
	case EXPR_SIBLINGS_READ:
		r = asprintf(&how, "read grant on %s; its siblings along the path from / are granted read and write", path);
		break;
	case EXPR_LOST_IN_ROOT:
		if (broker && running_executable(p, rule)) {
			r = asprintf(&how, "%s is the program running this sandbox: a write in place fails (ETXTBSY while "
					   "dshbox executes it) and the runtime broker refuses renames onto it, links, "
					   "removal and re-permissioning", path);
			break;
		}
		r = asprintf(&how, "not expressible: %s exists inside writable root %s", where, root->path);
		lose(&lost, "%s stays %s: a Landlock grant on writable root %s cannot be taken back beneath it", where,
		     deny ? "readable and writable" : "writable", root->path);
		break;
	case EXPR_ABSENT_IN_ROOT:
		r = asprintf(&how, "%s inside writable root %s: %s", rule->glob ? "nothing matches now" : "absent now",
			     root->path,
			     broker ? (rule->glob ? "the runtime broker refuses the command's creation of a match (a "
						    "file the host creates there during the run is not covered)"
						  : "the runtime broker refuses the command's creation of it (a file the "
						    "host creates there during the run is not covered)")
				    : "nothing refuses its creation (runtime broker off)");
		if (!broker)
			lose(&lost, "%s can be created by the command inside writable root %s: the runtime broker is off",
			     rule->glob ? "a file matching it" : path, root->path);
		break;
	case EXPR_GLOB:
		r = asprintf(&how, "each match found at start gets no grant; its siblings along the path from / are "
				   "granted read (files matching later are covered only where nothing was granted)");
		if (rp->sockets && !sockets)
			lose(&lost, "unix sockets beneath matches of %s stay connectable: Landlock does not mediate "
				    "connect() to a pathname socket", path);
		if (!broker && rp->root)
			lose(&lost, "a file matching it can be created by the command inside writable root %s: the "
				    "runtime broker is off", rp->root->path);
		break;
	}
	/* What the broker adds, and what the ABI in force takes away, for a target that keeps its own
	   protection (what a writable root swallows is lost whole above). */
	bool held = e == EXPR_NO_GRANT || e == EXPR_SIBLINGS || e == EXPR_SIBLINGS_DIR || e == EXPR_SIBLINGS_READ ||
		    e == EXPR_GLOB || e == EXPR_SOCKET;
	if (held && !broker)
		lose(&lost, "its mode, owner and times can be changed: Landlock does not govern metadata and the runtime "
			    "broker is off");
	/* Below ABI 3 neither truncate(2) nor open(O_TRUNC) asks Landlock: a readable target can be emptied by
	   an O_TRUNC open; truncate(2) by name is the broker's to refuse. */
	bool readable = e == EXPR_NO_GRANT || e == EXPR_SIBLINGS_READ;
	if (held && abi < 3 && (readable || !broker))
		lose(&lost, "it can be truncated to nothing (%s): Landlock ABI %d, in force here, does not govern "
			    "truncation (ABI 3+)", readable ? "an open with O_TRUNC" : "truncate(2)", abi);
	if (r < 0 || lost.oom) {
		free(how);
		dsh_buf_free(&lost);
		return -ENOMEM;
	}
	bool any = lost.len > 0;
	char *l = any ? dsh_buf_steal(&lost) : NULL;
	dsh_buf_free(&lost);
	if (any && !l) {
		free(how);
		return -ENOMEM;
	}
	*ret = (struct dsh_rule_report){ .level = any ? DSH_ENFORCE_PARTIAL : DSH_ENFORCE_FULL, .how = how, .lost = l };
	return 0;
}

/*
 * SPEC 3.11: with no network namespace the host's abstract unix sockets (X11, ...) are in reach
 * unless Landlock scopes them (ABI 6); with network off the seccomp filter refuses every socket but
 * AF_UNIX, which still leaves abstract ones.  Without scoping the report says partial.
 */
static const char abstract_lost[] = "abstract unix sockets: backend landlock: the host's (X11, ...) stay "
				    "reachable: Landlock scoping (ABI 6, Linux 6.12) is missing and the runtime broker is off";

static bool abstract_reachable(const struct dsh_landlock_plan *plan)
{
	/* The runtime broker serves abstract connects and sends as it serves pathname ones. */
	return plan->opts->protect_sockets && !plan->opts->runtime_broker &&
	       !(plan->spec.abi >= 6 && (plan->spec.scoped & LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET));
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
	int abi = plan->spec.abi;
	for (size_t i = 0; i < p->n_rules && i < plan->n_rules; i++) {
		if ((r = describe_rule(p, plan, &p->rules[i], &plan->rules[i], &d.rules[i])) < 0)
			break;
		d.n_rules++;
		if (d.rules[i].level > d.overall)
			d.overall = d.rules[i].level;
		if (d.rules[i].lost &&
		    (r = dsh_strv_pushf(&d.warnings, "rule \"%s\": backend landlock: %s", p->rules[i].text,
					d.rules[i].lost)) < 0)
			break;
	}
	/* What the Landlock ABI in force leaves ungoverned beyond the rules: the run is partial, said once
	   each (these are no rule's loss, so they never refuse a run). */
	size_t before = dsh_strv_len(d.warnings);
	if (r >= 0 && plan->opts->protect_sockets && !plan->broker.sockets)
		r = dsh_strv_push(&d.warnings,
				  "host daemon sockets: backend landlock: not masked — Landlock does not mediate connect() "
				  "to a pathname socket, and runtimeBroker is off, so the Docker socket, the session bus and "
				  "agent sockets stay reachable");
	if (r >= 0 && plan->broker.sockets)
		r = dsh_strv_pushf(&d.notes, "host sockets: Landlock cannot hide a directory, so /run/user/%u and the "
					     "daemon sockets stay visible (read-only); connect() and sends to a pathname "
					     "unix socket go through the broker, which reaches only sockets the command "
					     "bound itself or allowUnixSockets lists (others: EACCES)",
				   (unsigned)getuid());
	if (r >= 0 && !plan->opts->runtime_broker && !danger(p))
		r = dsh_strv_push(&d.warnings, "file metadata: backend landlock: Landlock does not govern mode, owner, "
					       "times or xattrs, and runtimeBroker is off: the command can change them on "
					       "any file it owns outside the writable roots, and root on the devices granted");
	if (r >= 0 && abi < 3 && !danger(p))
		r = dsh_strv_pushf(&d.warnings, "truncation: backend landlock: Landlock ABI %d, in force here, does not "
						"govern it (ABI 3+): a file the command can read outside the writable roots "
						"can be emptied by an open with O_TRUNC", abi);
	if (r >= 0 && abi < 5)
		r = dsh_strv_pushf(&d.warnings, "device ioctls: backend landlock: Landlock ABI %d, in force here, does "
						"not govern them (ABI 5+): the granted terminal and devices take every ioctl "
						"the seccomp filter does not refuse", abi);
	if (r >= 0 && abi < 6)
		r = dsh_strv_pushf(&d.warnings, "host processes: backend landlock: Landlock ABI %d, in force here, has no "
						"scoping (ABI 6+): the command can signal the user's processes outside the "
						"sandbox", abi);
	if (r >= 0 && abstract_reachable(plan))
		r = dsh_strv_push(&d.warnings, abstract_lost);
	if (dsh_strv_len(d.warnings) > before)
		d.overall = DSH_ENFORCE_PARTIAL;
	/* What a failed run names: existing -- targets outside the writable roots get no grant. */
	for (size_t i = 0; r >= 0 && i < p->n_rules; i++) {
		const struct dsh_rule *rule = &p->rules[i];
		if (rule->kind == DSH_RULE_DENY && !rule->glob && !danger(p) && !live_root_holding(p, rule->canonical) &&
		    exists_now(rule->canonical))
			r = dsh_strv_pushf(&d.hidden, "%s (rule \"%s\")", rule->canonical, rule->text);
	}
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
		r = dsh_strv_push(&d.notes, "the directories along a -- path are granted listing only: `ls /` shows "
					    "every name, a -- directory's entries can be listed by name (Landlock's listing "
					    "right holds beneath) but none opened, entries created in the directories on the "
					    "way later are not readable, and nothing can be created directly in them (even in "
					    "danger-full-access)");
	if (r >= 0)
		r = dsh_strv_push(&d.notes, "/dev is the host's: only null, zero, full, random, urandom, tty, ptmx and "
					    "the caller's own terminal are granted (a pty made inside cannot be opened); /dev/shm (host storage) is not (POSIX shared memory fails); "
					    "/dev itself can be listed");
	/*
	 * What a kernel denial prints under this backend: Landlock and the broker refuse with EACCES, and a
	 * rename or link across Landlock's grants with EXDEV.  Not "operation not permitted": EPERM comes
	 * from the seccomp refusals (mount, ptrace of the outside, ...) and Landlock's scoping, which are no
	 * file rule's denial (linux-ns does not list it either), and it is what countless ordinary failures
	 * print outside any sandbox (kill of another user's process, chmod of a file one does not own), so
	 * a host matching it would call ordinary failures denials (SPEC 4: never bare EPERM).
	 */
	static const char *const sigs[] = { "permission denied", "invalid cross-device link", NULL };
	for (size_t i = 0; r >= 0 && sigs[i]; i++)
		r = dsh_strv_push(&d.denial_signatures, sigs[i]);
	if (r < 0) {
		dsh_description_clear(&d);
		return dsh_err_sys(err, ENOMEM, "describe");
	}
	*ret = d;
	return 0;
}

/* Move one match into res (the -- globs' matches together), bounded by max as the walker is. */
static int add_glob_match(struct dsh_walk_result *res, struct dsh_walk_match *m, size_t max, struct dsh_error **err)
{
	if (res->n >= max)
		return dsh_err(err, DSH_ERR_POLICY, E2BIG, "more than %zu glob matches (maxMasks)", max);
	if (res->n == res->cap) {
		size_t cap = res->cap ? res->cap * 2 : 16;
		struct dsh_walk_match *nm = realloc(res->m, cap * sizeof(*nm));
		if (!nm)
			return dsh_err_sys(err, ENOMEM, "landlock plan");
		res->m = nm;
		res->cap = cap;
	}
	res->m[res->n++] = *m;
	m->path = NULL;
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
	dsh_broker_clear(&plan->broker);
	dsh_strv_free(plan->broker_targets);
	for (size_t i = 0; plan->rules && i < plan->n_rules; i++)
		free(plan->rules[i].where);
	free(plan->rules);
	free(plan);
}

static void ll_free(void *plan)
{
	dsh_landlock_plan_free(plan);
}

/* Whether a glob match can hold a unix socket: a directory, or a socket itself. */
static bool may_hold_sockets(const struct dsh_walk_match *m)
{
	struct stat st;
	return m->is_dir || lstat(m->path, &st) < 0 || S_ISSOCK(st.st_mode);
}

/*
 * The caller's own terminal (stdin, stdout or stderr), by its name in the host's /dev/pts, read +
 * write: never /dev/pts as a whole, where every other terminal of the user is (its keystrokes
 * could be read, text typed into it).  The grant must open the very node the descriptor is.
 */
static int add_own_terminals(struct dsh_landlock_spec *s, int abi, struct dsh_error **err)
{
	for (int fd = 0; fd <= 2; fd++) {
		char name[256];
		struct stat st;
		if (!isatty(fd) || ttyname_r(fd, name, sizeof(name)) != 0 || fstat(fd, &st) < 0)
			continue;
		int r = dsh_landlock_spec_add(s, name, -1, dsh_landlock_fs_rw(abi), err);
		if (r < 0)
			return r;
		struct dsh_landlock_grant *g = &s->grants[s->n_grants - 1];
		g->no_symlinks = g->check_id = g->skip_stale = true;
		g->dev = st.st_dev;
		g->ino = st.st_ino;
	}
	return 0;
}

int dsh_landlock_plan_build(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_landlock_plan **ret,
			    struct dsh_error **err)
{
	int abi = dsh_landlock_abi();
	if (abi < 1)
		return dsh_err(err, DSH_ERR_UNSUPPORTED, -abi, "backend 'landlock': Landlock is not available (%s)",
			       strerror(-abi));
	return dsh_landlock_plan_build_abi(p, o, abi, ret, err);
}

int dsh_landlock_plan_build_abi(const struct dsh_policy *p, const struct dsh_run_options *o, int abi,
				struct dsh_landlock_plan **ret, struct dsh_error **err)
{
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
	if (!o->network)
		plan->spec.handled_net = dsh_landlock_net_handled(abi);

	/* Each r-/-- glob is walked now (ns/walk.c, bounded): what it matches inside a writable root
	   decides whether the rule is lost there; a -- glob outside the roots contributes each match to
	   the walk below. */
	size_t n = 0, max = o->max_masks > 0 ? (size_t)o->max_masks : 65536;
	struct dsh_walk_result matches = { 0 };
	struct dsh_landlock_target *t = NULL;
	int r = 0;
	for (size_t i = 0; r >= 0 && i < p->n_rules; i++) {
		const struct dsh_rule *rule = &p->rules[i];
		struct dsh_landlock_rule_plan *rp = &plan->rules[i];
		struct dsh_walk_result own = { 0 };
		if (rule->glob && rule->kind != DSH_RULE_RW && (r = add_glob_matches(rule, max, &own, err)) < 0) {
			dsh_walk_result_clear(&own);
			break;
		}
		const char *where = NULL;
		_cleanup_free_ char *file = NULL;
		rp->expr = classify(p, rule, &own, &rp->root, &where, &file);
		if (rp->expr == EXPR_LOST_IN_ROOT && where && !(rp->where = strdup(where)))
			r = dsh_err_sys(err, ENOMEM, "landlock plan");
		for (size_t k = 0; r >= 0 && rp->expr == EXPR_GLOB && k < own.n; k++) {
			rp->sockets |= may_hold_sockets(&own.m[k]);
			r = add_glob_match(&matches, &own.m[k], max, err);
		}
		dsh_walk_result_clear(&own);
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
		case EXPR_ABSENT_IN_ROOT:
		case EXPR_SOCKET:
			break;
		}
	}
	uint64_t around = danger(p) ? dsh_landlock_fs_rw(abi) : dsh_landlock_fs_read(abi);
	/* The directories on the way get listing and nothing more (`ls /` works): never a write right,
	   which would hold beneath them, in the -- targets too. */
	if (r >= 0)
		r = dsh_landlock_spec_add_siblings(&plan->spec, t, n, around, LANDLOCK_ACCESS_FS_READ_DIR, max, err);
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
	if (r >= 0)
		r = add_own_terminals(&plan->spec, abi, err);
	struct dsh_seccomp_opts so = { .deny_inet = !o->network, .deny_sysv_ipc = true };
	if (r >= 0)
		r = dsh_seccomp_compile(&so, &plan->seccomp, err);
	/* The runtime broker (SPEC 3.12): here also what Landlock has no right for — metadata changes,
	   renames and removals of what a rule names, new names a rule covers. */
	if (r >= 0 && o->runtime_broker) {
		plan->broker = (struct dsh_broker){ .policy = p, .targets = plan->broker_targets,
						    .sockets = o->protect_sockets,
						    .allowed_sockets = o->allow_unix_sockets,
						    .nested = o->nested_sandbox };
		r = dsh_broker_check_routes(&plan->broker, err);
		if (r >= 0)
			r = dsh_seccomp_compile_notify(&plan->notify, o->protect_sockets, err);
		if (r >= 0 && o->protect_sockets)
			r = dsh_broker_hold_sockets(&plan->broker, err);
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

static unsigned long long root_caps(const struct dsh_policy *p, const struct dsh_landlock_plan *plan);

static int ll_render(const struct dsh_policy *p, const void *plan_, char **ret, struct dsh_error **err)
{
	const struct dsh_landlock_plan *plan = plan_;
	struct dsh_buf b = { 0 };
	_cleanup_free_ char *handled = dsh_landlock_fs_access_to_string(plan->spec.handled_fs);
	dsh_buf_addf(&b, "landlock ABI %d\nhandled: %s\n", plan->spec.abi, handled ? handled : "?");
	dsh_buf_addf(&b, "scoped: %s%s\n", plan->spec.scoped & LANDLOCK_SCOPE_SIGNAL ? "signal " : "",
		     plan->spec.scoped & LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET ? "abstract-unix-socket" : "");
	if (plan->spec.handled_net)
		dsh_buf_add(&b, "net: tcp bind and connect denied\n");
	for (size_t i = 0; i < plan->spec.n_grants; i++) {
		const struct dsh_landlock_grant *g = &plan->spec.grants[i];
		const char *what = g->access == dsh_landlock_fs_read(plan->spec.abi) ? "read"
				   : g->access == LANDLOCK_ACCESS_FS_READ_DIR	      ? "list"
				   : g->access == dsh_landlock_fs_rw(plan->spec.abi) ? "read+write"
										       : "other";
		dsh_buf_addf(&b, "grant %-10s %s", what, g->path ? g->path : "(fd)");
		if (g->rule != DSH_LANDLOCK_NO_RULE)
			dsh_buf_addf(&b, "  (rule %u)", g->rule);
		dsh_buf_addc(&b, '\n');
	}
	dsh_buf_addf(&b, "seccomp: %u instructions\n", plan->seccomp.len);
	dsh_root_caps_render(root_caps(p, plan), &b);
	if (!(*ret = dsh_buf_steal(&b)))
		return dsh_err_sys(err, ENOMEM, "render");
	return 0;
}

/*
 * Root keeps CAP_DAC_OVERRIDE (supervisor/root_caps.c) only where Landlock holds every rule: a rule
 * lost (accepted with allowDegraded) was at least still kept by the permission bits from another
 * user's files, and a capability must not take that last wall away.
 */
static unsigned long long root_caps(const struct dsh_policy *p, const struct dsh_landlock_plan *plan)
{
	unsigned long long keep = dsh_root_keep_caps(false);
	if (!keep)
		return 0;
	struct dsh_description d;
	_cleanup_error_ struct dsh_error *e = NULL;
	if (ll_describe(p, plan, &d, &e) < 0)
		return 0;
	for (size_t i = 0; i < d.n_rules && keep; i++)
		if (d.rules[i].lost)
			keep = 0;
	dsh_description_clear(&d);
	return keep;
}

/* The run lifecycle is the linux-ns backend's (supervisor/sandbox.c) without its namespaces. */
int dsh_landlock_confine(const struct dsh_policy *p, void *plan_, const struct dsh_run_request *req,
			 struct dsh_run_result *ret, struct dsh_error **err)
{
	struct dsh_landlock_plan *plan = plan_;
	struct dsh_sandbox_plan sb = {
		.policy = p,
		.opts = plan->opts,
		.ns.none = true,
		.ids = { .uid = getuid(), .gid = getgid() },
		.proc.keep_caps = root_caps(p, plan),
		.landlock = &plan->spec,
		.seccomp = &plan->seccomp,
		.notify = plan->notify.insns ? &plan->notify : NULL,
		.broker = &plan->broker,
	};
	int r = dsh_sandbox_run(&sb, req, ret, err);
	if (r >= 0 && abstract_reachable(plan) && dsh_strv_push(&ret->warnings, abstract_lost) < 0)
		return dsh_err_sys(err, ENOMEM, "run");
	return r;
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
