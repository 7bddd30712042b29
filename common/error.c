/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dshbox/error.h"

/* A message is one line (dshbox: error: ...), and what it quotes may be anything the user or a
 * command wrote: control characters are spelled out (\n, \x01), so that a name with a newline in
 * it can neither split the line nor forge a second one. */
static char *one_line(char *s)
{
	size_t n = 0;
	if (!s)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += *p < 0x20 || *p == 0x7f ? 4 : 1;
	if (n == strlen(s))
		return s;
	char *out = malloc(n + 1), *o = out;
	if (out) {
		for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
			if (*p == '\n' || *p == '\t' || *p == '\r') {
				*o++ = '\\';
				*o++ = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
			} else if (*p < 0x20 || *p == 0x7f) {
				o += sprintf(o, "\\x%02x", *p);
			} else {
				*o++ = (char)*p;
			}
		}
		*o = '\0';
	}
	free(s);
	return out;
}

static char *vformat(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return one_line(s);
}

/* Used when even the error cannot be allocated: the caller still sees a failure, never success. */
static struct dsh_error oom_error = { DSH_ERR_SYSTEM, ENOMEM, (char *)"out of memory", NULL, NULL, NULL };

static int set(struct dsh_error **err, enum dsh_err_kind kind, int code, char *msg)
{
	if (code <= 0)
		code = EINVAL;
	if (!err || *err) {
		free(msg);
		return -code;
	}
	struct dsh_error *e = calloc(1, sizeof(*e));
	if (!e || !msg) {
		free(e);
		free(msg);
		*err = &oom_error;
		return -code;
	}
	e->kind = kind;
	e->code = code;
	e->msg = msg;
	*err = e;
	return -code;
}

static const char *const kind_names[] = {
#define DSH_ERR_X(e, s) [e] = s,
	DSH_ERR_KINDS(DSH_ERR_X)
#undef DSH_ERR_X
};

const char *dsh_err_kind_to_string(enum dsh_err_kind k)
{
	return (size_t)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : "io";
}

int dsh_err(struct dsh_error **err, enum dsh_err_kind kind, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = vformat(fmt, ap);
	va_end(ap);
	return set(err, kind, code, msg);
}

void dsh_err_subject(struct dsh_error **err, const char *path, const char *rule)
{
	if (!err || !*err || *err == &oom_error)
		return;
	char *p = path ? strdup(path) : NULL, *r = rule ? strdup(rule) : NULL;
	free((*err)->path);
	free((*err)->rule);
	(*err)->path = p;
	(*err)->rule = r;
}

int dsh_err_sys(struct dsh_error **err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *ctx = vformat(fmt, ap);
	va_end(ap);
	char *msg = NULL;
	if (ctx && asprintf(&msg, "%s: %s", ctx, strerror(code > 0 ? code : EINVAL)) < 0)
		msg = NULL;
	free(ctx);
	return set(err, DSH_ERR_SYSTEM, code, msg);
}

int dsh_err_prefix(struct dsh_error **err, const char *fmt, ...)
{
	if (!err || !*err)
		return -EINVAL;
	struct dsh_error *e = *err;
	if (e == &oom_error)
		return -ENOMEM;
	va_list ap;
	va_start(ap, fmt);
	char *ctx = vformat(fmt, ap);
	va_end(ap);
	char *msg = NULL;
	if (ctx && asprintf(&msg, "%s: %s", ctx, e->msg) >= 0) {
		free(e->msg);
		e->msg = msg;
	}
	free(ctx);
	return -e->code;
}

void dsh_err_hint(struct dsh_error **err, const char *fmt, ...)
{
	if (!err || !*err || *err == &oom_error)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *hint = vformat(fmt, ap);
	va_end(ap);
	if (!hint)
		return;
	free((*err)->hint);
	(*err)->hint = hint;
}

void dsh_error_free(struct dsh_error *err)
{
	if (!err || err == &oom_error)
		return;
	free(err->msg);
	free(err->hint);
	free(err->path);
	free(err->rule);
	free(err);
}
