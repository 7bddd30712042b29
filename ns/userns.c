/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "ns/userns.h"

static int write_file(const char *path, const char *data, struct dsh_error **err)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return dsh_err_sys(err, errno, "open %s", path);
	size_t n = strlen(data);
	ssize_t w = write(fd, data, n);
	if (w < 0)
		return dsh_err_sys(err, errno, "write %s", path);
	if ((size_t)w != n)
		return dsh_err(err, DSH_ERR_SYSTEM, EIO, "write %s: short write", path);
	return 0;
}

int dsh_userns_map_as(uid_t inner_uid, gid_t inner_gid, uid_t uid, gid_t gid, struct dsh_error **err)
{
	char buf[64];
	int r = write_file("/proc/self/setgroups", "deny", err);
	if (r < 0)
		return r;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)inner_uid, (unsigned)uid);
	if ((r = write_file("/proc/self/uid_map", buf, err)) < 0)
		return r;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)inner_gid, (unsigned)gid);
	return write_file("/proc/self/gid_map", buf, err);
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
