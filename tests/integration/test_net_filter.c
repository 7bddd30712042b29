/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The network by name (SPEC 12), end to end: `dshbox run --allow-domain ...` inside a world of the
 * test's own (tests/lib/net_world.sh, in a network namespace made for it: a DNS server and HTTP,
 * HTTPS and line servers for allowed.test, other.test and denied.test), with real clients.  Every
 * verdict is read from the servers' own logs: what reached them, and what never did.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "tests/lib/harness.h"

struct world {
	char *dir;
	struct dsh_proc r;
	char *dns;      /* the DNS server's log: every query that reached it */
	char *upstream; /* the servers': one line per connection */
};

static bool have(const char *prog)
{
	char *cmd = dsh_test_fmt("command -v %s >/dev/null 2>&1", prog);
	int rc = system(cmd);
	free(cmd);
	return rc == 0;
}

static void require_world(void)
{
	dsh_test_require_backend_named("linux-ns"); /* the one backend that serves a filtered network */
	static const char *const progs[] = { "unshare", "dnsmasq", "python3", "openssl", "curl", "ip", "getent" };
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		if (!have(progs[i]))
			cr_skip_test("SKIP: %s is not installed (tools/install-deps.sh installs it)", progs[i]);
}

/* A fresh world's directory (its servers' logs, the test CA, the workspace). */
static void world_make(struct world *w)
{
	require_world();
	w->dir = dsh_test_mkdtemp();
	cr_assert_eq(chmod(w->dir, 0755), 0);
}

/* argv (net_world.sh DIR ...), then what the world's servers logged. */
static void world_run(struct world *w, const char *const *argv)
{
	cr_assert_eq(dsh_proc_run((char *const *)argv, NULL, NULL, &w->r), 0);
	cr_assert_neq(w->r.exit_code, 99, "the world did not start: %s", w->r.err);
	w->dns = dsh_test_read_file(dsh_test_fmt("%s/dns.log", w->dir));
	w->upstream = dsh_test_read_file(dsh_test_fmt("%s/upstream.log", w->dir));
}

/* script with each @CA@ replaced by the world's test CA. */
static const char *with_ca(const char *dir, const char *script)
{
	const char *at = strstr(script, "@CA@");
	if (!at)
		return script;
	char *rest = (char *)with_ca(dir, at + 4);
	return dsh_test_fmt("%.*s%s/ca.pem%s", (int)(at - script), script, dir, rest);
}

/* dshbox run ARGS... -- sh -c SCRIPT, in a fresh world; args end at NULL. */
static void in_world(struct world *w, const char *script, ...)
{
	world_make(w);
	const char *argv[48];
	size_t n = 0;
	argv[n++] = "unshare";
	argv[n++] = geteuid() == 0 ? "-n" : "-rn"; /* a user maps itself to root to make the world */
	argv[n++] = "-m";
	argv[n++] = "sh";
	argv[n++] = DSH_TOP "/tests/lib/net_world.sh";
	argv[n++] = w->dir;
	argv[n++] = dsh_test_dshbox();
	argv[n++] = "run";
	argv[n++] = "--workspace";
	argv[n++] = w->dir;
	argv[n++] = "--cwd";
	argv[n++] = w->dir;
	va_list ap;
	va_start(ap, script);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 40;)
		argv[n++] = strncmp(a, "@DIR@", 5) == 0 ? dsh_test_fmt("%s%s", w->dir, a + 5) : a;
	va_end(ap);
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = with_ca(w->dir, script);
	argv[n] = NULL;
	world_run(w, argv);
}

static void world_clear(struct world *w)
{
	dsh_proc_clear(&w->r);
	free(w->dns);
	free(w->upstream);
	if (w->dir)
		dsh_test_rmtree(w->dir);
	free(w->dir);
}

/* The DNS server saw a query naming name. */
static bool queried(const struct world *w, const char *name)
{
	char *needle = dsh_test_fmt("] %s from", name);
	bool seen = strstr(w->dns, needle) != NULL;
	free(needle);
	return seen;
}

Test(net_filter, an_allowed_name_resolves_to_the_runs_own_range_and_is_never_asked_outside)
{
	struct world w = { 0 };
	in_world(&w, "getent ahostsv4 allowed.test | head -1", "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s", w.r.err);
	cr_expect(strncmp(w.r.out, "198.18.", 7) == 0, "an address of the run's range: %s", w.r.out);
	/* Asked for at lookup time, resolved outside only when a connection needs it. */
	cr_expect(!queried(&w, "allowed.test"), "a lookup alone asks no server outside: %s", w.dns);
	world_clear(&w);
}

Test(net_filter, a_query_for_a_name_outside_the_lists_never_leaves_the_run)
{
	struct world w = { 0 };
	/* What an exfiltrating command does: the data in the name. */
	in_world(&w, "getent hosts s3cr3t-data.denied.test; echo rc=$?; getent hosts denied.test; echo rc=$?",
		 "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s", w.r.err);
	cr_expect(strstr(w.r.out, "rc=2\nrc=2\n"), "both names unknown inside: %s", w.r.out);
	cr_expect(!strstr(w.dns, "s3cr3t"), "no query carried the name outside: %s", w.dns);
	cr_expect(!queried(&w, "denied.test"), "%s", w.dns);
	world_clear(&w);
}

Test(net_filter, deny_beats_allow_for_a_name_under_an_allowed_wildcard)
{
	struct world w = { 0 };
	in_world(&w, "getent hosts allowed.test; echo rc=$?", "--allow-domain", "*.test", "--deny-domain", "allowed.test",
		 NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s", w.r.err);
	cr_expect(strstr(w.r.out, "rc=2"), "%s", w.r.out);
	world_clear(&w);
}

Test(net_filter, the_command_has_loopback_only_and_no_route_out)
{
	struct world w = { 0 };
	/* 127.0.0.2 is the world's allowed.test server: the address itself is never reachable. */
	in_world(&w, "curl -s -m 5 --noproxy '*' http://127.0.0.2/direct; echo rc=$?", "--allow-domain", "allowed.test",
		 NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s", w.r.err);
	cr_expect(!strstr(w.r.out, "hello"), "%s", w.r.out);
	cr_expect(!strstr(w.upstream, "/direct"), "nothing reached the server: %s", w.upstream);
	world_clear(&w);
}

Test(net_filter, the_command_sees_the_proxy_variables_and_the_runs_resolver)
{
	struct world w = { 0 };
	in_world(&w, "cat /etc/resolv.conf; env | sort | grep -i _proxy=", "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s", w.r.err);
	cr_expect(strstr(w.r.out, "\nnameserver 127.0.0.1\n"), "%s", w.r.out);
	static const char *const vars[] = { "HTTP_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
					    "ALL_PROXY=socks5h://127.0.0.1:1080", "no_proxy=localhost,127.0.0.1,::1" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		cr_expect(strstr(w.r.out, vars[i]), "%s in %s", vars[i], w.r.out);
	world_clear(&w);
}

Test(net_filter, the_report_written_again_after_the_run_counts_each_refused_name)
{
	struct world w = { 0 };
	/* The report's name is known before the world's directory: the world passes it through. */
	in_world(&w, "getent hosts denied.test; getent hosts denied.test; getent hosts allowed.test; true",
		 "--allow-domain", "allowed.test", "--report", "@DIR@/report.json", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s", w.r.err);
	cr_expect_eq(w.r.err[0], '\0', "a successful run prints nothing of dshbox's own: %s", w.r.err);
	char *report = dsh_test_read_file(dsh_test_fmt("%s/report.json", w.dir));
	cr_expect(strstr(report, "\"network\": false"), "%s", report);
	cr_expect(strstr(report, "\"network_filter\""), "%s", report);
	const char *ref = strstr(report, "\"refused\"");
	cr_assert(ref, "%s", report);
	cr_expect(strstr(ref, "\"name\": \"denied.test\""), "%s", ref);
	cr_expect(strstr(ref, "\"via\": \"dns\""), "%s", ref);
	/* getent asks for A and AAAA (and again): each counted, one entry. */
	cr_expect(dsh_count_lines_with_prefix(ref, "        \"name\": \"denied.test\"") == 1, "%s", ref);
	cr_expect(!strstr(ref, "\"count\": 1\n"), "two lookups count more than one: %s", ref);
	cr_expect(!strstr(ref, "allowed.test"), "%s", ref);
	free(report);
	world_clear(&w);
}

Test(net_filter, a_failed_command_names_what_the_network_refused)
{
	struct world w = { 0 };
	in_world(&w, "getent hosts denied.test", "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 2, "%s", w.r.err);
	cr_expect(strstr(w.r.err, "the network refused: denied.test (dns: denied)"), "%s", w.r.err);
	world_clear(&w);
}

Test(net_filter, a_dns_query_sent_past_the_runs_resolver_reaches_no_server)
{
	struct world w = { 0 };
	/* Straight to the world's resolver address, and to the host's public one: neither is
	   outside the command's namespace, where 127.0.0.53 is its own loopback. */
	in_world(&w,
		 "python3 -c 'import socket\n"
		 "q = bytes.fromhex(\"abcd01000001000000000000\") + b\"\\x04leak\\x06denied\\x04test\\x00\\x00\\x01\\x00\\x01\"\n"
		 "for a in (\"127.0.0.53\", \"198.18.0.1\"):\n"
		 "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)\n"
		 "    try:\n"
		 "        s.sendto(q, (a, 53)); print(a, len(s.recv(512)))\n"
		 "    except OSError as e:\n"
		 "        print(a, \"no answer\", e)\n'",
		 "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(strstr(w.r.out, "127.0.0.53 no answer"), "%s", w.r.out);
	cr_expect(!strstr(w.dns, "leak"), "no query reached the server outside: %s", w.dns);
	world_clear(&w);
}

Test(net_filter, the_command_can_neither_trace_nor_read_the_service)
{
	struct world w = { 0 };
	/* The service is pid 2 of the sandbox (init's first child): not dumpable, no capability. */
	in_world(&w,
		 "tr '\\0' ' ' </proc/2/cmdline; echo; cat /proc/2/environ >/dev/null 2>&1 && echo ENV\"\"IRON-READ; "
		 "head -c1 /proc/2/mem >/dev/null 2>&1 && echo MEM\"\"-READ; "
		 "timeout 2 strace -p 2 -e trace=none -o /dev/null 2>/dev/null; echo strace=$?; "
		 "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/2/status",
		 "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(strstr(w.r.out, "dshbox"), "pid 2 is the service: %s", w.r.out);
	cr_expect(!strstr(w.r.out, "ENVIRON-READ") && !strstr(w.r.out, "MEM-READ"), "%s", w.r.out);
	cr_expect(strstr(w.r.out, "strace=1\n"), "strace could not attach: %s%s", w.r.out, w.r.err);
	cr_expect(strstr(w.r.out, "CapEff:\t0000000000000000"), "%s", w.r.out);
	cr_expect(strstr(w.r.out, "NoNewPrivs:\t1"), "%s", w.r.out);
#if !defined(__SANITIZE_ADDRESS__) /* net/confine.c: ASan's runtime makes calls no list foresees */
	cr_expect(strstr(w.r.out, "Seccomp:\t2"), "the allow-list is loaded: %s", w.r.out);
#endif
	world_clear(&w);
}

/* What this build cannot hold of a filtered network refuses the run: one error line, 125, nothing run. */
static void refused_at_start(const char *config, const char *want)
{
	char *ws = dsh_test_mkdtemp();
	char *cfg = dsh_test_fmt("%s/dshbox.yml", ws), *marker = dsh_test_fmt("%s/ran", ws);
	dsh_test_write_file(cfg, config);
	const char *argv[] = { dsh_test_dshbox(), "run", "--config", cfg, "--workspace", ws, "--", "touch", marker, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, NULL, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect(strncmp(r.err, "dshbox: error: ", 15) == 0 && strstr(r.err, want), "%s", r.err);
	cr_expect(access(marker, F_OK) < 0, "nothing ran");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
}

Test(net_filter, allow_local_binding_false_is_refused_not_ignored)
{
	refused_at_start("network:\n  allowDomains: [a.test]\n  allowLocalBinding: false\n", "allowLocalBinding: false");
}

Test(net_filter, a_filter_without_protect_sockets_is_refused)
{
	refused_at_start("protectSockets: false\nnetwork:\n  allowDomains: [a.test]\n", "needs protectSockets");
}

Test(net_filter, a_backend_without_the_service_is_refused)
{
	refused_at_start("backend: landlock\nnetwork:\n  allowDomains: [a.test]\n", "cannot filter the network by name");
}

/* The world's servers logged a connection matching what. */
static bool reached(const struct world *w, const char *what)
{
	return strstr(w->upstream, what) != NULL;
}

Test(net_filter, curl_through_the_proxy_variables_reaches_an_allowed_name_over_http_and_https)
{
	struct world w = { 0 };
	in_world(&w, "curl -sS -m 10 http://allowed.test/plain && curl -sS -m 10 --cacert @CA@ https://allowed.test/tls",
		 "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(reached(&w, "127.0.0.2 80 http allowed.test /plain"), "%s", w.upstream);
	cr_expect(reached(&w, "127.0.0.2 443 https allowed.test /tls"), "%s", w.upstream);
	world_clear(&w);
}

Test(net_filter, a_client_that_ignores_the_proxy_variables_reaches_an_allowed_name_by_its_mapped_address)
{
	struct world w = { 0 };
	in_world(&w,
		 "curl -sS -m 10 --noproxy '*' http://allowed.test/mapped && "
		 "curl -sS -m 10 --noproxy '*' --cacert @CA@ https://allowed.test/mappedtls && "
		 "python3 -c 'import socket; s = socket.create_connection((\"allowed.test\", 22), 10); print(s.recv(64))'",
		 "--allow-domain", "allowed.test", "--allow-domain", "allowed.test:22", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(reached(&w, "127.0.0.2 80 http allowed.test /mapped"), "%s", w.upstream);
	cr_expect(reached(&w, "127.0.0.2 443 https allowed.test /mappedtls"), "%s", w.upstream);
	cr_expect(reached(&w, "127.0.0.2 22 line"), "a raw connect() to name:22: %s", w.upstream);
	cr_expect(strstr(w.r.out, "ssh-like 127.0.0.2"), "%s", w.r.out);
	world_clear(&w);
}

/* The relay past the first bytes (net/splice.c): 32 MiB each way through the mapped address and
 * through a CONNECT tunnel, each byte checked against the server's own digest, and the client's
 * half-close passed on (the server answers only after it). */
static const char bulk_client[] =
	"cat > bulk.py <<'EOF'\n"
	"import hashlib, os, socket\n"
	"N = 32 << 20\n"
	"def conn(via):\n"
	"    if via == 'mapped':\n"
	"        return socket.create_connection(('allowed.test', 7), 60)\n"
	"    host, port = os.environ['http_proxy'].split('//')[-1].rstrip('/').rsplit(':', 1)\n"
	"    s = socket.create_connection((host, int(port)), 60)\n"
	"    s.sendall(b'CONNECT allowed.test:7 HTTP/1.1\\r\\nHost: allowed.test:7\\r\\n\\r\\n')\n"
	"    head = b''\n"
	"    while not head.endswith(b'\\r\\n\\r\\n'):\n"
	"        b = s.recv(1)\n"
	"        assert b, head\n"
	"        head += b\n"
	"    assert b' 200 ' in head.split(b'\\r\\n')[0], head\n"
	"    return s\n"
	"def down(via):\n"
	"    s = conn(via)\n"
	"    s.sendall(b'SEND %d\\n' % N)\n"
	"    h, n = hashlib.sha256(), 0\n"
	"    while True:\n"
	"        b = s.recv(1 << 20)\n"
	"        if not b:\n"
	"            break\n"
	"        h.update(b)\n"
	"        n += len(b)\n"
	"    print(via, 'down', n, h.hexdigest())\n"
	"def up(via):\n"
	"    s = conn(via)\n"
	"    s.sendall(b'SUM\\n')\n"
	"    h, n = hashlib.sha256(), 0\n"
	"    while n < N:\n"
	"        b = os.urandom(min(N - n, 1 << 20))\n"
	"        s.sendall(b)\n"
	"        h.update(b)\n"
	"        n += len(b)\n"
	"    s.shutdown(socket.SHUT_WR)\n"
	"    r = b''\n"
	"    while True:\n"
	"        b = s.recv(4096)\n"
	"        if not b:\n"
	"            break\n"
	"        r += b\n"
	"    print(via, 'up', n, h.hexdigest(), 'answer', r.decode().strip())\n"
	"for via in ('mapped', 'proxy'):\n"
	"    down(via)\n"
	"    up(via)\n"
	"EOF\n"
	"python3 bulk.py";

/* The line of out that starts with "VIA DIR ": its byte count and digest (and the server's answer). */
static bool bulk_line(const char *out, const char *via, const char *dir, long *n, char sha[65], char answer[96])
{
	char *key = dsh_test_fmt("%s %s ", via, dir);
	const char *at = strstr(out, key);
	bool ok = at && sscanf(at + strlen(key), "%ld %64[0-9a-f]", n, sha) == 2 && strlen(sha) == 64;
	if (ok && answer) {
		const char *a = strstr(at, " answer ");
		const char *nl = strchr(at, '\n');
		ok = a && nl && a < nl && (size_t)(nl - a - 8) < 96;
		if (ok)
			snprintf(answer, 96, "%.*s", (int)(nl - a - 8), a + 8);
	}
	free(key);
	return ok;
}

Test(net_filter, a_bulk_transfer_each_way_arrives_whole_and_a_half_close_passes_through)
{
	struct world w = { 0 };
	in_world(&w, bulk_client, "--allow-domain", "allowed.test:7", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	static const char *const vias[] = { "mapped", "proxy" };
	for (size_t i = 0; i < 2; i++) {
		long n = 0;
		char sha[65] = "", answer[96] = "";
		cr_assert(bulk_line(w.r.out, vias[i], "down", &n, sha, NULL), "%s", w.r.out);
		cr_expect_eq(n, 32L << 20, "%s: %s", vias[i], w.r.out);
		char *sent = dsh_test_fmt("127.0.0.2 7 bulk sent %ld %s", n, sha);
		cr_expect(reached(&w, sent), "%s: what arrived is what the server sent: %s\n%s", vias[i], w.r.out,
			  w.upstream);
		free(sent);
		cr_assert(bulk_line(w.r.out, vias[i], "up", &n, sha, answer), "%s", w.r.out);
		char *got = dsh_test_fmt("%ld %s", n, sha);
		char *logged = dsh_test_fmt("127.0.0.2 7 bulk got %s", got);
		cr_expect(reached(&w, logged), "%s: what the server got is what was sent: %s\n%s", vias[i], w.r.out,
			  w.upstream);
		free(logged);
		cr_expect_str_eq(answer, got, "%s: the answer after the half-close", vias[i]);
		free(got);
	}
	world_clear(&w);
}

Test(net_filter, socks5_by_name_reaches_an_allowed_name_and_not_a_denied_one)
{
	struct world w = { 0 };
	in_world(&w,
		 "curl -sS -m 10 --socks5-hostname 127.0.0.1:1080 http://allowed.test/socks; "
		 "curl -sS -m 10 --socks5-hostname 127.0.0.1:1080 http://denied.test/socks-denied; echo rc=$?",
		 "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(reached(&w, "127.0.0.2 80 http allowed.test /socks"), "%s", w.upstream);
	cr_expect(!reached(&w, "socks-denied") && !strstr(w.upstream, "127.0.0.4"), "%s", w.upstream);
	cr_expect(!queried(&w, "denied.test"), "%s", w.dns);
	world_clear(&w);
}

Test(net_filter, a_denied_name_and_an_address_literal_through_the_proxy_reach_nothing)
{
	struct world w = { 0 };
	in_world(&w,
		 "curl -sS -m 10 -o /dev/null -w 'denied %{http_code}\\n' http://denied.test/by-name; "
		 "curl -sS -m 10 -o /dev/null -w 'literal %{http_code}\\n' http://127.0.0.2/by-address; "
		 "curl -sS -m 10 --cacert @CA@ https://denied.test/tunnel; echo rc=$?",
		 "--allow-domain", "allowed.test", "--report", "@DIR@/report.json", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(strstr(w.r.out, "denied 403\n") && strstr(w.r.out, "literal 403\n"), "%s", w.r.out);
	cr_expect(!strstr(w.upstream, "127.0.0.4") && !reached(&w, "by-address"), "%s", w.upstream);
	cr_expect(!queried(&w, "denied.test"), "never resolved outside: %s", w.dns);
	char *report = dsh_test_read_file(dsh_test_fmt("%s/report.json", w.dir));
	cr_expect(strstr(report, "\"name\": \"127.0.0.2\""), "the literal is counted: %s", report);
	free(report);
	world_clear(&w);
}

Test(net_filter, tls_fronting_through_an_allowed_name_is_cut_before_a_byte_reaches_the_server)
{
	struct world w = { 0 };
	/* CONNECT allowed.test:443, then a ClientHello for other.test: fronting. */
	in_world(&w,
		 "curl -sS -m 10 --cacert @CA@ --connect-to other.test:443:allowed.test:443 https://other.test/fronted; "
		 "echo rc=$?; curl -sS -m 10 --noproxy '*' -H 'Host: other.test' http://allowed.test/host-fronted; echo rc=$?",
		 "--allow-domain", "allowed.test", "--report", "@DIR@/report.json", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(!reached(&w, "fronted"), "neither reached a server: %s", w.upstream);
	char *report = dsh_test_read_file(dsh_test_fmt("%s/report.json", w.dir));
	cr_expect(strstr(report, "\"via\": \"sni\""), "%s", report);
	cr_expect(strstr(report, "\"via\": \"host\""), "%s", report);
	free(report);
	world_clear(&w);
}

Test(net_filter, git_clone_over_http_python_and_node_reach_an_allowed_name)
{
	struct world w = { 0 };
	/* The repository is made inside (the world serves the workspace's www/other.test). */
	in_world(&w,
		 "set -e; export HOME=$PWD; mkdir -p www/other.test src; "
		 "git init -q --bare -b main www/other.test/repo.git; cd src; git init -q -b main; "
		 "git -c user.email=t@test -c user.name=t commit -q --allow-empty -m first; "
		 "git push -q ../www/other.test/repo.git main; cd ..; git -C www/other.test/repo.git update-server-info; "
		 "git clone -q http://other.test/repo.git clone; git -C clone log --format=%s; "
		 "python3 -c 'import urllib.request; print(urllib.request.urlopen(\"http://allowed.test/py\", timeout=10).read().decode().strip())'; "
		 "node -e 'fetch(\"http://allowed.test/node\").then(r => r.text()).then(t => console.log(t.trim()))'",
		 "--allow-domain", "allowed.test", "--allow-domain", "other.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(strstr(w.r.out, "first\n"), "the clone has the commit: %s", w.r.out);
	cr_expect(reached(&w, "other.test /repo.git/info/refs"), "%s", w.upstream);
	cr_expect(reached(&w, "127.0.0.2 80 http allowed.test /py"), "%s", w.upstream);
	/* Node's fetch ignores the proxy variables: it came by the mapped address. */
	cr_expect(reached(&w, "127.0.0.2 80 http allowed.test /node"), "%s", w.upstream);
	world_clear(&w);
}

/* A package "tiny" in the world's registry.npmjs.org, then `npm install tiny` as its users run it. */
static const char npm_script[] =
	"set -e; export HOME=$PWD; R=www/registry.npmjs.org/tiny; "
	"mkdir -p $R/- pkg/package app; printf '{\"name\":\"tiny\",\"version\":\"1.0.0\"}' >pkg/package/package.json; "
	"tar -czf $R/-/tiny-1.0.0.tgz -C pkg package; sha=$(sha1sum $R/-/tiny-1.0.0.tgz | cut -d' ' -f1); "
	"printf '{\"name\":\"tiny\",\"dist-tags\":{\"latest\":\"1.0.0\"},\"versions\":{\"1.0.0\":{\"name\":\"tiny\","
	"\"version\":\"1.0.0\",\"dist\":{\"tarball\":\"%s/tiny/-/tiny-1.0.0.tgz\",\"shasum\":\"%s\"}}}}' "
	"\"$(npm config get registry | sed 's,/$,,')\" $sha >$R/index.json; "
	"cd app; echo '{}' >package.json; npm config get registry; "
	"npm install --cafile ../ca.pem --no-update-notifier --no-audit --no-fund --cache ../npmcache tiny >/dev/null 2>../npm.err || { echo npm-failed; exit 0; }; "
	"cat node_modules/tiny/package.json";

Test(net_filter, npm_install_reaches_its_registry_when_its_host_is_allowed_and_fails_when_not)
{
	struct world w = { 0 };
	if (system("command -v npm >/dev/null 2>&1") != 0)
		cr_skip_test("SKIP: npm is not installed (tools/install-deps.sh installs it)");
	in_world(&w, npm_script, "--allow-domain", "registry.npmjs.org", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(strstr(w.r.out, "https://registry.npmjs.org/\n"), "npm's own default registry: %s", w.r.out);
	cr_expect(strstr(w.r.out, "\"name\":\"tiny\""), "installed: %s%s", w.r.out,
		  dsh_test_read_file(dsh_test_fmt("%s/npm.err", w.dir)));
	cr_expect(reached(&w, "443 https registry.npmjs.org /tiny"), "%s", w.upstream);
	world_clear(&w);

	in_world(&w, npm_script, "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(strstr(w.r.out, "npm-failed"), "%s", w.r.out);
	cr_expect(!strstr(w.upstream, "registry.npmjs.org"), "%s", w.upstream);
	cr_expect(!queried(&w, "registry.npmjs.org"), "%s", w.dns);
	world_clear(&w);
}

Test(net_filter, udp_other_than_dns_and_ipv6_reach_nothing)
{
	struct world w = { 0 };
	/* QUIC's first packet to an allowed name and to its real address; then IPv6 every way. */
	in_world(&w,
		 "python3 -c 'import socket\n"
		 "for a in (\"allowed.test\", \"127.0.0.2\"):\n"
		 "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
		 "    try:\n"
		 "        s.sendto(b\"\\xc0quic-initial\", (a, 443)); print(a, \"sent\")\n"
		 "    except OSError as e:\n"
		 "        print(a, e)\n'; "
		 "curl -sS -m 5 -6 http://allowed.test/v6-name; echo rc=$?; "
		 "curl -sS -m 5 -g --noproxy '*' 'http://[fd00::2]/v6-direct'; echo rc=$?; "
		 "curl -sS -m 5 -g -o /dev/null -w 'proxied %{http_code}\\n' 'http://[fd00::2]/v6-proxied'; "
		 "getent ahostsv6 allowed.test; echo v6rc=$?",
		 "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(!strstr(w.upstream, " udp "), "no datagram reached a server: %s", w.upstream);
	cr_expect(!strstr(w.upstream, "v6-"), "no IPv6 request reached one: %s", w.upstream);
	cr_expect(strstr(w.r.out, "proxied 403\n"), "an IPv6 literal no pattern spells: %s", w.r.out);
	cr_expect(!strstr(w.r.out, "hello"), "%s", w.r.out);
	world_clear(&w);
}

/* dshbox run under tests/lib/net_asker.py, which answers by table and logs each question. */
static void asked_in_world(struct world *w, const char *table, const char *script)
{
	world_make(w);
	char *log = dsh_test_fmt("%s/ask.log", w->dir), *cfg = dsh_test_fmt("%s/dshbox.yml", w->dir);
	/* askTimeoutMs: 2 s, not 30 (a silent host's test). */
	dsh_test_write_file(cfg, "network:\n  askTimeoutMs: 2000\n");
	const char *argv[] = { "unshare", geteuid() == 0 ? "-n" : "-rn", "-m", "sh", DSH_TOP "/tests/lib/net_world.sh",
			       w->dir, "python3", DSH_TOP "/tests/lib/net_asker.py", log, table, "--", dsh_test_dshbox(),
			       "run", "--config", cfg, "--workspace", w->dir, "--cwd", w->dir, "--allow-domain", "allowed.test",
			       "--deny-domain", "denied.test", "--ask-fd", "@ASKFD@", "--report",
			       dsh_test_fmt("%s/report.json", w->dir), "--", "sh", "-c", script, NULL };
	world_run(w, argv);
	free(log);
	free(cfg);
}

Test(net_filter, a_name_in_neither_list_is_asked_of_the_host_and_reached_only_when_it_allows)
{
	struct world w = { 0 };
	asked_in_world(&w, "other.test=allow-once",
		       "curl -sS -m 10 http://other.test/asked-proxy; "
		       "curl -sS -m 10 --noproxy '*' http://other.test/asked-mapped; "
		       "curl -sS -m 10 -o /dev/null -w 'unlisted %{http_code}\\n' http://unlisted.test/asked-denied; "
		       "curl -sS -m 10 -o /dev/null -w 'denied %{http_code}\\n' http://denied.test/never-asked");
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	char *asks = dsh_test_read_file(dsh_test_fmt("%s/ask.log", w.dir));
	cr_expect(strstr(asks, "{\"id\":1,\"name\":\"other.test\",\"port\":80,\"via\":\"http\"}\n"), "%s", asks);
	cr_expect(strstr(asks, "\"name\":\"other.test\",\"port\":0,\"via\":\"dns\""), "the lookup is asked too: %s", asks);
	cr_expect(strstr(asks, "\"name\":\"other.test\",\"port\":80,\"via\":\"mapped\""), "%s", asks);
	cr_expect(strstr(asks, "\"name\":\"unlisted.test\""), "%s", asks);
	cr_expect(!strstr(asks, "denied.test"), "a denied name is never asked: %s", asks);
	cr_expect(!strstr(asks, "allowed.test"), "nor an allowed one: %s", asks);
	cr_expect(reached(&w, "127.0.0.3 80 http other.test /asked-proxy"), "%s", w.upstream);
	cr_expect(reached(&w, "127.0.0.3 80 http other.test /asked-mapped"), "%s", w.upstream);
	cr_expect(strstr(w.r.out, "unlisted 403\n") && strstr(w.r.out, "denied 403\n"), "%s", w.r.out);
	cr_expect(!reached(&w, "asked-denied") && !reached(&w, "never-asked"), "%s", w.upstream);
	free(asks);
	world_clear(&w);
}

Test(net_filter, a_host_that_never_answers_is_a_denial_within_ask_timeout_ms)
{
	struct world w = { 0 };
	asked_in_world(&w, "other.test=silent",
		       "curl -sS -m 20 -o /dev/null -w 'silent %{http_code} %{time_total}\\n' http://other.test/unanswered");
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(strstr(w.r.out, "silent 403 "), "%s", w.r.out);
	cr_expect(!reached(&w, "unanswered"), "%s", w.upstream);
	char *report = dsh_test_read_file(dsh_test_fmt("%s/report.json", w.dir));
	cr_expect(strstr(report, "did not answer within askTimeoutMs"), "%s", report);
	free(report);
	world_clear(&w);
}

/*
 * Issue 38: the service killed (SIGKILL, from the host) while the command runs.  A wrapper in the
 * world starts dshbox, waits for the command's word, kills the one process of the run that lives
 * in the world's network namespace other than dshbox itself (the service: init and the command are
 * in the run's own), and says so.  What the command tries after that reaches nothing: no proxy, no
 * mapped address, no lookup; and nothing of the run is left once it ends.
 */
static const char killer[] =
	"dir=$1; shift; \"$@\" & sup=$!; i=0; "
	"while ! [ -e \"$dir/ready\" ]; do i=$((i + 1)); [ $i -lt 400 ] || break; sleep 0.05; done; "
	"me=$(readlink /proc/$$/ns/net); "
	"for p in $(pgrep -f -- \"^$1 run\"); do "
	"  [ \"$p\" != \"$sup\" ] && [ \"$(readlink /proc/$p/ns/net)\" = \"$me\" ] && kill -9 \"$p\" && echo killed-service; "
	"done; : >\"$dir/killed\"; wait $sup; echo \"dshbox-exit=$?\"";

Test(net_filter, the_service_killed_mid_run_leaves_the_command_no_way_out_and_nothing_behind)
{
	struct world w = { 0 };
	world_make(&w);
	const char *script =
		"curl -sS -m 10 http://allowed.test/before; echo; ip=$(getent hosts allowed.test | cut -d' ' -f1); "
		": >ready; while ! [ -e killed ]; do sleep 0.05; done; sleep 0.2; "
		"curl -sS -m 5 http://allowed.test/after-proxy; echo \"proxy=$?\"; "
		"curl -sS -m 5 --noproxy '*' -H 'Host: allowed.test' http://$ip/after-mapped; echo \"mapped=$?\"; "
		"getent hosts allowed.test; echo \"dns=$?\"";
	const char *argv[] = { "unshare", geteuid() == 0 ? "-n" : "-rn", "-m", "sh", DSH_TOP "/tests/lib/net_world.sh",
			       w.dir, "sh", "-c", killer, "killer", w.dir, dsh_test_dshbox(), "run", "--workspace", w.dir,
			       "--cwd", w.dir, "--warnings=stderr", "--allow-domain", "allowed.test", "--", "sh", "-c", script, NULL };
	world_run(&w, argv);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_assert(strstr(w.r.out, "killed-service\n") && !strstr(strstr(w.r.out, "killed-service\n") + 1, "killed-service"),
		  "exactly one process, the service, was killed: %s%s", w.r.out, w.r.err);
	cr_expect(reached(&w, "127.0.0.2 80 http allowed.test /before"), "%s", w.upstream);
	cr_expect(!reached(&w, "after-"), "nothing reached a server after the kill: %s", w.upstream);
	cr_expect(!strstr(w.r.out, "proxy=0\n") && !strstr(w.r.out, "mapped=0\n") && !strstr(w.r.out, "dns=0\n"), "%s%s",
		  w.r.out, w.r.err);
	cr_expect(strstr(w.r.out, "dshbox-exit=0\n"), "the run ends as its command did: %s%s", w.r.out, w.r.err);
	cr_expect(strstr(w.r.err, "network service ended during the run (killed by signal 9)"), "and says why: %s", w.r.err);
	/* Nothing of the run outlives it: no process names the world's directory. */
	char *ps = dsh_test_fmt("for p in /proc/[0-9]*; do tr '\\0' ' ' <$p/cmdline 2>/dev/null | grep -F -q -- '%s' && "
				"[ ${p#/proc/} != $$ ] && echo left ${p#/proc/}; done; true", w.dir);
	char *pargv[] = { "/bin/sh", "-c", ps, NULL };
	struct dsh_proc left;
	cr_assert_eq(dsh_proc_run(pargv, NULL, NULL, &left), 0);
	cr_expect_str_eq(left.out, "", "%s", left.out);
	dsh_proc_clear(&left);
	free(ps);
	world_clear(&w);
}

Test(net_filter, danger_full_access_with_a_filtered_network_still_filters)
{
	struct world w = { 0 };
	in_world(&w,
		 "curl -sS -m 10 http://allowed.test/danger-allowed; "
		 "curl -sS -m 10 -o /dev/null -w 'denied %{http_code}\\n' http://denied.test/danger-denied; "
		 "curl -sS -m 5 --noproxy '*' http://127.0.0.4/danger-direct; echo rc=$?",
		 "--mode", "danger-full-access", "--allow-domain", "allowed.test", NULL);
	cr_assert_eq(w.r.exit_code, 0, "%s%s", w.r.out, w.r.err);
	cr_expect(reached(&w, "127.0.0.2 80 http allowed.test /danger-allowed"), "%s", w.upstream);
	cr_expect(!reached(&w, "danger-denied") && !reached(&w, "danger-direct"), "%s", w.upstream);
	cr_expect(strstr(w.r.out, "denied 403\n"), "%s", w.r.out);
	world_clear(&w);
}
