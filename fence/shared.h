/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_FENCE_SHARED_H
#define DSH_FENCE_SHARED_H

/*
 * Between the fence's files: the operation's context and failures, the verdict (fence/fence.c),
 * the resolution of a target through the kernel (fence/target.c), reading through a descriptor
 * (fence/fence.c), atomic replacement (fence/commit.c).  Not part of the library's API.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fence/fence.h"
#include "policy/policy.h"

/* A name that changed under us between two of our own steps: tries before giving up. */
#define MAX_RETRIES 8

struct ctx {
	const struct dsh_policy *p;
	enum dsh_fence_op op;
	struct dsh_error **err;
};

/* A failure of the operation: err filled (kind, the path, the rule), -errno of the kind returned. */
__attribute__((format(printf, 6, 7))) int dsh_fence_fail(struct ctx *c, enum dsh_err_kind kind, const char *path,
							  int sys, const char *rule, const char *fmt, ...);
int dsh_fence_fail_sys(struct ctx *c, const char *path, int sys, const char *what);

/* The verdict: 0 when allowed, else a failure naming the rule. */
int dsh_fence_check_spelling(struct ctx *c, const char *spelled, const char *canonical);
int dsh_fence_denied(struct ctx *c, const struct dsh_verdict *v, const char *canonical, const char *spelled);
int dsh_fence_check(struct ctx *c, enum dsh_op op, const char *canonical, const char *spelled);
int dsh_fence_check_file(struct ctx *c, const char *canonical, const char *spelled, bool is_dir);

/* ---- fence/target.c ---- */

int dsh_fence_openat2_path(int dirfd, const char *path, int flags, struct dsh_error **err);
int dsh_fence_fail_open(struct ctx *c, enum dsh_op op, const char *abs, int e, const char *what);

struct target {
	int pfd;            /* the parent directory, O_PATH */
	char *pcanon;       /* its canonical path */
	char *name;         /* the last component (owned) */
	char *path;         /* pcanon/name: the canonical target */
	bool exists;
	struct stat st;     /* lstat of the target when it exists */
};

void dsh_fence_target_clear(struct target *t);
/* Resolve a path for a mutation: the parent through openat2, the verdict on the canonical target. */
int dsh_fence_resolve_for_write(struct ctx *c, const char *path, struct target *t);

/* ---- reading through a descriptor (fence/fence.c) ---- */

int dsh_fence_read_all(int fd, uint64_t offset, size_t want, char **ret, size_t *ret_len);
bool dsh_fence_same_file(const struct stat *a, const struct stat *b);

/* ---- versions (fence/version.c) ---- */

/* fstat, once the coarse clock has passed the mtime: a later change moves it (a read's version). */
int dsh_fence_fstat_settled(int fd, struct stat *st);
/* Stamp a file the fence wrote so that any later change moves its version; prev: what it replaces. */
int dsh_fence_stamp(int fd, const struct stat *prev, struct stat *st);
bool dsh_fence_version_well_formed(const char *v);
int dsh_fence_check_version(struct ctx *c, const char *path, const struct stat *st, const char *expect);

#endif
