/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_VERSION_H
#define DSHBOX_VERSION_H

/*
 * Which libdshbox a program was compiled against (the macros) and which one it runs with (the
 * functions).  With the shared library the two may differ: a host that depends on a release's
 * behaviour asks at run time.
 */

#include "dshbox/export.h"

#define DSHBOX_VERSION "0.1.0"
/*
 * The number in the shared library's soname (libdshbox.so.N, read from here by the Makefile):
 * raised whenever a program built against the previous one could no longer run against this one.
 */
#define DSHBOX_ABI 0

/* The release the running library was built as, DSHBOX_VERSION's spelling ("0.1.0"). */
DSH_PUBLIC const char *dsh_version(void);
/* The running library's DSHBOX_ABI. */
DSH_PUBLIC int dsh_abi(void);

#endif
