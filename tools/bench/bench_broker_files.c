/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Concurrent creators, for the runtime broker's parallel case (tools/bench.d/broker-files.sh):
 *
 *   bench_broker_files creators N M DIR
 *
 * forks N processes that each make DIR/pI and create, write and close M files in it, then removes
 * them all; prints the milliseconds from the first fork to the last exit.  Run inside `dshbox run`
 * every create is a brokered call: the figure shows whether the broker serves N callers at once
 * or one after the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int creator(const char *dir, int i, int m)
{
	char d[4096], f[4200];
	snprintf(d, sizeof(d), "%s/p%d", dir, i);
	if (mkdir(d, 0755) < 0 && errno != EEXIST)
		return 1;
	for (int k = 0; k < m; k++) {
		snprintf(f, sizeof(f), "%s/f%d", d, k);
		int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, f, strlen(f)) < 0 || close(fd) < 0)
			return 1;
	}
	for (int k = 0; k < m; k++) {
		snprintf(f, sizeof(f), "%s/f%d", d, k);
		if (unlink(f) < 0)
			return 1;
	}
	return rmdir(d) < 0;
}

int main(int argc, char **argv)
{
	if (argc != 5 || strcmp(argv[1], "creators") != 0) {
		fprintf(stderr, "usage: bench_broker_files creators N M DIR\n");
		return 2;
	}
	int n = atoi(argv[2]), m = atoi(argv[3]);
	double t0 = now_ms();
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p == 0)
			_exit(creator(argv[4], i, m));
	}
	int bad = 0, st;
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	if (bad) {
		fprintf(stderr, "bench_broker_files: a creator failed\n");
		return 1;
	}
	printf("%.2f\n", now_ms() - t0);
	return 0;
}
