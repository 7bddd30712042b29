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

enum dsh_err_domain {
	DSH_ERR_SYSTEM,  /* a syscall or library call failed; code is the errno */
	DSH_ERR_POLICY,  /* a rule or the policy is invalid */
	DSH_ERR_CONFIG,  /* the configuration file or an option is invalid */
	DSH_ERR_USAGE,   /* the command line is wrong */
	DSH_ERR_UNSUPPORTED, /* the kernel or platform cannot enforce what was asked */
};

struct dsh_error {
	enum dsh_err_domain domain;
	int code;      /* positive errno value; EINVAL for policy/config/usage errors */
	char *msg;     /* one line, outermost context first */
	char *hint;    /* optional one-line remedy for the user, or NULL */
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
int dsh_err(struct dsh_error **err, enum dsh_err_domain domain, int code, const char *fmt, ...)
	DSH_PRINTF(4, 5);
/* Like dsh_err with DSH_ERR_SYSTEM, appending ": strerror(code)". */
int dsh_err_sys(struct dsh_error **err, int code, const char *fmt, ...)
	DSH_PRINTF(3, 4);
/* Prepend "context: " to the message; returns the error's -code (or -EINVAL with no error). */
int dsh_err_prefix(struct dsh_error **err, const char *fmt, ...) DSH_PRINTF(2, 3);
/* Attach (or replace) the hint. */
void dsh_err_hint(struct dsh_error **err, const char *fmt, ...) DSH_PRINTF(2, 3);
void dsh_error_free(struct dsh_error *err);

#endif
