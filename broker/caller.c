/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The caller as the broker reaches it (broker/internal.h): its memory, its descriptors, its cwd and
 * root, and its entry in /proc.  Every route ends in a check that the notification is still pending
 * (dsh_call_valid): a live caller keeps its pid, so what was read through that number was its own.
 *
 * The notification names the caller by its pid in the broker's pid namespace.  /proc numbers
 * processes in its own: the same numbers where the sandbox has a fresh procfs (or none of its own,
 * the landlock backend), others where the kernel refused one and the container's /proc was bound
 * (ns/mount.c).  There the caller's number comes from what the kernel says of a pidfd of it (its
 * fdinfo, read through that /proc), and the pidfd proves the number still named it afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "broker/internal.h"
#include "common/cleanup.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

int dsh_call_valid(struct call *c)
{
	return ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &c->req->id) < 0 ? -ENOENT : 0;
}

/* ---- the caller's entry in the broker's /proc ---- */

static int read_at(int dir, const char *path, char *buf, size_t cap)
{
	_cleanup_close_ int fd = openat(dir, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, cap - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* "Field:\tvalue" of a status-like text, as a number; -1 when absent. */
static long field(const char *text, const char *name)
{
	size_t len = strlen(name);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, name, len) == 0 && l[len] == ':')
			return strtol(l + len + 1, NULL, 10);
	return -1;
}

static int pidfd_slot(struct dsh_broker *b, pid_t pid)
{
	for (size_t i = 0; i < ARRAY_SIZE(b->pidfds); i++)
		if (b->pidfds[i].pid == pid)
			return (int)i;
	return -1;
}

static void pidfd_drop(struct dsh_broker *b, int slot)
{
	close(b->pidfds[slot].fd);
	b->pidfds[slot] = (struct dsh_broker_pidfd){ 0 };
}

void dsh_caller_cache_clear(struct dsh_broker *b)
{
	for (size_t i = 0; i < ARRAY_SIZE(b->pidfds); i++)
		if (b->pidfds[i].pid)
			pidfd_drop(b, (int)i);
}

/* Mark the slot as the caller's for the notification being served. */
static void prove(struct call *c, struct dsh_broker_pidfd *e)
{
	e->proven_set = true;
	e->proven = c->req->id;
}

/*
 * The caller's pidfd, kept between calls in b->pidfds (a build's processes make many brokered calls
 * each).  A kept pidfd names its process for good; one whose process is gone (its pid maybe reused)
 * fails with ESRCH and is opened afresh.  check: prove now that a kept one is still the caller's
 * (one pidfd_send_signal); without it the caller's use proves it (pidfd_getfd answers ESRCH for a
 * process that is gone, and a live caller holds its pid, so a live process of the pidfd with the
 * caller's pid is the caller).  A thread that does not lead its group gets a pidfd of its own with
 * PIDFD_THREAD (6.9+); before that, none: -EINVAL.
 */
static int caller_pidfd(struct call *c, bool check, struct dsh_broker_pidfd **ret)
{
	struct dsh_broker *b = c->b;
	pid_t pid = (pid_t)c->req->pid;
	int slot = pidfd_slot(b, pid);
	if (slot >= 0) {
		struct dsh_broker_pidfd *e = &b->pidfds[slot];
		if (!check || (e->proven_set && e->proven == c->req->id)) {
			*ret = e;
			return e->fd;
		}
		if (syscall(__NR_pidfd_send_signal, e->fd, 0, NULL, 0) == 0 || errno != ESRCH) {
			prove(c, e);
			*ret = e;
			return e->fd;
		}
		pidfd_drop(b, slot);
	}
	int fd = (int)syscall(__NR_pidfd_open, pid, 0);
	if (fd < 0 && (errno == EINVAL || errno == ENOENT))
		fd = (int)syscall(__NR_pidfd_open, pid, PIDFD_THREAD);
	if (fd < 0)
		return errno == ENOENT ? -EINVAL : -errno;
	if (dsh_call_valid(c) < 0) {
		close(fd);
		return -ENOENT;
	}
	slot = (int)(b->pidfd_next++ % ARRAY_SIZE(b->pidfds));
	if (b->pidfds[slot].pid)
		pidfd_drop(b, slot);
	b->pidfds[slot] = (struct dsh_broker_pidfd){ .pid = pid, .fd = fd };
	prove(c, &b->pidfds[slot]);
	*ret = &b->pidfds[slot];
	return fd;
}

/* The caller's number in the broker's /proc, as text; -EACCES when it cannot be known. */
static int proc_number(struct call *c, char num[16])
{
	struct dsh_broker *b = c->b;
	if (b->proc_own_ns) {
		snprintf(num, 16, "%u", c->req->pid);
		return 0;
	}
	struct dsh_broker_pidfd *e = NULL;
	int pfd = caller_pidfd(c, true, &e);
	if (pfd < 0)
		return pfd == -ENOENT ? -ENOENT : -EACCES;
	if (!e->proc_tid) {
		char p[64], text[1024];
		snprintf(p, sizeof(p), "self/fdinfo/%d", pfd);
		int r = read_at(b->proc, p, text, sizeof(text));
		long n = r < 0 ? -1 : field(text, "Pid");
		if (n <= 0)
			return -EACCES; /* the caller is not visible in this /proc */
		e->proc_tid = (pid_t)n;
	}
	snprintf(num, 16, "%d", (int)e->proc_tid);
	return 0;
}

/* After a use of the caller's /proc number: it still named the caller throughout. */
static int proc_number_held(struct call *c)
{
	if (dsh_call_valid(c) < 0)
		return -ENOENT;
	if (c->b->proc_own_ns)
		return 0;
	int slot = pidfd_slot(c->b, (pid_t)c->req->pid);
	if (slot < 0 || syscall(__NR_pidfd_send_signal, c->b->pidfds[slot].fd, 0, NULL, 0) < 0)
		return -EACCES;
	return 0;
}

/* openat(b->proc, "<caller>/rel", flags), proven to have reached the caller's entry. */
static int open_own(struct call *c, const char *rel, int flags)
{
	char num[16], p[64];
	int r = proc_number(c, num);
	if (r < 0)
		return r;
	snprintf(p, sizeof(p), "%s/%s", num, rel);
	int fd = openat(c->b->proc, p, flags | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if ((r = proc_number_held(c)) < 0) {
		close(fd);
		return r;
	}
	return fd;
}

static int status_text(struct call *c, char *buf, size_t cap)
{
	_cleanup_close_ int fd = open_own(c, "status", O_RDONLY);
	if (fd < 0)
		return fd;
	ssize_t n = pread(fd, buf, cap - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return proc_number_held(c);
}

/*
 * The caller's umask, read from /proc once per process and kept in its pidfd's slot.  Only the
 * process's own umask() changes it, and the filter sends every umask() here (dsh_caller_umask_set)
 * before the kernel applies it: the kept value is the one the caller's next create would have
 * used.  Threads share one umask (CLONE_FS, as every thread library makes them), so a umask() of
 * one thread is every kept thread's of its group, and a thread seen later takes its group's too:
 * its /proc entry may still show the old value until the kernel has applied the continued call.
 * A caller with no pidfd (a thread before Linux 6.9) is read every time, as before.  Not seen:
 * two processes made to share one umask by a bare clone(CLONE_FS) — the other's kept value lags
 * its umask() — which only changes the mode a file gets, something chmod changes anyway.
 */
static int read_umask(struct call *c, mode_t *um, pid_t *tgid)
{
	char text[2048];
	int r = status_text(c, text, sizeof(text));
	if (r < 0)
		return r;
	const char *u = strstr(text, "\nUmask:");
	long g = field(text, "Tgid");
	*um = (mode_t)((u ? strtoul(u + 7, NULL, 8) : 022) & 0777);
	*tgid = g > 0 ? (pid_t)g : 0;
	return 0;
}

/* The umask kept for another live thread of the group tgid (a group gone, its number reused by a
   new one, is not asked: its pidfd says it is gone). */
static const struct dsh_broker_pidfd *group_umask(struct dsh_broker *b, pid_t tgid)
{
	for (size_t i = 0; tgid && i < ARRAY_SIZE(b->pidfds); i++) {
		const struct dsh_broker_pidfd *o = &b->pidfds[i];
		if (o->pid && o->tgid == tgid && o->has_umask && syscall(__NR_pidfd_send_signal, o->fd, 0, NULL, 0) == 0)
			return o;
	}
	return NULL;
}

mode_t dsh_caller_umask(struct call *c)
{
	struct dsh_broker_pidfd *e = NULL;
	if (caller_pidfd(c, true, &e) >= 0 && e->has_umask)
		return e->umask;
	mode_t um = 022;
	pid_t tgid = 0;
	if (read_umask(c, &um, &tgid) < 0 || !e)
		return um;
	const struct dsh_broker_pidfd *g = group_umask(c->b, tgid);
	e->tgid = tgid;
	e->umask = g ? g->umask : um;
	e->has_umask = true;
	return e->umask;
}

void dsh_caller_umask_set(struct call *c, mode_t um)
{
	struct dsh_broker *b = c->b;
	struct dsh_broker_pidfd *e = NULL;
	mode_t old;
	pid_t tgid = 0;
	if (caller_pidfd(c, true, &e) >= 0 && e->tgid)
		tgid = e->tgid;
	else if (read_umask(c, &old, &tgid) < 0)
		tgid = 0;
	if (e) {
		e->tgid = tgid;
		e->umask = um & 0777;
		e->has_umask = true;
	}
	/* Its group's other threads share it; with no group known, nothing kept is trusted. */
	for (size_t i = 0; i < ARRAY_SIZE(b->pidfds); i++) {
		struct dsh_broker_pidfd *o = &b->pidfds[i];
		if (!o->pid || o == e)
			continue;
		if (tgid && o->tgid == tgid)
			o->umask = um & 0777, o->has_umask = true;
		else if (!tgid)
			o->has_umask = false;
	}
}

void dsh_broker_use_umask(struct dsh_broker *b, mode_t um)
{
	if (b->umask_set && b->umask_now == um)
		return;
	umask(um);
	b->umask_set = true;
	b->umask_now = um;
}

ino_t dsh_caller_mntns(struct call *c)
{
	_cleanup_close_ int fd = open_own(c, "ns/mnt", O_RDONLY);
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 ? st.st_ino : 0;
}

int dsh_caller_cwd(struct call *c)
{
	return open_own(c, "cwd", O_PATH | O_DIRECTORY);
}

int dsh_caller_root(struct call *c)
{
	if (!c->b->nested)
		return AT_FDCWD;
	return open_own(c, "root", O_PATH | O_DIRECTORY);
}

/* ---- memory ---- */

/*
 * process_vm_readv, one call per read; where a seccomp profile refuses it (Docker's default without
 * CAP_SYS_PTRACE) the caller's /proc/PID/mem, which the same ptrace rule governs.  It faults where
 * the kernel's own copy of the argument would (no FOLL_FORCE for process_vm_readv; /proc/PID/mem
 * reads what is mapped readable or not, so an address the caller could not read itself is refused
 * by checking the mapping's permission is not worth a /proc read per call: the read is of the
 * caller's own memory, which it could hand us anyway).
 */
static int read_some(struct call *c, uint64_t addr, void *buf, size_t len, ssize_t *got)
{
	if (!c->b->no_vm_readv) {
		// cppcheck-suppress ctuuninitvar
		struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
		*got = process_vm_readv((pid_t)c->req->pid, &local, 1, &remote, 1, 0);
		if (*got < 0)
			return errno == ESRCH ? -ENOENT : -EFAULT;
		return 0;
	}
	_cleanup_close_ int fd = open_own(c, "mem", O_RDONLY);
	if (fd < 0)
		return fd == -ENOENT ? -ENOENT : -EFAULT;
	*got = pread(fd, buf, len, (off_t)addr);
	if (*got < 0)
		return -EFAULT;
	return 0;
}

int dsh_caller_read(struct call *c, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;
	int r = read_some(c, addr, buf, len, &n);
	if (r < 0)
		return r;
	if (dsh_call_valid(c) < 0)
		return -ENOENT;
	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* Read page by page: a string may end a mapping. */
int dsh_caller_string(struct call *c, uint64_t addr, char *buf, size_t cap, int too_long)
{
	if (!addr)
		return -EFAULT;
	size_t got = 0;
	while (got < cap) {
		size_t page_left = 4096 - ((addr + got) & 4095);
		size_t want = page_left < cap - got ? page_left : cap - got;
		ssize_t n;
		int r = read_some(c, addr + got, buf + got, want, &n);
		if (r < 0)
			return r;
		if (n <= 0)
			return -EFAULT;
		void *nul = memchr(buf + got, '\0', (size_t)n);
		if (nul)
			return dsh_call_valid(c) < 0 ? -ENOENT : 0;
		got += (size_t)n;
	}
	return -too_long;
}

int dsh_caller_write(struct call *c, uint64_t addr, const void *buf, size_t len)
{
	if (!c->b->no_vm_readv) {
		struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
		ssize_t n = process_vm_writev((pid_t)c->req->pid, &local, 1, &remote, 1, 0);
		return n == (ssize_t)len ? 0 : -EFAULT;
	}
	_cleanup_close_ int fd = open_own(c, "mem", O_WRONLY);
	if (fd < 0)
		return -EFAULT;
	return pwrite(fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

/* ---- descriptors ---- */

/*
 * Before 6.9 a thread that does not lead its group has no pidfd: its group's leader stands for it,
 * since threads share the descriptor table pidfd_getfd reads (one that unshared it is not served
 * exactly).  Never kept: the tid could name another process once the thread is gone.
 */
static int thread_fd(struct call *c, int fd)
{
	char text[2048];
	if (!c->b->proc_own_ns || status_text(c, text, sizeof(text)) < 0)
		return -EACCES;
	long tgid = field(text, "Tgid");
	if (tgid <= 0 || tgid == (long)c->req->pid)
		return -ESRCH;
	_cleanup_close_ int pfd = (int)syscall(__NR_pidfd_open, (pid_t)tgid, 0);
	if (pfd < 0)
		return -errno;
	if (dsh_call_valid(c) < 0)
		return -ENOENT;
	int r = (int)syscall(__NR_pidfd_getfd, pfd, fd, 0);
	return r < 0 ? -errno : r;
}

int dsh_caller_fd(struct call *c, int fd)
{
	if (fd < 0)
		return -EBADF;
	if (c->b->no_getfd) {
		char rel[32];
		snprintf(rel, sizeof(rel), "fd/%d", fd);
		int r = open_own(c, rel, O_PATH);
		return r == -ENOENT && dsh_call_valid(c) == 0 ? -EBADF : r;
	}
	for (int fresh = 0; fresh < 2; fresh++) {
		struct dsh_broker_pidfd *e = NULL;
		int pfd = caller_pidfd(c, false, &e);
		if (pfd == -EINVAL) {
			int r = thread_fd(c, fd);
			return r == -ESRCH ? pfd : r;
		}
		if (pfd < 0)
			return pfd;
		int r = (int)syscall(__NR_pidfd_getfd, pfd, fd, 0);
		if (r >= 0) {
			prove(c, e); /* its process is alive: the caller (see caller_pidfd) */
			return r;
		}
		if (errno != ESRCH)
			return -errno;
		pidfd_drop(c->b, pidfd_slot(c->b, (pid_t)c->req->pid));
	}
	return -ESRCH;
}

/* ---- the caller in a procfs instance ---- */

bool dsh_broker_is_proc(struct dsh_broker *b, dev_t dev, int dirfd, const char *name)
{
	if (dev == b->proc_dev)
		return true;
	for (size_t i = 0; i < b->n_devs; i++)
		if (b->devs[i].dev == dev)
			return b->devs[i].proc;
	struct statfs sf;
	_cleanup_close_ int fd = *name ? openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1;
	if ((*name && fd < 0) || fstatfs(*name ? fd : dirfd, &sf) < 0)
		return true; /* cannot tell: taken for a procfs, where the broker acts least */
	bool proc = sf.f_type == PROC_SUPER_MAGIC;
	if (b->n_devs < ARRAY_SIZE(b->devs))
		b->devs[b->n_devs++] = (typeof(b->devs[0])){ .dev = dev, .proc = proc };
	return proc;
}

/* The pid list of an NSpid line, outermost first; its length, or -1. */
static int nspid(const char *text, long *v, int cap)
{
	const char *l = strstr(text, "\nNSpid:");
	if (!l)
		return -1;
	l += 7;
	int n = 0;
	while (n < cap) {
		char *end;
		long x = strtol(l, &end, 10);
		if (end == l)
			break;
		v[n++] = x;
		l = end;
	}
	return n;
}

static bool same_file(int dir1, const char *p1, int dir2, const char *p2)
{
	struct stat a, b;
	return fstatat(dir1, p1, &a, 0) == 0 && fstatat(dir2, p2, &b, 0) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * A procfs of another pid namespace (a nested sandbox's): the caller's number there is one of its
 * NSpid list (one per namespace from the broker's down to its own).  The entry with that number is
 * the caller when its own NSpid list is the tail of the caller's and its active pid namespace is
 * the caller's: within one namespace a number names one task.
 */
static int foreign_number(struct call *c, int proc_root, char tgid[16], char tid[16])
{
	char text[2048], mine[2048];
	if (status_text(c, mine, sizeof(mine)) < 0)
		return -EACCES;
	long all[32], there[32];
	int n = nspid(mine, all, 32);
	char num[16];
	if (n <= 0 || proc_number(c, num) < 0)
		return -EACCES;
	char ns_mine[48];
	snprintf(ns_mine, sizeof(ns_mine), "%s/ns/pid", num);
	for (int k = 0; k < n; k++) {
		char p[64];
		snprintf(p, sizeof(p), "%ld/status", all[k]);
		if (read_at(proc_root, p, text, sizeof(text)) < 0)
			continue;
		int m = nspid(text, there, 32);
		if (m != n - k || memcmp(there, all + k, (size_t)m * sizeof(long)) != 0)
			continue;
		snprintf(p, sizeof(p), "%ld/ns/pid", all[k]);
		if (!same_file(proc_root, p, c->b->proc, ns_mine) || proc_number_held(c) < 0)
			return -EACCES;
		long g = field(text, "Tgid");
		if (g <= 0)
			return -EACCES;
		snprintf(tgid, 16, "%d", (int)g);
		snprintf(tid, 16, "%d", (int)all[k]);
		return 0;
	}
	return -EACCES;
}

int dsh_caller_in_proc(struct call *c, int proc_root, char tgid[16], char tid[16])
{
	struct stat st;
	if (fstat(proc_root, &st) < 0)
		return -errno;
	if (st.st_dev != c->b->proc_dev)
		return foreign_number(c, proc_root, tgid, tid);
	char text[2048];
	int r = proc_number(c, tid);
	if (r >= 0)
		r = status_text(c, text, sizeof(text));
	if (r < 0)
		return r == -ENOENT ? r : -EACCES;
	long g = field(text, "Tgid");
	if (g <= 0)
		return -EACCES;
	snprintf(tgid, 16, "%d", (int)g);
	return 0;
}

/* ---- start ---- */

/*
 * Which routes the kernel (and a seccomp profile around dshbox) allows, tried on ourselves:
 * process_vm_readv and pidfd_getfd, which Docker's default profile refuses without CAP_SYS_PTRACE.
 */
static void routes(struct dsh_broker *b)
{
	char src = 'x', dst = 0;
	struct iovec local = { &dst, 1 }, remote = { &src, 1 };
	b->no_vm_readv = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 1;
	int self = (int)syscall(__NR_pidfd_open, getpid(), 0);
	int fd = self < 0 ? -1 : (int)syscall(__NR_pidfd_getfd, self, self, 0);
	b->no_getfd = fd < 0;
	if (fd >= 0)
		close(fd);
	if (self >= 0)
		close(self);
}

int dsh_broker_check_routes(struct dsh_broker *b, struct dsh_error **err)
{
	routes(b);
	if (b->no_vm_readv) {
		_cleanup_close_ int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return dsh_err(err, DSH_ERR_UNSUPPORTED, EPERM,
				       "the runtime broker cannot read the command's memory: process_vm_readv is refused "
				       "here, and so is /proc/PID/mem");
	}
	if (b->no_getfd && b->sockets) {
		int r = dsh_err(err, DSH_ERR_UNSUPPORTED, EPERM,
				"the runtime broker cannot serve protectSockets: pidfd_getfd is refused here");
		dsh_err_hint(err, "a container runtime's seccomp profile refuses pidfd_getfd without CAP_SYS_PTRACE: "
					 "allow it in the container's seccomp profile (or --cap-add SYS_PTRACE), "
					 "or set protectSockets: false");
		return r;
	}
	return 0;
}

/* The devices of every mount in the broker's namespace (mountinfo's third field, MAJOR:MINOR). */
static int mount_devs(struct dsh_broker *b)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		if (sscanf(line, "%*d %*d %u:%u", &maj, &min) != 2)
			continue;
		dev_t *v = realloc(b->mount_devs, (b->n_mount_devs + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->mount_devs = v;
		v[b->n_mount_devs++] = makedev(maj, min);
	}
	return 0;
}

int dsh_broker_start(struct dsh_broker *b, struct dsh_error **err)
{
	if (b->started)
		return 0;
	struct seccomp_notif_sizes sizes;
	if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		return dsh_err_sys(err, errno, "broker: SECCOMP_GET_NOTIF_SIZES");
	b->notif_size = sizes.seccomp_notif;
	routes(b);
	b->proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct statfs sf;
	struct stat st;
	if (b->proc < 0 || fstatfs(b->proc, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC || fstat(b->proc, &st) < 0)
		return dsh_err_sys(err, b->proc < 0 ? errno : ENOENT, "broker: no procfs at /proc");
	b->proc_dev = st.st_dev;
	char self[32];
	ssize_t n = readlinkat(b->proc, "self", self, sizeof(self) - 1);
	b->proc_own_ns = n > 0 && (self[n] = '\0', strtol(self, NULL, 10) == (long)getpid());
	if (b->nested && stat("/proc/self/ns/mnt", &st) == 0)
		b->mntns = st.st_ino;
	if (b->nested && mount_devs(b) < 0)
		return dsh_err_sys(err, ENOMEM, "broker: /proc/self/mountinfo");
	static const char *const own[] = { "/dev", "/dev/pts", "/dev/shm" };
	for (size_t i = 0; b->own_dev && i < ARRAY_SIZE(own); i++)
		if (stat(own[i], &st) == 0)
			b->own_devs[b->n_own_devs++] = st.st_dev;
	b->started = true;
	return 0;
}
