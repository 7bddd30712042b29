/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Windows side of the canonicalisation seam (policy/path.h), for paths in the policy's spelling
 * (/C:/dir, policy/winpath.h).  SPEC 1.3 canonicalises the longest existing prefix with its links
 * resolved, and on Windows the links are symlinks and junctions: a purely lexical fallback would
 * grant or deny the junction's own name while the command writes through it to the target.  So the
 * file system answers, as realpath() does on POSIX: open the path (no access asked, directories
 * too) and take GetFinalPathNameByHandleW's normalised DOS name, which has every reparse point
 * resolved and the names in their stored case.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/path.h"
#include "policy/winpath.h"

static wchar_t *to_wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w = n > 0 ? malloc((size_t)n * sizeof(wchar_t)) : NULL;
	if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) <= 0) {
		free(w);
		w = NULL;
	}
	return w;
}

static char *to_utf8(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	char *s = n > 0 ? malloc((size_t)n) : NULL;
	if (s && WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) <= 0) {
		free(s);
		s = NULL;
	}
	return s;
}

/* Translated once here, as path.c expects: the "missing" family cuts a component and retries. */
static int errno_from_win(DWORD e)
{
	switch (e) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_NAME:
	case ERROR_BAD_NETPATH:
	case ERROR_NOT_READY:
		return -ENOENT;
	case ERROR_DIRECTORY:
		return -ENOTDIR;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION:
		return -EACCES;
	case ERROR_CANT_RESOLVE_FILENAME:
		return -ELOOP;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/* The policy path as a wide Windows path; NULL with *r set when it names no drive. */
static wchar_t *wide_path(const char *path, int *r)
{
	_cleanup_free_ char *win = NULL;
	*r = dsh_win_path_from_policy(path, &win);
	if (*r < 0) {
		/* "/tmp" and the like name nothing on Windows: missing, so the lexical rest stays. */
		if (*r == -EINVAL)
			*r = -ENOENT;
		return NULL;
	}
	wchar_t *w = to_wide(win);
	if (!w)
		*r = -EINVAL;
	return w;
}

int dsh_path_real(const char *path, char **ret)
{
	/* The policy's "/" is above every drive: it exists by convention and is its own canon. */
	if (strcmp(path, "/") == 0) {
		*ret = strdup("/");
		return *ret ? 0 : -ENOMEM;
	}
	int r;
	_cleanup_free_ wchar_t *w = wide_path(path, &r);
	if (!w)
		return r;
	HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
			       NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return errno_from_win(GetLastError());
	DWORD flags = FILE_NAME_NORMALIZED | VOLUME_NAME_DOS;
	DWORD n = GetFinalPathNameByHandleW(h, NULL, 0, flags);
	_cleanup_free_ wchar_t *final = n ? malloc(((size_t)n + 1) * sizeof(wchar_t)) : NULL;
	DWORD got = final ? GetFinalPathNameByHandleW(h, final, n + 1, flags) : 0;
	DWORD e = GetLastError();
	CloseHandle(h);
	if (!final && n)
		return -ENOMEM;
	if (got == 0 || got > n)
		return errno_from_win(e);
	_cleanup_free_ char *utf8 = to_utf8(final);
	if (!utf8)
		return -EINVAL;
	/* A path whose target is a share (\\?\UNC\...) has no policy spelling: refused, not guessed. */
	struct dsh_error *err = NULL;
	r = dsh_win_path_to_policy(utf8, ret, &err);
	dsh_error_free(err);
	return r < 0 ? -EXDEV : 0;
}

bool dsh_path_is_link(const char *path)
{
	int r;
	_cleanup_free_ wchar_t *w = wide_path(path, &r);
	if (!w)
		return false;
	DWORD a = GetFileAttributesW(w);
	return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_REPARSE_POINT);
}

/* No lookups relative to a directory here: every name is looked up by its path. */
int dsh_path_dir_handle(const char *dir)
{
	(void)dir;
	return -1;
}

bool dsh_path_is_link_in(int handle, const char *name, const char *path)
{
	(void)handle;
	(void)name;
	return dsh_path_is_link(path);
}

void dsh_path_dir_handle_close(int handle)
{
	(void)handle;
}
