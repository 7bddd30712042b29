/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/hash.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "ns/plan.h"
#include "ns/walk.h"

static const char *const action_names[] = {
	[DSH_MOUNT_RO_ROOT] = "ro-root",
	[DSH_MOUNT_TMP] = "tmpfs-tmp",
	[DSH_MOUNT_BIND_RW] = "bind-rw",
	[DSH_MOUNT_BIND_RW_TMP] = "bind-rw-tmp",
	[DSH_MOUNT_BIND_RO_TMP] = "bind-ro-tmp",
	[DSH_MOUNT_DEV] = "dev",
	[DSH_MOUNT_PROC] = "proc",
	[DSH_MOUNT_BIND_RO] = "bind-ro",
	[DSH_MOUNT_MASK_DIR] = "mask-dir",
	[DSH_MOUNT_MASK_FILE] = "mask-file",
	[DSH_MOUNT_RUN_USER] = "tmpfs-run-user",
	[DSH_MOUNT_BIND] = "bind",
	[DSH_MOUNT_TMPFS] = "tmpfs",
	[DSH_MOUNT_REMOUNT_RO] = "remount-ro",
	[DSH_MOUNT_MKDIR] = "dir",
	[DSH_MOUNT_SYMLINK] = "symlink",
	[DSH_MOUNT_FILE] = "file",
	[DSH_MOUNT_BIND_DATA] = "bind-data",
	[DSH_MOUNT_CHMOD] = "chmod",
	[DSH_MOUNT_ATTR] = "attr",
	[DSH_MOUNT_NEWROOT] = "new-root",
	[DSH_MOUNT_MQUEUE] = "mqueue",
	[DSH_MOUNT_ABSENT] = "absent",
};

const char *dsh_mount_action_to_string(enum dsh_mount_action a)
{
	return (size_t)a < ARRAY_SIZE(action_names) ? action_names[a] : "?";
}

/* The binds that exist inside a private /tmp: what lies beneath them is visible there. */
static bool is_tmp_bind(enum dsh_mount_action a)
{
	return a == DSH_MOUNT_BIND_RW_TMP || a == DSH_MOUNT_BIND_RO_TMP;
}

static bool is_mask(enum dsh_mount_action a)
{
	return a == DSH_MOUNT_MASK_DIR || a == DSH_MOUNT_MASK_FILE;
}

static int add_entry(struct dsh_mount_plan *plan, const char *path, enum dsh_mount_action action,
		     const struct dsh_rule *rule, const char *why)
{
	if (plan->n == plan->cap) {
		size_t cap = plan->cap ? plan->cap * 2 : 16;
		struct dsh_mount_entry *e = realloc(plan->entries, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		plan->entries = e;
		plan->cap = cap;
	}
	struct dsh_mount_entry *e = &plan->entries[plan->n];
	memset(e, 0, sizeof(*e));
	e->path = strdup(path);
	if (rule) {
		if (asprintf(&e->why, "rule \"%s\"", rule->text) < 0)
			e->why = NULL;
	} else {
		e->why = strdup(why);
	}
	if (!e->path || !e->why) {
		free(e->path);
		free(e->why);
		return -ENOMEM;
	}
	e->action = action;
	e->rule = rule;
	plan->n++;
	return 0;
}

static void entry_clear(struct dsh_mount_entry *e)
{
	free(e->path);
	free(e->why);
	free(e->source);
	memset(e, 0, sizeof(*e));
}

/* Absent targets named one note each; the rest are counted in one. */
#define ABSENT_NOTES 20

static int note(struct dsh_mount_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(struct dsh_mount_plan *plan, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	return dsh_strv_push_take_n(&plan->notes, &plan->n_notes, s);
}

static const char *root_why(const struct dsh_root *r)
{
	switch (r->origin) {
	case DSH_ROOT_WORKSPACE:
		return "workspace";
	case DSH_ROOT_TMP:
		return "/tmp, tmp: host";
	case DSH_ROOT_TMPDIR:
		return "$TMPDIR";
	case DSH_ROOT_RULE:
		return "rule";
	case DSH_ROOT_MODE:
		return "mode danger-full-access";
	}
	return "?";
}

/*
 * Why an r-/-- target could not be looked at was EACCES: true when the first directory on its way
 * that we cannot search belongs to another user (SPEC 3.13: skipped with a note, since the command
 * cannot search it either); that directory in *ret.
 */
static bool under_foreign_dir(const char *path, char **ret)
{
	_cleanup_free_ char *dir = strdup(path);
	if (!dir)
		return false;
	for (char *s = dir + 1; s && *s;) {
		char *slash = strchr(s, '/');
		if (slash)
			*slash = '\0';
		struct stat st;
		if (stat(dir, &st) < 0)
			return false;
		if (S_ISDIR(st.st_mode) && access(dir, X_OK) < 0) {
			if (st.st_uid == geteuid())
				return false;
			*ret = TAKE_PTR(dir);
			return true;
		}
		if (!slash)
			break;
		*slash = '/';
		s = slash + 1;
	}
	return false;
}

int dsh_path_file_on_the_way(const char *path, char **ret)
{
	*ret = NULL;
	_cleanup_free_ char *dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	for (char *s = dir + 1; s && *s;) {
		char *slash = strchr(s, '/');
		if (!slash)
			return 0;
		*slash = '\0';
		struct stat st;
		if (lstat(dir, &st) < 0 || S_ISLNK(st.st_mode))
			return 0;
		if (!S_ISDIR(st.st_mode)) {
			*ret = TAKE_PTR(dir);
			return 1;
		}
		*slash = '/';
		s = slash + 1;
	}
	return 0;
}

/*
 * A target whose path crosses a file where a directory was expected (.git/config when .git is a
 * file, as in a git worktree) cannot exist, but that file is not inert: git follows a .git file's
 * "gitdir:" and takes that directory's config and hooks, so a command that rewrote it would plant
 * them for the user's next git command.  The entry becomes a read-only bind of that file (a mask
 * would say more than the rule does).  1: e now names it; 0: no such file; -ENOMEM.
 */
static int bind_file_on_the_way(struct dsh_mount_entry *e)
{
	_cleanup_free_ char *file = NULL;
	int r = dsh_path_file_on_the_way(e->path, &file);
	if (r <= 0)
		return r;
	char *why = NULL;
	if (asprintf(&why, "%s: a file on the way to %s", e->why, e->path) < 0)
		return -ENOMEM;
	free(e->why);
	e->why = why;
	free(e->path);
	e->path = TAKE_PTR(file);
	e->action = DSH_MOUNT_BIND_RO;
	return 1;
}

/* The entry's path as seen now: its kind (for masks) and identity. ENOENT when absent. */
static int probe_entry_at(struct dsh_mount_entry *e, int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (is_mask(e->action))
		e->action = S_ISDIR(st.st_mode) ? DSH_MOUNT_MASK_DIR : DSH_MOUNT_MASK_FILE;
	e->have_id = true;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	return 0;
}

static int probe_entry(struct dsh_mount_entry *e)
{
	return probe_entry_at(e, AT_FDCWD, e->path);
}

/* add_entry, then probe_entry: 0 when added; the probe's errno (positive) when the path cannot be
   bound, and nothing added; -ENOMEM. */
static int add_probed_entry(struct dsh_mount_plan *plan, const char *path, enum dsh_mount_action action,
			    const struct dsh_rule *rule, const char *why)
{
	int r = add_entry(plan, path, action, rule, why);
	if (r < 0)
		return r;
	r = probe_entry(&plan->entries[plan->n - 1]);
	if (r >= 0)
		return 0;
	plan->n--;
	entry_clear(&plan->entries[plan->n]);
	return -r;
}

/*
 * Whether e's parent directory is known absent, looking each parent up once: a policy of 200,000
 * literal rules in directories that do not exist then costs an lstat() per directory, not per
 * rule.  Returns -ENOENT for "absent" (the answer the entry's own lstat() would give), 0 when
 * its own lstat() must tell, or -ENOMEM.
 */
#define PARENT_FDS 64
struct parents {
	struct dsh_pathset absent, present;
	/* Present directories held open, direct-mapped by a hash of the name (a collision only
	   costs the walk by path): 200,000 names in a directory six levels down. */
	struct {
		char *dir;
		int fd;
	} open[PARENT_FDS];
};

static size_t parent_slot(const char *dir)
{
	return dsh_fnv1a_str(dir) % PARENT_FDS;
}

static void parents_clear(struct parents *ps)
{
	dsh_pathset_clear(&ps->absent);
	dsh_pathset_clear(&ps->present);
	for (size_t i = 0; i < PARENT_FDS; i++)
		if (ps->open[i].dir) {
			free(ps->open[i].dir);
			close(ps->open[i].fd);
		}
}

/* *dirfd: e's directory held open, or AT_FDCWD (the path is walked). */
static int parent_absent(struct parents *ps, const char *path, int *dirfd)
{
	*dirfd = AT_FDCWD;
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return 0;
	_cleanup_free_ char *dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	size_t i = parent_slot(dir);
	if (ps->open[i].dir && strcmp(ps->open[i].dir, dir) == 0) {
		*dirfd = ps->open[i].fd;
		return 0;
	}
	if (dsh_pathset_contains(&ps->absent, dir))
		return -ENOENT;
	if (dsh_pathset_contains(&ps->present, dir))
		return 0;
	struct stat st;
	bool absent = lstat(dir, &st) < 0 && errno == ENOENT;
	if (dsh_pathset_add(absent ? &ps->absent : &ps->present, dir) < 0)
		return -ENOMEM;
	int fd;
	if (!absent && !ps->open[i].dir && (fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		ps->open[i].dir = TAKE_PTR(dir);
		ps->open[i].fd = *dirfd = fd;
	}
	return absent ? -ENOENT : 0;
}

/* probe_entry(), unless its directory is known absent: -ENOENT then, or -ENOMEM. */
static int probe_literal(struct parents *ps, struct dsh_mount_entry *e)
{
	int dirfd;
	int pr = parent_absent(ps, e->path, &dirfd);
	if (pr < 0)
		return pr;
	return dirfd == AT_FDCWD ? probe_entry(e) : probe_entry_at(e, dirfd, strrchr(e->path, '/') + 1);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct dsh_mount_entry *x = a, *y = b;
	int c = dsh_path_compare(x->path, y->path);
	if (c)
		return c;
	if (x->action != y->action)
		return x->action < y->action ? -1 : 1;
	/* Same path and action from two rules: the earlier rule first (stable, deterministic). */
	unsigned xi = x->rule ? x->rule->index : 0, yi = y->rule ? y->rule->index : 0;
	return xi < yi ? -1 : xi > yi;
}

static bool under_replaced(const struct dsh_mount_plan *plan, const char *path)
{
	return (plan->proc && dsh_path_is_beneath(path, "/proc")) ||
	       (plan->dev && dsh_path_is_beneath(path, "/dev"));
}

/*
 * protectSockets (SPEC 3.11): the user's runtime directory, /run/user/UID, holds the session bus,
 * the systemd user manager, agents and editor servers.  It is named by the uid (never by
 * XDG_RUNTIME_DIR, which the caller controls) and replaced by an empty read-only tmpfs.  Skipped, with a note, when it is absent or a
 * writable root lies in it (the root would vanish under the tmpfs).
 */
static int plan_run_user(struct dsh_mount_plan *plan, const struct dsh_policy *p)
{
	char path[64];
	snprintf(path, sizeof(path), "/run/user/%u", (unsigned)getuid());
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	for (size_t i = 0; i < p->n_roots; i++)
		if (dsh_path_is_beneath(p->roots[i].path, path))
			return note(plan, "%s is the host's: the writable root %s lies in it", path, p->roots[i].path);
	return add_entry(plan, path, DSH_MOUNT_RUN_USER, NULL,
			 "protectSockets: the user's runtime directory, empty and private");
}

/* Literal r- and -- rules, the sockets: one entry each. */
static enum dsh_mount_action literal_action(const struct dsh_rule *r)
{
	return (!r || r->kind == DSH_RULE_DENY) ? DSH_MOUNT_MASK_FILE : DSH_MOUNT_BIND_RO;
}

static int add_literal(struct dsh_mount_plan *plan, const struct dsh_rule *r, const char *path,
		       const char *why)
{
	return add_entry(plan, path, literal_action(r), r, why);
}

/*
 * Literal denies first: their directories are where the glob walker never goes.  Each is looked at
 * once (lstat): its kind, its identity, and whether the walker must skip it (added to *masked).
 */
static int add_literals(struct dsh_mount_plan *plan, const struct dsh_policy *p, struct dsh_pathset *masked)
{
	struct parents parents = { 0 };
	int r = 0;
	size_t kept_absent = 0;
	for (size_t i = 0; i < p->n_rules && r >= 0; i++) {
		const struct dsh_rule *rule = &p->rules[i];
		if (rule->kind == DSH_RULE_RW || rule->glob)
			continue;
		/* Looked at before it becomes an entry: an absent target is dropped here as the pass in
		   dsh_mount_plan_build() would drop it, without an entry made and freed for it. */
		struct dsh_mount_entry probe = { .path = rule->canonical, .action = literal_action(rule) };
		int pr = probe_literal(&parents, &probe);
		if (pr == -ENOMEM) {
			r = pr;
			break;
		}
		/* Beneath the sandbox's own /proc and /dev a target absent here is looked for inside. */
		bool absent = pr == -ENOENT && !under_replaced(plan, rule->canonical);
		if (absent && rule->origin != DSH_ORIGIN_USER)
			continue;
		if (absent && kept_absent == ABSENT_NOTES) {
			plan->absent_uncounted++;
			continue;
		}
		kept_absent += absent;
		r = add_literal(plan, rule, rule->canonical, NULL);
		if (r < 0)
			break;
		struct dsh_mount_entry *e = &plan->entries[plan->n - 1];
		e->action = probe.action;
		e->have_id = probe.have_id;
		e->dev = probe.dev;
		e->ino = probe.ino;
		if (pr == 0 && e->action == DSH_MOUNT_MASK_DIR)
			r = dsh_pathset_add(masked, rule->canonical);
		if (pr < 0) { /* absent or unreadable: the pass below says why, from this lstat's answer */
			e->have_id = false;
			e->probe_err = pr;
		}
	}
	parents_clear(&parents);
	return r;
}

static int add_globs(struct dsh_mount_plan *plan, const struct dsh_policy *p, long long max_masks, enum dsh_rule_kind kind,
		     struct dsh_pathset *masked, struct dsh_error **err)
{
	/* With a private /tmp, only the roots bound inside it (and their parents) exist there. */
	_cleanup_strv_ char **visible = NULL;
	for (size_t i = 0; i < plan->n; i++)
		if (is_tmp_bind(plan->entries[i].action) && dsh_strv_push(&visible, plan->entries[i].path) < 0)
			return dsh_err_sys(err, ENOMEM, "mount plan");
	struct dsh_walk_scope scope = { .hidden = plan->private_tmp ? "/tmp" : NULL, .visible = visible };
	size_t nr = 0;
	if (plan->proc)
		scope.replaced[nr++] = "/proc";
	if (plan->dev)
		scope.replaced[nr++] = "/dev";
	size_t max = max_masks > 0 ? (size_t)max_masks : 0;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		if (r->kind != kind || !r->glob)
			continue;
		struct dsh_walk_result res = { 0 };
		size_t left = max > plan->glob_matches ? max - plan->glob_matches : 0;
		int ret = dsh_glob_walk(r, masked, &scope, left, &res, err);
		plan->dirs_read += res.dirs_read;
		if (ret < 0) {
			dsh_walk_result_clear(&res);
			if (ret == -E2BIG)
				dsh_err_hint(err, "narrow the pattern, or raise maxMasks (now %lld)", max_masks);
			return dsh_err_prefix(err, "rule \"%s\"", r->text);
		}
		for (size_t k = 0; k < res.n && ret >= 0; k++) {
			struct dsh_walk_match *m = &res.m[k];
			if (kind == DSH_RULE_DENY && m->is_dir && dsh_pathset_add(masked, m->path) < 0)
				ret = -ENOMEM;
			enum dsh_mount_action a = kind == DSH_RULE_RO ? DSH_MOUNT_BIND_RO
					       : m->is_dir ? DSH_MOUNT_MASK_DIR : DSH_MOUNT_MASK_FILE;
			if (ret >= 0)
				ret = add_entry(plan, m->path, a, r, NULL);
			if (ret >= 0) {
				struct dsh_mount_entry *e = &plan->entries[plan->n - 1];
				e->have_id = true;
				e->dev = m->dev;
				e->ino = m->ino;
			}
		}
		for (size_t k = 0; res.skipped && res.skipped[k] && ret >= 0; k++)
			ret = note(plan, "rule \"%s\": %s not scanned: a directory of another user that this user "
					 "cannot read (the command cannot read or change it either)", r->text, res.skipped[k]);
		plan->glob_matches += res.n;
		dsh_walk_result_clear(&res);
		if (ret < 0)
			return dsh_err_sys(err, -ret, "rule \"%s\"", r->text);
	}
	return 0;
}

static bool root_is_tmp_itself(const struct dsh_policy *p)
{
	/* An agent that works in /tmp itself sees the host's /tmp (a private one would hide its work). */
	if (p->workspace && strcmp(p->workspace, "/tmp") == 0)
		return true;
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].kind == DSH_RULE_RW && p->rules[i].canonical &&
		    strcmp(p->rules[i].canonical, "/tmp") == 0)
			return true;
	return false;
}

/*
 * A workspace (or cwd) under /tmp that no writable root binds would vanish with the private /tmp,
 * and the run with it (chdir ENOENT): it is bound there read-only, as the rest of the host is.  A
 * writable root above or beneath it binds it (or its part) already, writable.
 */
static int keep_tmp_workspace(struct dsh_mount_plan *plan, const struct dsh_policy *p, const char *path,
			      const char *why)
{
	if (!path || !dsh_path_is_beneath(path, "/tmp") || strcmp(path, "/tmp") == 0)
		return 0;
	for (size_t i = 0; i < p->n_roots; i++)
		if (!p->roots[i].dead_by &&
		    (dsh_path_is_beneath(path, p->roots[i].path) || dsh_path_is_beneath(p->roots[i].path, path)))
			return 0;
	int r = add_probed_entry(plan, path, DSH_MOUNT_BIND_RO_TMP, NULL, why);
	return r > 0 ? note(plan, "%s not bound (%s): %s", path, why, strerror(r)) : r;
}

/*
 * /tmp (SPEC 3.6).  In workspace-write with `tmp: host` (the default) /tmp is the host's: a writable
 * root of the policy like the workspace, bound by add_roots, the same /tmp the file fence writes.
 * In read-only mode and with `tmp: private`, a private writable tmpfs (compilers, heredocs, mktemp
 * need one; nothing written there reaches the host), with the writable roots under /tmp bound at
 * their own paths inside it.  An agent that works in /tmp itself keeps the host's /tmp (a private
 * one would hide its work).  danger-full-access leaves /tmp alone.
 */
static int plan_tmp(struct dsh_mount_plan *plan, const struct dsh_policy *p)
{
	plan->private_tmp = false;
	plan->tmp_writable = false;
	switch (p->mode) {
	case DSH_MODE_DANGER_FULL_ACCESS:
		return 0;
	case DSH_MODE_WORKSPACE_WRITE:
		if (p->tmp == DSH_TMP_HOST)
			return 0; /* a root: add_roots binds it writable */
		if (root_is_tmp_itself(p))
			return note(plan, "/tmp is the host's (tmp: private is moot): the workspace or an rw rule is "
					  "/tmp itself");
		break;
	case DSH_MODE_READ_ONLY:
		break;
	}
	plan->private_tmp = true;
	plan->tmp_writable = true;
	int r = add_entry(plan, "/tmp", DSH_MOUNT_TMP, NULL,
			  p->mode == DSH_MODE_READ_ONLY ? "private /tmp, writable, read-only mode"
							: "private /tmp, writable, tmp: private");
	if (r >= 0)
		r = keep_tmp_workspace(plan, p, p->workspace, "workspace, read-only, inside the private /tmp");
	if (r >= 0 && !(p->workspace && p->cwd && dsh_path_is_beneath(p->cwd, p->workspace)))
		r = keep_tmp_workspace(plan, p, p->cwd, "cwd, read-only, inside the private /tmp");
	return r;
}

/*
 * A writable root two levels or more below /dev (a workspace in /dev/shm) has no place in the
 * minimal /dev, whose shm, pts and mqueue are empty and its own; making the directories there
 * would put the root's host files where the glob walker, which leaves /dev to the sandbox, never
 * looks for a rule's matches.  Such a root refuses the run, naming it.
 */
static int refuse_root_below_dev(const struct dsh_policy *p, struct dsh_error **err)
{
	for (size_t i = 0; i < p->n_roots; i++) {
		const char *path = p->roots[i].path;
		if (p->roots[i].dead_by || p->roots[i].readonly_by || !dsh_path_is_beneath(path, "/dev") ||
		    strcmp(path, "/dev") == 0 || !strchr(path + strlen("/dev/"), '/'))
			continue;
		int r = dsh_err(err, DSH_ERR_UNSUPPORTED, EINVAL,
				"writable root %s is inside /dev, which a linux-ns sandbox replaces with a minimal /dev of its own",
				path);
		dsh_err_hint(err, "put the workspace outside /dev (/tmp, /var/tmp, a directory of your own), or run with "
				  "--backend landlock, which keeps the host's /dev");
		return r;
	}
	return 0;
}

static int add_roots(struct dsh_mount_plan *plan, const struct dsh_policy *p)
{
	const char *last = NULL;
	for (size_t i = 0; i < p->n_roots; i++) {
		const struct dsh_root *root = &p->roots[i];
		const char *why = root->origin == DSH_ROOT_RULE && root->rule ? NULL : root_why(root);
		const struct dsh_rule *rule = root->origin == DSH_ROOT_RULE ? root->rule : NULL;
		int r = 0;
		if (root->dead_by)
			r = note(plan, "writable root %s (%s) not bound: inside rule \"%s\"", root->path,
				 rule ? rule->text : why, root->dead_by->text);
		else if (root->readonly_by)
			r = note(plan, "writable root %s (%s) stays read-only: inside rule \"%s\"", root->path,
				 rule ? rule->text : why, root->readonly_by->text);
		else if (plan->private_tmp && strcmp(root->path, "/tmp") == 0)
			; /* the private tmpfs is writable already (plan_tmp) */
		else if (strcmp(root->path, "/") == 0)
			plan->ro_root = false; /* a writable "/": nothing is made read-only (said in a note) */
		else if (last && dsh_path_is_beneath(root->path, last))
			r = note(plan, "writable root %s (%s) is inside writable root %s", root->path,
				 rule ? rule->text : why, last);
		else {
			bool in_tmp = plan->private_tmp && dsh_path_is_beneath(root->path, "/tmp");
			r = add_probed_entry(plan, root->path, in_tmp ? DSH_MOUNT_BIND_RW_TMP : DSH_MOUNT_BIND_RW,
					     rule, why);
			last = r == 0 ? plan->entries[plan->n - 1].path : NULL;
			if (r > 0)
				r = note(plan, "writable root %s (%s) not bound: %s", root->path,
					 rule ? rule->text : why, strerror(r));
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* Sort, then drop what precedence or a mask makes moot, each with a note. */
static int normalise(struct dsh_mount_plan *plan)
{
	/* "r- /": a bind stacked on the root would not be seen (lookups start below it); the whole tree
	   is made read-only instead. */
	for (size_t i = 0; i < plan->n; i++)
		if (plan->entries[i].action == DSH_MOUNT_BIND_RO && strcmp(plan->entries[i].path, "/") == 0) {
			plan->entries[i].action = DSH_MOUNT_RO_ROOT;
			plan->ro_root = true;
		}
	qsort(plan->entries, plan->n, sizeof(*plan->entries), entry_cmp);
	size_t out = 0;
	const struct dsh_mount_entry *mask = NULL;   /* the innermost mask whose subtree we are in */
	const char *tmp_bind = NULL;                 /* the bind-rw-tmp whose subtree we are in */
	for (size_t i = 0; i < plan->n; i++) {
		struct dsh_mount_entry *e = &plan->entries[i];
		char *drop = NULL;
		int r = 0;
		if (mask && dsh_path_is_beneath(e->path, mask->path)) {
			if (strcmp(e->path, mask->path) == 0)
				r = asprintf(&drop, "dropped %s %s (%s): beaten by mask (%s)", dsh_mount_action_to_string(e->action),
					     e->path, e->why, mask->why);
			else
				r = asprintf(&drop, "dropped %s %s (%s): hidden by mask %s (%s)",
					     dsh_mount_action_to_string(e->action), e->path, e->why, mask->path, mask->why);
		} else if (out > 0 && strcmp(plan->entries[out - 1].path, e->path) == 0 &&
			   plan->entries[out - 1].action == e->action) {
			r = asprintf(&drop, "dropped %s %s (%s): same as (%s)", dsh_mount_action_to_string(e->action),
				     e->path, e->why, plan->entries[out - 1].why);
		} else if (plan->private_tmp && e->action != DSH_MOUNT_TMP && !is_tmp_bind(e->action) &&
			   dsh_path_is_beneath(e->path, "/tmp") &&
			   !(tmp_bind && dsh_path_is_beneath(e->path, tmp_bind))) {
			r = asprintf(&drop, "dropped %s %s (%s): not visible, /tmp is private",
				     dsh_mount_action_to_string(e->action), e->path, e->why);
		}
		if (r < 0)
			return -ENOMEM;
		if (drop) {
			r = dsh_strv_push_take_n(&plan->notes, &plan->n_notes, drop);
			entry_clear(e);
			if (r < 0)
				return r;
			continue;
		}
		if (is_tmp_bind(e->action))
			tmp_bind = e->path;
		/* A mask on a path some earlier entry also names wins over it (precedence: -- > r- > rw). */
		if (is_mask(e->action)) {
			while (out > 0 && strcmp(plan->entries[out - 1].path, e->path) == 0 &&
			       plan->entries[out - 1].action != DSH_MOUNT_RO_ROOT) {
				struct dsh_mount_entry *prev = &plan->entries[out - 1];
				if (note(plan, "dropped %s %s (%s): beaten by mask (%s)",
					 dsh_mount_action_to_string(prev->action), prev->path, prev->why, e->why) < 0)
					return -ENOMEM;
				entry_clear(prev);
				out--;
			}
		}
		if (i != out)
			plan->entries[out] = *e;
		if (plan->entries[out].action == DSH_MOUNT_MASK_DIR)
			mask = &plan->entries[out];
		/* Bind-rw-tmp paths point into entries[], which only moves entries down: refresh. */
		if (is_tmp_bind(plan->entries[out].action))
			tmp_bind = plan->entries[out].path;
		out++;
	}
	plan->n = out;
	return 0;
}

int dsh_mount_plan_build(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_mount_plan **ret,
			 struct dsh_error **err)
{
	struct dsh_mount_plan *plan = calloc(1, sizeof(*plan));
	if (!plan)
		return dsh_err_sys(err, ENOMEM, "mount plan");
	int r = 0;
	bool danger = p->mode == DSH_MODE_DANGER_FULL_ACCESS;
	_cleanup_free_ char *mode_why = NULL;
	if (asprintf(&mode_why, "mode %s", dsh_mode_to_string(p->mode)) < 0)
		goto oom;

	plan->ro_root = !danger;
	plan->proc = true;
	/* The host's /proc shows processes the sandbox must not see: only an opt-in binds it. */
	plan->proc_fallback = o && o->allow_degraded;
	plan->dev = !danger;
	if (add_entry(plan, "/proc", DSH_MOUNT_PROC, NULL, "fresh procfs") < 0)
		goto oom;
	if (plan->dev && add_entry(plan, "/dev", DSH_MOUNT_DEV, NULL, "minimal /dev") < 0)
		goto oom;
	if (plan->dev && (r = refuse_root_below_dev(p, err)) < 0) {
		dsh_mount_plan_free(plan);
		return r;
	}
	if ((r = plan_tmp(plan, p)) < 0)
		goto fail_sys;
	if (!danger) {
		if ((r = add_roots(plan, p)) < 0)
			goto fail_sys;
		if (!plan->ro_root && (r = note(plan, "/ is a writable root: the whole tree stays writable")) < 0)
			goto fail_sys;
	}
	if (plan->ro_root && add_entry(plan, "/", DSH_MOUNT_RO_ROOT, NULL, mode_why) < 0)
		goto oom;

	struct dsh_pathset masked = { 0 };
	r = add_literals(plan, p, &masked);
	if (r >= 0 && o->protect_sockets && p->mode != DSH_MODE_DANGER_FULL_ACCESS)
		r = plan_run_user(plan, p);
	if (r >= 0 && o->protect_sockets) {
		char *const *socks = dsh_policy_host_sockets(p);
		if (!socks) {
			dsh_pathset_clear(&masked);
			goto oom;
		}
		for (size_t i = 0; socks[i] && r >= 0; i++) {
			char real[PATH_MAX];
			if (!realpath(socks[i], real))
				continue; /* absent: nothing to mask */
			r = add_literal(plan, NULL, real, "protectSockets");
		}
	}
	if (r < 0) {
		dsh_pathset_clear(&masked);
		goto fail_sys;
	}
	r = add_globs(plan, p, o->max_masks, DSH_RULE_DENY, &masked, err);
	if (r >= 0)
		r = add_globs(plan, p, o->max_masks, DSH_RULE_RO, &masked, err);
	dsh_pathset_clear(&masked);
	if (r < 0) {
		dsh_mount_plan_free(plan);
		return r;
	}

	/* Identity of every r-/-- target now; absent ones are dropped (no placeholder is ever made). */
	size_t out = 0, absent = 0;
	for (size_t i = 0; i < plan->n; i++) {
		struct dsh_mount_entry *e = &plan->entries[i];
		if ((e->action == DSH_MOUNT_BIND_RO || is_mask(e->action)) && !e->have_id) {
			/* A literal target was looked at above; 200,000 rules are 200,000 lstat()s fewer. */
			int pr = e->probe_err ? e->probe_err : probe_entry(e);
			if (pr < 0 && under_replaced(plan, e->path)) {
				pr = 0; /* checked inside, where /proc and /dev are the sandbox's own */
				e->have_id = false;
			}
			if (pr == -ENOENT && e->rule && e->rule->origin != DSH_ORIGIN_USER) {
				/* A default-protected name that is absent: the usual case, not worth a note. */
				entry_clear(e);
				continue;
			}
			_cleanup_free_ char *foreign = NULL;
			if (pr == -ENOTDIR && (r = bind_file_on_the_way(e)) != 0) {
				if (r < 0)
					goto fail_sys;
				pr = probe_entry(e);
			}
			if (pr == -ENOTDIR)
				pr = -ENOENT; /* a file on the way: nothing can exist below it */
			if (pr < 0 && pr != -ENOENT && pr != -ELOOP &&
			    !(pr == -EACCES && under_foreign_dir(e->path, &foreign))) {
				/* SPEC 3.13: only absence is absence; anything else could hide a target that a
				   later chmod reveals, so the run fails closed. */
				r = dsh_err(err, DSH_ERR_SYSTEM, -pr, "%s '%s' (%s): cannot look at the target: %s",
					    e->action == DSH_MOUNT_BIND_RO ? "bind-ro" : "mask", e->path, e->why, strerror(-pr));
				dsh_err_hint(err, "make the directories on the way to it searchable again (chmod u+x)");
				dsh_mount_plan_free(plan);
				return r;
			}
			if (pr == -ENOENT && ++absent > ABSENT_NOTES) {
				/* A policy naming thousands of absent paths reads better as one count. */
				entry_clear(e);
				continue;
			}
			if (pr < 0) {
				r = note(plan, "skipped %s %s (%s): %s%s", e->action == DSH_MOUNT_BIND_RO ? "bind-ro" : "mask",
					 e->path, e->why,
					 pr == -ENOENT ? "does not exist (the file fence still applies the rule; the broker refuses its creation)"
					 : pr == -ELOOP ? "is a symlink (its target is what a read reaches; the broker keeps the link)"
							: "lies under a directory of another user that this user cannot search: ",
					 foreign ? foreign : "");
				entry_clear(e);
				if (r < 0)
					goto fail_sys;
				continue;
			}
		}
		if (under_replaced(plan, e->path) && e->action != DSH_MOUNT_PROC && e->action != DSH_MOUNT_DEV)
			e->have_id = false;
		if (i != out)
			plan->entries[out] = *e;
		out++;
	}
	plan->n = out;
	size_t more = (absent > ABSENT_NOTES ? absent - ABSENT_NOTES : 0) + plan->absent_uncounted;
	if (more && (r = note(plan, "skipped %zu more targets that do not exist (the file fence still applies their "
				    "rules; the broker refuses their creation)", more)) < 0)
		goto fail_sys;
	if ((r = normalise(plan)) < 0)
		goto fail_sys;
	*ret = plan;
	return 0;
oom:
	r = -ENOMEM;
fail_sys:
	dsh_mount_plan_free(plan);
	return dsh_err_sys(err, -r, "mount plan");
}

void dsh_mount_plan_free(struct dsh_mount_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n; i++)
		entry_clear(&plan->entries[i]);
	free(plan->entries);
	for (size_t i = 0; i < plan->n_ordered; i++)
		entry_clear(&plan->ordered[i]);
	free(plan->ordered);
	dsh_strv_free(plan->creatable);
	dsh_strv_free(plan->notes);
	free(plan);
}

char *dsh_mount_plan_render(const struct dsh_mount_plan *plan)
{
	struct dsh_buf b = { 0 };
	for (size_t i = 0; i < plan->n; i++) {
		const struct dsh_mount_entry *e = &plan->entries[i];
		dsh_buf_addf(&b, "%3zu  %-11s  %s  (%s)\n", i + 1, dsh_mount_action_to_string(e->action), e->path,
			     e->why);
	}
	for (size_t i = 0; plan->notes && plan->notes[i]; i++)
		dsh_buf_addf(&b, "note: %s\n", plan->notes[i]);
	if (plan->n_ordered)
		dsh_buf_addf(&b, "then in argv order: %zu\n", plan->n_ordered);
	for (size_t i = 0; i < plan->n_ordered; i++)
		dsh_buf_addf(&b, "%3zu  %s\n", i + 1, plan->ordered[i].why);
	return dsh_buf_steal(&b);
}
