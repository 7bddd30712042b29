/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Attacks on host channels that no file rule sees, run inside `dshbox run` by
 * tests/escape/test_channels.c: the host's SysV IPC objects and POSIX message queues, the
 * terminal's line discipline and the console, and syscalls newer than the seccomp table.
 *
 * `esc_channels NAME [ARGS...]` prints one line per step, "step=RESULT" (RESULT "ok" when the
 * step got through, else the errno's name), and whatever it managed to read as "step=ok
 * content=...", so the test can check that nothing of the host's leaked.  Exit 0 when it ran.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/tty.h>

static void step(const char *name, long r)
{
	printf("%s=%s\n", name, r >= 0 ? "ok" : strerrorname_np(errno));
	fflush(stdout);
}
#define TRY(name, call)                   \
	do {                              \
		errno = 0;                \
		step(name, (long)(call)); \
	} while (0)

static long num(const char *s)
{
	return strtol(s, NULL, 0);
}

/* argv: SHM_KEY SHM_ID MSG_KEY MSG_ID SEM_KEY SEM_ID, the host's objects (0666, known content). */
static int a_sysv(int argc, char **argv)
{
	if (argc < 6)
		return 2;
	key_t shm_key = (key_t)num(argv[0]), msg_key = (key_t)num(argv[2]), sem_key = (key_t)num(argv[4]);
	int shm_id = (int)num(argv[1]), msg_id = (int)num(argv[3]), sem_id = (int)num(argv[5]);

	/* shared memory: find it by key, attach it by id (ids are small and guessable), change it */
	TRY("shmget_key", shmget(shm_key, 0, 0));
	errno = 0;
	char *p = shmat(shm_id, NULL, 0);
	if (p == (void *)-1) {
		step("shmat_id", -1);
	} else {
		printf("shmat_id=ok content=%.64s\n", p);
		memcpy(p, "OVERWRITTEN", 12);
		shmdt(p);
	}
	struct shmid_ds sds;
	TRY("shmctl_stat", shmctl(shm_id, IPC_STAT, &sds));
	TRY("shmctl_rmid", shmctl(shm_id, IPC_RMID, NULL));

	/* message queue: by key, then receive (steal), send (inject) and remove by id */
	TRY("msgget_key", msgget(msg_key, 0));
	struct {
		long mtype;
		char mtext[128];
	} m = { 0 };
	errno = 0;
	ssize_t n = msgrcv(msg_id, &m, sizeof(m.mtext) - 1, 0, IPC_NOWAIT);
	if (n < 0)
		step("msgrcv_id", -1);
	else
		printf("msgrcv_id=ok content=%.*s\n", (int)n, m.mtext);
	m.mtype = 1;
	strcpy(m.mtext, "INJECTED");
	TRY("msgsnd_id", msgsnd(msg_id, &m, strlen(m.mtext), IPC_NOWAIT));
	TRY("msgctl_rmid", msgctl(msg_id, IPC_RMID, NULL));

	/* semaphores: by key, then take one (IPC_NOWAIT: never block) and overwrite the value */
	TRY("semget_key", semget(sem_key, 0, 0));
	struct sembuf op = { .sem_num = 0, .sem_op = -1, .sem_flg = IPC_NOWAIT };
	TRY("semop_id", semop(sem_id, &op, 1));
	struct timespec ts = { 0, 0 };
	TRY("semtimedop_id", semtimedop(sem_id, &op, 1, &ts));
	TRY("semctl_setval", semctl(sem_id, 0, SETVAL, 0));
	TRY("semctl_rmid", semctl(sem_id, 0, IPC_RMID));

	/* a private object of its own: fine in its own namespace, refused without one */
	int own = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	step("shm_private", own);
	if (own >= 0)
		shmctl(own, IPC_RMID, NULL);
	return 0;
}

/* argv: NAME of the host's POSIX message queue ("/dshbox-esc-..."), holding one known message. */
static int a_mqueue(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	errno = 0;
	mqd_t q = mq_open(argv[0], O_RDWR | O_NONBLOCK | O_CLOEXEC);
	step("mq_open", q == (mqd_t)-1 ? -1 : 0);
	if (q != (mqd_t)-1) {
		char buf[8192];
		errno = 0;
		ssize_t n = mq_receive(q, buf, sizeof(buf), NULL);
		if (n < 0)
			step("mq_receive", -1);
		else
			printf("mq_receive=ok content=%.*s\n", (int)n, buf);
		TRY("mq_send", mq_send(q, "INJECTED", 8, 0));
		mq_close(q);
	}
	/* glibc reports the kernel's EPERM from mq_unlink as EACCES (POSIX's word): the raw call
	   first shows who refused */
	TRY("mq_unlink_raw", syscall(SYS_mq_unlink, argv[0] + 1));
	TRY("mq_unlink", mq_unlink(argv[0]));
	errno = 0;
	q = mq_open("/dshbox-esc-own", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, NULL);
	step("mq_own", q == (mqd_t)-1 ? -1 : 0);
	if (q != (mqd_t)-1) {
		mq_close(q);
		mq_unlink("/dshbox-esc-own");
	}
	return 0;
}

/* stdin is the caller's terminal: swap its line discipline, take the console.  argv: "no-cons" leaves
   TIOCCONS out (the control run outside a sandbox, which as root would really take the console). */
static int a_tty(int argc, char **argv)
{
	bool cons = !(argc > 0 && strcmp(argv[0], "no-cons") == 0);
	int ld = -1;
	TRY("tiocgetd", ioctl(0, TIOCGETD, &ld));
	printf("ldisc=%d\n", ld);
	int null = N_NULL;
	TRY("tiocsetd", ioctl(0, TIOCSETD, &null));
	/* the kernel reads the request as 32 bits: high bits must not get past the filter */
	TRY("tiocsetd_high", syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSETD, &null));
	if (cons) {
		TRY("tioccons", ioctl(0, TIOCCONS));
		TRY("tioccons_high", syscall(SYS_ioctl, 0, (0xbeefUL << 40) | TIOCCONS));
	}
	return 0;
}

/* Syscall numbers the seccomp table has or has not reviewed.  argv: a directory to open_tree. */
static int a_newer(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	/* open_tree_attr (Linux 6.15): open_tree plus mount_setattr in one call */
	TRY("open_tree_attr", syscall(467, AT_FDCWD, argv[0], 1 /* OPEN_TREE_CLONE */, NULL, 0));
	TRY("nr_468", syscall(468, AT_FDCWD, argv[0], NULL, 0, 0));
	TRY("nr_470", syscall(470, 0, 0, 0, 0, 0, 0));
	TRY("nr_500", syscall(500, 0, 0, 0, 0, 0, 0));
	TRY("nr_1000", syscall(1000, 0, 0, 0, 0, 0, 0));
	TRY("nr_3fffffff", syscall(0x3fffffff, 0, 0, 0, 0, 0, 0));
	/* statmount, listmount (Linux 6.8): read-only queries, allowed; bad pointers on purpose */
	TRY("statmount", syscall(457, NULL, NULL, 0, 0));
	TRY("listmount", syscall(458, NULL, NULL, 0, 0));
	TRY("getppid", getppid());
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} attacks[] = {
	{ "sysv", a_sysv },
	{ "mqueue", a_mqueue },
	{ "tty", a_tty },
	{ "newer", a_newer },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: esc_channels NAME [ARGS...]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
		if (strcmp(argv[1], attacks[i].name) == 0)
			return attacks[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "esc_channels: unknown attack '%s'\n", argv[1]);
	return 2;
}
