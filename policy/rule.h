/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_RULE_H
#define DSH_POLICY_RULE_H

#include "policy/policy.h"

/*
 * Parse one rule line (already split from a multi-line text; surrounding whitespace is trimmed
 * here): prefix, {{ env.NAME }} expansion from envp, validation, lexical resolution against the
 * workspace, canonicalisation of the longest existing literal prefix, and the matchers for every
 * spelling.  With refuse_shell_variables a path holding $NAME or ${NAME} is refused (SPEC 1.3).  Errors name the rule and the reason; nothing is ever reinterpreted to make it valid.
 */
struct dsh_canon_cache;
int dsh_rule_parse(const char *line, const char *workspace, char *const *envp, unsigned index,
		   bool refuse_shell_variables, struct dsh_canon_cache *cache, struct dsh_rule *ret,
		   struct dsh_error **err);
/* A literal r-/-- rule on an absolute path, made by the policy itself (SPEC 1.6). */
int dsh_rule_literal(enum dsh_rule_kind kind, enum dsh_rule_origin origin, const char *path, unsigned index,
		     struct dsh_canon_cache *cache, struct dsh_rule *r, struct dsh_error **err);
/* Move the rule's strings into pool (the policy's, freed with it); -ENOMEM leaves it as it was. */
struct dsh_strpool;
int dsh_rule_pool(struct dsh_rule *r, struct dsh_strpool *pool);
void dsh_rule_clear(struct dsh_rule *r);
/* Expand {{ env.NAME }} (spaces inside the braces optional). */
/* escape: the values' glob characters are escaped (for r-/-- patterns, where a value is a name). */
int dsh_expand_env(const char *s, char *const *envp, bool escape, char **ret, struct dsh_error **err);

#endif
