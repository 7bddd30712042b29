/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What attaching a seccomp program costs a start (issue 25): the seccomp() call that installs it,
 * in a fresh child each time, for every program a run loads — the deny program, the broker's
 * (with its listener), the two joined as the command gets them, the broker's own allow-list — and
 * for a one-instruction "allow" program, the floor of the call.  The kernel copies the program,
 * checks it, JIT-compiles it and fills its action cache by running it once per syscall number of
 * each architecture: what grows with the program's length and shape.
 *
 *   bench_seccomp_attach [ROUNDS]       median and minimum us per attach, ROUNDS children each
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "seccomp/seccomp.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One attach in a fresh child; the child writes its time to the pipe. */
static double attach_once(const struct dsh_seccomp_prog *p, unsigned flags)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(1);
		struct sock_fprog fp = { .len = p->len, .filter = p->insns };
		double t0 = now_us();
		long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp);
		double t = now_us() - t0;
		if (r < 0)
			_exit(2);
		_exit(write(fds[1], &t, sizeof(t)) == sizeof(t) ? 0 : 3);
	}
	close(fds[1]);
	double t = -1;
	if (read(fds[0], &t, sizeof(t)) != sizeof(t))
		t = -1;
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	return t;
}

static void measure(const char *name, const struct dsh_seccomp_prog *p, unsigned flags, int rounds)
{
	double *t = calloc((size_t)rounds, sizeof(*t));
	for (int i = 0; i < rounds; i++)
		if ((t[i] = attach_once(p, flags)) < 0) {
			printf("   %-34s %4u insns: the kernel refused it\n", name, p->len);
			free(t);
			return;
		}
	qsort(t, (size_t)rounds, sizeof(*t), cmp);
	printf("   %-34s %4u insns: median %7.1f us   min %7.1f us\n", name, p->len, t[rounds / 2], t[0]);
	free(t);
}

static int die(const char *what, struct dsh_error *err)
{
	fprintf(stderr, "bench_seccomp_attach: %s: %s\n", what, err && err->msg ? err->msg : "?");
	return 2;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50;
	if (rounds < 1)
		rounds = 1;
	struct dsh_error *err = NULL;
	struct dsh_seccomp_opts o = { 0 };
	struct dsh_seccomp_prog deny = { 0 }, notify = { 0 }, notify_s = { 0 }, joined = { 0 }, broker = { 0 };
	if (dsh_seccomp_compile(&o, &deny, &err) < 0)
		return die("deny", err);
	if (dsh_seccomp_compile_notify(&notify, false, &err) < 0 || dsh_seccomp_compile_notify(&notify_s, true, &err) < 0)
		return die("notify", err);
	if (dsh_seccomp_join(&deny, &notify_s, &joined, &err) < 0)
		return die("join", err);
	if (dsh_seccomp_compile_broker(&broker, &err) < 0)
		return die("broker", err);
	struct sock_filter allow_insn = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct dsh_seccomp_prog allow = { &allow_insn, 1 };
	char jit[8] = "?";
	FILE *f = fopen("/proc/sys/net/core/bpf_jit_enable", "re");
	if (f) {
		if (!fgets(jit, sizeof(jit), f))
			snprintf(jit, sizeof(jit), "?");
		jit[strcspn(jit, "\n")] = '\0';
		fclose(f);
	}
	printf("-- seccomp(SET_MODE_FILTER) in a fresh child, %d children each (net.core.bpf_jit_enable = %s)\n",
	       rounds, jit);
	measure("allow (the floor of the call)", &allow, 0, rounds);
	measure("deny (the command's, alone)", &deny, 0, rounds);
	measure("broker's notify, with listener", &notify, SECCOMP_FILTER_FLAG_NEW_LISTENER, rounds);
	measure("broker's notify + sockets, listener", &notify_s, SECCOMP_FILTER_FLAG_NEW_LISTENER, rounds);
	if (joined.insns)
		measure("deny joined with notify (a run's)", &joined, SECCOMP_FILTER_FLAG_NEW_LISTENER, rounds);
	measure("broker's own allow-list (init's)", &broker, 0, rounds);
	dsh_seccomp_prog_clear(&deny);
	dsh_seccomp_prog_clear(&notify);
	dsh_seccomp_prog_clear(&notify_s);
	dsh_seccomp_prog_clear(&joined);
	dsh_seccomp_prog_clear(&broker);
	return 0;
}
