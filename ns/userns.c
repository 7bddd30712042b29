/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clone_vm.h"
#include "ns/userns.h"

/* Allocates nothing: the id mapper (dsh_userns_lock_range) runs it on its parent's memory. */
static int write_raw(int dir, const char *name, const char *data)
{
	_cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = strlen(data);
	ssize_t w = write(fd, data, n);
	if (w < 0)
		return -errno;
	return (size_t)w == n ? 0 : -EIO;
}

static int write_at(int dir, const char *name, const char *data, struct dsh_error **err)
{
	int r = write_raw(dir, name, data);
	if (r == -EIO)
		return dsh_err(err, DSH_ERR_SYSTEM, EIO, "write %s: short write", name);
	if (r < 0)
		return dsh_err_sys(err, -r, "write %s of the new user namespace", name);
	return 0;
}

int dsh_userns_map_as(uid_t inner_uid, gid_t inner_gid, uid_t uid, gid_t gid, struct dsh_error **err)
{
	char buf[64];
	int r = write_at(AT_FDCWD, "/proc/self/setgroups", "deny", err);
	if (r < 0)
		return r;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)inner_uid, (unsigned)uid);
	if ((r = write_at(AT_FDCWD, "/proc/self/uid_map", buf, err)) < 0)
		return r;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)inner_gid, (unsigned)gid);
	return write_at(AT_FDCWD, "/proc/self/gid_map", buf, err);
}

int dsh_userns_lock(uid_t uid, gid_t gid, struct dsh_error **err)
{
	return dsh_userns_lock_as(uid, gid, uid, gid, err);
}

int dsh_userns_lock_as(uid_t inner_uid, gid_t inner_gid, uid_t uid, gid_t gid, struct dsh_error **err)
{
	/* Our own /proc/self files must be ours to write the maps; exec resets this anyway. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return dsh_err_sys(err, errno, "prctl(PR_SET_DUMPABLE)");
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return dsh_err_sys(err, errno, "unshare(CLONE_NEWUSER|CLONE_NEWNS)");
	return dsh_userns_map_as(inner_uid, inner_gid, uid, gid, err);
}

int dsh_userns_map_self(uid_t uid, gid_t gid, struct dsh_error **err)
{
	return dsh_userns_map_as(uid, gid, uid, gid, err);
}

/* The extents of /proc/self/WHICH: first (our ids) and count; returns how many, or -errno. */
static int read_extents(const char *which, unsigned long first[], unsigned long count[], int max,
			struct dsh_error **err)
{
	char path[32];
	snprintf(path, sizeof(path), "/proc/self/%s", which);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return dsh_err_sys(err, errno, "open %s", path);
	int n = 0;
	unsigned long lower;
	while (n < max && fscanf(f, "%lu %lu %lu", &first[n], &lower, &count[n]) == 3)
		n++;
	if (n == 0)
		return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "%s: no range", path);
	return n;
}

/* The extent holding the highest id. */
static int last_extent(const unsigned long first[], const unsigned long count[], int n)
{
	int best = 0;
	for (int i = 1; i < n; i++)
		if (first[i] + count[i] > first[best] + count[best])
			best = i;
	return best;
}

int dsh_userns_range_map(const char *which, bool drop_last, char *buf, size_t size, struct dsh_error **err)
{
	unsigned long first[64], count[64];
	int n = read_extents(which, first, count, 64, err);
	if (n < 0)
		return n;
	int last = drop_last ? last_extent(first, count, n) : -1;
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		unsigned long c = count[i] - (i == last ? 1 : 0);
		if (c == 0)
			continue;
		/* Our own ids (the first column) to themselves: nothing the caller could not name. */
		int k = snprintf(buf + len, size - len, "%lu %lu %lu\n", first[i], first[i], c);
		if (k < 0 || (size_t)k >= size - len)
			return dsh_err(err, DSH_ERR_SYSTEM, E2BIG, "/proc/self/%s: too many ranges", which);
		len += (size_t)k;
	}
	if (len == 0)
		return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "/proc/self/%s: a single id, no range", which);
	return 0;
}

int dsh_userns_range_last(uid_t *uid, gid_t *gid, struct dsh_error **err)
{
	unsigned long first[64], count[64];
	int n = read_extents("uid_map", first, count, 64, err);
	if (n < 0)
		return n;
	int i = last_extent(first, count, n);
	*uid = (uid_t)(first[i] + count[i] - 1);
	if ((n = read_extents("gid_map", first, count, 64, err)) < 0)
		return n;
	i = last_extent(first, count, n);
	*gid = (gid_t)(first[i] + count[i] - 1);
	return 0;
}

int dsh_userns_write_maps(int piddir, const char *uid_map, const char *gid_map, bool deny_setgroups,
			  struct dsh_error **err)
{
	int r = 0;
	if (deny_setgroups)
		r = write_at(piddir, "setgroups", "deny", err);
	if (r >= 0)
		r = write_at(piddir, "uid_map", uid_map, err);
	if (r >= 0)
		r = write_at(piddir, "gid_map", gid_map, err);
	return r;
}

struct mapper {
	int go[2];
	int self;
	const char *uid_map, *gid_map;
};

/* The id mapper: it waits for its parent to unshare, then writes the maps from outside. */
static int mapper_fn(void *p)
{
	const struct mapper *m = p;
	char b;
	close(m->go[1]); /* its own copy: a parent that dies or fails leaves it end-of-file */
	if (read(m->go[0], &b, 1) != 1)
		return 1;
	if (write_raw(m->self, "uid_map", m->uid_map) < 0 || write_raw(m->self, "gid_map", m->gid_map) < 0)
		return 2;
	return 0;
}

int dsh_userns_lock_range(struct dsh_error **err)
{
	char uid_map[1024], gid_map[1024];
	/* The last id stays out: the masks' owner (ns/mount.c), so that no capability of the command
	   counts for them (privileged_wrt_inode_uidgid) and a mode-000 mask stays unreadable. */
	int r = dsh_userns_range_map("uid_map", true, uid_map, sizeof(uid_map), err);
	if (r >= 0)
		r = dsh_userns_range_map("gid_map", true, gid_map, sizeof(gid_map), err);
	if (r < 0)
		return r;
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return dsh_err_sys(err, errno, "prctl(PR_SET_DUMPABLE)");
	/* This process's directory, whichever procfs /proc is by now: the helper writes through it. */
	_cleanup_close_ int self = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (self < 0)
		return dsh_err_sys(err, errno, "open /proc/self");
	struct mapper m = { .self = self, .uid_map = uid_map, .gid_map = gid_map };
	if (pipe2(m.go, O_CLOEXEC) < 0)
		return dsh_err_sys(err, errno, "pipe");
	/*
	 * A map of more than our own id needs CAP_SETUID in the parent namespace, in the writer and in
	 * the opener of the map file: once unshared, we have none there.  A child left behind in this
	 * namespace writes it, and exits.
	 */
	static char stack[16 * 1024] __attribute__((aligned(16)));
	pid_t pid = dsh_clone_vm(mapper_fn, &m, SIGCHLD, stack, sizeof(stack));
	if (pid < 0) {
		int e = errno;
		close(m.go[0]), close(m.go[1]);
		return dsh_err_sys(err, e, "clone the id mapper");
	}
	close(m.go[0]);
	r = 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		r = dsh_err_sys(err, errno, "unshare(CLONE_NEWUSER|CLONE_NEWNS)");
	else if ((r = write_at(self, "setgroups", "deny", err)) >= 0 && write(m.go[1], "", 1) != 1)
		r = dsh_err_sys(err, errno, "start the id mapper");
	close(m.go[1]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (r >= 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		r = dsh_err(err, DSH_ERR_SYSTEM, EPERM, "map the caller's id ranges in the locked user namespace");
	return r;
}
