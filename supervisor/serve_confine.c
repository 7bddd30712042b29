/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "common/cleanup.h"
#include "dshbox/serve.h"
#include "landlock/landlock.h"
#include "policy/policy.h"

int dsh_serve_confine(const struct dsh_policy *p, char **ret_warning, struct dsh_error **err)
{
	*ret_warning = NULL;
	int abi = dsh_landlock_abi();
	if (abi < 1) {
		if (asprintf(ret_warning, "serve: Landlock is unavailable (%s): the fence runs without its kernel second wall",
			     strerror(abi < 0 ? -abi : EOPNOTSUPP)) < 0)
			*ret_warning = NULL;
		return 0;
	}
	_cleanup_(dsh_landlock_spec_clear) struct dsh_landlock_spec s;
	dsh_landlock_spec_init(&s, abi);
	int r = dsh_landlock_spec_add(&s, "/", -1, dsh_landlock_fs_read(abi), err);
	if (r >= 0)
		r = dsh_landlock_spec_add_roots(&s, p, err);
	if (r < 0)
		return dsh_err_prefix(err, "serve: confine with Landlock");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return dsh_err_sys(err, errno, "serve: prctl(PR_SET_NO_NEW_PRIVS)");
	r = dsh_landlock_apply(&s, err);
	if (r < 0)
		return dsh_err_prefix(err, "serve: confine with Landlock");
	return 0;
}
