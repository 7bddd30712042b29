/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_WINPATH_H
#define DSH_POLICY_WINPATH_H

/*
 * How the policy spells a Windows path.  The policy speaks absolute '/'-paths (SPEC 1.3: '.' and
 * '..' removed lexically, relative rules resolved against the workspace); on Windows a drive path
 * C:\dir\file is spelled /C:/dir/file in it, the drive letter upper-cased, so that every lexical
 * step of policy/ works unchanged and the spelling maps back without guessing.  Pure; built and
 * tested on every platform.  UNC paths (\\server\share) have no spelling: map a drive letter.
 */

#include "dshbox/error.h"

/*
 * A Windows path into the policy's spelling: "C:\a\b" or "C:/a/b" -> "/C:/a/b", "C:\" -> "/C:",
 * "\\?\C:\a" -> "/C:/a"; a relative path keeps being relative with '\' turned into '/'.  A UNC
 * path, a drive-relative "C:x" and a rooted "\x" (on which drive?) are errors.
 */
int dsh_win_path_to_policy(const char *path, char **ret, struct dsh_error **err);
/* The way back: "/C:/a/b" -> "C:\a\b", "/C:" -> "C:\"; -EINVAL for a path that names no drive. */
int dsh_win_path_from_policy(const char *path, char **ret);

#endif
