/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Wall time of whole commands, alternated run by run so that a busy machine slows both sides
 * alike; prints the median and mean of each and the ratio of the medians, measured in this run.
 *
 *   bench_run [-t TITLE] RUNS LABEL_A 'CMD A ...' [LABEL_B 'CMD B ...' ...]
 *
 * With -t, the medians are also appended to the file $BENCH_TABLE as one line, TITLE then
 * LABEL=MS for each command, tab-separated: tools/bench.sh prints those lines as the summary table.
 * Commands are split on spaces (no quoting); their stdout and stderr go to /dev/null.  A command
 * that exits non-zero is reported and ends the benchmark with exit 1.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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

static int run(char **argv, double *ms)
{
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	*ms = now_ms() - t0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void table_row(const char *title, int n, char **argv, double **t, int runs)
{
	const char *path = getenv("BENCH_TABLE");
	FILE *f = path && *path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	fprintf(f, "%s", title);
	for (int k = 0; k < n; k++)
		fprintf(f, "\t%s=%.3f", argv[2 + 2 * k], t[k][runs / 2]);
	fprintf(f, "\n");
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *title = NULL;
	if (argc > 2 && strcmp(argv[1], "-t") == 0) {
		title = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 4 || (argc - 2) % 2) {
		fprintf(stderr, "usage: bench_run [-t TITLE] RUNS LABEL 'CMD' [LABEL 'CMD']...\n");
		return 2;
	}
	int runs = atoi(argv[1]);
	int n = (argc - 2) / 2;
	char ***cmds = calloc((size_t)n, sizeof(*cmds));
	double **t = calloc((size_t)n, sizeof(*t));
	for (int k = 0; k < n; k++) {
		cmds[k] = split(argv[3 + 2 * k]);
		t[k] = calloc((size_t)runs, sizeof(double));
	}
	for (int w = 0; w < 5; w++) /* warm-up: page cache, dentries */
		for (int k = 0; k < n; k++) {
			double ms;
			int rc = run(cmds[k], &ms);
			if (rc != 0) {
				fprintf(stderr, "bench_run: '%s' exited %d\n", argv[3 + 2 * k], rc);
				return 1;
			}
		}
	for (int i = 0; i < runs; i++)
		for (int k = 0; k < n; k++)
			if (run(cmds[k], &t[k][i]) != 0) {
				fprintf(stderr, "bench_run: '%s' failed on run %d\n", argv[3 + 2 * k], i);
				return 1;
			}
	double first = 0;
	for (int k = 0; k < n; k++) {
		double sum = 0;
		for (int i = 0; i < runs; i++)
			sum += t[k][i];
		qsort(t[k], (size_t)runs, sizeof(double), cmp);
		double med = t[k][runs / 2];
		if (k == 0)
			first = med;
		printf("   %-28s median %8.2f ms   mean %8.2f ms   (%d runs)", argv[2 + 2 * k], med, sum / runs, runs);
		if (k > 0)
			printf("   %s / %s = %.2f", argv[2], argv[2 + 2 * k], first / med);
		printf("\n");
	}
	if (title)
		table_row(title, n, argv, t, runs);
	return 0;
}
