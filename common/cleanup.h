/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_CLEANUP_H
#define DSH_COMMON_CLEANUP_H

/*
 * Scope-owned resources are released by __attribute__((cleanup)); ownership leaves a scope only
 * through TAKE_PTR / TAKE_FD.  Every destructor accepts NULL or -1.  `goto` is kept for rolling back
 * external state, never for freeing memory.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

#include "dshbox/error.h"

static inline void dsh_freep(void *p)
{
	free(*(void **)p);
}
static inline void dsh_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}
static inline void dsh_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
static inline void dsh_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
static inline void dsh_error_freep(struct dsh_error **e)
{
	dsh_error_free(*e);
}
void dsh_strv_free(char **v);
static inline void dsh_strv_freep(char ***v)
{
	dsh_strv_free(*v);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(dsh_freep)
#define _cleanup_close_ _cleanup_(dsh_closep)
#define _cleanup_fclose_ _cleanup_(dsh_fclosep)
#define _cleanup_closedir_ _cleanup_(dsh_closedirp)
#define _cleanup_error_ _cleanup_(dsh_error_freep)
#define _cleanup_strv_ _cleanup_(dsh_strv_freep)

#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) _tp_ = (p);    \
		(p) = NULL;                  \
		_tp_;                        \
	})
#define TAKE_FD(fd)                  \
	({                           \
		int _tf_ = (fd);     \
		(fd) = -1;           \
		_tf_;                \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
