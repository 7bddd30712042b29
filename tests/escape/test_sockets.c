/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host sockets (SPEC 3.11), run from inside the sandbox in either backend (DSHBOX_ESCAPE_BACKEND).
 * The host-side oracle is the listening server itself: it counts the connections it accepted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static const char *backend(void)
{
	const char *b = getenv("DSHBOX_ESCAPE_BACKEND");
	return b && *b ? b : "auto";
}

static bool landlock_backend(void)
{
	return strcmp(backend(), "landlock") == 0;
}

/* A daemon's listening socket (anyone may connect), non-blocking so the oracle can count. */
static int server(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	cr_assert_geq(fd, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	cr_assert_lt(strlen(path), sizeof(sa.sun_path));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind %s: %s", path, strerror(errno));
	chmod(path, 0666);
	cr_assert_eq(listen(fd, 8), 0);
	return fd;
}

/* The oracle: connections that reached the daemon. */
static int accepted(int fd)
{
	int n = 0, c;
	while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		close(c);
		n++;
	}
	return n;
}

/* dshbox run --backend B --workspace WS --cwd WS [extra...] -- argv... with env */
static void run(struct dsh_proc *r, char **env, const char *ws, const char *const *extra, const char *const *cmd)
{
	const char *argv[64];
	size_t n = 0;
	argv[n++] = dsh_test_dshbox();
	argv[n++] = "run";
	argv[n++] = "--backend";
	argv[n++] = backend();
	argv[n++] = "--workspace";
	argv[n++] = ws;
	argv[n++] = "--cwd";
	argv[n++] = ws;
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	argv[n++] = "--";
	for (size_t i = 0; cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, r), 0);
}

static char **env_with(const char *extra1, const char *extra2)
{
	static char *env[6];
	size_t n = 0;
	env[n++] = (char *)"PATH=/usr/local/bin:/usr/bin:/bin";
	env[n++] = (char *)"LC_ALL=C";
	if (extra1)
		env[n++] = (char *)extra1;
	if (extra2)
		env[n++] = (char *)extra2;
	env[n] = NULL;
	return env;
}

/* From inside: connect to sock; expect the esc_attack line want, and no connection on the host. */
static void expect_unreached(const char *what, char **env, const char *ws, const char *const *extra, const char *sock,
			     int srv, const char *want)
{
	_cleanup_free_ char *att = dsh_test_helper("esc_attack");
	const char *cmd[] = { att, "unix-connect", sock, NULL };
	struct dsh_proc r;
	run(&r, env, ws, extra, cmd);
	cr_expect(strstr(r.out, want) != NULL, "%s: expected %s inside, got: %s%s", what, want, r.out, r.err);
	cr_expect_eq(accepted(srv), 0, "%s: a connection reached the host's socket %s", what, sock);
	dsh_proc_clear(&r);
}

Test(sockets, user_manager_socket_under_xdg_runtime_dir)
{
	char *top = dsh_test_mkdtemp();
	char *ws = dsh_test_fmt("%s/ws", top), *xdg = dsh_test_fmt("%s/xdg", top), *dir = dsh_test_fmt("%s/xdg/systemd", top);
	cr_assert(mkdir(ws, 0755) == 0 && mkdir(xdg, 0700) == 0 && mkdir(dir, 0755) == 0);
	char *sock = dsh_test_fmt("%s/private", dir), *envx = dsh_test_fmt("XDG_RUNTIME_DIR=%s", xdg);
	int srv = server(sock);
	expect_unreached("systemd --user private socket", env_with(envx, NULL), ws, NULL, sock, srv, "connect=EACCES");
	close(srv);
	dsh_test_rmtree(top);
	free(top), free(ws), free(xdg), free(dir), free(sock), free(envx);
}

/* With no XDG_RUNTIME_DIR in dshbox's environment, /run/user/UID (from the uid) is still closed. */
Test(sockets, run_user_bus_without_xdg_runtime_dir)
{
	char *run_user = dsh_test_fmt("/run/user/%u", (unsigned)getuid());
	bool made = false;
	char *top = dsh_test_mkdtemp();
	char *ws = dsh_test_fmt("%s/ws", top);
	cr_assert_eq(mkdir(ws, 0755), 0);
	if (access(run_user, F_OK) != 0) {
		if (mkdir(run_user, 0700) < 0) {
			/* No login session here and no right to make one (an unprivileged CI user): there is
			   no host socket to reach, and the sandbox must not invent the directory either. */
			cr_log_info("no %s on this host (%s): only its absence inside is checked", run_user, strerror(errno));
			_cleanup_free_ char *att = dsh_test_helper("esc_attack");
			_cleanup_free_ char *bus = dsh_test_fmt("%s/bus", run_user);
			const char *cmd[] = { att, "unix-connect", bus, NULL };
			struct dsh_proc r;
			run(&r, env_with(NULL, NULL), ws, NULL, cmd);
			cr_expect(strstr(r.out, "connect=ENOENT") != NULL, "%s inside: %s%s", bus, r.out, r.err);
			dsh_proc_clear(&r);
			dsh_test_rmtree(top);
			free(top), free(ws), free(run_user);
			return;
		}
		made = true;
	}
	/* A name of the test's own: a real session's bus is never touched. */
	char *sock = dsh_test_fmt("%s/dshbox-escape-%d.bus", run_user, getpid());
	int srv = server(sock);
	/* linux-ns: the directory is an empty tmpfs inside; landlock: visible, refused by the broker. */
	expect_unreached("/run/user/UID/bus", env_with(NULL, NULL), ws, NULL, sock, srv,
			 landlock_backend() ? "connect=EACCES" : "connect=ENOENT");
	close(srv);
	unlink(sock);
	if (made)
		rmdir(run_user);
	dsh_test_rmtree(top);
	free(top), free(ws), free(sock), free(run_user);
}

/* The workspace is /tmp itself: the user's tmux socket there is in a writable root, yet closed. */
Test(sockets, tmux_socket_with_the_workspace_tmp)
{
	char *dir = dsh_test_fmt("/tmp/tmux-dshbox-escape-%d", getpid());
	cr_assert_eq(mkdir(dir, 0700), 0);
	char *sock = dsh_test_fmt("%s/default", dir);
	int srv = server(sock);
	expect_unreached("tmux socket, workspace /tmp", env_with(NULL, NULL), "/tmp", NULL, sock, srv, "connect=EACCES");
	close(srv);
	unlink(sock);
	rmdir(dir);
	free(dir), free(sock);
}

/* An rw root holding a daemon's socket: writable does not mean connectable. */
Test(sockets, socket_in_an_rw_root)
{
	char *top = dsh_test_mkdtemp();
	char *ws = dsh_test_fmt("%s/ws", top), *root = dsh_test_fmt("%s/rw", top);
	cr_assert(mkdir(ws, 0755) == 0 && mkdir(root, 0755) == 0);
	char *sock = dsh_test_fmt("%s/daemon.sock", root), *rule = dsh_test_fmt("rw %s", root);
	int srv = server(sock);
	const char *extra[] = { "--access", rule, NULL };
	expect_unreached("socket in an rw root", env_with(NULL, NULL), ws, extra, sock, srv, "connect=EACCES");
	close(srv);
	dsh_test_rmtree(top);
	free(top), free(ws), free(root), free(sock), free(rule);
}

/* allowUnixSockets (with {{ env.NAME }}) opens exactly the socket it names. */
Test(sockets, allow_unix_sockets_is_reachable)
{
	char *top = dsh_test_mkdtemp();
	char *ws = dsh_test_fmt("%s/ws", top), *agent = dsh_test_fmt("%s/agent", top);
	cr_assert(mkdir(ws, 0755) == 0 && mkdir(agent, 0755) == 0);
	char *sock = dsh_test_fmt("%s/agent.sock", agent), *other = dsh_test_fmt("%s/other.sock", agent);
	char *cfg = dsh_test_fmt("%s/cfg.yml", top), *envs = dsh_test_fmt("TEST_AGENT_SOCK=%s", sock);
	dsh_test_write_file(cfg, "allowUnixSockets:\n  - \"{{ env.TEST_AGENT_SOCK }}\"\n");
	int srv = server(sock), srv2 = server(other);
	const char *extra[] = { "--config", cfg, NULL };
	_cleanup_free_ char *att = dsh_test_helper("esc_attack");
	const char *cmd[] = { att, "unix-connect", sock, NULL };
	struct dsh_proc r;
	run(&r, env_with(envs, NULL), ws, extra, cmd);
	cr_expect(strstr(r.out, "connect=EACCES") == NULL && strstr(r.out, "connect=") != NULL,
		  "the allowed socket was refused: %s%s", r.out, r.err);
	cr_expect_eq(accepted(srv), 1, "the allowed socket saw no connection: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	expect_unreached("a socket next to the allowed one", env_with(envs, NULL), ws, extra, other, srv2,
			 "connect=EACCES");
	close(srv), close(srv2);
	dsh_test_rmtree(top);
	free(top), free(ws), free(agent), free(sock), free(other), free(cfg), free(envs);
}

/* A socket the command binds itself: connect, sendto and sendmsg with SCM_RIGHTS all work. */
Test(sockets, a_socket_the_command_binds_is_connectable)
{
	if (access("/usr/bin/python3", X_OK) != 0)
		DSH_SKIP("no /usr/bin/python3 to run the inside part");
	char *top = dsh_test_mkdtemp();
	char *ws = dsh_test_fmt("%s/ws", top);
	cr_assert_eq(mkdir(ws, 0755), 0);
	const char *script =
		"import socket, os, array\n"
		"s = socket.socket(socket.AF_UNIX); s.bind('own.sock'); s.listen(1)\n"
		"c = socket.socket(socket.AF_UNIX); c.connect(os.path.abspath('own.sock'))\n"
		"a, _ = s.accept(); c.sendall(b'x' * 150000)\n"
		"got = 0\n"
		"while got < 150000: got += len(a.recv(65536))\n"
		"d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind('own.dgram')\n"
		"e = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
		"e.sendto(b'hello', 'own.dgram')\n"
		"r = os.open('/dev/null', os.O_RDONLY)\n"
		"e.sendmsg([b'fd'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [r]))], 0, 'own.dgram')\n"
		"m1 = d.recv(100); m2, anc, _, _ = d.recvmsg(100, socket.CMSG_SPACE(4))\n"
		"print('ok' if got == 150000 and m1 == b'hello' and m2 == b'fd' and len(anc) == 1 else 'bad')\n";
	const char *cmd[] = { "/usr/bin/python3", "-c", script, NULL };
	struct dsh_proc r;
	run(&r, env_with(NULL, NULL), ws, NULL, cmd);
	cr_expect_str_eq(r.out, "ok\n", "own socket: %s%s", r.out, r.err);
	cr_expect_eq(r.exit_code, 0);
	dsh_proc_clear(&r);
	dsh_test_rmtree(top);
	free(top), free(ws);
}

/*
 * Without Landlock scoping (faked by esc_shim: no Landlock at all) and the network on, the host's
 * abstract sockets share the command's network namespace under linux-ns.  The runtime broker
 * keeps them out of reach (the host's abstract server, the oracle, sees no connection) and the run
 * is full; with the broker off the report must say partial, with the reason, and
 * --warnings=stderr must print it.  With the network off the new network namespace has none of
 * the host's.
 */
Test(sockets, abstract_sockets_without_scoping_are_reported)
{
	_cleanup_free_ char *shim = dsh_test_helper("esc_shim");
	_cleanup_free_ char *att = dsh_test_helper("esc_attack");
	char *top = dsh_test_mkdtemp();
	char *ws = dsh_test_fmt("%s/ws", top);
	cr_assert_eq(mkdir(ws, 0755), 0);
	char name[64];
	snprintf(name, sizeof(name), "dshbox-escape-sock-%d", getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path + 1, name, strlen(name));
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))), 0);
	cr_assert_eq(listen(fd, 8), 0);
	struct dsh_proc r;
	const char *brokered[] = { shim, "landlock", "--", dsh_test_dshbox(), "run", "--backend", "linux-ns", "--workspace",
				   ws, "--cwd", ws, "--network", "on", "--warnings=stderr", "--", att, "abstract", name, NULL };
	cr_assert_eq(dsh_proc_run((char *const *)brokered, NULL, NULL, &r), 0);
	cr_expect(strstr(r.out, "connect_abstract=EACCES") != NULL, "network on, broker: %s%s", r.out, r.err);
	cr_expect(strstr(r.err, "abstract unix sockets") == NULL, "a warning though the broker holds: %s", r.err);
	cr_expect_eq(accepted(fd), 0, "the host's abstract socket saw a connection through the broker");
	dsh_proc_clear(&r);

	char *cfg = dsh_test_fmt("%s/no-broker.yml", top);
	dsh_test_write_file(cfg, "runtimeBroker: off\nallowDegraded: true\n");
	const char *on[] = { shim, "landlock", "--", dsh_test_dshbox(), "run", "--backend", "linux-ns", "--workspace", ws,
			     "--cwd", ws, "--config", cfg, "--network", "on", "--warnings=stderr", "--report", "-", "--",
			     "true", NULL };
	cr_assert_eq(dsh_proc_run((char *const *)on, NULL, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"enforcement\": \"partial\"") || strstr(r.out, "\"enforcement\":\"partial\""),
		  "the report does not say partial: %.300s", r.out);
	cr_expect(strstr(r.out, "abstract unix sockets") != NULL, "no reason in the report");
	cr_expect(strstr(r.err, "dshbox: warning: abstract unix sockets") != NULL, "no warning printed: %s", r.err);
	dsh_proc_clear(&r);

	/* network off: the host's abstract socket is out of reach even without scoping (refused by the
	   broker, and absent from the new network namespace) */
	const char *off[] = { shim, "landlock", "--", dsh_test_dshbox(), "run", "--backend", "linux-ns", "--workspace", ws,
			      "--cwd", ws, "--network", "off", "--warnings=stderr", "--", att, "abstract", name, NULL };
	cr_assert_eq(dsh_proc_run((char *const *)off, NULL, NULL, &r), 0);
	cr_expect(strstr(r.out, "connect_abstract=EACCES") != NULL || strstr(r.out, "connect_abstract=ECONNREFUSED") != NULL,
		  "network off: %s%s", r.out, r.err);
	cr_expect(strstr(r.err, "abstract unix sockets") == NULL, "a warning with the network off: %s", r.err);
	cr_expect_eq(accepted(fd), 0, "the host's abstract socket saw a connection with the network off");
	dsh_proc_clear(&r);
	close(fd);
	free(cfg);
	dsh_test_rmtree(top);
	free(top), free(ws);
}

/*
 * An allowed socket the sandbox's tree hides (the ssh agent under the host's /tmp, a keyring under
 * /run/user/UID): the broker reaches it through the directory it held from the host.
 */
Test(sockets, allowed_sockets_hidden_by_the_tree_stay_reachable)
{
	char *top = dsh_test_mkdtemp();
	char *ws = dsh_test_fmt("%s/ws", top);
	cr_assert_eq(mkdir(ws, 0755), 0);
	char *dir = dsh_test_fmt("/tmp/ssh-dshbox-escape-%d", getpid());
	cr_assert_eq(mkdir(dir, 0700), 0);
	char *sock = dsh_test_fmt("%s/agent.1", dir), *envs = dsh_test_fmt("SSH_AUTH_SOCK=%s", sock), *cfg = dsh_test_fmt("%s/cfg.yml", top);
	char *run_user = dsh_test_fmt("/run/user/%u", (unsigned)getuid());
	/* Without /run/user/UID the keyring half has nowhere to live (it is made only by the test
	   above, which runs in parallel): a second agent socket under the host's /tmp stands in. */
	char *keyring = access(run_user, W_OK) == 0 ? dsh_test_fmt("%s/dshbox-escape-%d.ssh", run_user, getpid())
						    : dsh_test_fmt("%s/keyring.ssh", dir);
	char *yaml = dsh_test_fmt("allowUnixSockets:\n  - \"{{ env.SSH_AUTH_SOCK }}\"\n  - %s\n", keyring);
	dsh_test_write_file(cfg, yaml);
	int srv = server(sock), srv2 = server(keyring);
	const char *extra[] = { "--config", cfg, NULL };
	_cleanup_free_ char *att = dsh_test_helper("esc_attack");
	const char *paths[] = { sock, keyring };
	int srvs[] = { srv, srv2 };
	for (size_t i = 0; i < 2; i++) {
		const char *cmd[] = { att, "unix-connect", paths[i], NULL };
		struct dsh_proc r;
		run(&r, env_with(envs, NULL), ws, extra, cmd);
		cr_expect(strstr(r.out, "connect=") && !strstr(r.out, "connect=E"), "%s refused: %s%s", paths[i], r.out, r.err);
		cr_expect_eq(accepted(srvs[i]), 1, "%s saw no connection", paths[i]);
		dsh_proc_clear(&r);
	}
	close(srv), close(srv2);
	unlink(sock), unlink(keyring), rmdir(dir);
	dsh_test_rmtree(top);
	free(top), free(ws), free(dir), free(sock), free(envs), free(cfg), free(run_user), free(keyring), free(yaml);
}
