/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_ERROR_H
#define DSHBOX_ERROR_H

/*
 * The one error type of libdshbox.  Fallible functions return 0 or a negative errno-style value and
 * fill `struct dsh_error **err` (always the last parameter).  Each caller that adds meaning prepends
 * its context, so a message reads outermost first:
 *   mount 3/7 '/home/u/.ssh' (mask, rule "-- {{ env.HOME }}/.ssh"): open_tree: Permission denied
 */

#include <stdarg.h>

#include "dshbox/export.h"

/*
 * What went wrong, as a caller decides on it: the CLI maps each kind to an exit code (one table in
 * cli/), the file fence and serve name it in their answers.
 */
#define DSH_ERR_KINDS(X)                                                                          \
	X(DSH_ERR_SYSTEM, "io")                   /* a syscall or library call failed; code: errno */ \
	X(DSH_ERR_POLICY, "policy")               /* a rule or the policy is invalid */              \
	X(DSH_ERR_CONFIG, "config")               /* the configuration or an option is invalid */    \
	X(DSH_ERR_USAGE, "usage")                 /* the call itself is wrong */                     \
	X(DSH_ERR_UNSUPPORTED, "unsupported")     /* this kernel or platform cannot enforce it */    \
	X(DSH_ERR_DENIED, "denied")               /* the policy forbids it (rule and path set) */    \
	X(DSH_ERR_NOT_FOUND, "not-found")                                                            \
	X(DSH_ERR_CONFLICT, "conflict")           /* changed by someone else since it was read */    \
	X(DSH_ERR_NOT_REGULAR, "not-regular-file")                                                   \
	X(DSH_ERR_TOO_LARGE, "too-large")                                                            \
	X(DSH_ERR_INVALID, "invalid")             /* a request that cannot be carried out as asked */ \
	X(DSH_ERR_NOT_TEXT, "not-text")           /* edit of a file with a NUL byte or invalid UTF-8 */

enum dsh_err_kind {
#define DSH_ERR_X(e, s) e,
	DSH_ERR_KINDS(DSH_ERR_X)
#undef DSH_ERR_X
};
DSH_PUBLIC const char *dsh_err_kind_to_string(enum dsh_err_kind k);

struct dsh_error {
	enum dsh_err_kind kind;
	int code;      /* positive errno value; EINVAL for policy/config/usage errors */
	char *msg;     /* one line, outermost context first */
	char *hint;    /* optional one-line remedy for the user, or NULL */
	char *path;    /* the subject: the path concerned, or NULL */
	char *rule;    /* the deciding rule's text (denied), or NULL */
};

/*
 * printf-style checking.  On mingw-w64 the archetype "printf" means msvcrt's formats (no %zu, no
 * %lld); the Windows build uses mingw's own C99 printf (__USE_MINGW_ANSI_STDIO), whose formats are
 * GNU's, so it checks against those.
 */
#ifdef _WIN32
#define DSH_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#else
#define DSH_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#endif

/* Set *err (if err and *err is still NULL) and return -code (code 0 counts as EINVAL). */
DSH_PUBLIC int dsh_err(struct dsh_error **err, enum dsh_err_kind kind, int code, const char *fmt, ...)
	DSH_PRINTF(4, 5);
/* Like dsh_err with DSH_ERR_SYSTEM, appending ": strerror(code)". */
DSH_PUBLIC int dsh_err_sys(struct dsh_error **err, int code, const char *fmt, ...) DSH_PRINTF(3, 4);
/* Prepend "context: " to the message; returns the error's -code (or -EINVAL with no error). */
DSH_PUBLIC int dsh_err_prefix(struct dsh_error **err, const char *fmt, ...) DSH_PRINTF(2, 3);
/* Attach (or replace) the subject: the path concerned and the deciding rule (either may be NULL). */
DSH_PUBLIC void dsh_err_subject(struct dsh_error **err, const char *path, const char *rule);
/* Attach (or replace) the hint. */
DSH_PUBLIC void dsh_err_hint(struct dsh_error **err, const char *fmt, ...) DSH_PRINTF(2, 3);
DSH_PUBLIC void dsh_error_free(struct dsh_error *err);

#endif
