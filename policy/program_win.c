/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Windows side of dsh_program_in_use (policy/protected.h): the runner's executable, in the
 * policy's spelling (/C:/dir/dshbox-winrun.exe), so that the winacl plan denies the command writes
 * to it as to any r- target.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <errno.h>
#include <stdlib.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/protected.h"
#include "policy/winpath.h"

int dsh_program_in_use(char ***ret, struct dsh_error **err)
{
	wchar_t wide[32768];
	DWORD n = GetModuleFileNameW(NULL, wide, ARRAY_SIZE(wide));
	if (n == 0 || n >= ARRAY_SIZE(wide))
		return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "the program in use: GetModuleFileNameW failed");
	int k = WideCharToMultiByte(CP_UTF8, 0, wide, -1, NULL, 0, NULL, NULL);
	_cleanup_free_ char *utf8 = k > 0 ? malloc((size_t)k) : NULL;
	if (!utf8 || WideCharToMultiByte(CP_UTF8, 0, wide, -1, utf8, k, NULL, NULL) <= 0)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "the program in use: its name in UTF-8");
	char *path = NULL;
	int r = dsh_win_path_to_policy(utf8, &path, err);
	if (r < 0)
		return r;
	_cleanup_strv_ char **v = NULL;
	if (dsh_strv_push_take(&v, path) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	*ret = TAKE_PTR(v);
	return 0;
}
