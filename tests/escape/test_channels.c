/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host channels that no file rule sees (issue 11): the host's SysV IPC objects and POSIX message
 * queues, the caller's terminal's line discipline and the console, and syscalls newer than the
 * seccomp table.  Each attack (build/helpers/esc_channels) runs inside `dshbox run` under both
 * Linux backends by name, and the host checks afterwards that its objects are exactly as it left
 * them.  A control run of the same attack outside any sandbox shows that the oracle would see a
 * success: what stops the attack is the sandbox, not the kernel's own permission checks.
 * Runs as root and as an unprivileged user.
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <linux/tty.h>

#include "tests/lib/harness.h"

#define SHM_TEXT "HOST-SHM-CONTENT"
#define MSG_TEXT "HOST-MSG-CONTENT"
#define MQ_TEXT "HOST-MQ-CONTENT"
#define SEM_VALUE 3

TestSuite(channels, .timeout = 120);

static char **env(void)
{
	static char *e[] = { (char *)"PATH=/usr/local/bin:/usr/bin:/bin", (char *)"LC_ALL=C", NULL };
	return e;
}

/* Every line given must appear in out, whole. */
static void expect_lines(const char *what, const char *out, const char *const *want)
{
	for (; *want; want++) {
		size_t n = strlen(*want);
		bool found = false;
		for (const char *l = out; l && *l;) {
			const char *nl = strchr(l, '\n');
			size_t len = nl ? (size_t)(nl - l) : strlen(l);
			if (len == n && strncmp(l, *want, n) == 0)
				found = true;
			l = nl ? nl + 1 : NULL;
		}
		cr_expect(found, "%s: expected line '%s' in:\n%s", what, *want, out);
	}
}

/*
 * `dshbox run --backend B --workspace WS --cwd WS -- esc_channels NAME ARGS...`, or with B NULL the
 * helper alone (the control).  argv ends with NULL.
 */
static void run_channel(const char *b, const char *ws, struct dsh_proc *r, const char *const *args)
{
	const char *argv[32];
	size_t n = 0;
	if (b) {
		const char *pre[] = { dsh_test_dshbox(), "run", "--backend", b, "--workspace", ws, "--cwd", ws, "--" };
		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			argv[n++] = pre[i];
	}
	argv[n++] = dsh_test_helper("esc_channels");
	for (const char *const *a = args; *a && n < 31; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env(), NULL, r), 0);
	cr_log_info("%s %s: exit %d signal %d\nstdout:\n%s\nstderr:\n%s", b ? b : "(no sandbox)", args[0], r->exit_code,
		    r->signal, r->out, r->err);
	if (!(b && r->exit_code == 125))
		cr_expect_eq(r->exit_code, 0, "%s: exit %d: %s", b ? b : "control", r->exit_code, r->err);
}

/* A backend this machine cannot run (no user namespaces, no Landlock) exits 125 before the command:
   a skip with its reason (a failure under DSHBOX_TEST_NO_SKIP=1), once the host's objects are gone. */
static void skip_if_unrunnable(const char *b, struct dsh_proc *r)
{
	if (b && r->exit_code == 125) {
		char reason[512];
		snprintf(reason, sizeof(reason), "%s cannot run here: %s", b, r->err);
		dsh_proc_clear(r);
		DSH_SKIP("%s", reason);
	}
}

/* ---- SysV IPC: the host's segment, queue and semaphore set, 0666 and with known content ---- */

struct sysv {
	key_t shm_key, msg_key, sem_key;
	int shm, msg, sem;
	time_t shm_atime; /* after our own attach */
};

static int create_excl(key_t *key, int (*make)(key_t k))
{
	/* Keys of our own, clear of anything else on the machine: retry past a taken one. */
	for (int i = 0; i < 64; i++) {
		*key = (key_t)(0x64730000 + ((getpid() * 64 + i) & 0xffff) + (i << 16));
		int id = make(*key);
		if (id >= 0 || errno != EEXIST)
			return id;
	}
	return -1;
}
static int make_shm(key_t k) { return shmget(k, 4096, IPC_CREAT | IPC_EXCL | 0666); }
static int make_msg(key_t k) { return msgget(k, IPC_CREAT | IPC_EXCL | 0666); }
static int make_sem(key_t k) { return semget(k, 1, IPC_CREAT | IPC_EXCL | 0666); }

static void sysv_create(struct sysv *s)
{
	s->shm = create_excl(&s->shm_key, make_shm);
	cr_assert_geq(s->shm, 0, "shmget: %s", strerror(errno));
	char *p = shmat(s->shm, NULL, 0);
	cr_assert_neq(p, (void *)-1);
	strcpy(p, SHM_TEXT);
	cr_assert_eq(shmdt(p), 0);
	struct shmid_ds sds;
	cr_assert_eq(shmctl(s->shm, IPC_STAT, &sds), 0);
	s->shm_atime = sds.shm_atime;
	s->msg = create_excl(&s->msg_key, make_msg);
	cr_assert_geq(s->msg, 0, "msgget: %s", strerror(errno));
	struct {
		long mtype;
		char mtext[32];
	} m = { 1, MSG_TEXT };
	cr_assert_eq(msgsnd(s->msg, &m, strlen(MSG_TEXT), IPC_NOWAIT), 0);
	s->sem = create_excl(&s->sem_key, make_sem);
	cr_assert_geq(s->sem, 0, "semget: %s", strerror(errno));
	cr_assert_eq(semctl(s->sem, 0, SETVAL, SEM_VALUE), 0);
}

/* The oracle: everything as created, nobody attached, received or operated; then removed.
   Returns how many of the checks found a change (the control expects some). */
static int sysv_check_and_remove(struct sysv *s, bool expect_intact)
{
	/* sysv_create attached the segment itself: its attach time is the baseline */
	int changed = 0;
#define CHECK(cond, ...)                                             \
	do {                                                         \
		if (!(cond)) {                                       \
			changed++;                                   \
			if (expect_intact)                           \
				cr_expect_fail(__VA_ARGS__);         \
		}                                                    \
	} while (0)
	struct shmid_ds sds;
	int r = shmctl(s->shm, IPC_STAT, &sds);
	CHECK(r == 0, "the host's shm segment is gone: %s", strerror(errno));
	if (r == 0) {
		CHECK(sds.shm_atime == s->shm_atime && sds.shm_lpid == getpid() && sds.shm_nattch == 0,
		      "the host's shm segment was attached by pid %d", sds.shm_lpid);
		char *p = shmat(s->shm, NULL, SHM_RDONLY);
		cr_assert_neq(p, (void *)-1);
		CHECK(strcmp(p, SHM_TEXT) == 0, "the host's shm segment changed: %.32s", p);
		shmdt(p);
		shmctl(s->shm, IPC_RMID, NULL);
	}
	struct msqid_ds mds;
	r = msgctl(s->msg, IPC_STAT, &mds);
	CHECK(r == 0, "the host's message queue is gone: %s", strerror(errno));
	if (r == 0) {
		CHECK(mds.msg_qnum == 1 && mds.msg_lrpid == 0 && mds.msg_lspid == getpid(),
		      "the host's queue was read or written: %lu messages, last receiver %d, last sender %d",
		      (unsigned long)mds.msg_qnum, mds.msg_lrpid, mds.msg_lspid);
		struct {
			long mtype;
			char mtext[64];
		} m = { 0 };
		ssize_t n = msgrcv(s->msg, &m, sizeof(m.mtext) - 1, 0, IPC_NOWAIT);
		CHECK(n == (ssize_t)strlen(MSG_TEXT) && strcmp(m.mtext, MSG_TEXT) == 0, "the host's message changed: %s", m.mtext);
		msgctl(s->msg, IPC_RMID, NULL);
	}
	struct semid_ds sem_ds;
	r = semctl(s->sem, 0, IPC_STAT, &sem_ds);
	CHECK(r == 0, "the host's semaphore set is gone: %s", strerror(errno));
	if (r == 0) {
		CHECK(sem_ds.sem_otime == 0, "semop ran on the host's semaphore set");
		CHECK(semctl(s->sem, 0, GETVAL) == SEM_VALUE, "the host's semaphore value changed");
		semctl(s->sem, 0, IPC_RMID);
	}
#undef CHECK
	return changed;
}

static void sysv_attack(const char *backend, const char *const *want)
{
	char *ws = dsh_test_mkdtemp();
	struct sysv s;
	sysv_create(&s);
	char *a[6] = { dsh_test_fmt("%d", s.shm_key), dsh_test_fmt("%d", s.shm), dsh_test_fmt("%d", s.msg_key),
		       dsh_test_fmt("%d", s.msg), dsh_test_fmt("%d", s.sem_key), dsh_test_fmt("%d", s.sem) };
	const char *args[] = { "sysv", a[0], a[1], a[2], a[3], a[4], a[5], NULL };
	struct dsh_proc r;
	run_channel(backend, ws, &r, args);
	if (r.exit_code != 125) {
		expect_lines(backend, r.out, want);
		cr_expect(!strstr(r.out, "HOST-"), "%s: the host's content leaked:\n%s", backend, r.out);
	}
	sysv_check_and_remove(&s, true);
	for (int i = 0; i < 6; i++)
		free(a[i]);
	dsh_test_rmtree(ws);
	free(ws);
	skip_if_unrunnable(backend, &r);
	dsh_proc_clear(&r);
}

/* In linux-ns the objects are in another IPC namespace: not found by key, not there by id. */
Test(channels, sysv_ipc_linux_ns)
{
	static const char *const want[] = {
		"shmget_key=ENOENT", "shmat_id=EINVAL", "shmctl_stat=EINVAL", "shmctl_rmid=EINVAL",
		"msgget_key=ENOENT", "msgrcv_id=EINVAL", "msgsnd_id=EINVAL", "msgctl_rmid=EINVAL",
		"semget_key=ENOENT", "semop_id=EINVAL", "semtimedop_id=EINVAL", "semctl_setval=EINVAL",
		"semctl_rmid=EINVAL", "shm_private=ok", NULL,
	};
	sysv_attack("linux-ns", want);
}

/* The landlock backend has no IPC namespace: the filter refuses the whole family. */
Test(channels, sysv_ipc_landlock)
{
	static const char *const want[] = {
		"shmget_key=EPERM", "shmat_id=EPERM", "shmctl_stat=EPERM", "shmctl_rmid=EPERM",
		"msgget_key=EPERM", "msgrcv_id=EPERM", "msgsnd_id=EPERM", "msgctl_rmid=EPERM",
		"semget_key=EPERM", "semop_id=EPERM", "semtimedop_id=EPERM", "semctl_setval=EPERM",
		"semctl_rmid=EPERM", "shm_private=EPERM", NULL,
	};
	sysv_attack("landlock", want);
}

/* The control: the same attack with no sandbox reaches every object, and the oracle sees it. */
Test(channels, sysv_ipc_control_without_sandbox)
{
	struct sysv s;
	sysv_create(&s);
	char *a[6] = { dsh_test_fmt("%d", s.shm_key), dsh_test_fmt("%d", s.shm), dsh_test_fmt("%d", s.msg_key),
		       dsh_test_fmt("%d", s.msg), dsh_test_fmt("%d", s.sem_key), dsh_test_fmt("%d", s.sem) };
	const char *args[] = { "sysv", a[0], a[1], a[2], a[3], a[4], a[5], NULL };
	struct dsh_proc r;
	run_channel(NULL, NULL, &r, args);
	static const char *const want[] = { "shmget_key=ok", "msgget_key=ok", "semget_key=ok", "msgsnd_id=ok", NULL };
	expect_lines("control", r.out, want);
	cr_expect(strstr(r.out, "shmat_id=ok content=" SHM_TEXT), "control: shmat did not read the segment");
	/* it removed them all (IPC_RMID): every check finds a change */
	cr_expect_geq(sysv_check_and_remove(&s, false), 3, "the oracle missed the control's changes");
	dsh_proc_clear(&r);
	for (int i = 0; i < 6; i++)
		free(a[i]);
}

/* ---- POSIX message queues: named in the IPC namespace's own mqueue filesystem ---- */

static void mqueue_attack(const char *backend, const char *const *want)
{
	char *ws = dsh_test_mkdtemp();
	char *name = dsh_test_fmt("/dshbox-esc-%d", getpid());
	struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 64 };
	mode_t old = umask(0);
	mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_NONBLOCK | O_CLOEXEC, 0666, &attr);
	umask(old);
	cr_assert_neq(q, (mqd_t)-1, "mq_open: %s", strerror(errno));
	cr_assert_eq(mq_send(q, MQ_TEXT, strlen(MQ_TEXT), 0), 0);
	const char *args[] = { "mqueue", name, NULL };
	struct dsh_proc r;
	run_channel(backend, ws, &r, args);
	if (backend && r.exit_code != 125) {
		expect_lines(backend, r.out, want);
		cr_expect(!strstr(r.out, "HOST-"), "%s: the queue's message leaked:\n%s", backend, r.out);
	}
	struct mq_attr now;
	cr_assert_eq(mq_getattr(q, &now), 0);
	char buf[64] = { 0 };
	ssize_t n = mq_receive(q, buf, sizeof(buf), NULL);
	int unlinked = mq_unlink(name);
	if (backend && r.exit_code == 125) {
		mq_close(q);
		free(name);
		dsh_test_rmtree(ws);
		free(ws);
		skip_if_unrunnable(backend, &r);
	}
	if (backend) {
		cr_expect_eq(now.mq_curmsgs, 1, "%s: the host's queue holds %ld messages", backend, now.mq_curmsgs);
		cr_expect(n == (ssize_t)strlen(MQ_TEXT) && strcmp(buf, MQ_TEXT) == 0, "%s: the host's message changed: %s",
			  backend, buf);
		cr_expect_eq(unlinked, 0, "%s: the host's queue was unlinked", backend);
	} else {
		/* the control took the message, put its own, and unlinked the name */
		expect_lines("control", r.out, want);
		cr_expect(strstr(r.out, "mq_receive=ok content=" MQ_TEXT), "control: did not read the queue");
		cr_expect(n == 8 && strcmp(buf, "INJECTED") == 0 && unlinked < 0, "the oracle missed the control's changes");
	}
	mq_close(q);
	dsh_proc_clear(&r);
	free(name);
	dsh_test_rmtree(ws);
	free(ws);
}

/* The sandbox's own queue (mq_own) is not asserted: Landlock refuses it (EACCES, the internal
   mqueue mount is beneath no grant) where the kernel has Landlock, the namespace allows it where
   not; either way it is the sandbox's own. */
Test(channels, posix_mqueue_linux_ns)
{
	static const char *const want[] = { "mq_open=ENOENT", "mq_unlink_raw=ENOENT", "mq_unlink=ENOENT", NULL };
	mqueue_attack("linux-ns", want);
}

/* No IPC namespace here: the host's queues are reachable by name.  Landlock refuses mq_open
   (EACCES) but not mq_unlink, which removed the host's queue until the filter refused both. */
Test(channels, posix_mqueue_landlock)
{
	static const char *const want[] = { "mq_open=EPERM", "mq_unlink_raw=EPERM", "mq_unlink=EACCES", "mq_own=EPERM", NULL };
	mqueue_attack("landlock", want);
}

Test(channels, posix_mqueue_control_without_sandbox)
{
	static const char *const want[] = { "mq_open=ok", "mq_send=ok", "mq_unlink_raw=ok", "mq_unlink=ENOENT", NULL };
	mqueue_attack(NULL, want);
}

/* ---- the terminal: the caller's pty is the command's stdin and controlling terminal ---- */

static int ldisc(int fd)
{
	int d = -1;
	cr_assert_eq(ioctl(fd, TIOCGETD, &d), 0);
	return d;
}

static void tty_attack(const char *backend)
{
	char *ws = dsh_test_mkdtemp();
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(master, 0);
	cr_assert_eq(grantpt(master), 0);
	cr_assert_eq(unlockpt(master), 0);
	char *slave_path = strdup(ptsname(master));
	int slave = open(slave_path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	cr_assert_geq(slave, 0);
	struct termios t;
	cr_assert_eq(tcgetattr(slave, &t), 0);
	cfmakeraw(&t);
	cr_assert_eq(tcsetattr(slave, TCSANOW, &t), 0);
	int before = ldisc(slave);
	cr_assert_eq(before, N_TTY);
	int out[2];
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	const char *helper = dsh_test_helper("esc_channels"), *dshbox = dsh_test_dshbox();
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		int tty = open(slave_path, O_RDWR); /* the session's controlling terminal */
		ioctl(tty, TIOCSCTTY, 0);
		dup2(tty, 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		const char *sandboxed[] = { dshbox, "run", "--backend", backend ? backend : "", "--workspace", ws,
					    "--cwd", ws, "--", helper, "tty", NULL };
		/* no TIOCCONS outside a sandbox: as root it would really take the machine's console */
		const char *bare[] = { helper, "tty", "no-cons", NULL };
		execve(backend ? sandboxed[0] : bare[0], (char *const *)(backend ? sandboxed : bare), env());
		_exit(127);
	}
	close(out[1]);
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) - 1 && (n = read(out[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	int st;
	waitpid(pid, &st, 0);
	const char *what = backend ? backend : "control";
	cr_log_info("%s tty: status %#x\n%s", what, st, buf);
	if (backend && WIFEXITED(st) && WEXITSTATUS(st) == 125) {
		close(slave), close(master), close(out[0]);
		free(slave_path);
		dsh_test_rmtree(ws);
		free(ws);
		DSH_SKIP("%s cannot run here: %s", backend, buf);
	}
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x: %s", what, st, buf);
	int after = ldisc(slave);
	if (backend) {
		static const char *const want[] = { "tiocgetd=ok", "ldisc=0", "tiocsetd=EPERM", "tiocsetd_high=EPERM",
						    "tioccons=EPERM", "tioccons_high=EPERM", NULL };
		expect_lines(what, buf, want);
		/* host oracle: the line discipline is still N_TTY, and the terminal still carries input */
		cr_expect_eq(after, before, "%s: the terminal's line discipline became %d", what, after);
		cr_assert_eq(write(master, "ping", 4), 4);
		char in[8] = { 0 };
		for (int i = 0; i < 100 && read(slave, in, sizeof(in) - 1) < 0 && errno == EAGAIN; i++)
			usleep(10000);
		cr_expect_str_eq(in, "ping", "%s: the terminal no longer passes input", what);
	} else {
		/* TIOCSETD needs no privilege on one's own terminal: only the filter stops it */
		static const char *const want[] = { "tiocsetd=ok", NULL };
		expect_lines(what, buf, want);
		cr_expect_eq(after, N_NULL, "the oracle missed the control's TIOCSETD");
	}
	close(slave), close(master), close(out[0]);
	free(slave_path);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(channels, tiocsetd_tioccons_linux_ns) { tty_attack("linux-ns"); }
Test(channels, tiocsetd_tioccons_landlock) { tty_attack("landlock"); }
Test(channels, tiocsetd_control_without_sandbox) { tty_attack(NULL); }

/* ---- syscall numbers the seccomp table has not reviewed ---- */

static void newer_attack(const char *backend)
{
	char *ws = dsh_test_mkdtemp();
	const char *args[] = { "newer", ws, NULL };
	struct dsh_proc r;
	run_channel(backend, ws, &r, args);
	dsh_test_rmtree(ws);
	free(ws);
	skip_if_unrunnable(backend, &r);
	/* statmount and listmount are allowed: the sandbox answers what the host answers */
	errno = 0;
	long sm = syscall(457, NULL, NULL, 0, 0);
	char *want_sm = dsh_test_fmt("statmount=%s", sm >= 0 ? "ok" : strerrorname_np(errno));
	errno = 0;
	long lm = syscall(458, NULL, NULL, 0, 0);
	char *want_lm = dsh_test_fmt("listmount=%s", lm >= 0 ? "ok" : strerrorname_np(errno));
	const char *const want[] = {
		"open_tree_attr=EPERM", "nr_468=ENOSYS", "nr_470=ENOSYS", "nr_500=ENOSYS", "nr_1000=ENOSYS",
		"nr_3fffffff=ENOSYS", want_sm, want_lm, "getppid=ok", NULL,
	};
	expect_lines(backend, r.out, want);
	dsh_proc_clear(&r);
	free(want_sm), free(want_lm);
}

Test(channels, newer_syscalls_linux_ns) { newer_attack("linux-ns"); }
Test(channels, newer_syscalls_landlock) { newer_attack("landlock"); }
