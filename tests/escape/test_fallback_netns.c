/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * network: off where network namespaces are refused (a container runtime's seccomp profile): the
 * linux-ns probe tries a network namespace as runs make one, so `auto` falls back to landlock (no
 * socket but AF_UNIX) or fails closed with 125; it never runs the command with the network.  The
 * refusal is real: build/helpers/esc_shim answers EPERM to unshare/clone with CLONE_NEWNET.
 * The oracle is a TCP listener on the host's 127.0.0.1 that the command tries to reach.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/probe.h"
#include "tests/lib/harness.h"

struct net {
	char *top, *ws, *marker, *report, *shim, *probe;
	int listener;
	char port[16];
};

static void net_init(struct net *t)
{
	t->top = dsh_test_mkdtemp();
	cr_assert(asprintf(&t->ws, "%s/ws", t->top) > 0);
	cr_assert(asprintf(&t->marker, "%s/ws/ran", t->top) > 0);
	cr_assert(asprintf(&t->report, "%s/report.json", t->top) > 0);
	cr_assert_eq(mkdir(t->ws, 0755), 0);
	t->shim = dsh_test_helper("esc_shim");
	t->probe = dsh_test_helper("probe_access");
	t->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	cr_assert(t->listener >= 0 && bind(t->listener, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		  listen(t->listener, 8) == 0 && getsockname(t->listener, (struct sockaddr *)&a, &len) == 0);
	snprintf(t->port, sizeof(t->port), "%d", ntohs(a.sin_port));
}

/* Whether anything connected to the host's listener. */
static bool reached(struct net *t)
{
	int c = accept4(t->listener, NULL, NULL, SOCK_CLOEXEC);
	if (c >= 0) {
		close(c);
		return true;
	}
	cr_expect(errno == EAGAIN || errno == EWOULDBLOCK, "accept: %s", strerror(errno));
	return false;
}

static void net_free(struct net *t)
{
	close(t->listener);
	dsh_test_rmtree(t->top);
	free(t->top), free(t->ws), free(t->marker), free(t->report), free(t->shim), free(t->probe);
}

/* esc_shim MODES -- dshbox run --workspace WS --cwd WS --report R ARGS... -- sh -c
   'touch MARKER; probe_access connect 127.0.0.1 PORT' */
static void run_shimmed(struct net *t, struct dsh_proc *r, const char *modes, ...)
{
	char *script = NULL;
	cr_assert(asprintf(&script, "touch %s; exec %s connect 127.0.0.1 %s", t->marker, t->probe, t->port) > 0);
	const char *argv[40];
	size_t n = 0;
	argv[n++] = t->shim;
	argv[n++] = modes;
	argv[n++] = "--";
	argv[n++] = dsh_test_dshbox();
	argv[n++] = "run";
	argv[n++] = "--workspace";
	argv[n++] = t->ws;
	argv[n++] = "--cwd";
	argv[n++] = t->ws;
	argv[n++] = "--report";
	argv[n++] = t->report;
	va_list ap;
	va_start(ap, modes);
	const char *a;
	while ((a = va_arg(ap, const char *)))
		argv[n++] = a;
	va_end(ap);
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n] = NULL;
	unlink(t->report);
	unlink(t->marker);
	cr_assert_eq(dsh_proc_run((char *const *)argv, NULL, NULL, r), 0);
	cr_log_info("%s: exit %d\n%s\n%s", modes, r->exit_code, r->out, r->err);
	free(script);
}

static json_t *report(struct net *t)
{
	json_error_t je;
	json_t *o = json_load_file(t->report, 0, &je);
	cr_assert_not_null(o, "--report %s: %s", t->report, je.text);
	return o;
}

static bool host_has(enum dsh_probe_id a, enum dsh_probe_id b)
{
	struct dsh_probe_result r;
	return dsh_probe_run(a, 5000, &r) == 0 && dsh_probe_run(b, 5000, &r) == 0;
}

Test(fallback_netns, network_off_falls_back_to_landlock_without_network)
{
	if (!host_has(DSH_PROBE_LANDLOCK, DSH_PROBE_SECCOMP))
		DSH_SKIP("no Landlock here: the fallback cannot be shown");
	struct net t;
	net_init(&t);
	struct dsh_proc r;
	run_shimmed(&t, &r, "netns", "--network", "off", NULL);
	cr_expect_eq(access(t.marker, F_OK), 0, "the command did not run: %s", r.err);
	cr_expect_neq(strcmp(r.out, "ok\n"), 0, "the host's 127.0.0.1:%s was reachable with network off", t.port);
	cr_expect_eq(r.exit_code, 1, "probe_access exits 1 when the connection fails: %d %s", r.exit_code, r.err);
	cr_expect_not(reached(&t), "the host's listener was reached with network off");
	json_t *o = report(&t);
	cr_expect_str_eq(json_string_value(json_object_get(o, "backend")), "landlock");
	cr_expect(json_is_false(json_object_get(o, "network")));
	json_decref(o);
	dsh_proc_clear(&r);
	net_free(&t);
}

Test(fallback_netns, network_off_without_netns_or_landlock_fails_closed)
{
	struct net t;
	net_init(&t);
	struct dsh_proc r;
	run_shimmed(&t, &r, "netns,landlock", "--network", "off", "--backend", "auto", NULL);
	cr_expect_eq(r.exit_code, 125, "exit %d: %s", r.exit_code, r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "no backend can enforce"), "%s", r.err);
	/* A report in a file lets the start decide (docs/run.md): the start's clone names the network
	   namespace among those it asked for, as the probe's unshare would alone. */
	cr_expect(strstr(r.err, "CLONE_NEWNET"), "the error does not say what was refused: %s", r.err);
	cr_expect(strstr(r.err, "landlock_create_ruleset"), "the error does not say why landlock cannot: %s", r.err);
	cr_expect_str_eq(r.out, "", "the command ran: %s", r.out);
	cr_expect_neq(access(t.marker, F_OK), 0, "the command ran");
	cr_expect_not(reached(&t), "the host's listener was reached");
	dsh_proc_clear(&r);
	net_free(&t);
}

Test(fallback_netns, explicit_linux_ns_network_off_fails_closed)
{
	struct net t;
	net_init(&t);
	struct dsh_proc r;
	run_shimmed(&t, &r, "netns", "--network", "off", "--backend", "linux-ns", NULL);
	cr_expect_eq(r.exit_code, 125, "exit %d: %s", r.exit_code, r.err);
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "CLONE_NEWNET"), "%s", r.err);
	cr_expect_str_eq(r.out, "", "the command ran: %s", r.out);
	cr_expect_neq(access(t.marker, F_OK), 0, "the command ran");
	cr_expect_not(reached(&t), "the host's listener was reached");
	dsh_proc_clear(&r);
	net_free(&t);
}

/* The control: with the network on no namespace is needed, linux-ns still serves and the same
   command does reach the listener, so the tests above can tell the difference. */
Test(fallback_netns, network_on_keeps_linux_ns)
{
	if (!host_has(DSH_PROBE_USERNS, DSH_PROBE_MOUNT_API))
		DSH_SKIP("linux-ns is unavailable here (see dshbox probe)");
	struct net t;
	net_init(&t);
	struct dsh_proc r;
	run_shimmed(&t, &r, "netns", "--network", "on", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "ok\n", "network on: %s%s", r.out, r.err);
	cr_expect(reached(&t), "the listener saw no connection with the network on");
	json_t *o = report(&t);
	cr_expect_str_eq(json_string_value(json_object_get(o, "backend")), "linux-ns");
	json_decref(o);
	dsh_proc_clear(&r);
	net_free(&t);
}
