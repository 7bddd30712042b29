/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * supervisor/child.c, the one child-supervision loop of the sandbox and the runner: statuses
 * decoded, signals passed on, a stderr relayed, and the caller's process left as it was (mask,
 * SIGPIPE, no stray signal delivered after the run).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "common/write_all.h"
#include "supervisor/child.h"

static int exit_42(void *arg)
{
	(void)arg;
	return 42;
}

static int die_of_sigsegv(void *arg)
{
	(void)arg;
	signal(SIGSEGV, SIG_DFL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGSEGV);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(SIGSEGV);
	return 1;
}

/* Runs fn to its end with no watch; returns the decoded result. */
static struct dsh_run_result run(int (*fn)(void *), void *arg)
{
	struct dsh_child ch;
	struct dsh_error *err = NULL;
	cr_assert_eq(dsh_child_begin(&ch, &err), 0);
	cr_assert_eq(dsh_child_spawn(&ch, 0, fn, arg, &err), 0);
	cr_assert_eq(dsh_child_wait(&ch, NULL, 0, &err), 0);
	cr_assert(ch.reaped);
	struct dsh_run_result res = { 0 };
	dsh_child_decode(ch.status, &res);
	dsh_child_end(&ch);
	return res;
}

Test(child, exit_status_and_signal_death_decoded)
{
	struct dsh_run_result r = run(exit_42, NULL);
	cr_expect_eq(r.exit_code, 42);
	cr_expect_eq(r.signal, 0);
	r = run(die_of_sigsegv, NULL);
	cr_expect_eq(r.signal, SIGSEGV);
	cr_expect_eq(r.exit_code, 128 + SIGSEGV);
}

/* The child gets the caller's mask back, as a command at exec would, and waits for a signal. */
struct waiter {
	const sigset_t *mask;
	int ready_w;
};

static int wait_for_a_signal(void *p)
{
	struct waiter *w = p;
	sigprocmask(SIG_SETMASK, w->mask, NULL);
	(void)dsh_write_all(w->ready_w, "r", 1);
	while (pause() < 0 && errno == EINTR)
		;
	return 1;
}

Test(child, a_signal_sent_to_the_caller_reaches_the_child)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	/* Under nohup (or any caller that ignores one) an ignored signal is one the child inherits
	   ignored as well, and waits out forever: the forwarding is what is tested here. */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		int p[2];
		cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
		struct dsh_child ch;
		struct dsh_error *err = NULL;
		cr_assert_eq(dsh_child_begin(&ch, &err), 0);
		struct waiter w = { &ch.caller_mask, p[1] };
		cr_assert_eq(dsh_child_spawn(&ch, 0, wait_for_a_signal, &w, &err), 0);
		char c;
		cr_assert_eq(read(p[0], &c, 1), 1);
		/* Sent to us (SI_USER), as `kill dshbox` does: passed on, exactly once. */
		kill(getpid(), sigs[i]);
		cr_assert_eq(dsh_child_wait(&ch, NULL, 0, &err), 0);
		struct dsh_run_result r = { 0 };
		dsh_child_decode(ch.status, &r);
		cr_expect_eq(r.signal, sigs[i], "signal %d: the child ended with signal %d, exit %d", sigs[i], r.signal,
			     r.exit_code);
		dsh_child_end(&ch);
		close(p[0]);
		close(p[1]);
	}
}

static int sigpipe_is_default(void *arg)
{
	(void)arg;
	struct sigaction sa;
	sigaction(SIGPIPE, NULL, &sa);
	return sa.sa_handler == SIG_DFL ? 0 : 1;
}

Test(child, the_caller_is_left_as_it_was)
{
	sigset_t before, after;
	sigemptyset(&before);
	sigaddset(&before, SIGUSR2);
	sigprocmask(SIG_SETMASK, &before, NULL);
	struct sigaction pipe_before, pipe_after;
	sigaction(SIGPIPE, NULL, &pipe_before);

	struct dsh_child ch;
	struct dsh_error *err = NULL;
	cr_assert_eq(dsh_child_begin(&ch, &err), 0);
	cr_assert_eq(dsh_child_spawn(&ch, 0, sigpipe_is_default, NULL, &err), 0);
	cr_assert_eq(dsh_child_wait(&ch, NULL, 0, &err), 0);
	struct dsh_run_result r = { 0 };
	dsh_child_decode(ch.status, &r);
	cr_expect_eq(r.exit_code, 0, "the child inherited an ignored SIGPIPE");
	/* Came for the child, after it ended: dropped, not delivered to us when the mask comes back
	   (SIGTERM's default action would end this test). */
	kill(getpid(), SIGTERM);
	dsh_child_end(&ch);

	sigprocmask(SIG_SETMASK, NULL, &after);
	cr_expect(sigismember(&after, SIGUSR2) && !sigismember(&after, SIGTERM) && !sigismember(&after, SIGCHLD),
		  "the caller's mask was not restored");
	sigaction(SIGPIPE, NULL, &pipe_after);
	cr_expect(pipe_after.sa_handler == pipe_before.sa_handler, "the caller's SIGPIPE disposition changed");
	sigset_t pending;
	sigpending(&pending);
	cr_expect(!sigismember(&pending, SIGTERM), "a signal for the child is still pending");
}

/* Writes every byte value, NUL included, to fd 2 (the relay pipe). */
static int write_bytes(void *p)
{
	int fd = *(int *)p;
	char buf[256];
	for (int i = 0; i < 256; i++)
		buf[i] = (char)i;
	for (int k = 0; k < 64; k++)
		if (dsh_write_all(fd, buf, sizeof(buf)) < 0)
			return 1;
	return 0;
}

static void count(void *data, const char *buf, size_t n)
{
	(void)buf;
	*(size_t *)data += n;
}

Test(child, relay_is_byte_for_byte_and_tapped)
{
	int in[2], out[2];
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	struct dsh_child ch;
	struct dsh_error *err = NULL;
	cr_assert_eq(dsh_child_begin(&ch, &err), 0);
	cr_assert_eq(dsh_child_spawn(&ch, 0, write_bytes, &in[1], &err), 0);
	close(in[1]);
	size_t tapped = 0;
	struct dsh_child_relay relay = { .to = out[1], .tap = count, .tap_data = &tapped };
	struct dsh_child_watch w = { in[0], dsh_child_relay_ready, &relay };
	cr_assert_eq(dsh_child_wait(&ch, &w, 1, &err), 0);
	cr_expect_eq(w.fd, -1, "the relay was read to its end");
	dsh_child_end(&ch);
	close(out[1]);
	cr_expect_eq(tapped, 64 * 256);
	char got[64 * 256 + 1];
	size_t have = 0;
	for (ssize_t n; (n = read(out[0], got + have, sizeof(got) - have)) > 0;)
		have += (size_t)n;
	cr_assert_eq(have, 64 * 256);
	for (size_t i = 0; i < have; i++)
		cr_assert_eq((unsigned char)got[i], i % 256, "byte %zu", i);
	close(in[0]);
	close(out[0]);
}
