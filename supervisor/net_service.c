/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The network by name (SPEC 12.2), as the run starts it: init's "network" stage forks the service
 * while init is still in the host's network namespace, then makes the command's namespace (loopback
 * only, the mapped range local on lo), makes every listening socket there, and hands them over.
 * The service so listens inside and connects outside.  It is init's child in the sandbox's pid
 * namespace and dies with it; it confines itself before it reads a byte of the command's.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "common/die_with.h"
#include "common/fdpass.h"
#include "common/strv.h"
#include "common/write_all.h"
#include "net/service.h"
#include "ns/net.h"
#include "supervisor/sandbox.h"

#define LOOPBACK 0x7f000001u

/* The ports each mapped address listens on: 80 and 443 (a pattern without a port), then every
   port an allow pattern spells. */
static size_t pool_ports(const struct dsh_net_policy *np, uint16_t ports[DSH_NET_POOL_PORTS])
{
	size_t n = 0;
	ports[n++] = 80;
	ports[n++] = 443;
	for (size_t i = 0; i < np->n_allow && n < DSH_NET_POOL_PORTS; i++) {
		bool seen = false;
		for (size_t j = 0; j < n; j++)
			seen |= ports[j] == np->allow[i].port;
		if (np->allow[i].port && !seen)
			ports[n++] = np->allow[i].port;
	}
	return n;
}

/* In the command's namespace, made by init: the fixed listeners, then the pool in its order. */
static int make_listeners(const struct dsh_net_policy *np, int *fds, size_t n_fds, struct dsh_error **err)
{
	uint16_t ports[DSH_NET_POOL_PORTS];
	size_t n_ports = pool_ports(np, ports), k = 3;
	int r = dsh_net_listen(SOCK_STREAM, LOOPBACK, DSH_NETSVC_HTTP_PORT, &fds[0], err);
	if (r >= 0)
		r = dsh_net_listen(SOCK_STREAM, LOOPBACK, DSH_NETSVC_SOCKS_PORT, &fds[1], err);
	if (r >= 0)
		r = dsh_net_listen(SOCK_DGRAM, LOOPBACK, DSH_NETSVC_DNS_PORT, &fds[2], err);
	for (uint32_t a = 1; r >= 0 && a <= DSH_NET_POOL_ADDRS; a++)
		for (size_t p = 0; r >= 0 && p < n_ports && k < n_fds; p++)
			r = dsh_net_listen(SOCK_STREAM, DSH_NETSVC_MAPPED_BASE + a, ports[p], &fds[k++], err);
	return r;
}

static size_t listener_count(const struct dsh_net_policy *np)
{
	uint16_t ports[DSH_NET_POOL_PORTS];
	return 3 + DSH_NET_POOL_ADDRS * pool_ports(np, ports);
}

/* The service's side: everything it will open is opened before it confines itself. */
static _Noreturn void service_main(const struct dsh_sandbox_plan *plan, int sock, int events_fd)
{
	const struct dsh_net_policy *np = plan->ns.net_filter;
	struct dsh_error *e = NULL;
	uint16_t ports[DSH_NET_POOL_PORTS];
	size_t n_ports = pool_ports(np, ports), n = listener_count(np);
	if (!dsh_die_with(1, SIGKILL))
		_exit(1); /* init is gone, or this is not its pid namespace: serve nothing */
	/* SPEC 12.4: the host's socket, the service's alone (init and the command close theirs). */
	int ask_fd = np->ask && plan->opts ? plan->opts->ask_fd : -1;
	int keep[3] = { sock }, n_keep = 1;
	if (events_fd >= 0)
		keep[n_keep++] = events_fd;
	if (ask_fd >= 0)
		keep[n_keep++] = ask_fd;
	if (dsh_fds_close_except(keep, (size_t)n_keep, &e) < 0)
		_exit(1);
	/* Not the caller's terminal: the service's output, if any, goes nowhere. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; null >= 0 && fd < 3; fd++)
		(void)dup2(null, fd);
	struct dsh_netsvc_mapped *pool = calloc(n - 3, sizeof(*pool));
	int *fds = calloc(n, sizeof(*fds));
	if (null < 0 || !pool || !fds)
		_exit(1);
	for (size_t i = 0; i + 3 < n; i++)
		pool[i] = (struct dsh_netsvc_mapped){ -1, DSH_NETSVC_MAPPED_BASE + 1 + (uint32_t)(i / n_ports),
						      ports[i % n_ports] };
	struct dsh_netsvc s = { .policy = np, .mapped = pool, .n_mapped = n - 3, .events_fd = events_fd,
				.stop_fd = -1, .ask_fd = ask_fd };
	/* The host's resolver configuration is read while init waits: its mounts, which cover
	   /etc/resolv.conf for the command, are in this mount namespace too. */
	if (dsh_netsvc_prepare(&s, &e) < 0) {
		char why[256];
		int k = snprintf(why, sizeof(why), "e%s", e && e->msg ? e->msg : "the network service failed to start");
		(void)!write(sock, why, k > 0 && (size_t)k < sizeof(why) ? (size_t)k : sizeof(why) - 1);
		_exit(1);
	}
	if (dsh_write_all(sock, "r", 1) < 0)
		_exit(1);
	for (size_t i = 0; i < n; i++)
		if ((fds[i] = dsh_fd_recv(sock, 0)) < 0)
			_exit(1); /* init failed before it made them all: the run fails with it */
	close(sock);
	s.http_fd = fds[0];
	s.socks_fd = fds[1];
	s.dns_udp_fd = fds[2];
	s.dns_tcp_fd = -1;
	for (size_t i = 0; i + 3 < n; i++)
		pool[i].fd = fds[i + 3];
	/* Two sockets a connection and, once spliced, two pipes: the run's connections may take up
	   to the hard limit (a pipe refused keeps the slower relay; a socket refused, a connection). */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (dsh_netsvc_confine(&e) < 0 || dsh_netsvc_serve(&s, &e) < 0)
		_exit(1);
	_exit(0);
}

int dsh_sandbox_net_filtered(const struct dsh_sandbox_plan *plan, int events_fd, pid_t *ret_pid,
			     struct dsh_error **err)
{
	const struct dsh_net_policy *np = plan->ns.net_filter;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return dsh_err_sys(err, errno, "socketpair for the network service");
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sp[0]);
		close(sp[1]);
		return dsh_err_sys(err, e, "fork the network service");
	}
	if (pid == 0) {
		close(sp[0]);
		service_main(plan, sp[1], events_fd);
	}
	close(sp[1]);
	*ret_pid = pid;
	/* Its word that it read the host's resolver configuration (or the end of the pair: it failed). */
	char word[257] = { 0 };
	ssize_t got;
	while ((got = read(sp[0], word, sizeof(word) - 1)) < 0 && errno == EINTR)
		;
	if (got != 1 || word[0] != 'r') {
		close(sp[0]);
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "%s", got > 1 && word[0] == 'e' ? word + 1
							  : "the network service ended before it started");
	}
	size_t n = listener_count(np);
	int *fds = calloc(n, sizeof(*fds)), r = 0;
	if (!fds)
		r = dsh_err_sys(err, ENOMEM, "the network service's listeners");
	for (size_t i = 0; fds && i < n; i++)
		fds[i] = -1;
	/* From here on init is in the command's namespace: loopback only, no route out. */
	if (r >= 0 && unshare(CLONE_NEWNET) < 0)
		r = dsh_err_sys(err, errno, "unshare(CLONE_NEWNET)");
	if (r >= 0)
		r = dsh_net_loopback_up(err);
	if (r >= 0)
		r = dsh_net_loopback_add(DSH_NETSVC_MAPPED_BASE + 1, DSH_NETSVC_MAPPED_BITS, err);
	if (r >= 0)
		r = make_listeners(np, fds, n, err);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		int s = dsh_fd_send(sp[0], fds[i]);
		if (s < 0)
			r = dsh_err_sys(err, -s, "hand a listener to the network service");
	}
	for (size_t i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	close(sp[0]); /* on failure the service reads the end and exits */
	return r;
}

/* SPEC 12.2: the proxy variables, both cases, in place of any the caller set. */
static const char *const proxy_env[] = {
	"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
	"HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
	"ALL_PROXY=socks5h://127.0.0.1:1080", "all_proxy=socks5h://127.0.0.1:1080",
	"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
};

static bool is_proxy_var(const char *entry)
{
	for (size_t i = 0; i < sizeof(proxy_env) / sizeof(proxy_env[0]); i++) {
		size_t n = (size_t)(strchr(proxy_env[i], '=') - proxy_env[i]);
		if (strncmp(entry, proxy_env[i], n + 1) == 0)
			return true;
	}
	return false;
}

int dsh_sandbox_net_env(char *const *envp, char ***ret, struct dsh_error **err)
{
	char **v = NULL;
	for (size_t i = 0; envp && envp[i]; i++)
		if (!is_proxy_var(envp[i]) && dsh_strv_push(&v, envp[i]) < 0)
			goto oom;
	for (size_t i = 0; i < sizeof(proxy_env) / sizeof(proxy_env[0]); i++)
		if (dsh_strv_push(&v, proxy_env[i]) < 0)
			goto oom;
	*ret = v;
	return 0;
oom:
	dsh_strv_free(v);
	return dsh_err_sys(err, ENOMEM, "the command's environment");
}

/* ---- the service's refusals, counted for the result (SPEC 12.3) ---- */

/* Distinct refusals kept; later new ones are counted in one more entry that says so. */
#define TALLY_MAX 256

static struct dsh_net_refusal *tally_find(struct dsh_net_tally *t, const char *name, unsigned port, const char *via,
					  const char *reason)
{
	for (size_t i = 0; i < t->n; i++) {
		struct dsh_net_refusal *f = &t->v[i];
		if (f->port == port && strcmp(f->name, name) == 0 && strcmp(f->via, via) == 0 &&
		    strcmp(f->reason, reason) == 0)
			return f;
	}
	if (t->n == TALLY_MAX + 1)
		return &t->v[TALLY_MAX];
	struct dsh_net_refusal *v = realloc(t->v, (t->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	t->v = v;
	bool last = t->n == TALLY_MAX;
	struct dsh_net_refusal *f = &v[t->n];
	*f = (struct dsh_net_refusal){ .name = strdup(last ? "(more names)" : name), .port = last ? 0 : port,
				       .via = strdup(last ? "-" : via),
				       .reason = strdup(last ? "more distinct refusals than a report lists" : reason) };
	if (!f->name || !f->via || !f->reason) {
		free(f->name);
		free(f->via);
		free(f->reason);
		return NULL;
	}
	t->n++;
	return f;
}

/* One line of the service's (net/service.h's events_fd format); a malformed one is dropped. */
static void tally_line(struct dsh_net_tally *t, const char *line)
{
	json_t *o = json_loads(line, 0, NULL);
	const char *name = json_string_value(json_object_get(o, "name"));
	const char *via = json_string_value(json_object_get(o, "via"));
	const char *reason = json_string_value(json_object_get(o, "reason"));
	json_int_t port = json_integer_value(json_object_get(o, "port"));
	if (name && via && reason && port >= 0 && port <= 65535) {
		struct dsh_net_refusal *f = tally_find(t, name, (unsigned)port, via, reason);
		if (f)
			f->count++;
	}
	json_decref(o);
}

int dsh_net_tally_read(struct dsh_net_tally *t, int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -EPIPE;
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (t->n_part < sizeof(t->part) - 1)
				t->part[t->n_part++] = buf[i];
			continue;
		}
		t->part[t->n_part] = '\0';
		tally_line(t, t->part);
		t->n_part = 0;
	}
	return 1;
}

void dsh_net_tally_take(struct dsh_net_tally *t, struct dsh_run_result *ret)
{
	ret->net_refused = t->v;
	ret->n_net_refused = t->n;
	t->v = NULL;
	t->n = 0;
}

void dsh_net_refusals_free(struct dsh_net_refusal *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].via);
		free(v[i].reason);
	}
	free(v);
}

void dsh_net_tally_clear(struct dsh_net_tally *t)
{
	dsh_net_refusals_free(t->v, t->n);
	memset(t, 0, sizeof(*t));
}
