/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/write_all.h"
#include "ns/remask.h"

/* The entries a host-side replacement can take away: r- binds and masks of a rule, literal or a
   glob's match found at start. */
static bool watched(const struct dsh_mount_entry *e)
{
	if (!e->rule)
		return false;
	switch (e->action) {
	case DSH_MOUNT_BIND_RO:
	case DSH_MOUNT_MASK_FILE:
	case DSH_MOUNT_MASK_DIR:
		return true;
	case DSH_MOUNT_RO_ROOT:
	case DSH_MOUNT_TMP:
	case DSH_MOUNT_BIND_RW:
	case DSH_MOUNT_BIND_RW_TMP:
	case DSH_MOUNT_BIND_RO_TMP:
	case DSH_MOUNT_DEV:
	case DSH_MOUNT_PROC:
	case DSH_MOUNT_RUN_USER:
	case DSH_MOUNT_BIND:
	case DSH_MOUNT_TMPFS:
	case DSH_MOUNT_REMOUNT_RO:
	case DSH_MOUNT_MKDIR:
	case DSH_MOUNT_SYMLINK:
	case DSH_MOUNT_FILE:
	case DSH_MOUNT_BIND_DATA:
	case DSH_MOUNT_CHMOD:
	case DSH_MOUNT_ATTR:
	case DSH_MOUNT_NEWROOT:
	case DSH_MOUNT_MQUEUE:
	case DSH_MOUNT_ABSENT:
		return false;
	}
	return false;
}

int dsh_remask_watch_init(struct dsh_remask_watch *w, const struct dsh_mount_plan *plan, int keeper_fd,
			  struct dsh_error **err)
{
	*w = (struct dsh_remask_watch){ .fd = -1, .keeper = keeper_fd, .plan = plan };
	size_t n = 0;
	for (size_t i = 0; i < plan->n; i++)
		n += watched(&plan->entries[i]);
	if (n == 0)
		return 0;
	w->wd = malloc(plan->n * sizeof(*w->wd));
	if (!w->wd)
		return dsh_err_sys(err, ENOMEM, "remask");
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		return dsh_err_sys(err, errno, "inotify_init1");
	for (size_t i = 0; i < plan->n; i++) {
		w->wd[i] = -1;
		if (!watched(&plan->entries[i]))
			continue;
		_cleanup_free_ char *parent = strdup(plan->entries[i].path);
		if (!parent)
			return dsh_err_sys(err, ENOMEM, "remask");
		char *slash = strrchr(parent, '/');
		if (!slash)
			continue;
		*(slash == parent ? slash + 1 : slash) = '\0';
		/* A name arrives by rename (editors, sed -i, git) or is made anew after an unlink. */
		w->wd[i] = inotify_add_watch(w->fd, parent, IN_MOVED_TO | IN_CREATE | IN_ONLYDIR);
		/* A glob's matches go beyond what SPEC 3.14 asks (literal targets): past the user's
		   inotify limit they are left to the next run, which masks what it finds. */
		if (w->wd[i] < 0 && errno == ENOSPC && plan->entries[i].rule->glob) {
			w->unwatched++;
			continue;
		}
		if (w->wd[i] < 0 && errno != ENOENT && errno != EACCES)
			return dsh_err_sys(err, errno, "watch '%s' for replacements of '%s'", parent,
					   plan->entries[i].path);
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int dsh_remask_watch_events(struct dsh_remask_watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int reads = 0;
	for (;; reads++) {
		ssize_t n = read(w->fd, buf, sizeof(buf));
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? reads : -errno;
		if (n == 0)
			return reads;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			if (!ev->len)
				continue;
			for (size_t i = 0; i < w->plan->n; i++) {
				if (w->wd[i] != ev->wd || strcmp(base_name(w->plan->entries[i].path), ev->name) != 0)
					continue;
				uint32_t req = (uint32_t)i;
				if (dsh_write_all(w->keeper, &req, sizeof(req)) < 0)
					return -EPIPE;
				w->sent++;
			}
		}
	}
}

void dsh_remask_watch_clear(struct dsh_remask_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	free(w->wd);
	w->fd = -1;
	w->wd = NULL;
}

/*
 * A spare mask of each kind, cloned from one the plan attached: moved onto a replaced name it
 * needs no clone of a detached mount (which kernels before 6.15 refuse), and after each use the
 * next spare is cloned from where it now hangs.
 */
struct keeper {
	const struct dsh_mount_plan *plan;
	int spare[2]; /* [0] file mask, [1] directory mask */
};

/*
 * A clone of the mask at path, only if what hangs there is still a mask (empty, mode 000, of the
 * kind): the host may have replaced the name already, and a clone of the replacement would "mask"
 * the new file with itself.
 */
static int clone_mask_at(const char *path, int kind)
{
	int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || (st.st_mode & 07777) != 0 || S_ISDIR(st.st_mode) != (kind == 1) ||
			(kind == 0 && st.st_size != 0))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void dsh_remask_take_spares(const struct dsh_mount_plan *plan, int spare[2])
{
	spare[0] = spare[1] = -1;
	for (size_t i = 0; i < plan->n; i++) {
		const struct dsh_mount_entry *e = &plan->entries[i];
		int kind = e->action == DSH_MOUNT_MASK_FILE ? 0 : e->action == DSH_MOUNT_MASK_DIR ? 1 : -1;
		if (kind >= 0 && spare[kind] < 0)
			spare[kind] = clone_mask_at(e->path, kind);
	}
}

/* Mount entry i again on what its path names now; 0, or -errno. */
static int reapply(struct keeper *k, size_t i)
{
	const struct dsh_mount_entry *e = &k->plan->entries[i];
	_cleanup_close_ int t = open(e->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (t < 0)
		return errno == ENOENT ? 0 : -errno; /* gone again: the broker keeps it from being made inside */
	struct stat st;
	if (fstat(t, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP; /* a symlink put there on the host: its target is the host's business */
	if (e->action == DSH_MOUNT_BIND_RO) {
		_cleanup_close_ int c = open_tree(t, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
		if (c < 0)
			return -errno;
		struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
		if (mount_setattr(c, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
			return -errno;
		return move_mount(c, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ? -errno : 0;
	}
	int kind = S_ISDIR(st.st_mode) ? 1 : 0;
	if (k->spare[kind] < 0)
		return -ENOENT;
	if (move_mount(k->spare[kind], "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	close(k->spare[kind]);
	k->spare[kind] = clone_mask_at(e->path, kind);
	return 0;
}

_Noreturn void dsh_remask_keeper(const struct dsh_mount_plan *plan, int req_fd, const int spare[2])
{
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* Out of the caller's job and session: a shell's job control (Ctrl-Z, fg) never waits on it. */
	(void)setsid();
	struct keeper k = { plan, { spare[0], spare[1] } };
	for (;;) {
		uint32_t req;
		ssize_t n = read(req_fd, &req, sizeof(req));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(req))
			_exit(0); /* the supervisor is done */
		/* A failure ends the keeper: the supervisor then stops the run, never letting it go on
		   with a protection it could not put back. */
		int r = req < plan->n ? reapply(&k, (size_t)req) : -EINVAL;
		if (r < 0 && r != -ELOOP)
			_exit(1);
	}
}
