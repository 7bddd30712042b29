/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host-side replacement window (SPEC 3.14), seen from inside a run: how long a protected name
 * shows the host's new inode before the keeper's mount covers it again.
 *
 *   bench_remask inside PATH N     (run by dshbox run): watch PATH, print one window (us) per change
 *   bench_remask host DSHBOX PATH N: start the run, replace PATH N times, print the median window
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int inside(const char *path, int n)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return 1;
	dev_t masked = st.st_dev; /* the mask's own filesystem */
	ino_t last = st.st_ino;
	for (int seen = 0; seen < n;) {
		if (stat(path, &st) < 0 || st.st_dev == masked)
			continue;
		/* The host's new inode shows: time it until the mask is back. */
		uint64_t t0 = now_us();
		while (stat(path, &st) == 0 && st.st_dev != masked)
			;
		printf("%llu\n", (unsigned long long)(now_us() - t0));
		fflush(stdout);
		seen++;
		last = st.st_ino;
	}
	(void)last;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int host(const char *dshbox, const char *path, int n)
{
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl < 0)
		return 1;
	self[sl] = '\0';
	int pfd[2];
	if (pipe(pfd) < 0)
		return 1;
	char rule[4200], count[16];
	snprintf(rule, sizeof(rule), "-- %s", path);
	snprintf(count, sizeof(count), "%d", n);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		execl(dshbox, dshbox, "run", "--access", rule, "--", self, "inside", path, count, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	FILE *in = fdopen(pfd[0], "r");
	usleep(300000); /* the run is up */
	double *w = calloc((size_t)n, sizeof(double));
	int got = 0;
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.bench~", path);
	for (int i = 0; i < n; i++) {
		FILE *f = fopen(tmp, "w");
		if (!f)
			break;
		fprintf(f, "replacement %d\n", i);
		fclose(f);
		rename(tmp, path);
		char line[64];
		if (!fgets(line, sizeof(line), in))
			break;
		w[got++] = atof(line);
		usleep(20000);
	}
	waitpid(pid, NULL, 0);
	if (!got)
		return 1;
	qsort(w, (size_t)got, sizeof(double), cmp);
	printf("remask window: %d replacements, median %.0f us, max %.0f us\n", got, w[got / 2], w[got - 1]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "inside") == 0)
		return inside(argv[2], atoi(argv[3]));
	if (argc == 5 && strcmp(argv[1], "host") == 0)
		return host(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: bench_remask inside PATH N | host DSHBOX PATH N\n");
	return 2;
}
