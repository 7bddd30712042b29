/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_POLICY_H
#define DSH_POLICY_POLICY_H

/*
 * The compiled policy as in-tree modules see it.  Hosts get the opaque type of dshbox.h; the
 * mechanisms and backends read these fields directly and never change them.
 */

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/dshbox.h"
#include "policy/glob_regex.h"
#include "policy/options.h"
#include "policy/strpool.h"

/* A compiled glob (or literal) covering the matched path and all its descendants (SPEC 1.4). */
struct dsh_glob_prog;
struct dsh_glob {
	char *pattern; /* absolute pattern, as matched (glob escapes kept) */
	char *regex;   /* the one anchored POSIX ERE, shared with the Seatbelt generator */
	char *literal; /* unescaped path when the pattern has no wildcard, else NULL */
	size_t literal_len;
	struct dsh_glob_prog *prog; /* the fast matcher, proven equal to regex by a differential test */
	/* The reference matcher's compiled regex, made on first use (only the differential tests ask):
	   out of line, so that 200,000 rules do not carry 200,000 unused regex_t. */
	struct dsh_glob_re *re;
};

struct dsh_rule {
	enum dsh_rule_kind kind;
	enum dsh_rule_origin origin;
	unsigned index;   /* position in the policy, from 0 */
	char *text;       /* as written, trimmed: "-- {{ env.HOME }}/.ssh" */
	char *resolved;   /* expanded, made absolute against the workspace, '.'/'..' removed */
	char *canonical;  /* resolved, with its longest existing literal prefix canonicalised */
	bool glob;        /* the path holds *, ?, ** or a [class] */
	char *literal_dir; /* canonical directory where the pattern's first wildcard component starts
			      (the whole canonical path for a literal); a glob walk starts here */
	/* The spellings this rule covers: canonical, and resolved when it differs (SPEC 1.3). */
	struct dsh_glob match[2];
	size_t n_match;
	bool pooled;      /* the strings above are the policy's pool's (dsh_rule_pool) */
};

enum dsh_root_origin {
	DSH_ROOT_WORKSPACE,
	DSH_ROOT_TMP,     /* /tmp */
	DSH_ROOT_TMPDIR,  /* $TMPDIR */
	DSH_ROOT_RULE,    /* an rw rule */
	DSH_ROOT_MODE,    /* "/" in danger-full-access */
};

const char *dsh_root_origin_to_string(enum dsh_root_origin o);

struct dsh_root {
	char *path;                   /* canonical */
	enum dsh_root_origin origin;
	const struct dsh_rule *rule;  /* the rw rule, for DSH_ROOT_RULE */
	const struct dsh_rule *dead_by;     /* a -- rule covering the root (no write, no read) */
	const struct dsh_rule *readonly_by; /* an r- rule covering the root */
};

/* policy/index.c: the rules looked up by path instead of scanned. */
struct dsh_index_slot;
struct dsh_index_slow;
struct dsh_rule_index {
	struct dsh_index_slot *slots; /* open addressing, a power of two */
	size_t mask, n_slots;
	struct dsh_index_slow *slow;  /* wildcard patterns and "/": tried in rule order */
	size_t n_slow;
	struct dsh_index_slow *filed; /* patterns filed under their literal directory (a slot's globs) */
};

struct dsh_policy {
	enum dsh_mode mode;
	char *workspace;    /* canonical */
	char *cwd;          /* canonical; base of relative paths given to the file fence */
	char *tmpdir;       /* canonical $TMPDIR, or NULL when unset */
	enum dsh_tmp tmp;   /* tmp: host makes /tmp a writable root in workspace-write (SPEC 3.6) */

	struct dsh_rule *rules;
	size_t n_rules;
	struct dsh_strpool strings; /* the rules' strings (every rule is pooled) */
	size_t n_matchers;          /* rules holding a wildcard's compiled matcher, freed one by one */
	struct dsh_rule_index index; /* over rules, built last: the rules never change after it */

	/* Writable roots in the mode's sense (empty in read-only; in danger-full-access: "/").
	   Canonical, de-duplicated, sorted parents first. */
	struct dsh_root *roots;
	size_t n_roots;

	long long diff_basis_max_bytes; /* the file fence's diff bound (diffBasisMaxBytes) */
	char **warnings;     /* load-time warnings, one line each, without a prefix */
	char **host_sockets; /* SPEC 3.11 candidates, existing or not */
	char **programs;     /* SPEC 16: the program in use, or NULL when it cannot be named ... */
	int programs_errno;  /* ... and why */
};

/* The SPEC 3.11 candidates for the environment envp. */
int dsh_host_sockets(char *const *envp, char ***ret, struct dsh_error **err);
/* Whether a rule (any spelling) covers a canonical path (dsh_policy_rule_covers, in-tree name). */
bool dsh_rule_covers(const struct dsh_rule *r, const char *path);
/* Whether path equals root or lies beneath it (component-wise, no string-prefix accidents). */
bool dsh_path_is_beneath(const char *path, const char *root);
/* Component-wise order, parents before children: "/a" < "/a/b" < "/a-b". */
int dsh_path_compare(const char *a, const char *b);

#endif
