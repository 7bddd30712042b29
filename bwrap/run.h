/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_BWRAP_RUN_H
#define DSH_BWRAP_RUN_H

/*
 * `dshbox bwrap` (SPEC 8): bubblewrap's operations (bwrap/args.h) translated into
 * dshbox's own mount plan and run by the linux-ns sandbox (supervisor/sandbox.c): the same mount
 * code, lock, capabilities, no_new_privs, Landlock and seccomp as `dshbox run`.
 *
 * What is translated today: a tree that starts from the host's root made read-only
 * (`--ro-bind / /` first: dshbox's tree is path-transparent, built on the host root), then
 * `--dev /dev`, `--proc /proc`, `--tmpfs /tmp`, and `--bind`/`--ro-bind` (and their -try forms) of a
 * path onto itself, in an order whose result does not depend on the order (no later operation on
 * a parent of an earlier one).  That covers the argv the dsh host emits.  Anything else fails
 * with a message saying what could not be applied: never a run with less than the argv asks.
 */

#include <stdbool.h>

#include "dshbox/backend.h"
#include "bwrap/args.h"
#include "seccomp/seccomp.h"

struct dsh_bwrap_plan;

struct dsh_bwrap_settings {
	/* --dshbox-compat=strict: none of dshbox's additions (seccomp deny list, runtime broker,
	   IPC namespace, masked host sockets, Landlock) — the argv's behaviour exactly. */
	bool strict;
	char *const *envp;  /* the caller's environment */
	const char *cwd;    /* the caller's current directory (absolute) */
	/* Descriptors above 2 the command inherits, as bubblewrap passes the caller's on (those the
	   argv's options consume left out).  Borrowed: they must outlive the plan. */
	const int *pass_fds;
	size_t n_pass_fds;
	/* --seccomp FD / --add-seccomp-fd FD: the programs read from them, loaded in order after
	   dshbox's own list.  Borrowed. */
	const struct dsh_seccomp_prog *user_seccomp;
	size_t n_user_seccomp;
};

/*
 * Translate a into a plan.  A failure is DSH_ERR_UNSUPPORTED for what dshbox bwrap cannot do
 * ("--hostname: ..."), DSH_ERR_USAGE for what bubblewrap itself refuses, or a system error.
 */
int dsh_bwrap_plan_build(const struct dsh_bwrap_args *a, const struct dsh_bwrap_settings *s,
			 struct dsh_bwrap_plan **ret, struct dsh_error **err);
/* The additions dshbox makes on top of the argv, one line each (NULL-terminated, owned by plan). */
char *const *dsh_bwrap_plan_defaults(const struct dsh_bwrap_plan *plan);
/* The plan as text: namespaces, additions, mount entries and notes (--dry-run). */
char *dsh_bwrap_plan_render(const struct dsh_bwrap_plan *plan);
/* Run argv with envp (the environment after --setenv and friends) in the sandbox, and wait. */
int dsh_bwrap_plan_run(struct dsh_bwrap_plan *plan, char *const *argv, char *const *envp,
		       struct dsh_run_result *ret, struct dsh_error **err);
void dsh_bwrap_plan_free(struct dsh_bwrap_plan *plan);

#endif
