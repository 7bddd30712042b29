/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `-- DIR` outside the writable roots under the landlock backend (issue 22, SPEC 10): the run
 * starts, and from inside, the file in DIR cannot be read — by name, through a symlink made in the
 * workspace, through a symlink to DIR itself — and a unix socket in DIR cannot be connected (the
 * runtime broker answers connect()).  The host-side oracles: the listening socket counts what it
 * accepted, and the key is never printed and never changes.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

#define KEY "OPENSSH-PRIVATE-KEY-7d1e"

static char *top, *ws, *dir, *key, *sock;
static int srv = -1;

static char *fmt(const char *a, const char *b)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s%s", a, b) > 0);
	return s;
}

static void setup(void)
{
	top = dsh_test_mkdtemp();
	ws = fmt(top, "/ws");
	dir = fmt(top, "/ssh");
	key = fmt(top, "/ssh/id_ed25519");
	sock = fmt(top, "/ssh/agent.sock");
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(mkdir(dir, 0755), 0);
	dsh_test_write_file(key, KEY "\n");
	chmod(key, 0644); /* readable by the unprivileged user too: only the sandbox may refuse it */
	srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	cr_assert_geq(srv, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	cr_assert_lt(strlen(sock), sizeof(sa.sun_path));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	cr_assert_eq(bind(srv, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind %s: %s", sock, strerror(errno));
	chmod(sock, 0666);
	cr_assert_eq(listen(srv, 8), 0);
}

static void teardown(void)
{
	_cleanup_free_ char *k = dsh_test_read_file(key);
	cr_expect(k && strcmp(k, KEY "\n") == 0, "the key changed on the host");
	if (srv >= 0)
		close(srv);
	dsh_test_rmtree(top);
	free(top), free(ws), free(dir), free(key), free(sock);
}

TestSuite(landlock_deny_dir, .init = setup, .fini = teardown, .timeout = 60);

/* The oracle: connections that reached the host's socket. */
static int accepted(void)
{
	int n = 0, c;
	while ((c = accept4(srv, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		close(c);
		n++;
	}
	return n;
}

static void run(struct dsh_proc *r, const char *const *cmd)
{
	_cleanup_free_ char *rule = fmt("-- ", dir);
	const char *argv[32];
	size_t n = 0;
	const char *pre[] = { dsh_test_dshbox(), "run", "--backend", "landlock", "--workspace", ws, "--cwd", ws,
			      "--access", rule, "--" };
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		argv[n++] = pre[i];
	for (size_t i = 0; cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, r), 0);
	cr_log_info("exit %d\nstdout:\n%s\nstderr:\n%s", r->exit_code, r->out, r->err);
}

Test(landlock_deny_dir, the_key_stays_unread)
{
	dsh_test_require_landlock();
	_cleanup_free_ char *script = NULL;
	cr_assert(asprintf(&script,
			   "cat '%s'; echo cat=$?;"
			   "ln -s '%s' key-link; cat key-link; echo link=$?;"
			   "ln -s '%s' dir-link; cat dir-link/id_ed25519; echo dirlink=$?;"
			   "cp '%s' copy; echo cp=$?; cat copy 2>/dev/null;"
			   "cd '%s' && cat id_ed25519; echo cd=$?;"
			   "echo x >> '%s'; echo append=$?",
			   key, key, dir, key, dir, key) > 0);
	const char *cmd[] = { "sh", "-c", script, NULL };
	struct dsh_proc r;
	run(&r, cmd);
	cr_expect_eq(r.exit_code, 0, "the run did not start: %s", r.err);
	cr_expect_null(strstr(r.out, KEY), "the key was read from inside: %s", r.out);
	static const char *const steps[] = { "cat=0", "link=0", "dirlink=0", "cp=0", "cd=0", "append=0" };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		cr_expect_null(strstr(r.out, steps[i]), "%s: succeeded inside: %s", steps[i], r.out);
	cr_expect(strstr(r.out, "cat=1") && strstr(r.out, "dirlink=1"), "the run did not get that far: %s", r.out);
	cr_expect(strstr(r.err, "Permission denied"), "%s", r.err);
	dsh_proc_clear(&r);
}

Test(landlock_deny_dir, a_socket_inside_stays_unreached)
{
	dsh_test_require_landlock();
	_cleanup_free_ char *att = dsh_test_helper("esc_attack");
	_cleanup_free_ char *via = fmt(ws, "/sock-link");
	cr_assert_eq(symlink(sock, via), 0);
	const char *direct[] = { att, "unix-connect", sock, NULL };
	const char *linked[] = { att, "unix-connect", via, NULL };
	const char *const *cmds[] = { direct, linked };
	for (size_t i = 0; i < 2; i++) {
		struct dsh_proc r;
		run(&r, cmds[i]);
		cr_expect_eq(r.exit_code, 0, "the run did not start: %s", r.err);
		cr_expect(strstr(r.out, "connect=EACCES"), "%s: expected connect=EACCES inside: %s%s", cmds[i][2], r.out,
			  r.err);
		cr_expect_eq(accepted(), 0, "%s: a connection reached the host's socket in the -- directory", cmds[i][2]);
		dsh_proc_clear(&r);
	}
}
