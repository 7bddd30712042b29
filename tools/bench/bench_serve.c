/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_serve DSHBOX [ROUNDS]: the round trip of `dshbox serve --stdio` for a 4 KiB read, and
 * requests per second, against a peer measured in the same run: a bare server over the same pipes
 * that reads the request line, open()s the file by name, read()s it and writes an answer of the
 * same size (no JSON parsing, no policy, no fence).  The ratio says what the fence costs on top of
 * the IPC and the file syscalls themselves.
 *
 * Round trips alternate between the two servers in blocks, so a busy machine slows both alike.
 * Measures only; never passes or fails on a time.
 */
#include <errno.h>
#include <fcntl.h>
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

struct server {
	pid_t pid;
	int to, from;
	char *buf;
	size_t cap, len, start;
};

static void die(const char *what)
{
	fprintf(stderr, "bench_serve: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void start(struct server *s, char *const argv[], void (*peer)(const char *), const char *arg)
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
		if (peer) {
			/* No exec here: drop every inherited pipe end, or the peer never sees EOF. */
			closefrom(3);
			peer(arg);
			_exit(0);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->to = in[1];
	s->from = out[0];
	s->cap = 1 << 20;
	s->buf = malloc(s->cap);
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

/* Read one answer line; returns its length. */
static size_t recv_line(struct server *s)
{
	for (;;) {
		char *nl = memchr(s->buf + s->start, '\n', s->len - s->start);
		if (nl) {
			size_t n = (size_t)(nl - (s->buf + s->start));
			s->start += n + 1;
			if (s->start == s->len)
				s->start = s->len = 0;
			return n;
		}
		if (s->start) {
			memmove(s->buf, s->buf + s->start, s->len - s->start);
			s->len -= s->start;
			s->start = 0;
		}
		if (s->len == s->cap)
			die("answer too long");
		ssize_t r = read(s->from, s->buf + s->len, s->cap - s->len);
		if (r <= 0)
			die("read (server gone?)");
		s->len += (size_t)r;
	}
}

static void stop(struct server *s)
{
	close(s->to);
	close(s->from);
	waitpid(s->pid, NULL, 0);
	free(s->buf);
}

/* The peer: no JSON, no policy, no fence; the same pipes, the same file syscalls, the same size. */
static void bare_server(const char *path)
{
	char line[4096], file[8192], answer[16384];
	size_t len = 0;
	for (;;) {
		ssize_t r = read(0, line + len, sizeof(line) - len);
		if (r <= 0)
			return;
		len += (size_t)r;
		char *nl;
		while ((nl = memchr(line, '\n', len))) {
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, file, sizeof(file)) : -1;
			if (fd >= 0)
				close(fd);
			size_t a = (size_t)snprintf(answer, sizeof(answer), "{\"ok\":true,\"content\":\"");
			for (ssize_t i = 0; i < n; i++)
				answer[a++] = file[i] == '\n' ? 'n' : file[i];
			memcpy(answer + a, "\"}\n", 3);
			send_all(1, answer, a + 3);
			size_t used = (size_t)(nl - line) + 1;
			memmove(line, line + used, len - used);
			len -= used;
		}
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_serve DSHBOX [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 20000;
	signal(SIGPIPE, SIG_IGN);
	char dir[] = "/var/tmp/dshbox-bench-serve.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp");
	char ws[4096], file[4200];
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(file, sizeof(file), "%s/page.txt", ws);
	if (mkdir(ws, 0755) < 0)
		die("mkdir");
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char content[4096];
	for (int i = 0; i < 4096; i++)
		content[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);
	if (fd < 0 || write(fd, content, sizeof(content)) != (ssize_t)sizeof(content))
		die("write the 4 KiB file");
	close(fd);

	char *dargv[] = { argv[1], (char *)"serve", (char *)"--stdio", (char *)"--workspace", ws, (char *)"--cwd", ws,
			  (char *)"--access", (char *)"-- **/*.pem", (char *)"--access", (char *)"r- .git", NULL };
	struct server d, p;
	start(&d, dargv, NULL, NULL);
	start(&p, NULL, bare_server, file);

	char req[512];
	int rl = snprintf(req, sizeof(req), "{\"id\":1,\"op\":\"read\",\"path\":\"page.txt\"}\n");
	/* Warm up both, and check the fence answers what we think it does. */
	for (int i = 0; i < 200; i++) {
		send_all(d.to, req, (size_t)rl);
		size_t n = recv_line(&d);
		if (i == 0 && (n < 4096 || !memmem(d.buf, n, "\"ok\":true", 9))) {
			fprintf(stderr, "bench_serve: unexpected answer: %.*s\n", (int)(n < 300 ? n : 300), d.buf);
			return 1;
		}
		send_all(p.to, req, (size_t)rl);
		recv_line(&p);
	}

	double *td = malloc(sizeof(double) * (size_t)rounds), *tp = malloc(sizeof(double) * (size_t)rounds);
	const int block = 100;
	for (int base = 0; base < rounds; base += block) {
		for (int i = base; i < base + block && i < rounds; i++) {
			double t0 = now_us();
			send_all(d.to, req, (size_t)rl);
			recv_line(&d);
			td[i] = now_us() - t0;
		}
		for (int i = base; i < base + block && i < rounds; i++) {
			double t0 = now_us();
			send_all(p.to, req, (size_t)rl);
			recv_line(&p);
			tp[i] = now_us() - t0;
		}
	}
	qsort(td, (size_t)rounds, sizeof(double), cmp);
	qsort(tp, (size_t)rounds, sizeof(double), cmp);

	/* Pipelined throughput: a window of requests in flight, answers read as they come. */
	double rps[2];
	struct server *ss[2] = { &d, &p };
	for (int k = 0; k < 2; k++) {
		const int window = 64;
		int sent = 0, got = 0;
		double t0 = now_us();
		while (got < rounds) {
			while (sent < rounds && sent - got < window) {
				send_all(ss[k]->to, req, (size_t)rl);
				sent++;
			}
			recv_line(ss[k]);
			got++;
		}
		rps[k] = rounds / ((now_us() - t0) / 1e6);
	}
	printf("   serve round trip, 4 KiB read (%d rounds): median %.1f us, p90 %.1f us, p99 %.1f us (goal <= 50 us median)\n",
	       rounds, td[rounds / 2], td[rounds * 9 / 10], td[rounds * 99 / 100]);
	printf("   peer, bare open+read server on the same pipes: median %.1f us, p99 %.1f us\n", tp[rounds / 2],
	       tp[rounds * 99 / 100]);
	fflush(stdout);
	printf("   ratio serve/peer (median): %.2fx\n", td[rounds / 2] / tp[rounds / 2]);
	printf("   requests per second, 64 in flight: serve %.0f/s, peer %.0f/s (ratio %.2fx)\n", rps[0], rps[1],
	       rps[1] / rps[0]);
	stop(&d);
	stop(&p);
	free(td);
	free(tp);
	unlink(file);
	rmdir(ws);
	rmdir(dir);
	return 0;
}
