/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_DSHBOX_H
#define DSHBOX_DSHBOX_H

/*
 * libdshbox: one access policy for an agent host's commands and its file tools.
 *
 *   struct dsh_config c;  dsh_config_init(&c);
 *   dsh_config_load_file(&c, "dshbox.yml", &err);        (optional)
 *   dsh_policy_new(&c, environ, cwd, &policy, &err);
 *   dsh_policy_verdict(policy, DSH_OP_WRITE, "/canonical/path", &v);
 *
 * The library never prints, never exits and never reads the process environment: the caller passes
 * the environment vector and the current directory in.
 */

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/error.h"

#define DSHBOX_VERSION "0.1.0"

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

const char *dsh_mode_to_string(enum dsh_mode m);
int dsh_mode_from_string(const char *s, enum dsh_mode *ret);
const char *dsh_rule_kind_to_string(enum dsh_rule_kind k);
const char *dsh_backend_id_to_string(enum dsh_backend_id b);
int dsh_backend_id_from_string(const char *s, enum dsh_backend_id *ret);

/* The user's configuration as written (SPEC 1.5): YAML first, then command-line overrides. */
struct dsh_config {
	enum dsh_mode mode;
	char *workspace;          /* NULL: the current directory */
	char *cwd;                /* NULL: the current directory */
	char **access;            /* rule texts; one entry may hold several lines */
	bool network;             /* false: own network namespace, loopback only */
	char **runner_command;
	char **runner_failure_signatures;
	long long probe_timeout_ms;
	long long diff_basis_max_bytes;
	long long max_masks;
	bool protect_sockets;
	enum dsh_backend_id backend;
};

void dsh_config_init(struct dsh_config *c);
void dsh_config_clear(struct dsh_config *c);
/* Merge a YAML file onto c.  Unknown keys, wrong types and bad values are errors naming the key. */
int dsh_config_load_file(struct dsh_config *c, const char *path, struct dsh_error **err);
int dsh_config_load_string(struct dsh_config *c, const char *yaml, size_t len, const char *origin,
			   struct dsh_error **err);
/* Append the rules of a rules file (one per line, '#' comments and blank lines ignored). */
int dsh_config_load_access_file(struct dsh_config *c, const char *path, struct dsh_error **err);

struct dsh_policy;

/*
 * Compile a configuration into a policy: expand, resolve, validate every rule (any invalid rule fails
 * the whole load), compute the writable roots and the load-time warnings.  envp is the environment
 * that {{ env.NAME }} and TMPDIR are read from; cwd the caller's current directory (absolute).
 */
int dsh_policy_new(const struct dsh_config *c, char *const *envp, const char *cwd,
		   struct dsh_policy **ret, struct dsh_error **err);
void dsh_policy_free(struct dsh_policy *p);
/* Load-time warnings (NULL-terminated, owned by the policy), one line each without a prefix. */
char *const *dsh_policy_warnings(const struct dsh_policy *p);

struct dsh_rule;
struct dsh_root;

struct dsh_verdict {
	bool allow;
	const struct dsh_rule *rule; /* the rule that decided, or NULL */
	const struct dsh_root *root; /* the writable root that allowed a write, or NULL */
	const char *reason;          /* static text: "rule", "mode read-only", "writable root", ... */
};

/*
 * The verdict for an operation on a canonical absolute path (symlinks already resolved by the
 * caller: the file fence does it through the kernel, dsh_path_resolve() does it by name).
 */
int dsh_policy_verdict(const struct dsh_policy *p, enum dsh_op op, const char *path,
		       struct dsh_verdict *ret);
/*
 * The verdict for a path the caller spelled one way (lexically normalised, symlinks unresolved)
 * that resolves to canonical: decided on the canonical path, and a deny-type rule covering the
 * spelling denies too — the sandbox masks a `--` directory, so nothing may reach through it by
 * name either.  Allow-type decisions never look at the spelling (that would let a symlink out).
 */
int dsh_policy_verdict_spelled(const struct dsh_policy *p, enum dsh_op op, const char *canonical,
			       const char *spelled, struct dsh_verdict *ret);
/* One line naming what decided: `rule "-- *.pem"`, `mode read-only`, `writable root /ws`. */
char *dsh_verdict_explain(const struct dsh_verdict *v);

/*
 * Resolve a path for a verdict: relative to base, '.' and '..' removed lexically, the longest
 * existing prefix canonicalised (symlinks resolved), the missing rest appended.
 */
int dsh_path_resolve(const char *base, const char *path, char **ret, struct dsh_error **err);

#endif
