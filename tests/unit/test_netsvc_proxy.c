/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The proxies, the mapped listeners and the relays (SPEC 12.2), served in a child on loopback
 * sockets: names are resolved by a test name server in another child, and reach an echoing
 * upstream in a third, which also reports each connection ('C') and each read ('D') on a pipe. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <event2/dns.h>
#include <event2/dns_struct.h>
#include <event2/event.h>

#include "net/service.h"

static struct dsh_net_policy np;
static int stop_pipe[2], ev_pipe[2], up_log[2];
static pid_t svc, upstream, namesrv;
static struct sockaddr_in http_a, socks_a, mapped_a, dns_a, up_a;
static unsigned up_port;
static char events[8192], uplog[8192];
static size_t events_n, uplog_n;

static void allow(const char *text)
{
	struct dsh_net_pattern p;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_net_pattern_parse(text, "test", &p, &e), 0, "%s", text);
	cr_assert_eq(dsh_net_policy_add(&np, false, &p, &e), 0);
}

static int listener(int type, struct sockaddr_in *ret)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	*ret = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	cr_assert_eq(bind(fd, (struct sockaddr *)ret, sizeof(*ret)), 0);
	if (type == SOCK_STREAM)
		cr_assert_eq(listen(fd, 16), 0);
	socklen_t sl = sizeof(*ret);
	getsockname(fd, (struct sockaddr *)ret, &sl);
	return fd;
}

/* The upstream: echoes what each connection sends, and says so on up_log. */
static void upstream_main(int lfd)
{
	struct pollfd p[32] = { { .fd = lfd, .events = POLLIN } };
	size_t n = 1;
	char buf[65536];
	for (;;) {
		if (poll(p, n, -1) < 0)
			continue;
		if ((p[0].revents & POLLIN) && n < 32) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				p[n++] = (struct pollfd){ .fd = c, .events = POLLIN };
				(void)!write(up_log[1], "C", 1);
			}
		}
		for (size_t i = 1; i < n; i++) {
			if (!p[i].revents)
				continue;
			ssize_t r = read(p[i].fd, buf, sizeof(buf));
			if (r <= 0) {
				close(p[i].fd);
				p[i--] = p[--n];
				continue;
			}
			(void)!write(up_log[1], "D", 1);
			(void)!send(p[i].fd, buf, (size_t)r, MSG_NOSIGNAL);
		}
	}
}

/* The host's name server, as the service's resolv_conf names it: the test names are 127.0.0.1. */
static void on_name(struct evdns_server_request *req, void *arg)
{
	static const char *const known[] = { "allowed.test", "evil.test", "denied.test" };
	(void)arg;
	const struct evdns_server_question *q = req->questions[0];
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcasecmp(q->name, known[i]) != 0)
			continue;
		uint32_t a = htonl(INADDR_LOOPBACK);
		if (q->type == EVDNS_TYPE_A)
			evdns_server_request_add_a_reply(req, q->name, 1, &a, 10);
		evdns_server_request_respond(req, 0);
		return;
	}
	evdns_server_request_respond(req, DNS_ERR_NOTEXIST);
}

static void namesrv_main(int fd)
{
	struct event_base *b = event_base_new();
	evutil_make_socket_nonblocking(fd);
	evdns_add_server_port_with_base(b, fd, 0, on_name, NULL);
	event_base_dispatch(b);
	_exit(0);
}

static pid_t spawn(void (*fn)(int), int fd)
{
	pid_t p = fork();
	cr_assert_geq(p, 0);
	if (p == 0) {
		/* A failed assertion ends the test without stop(): the helpers go with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn(fd);
		_exit(0);
	}
	close(fd);
	return p;
}

static void start(void)
{
	static struct dsh_netsvc_mapped pool[1];
	char conf[] = "/tmp/dsh-resolv-XXXXXX", line[64], pat[64];
	events_n = uplog_n = 0;
	cr_assert_eq(pipe2(up_log, O_CLOEXEC), 0);
	int ufd = listener(SOCK_STREAM, &up_a), nfd = listener(SOCK_DGRAM, &dns_a);
	up_port = ntohs(up_a.sin_port);
	upstream = spawn(upstream_main, ufd);
	namesrv = spawn(namesrv_main, nfd);
	close(up_log[1]);
	fcntl(up_log[0], F_SETFL, O_NONBLOCK);

	int cfd = mkstemp(conf);
	int n = snprintf(line, sizeof(line), "nameserver 127.0.0.1:%u\n", ntohs(dns_a.sin_port));
	cr_assert_eq(write(cfd, line, (size_t)n), n);
	close(cfd);
	dsh_net_policy_init(&np);
	snprintf(pat, sizeof(pat), "allowed.test:%u", up_port);
	allow(pat);
	snprintf(pat, sizeof(pat), "127.0.0.1/32:%u", up_port);
	allow(pat);

	/* The mapped listener is on 127.0.0.1 (no namespace here), for the pool's 198.18.0.1. */
	pool[0] = (struct dsh_netsvc_mapped){ listener(SOCK_STREAM, &mapped_a), 0xC6120001u, (uint16_t)up_port };
	int http_fd = listener(SOCK_STREAM, &http_a), socks_fd = listener(SOCK_STREAM, &socks_a);
	int dns_fd = listener(SOCK_DGRAM, &dns_a);
	cr_assert_eq(pipe2(stop_pipe, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(ev_pipe, O_CLOEXEC), 0);
	struct dsh_netsvc s = { .policy = &np, .http_fd = http_fd, .socks_fd = socks_fd, .dns_udp_fd = dns_fd,
				.dns_tcp_fd = -1, .mapped = pool, .n_mapped = 1, .events_fd = ev_pipe[1],
				.stop_fd = stop_pipe[0], .ask_fd = -1, .resolv_conf = conf };
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_netsvc_prepare(&s, &e), 0, "%s", e ? e->msg : "");
	unlink(conf);
	svc = fork();
	if (svc == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(stop_pipe[1]);
		close(ev_pipe[0]);
		_exit(dsh_netsvc_serve(&s, &e) == 0 ? 0 : 1);
	}
	close(stop_pipe[0]);
	close(ev_pipe[1]);
	close(http_fd), close(socks_fd), close(dns_fd), close(pool[0].fd);
	fcntl(ev_pipe[0], F_SETFL, O_NONBLOCK);
}

static void stop(void)
{
	int st;
	close(stop_pipe[1]);
	cr_assert_eq(waitpid(svc, &st, 0), svc);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the service exits 0 when told to stop (status %#x)", st);
	kill(upstream, SIGKILL);
	kill(namesrv, SIGKILL);
	waitpid(upstream, NULL, 0);
	waitpid(namesrv, NULL, 0);
	dsh_net_policy_clear(&np);
}

static void drain(int fd, char *buf, size_t size, size_t *n)
{
	ssize_t r;
	while (*n + 1 < size && (r = read(fd, buf + *n, size - 1 - *n)) > 0)
		*n += (size_t)r;
	buf[*n] = '\0';
}

/* Wait (up to 3 s) for what the service or the upstream reports. */
static const char *events_wait(const char *needle)
{
	for (int i = 0; i < 300; i++) {
		drain(ev_pipe[0], events, sizeof(events), &events_n);
		if (strstr(events, needle))
			return events;
		usleep(10000);
	}
	return NULL;
}

static size_t uplog_count(char c, int settle_ms)
{
	size_t k = 0;
	usleep(settle_ms * 1000);
	drain(up_log[0], uplog, sizeof(uplog), &uplog_n);
	for (size_t i = 0; i < uplog_n; i++)
		k += uplog[i] == c;
	return k;
}

static int dial(const struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(connect(fd, (const struct sockaddr *)a, sizeof(*a)), 0);
	return fd;
}

static void say(int fd, const void *p, size_t n)
{
	cr_assert_eq(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Read until needle has arrived, EOF or the timeout; returns the bytes read (NUL-terminated). */
static size_t hear(int fd, char *buf, size_t size, const char *needle)
{
	size_t n = 0;
	ssize_t r;
	buf[0] = '\0';
	while (n + 1 < size && (!needle || !memmem(buf, n, needle, strlen(needle))) &&
	       (r = recv(fd, buf + n, size - 1 - n, 0)) > 0) {
		n += (size_t)r;
		buf[n] = '\0';
	}
	return n;
}

/* The connection is closed by the far end with nothing more said. */
static bool closed(int fd)
{
	char c;
	return recv(fd, &c, 1, 0) == 0;
}

static int http_tunnel(const char *host)
{
	char req[256], buf[512];
	int fd = dial(&http_a);
	int n = snprintf(req, sizeof(req), "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", host, up_port, host, up_port);
	say(fd, req, (size_t)n);
	hear(fd, buf, sizeof(buf), "\r\n\r\n");
	cr_assert_str_eq(buf, "HTTP/1.1 200 Connection Established\r\n\r\n");
	return fd;
}

static void echoes(int fd, const char *what)
{
	char buf[4096];
	say(fd, what, strlen(what));
	hear(fd, buf, sizeof(buf), what);
	cr_expect_str_eq(buf, what, "the upstream's echo comes back");
}

Test(netsvc_proxy, connect_to_an_allowed_name_relays_both_ways)
{
	start();
	int fd = http_tunnel("allowed.test");
	echoes(fd, "ping\n");
	echoes(fd, "SSH-2.0-OpenSSH_9.6\r\n");
	close(fd);
	cr_expect_eq(uplog_count('C', 0), 1);
	stop();
}

Test(netsvc_proxy, connect_to_a_denied_name_is_403_with_one_event)
{
	char req[128], buf[1024], want[160];
	start();
	int fd = dial(&http_a);
	int n = snprintf(req, sizeof(req), "CONNECT denied.test:%u HTTP/1.1\r\n\r\n", up_port);
	say(fd, req, (size_t)n);
	hear(fd, buf, sizeof(buf), NULL);
	close(fd);
	cr_expect(strncmp(buf, "HTTP/1.1 403 ", 13) == 0, "reply: %s", buf);
	cr_expect(strstr(buf, "policy does not allow denied.test"), "reply: %s", buf);
	snprintf(want, sizeof(want), "{\"name\":\"denied.test\",\"port\":%u,\"via\":\"http\",\"reason\":\"denied\"}\n", up_port);
	cr_expect(events_wait(want), "events: %s", events);
	cr_expect_eq(strchr(events, '\n'), events + strlen(events) - 1, "one event line: %s", events);
	cr_expect_eq(uplog_count('C', 200), 0, "the upstream saw no connection");
	stop();
}

Test(netsvc_proxy, an_absolute_uri_is_forwarded_in_origin_form_with_connection_close)
{
	char req[512], want[512], buf[1024];
	start();
	int fd = dial(&http_a);
	int n = snprintf(req, sizeof(req),
			 "GET http://allowed.test:%u/path?q=1 HTTP/1.1\r\nHost: allowed.test:%u\r\n"
			 "Proxy-Connection: keep-alive\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n",
			 up_port, up_port);
	say(fd, req, (size_t)n);
	snprintf(want, sizeof(want), "GET /path?q=1 HTTP/1.1\r\nHost: allowed.test:%u\r\nAccept: */*\r\nConnection: close\r\n\r\n",
		 up_port);
	hear(fd, buf, sizeof(buf), "\r\n\r\n");
	cr_expect_str_eq(buf, want, "what the upstream received (echoed)");
	close(fd);
	stop();
}

Test(netsvc_proxy, a_host_header_naming_another_host_is_refused)
{
	char req[256], buf[1024];
	start();
	/* To the proxy: the URI and the Host header disagree. */
	int fd = dial(&http_a);
	int n = snprintf(req, sizeof(req), "GET http://allowed.test:%u/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", up_port);
	say(fd, req, (size_t)n);
	hear(fd, buf, sizeof(buf), NULL);
	close(fd);
	cr_expect(strncmp(buf, "HTTP/1.1 403 ", 13) == 0, "reply: %s", buf);
	cr_expect(events_wait("\"via\":\"host\""), "events: %s", events);
	cr_expect_eq(uplog_count('C', 200), 0);
	/* Through a tunnel: the relay reads the request's Host before anything reaches the upstream. */
	fd = http_tunnel("allowed.test");
	say(fd, "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", 35);
	cr_expect(closed(fd), "the relay ends the connection");
	close(fd);
	cr_expect(events_wait("the Host header names evil.test"), "events: %s", events);
	cr_expect_eq(uplog_count('D', 200), 0, "the upstream received nothing");
	/* Leading empty lines a server would skip do not hide a request from the relay. */
	fd = http_tunnel("allowed.test");
	say(fd, "\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", 37);
	cr_expect(closed(fd), "the relay ends the connection");
	close(fd);
	cr_expect_eq(uplog_count('D', 200), 0, "the upstream received nothing");
	/* The right Host passes, asking for one response: a request pipelined behind it is not
	 * served by an upstream that honours Connection: close. */
	const char *pipelined = "GET / HTTP/1.1\r\nHost: Allowed.Test\r\nConnection: keep-alive\r\n\r\n"
				"GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n";
	const char *want = "GET / HTTP/1.1\r\nHost: Allowed.Test\r\nConnection: close\r\n\r\n"
			   "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n";
	fd = http_tunnel("allowed.test");
	say(fd, pipelined, strlen(pipelined));
	hear(fd, buf, sizeof(buf), "evil.test\r\n\r\n");
	cr_expect_str_eq(buf, want, "what the upstream received (echoed)");
	close(fd);
	stop();
}

struct buf {
	unsigned char b[1024];
	size_t n;
};
static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}
static void u8(struct buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;
	put(b, &c, 1);
}
static void u16(struct buf *b, unsigned v)
{
	u8(b, v >> 8);
	u8(b, v & 0xff);
}

/* A one-record TLS 1.3 ClientHello asking for name. */
static void hello(struct buf *out, const char *name)
{
	struct buf body = { .n = 0 }, ext = { .n = 0 };
	size_t l = strlen(name);
	u16(&body, 0x0303);
	for (int i = 0; i < 32; i++)
		u8(&body, (unsigned)i);
	u8(&body, 0), u16(&body, 2), u16(&body, 0x1301), u8(&body, 1), u8(&body, 0);
	u16(&ext, 0), u16(&ext, (unsigned)l + 5), u16(&ext, (unsigned)l + 3), u8(&ext, 0), u16(&ext, (unsigned)l);
	put(&ext, name, l);
	u16(&body, (unsigned)ext.n);
	put(&body, ext.b, ext.n);
	out->n = 0;
	u8(out, 22), u16(out, 0x0301), u16(out, (unsigned)body.n + 4);
	u8(out, 1), u8(out, 0), u16(out, (unsigned)body.n);
	put(out, body.b, body.n);
}

Test(netsvc_proxy, a_client_hello_for_another_name_is_refused)
{
	struct buf h;
	char back[1024];
	start();
	int fd = http_tunnel("allowed.test");
	hello(&h, "evil.test");
	say(fd, h.b, h.n);
	cr_expect(closed(fd), "the relay ends the connection");
	close(fd);
	cr_expect(events_wait("\"via\":\"sni\",\"reason\":\"the ClientHello names evil.test\""), "events: %s", events);
	cr_expect_eq(uplog_count('D', 200), 0, "the upstream received nothing");
	fd = http_tunnel("allowed.test");
	hello(&h, "ALLOWED.test");
	say(fd, h.b, h.n);
	cr_expect_eq(recv(fd, back, sizeof(back), MSG_WAITALL), (ssize_t)h.n, "the hello for the name reaches it");
	cr_expect_eq(memcmp(back, h.b, h.n), 0);
	close(fd);
	stop();
}

/* A SOCKS5 CONNECT (atyp 3: host is a name; 1: dotted IPv4); returns the reply code. */
static int socks(const char *host, int atyp, int *ret_fd)
{
	unsigned char req[300], rep[10];
	size_t n = 0;
	int fd = dial(&socks_a);
	say(fd, "\x05\x01\x00", 3);
	cr_assert_eq(recv(fd, rep, 2, MSG_WAITALL), 2);
	cr_assert_eq(memcmp(rep, "\x05\x00", 2), 0, "no authentication");
	req[n++] = 5, req[n++] = 1, req[n++] = 0, req[n++] = (unsigned char)atyp;
	if (atyp == 3) {
		req[n++] = (unsigned char)strlen(host);
		memcpy(req + n, host, strlen(host));
		n += strlen(host);
	} else {
		inet_pton(AF_INET, host, req + n);
		n += 4;
	}
	req[n++] = (unsigned char)(up_port >> 8), req[n++] = up_port & 255;
	say(fd, req, n);
	cr_assert_eq(recv(fd, rep, 10, MSG_WAITALL), 10);
	cr_assert_eq(rep[0], 5);
	*ret_fd = fd;
	return rep[1];
}

Test(netsvc_proxy, socks5_by_domain)
{
	int fd;
	start();
	cr_expect_eq(socks("allowed.test", 3, &fd), 0);
	echoes(fd, "ping\n");
	close(fd);
	cr_expect_eq(socks("denied.test", 3, &fd), 2, "NOT_ALLOWED");
	cr_expect(closed(fd));
	close(fd);
	cr_expect(events_wait("\"name\":\"denied.test\""), "events: %s", events);
	cr_expect(strstr(events, "\"via\":\"socks\""), "events: %s", events);
	cr_expect_eq(uplog_count('C', 200), 1, "only the allowed name reached the upstream");
	stop();
}

Test(netsvc_proxy, socks5_by_address_only_where_a_pattern_spells_it)
{
	int fd;
	start();
	cr_expect_eq(socks("127.0.0.2", 1, &fd), 2, "no pattern spells 127.0.0.2: NOT_ALLOWED");
	close(fd);
	cr_expect(events_wait("\"name\":\"127.0.0.2\""), "events: %s", events);
	cr_expect_eq(socks("127.0.0.1", 1, &fd), 0, "127.0.0.1/32 allows it");
	echoes(fd, "ping\n");
	close(fd);
	stop();
}

/* Ask the service's resolver for name's A record; returns the address (host order) or 0. */
static uint32_t resolve(const char *name)
{
	unsigned char q[128] = { 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0 }, a[512];
	size_t n = 12;
	for (const char *p = name; *p;) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		q[n++] = (unsigned char)l;
		memcpy(q + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	q[n++] = 0, q[n++] = 0, q[n++] = 1, q[n++] = 0, q[n++] = 1;
	int c = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { 5, 0 };
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(sendto(c, q, n, 0, (struct sockaddr *)&dns_a, sizeof(dns_a)), (ssize_t)n);
	ssize_t r = recv(c, a, sizeof(a), 0);
	close(c);
	cr_assert_geq(r, 12);
	if ((a[3] & 15) || !(a[6] << 8 | a[7]))
		return 0;
	return (uint32_t)a[r - 4] << 24 | (uint32_t)a[r - 3] << 16 | (uint32_t)a[r - 2] << 8 | a[r - 1];
}

Test(netsvc_proxy, a_mapped_address_reaches_the_name_it_was_given)
{
	start();
	int fd = dial(&mapped_a);
	cr_expect(closed(fd), "an address no name was given is closed");
	close(fd);
	cr_expect(events_wait("\"name\":\"198.18.0.1\""), "events: %s", events);
	cr_expect(strstr(events, "\"via\":\"mapped\",\"reason\":\"address not given\""), "events: %s", events);
	cr_expect_eq(uplog_count('C', 100), 0);
	cr_assert_eq(resolve("allowed.test"), 0xC6120001u);
	fd = dial(&mapped_a);
	echoes(fd, "ping\n");
	close(fd);
	cr_expect_eq(uplog_count('C', 0), 1);
	stop();
}

Test(netsvc_proxy, a_client_vanishing_mid_relay_does_not_end_the_service)
{
	static char big[1024 * 1024];
	struct linger lg = { 1, 0 };
	start();
	memset(big, 'x', sizeof(big));
	for (int i = 0; i < 3; i++) {
		int fd = http_tunnel("allowed.test");
		say(fd, big, sizeof(big));
		/* Our FIN puts the service's socket in CLOSE_WAIT, where a reset makes its next write
		 * EPIPE (and SIGPIPE): gone while the echo is on its way back. */
		shutdown(fd, SHUT_WR);
		cr_assert_gt(recv(fd, big, 4096, 0), 0);
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
		usleep(100000);
	}
	int fd = http_tunnel("allowed.test");
	echoes(fd, "still here\n");
	close(fd);
	stop();
}
