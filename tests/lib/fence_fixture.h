/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef DSH_TESTS_FENCE_FIXTURE_H
#define DSH_TESTS_FENCE_FIXTURE_H

#include <stdbool.h>

#include "dshbox/dshbox.h"
#include "fence/fence.h"

/*
 * What the file fence's suites (fence_ops, fence_contract, fence_race, serve) start each test
 * from: a scratch tree, the policies and writes they assert on, a tmpfs to race on.
 */

/* root, a fresh scratch directory; ws = root/ws, the workspace; out = root/out, outside every
   writable root.  For a TestSuite's .init; dsh_test_fence_tree_remove for its .fini. */
void dsh_test_fence_tree(char **root, char **ws, char **out);
void dsh_test_fence_tree_remove(char **root, char **ws, char **out);

/* fmt with its one %s filled in by a (a path under the tree, as a rule). */
char *dsh_test_pathf(const char *fmt, const char *a);

/* The policy for workspace ws in mode with rules (NULL-terminated, or NULL), the current directory
   ws, an empty environment and the defaults of SPEC 1.6 on. */
struct dsh_policy *dsh_test_mode_policy(const char *ws, enum dsh_mode mode, const char *const *rules);

/* A write through the fence that must fail, with a message; returns the error's kind. */
enum dsh_err_kind dsh_test_fence_write_fails(struct dsh_policy *p, const char *path, const char *data);
/* A write through the fence that must succeed; r is the caller's to clear. */
void dsh_test_fence_write_ok(struct dsh_policy *p, const char *path, const char *data,
			     struct dsh_fence_write_result *r);

/*
 * Mount a tmpfs (named source) on dir, in a mount namespace of the test process's own (and a user
 * namespace when unprivileged), for suites that fsync thousands of files: seconds on a tmpfs,
 * minutes on a disk.  false: it could not, and dir is left as it was.
 */
bool dsh_test_mount_tmpfs(const char *dir, const char *source);
/* The same with mount options opts ("size=64k,mode=0755": a disk that fills). */
bool dsh_test_mount_tmpfs_opts(const char *dir, const char *source, const char *opts);

#endif
