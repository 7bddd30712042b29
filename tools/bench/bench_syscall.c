/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cost of the hardening on the calls a command makes all the time.
 *
 *   bench_syscall [--seccomp] [--landlock DIR] OP ITERS [PATH]
 *
 * OP is getppid (the seccomp action cache: no argument check may touch it), open (openat + close
 * of PATH: Landlock walks the path on every open), orc (openat + read of 4 KiB + close: what the
 * runtime broker's filter adds to a reader), stat (fstatat of PATH: no Landlock hook) or fchmod
 * (of a descriptor to PATH, to the mode it has: inside `dshbox run` one brokered call's round trip).
 * --seccomp loads dshbox's own filter first; --broker loads it joined with the runtime broker's, as
 * a run with the broker does (nobody serves it: only creating calls would wait); --floor loads the
 * least a filter can be that reads an open's flags (the cost no runtime broker can go below);
 * --landlock applies the linux-ns grant set (read beneath
 * /, read+write beneath DIR and the device nodes); both: what `dshbox run` adds to a process.  Run
 * it bare, with either, and inside `dshbox run` (tools/bench.d/syscall.sh) to get ratios measured
 * in the same run.  Prints the best of 7 rounds in ns per call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>

#include "landlock/landlock.h"
#include "policy/policy.h"
#include "seccomp/seccomp.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int die(const char *what, struct dsh_error *err)
{
	fprintf(stderr, "bench_syscall: %s: %s\n", what, err && err->msg ? err->msg : strerror(errno));
	return 2;
}

int main(int argc, char **argv)
{
	bool seccomp = false, broker = false, floor = false;
	const char *landlock_dir = NULL;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--seccomp") == 0)
			seccomp = true;
		else if (strcmp(argv[i], "--broker") == 0)
			broker = true;
		else if (strcmp(argv[i], "--floor") == 0)
			floor = true;
		else if (strcmp(argv[i], "--landlock") == 0 && i + 1 < argc)
			landlock_dir = argv[++i];
		else
			break;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: bench_syscall [--seccomp|--broker|--floor] [--landlock DIR] getppid|open|orc|stat ITERS [PATH]\n");
		return 2;
	}
	const char *op = argv[i];
	long iters = atol(argv[i + 1]);
	const char *path = argc - i > 2 ? argv[i + 2] : "/usr/lib/os-release";
	struct dsh_error *err = NULL;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return die("no_new_privs", NULL);
	if (landlock_dir) {
		struct dsh_root root = { .path = (char *)landlock_dir, .origin = DSH_ROOT_WORKSPACE };
		struct dsh_policy p = { .mode = DSH_MODE_WORKSPACE_WRITE, .roots = &root, .n_roots = 1 };
		struct dsh_landlock_spec s;
		int abi = dsh_landlock_abi();
		if (abi < 1)
			return die("landlock unavailable", NULL);
		if (dsh_landlock_spec_for_sandbox(&p, abi, 0, &s, &err) < 0 || dsh_landlock_apply(&s, &err) < 0)
			return die("landlock", err);
		dsh_landlock_spec_clear(&s);
	}
	if (seccomp && !broker) {
		struct dsh_seccomp_prog prog = { 0 };
		if (dsh_seccomp_compile(NULL, &prog, &err) < 0 || dsh_seccomp_load(&prog, &err) < 0)
			return die("seccomp", err);
		dsh_seccomp_prog_clear(&prog);
	}
	if (broker) {
		struct dsh_seccomp_prog deny = { 0 }, notify = { 0 }, joined = { 0 };
		int fd = -1;
		if (dsh_seccomp_compile(NULL, &deny, &err) < 0 || dsh_seccomp_compile_notify(&notify, false, &err) < 0 ||
		    dsh_seccomp_join(&deny, &notify, &joined, &err) != 1 || dsh_seccomp_load_listener(&joined, &fd, &err) < 0)
			return die("seccomp (joined)", err);
		dsh_seccomp_prog_clear(&deny);
		dsh_seccomp_prog_clear(&notify);
		dsh_seccomp_prog_clear(&joined);
	}
	if (floor) {
		struct sock_filter insns[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct dsh_seccomp_prog prog = { insns, 4 };
		if (dsh_seccomp_load(&prog, &err) < 0)
			return die("seccomp (floor)", err);
	}

	double best = 1e18;
	struct stat st;
	for (int round = 0; round < 7; round++) {
		double t0 = now_ns();
		if (strcmp(op, "getppid") == 0) {
			for (long k = 0; k < iters; k++)
				syscall(SYS_getppid);
		} else if (strcmp(op, "open") == 0) {
			for (long k = 0; k < iters; k++) {
				int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
				if (fd < 0)
					return die(path, NULL);
				close(fd);
			}
		} else if (strcmp(op, "orc") == 0) {
			char buf[4096];
			for (long k = 0; k < iters; k++) {
				int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
				if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
					return die(path, NULL);
				close(fd);
			}
		} else if (strcmp(op, "stat") == 0) {
			for (long k = 0; k < iters; k++)
				if (fstatat(AT_FDCWD, path, &st, 0) < 0)
					return die(path, NULL);
		} else if (strcmp(op, "fchmod") == 0) {
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || fstat(fd, &st) < 0)
				return die(path, NULL);
			for (long k = 0; k < iters; k++)
				if (fchmod(fd, st.st_mode & 07777) < 0)
					return die(path, NULL);
			close(fd);
		} else {
			fprintf(stderr, "bench_syscall: unknown op '%s'\n", op);
			return 2;
		}
		double per = (now_ns() - t0) / (double)iters;
		if (per < best)
			best = per;
	}
	printf("%.1f\n", best);
	return 0;
}
