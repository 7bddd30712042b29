/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_COMPAT_WIN_H
#define DSH_COMMON_COMPAT_WIN_H

/*
 * The few GNU/POSIX string functions the portable code uses that mingw-w64's C library lacks.
 * `make windows` force-includes this header (-include) into every file it builds, so the portable
 * sources stay as they are; the definitions are in compat_win.c.
 */

#include <stddef.h>
#include <string.h>

char *strndup(const char *s, size_t n);
char *strchrnul(const char *s, int c);

#endif
