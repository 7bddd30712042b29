/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_NS_WALK_H
#define DSH_NS_WALK_H

/*
 * The glob walker (SPEC 3.5): expands one r-/-- glob rule against the filesystem at start,
 * reading only the directories the pattern needs.  It starts at rule->literal_dir, looks up with
 * one fstatat each the names of a level the pattern spells literally (no readdir), reads a
 * directory only where a wildcard applies, never follows symlinks, and never descends into a
 * directory in the skip set (already masked).  Every decision, pruning included, is asked of the
 * matcher's own automaton (dsh_glob_match, dsh_glob_may_match_below, dsh_glob_next_names), so
 * the walker masks exactly the outermost entries the file fence denies.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "dshbox/error.h"
#include "policy/policy.h"

/* A set of canonical paths (masked directories the walker must not enter). */
struct dsh_pathset {
	char **slots;
	size_t cap, n;
};
int dsh_pathset_add(struct dsh_pathset *s, const char *path);
bool dsh_pathset_contains(const struct dsh_pathset *s, const char *path);
void dsh_pathset_clear(struct dsh_pathset *s);

struct dsh_walk_match {
	char *path;    /* canonical absolute path */
	bool is_dir;
	dev_t dev;
	ino_t ino;
};

struct dsh_walk_result {
	struct dsh_walk_match *m;
	size_t n, cap;
	size_t dirs_read;  /* directories read with getdents (for tests and benchmarks) */
	char **skipped;    /* directories of another user the caller cannot read (SPEC 3.13): not walked */
};

/*
 * What the sandbox will show: below `hidden` (the host's /tmp when /tmp is private) only the
 * `visible` roots (bound inside) and their ancestors exist, so the walker goes nowhere else there.
 */
struct dsh_walk_scope {
	const char *hidden;
	char **visible;          /* NULL-terminated */
	const char *replaced[3]; /* trees the sandbox replaces whole (/proc, /dev): never walked */
};

/*
 * Append the matches of rule (a glob) to res.  Fails with -E2BIG when res would exceed max
 * entries, and with the errno of any scan error (a directory that cannot be read), naming the
 * directory.  A directory that vanishes during the scan is skipped.
 */
int dsh_glob_walk(const struct dsh_rule *rule, const struct dsh_pathset *skip, const struct dsh_walk_scope *scope,
		  size_t max, struct dsh_walk_result *res, struct dsh_error **err);
void dsh_walk_result_clear(struct dsh_walk_result *res);

#endif
