/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The broker's decisions (broker/internal.h): what a rule refuses of a resolved name, and where the
 * kernel refuses by itself, so that it answers with the errno a program expects.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "broker/internal.h"
#include "broker/subtree.h"
#include "common/cleanup.h"

/* Whether path is target or a directory on the way to it. */
static bool on_the_way(const char *path, const char *target)
{
	size_t n = strlen(path);
	if (strcmp(path, "/") == 0)
		return true;
	return strncmp(target, path, n) == 0 && (target[n] == '\0' || target[n] == '/');
}

/* What the call being served is refused for, kept until its answer (respond). */
void dsh_broker_note_denial(struct dsh_broker *b, const char *path, const char *what, bool is_rule)
{
	if (!what)
		what = "?";
	if (is_rule)
		snprintf(b->denial, sizeof(b->denial), "%s (rule \"%s\")", path, what);
	else
		snprintf(b->denial, sizeof(b->denial), "%s (on the way to %s, a glob's match)", path, what);
}

/* The rule (or plan target) that keeps name from being removed, renamed, replaced or changed. */
const char *dsh_broker_guard(struct dsh_broker *b, const char *canonical, const char *spelled)
{
	if (!canonical)
		return NULL; /* a file system of the command's own: nothing of the host's */
	const struct dsh_rule *r = dsh_policy_guarded(b->policy, canonical);
	if (!r && spelled && strcmp(spelled, canonical) != 0)
		r = dsh_policy_guarded(b->policy, spelled);
	if (r) {
		dsh_broker_note_denial(b, canonical, dsh_rule_text(r), true);
		return dsh_rule_text(r);
	}
	for (size_t i = 0; b->targets && b->targets[i]; i++)
		if (on_the_way(canonical, b->targets[i])) {
			dsh_broker_note_denial(b, canonical, b->targets[i], false);
			return b->targets[i];
		}
	return NULL;
}

/*
 * Where the kernel refuses by itself — a read-only mount (the sandbox's own tree: r- binds, masks,
 * everything outside the writable roots), a mount point, two mounts — the broker lets the kernel
 * answer: the call fails either way, and with the errno a program expects (EROFS, EBUSY, EXDEV).
 */
uint64_t dsh_broker_mnt_id(int dirfd, const char *name)
{
	struct statx sx;
	int flags = AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH);
	if (statx(dirfd, name, flags, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}

bool dsh_broker_ro_fd(int fd)
{
	struct statvfs v;
	return fstatvfs(fd, &v) == 0 && (v.f_flag & ST_RDONLY);
}

/* A change of this name (create, remove, rename) that the kernel refuses anyway. */
bool dsh_broker_kernel_refuses_name(const struct target *t)
{
	if (dsh_broker_ro_fd(t->pfd))
		return true;
	uint64_t here = dsh_broker_mnt_id(t->pfd, "");
	return t->exists && here && dsh_broker_mnt_id(t->pfd, t->name) != here; /* a mount point: EBUSY */
}

/* A metadata change of this name's inode that the kernel refuses anyway (its mount is read-only). */
bool dsh_broker_kernel_refuses_meta(const struct target *t)
{
	_cleanup_close_ int fd = openat(t->pfd, t->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 && dsh_broker_ro_fd(fd);
}

/*
 * A metadata change is the broker's own act, and Landlock, the landlock backend's only wall, does
 * not govern mode, owner, times or xattrs: were the mode's limits left to the kernel there, a
 * command would chmod and touch any file it owns outside the writable roots.  So the policy's
 * write verdict decides (under linux-ns the read-only mounts refuse first, with EROFS), and a
 * device node (/dev/null, the terminal), writable for its data, keeps its inode as the host has it.
 * A file system of the command's own (canonical NULL), or the sandbox's own /dev, devpts and shm,
 * hold no host file: the command's to change.
 */
bool dsh_broker_meta_denied(struct dsh_broker *b, const char *canonical, const char *spelled, const struct stat *st)
{
	if (!canonical)
		return false;
	if (dsh_broker_guard(b, canonical, spelled))
		return true;
	for (size_t i = 0; i < b->n_own_devs; i++)
		if (st->st_dev == b->own_devs[i])
			return false; /* the sandbox's own /dev, devpts or shm */
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
		snprintf(b->denial, sizeof(b->denial), "%s (a device node of the host's: its data only)", canonical);
		return true;
	}
	struct dsh_verdict v;
	if (dsh_policy_decide(b->policy, DSH_OP_WRITE, canonical, spelled, &v) < 0 || !v.allow) {
		snprintf(b->denial, sizeof(b->denial), "%s (its metadata: a file the command may not write)", canonical);
		return true;
	}
	return false;
}

/* Whether a rule forbids writing (creating) this name; the mode's own limits are the kernel's. */
bool dsh_broker_create_denied(struct dsh_broker *b, const struct target *t)
{
	struct dsh_verdict v;
	if (t->own_fs)
		return false;
	if (dsh_policy_decide(b->policy, DSH_OP_WRITE, t->canonical, t->spelled, &v) < 0)
		return true;
	if (!v.allow && v.rule)
		dsh_broker_note_denial(b, t->canonical, dsh_rule_text(v.rule), true);
	return !v.allow && v.rule;
}

/*
 * Whether a new name t that is not a directory is refused: it lies on the way to an r-/-- target
 * (an absent .git under the default r- .git/config, b under -- b/secret, the literal directory of
 * a glob), where only a directory may be made.  A symlink would lead the target's path, for whoever
 * follows it later, to a tree the command chose; a file is followed by some readers too (git reads
 * a .git file's "gitdir:" and takes that directory's config and hooks).
 */
bool dsh_broker_nondir_denied(struct dsh_broker *b, const struct target *t)
{
	return dsh_broker_guard(b, t->canonical, t->spelled) != NULL;
}

/*
 * Whether a symlink with the text link may not take the name t: from there it would lead a rule
 * around (dsh_broker_link_redirects) — a host reader following it would read, as a path the rule
 * covers, a file the command wrote elsewhere.
 */
bool dsh_broker_link_denied(struct dsh_broker *b, const struct target *t, const char *link)
{
	const struct dsh_rule *r = NULL;
	if (t->own_fs)
		return false;
	int rc = dsh_broker_link_redirects(b->policy, t->canonical, link, &r);
	if (rc > 0)
		snprintf(b->denial, sizeof(b->denial), "%s (a symlink to %s would lead around rule \"%s\")", t->canonical,
			 link, dsh_rule_text(r));
	return rc != 0;
}

/* The same for the symlink from, when it takes the name to (renamed, or linked). */
bool dsh_broker_moved_link_denied(struct dsh_broker *b, const struct target *from, const struct target *to)
{
	if (!from->exists || !S_ISLNK(from->st.st_mode))
		return false;
	char link[PATH_MAX];
	ssize_t n = readlinkat(from->pfd, from->name, link, sizeof(link) - 1);
	if (n < 0)
		return true; /* a link that cannot be read cannot be judged */
	link[n] = '\0';
	return dsh_broker_link_denied(b, to, link);
}
