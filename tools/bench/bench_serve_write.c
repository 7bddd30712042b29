/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_serve_write DSHBOX [ROUNDS]: the round trip of a 4 KiB `write` through `dshbox serve
 * --stdio` (goal <= 1 ms median), plain and with the previous answer's version as expectVersion
 * (a host's read-modify-write), and writes per second with 64 in flight to 64 different files.
 * The peer, measured in the same run and in process (no IPC, no JSON, no policy): the same
 * durable atomic replacement a write does (O_TMPFILE, write, fsync, link, rename, fsync of the
 * directory), so the ratio says what the fence adds to the filesystem's own cost.
 *
 * The files live under /var/tmp (a disk, where fsync costs what it costs; /tmp may be tmpfs).
 * Measures only; never passes or fails on a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_serve_write: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct server {
	pid_t pid;
	int to, from;
	char buf[1 << 16];
	size_t len, start;
};

static void start(struct server *s, char *const argv[])
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		die("pipe");
	s->pid = fork();
	if (s->pid < 0)
		die("fork");
	if (s->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->to = in[1];
	s->from = out[0];
	s->len = s->start = 0;
}

static void send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		s += w;
		n -= (size_t)w;
	}
}

/* One answer line, NUL-terminated in place; dies on an answer that is not ok. */
static char *recv_ok(struct server *s)
{
	for (;;) {
		char *line = s->buf + s->start;
		char *nl = memchr(line, '\n', s->len - s->start);
		if (nl) {
			*nl = '\0';
			s->start = (size_t)(nl - s->buf) + 1;
			if (!strstr(line, "\"ok\":true")) {
				fprintf(stderr, "bench_serve_write: unexpected answer: %.300s\n", line);
				exit(1);
			}
			return line;
		}
		if (s->start) {
			memmove(s->buf, s->buf + s->start, s->len - s->start);
			s->len -= s->start;
			s->start = 0;
		}
		if (s->len == sizeof(s->buf) - 1)
			die("answer too long");
		ssize_t r = read(s->from, s->buf + s->len, sizeof(s->buf) - 1 - s->len);
		if (r <= 0)
			die("read (server gone?)");
		s->len += (size_t)r;
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A 4 KiB write request; round r changes its first line (same size: a one-line diff, as a host
   rewriting a file after a small change), version may be NULL. */
static size_t request(char *req, size_t size, const char *name, int r, const char *version)
{
	char content[4097];
	for (int i = 0; i < 4096; i++)
		content[i] = i % 64 == 63 ? '_' : (char)('a' + i % 26);
	char head[16];
	snprintf(head, sizeof(head), "%08x", (unsigned)r);
	memcpy(content, head, 8);
	content[4096] = '\0';
	int n = snprintf(req, size, "{\"id\":%d,\"op\":\"write\",\"path\":\"%s\",\"content\":\"%s\"", r, name, content);
	if (version)
		n += snprintf(req + n, size - (size_t)n, ",\"expectVersion\":\"%s\"", version);
	n += snprintf(req + n, size - (size_t)n, "}\n");
	return (size_t)n;
}

/* The version string of an answer, copied into v. */
static void version_of(const char *answer, char *v, size_t size)
{
	const char *p = strstr(answer, "\"version\":\"");
	if (!p) {
		fprintf(stderr, "bench_serve_write: no version in %.300s\n", answer);
		exit(1);
	}
	p += strlen("\"version\":\"");
	size_t n = strcspn(p, "\"");
	snprintf(v, size, "%.*s", (int)(n < size ? n : size - 1), p);
}

/* The peer: the filesystem work of one durable atomic replacement, without the fence. */
static void bare_write(int dfd, const char *name, const char *data, size_t len)
{
	int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || fsync(fd) < 0)
		die("peer: temporary");
	char proc[64], tmp[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	snprintf(tmp, sizeof(tmp), ".%s.peer~", name);
	if (linkat(AT_FDCWD, proc, dfd, tmp, AT_SYMLINK_FOLLOW) < 0 || renameat(dfd, tmp, dfd, name) < 0)
		die("peer: link and rename");
	close(fd);
	if (fsync(dfd) < 0)
		die("peer: fsync the directory");
}

/* Writes per second with 64 in flight, each to its own file. */
static double in_flight(struct server *d, int rounds)
{
	static char req[16384];
	/* 64 in flight, each to its own file: what serving different files in parallel gives. */
	const int window = 64;
	int total = rounds, sent = 0, got = 0;
	/* Requests (4 KiB) and answers both fill a pipe: send only what the server can take, read
	   what it answers meanwhile, or both would block on a full pipe. */
	if (fcntl(d->to, F_SETFL, O_NONBLOCK) < 0)
		die("fcntl");
	size_t pending = 0, off = 0;
	double t0 = now_us();
	while (got < total) {
		if (!pending && sent < total && sent - got < window) {
			char name[32];
			snprintf(name, sizeof(name), "f%02d.txt", sent % window);
			pending = request(req, sizeof(req), name, sent, NULL);
			off = 0;
			sent++;
		}
		struct pollfd pf[2] = { { d->from, POLLIN, 0 }, { d->to, pending ? POLLOUT : 0, 0 } };
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			die("poll");
		if (pf[1].revents & POLLOUT) {
			ssize_t w = write(d->to, req + off, pending);
			if (w < 0 && errno != EAGAIN && errno != EINTR)
				die("write");
			if (w > 0) {
				off += (size_t)w;
				pending -= (size_t)w;
			}
		}
		if (pf[0].revents & (POLLIN | POLLHUP)) {
			recv_ok(d);
			got++;
			/* recv_ok read a whole buffer: answers already in it need no poll. */
			while (got < total && memchr(d->buf + d->start, '\n', d->len - d->start)) {
				recv_ok(d);
				got++;
			}
		}
	}
	return total / ((now_us() - t0) / 1e6);

}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_serve_write DSHBOX [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 2000;
	if (rounds < 10)
		rounds = 10;
	signal(SIGPIPE, SIG_IGN);
	char dir[] = "/var/tmp/dshbox-bench-write.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp");
	char ws[4096];
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	if (mkdir(ws, 0755) < 0)
		die("mkdir");
	char *dargv[] = { argv[1], (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws, (char *)"--cwd", ws,
			  (char *)"--access", (char *)"-- **/*.pem", NULL };
	static struct server d;
	start(&d, dargv);
	static char req[16384];
	double *plain = malloc(sizeof(double) * (size_t)rounds), *chained = malloc(sizeof(double) * (size_t)rounds),
	       *peer = malloc(sizeof(double) * (size_t)rounds), *same = malloc(sizeof(double) * (size_t)rounds);
	if (!plain || !chained || !peer || !same)
		die("malloc");
	for (int i = 0; i < 50; i++) {
		send_all(d.to, req, request(req, sizeof(req), "page.txt", i, NULL));
		recv_ok(&d);
	}
	int dfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		die("open the workspace");
	/* Blocks alternate the four, so a busy machine slows them alike.  A host rewrites a file
	   seconds apart, not within one tick of the kernel's coarse clock, which the fence waits out
	   (docs/serve.md, "Versions"): plain and chained writes rotate over 64 files; "same" rewrites
	   one file back to back, the case that waits. */
	static char versions[64][128];
	const int block = 64;
	for (int base = 0; base < rounds; base += block) {
		for (int i = base; i < base + block && i < rounds; i++) {
			char name[32];
			snprintf(name, sizeof(name), "p%02d.txt", i % 64);
			size_t n = request(req, sizeof(req), name, i, NULL);
			double t0 = now_us();
			send_all(d.to, req, n);
			recv_ok(&d);
			plain[i] = now_us() - t0;
		}
		for (int i = base; i < base + block && i < rounds; i++) {
			char name[32];
			snprintf(name, sizeof(name), "c%02d.txt", i % 64);
			char *v = versions[i % 64];
			size_t n = request(req, sizeof(req), name, i, v[0] ? v : NULL);
			double t0 = now_us();
			send_all(d.to, req, n);
			const char *a = recv_ok(&d);
			chained[i] = now_us() - t0;
			version_of(a, v, sizeof(versions[0]));
		}
		for (int i = base; i < base + block && i < rounds; i++) {
			size_t n = request(req, sizeof(req), "same.txt", i, NULL);
			double t0 = now_us();
			send_all(d.to, req, n);
			recv_ok(&d);
			same[i] = now_us() - t0;
		}
		for (int i = base; i < base + block && i < rounds; i++) {
			request(req, sizeof(req), "peer.txt", i, NULL);
			const char *content = strstr(req, "\"content\":\"") + strlen("\"content\":\"");
			double t0 = now_us();
			bare_write(dfd, "peer.txt", content, 4096);
			peer[i] = now_us() - t0;
		}
	}
	qsort(plain, (size_t)rounds, sizeof(double), cmp);
	qsort(chained, (size_t)rounds, sizeof(double), cmp);
	qsort(peer, (size_t)rounds, sizeof(double), cmp);
	qsort(same, (size_t)rounds, sizeof(double), cmp);

	double wps = in_flight(&d, rounds);
	char jobs[] = "8";
	char *jargv[] = { argv[1], (char *)"serve", (char *)"--stdio", (char *)"--jobs", jobs, (char *)"--workspace", ws,
			  (char *)"--cwd", ws, (char *)"--access", (char *)"-- **/*.pem", NULL };
	static struct server j;
	start(&j, jargv);
	double jps = in_flight(&j, rounds);
	close(j.to);
	close(j.from);
	waitpid(j.pid, NULL, 0);

	printf("   serve round trip, 4 KiB write (%d rounds): median %.0f us, p90 %.0f us, p99 %.0f us (goal <= 1000 us median; 64 files in turn)\n",
	       rounds, plain[rounds / 2], plain[rounds * 9 / 10], plain[rounds * 99 / 100]);
	printf("   the same with expectVersion (each the previous answer's): median %.0f us, p99 %.0f us\n",
	       chained[rounds / 2], chained[rounds * 99 / 100]);
	printf("   one file rewritten back to back (each write waits out the clock tick of the last): median %.0f us\n",
	       same[rounds / 2]);
	printf("   peer, in-process O_TMPFILE+fsync+link+rename+fsync(dir): median %.0f us, p99 %.0f us (ratio %.2fx)\n",
	       peer[rounds / 2], peer[rounds * 99 / 100], plain[rounds / 2] / peer[rounds / 2]);
	printf("   writes per second, 64 in flight to 64 files: %.0f/s one at a time, %.0f/s with --jobs 8 (%.2fx)\n", wps, jps,
	       jps / wps);
	close(d.to);
	close(d.from);
	waitpid(d.pid, NULL, 0);
	close(dfd);
	free(plain);
	free(chained);
	free(peer);
	free(same);
	char cmd[8300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}
