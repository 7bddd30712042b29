/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A directory's descendants under the name a rename would give it (subtree.h).
 *
 * Why the walk and the rename cannot be separated: the broker serves one notification at a time
 * (dsh_broker_serve_one), and its threads only finish socket calls that make no name (broker.c,
 * defer).  Every call by which the command makes a name is sent to it — open/openat with O_CREAT or
 * O_TMPFILE, openat2, creat, mkdir(at), mknod(at), symlink(at), link(at), rename(at,at2) and bind,
 * the last with or without protectSockets (seccomp/seccomp.c, notify_always) — and the calls
 * that could make one around it (io_uring, open_by_handle_at, the mount family) are refused.  So
 * while the broker walks and then renames, no process of the command can add a name below the
 * directory.  The host can (it is trusted; the file fence checks its own writes).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/subtree.h"
#include "common/cleanup.h"
#include "policy/path.h"

/* Whether the command can write nothing at or below path: no write grant there, no writable root
   beneath it (what it holds is the host's, and a rule keeps the command from replacing it). */
static bool nothing_writable_below(const struct dsh_policy *p, const char *path)
{
	struct dsh_verdict v;
	if (dsh_policy_verdict(p, DSH_OP_WRITE, path, &v) < 0 || v.allow)
		return false;
	return !dsh_policy_live_root_beneath(p, path);
}

int dsh_broker_link_redirects(const struct dsh_policy *p, const char *canonical, const char *link,
			      const struct dsh_rule **ret_rule)
{
	*ret_rule = NULL;
	if (!dsh_policy_may_protect_below(p, canonical))
		return 0; /* no rule reaches below the name: nothing to lead around */
	_cleanup_free_ char *dir = strdup(canonical);
	if (!dir)
		return -ENOMEM;
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	_cleanup_free_ char *target = NULL;
	if (dsh_path_resolve_physical(dir, link, &target, NULL) < 0 && !(target = dsh_path_normalize(dir, link)))
		return -ENOMEM;
	if (nothing_writable_below(p, target))
		return 0; /* it leads to the host's files only: nothing the command put there */
	*ret_rule = dsh_policy_redirected(p, canonical, target);
	return *ret_rule != NULL;
}

/* The would-be path of the entry being looked at, canonical and as spelled. */
struct walk {
	const struct dsh_policy *p;
	char canonical[PATH_MAX], spelled[PATH_MAX];
	size_t clen, slen;
	bool two;   /* the spelling differs from the canonical path */
	size_t entries, max_entries;
};

static bool may_protect_below(const struct walk *w)
{
	return dsh_policy_may_protect_below(w->p, w->canonical) ||
	       (w->two && dsh_policy_may_protect_below(w->p, w->spelled));
}

/* The question create_denied() asks of a new name (broker.c): a rule forbids it, not the mode. */
static bool covered(const struct walk *w)
{
	struct dsh_verdict v;
	if (dsh_policy_decide(w->p, DSH_OP_WRITE, w->canonical, w->two ? w->spelled : NULL, &v) < 0)
		return true;
	return !v.allow && v.rule;
}

/* And the one nondir_denied() asks of a new non-directory: is the name on the way to a target? */
static bool guarded(const struct walk *w)
{
	return dsh_policy_guarded(w->p, w->canonical) || (w->two && dsh_policy_guarded(w->p, w->spelled));
}

static bool append(char *buf, size_t *len, const char *name)
{
	size_t n = strlen(name);
	if (*len + 1 + n >= PATH_MAX)
		return false;
	buf[(*len)++] = '/';
	memcpy(buf + *len, name, n + 1);
	*len += n;
	return true;
}

static int push(struct walk *w, const char *name)
{
	size_t cl = w->clen, sl = w->slen;
	if (!append(w->canonical, &w->clen, name) || (w->two && !append(w->spelled, &w->slen, name))) {
		w->clen = cl, w->slen = sl;
		w->canonical[cl] = w->spelled[sl] = '\0';
		return -EXDEV;
	}
	return 0;
}

static void pop(struct walk *w, size_t cl, size_t sl)
{
	w->clen = cl, w->slen = sl;
	w->canonical[cl] = w->spelled[sl] = '\0';
}

/* Every entry of the directory fd (taken), at the would-be path w holds; then its subdirectories. */
static int walk_dir(struct walk *w, int fd, unsigned depth)
{
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -EACCES;
	}
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de)
			return errno ? -EACCES : 0; /* unread entries fail closed */
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->entries > w->max_entries)
			return -EXDEV;
		size_t cl = w->clen, sl = w->slen;
		int r = push(w, de->d_name);
		if (r < 0)
			return r;
		if (covered(w)) {
			pop(w, cl, sl);
			return -EACCES;
		}
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				pop(w, cl, sl);
				return -EACCES;
			}
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		}
		if (type != DT_DIR && guarded(w)) {
			pop(w, cl, sl);
			return -EACCES;
		}
		if (type == DT_LNK) {
			/* a relative link means something else from its new place */
			char link[PATH_MAX];
			ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
			const struct dsh_rule *rule = NULL;
			if (n >= 0)
				link[n] = '\0';
			r = n < 0 ? -EACCES : dsh_broker_link_redirects(w->p, w->canonical, link, &rule);
			if (r != 0) {
				pop(w, cl, sl);
				return r < 0 ? r : -EACCES;
			}
		}
		if (type == DT_DIR && may_protect_below(w)) {
			if (depth + 1 >= DSH_SUBTREE_MAX_DEPTH) {
				pop(w, cl, sl);
				return -EXDEV;
			}
			int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = sub < 0 ? -EACCES : walk_dir(w, sub, depth + 1);
			if (r < 0) {
				pop(w, cl, sl);
				return r;
			}
		}
		pop(w, cl, sl);
	}
}

int dsh_broker_subtree_check(const struct dsh_policy *p, int pfd, const char *name, const char *canonical,
			     const char *spelled, size_t max_entries)
{
	struct walk walk = { .p = p, .max_entries = max_entries }, *w = &walk;
	w->two = spelled && strcmp(spelled, canonical) != 0;
	w->clen = strlen(canonical);
	w->slen = w->two ? strlen(spelled) : 0;
	if (w->clen >= PATH_MAX || w->slen >= PATH_MAX)
		return -EXDEV;
	memcpy(w->canonical, canonical, w->clen + 1);
	if (w->two)
		memcpy(w->spelled, spelled, w->slen + 1);
	/* The common case: no rule reaches below the new name, and nothing is read. */
	if (!may_protect_below(w))
		return 0;
	int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -EACCES;
	return walk_dir(w, fd, 0);
}
