/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "policy/winpath.h"

static bool is_sep(char c)
{
	return c == '/' || c == '\\';
}

static bool is_drive_letter(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static char upper(char c)
{
	return (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
}

int dsh_win_path_to_policy(const char *path, char **ret, struct dsh_error **err)
{
	struct dsh_buf b = { 0 };
	const char *p = path;
	/* The Win32 file namespace prefix (GetFinalPathNameByHandle answers with it). */
	if (strncmp(p, "\\\\?\\", 4) == 0 && is_drive_letter(p[4]) && p[5] == ':')
		p += 4;
	if (is_sep(p[0]) && is_sep(p[1])) {
		int r = dsh_err(err, DSH_ERR_USAGE, EINVAL, "'%s': UNC and device paths are not supported", path);
		dsh_err_hint(err, "map a drive letter to the share and use that");
		return r;
	}
	if (is_drive_letter(p[0]) && p[1] == ':') {
		if (p[2] && !is_sep(p[2]))
			return dsh_err(err, DSH_ERR_USAGE, EINVAL,
				       "'%s' is relative to the current directory of drive %c: (write %c:\\%s)", path,
				       upper(p[0]), upper(p[0]), p + 2);
		dsh_buf_addc(&b, '/');
		dsh_buf_addc(&b, upper(p[0]));
		dsh_buf_addc(&b, ':');
		p += 2;
	} else if (is_sep(p[0])) {
		return dsh_err(err, DSH_ERR_USAGE, EINVAL, "'%s' names no drive (write C:%s or the like)", path, path);
	}
	for (; *p; p++)
		dsh_buf_addc(&b, *p == '\\' ? '/' : *p);
	/* "C:\" is the drive's root: "/C:", no trailing separator (as dsh_path_normalize writes it). */
	while (b.len > 3 && b.s[0] == '/' && b.s[b.len - 1] == '/')
		b.s[--b.len] = '\0';
	char *out = dsh_buf_steal(&b);
	if (!out)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	*ret = out;
	return 0;
}

int dsh_win_path_from_policy(const char *path, char **ret)
{
	if (path[0] != '/' || !is_drive_letter(path[1]) || path[2] != ':' || (path[3] && path[3] != '/'))
		return -EINVAL;
	struct dsh_buf b = { 0 };
	dsh_buf_addc(&b, upper(path[1]));
	dsh_buf_add(&b, ":\\");
	for (const char *p = path[3] ? path + 4 : path + 3; *p; p++)
		dsh_buf_addc(&b, *p == '/' ? '\\' : *p);
	char *out = dsh_buf_steal(&b);
	if (!out)
		return -ENOMEM;
	*ret = out;
	return 0;
}
