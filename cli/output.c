/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"

/* Error lines are one line each: a message that somehow holds a newline is folded, never split. */
static void put_line(const char *prefix, const char *msg)
{
	fputs(prefix, stderr);
	for (const char *c = msg; *c; c++)
		fputc(*c == '\n' || *c == '\r' ? ' ' : *c, stderr);
	fputc('\n', stderr);
}

int cli_fail(const struct dsh_error *e)
{
	put_line("dshbox: error: ", e && e->msg ? e->msg : "unknown failure");
	if (e && e->hint)
		put_line("dshbox: hint: ", e->hint);
	return DSH_EXIT_FAILURE;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	put_line("dshbox: error: ", msg);
	if (cmd)
		fprintf(stderr, "dshbox: hint: see 'dshbox %s --help'\n", cmd);
	else
		fprintf(stderr, "dshbox: hint: see 'dshbox --help'\n");
	return DSH_EXIT_FAILURE;
}

static void put_linev(const char *prefix, const char *fmt, va_list ap)
{
	char msg[4096];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	put_line(prefix, msg);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	put_linev("dshbox: warning: ", fmt, ap);
	va_end(ap);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	put_linev("dshbox: note: ", fmt, ap);
	va_end(ap);
}
