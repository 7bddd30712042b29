/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef DSH_TESTS_UNIT_CHILD_CHECK_H
#define DSH_TESTS_UNIT_CHILD_CHECK_H

/*
 * Checks that change the process for good (Landlock, seccomp, capabilities) run in a forked child;
 * the child reports its first failed expectation on a pipe and the test asserts on it.  Header-only,
 * shared by the hardening unit tests.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/harness.h"

static int report_fd __attribute__((unused)) = -1;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (write(report_fd, msg, n > 0 && (size_t)n < sizeof(msg) ? (size_t)n : strlen(msg)) < 0)
		_exit(3);
	_exit(1);
}

#define EXPECT_ERRNO(call, want)                                                             \
	do {                                                                                 \
		errno = 0;                                                                   \
		long _r = (long)(call);                                                      \
		if (_r >= 0 || errno != (want))                                              \
			fail("%s: want errno %s, got %ld errno %s", #call, strerrorname_np(want), \
			     _r, errno ? strerrorname_np(errno) : "0");                      \
	} while (0)
#define EXPECT_OK(call)                                                                        \
	do {                                                                                   \
		errno = 0;                                                                     \
		long _r = (long)(call);                                                        \
		if (_r < 0)                                                                    \
			fail("%s: %s", #call, strerror(errno));                                \
	} while (0)

/* Run fn(arg) in a forked child; its exit status, and its first failed expectation in msg. */
static int __attribute__((unused)) in_child_status(void (*fn)(void *), void *arg, char msg[513])
{
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1];
		fn(arg);
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], msg, 512);
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static void __attribute__((unused)) in_child(void (*fn)(void *), void *arg)
{
	char msg[513] = "";
	int status = in_child_status(fn, arg, msg);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %s (status %#x)", msg, status);
}

#endif
