/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_WINACL_COMPILE_H
#define DSH_WINACL_COMPILE_H

/*
 * The one compile of a policy into the winacl plan (issue 9): what `dshbox explain --backend
 * winacl` prints (winacl/backend.c) and what dshbox-winrun.exe applies (winacl/runner_win.c) come
 * from here, so the rules are parsed, expanded, resolved and matched by policy/ alone.  Portable:
 * built into the library and into the Windows runner, and unit-tested on Linux.
 */

#include "dshbox/dshbox.h"
#include "winacl/plan.h"

struct dsh_policy;

enum {
	/*
	 * The policy's paths are Windows paths in the policy's spelling (/C:/dir, policy/winpath.h),
	 * and the plan's paths are to be Windows paths (C:\dir), as the runner applies them.  A rule
	 * or root naming no drive, a ':' after the drive (a stream, or C:\x written as a relative
	 * path), a '\' that is not a glob escape of a wildcard (Windows has no '\' in a name; write '/'
	 * between names) fail the compile: no rule is reinterpreted to make it valid (SPEC 1.2).  The
	 * POSIX /tmp root is left out with a note (Windows has none; the runner passes %TEMP% as
	 * $TMPDIR).
	 */
	DSH_WINACL_WINDOWS_PATHS = 1 << 0,
};

int dsh_winacl_plan_from_policy(const struct dsh_policy *p, unsigned flags, struct dsh_winacl_plan *ret,
				struct dsh_error **err);

/*
 * Configuration to plan, the runner's whole "what to apply" step: dsh_policy_new() (envp and cwd
 * as it takes them), then dsh_winacl_plan_from_policy().  The policy is handed out too, for its
 * warnings and the rule texts the plan's indices refer to.
 */
int dsh_winacl_plan_from_config(const struct dsh_config *c, char *const *envp, const char *cwd, unsigned flags,
				struct dsh_policy **ret_policy, struct dsh_winacl_plan *ret, struct dsh_error **err);

/*
 * Whether the runner must refuse the run: the first rule the plan cannot express (a glob: no ACE
 * names a pattern) as an error naming it, or 0.  The runner exits 125 on it before anything runs.
 */
int dsh_winacl_plan_refusal(const struct dsh_policy *p, const struct dsh_winacl_plan *plan, struct dsh_error **err);

/*
 * The environment the runner hands the policy: each value that is one absolute Windows drive path
 * (USERPROFILE=C:\Users\u) in the policy's spelling (/C:/Users/u), so that {{ env.USERPROFILE }}
 * expands to a path the policy can resolve; every other value as it is; and TMPDIR set to temp_dir
 * (%TEMP%, a Windows path; none when NULL) in the policy's spelling.  A new vector.
 */
int dsh_winacl_env_for_policy(char *const *envp, const char *temp_dir, char ***ret, struct dsh_error **err);

#endif
