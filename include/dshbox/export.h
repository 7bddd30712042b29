/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_EXPORT_H
#define DSHBOX_EXPORT_H

/*
 * DSH_PUBLIC marks what libdshbox.so exports: every function (and the one data object) declared
 * under include/dshbox/ carries it, and nothing else does.  The library's objects are compiled
 * with -fvisibility=hidden, so a dsh_* function of the library's own headers stays inside it
 * whatever its name (STYLE 21; crun's LIBCRUN_PUBLIC).  tools/check-exports.sh (make lint) holds
 * the headers and the shared library's dynamic symbol table to each other.
 *
 * Empty where there is no shared library to mark for: the mingw-w64 build (whose DLL rules are
 * dllexport, not visibility) and a compiler without GCC's attribute.
 */
#if defined(_WIN32)
#define DSH_PUBLIC
#elif defined(__GNUC__)
#if __GNUC__ >= 4
#define DSH_PUBLIC __attribute__((visibility("default")))
#else
#define DSH_PUBLIC
#endif
#else
#define DSH_PUBLIC
#endif

#endif
