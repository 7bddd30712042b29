/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_DSHBOX_H
#define DSHBOX_DSHBOX_H

/*
 * libdshbox: one access policy for an agent host's commands and its file tools.
 *
 *   struct dsh_config *c = dsh_config_new();
 *   dsh_config_load_file(c, "dshbox.yml", &err);         (optional)
 *   dsh_config_add_access(c, "-- ~/.ssh", &err);         (optional: setters override the file)
 *   dsh_policy_new(c, environ, cwd, &policy, &err);
 *   dsh_policy_decide(policy, DSH_OP_WRITE, "/canonical/path", NULL, &v);
 *   dsh_policy_free(policy);  dsh_config_free(c);
 *
 * The library never prints, never exits and never reads the process environment: the caller passes
 * the environment vector and the current directory in.
 */

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/error.h"
#include "dshbox/export.h"
#include "dshbox/version.h"

enum dsh_mode {
	DSH_MODE_READ_ONLY,
	DSH_MODE_WORKSPACE_WRITE,
	DSH_MODE_DANGER_FULL_ACCESS,
};

enum dsh_rule_kind {
	DSH_RULE_RW,   /* "rw": an extra writable root (workspace-write only) */
	DSH_RULE_RO,   /* "r-": readable, never writable */
	DSH_RULE_DENY, /* "--": neither readable nor writable */
};

enum dsh_op {
	DSH_OP_READ,
	DSH_OP_WRITE,
};

enum dsh_backend_id {
	DSH_BACKEND_AUTO,
	DSH_BACKEND_LINUX_NS,
	DSH_BACKEND_LANDLOCK,
	DSH_BACKEND_RUNNER,
	DSH_BACKEND_NONE,
	DSH_BACKEND_SEATBELT,
	DSH_BACKEND_WINACL,
};

/* Which of the caller's environment variables the command inherits (SPEC 1.7). */
enum dsh_env_inherit {
	DSH_ENV_INHERIT_ALL,  /* every variable (default), less the excluded names */
	DSH_ENV_INHERIT_CORE, /* HOME LOGNAME PATH SHELL USER LANG LC_* TERM TMPDIR TZ, less the excluded */
	DSH_ENV_INHERIT_NONE, /* nothing but env.set */
};

/* What /tmp is in workspace-write (SPEC 1.5, 3.6); read-only mode always has a private one. */
enum dsh_tmp {
	DSH_TMP_HOST,    /* the host's /tmp, a writable root (default) */
	DSH_TMP_PRIVATE, /* a private writable tmpfs; host /tmp is outside the writable roots */
};

DSH_PUBLIC const char *dsh_mode_to_string(enum dsh_mode m);
DSH_PUBLIC const char *dsh_env_inherit_to_string(enum dsh_env_inherit i);
DSH_PUBLIC int dsh_env_inherit_from_string(const char *s, enum dsh_env_inherit *ret);
DSH_PUBLIC int dsh_mode_from_string(const char *s, enum dsh_mode *ret);
DSH_PUBLIC const char *dsh_rule_kind_to_string(enum dsh_rule_kind k);
DSH_PUBLIC const char *dsh_backend_id_to_string(enum dsh_backend_id b);
DSH_PUBLIC int dsh_backend_id_from_string(const char *s, enum dsh_backend_id *ret);

/*
 * Free a NULL-terminated vector of strings the library handed over (dsh_doctor_findings(), the
 * warnings of dsh_run_check_degraded()): each string, then the array.  NULL is fine.
 */
DSH_PUBLIC void dsh_strv_free(char **v);

/*
 * The user's configuration as written (SPEC 1.5): YAML first, then overrides from the host or the
 * command line.  Opaque, so that a key added in a later release changes nothing a program built
 * against this one allocates; each key has a setter, and dsh_config_load_*() read the rest.
 */
struct dsh_config;

/* Every key at its default (SPEC 1.5); NULL when out of memory.  dsh_config_free() accepts NULL. */
DSH_PUBLIC struct dsh_config *dsh_config_new(void);
DSH_PUBLIC void dsh_config_free(struct dsh_config *c);

/*
 * The setters: 0, or an error of kind config (a value out of range, EINVAL) or io (ENOMEM) that
 * names the key, c unchanged.  Strings are copied.
 */
DSH_PUBLIC int dsh_config_set_mode(struct dsh_config *c, enum dsh_mode mode, struct dsh_error **err);
/* workspace, cwd: NULL is the current directory (the default); relative is against it. */
DSH_PUBLIC int dsh_config_set_workspace(struct dsh_config *c, const char *path, struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_cwd(struct dsh_config *c, const char *path, struct dsh_error **err);
/* Append an access rule as the configuration spells it ("-- {{ env.HOME }}/.ssh"), after those
   already there; one text may hold several rules, a line each.  dsh_policy_new() checks it. */
DSH_PUBLIC int dsh_config_add_access(struct dsh_config *c, const char *rule, struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_tmp(struct dsh_config *c, enum dsh_tmp tmp, struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_network(struct dsh_config *c, bool network, struct dsh_error **err);
/* Filter the network by name (SPEC 12): add one pattern to the allowed (deny false) or denied names;
   the first call turns a network that was on or off into a filtered one.  origin names the pattern
   in errors and in explain ("--allow-domain"; NULL: "(host)"). */
DSH_PUBLIC int dsh_config_add_domain(struct dsh_config *c, bool deny, const char *pattern, const char *origin,
				     struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_backend(struct dsh_config *c, enum dsh_backend_id backend,
				      struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_runtime_broker(struct dsh_config *c, bool on, struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_allow_degraded(struct dsh_config *c, bool on, struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_nested_sandbox(struct dsh_config *c, bool on, struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_protect_defaults(struct dsh_config *c, bool on, struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_env_inherit(struct dsh_config *c, enum dsh_env_inherit inherit,
					  struct dsh_error **err);
/* env.set: the command gets NAME=value whatever inherit and exclude say; a second call for the
   same name replaces the value. */
DSH_PUBLIC int dsh_config_set_env(struct dsh_config *c, const char *name, const char *value,
				  struct dsh_error **err);
/* Positive: probeTimeoutMs, diffBasisMaxBytes. */
DSH_PUBLIC int dsh_config_set_probe_timeout_ms(struct dsh_config *c, long long ms, struct dsh_error **err);
DSH_PUBLIC int dsh_config_set_diff_basis_max_bytes(struct dsh_config *c, long long bytes,
						   struct dsh_error **err);

DSH_PUBLIC enum dsh_mode dsh_config_mode(const struct dsh_config *c);
DSH_PUBLIC const char *dsh_config_workspace(const struct dsh_config *c); /* as set, or NULL */
DSH_PUBLIC const char *dsh_config_cwd(const struct dsh_config *c);       /* as set, or NULL */
DSH_PUBLIC enum dsh_backend_id dsh_config_backend(const struct dsh_config *c);

/* Merge a YAML file onto c.  Unknown keys, wrong types and bad values are errors naming the key. */
DSH_PUBLIC int dsh_config_load_file(struct dsh_config *c, const char *path, struct dsh_error **err);
/* The same from an open descriptor (a pipe: no temporary file), read to its end; name for errors. */
DSH_PUBLIC int dsh_config_load_fd(struct dsh_config *c, int fd, const char *name, struct dsh_error **err);
DSH_PUBLIC int dsh_config_load_string(struct dsh_config *c, const char *yaml, size_t len, const char *origin,
				      struct dsh_error **err);
/* Append the rules of a rules file (one per line, '#' comments and blank lines ignored). */
DSH_PUBLIC int dsh_config_load_access_file(struct dsh_config *c, const char *path, struct dsh_error **err);

/*
 * How a command is run, apart from what it may access: the backend, the runner, limits, the
 * network and the command's environment.  Passed to a backend's probe, compile and confine.
 * Opaque, like the configuration it is read from.
 */
struct dsh_run_options;

/* Validate c's run options and copy them, with envp (the environment the command would inherit),
   into *ret.  Errors name the key.  dsh_run_options_free() accepts NULL. */
DSH_PUBLIC int dsh_run_options_new(const struct dsh_config *c, char *const *envp,
				   struct dsh_run_options **ret, struct dsh_error **err);
DSH_PUBLIC void dsh_run_options_free(struct dsh_run_options *o);
/* The environment the command gets: envp filtered by the configuration's env keys (SPEC 1.7), for
   struct dsh_run_request's envp.  NULL-terminated, owned by o. */
DSH_PUBLIC char *const *dsh_run_options_command_env(const struct dsh_run_options *o);

/*
 * Inside another sandbox whose runtime broker serves this process (dshbox inside dshbox), the
 * kernel refuses a second seccomp listener: runtime_broker goes off and broker_unavailable on, so
 * that what the broker would have covered is reported lost for that reason.  The outer sandbox's
 * broker still serves every call of this run for its own rules.
 */
DSH_PUBLIC void dsh_run_options_probe_broker(struct dsh_run_options *o);

/*
 * The timing view: each stage of a run's start and end with its wall-clock time, in order, so that
 * the stages add up to the whole run.  A stage's time runs from the end of the previous one.
 */
#define DSH_TIMING_MAX 48
struct dsh_timing_entry {
	char stage[24];
	long long usec;
};
struct dsh_timing {
	size_t n;
	long long last_ns; /* CLOCK_MONOTONIC: where the last stage recorded ended */
	struct dsh_timing_entry e[DSH_TIMING_MAX];
};
/* Now, in CLOCK_MONOTONIC nanoseconds (the same clock in every pid and user namespace). */
DSH_PUBLIC long long dsh_timing_now(void);
/* Record STAGE as ending at end_ns (taken from the last end); nothing when t is NULL or full. */
DSH_PUBLIC void dsh_timing_mark(struct dsh_timing *t, const char *stage, long long end_ns);


struct dsh_policy;

/*
 * Compile a configuration into a policy: expand, resolve, validate every rule (any invalid rule fails
 * the whole load), add the default-protected names, compute the writable roots and the load-time
 * warnings.  envp is the environment that {{ env.NAME }} and TMPDIR are read from; cwd the caller's
 * current directory (absolute).
 */
DSH_PUBLIC int dsh_policy_new(const struct dsh_config *c, char *const *envp, const char *cwd,
			      struct dsh_policy **ret, struct dsh_error **err);
DSH_PUBLIC void dsh_policy_free(struct dsh_policy *p);
/* Load-time warnings (NULL-terminated, owned by the policy), one line each without a prefix. */
DSH_PUBLIC char *const *dsh_policy_warnings(const struct dsh_policy *p);

DSH_PUBLIC enum dsh_mode dsh_policy_mode(const struct dsh_policy *p);
DSH_PUBLIC const char *dsh_policy_workspace(const struct dsh_policy *p); /* canonical */
DSH_PUBLIC const char *dsh_policy_cwd(const struct dsh_policy *p);       /* canonical */
DSH_PUBLIC const char *dsh_policy_tmpdir(const struct dsh_policy *p);    /* canonical $TMPDIR, or NULL */
/* The file fence's bound: the largest old file an overwrite returns a diff for (diffBasisMaxBytes). */
DSH_PUBLIC long long dsh_policy_diff_basis_max_bytes(const struct dsh_policy *p);

/* ---- rules ---- */

struct dsh_rule;

/* Where a rule came from. */
enum dsh_rule_origin {
	DSH_ORIGIN_USER,    /* --access, the configuration, an access file */
	DSH_ORIGIN_DEFAULT, /* a default-protected name of a writable root (SPEC 1.6) */
	DSH_ORIGIN_SELF,    /* the configuration or access file in use (SPEC 1.6) */
	DSH_ORIGIN_PROGRAM, /* the dshbox program in use: its executable, the libdshbox it loaded (SPEC 16) */
};
DSH_PUBLIC const char *dsh_rule_origin_to_string(enum dsh_rule_origin o);

/* The dshbox program in use (SPEC 16): its executable and the libdshbox file a host loaded. */
enum dsh_program_guard {
	DSH_PROGRAM_PROTECTED,   /* an r- rule of origin DSH_ORIGIN_PROGRAM */
	DSH_PROGRAM_OUTSIDE,     /* outside every writable root: read-only to the command already */
	DSH_PROGRAM_UNPROTECTED, /* in a writable root: the mode or protectDefaults: false leaves it */
};
DSH_PUBLIC const char *dsh_program_guard_to_string(enum dsh_program_guard g);
DSH_PUBLIC size_t dsh_policy_program_count(const struct dsh_policy *p);
DSH_PUBLIC const char *dsh_policy_program(const struct dsh_policy *p, size_t i,
					  enum dsh_program_guard *guard);

DSH_PUBLIC size_t dsh_policy_rule_count(const struct dsh_policy *p);
DSH_PUBLIC const struct dsh_rule *dsh_policy_rule(const struct dsh_policy *p, size_t i);
DSH_PUBLIC enum dsh_rule_kind dsh_rule_kind(const struct dsh_rule *r);
DSH_PUBLIC enum dsh_rule_origin dsh_rule_origin(const struct dsh_rule *r);
DSH_PUBLIC unsigned dsh_rule_index(const struct dsh_rule *r);
DSH_PUBLIC const char *dsh_rule_text(const struct dsh_rule *r);      /* as written: "-- {{ env.HOME }}/.ssh" */
DSH_PUBLIC const char *dsh_rule_canonical(const struct dsh_rule *r); /* absolute, canonical pattern or path */
DSH_PUBLIC const char *dsh_rule_resolved(const struct dsh_rule *r);  /* absolute, lexical: the spelling */
DSH_PUBLIC bool dsh_rule_is_glob(const struct dsh_rule *r);
/* The anchored POSIX ERE of spelling i (0: canonical, 1: as written when it differs), or NULL. */
DSH_PUBLIC const char *dsh_rule_regex(const struct dsh_rule *r, size_t i);
/* The canonical directory where a glob's first wildcard component starts (the path of a literal). */
DSH_PUBLIC const char *dsh_rule_literal_prefix(const struct dsh_rule *r);

/* ---- writable roots ---- */

struct dsh_root;

/* The writable roots in the mode's sense: canonical, de-duplicated, sorted parents first. */
DSH_PUBLIC size_t dsh_policy_root_count(const struct dsh_policy *p);
DSH_PUBLIC const struct dsh_root *dsh_policy_root(const struct dsh_policy *p, size_t i);
/* A writable root the command can write (no -- or r- rule covers it) at or beneath dir, or NULL:
   a glob rooted at dir may reach into it, a link to dir may lead into it. */
DSH_PUBLIC const struct dsh_root *dsh_policy_live_root_beneath(const struct dsh_policy *p, const char *dir);
DSH_PUBLIC const char *dsh_root_path(const struct dsh_root *r);
DSH_PUBLIC const char *dsh_root_origin_name(const struct dsh_root *r); /* "workspace", "/tmp", "rw rule" ... */
DSH_PUBLIC const struct dsh_rule *dsh_root_rule(const struct dsh_root *r);        /* the rw rule, or NULL */
DSH_PUBLIC const struct dsh_rule *dsh_root_dead_by(const struct dsh_root *r);     /* a -- rule covering it */
DSH_PUBLIC const struct dsh_rule *dsh_root_readonly_by(const struct dsh_root *r); /* an r- rule covering it */

/* ---- decisions: the only place a rule is interpreted ---- */

struct dsh_verdict {
	bool allow;
	const struct dsh_rule *rule; /* the rule that decided, or NULL */
	const struct dsh_root *root; /* the writable root that allowed a write, or NULL */
	const char *reason;          /* static text: "rule", "mode read-only", "writable root", ... */
	bool by_spelling;            /* a deny-type rule covering the path as spelled decided */
	bool on_the_way;             /* dsh_policy_decide_file(): a file there would stand on the way to rule's target */
};

/*
 * The verdict for an operation on a canonical absolute path (symlinks resolved: the file fence
 * does it through the kernel, dsh_policy_resolve() by name).  spelled, when not NULL, is the same
 * path as the caller spelled it (absolute, lexically normalised, symlinks unresolved): a deny-type
 * rule covering the spelling denies too — the sandbox masks a `--` directory, so nothing may reach
 * through it by name either.  Allow-type decisions never look at the spelling (that would let a
 * symlink out).
 */
DSH_PUBLIC int dsh_policy_decide(const struct dsh_policy *p, enum dsh_op op, const char *canonical,
				 const char *spelled, struct dsh_verdict *ret);
/*
 * Only the spelling half of dsh_policy_decide(): whether a deny-type rule covers the path as spelled
 * (a symlink that is itself not written, say); fills ret when it does.
 */
DSH_PUBLIC bool dsh_policy_spelling_denied(const struct dsh_policy *p, enum dsh_op op, const char *spelled,
					   struct dsh_verdict *ret);
/*
 * The verdict for a file at canonical (a write makes or replaces one; is_dir: a directory stands
 * there now, and stays).  dsh_policy_decide(), and then, for a write the path's rules allow: only
 * a directory may stand on the way to an r-/-- target (a .git *file* beside the default r-
 * .git/config is followed by git to a directory of its own choosing), so a file there is denied
 * with the rule it would go around (on_the_way).  The file fence, `dshbox check` and the runtime
 * broker answer the same.
 */
DSH_PUBLIC int dsh_policy_decide_file(const struct dsh_policy *p, enum dsh_op op, const char *canonical,
				      const char *spelled, bool is_dir, struct dsh_verdict *ret);
/* dsh_policy_decide() without a spelling. */
DSH_PUBLIC int dsh_policy_verdict(const struct dsh_policy *p, enum dsh_op op, const char *path,
				  struct dsh_verdict *ret);
/* One line naming what decided: `rule "-- *.pem"`, `mode read-only`, `writable root /ws`. */
DSH_PUBLIC char *dsh_verdict_explain(const struct dsh_verdict *v);

/*
 * The rule that guards the name path against being removed, renamed, replaced or having its
 * metadata changed (SPEC 3.12): path is an r-/-- target (any spelling, a symlink a rule was
 * written through included), covered by one, or a directory on the way to one (a glob's literal
 * directory counts as its target).  NULL when nothing guards it.  Canonical or spelled paths alike.
 */
DSH_PUBLIC const struct dsh_rule *dsh_policy_guarded(const struct dsh_policy *p, const char *path);

/*
 * Whether an r-/-- rule may cover dir or a path anywhere below it (dir absolute, canonical or as
 * spelled): each rule's own automaton is asked (SPEC 3.5), so a walker that prunes where this is
 * false skips exactly the directories no rule can reach, never one dsh_policy_decide() would deny.
 */
DSH_PUBLIC bool dsh_policy_may_protect_below(const struct dsh_policy *p, const char *dir);

/*
 * The r-/-- rule a symlink at name pointing to target would lead around, or NULL (both absolute,
 * canonical; target as the kernel would resolve the link from name's directory).  A rule is led
 * around when it covers some path below name that it does not cover with name replaced by target:
 * a reader on the host following the link would then read, as the covered path, a file outside
 * the rule (`ln -s ../mine keys/sub` under an r- glob that reaches below keys only).  A link to
 * where the same rules reach at least as far (`venv/lib64 -> lib` where one glob reaches both)
 * leads nothing around.
 */
DSH_PUBLIC const struct dsh_rule *dsh_policy_redirected(const struct dsh_policy *p, const char *name,
							const char *target);

/* Whether rule r (a glob or a literal, any spelling) covers path: for planners that expand rules. */
DSH_PUBLIC bool dsh_policy_rule_covers(const struct dsh_rule *r, const char *path);

/*
 * Resolve a path given by the user for a decision: relative to the policy's cwd, '.' and '..'
 * removed lexically (ret_spelled), and the longest existing prefix canonicalised, the missing rest
 * appended (ret_canonical).  Either output may be NULL.
 */
DSH_PUBLIC int dsh_policy_resolve(const struct dsh_policy *p, const char *path, char **ret_canonical,
				  char **ret_spelled, struct dsh_error **err);
/*
 * Resolve a path for a verdict: relative to base, '.' and '..' removed lexically, the longest
 * existing prefix canonicalised (symlinks resolved), the missing rest appended.
 */
DSH_PUBLIC int dsh_path_resolve(const char *base, const char *path, char **ret, struct dsh_error **err);
/* Lexical normalisation (pure): absolute against base, '//' '.' '..' resolved.  NULL on bad input. */
DSH_PUBLIC char *dsh_path_normalize(const char *base, const char *path);
/*
 * The same for a path a user or host handed in: refused when empty, holding a line break, relative
 * without an absolute base, or longer than PATH_MAX / NAME_MAX; '..' above / stays at /.
 */
DSH_PUBLIC int dsh_path_absolute(const char *base, const char *path, char **ret, struct dsh_error **err);

/*
 * Host sockets (SPEC 3.11): the candidate paths of daemon sockets a sandboxed command must not
 * reach, from the environment the policy was loaded with and well-known system paths.
 * NULL-terminated, owned by the policy.
 */
DSH_PUBLIC char *const *dsh_policy_host_sockets(const struct dsh_policy *p);

#endif
