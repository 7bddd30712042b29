/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runtime broker on its own (SPEC 3.12): a child installs the notify filter and makes calls,
 * this process serves them with a real policy, and the host tree is the oracle.  No namespace, no
 * mount: what holds here holds by the broker alone.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/broker.h"
#include "common/cleanup.h"
#include "common/fdpass.h"
#include "common/strv.h"
#include "seccomp/seccomp.h"
#include "tests/lib/harness.h"

static char *ws;

static char *P(const char *fmt, const char *a)
{
	char *s = NULL;
	cr_assert(asprintf(&s, fmt, a) > 0);
	return s;
}

/*
 * Whether this kernel sends a descriptor with the reply (SECCOMP_ADDFD_FLAG_SEND, Linux 5.14), the
 * broker's way of handing over a file it opened: -1 until a listener was asked.  A kernel without
 * the flag refuses it (EINVAL) before it looks the notification up (here none: ENOENT).
 */
static int addfd_send = -1;

/*
 * Run fn in a child under the broker's filter, served here until it exits; its exit status is
 * fn's (0: every expectation inside held; else the number of the first that did not).  With
 * stop_after >= 0 the broker stops serving (and closes the listener) after that many calls.
 */
static int brokered(struct dsh_broker *b, int (*fn)(void), long stop_after)
{
	int sv[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		struct dsh_seccomp_prog prog = { 0 };
		int listener = -1;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || chdir(ws) < 0 || dsh_seccomp_compile_notify(&prog, false, NULL) < 0 ||
		    dsh_seccomp_load_listener(&prog, &listener, NULL) < 0)
			_exit(91);
		if (dsh_fd_send(sv[1], listener) < 0)
			_exit(90);
		close(listener);
		close(sv[1]);
		_exit(fn());
	}
	close(sv[1]);
	int listener = dsh_fd_recv(sv[0], 0);
	close(sv[0]);
	cr_assert_geq(listener, 0, "no listener from the child");
	if (addfd_send < 0) {
		struct seccomp_notif_addfd probe = { .id = 0, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = 0 };
		addfd_send = !(ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &probe) < 0 && errno == EINVAL);
	}
	int status = 0;
	for (;;) {
		if (listener >= 0 && stop_after >= 0 && (long)b->served >= stop_after) {
			close(listener); /* the broker dies: every notified call must now fail */
			listener = -1;
		}
		struct pollfd pf = { listener, POLLIN, 0 };
		int n = listener >= 0 ? poll(&pf, 1, 50) : (usleep(10000), 0);
		if (n > 0 && (pf.revents & POLLIN)) {
			_cleanup_error_ struct dsh_error *err = NULL;
			cr_assert_geq(dsh_broker_serve_one(b, listener, &err), 0, "%s", err ? err->msg : "");
		}
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
	}
	if (listener >= 0)
		close(listener);
	cr_assert(WIFEXITED(status), "child died of signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

static void setup(void)
{
	ws = dsh_test_mkdtemp();
}

static void teardown(void)
{
	dsh_test_rmtree(ws);
	free(ws);
}

TestSuite(broker, .init = setup, .fini = teardown, .timeout = 120);

#define EXPECT(n, cond)                \
	do {                           \
		if (!(cond))           \
			return (n);    \
	} while (0)

static int creates(void)
{
	umask(022);
	int fd = open("new.pem", O_CREAT | O_WRONLY, 0666);
	EXPECT(1, fd < 0 && errno == EACCES);
	fd = open("sub/deeper.pem", O_CREAT | O_WRONLY | O_EXCL, 0600);
	EXPECT(2, fd < 0 && errno == EACCES);
	fd = open("ok.txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
	EXPECT(3, fd >= 0);
	EXPECT(4, write(fd, "hi", 2) == 2);
	EXPECT(5, (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
	close(fd);
	EXPECT(6, mkdir("d.pem", 0777) < 0 && errno == EACCES);
	EXPECT(7, mkdir("dir", 0777) == 0);
	EXPECT(8, symlink("ok.txt", "link.pem") < 0 && errno == EACCES);
	EXPECT(9, mknod("fifo.pem", S_IFIFO | 0600, 0) < 0 && errno == EACCES);
	EXPECT(10, creat(".envrc", 0644) < 0 && errno == EACCES);
	/* An existing file opened with O_CREAT|O_TRUNC is still an ordinary open. */
	fd = open("ok.txt", O_CREAT | O_RDONLY, 0666);
	EXPECT(11, fd >= 0);
	close(fd);
	/* O_EXCL on an existing name. */
	fd = open("ok.txt", O_CREAT | O_EXCL | O_WRONLY, 0666);
	EXPECT(12, fd < 0 && errno == EEXIST);
	/* An unnamed file cannot be given a protected name. */
	fd = open(".", O_TMPFILE | O_RDWR, 0600);
	EXPECT(13, fd >= 0);
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	EXPECT(14, linkat(AT_FDCWD, p, AT_FDCWD, "tmp.pem", AT_SYMLINK_FOLLOW) < 0 && errno == EACCES);
	EXPECT(15, linkat(AT_FDCWD, p, AT_FDCWD, "tmp.txt", AT_SYMLINK_FOLLOW) == 0);
	close(fd);
	return 0;
}

Test(broker, refuses_names_a_rule_covers_and_makes_the_others)
{
	_cleanup_free_ char *sub = P("%s/sub", ws);
	cr_assert_eq(mkdir(sub, 0755), 0);
	struct dsh_policy *p = dsh_test_policy(ws, (const char *const[]){ "-- **/*.pem", "r- .envrc", NULL });
	struct dsh_broker b = { .policy = p };
	int rc = brokered(&b, creates, -1);
	if (rc != 0 && !addfd_send)
		DSH_SKIP("this kernel cannot send a descriptor with the reply (SECCOMP_ADDFD_FLAG_SEND, Linux "
			 "5.14): the broker cannot hand over a file it created (expectation %d)", rc);
	cr_expect_eq(rc, 0, "expectation %d in the child failed", rc);
	/* Host oracle: nothing protected was made, the rest was, with the caller's umask. */
	static const char *const absent[] = { "new.pem", "sub/deeper.pem", "d.pem", "link.pem", "fifo.pem", ".envrc", "tmp.pem" };
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		_cleanup_free_ char *f = NULL;
		cr_assert(asprintf(&f, "%s/%s", ws, absent[i]) > 0);
		cr_expect_eq(access(f, F_OK), -1, "%s exists on the host", f);
	}
	_cleanup_free_ char *ok = P("%s/ok.txt", ws), *tmp = P("%s/tmp.txt", ws), *dir = P("%s/dir", ws);
	struct stat st;
	cr_assert_eq(stat(ok, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0644);
	_cleanup_free_ char *content = dsh_test_read_file(ok);
	cr_expect_str_eq(content, "hi");
	cr_expect_eq(stat(tmp, &st), 0);
	cr_expect_eq(stat(dir, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0755);
	cr_expect_gt(b.refused, 0);
	dsh_policy_free(p);
}

static mode_t mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_mode & 0777 : (mode_t)-1;
}

static void *umask_027(void *arg)
{
	(void)arg;
	umask(027);
	return NULL;
}

/*
 * The broker keeps each process's umask (read once, then followed through its umask() calls): a
 * change is seen by the next create, a thread's change by its whole group, a child starts with its
 * parent's, and one child's change is its own.
 */
static int umasks(void)
{
	umask(077);
	int fd = open("u1", O_CREAT | O_WRONLY, 0666);
	EXPECT(1, fd >= 0 && mode_of("u1") == 0600);
	close(fd);
	EXPECT(2, umask(022) == 077); /* the kernel still answers umask() itself */
	fd = open("u2", O_CREAT | O_WRONLY, 0666);
	EXPECT(3, fd >= 0 && mode_of("u2") == 0644);
	close(fd);
	EXPECT(4, mkdir("ud", 0777) == 0 && mode_of("ud") == 0755);
	pthread_t t;
	EXPECT(5, pthread_create(&t, NULL, umask_027, NULL) == 0 && pthread_join(t, NULL) == 0);
	fd = open("u3", O_CREAT | O_WRONLY, 0666);
	EXPECT(6, fd >= 0 && mode_of("u3") == 0640);
	close(fd);
	pid_t pid = fork();
	if (pid == 0) {
		int cfd = open("c1", O_CREAT | O_WRONLY, 0666);
		umask(0);
		int cfd2 = open("c2", O_CREAT | O_WRONLY, 0666);
		_exit(cfd >= 0 && cfd2 >= 0 && mode_of("c1") == 0640 && mode_of("c2") == 0666 ? 0 : 1);
	}
	int st;
	EXPECT(7, pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	fd = open("u4", O_CREAT | O_WRONLY, 0666);
	EXPECT(8, fd >= 0 && mode_of("u4") == 0640);
	close(fd);
	return 0;
}

Test(broker, follows_each_processes_umask)
{
	struct dsh_policy *p = dsh_test_policy(ws, (const char *const[]){ "-- **/*.pem", NULL });
	struct dsh_broker b = { .policy = p };
	int rc = brokered(&b, umasks, -1);
	if (rc != 0 && !addfd_send)
		DSH_SKIP("this kernel cannot send a descriptor with the reply (SECCOMP_ADDFD_FLAG_SEND, Linux "
			 "5.14): the broker cannot hand over a file it created (expectation %d)", rc);
	cr_expect_eq(rc, 0, "expectation %d in the child failed", rc);
	/* Host oracle: the modes the kernel would have given. */
	static const struct { const char *name; mode_t mode; } want[] = {
		{ "u1", 0600 }, { "u2", 0644 }, { "ud", 0755 }, { "u3", 0640 }, { "c1", 0640 }, { "c2", 0666 }, { "u4", 0640 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		_cleanup_free_ char *f = NULL;
		cr_assert(asprintf(&f, "%s/%s", ws, want[i].name) > 0);
		cr_expect_eq(mode_of(f), want[i].mode, "%s: mode %04o", want[i].name, (unsigned)mode_of(f));
	}
	dsh_broker_clear(&b);
	dsh_policy_free(p);
}

static int moves(void)
{
	EXPECT(1, rename("sub", "moved") < 0 && errno == EACCES);              /* ancestor of a -- target */
	EXPECT(2, rename("sub/secret.txt", "s.txt") < 0 && errno == EACCES);   /* the target */
	EXPECT(3, unlink("sub/secret.txt") < 0 && errno == EACCES);
	EXPECT(4, rmdir("git/hooks") < 0 && errno == EACCES);
	EXPECT(5, rename("git", "git.old") < 0 && errno == EACCES);             /* ancestor of r- */
	EXPECT(6, chmod("sub", 0) < 0 && errno == EACCES);
	EXPECT(7, chmod("git/hooks/pre-commit", 0777) < 0 && errno == EACCES);
	EXPECT(8, link("git/hooks/pre-commit", "copy") < 0 && errno == EACCES);
	EXPECT(9, unlink("build") < 0 && errno == EACCES);                     /* the symlink a rule names */
	EXPECT(10, rename("free", "free2") == 0);
	EXPECT(11, chmod("free2", 0700) == 0);
	EXPECT(12, unlink("free2/f") == 0 && rmdir("free2") == 0);
	EXPECT(13, rename("other", "git/hooks/post-commit") < 0 && errno == EACCES); /* into r- */
	EXPECT(14, truncate("git/hooks/pre-commit", 0) < 0 && errno == EACCES);
	EXPECT(15, utimes("sub/secret.txt", NULL) < 0 && errno == EACCES);
	return 0;
}

Test(broker, guards_targets_their_ancestors_and_spelled_symlinks)
{
	_cleanup_free_ char *sub = P("%s/sub", ws), *secret = P("%s/sub/secret.txt", ws);
	_cleanup_free_ char *hooks = P("%s/git/hooks", ws), *git = P("%s/git", ws), *hook = P("%s/git/hooks/pre-commit", ws);
	_cleanup_free_ char *real = P("%s/real-build", ws), *build = P("%s/build", ws);
	_cleanup_free_ char *fr = P("%s/free", ws), *frf = P("%s/free/f", ws), *other = P("%s/other", ws);
	cr_assert_eq(mkdir(sub, 0755), 0);
	dsh_test_write_file(secret, "secret\n");
	cr_assert_eq(mkdir(git, 0755), 0);
	cr_assert_eq(mkdir(hooks, 0755), 0);
	dsh_test_write_file(hook, "#!/bin/sh\n");
	cr_assert_eq(mkdir(real, 0755), 0);
	cr_assert_eq(symlink("real-build", build), 0);
	cr_assert_eq(mkdir(fr, 0755), 0);
	dsh_test_write_file(frf, "x");
	dsh_test_write_file(other, "evil");
	struct dsh_policy *p =
		dsh_test_policy(ws, (const char *const[]){ "-- sub/secret.txt", "r- git/hooks", "r- build", NULL });
	struct dsh_broker b = { .policy = p };
	cr_expect_eq(brokered(&b, moves, -1), 0);
	struct stat st;
	cr_expect_eq(stat(secret, &st), 0, "the secret stays where the rule names it");
	cr_expect_eq(st.st_mode & 0777, 0644);
	cr_expect_eq(lstat(build, &st), 0);
	cr_expect(S_ISLNK(st.st_mode), "the spelled symlink is still there");
	_cleanup_free_ char *content = dsh_test_read_file(hook);
	cr_expect_str_eq(content, "#!/bin/sh\n");
	dsh_policy_free(p);
}

/* A second thread rewrites the path while the first creates with it: nothing protected appears. */
static char race_path[64] = "ok-0000.txt";
static volatile int race_stop;

static void *racer(void *arg)
{
	(void)arg;
	/* Each spelling is held for a while, so the broker reads both many times. */
	while (!race_stop) {
		/* The barriers keep the compiler from dropping the first store as dead. */
		memcpy(race_path, "bad-0000.pem", 13);
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 20000; i++)
			;
		memcpy(race_path, "ok-0000.txt", 12);
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 20000; i++)
			;
	}
	return NULL;
}

static int races(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, racer, NULL) != 0)
		return 1;
	int refused = 0;
	for (int i = 0; i < 10000; i++) {
		int fd = open(race_path, O_CREAT | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
		else
			refused += errno == EACCES;
	}
	race_stop = 1;
	if (refused == 0)
		return 2; /* the protected spelling was never seen: the race did not happen */
	pthread_join(t, NULL);
	return 0;
}

Test(broker, a_racer_rewriting_the_path_creates_nothing_protected)
{
	struct dsh_policy *p = dsh_test_policy(ws, (const char *const[]){ "-- *.pem", NULL });
	struct dsh_broker b = { .policy = p };
	cr_expect_eq(brokered(&b, races, -1), 0);
	_cleanup_free_ char *bad = P("%s/bad-0000.pem", ws), *ok = P("%s/ok-0000.txt", ws);
	cr_expect_eq(access(bad, F_OK), -1, "a protected name was created by a racing thread");
	cr_expect_eq(access(ok, F_OK), 0);
	cr_expect_geq(b.served, 10000);
	cr_expect_gt(b.refused, 100, "the broker must have seen the protected spelling often");
	fprintf(stderr, "broker race: %lu calls served, %lu refused, nothing protected created\n", b.served, b.refused);
	dsh_policy_free(p);
}

static int after_death(void)
{
	EXPECT(1, mkdir("first", 0755) == 0);
	/* The broker stops after one call: every notified call fails from then on. */
	for (int i = 0; i < 50; i++)
		usleep(20000);
	EXPECT(2, mkdir("second", 0755) < 0);
	EXPECT(3, open("third", O_CREAT | O_WRONLY, 0644) < 0);
	return 0;
}

Test(broker, without_its_broker_every_notified_call_fails)
{
	struct dsh_policy *p = dsh_test_policy(ws, NULL);
	struct dsh_broker b = { .policy = p };
	cr_expect_eq(brokered(&b, after_death, 1), 0);
	_cleanup_free_ char *second = P("%s/second", ws), *third = P("%s/third", ws);
	cr_expect_eq(access(second, F_OK), -1);
	cr_expect_eq(access(third, F_OK), -1);
	dsh_policy_free(p);
}
