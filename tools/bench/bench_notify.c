/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The least a brokered call can cost on this machine: a seccomp user notification answered at
 * once, with nothing read, resolved or performed.
 *
 *   bench_notify ITERS
 *
 * A child loads a filter that sends fchmod() to a listener and calls fchmod(-1, 0) ITERS times;
 * the parent holds the listener and answers every notification with 0.  Printed, in ns per call,
 * the best of 7 rounds each: the call bare (the kernel's EBADF), answered with RECV + SEND
 * ("notify"), with a poll() before each RECV as a server of several descriptors waits ("poll"),
 * and both with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6; "-" where the kernel lacks it),
 * which keeps the caller and the answerer on one CPU as the runtime broker does.  Whatever the
 * broker does for a call comes on top of these: they are the two context switches and the
 * kernel's own part of a notification, the floor of any design that brokers a call.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define ROUNDS 7

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double calls(long iters)
{
	double t0 = now_ns();
	for (long i = 0; i < iters; i++)
		(void)fchmod(-1, 0);
	return (now_ns() - t0) / (double)iters;
}

static int load_listener(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fchmod, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static int send_fd(int sock, int fd)
{
	char c = 0;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = { 0 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* The answerer: every notification gets 0 until the child closes its end. */
static void serve(int listener, bool with_poll)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	for (;;) {
		if (with_poll) {
			struct pollfd p = { .fd = listener, .events = POLLIN };
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return;
			if (p.revents & POLLHUP)
				return;
		}
		memset(&req, 0, sizeof(req));
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR)
				continue;
			return; /* ENOENT after the child's exit, or the listener gone */
		}
		resp = (struct seccomp_notif_resp){ .id = req.id, .error = 0, .val = 0 };
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

/* One round: ns per notified call, or -1 (with sync and no kernel support: -2). */
static double round_trip(long iters, bool with_poll, bool sync)
{
	int sv[2], res[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe(res) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(sv[0]);
		close(res[0]);
		int l = load_listener();
		if (l < 0 || send_fd(sv[1], l) < 0)
			_exit(2);
		close(l);
		char go;
		if (read(sv[1], &go, 1) != 1) /* the parent holds the listener and is ready */
			_exit(2);
		double ns = calls(iters);
		_exit(write(res[1], &ns, sizeof(ns)) == (ssize_t)sizeof(ns) ? 0 : 2);
	}
	close(sv[1]);
	close(res[1]);
	double ns = -1;
	int l = recv_fd(sv[0]);
	if (l >= 0 && sync && ioctl(l, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0)
		ns = -2;
	if (l >= 0 && ns != -2 && write(sv[0], "g", 1) == 1) {
		/* The child's results arrive after its last call; the answers stop when it is gone. */
		serve(l, with_poll);
		if (read(res[0], &ns, sizeof(ns)) != (ssize_t)sizeof(ns))
			ns = -1;
	}
	if (ns == -2 || l < 0)
		kill(pid, SIGKILL);
	if (l >= 0)
		close(l);
	close(sv[0]);
	close(res[0]);
	int st;
	waitpid(pid, &st, 0);
	return ns;
}

static void print_best(const char *name, double best)
{
	if (best == -2)
		printf(" %s=-", name);
	else
		printf(" %s=%.0f", name, best);
}

int main(int argc, char **argv)
{
	if (argc != 2 || atol(argv[1]) <= 0) {
		fprintf(stderr, "usage: bench_notify ITERS\n");
		return 2;
	}
	long iters = atol(argv[1]);
	double best[5] = { 1e18, 1e18, 1e18, 1e18, 1e18 };
	for (int r = 0; r < ROUNDS; r++) {
		double v[5] = { calls(iters), round_trip(iters, false, false), round_trip(iters, true, false),
				round_trip(iters, false, true), round_trip(iters, true, true) };
		for (int k = 0; k < 5; k++) {
			if (v[k] == -1) {
				fprintf(stderr, "bench_notify: round %d, figure %d failed: %s\n", r, k, strerror(errno));
				return 2;
			}
			if (v[k] == -2 || (best[k] != -2 && v[k] < best[k]))
				best[k] = v[k];
		}
	}
	printf("ns per fchmod:");
	print_best("bare", best[0]);
	print_best("notify", best[1]);
	print_best("poll", best[2]);
	print_best("notify-sync", best[3]);
	print_best("poll-sync", best[4]);
	printf("\n");
	return 0;
}
