/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Many sandboxes at once: N copies of each command started together, waited for, ROUNDS times,
 * the commands alternating round by round so that a busy machine slows each alike.  Prints, per
 * command, the median throughput in runs per second, the failures (any exit but 0: EAGAIN from a
 * clone shows here) and the largest peak resident set of one waited-for process (the supervisor's:
 * dshbox's init is not its caller's child).
 *
 *   bench_concurrent N ROUNDS LABEL_A 'CMD A ...' [LABEL_B 'CMD B ...' ...]
 *
 * Commands are split on spaces (no quoting); their output goes to /dev/null.  Exits 1 when any
 * run failed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char **split(const char *cmd)
{
	char *copy = strdup(cmd);
	size_t n = 0;
	char **v = calloc(strlen(cmd) + 2, sizeof(*v));
	for (char *save = NULL, *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
		v[n++] = t;
	return v;
}

/* One round: n copies at once; returns the failures, *secs the wall time, *maxrss_kb the largest. */
static int round_of(char **argv, int n, double *secs, long *maxrss_kb)
{
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	double t0 = now_s();
	int failed = 0;
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			execvp(argv[0], argv);
			_exit(127);
		}
		if (pids[i] < 0)
			failed++;
	}
	for (int i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		int st;
		struct rusage ru;
		if (wait4(pids[i], &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed++;
		else if (ru.ru_maxrss > *maxrss_kb)
			*maxrss_kb = ru.ru_maxrss;
	}
	*secs = now_s() - t0;
	free(pids);
	return failed;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 5 || (argc - 3) % 2) {
		fprintf(stderr, "usage: bench_concurrent N ROUNDS LABEL 'CMD' [LABEL 'CMD']...\n");
		return 2;
	}
	int n = atoi(argv[1]), rounds = atoi(argv[2]), k = (argc - 3) / 2;
	if (n < 1 || rounds < 1)
		return 2;
	char ***cmds = calloc((size_t)k, sizeof(*cmds));
	double **rate = calloc((size_t)k, sizeof(*rate));
	int *failed = calloc((size_t)k, sizeof(int));
	long *rss = calloc((size_t)k, sizeof(long));
	for (int c = 0; c < k; c++) {
		cmds[c] = split(argv[4 + 2 * c]);
		rate[c] = calloc((size_t)rounds, sizeof(double));
	}
	for (int r = 0; r < rounds; r++)
		for (int c = 0; c < k; c++) {
			double secs;
			failed[c] += round_of(cmds[c], n, &secs, &rss[c]);
			rate[c][r] = (double)n / secs;
		}
	int bad = 0;
	double first = 0;
	for (int c = 0; c < k; c++) {
		qsort(rate[c], (size_t)rounds, sizeof(double), cmp);
		double med = rate[c][rounds / 2];
		if (c == 0)
			first = med;
		printf("   %-24s %3d at once: median %7.1f runs/s (%d rounds), %d of %d failed, peak RSS %ld KiB",
		       argv[3 + 2 * c], n, med, rounds, failed[c], n * rounds, rss[c]);
		if (c > 0)
			printf("   throughput %s / %s = %.2f", argv[3], argv[3 + 2 * c], first / med);
		printf("\n");
		bad |= failed[c] != 0;
	}
	return bad;
}
