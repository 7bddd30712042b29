/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The command's resolver (SPEC 12.2), served in a child on a loopback socket and asked with
 * hand-built queries: allowed names get a pool address, denied ones REFUSED and an event line. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "net/service.h"

static struct dsh_net_policy np;
static int dns_fd, stop_pipe[2], ev_pipe[2];
static pid_t child;
static struct sockaddr_in srv;

static void allow(const char *text, bool deny)
{
	struct dsh_net_pattern p;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_net_pattern_parse(text, "test", &p, &e), 0);
	cr_assert_eq(dsh_net_policy_add(&np, deny, &p, &e), 0);
}

static void start(void)
{
	static struct dsh_netsvc_mapped pool[2] = { { -1, 0xC6120001u, 443 }, { -1, 0xC6120002u, 443 } };
	char conf[] = "/tmp/dsh-resolv-XXXXXX";
	int cfd = mkstemp(conf);
	cr_assert_geq(cfd, 0);
	cr_assert_gt(write(cfd, "nameserver 127.0.0.9\n", 21), 0);
	close(cfd);
	dsh_net_policy_init(&np);
	allow("allowed.test", false);
	allow("*.wild.test", false);
	allow("ssh.test:22", false);
	allow("no.wild.test", true);
	dns_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	srv = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	cr_assert_eq(bind(dns_fd, (struct sockaddr *)&srv, sizeof(srv)), 0);
	socklen_t sl = sizeof(srv);
	getsockname(dns_fd, (struct sockaddr *)&srv, &sl);
	cr_assert_eq(pipe2(stop_pipe, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(ev_pipe, O_CLOEXEC), 0);
	struct dsh_netsvc s = { .policy = &np, .http_fd = -1, .socks_fd = -1, .dns_udp_fd = dns_fd,
				.dns_tcp_fd = -1, .mapped = pool, .n_mapped = 2, .events_fd = ev_pipe[1],
				.stop_fd = stop_pipe[0], .ask_fd = -1, .resolv_conf = conf };
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_netsvc_prepare(&s, &e), 0, "%s", e ? e->msg : "");
	unlink(conf);
	child = fork();
	if (child == 0) {
		close(stop_pipe[1]); /* else the stop pipe never hangs up */
		close(ev_pipe[0]);
		_exit(dsh_netsvc_serve(&s, &e) == 0 ? 0 : 1);
	}
	close(stop_pipe[0]);
	close(ev_pipe[1]);
}

static void stop(void)
{
	int st;
	close(stop_pipe[1]);
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the service exits 0 when told to stop");
}

/* Ask name/type; return the rcode, the answer count and the first A address. */
static int ask(const char *name, unsigned type, unsigned *ret_ancount, uint32_t *ret_a)
{
	unsigned char q[512], a[512];
	size_t n = 0;
	static unsigned id = 0x1200;
	id++;
	unsigned char hdr[12] = { id >> 8, id & 255, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	memcpy(q, hdr, 12);
	n = 12;
	for (const char *p = name; *p;) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		q[n++] = l;
		memcpy(q + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	q[n++] = 0;
	q[n++] = type >> 8, q[n++] = type & 255, q[n++] = 0, q[n++] = 1;
	int c = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { 5, 0 };
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(sendto(c, q, n, 0, (struct sockaddr *)&srv, sizeof(srv)), (ssize_t)n);
	ssize_t r = recv(c, a, sizeof(a), 0);
	close(c);
	cr_assert_geq(r, 12, "an answer for %s", name);
	cr_assert_eq((unsigned)(a[0] << 8 | a[1]), id);
	*ret_ancount = a[6] << 8 | a[7];
	*ret_a = 0;
	if (*ret_ancount && r >= 4)
		*ret_a = (uint32_t)a[r - 4] << 24 | a[r - 3] << 16 | a[r - 2] << 8 | a[r - 1];
	return a[3] & 15;
}

Test(netsvc_dns, allowed_names_get_a_stable_pool_address)
{
	unsigned an;
	uint32_t a1, a2, a3;
	start();
	cr_expect_eq(ask("allowed.test", 1, &an, &a1), 0);
	cr_expect_eq(an, 1);
	cr_expect_eq(a1, 0xC6120001u);
	cr_expect_eq(ask("ALLOWED.test", 1, &an, &a2), 0, "case does not make another name");
	cr_expect_eq(a2, a1);
	cr_expect_eq(ask("x.wild.test", 1, &an, &a3), 0);
	cr_expect_eq(a3, 0xC6120002u);
	cr_expect_eq(ask("ssh.test", 1, &an, &a3), 5, "the pool is exhausted: REFUSED");
	cr_expect_eq(ask("allowed.test", 28, &an, &a3), 0, "AAAA: NOERROR");
	cr_expect_eq(an, 0, "AAAA: no answer");
	stop();
}

Test(netsvc_dns, denied_names_are_refused_and_reported)
{
	unsigned an;
	uint32_t a;
	char buf[4096] = { 0 };
	start();
	cr_expect_eq(ask("secret.attacker.test", 1, &an, &a), 5);
	cr_expect_eq(ask("no.wild.test", 1, &an, &a), 5, "deny beats allow");
	cr_expect_eq(ask("wild.test", 1, &an, &a), 5, "*.name is not the name itself");
	stop();
	ssize_t n = read(ev_pipe[0], buf, sizeof(buf) - 1);
	cr_assert_gt(n, 0);
	cr_expect(strstr(buf, "{\"name\":\"secret.attacker.test\",\"port\":0,\"via\":\"dns\",\"reason\":\"denied\"}\n"),
		  "events: %s", buf);
	cr_expect(strstr(buf, "\"name\":\"no.wild.test\""), "events: %s", buf);
}

Test(netsvc_dns, a_name_on_an_explicit_port_only_resolves)
{
	unsigned an;
	uint32_t a;
	start();
	cr_expect_eq(ask("ssh.test", 1, &an, &a), 0, "ssh.test:22 makes the name resolvable");
	cr_expect_eq(an, 1);
	stop();
}
