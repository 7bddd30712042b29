/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clone_vm.h"
#include "common/die_with.h"
#include "common/fdpass.h"
#include "common/path_search.h"
#include "common/strv.h"
#include "ns/mount.h"
#include "ns/net.h"
#include "ns/remask.h"
#include "ns/userns.h"
#include "seccomp/caps.h"
#include "supervisor/sandbox.h"

/* ---- INIT stages: pid 1 of the sandbox, full capabilities in its own user namespace ---- */

/* Before any mount: /proc is still the caller's procfs, where /proc/self names init as the caller
   sees it (dshbox bwrap --info-fd reports that pid). */
static int st_outer_pid(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (!c->plan->hooks.on_locked)
		return 0;
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);
	if (n <= 0)
		return dsh_err_sys(err, n < 0 ? errno : EIO, "readlink /proc/self");
	buf[n] = 0;
	c->outer_pid = (pid_t)atoi(buf);
	return 0;
}

static int st_id_maps(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (!c->plan->ids.range)
		return dsh_userns_map_self(c->plan->ids.uid, c->plan->ids.gid, err);
	/* The supervisor writes these maps (a range needs CAP_SETUID where it is): its errno, 0 done. */
	int code = EPIPE;
	ssize_t n;
	while ((n = read(c->ids_fd, &code, sizeof(code))) < 0 && errno == EINTR)
		;
	close(c->ids_fd);
	c->ids_fd = -1;
	if (n != (ssize_t)sizeof(code))
		code = EPIPE;
	if (code != 0)
		return dsh_err_sys(err, code, "map the caller's id ranges (written by the supervisor)");
	return 0;
}

static int st_propagation(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	(void)c;
	return dsh_mount_make_private(err);
}

static int st_network(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (c->plan->ns.net_filter)
		return dsh_sandbox_net_filtered(c->plan, c->net_events_fd, &c->net_service, err);
	if (!c->plan->ns.net)
		return 0;
	return dsh_net_loopback_up(err);
}

/* dshbox bwrap --unshare-uts [--hostname NAME]: made by init, owned by the sandbox's user namespace. */
static int st_uts(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (!c->plan->ns.uts)
		return 0;
	if (unshare(CLONE_NEWUTS) < 0)
		return dsh_err_sys(err, errno, "unshare(CLONE_NEWUTS)");
	const char *h = c->plan->ns.hostname;
	if (h && sethostname(h, strlen(h)) < 0)
		return dsh_err_sys(err, errno, "sethostname '%s'", h);
	return 0;
}

/* dshbox bwrap --unshare-cgroup(-try): rooted at init's cgroup, owned by the sandbox's user namespace. */
static int st_cgroup(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (c->plan->ns.cgroup && unshare(CLONE_NEWCGROUP) < 0)
		return dsh_err_sys(err, errno, "unshare(CLONE_NEWCGROUP)");
	return 0;
}

/* The sorted entries, then any operations in the order given (ns/plan.h), in one apply. */
static int st_mounts(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	return dsh_mount_plan_apply(c->plan->mounts, &c->mount_outcome, err);
}

static int st_lock(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	/*
	 * Keep the outer mount namespace alive until init exits: dropping its last reference here would
	 * unmount its whole tree on the critical path (an RCU grace period per teardown).  The
	 * descriptor is CLOEXEC; the command cannot setns into it without capabilities there.
	 */
	int keep = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (keep < 0)
		return dsh_err_sys(err, errno, "open /proc/self/ns/mnt");
	/* Held by the keeper, not by init, the broker (st_keeper). */
	if (c->mount_outcome.n_held < ARRAY_SIZE(c->mount_outcome.held))
		c->mount_outcome.held[c->mount_outcome.n_held++] = keep;
	if (c->plan->ids.range)
		return dsh_userns_lock_range(err);
	if (c->plan->ids.inner)
		return dsh_userns_lock_as(c->plan->ids.inner_uid, c->plan->ids.inner_gid, c->plan->ids.uid, c->plan->ids.gid, err);
	return dsh_userns_lock(c->plan->ids.uid, c->plan->ids.gid, err);
}

/* The namespaces are final: dshbox bwrap's --info-fd/--json-status-fd report them. */
static int st_on_locked(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (!c->plan->hooks.on_locked)
		return 0;
	return c->plan->hooks.on_locked(c->plan->hooks.on_locked_data, c->outer_pid, err);
}

/*
 * --lock-file: init holds a read lock on each for the sandbox's life, as bubblewrap's pid 1 does
 * (a POSIX lock belongs to init's descriptor table: the command's copies, closed at exec, do not
 * release it).  In the finished tree, before the capability drop, with bubblewrap's words.
 */
static int st_lock_files(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	size_t n = 0;
	while (c->plan->proc.lock_files && c->plan->proc.lock_files[n])
		n++;
	if (n == 0)
		return 0;
	if (!(c->lock_fds = calloc(n, sizeof(int))))
		return dsh_err_sys(err, ENOMEM, "--lock-file");
	for (size_t i = 0; i < n; i++) {
		const char *path = c->plan->proc.lock_files[i];
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return dsh_err_sys(err, errno, "Unable to open lock file %s", path);
		c->lock_fds[c->n_lock_fds++] = fd;
		struct flock l = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
		if (fcntl(fd, F_SETLK, &l) < 0)
			return dsh_err_sys(err, errno, "Unable to lock file %s", path);
	}
	return 0;
}

/*
 * With nothing to re-mask (no r-/-- entry a host-side replacement could take away) the keeper only
 * holds the mounts: the outer mount namespace and the detached clones, whose last reference,
 * dropped, unmounts them and waits for an RCU grace period.  A holder does that for the run and
 * nothing else: it shares init's memory (no page tables copied, which a fork of init costs on
 * every start) and runs nothing but system calls that touch no memory of init's, on a stack of
 * its own, until kill(-1) ends it with the sandbox.
 */
static _Noreturn void hold(const struct dsh_mount_outcome *mo)
{
	/* Out of the sandbox's job, as the keeper: a Ctrl-Z stops the command, never this. */
	(void)setsid();
	int top = -1;
	for (size_t k = 0; k < mo->n_held; k++)
		if (mo->held[k] > top)
			top = mo->held[k];
	/* close_range, never close: it fails on no descriptor, so errno (init's too) stays as it is. */
	for (int fd = 0; fd <= top; fd++) {
		bool held = false;
		for (size_t k = 0; k < mo->n_held && !held; k++)
			held = mo->held[k] == fd;
		if (!held)
			(void)close_range((unsigned)fd, (unsigned)fd, 0);
	}
	(void)close_range((unsigned)top + 1, ~0U, 0);
	for (;;)
		pause(); /* every signal is blocked: only SIGKILL ends it */
}

static int holder_fn(void *p)
{
	hold(p);
}

static int spawn_holder(struct dsh_mount_outcome *mo, struct dsh_error **err)
{
	/* No exit signal: init's last reaping waits for the sandbox's processes, never for this one
	   (its end, unmounting what it held, is left to init's own exit, after the status is out). */
	static char stack[16 * 1024] __attribute__((aligned(16)));
	pid_t pid = dsh_clone_vm(holder_fn, mo, 0, stack, sizeof(stack));
	if (pid < 0)
		return dsh_err_sys(err, errno, "clone the holder of the mounts");
	for (size_t k = 0; k < mo->n_held; k++)
		close(mo->held[k]);
	mo->n_held = 0;
	return 0;
}

/*
 * The keeper (SPEC 3.14, ns/remask.c): forked while init still holds its capabilities in the locked
 * namespace, before the command exists; it re-mounts a protected entry the host replaced.  Without
 * an entry to watch, only a holder of the mounts (above).
 */
static int st_keeper(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (c->keeper_fds[1] >= 0) {
		close(c->keeper_fds[1]);
		c->keeper_fds[1] = -1;
	}
	if (c->keeper_fds[0] < 0)
		return c->mount_outcome.n_held ? spawn_holder(&c->mount_outcome, err) : 0;
	int spare[2];
	dsh_remask_take_spares(c->plan->mounts, spare);
	/* A fork without an exit signal, for the reason the holder has none. */
	pid_t pid = (pid_t)syscall(__NR_clone, 0, 0, 0, 0, 0);
	if (pid < 0) {
		int e = errno;
		for (int i = 0; i < 2; i++)
			if (spare[i] >= 0)
				close(spare[i]);
		return dsh_err_sys(err, e, "fork the keeper");
	}
	const struct dsh_mount_outcome *mo = &c->mount_outcome;
	if (pid == 0) {
		/* Nothing of init's but the request pipe (3), the spares (4, 5) and the mounts the
		   start still holds (6 on), which the keeper keeps for the run.  Each is first copied
		   above the range it lands in, so that no dup2 overwrites one not yet moved. */
		int all[3 + ARRAY_SIZE(mo->held)], moved[3 + ARRAY_SIZE(mo->held)];
		size_t n = 0;
		all[n++] = c->keeper_fds[0];
		all[n++] = spare[0];
		all[n++] = spare[1];
		for (size_t k = 0; k < mo->n_held; k++)
			all[n++] = mo->held[k];
		for (size_t i = 0; i < n; i++)
			moved[i] = all[i] < 0 ? -1 : fcntl(all[i], F_DUPFD_CLOEXEC, 3 + (int)n);
		for (size_t i = 0; i < n; i++) {
			if (all[i] < 0)
				close(3 + (int)i); /* whatever of init's was there */
			else if (moved[i] < 0 || dup2(moved[i], 3 + (int)i) < 0)
				_exit(1);
		}
		(void)close_range(3 + (unsigned)n, ~0U, 0);
		int mine[2] = { spare[0] < 0 ? -1 : 4, spare[1] < 0 ? -1 : 5 };
		dsh_remask_keeper(c->plan->mounts, 3, mine);
	}
	for (int i = 0; i < 2; i++)
		if (spare[i] >= 0)
			close(spare[i]);
	/* The keeper has its copies: init holds none of them while it serves the command. */
	for (size_t k = 0; k < mo->n_held; k++)
		close(mo->held[k]);
	c->mount_outcome.n_held = 0;
	close(c->keeper_fds[0]);
	c->keeper_fds[0] = -1;
	return 0;
}

/*
 * dshbox bwrap --as-pid-1: the next process init makes, the command, is pid 1 of a pid namespace
 * nested in the sandbox's, owned by the locked user namespace; init stays outside it, its parent,
 * with the command's rights once the stages below are taken.  After the keeper, which must not be
 * that first process; before the capability drop, since a new pid namespace needs CAP_SYS_ADMIN.
 */
static int st_pid_1(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (c->plan->proc.as_pid_1 && unshare(CLONE_NEWPID) < 0)
		return dsh_err_sys(err, errno, "unshare(CLONE_NEWPID) for --as-pid-1");
	return 0;
}

/* ---- COMMAND stages: the forked command, before exec ---- */

static int set_pwd(struct dsh_stage_ctx *c, const char *dir)
{
	if (c->plan->proc.pwd_slot)
		snprintf(c->plan->proc.pwd_slot, DSH_PWD_SLOT, "PWD=%s", dir);
	return 0;
}

static int st_chdir(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	/* Always by name, after the mounts: the old cwd may lie on a mount now covered by a clone. */
	const char *cwd = c->plan->policy->cwd ? c->plan->policy->cwd : "/";
	if (chdir(cwd) < 0) {
		int e = errno;
		if (c->plan->proc.cwd_fallback) {
			const char *home = dsh_env_get(c->req->envp, "HOME");
			if ((home && chdir(home) == 0) || chdir(home = "/") == 0)
				return set_pwd(c, home);
		}
		return dsh_err_sys(err, e, "chdir '%s'", cwd);
	}
	return set_pwd(c, cwd);
}

static int st_fds(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	return dsh_fds_close_on_exec(c->req->preserve_fds, c->req->n_preserve_fds, err);
}

static int st_no_new_privs(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	(void)c;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return dsh_err_sys(err, errno, "prctl(PR_SET_NO_NEW_PRIVS)");
	return 0;
}

/*
 * Every capability from every set (the command is root of the nested user namespace until here),
 * the securebits locked: uid 0 (dshbox run by root) must not regain capabilities at execve, or a
 * mode-000 mask would be readable.  Without CAP_SETPCAP (the landlock backend run by an ordinary
 * user) the bounding set and securebits stay; no_new_privs makes them moot.
 */
static int st_caps(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (c->plan->proc.keep_caps)
		return dsh_caps_keep(c->plan->proc.keep_caps, err);
	return dsh_caps_drop_all(NULL, err);
}

/* The second wall (SPEC 3.7): opened by path now, inside the finished tree. */
static int st_landlock(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (!c->plan->landlock)
		return 0;
	/* Without the signal scope: init must still end what it forked before this stage (the keeper)
	   when the run is over.  The abstract-socket scope stays: init is the broker, and a connect it
	   performs for the command must meet the wall the command's own would (st_scope adds both
	   scopes again in the command's layer). */
	struct dsh_landlock_spec s = *c->plan->landlock;
	s.scoped &= ~(uint64_t)LANDLOCK_SCOPE_SIGNAL;
	return dsh_landlock_apply(&s, err);
}

/*
 * A Landlock layer of the command's own holding only the scopes (ABI 6): init, the broker, stays in
 * the parent domain, where the command can neither signal it nor reach its abstract sockets, while
 * init may still look into the command (a parent domain may, SPEC 3.12).
 */
static int st_scope(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	const struct dsh_landlock_spec *ll = c->plan->landlock;
	if (!ll || ll->abi < 6 || !ll->scoped)
		return 0;
	struct dsh_landlock_spec s = { .abi = ll->abi, .scoped = ll->scoped };
	return dsh_landlock_apply(&s, err);
}

/*
 * With host sockets brokered (SPEC 3.11) the filter sends sendmsg to the broker too, and init, the
 * broker, waits for this very sendmsg (the command is its vfork child).  So a child of the command
 * sends the listener, and the command answers that one notification itself: our own call, whose
 * arguments nothing untrusted can touch, let through.  Any other call is refused.
 */
struct sender {
	int sock, listener;
	pid_t command;
};

/* Its sendmsg waits for the command's answer, on a listener this child holds a copy of: with the
   command dead, no one would answer, and no last close would end the wait.  So it dies with it. */
static int sender_fn(void *p)
{
	const struct sender *s = p;
	if (!dsh_die_with(s->command, SIGKILL))
		return 1;
	return dsh_fd_send(s->sock, s->listener) == 0 ? 0 : 1;
}

static int hand_over_served(int sock, int listener)
{
	/* The child shares the command's memory (which is init's): a fork would copy init's page
	   tables for one sendmsg.  It runs on a stack of its own while the command answers it. */
	struct sender snd = { sock, listener, getpid() };
	static char stack[32 * 1024] __attribute__((aligned(16)));
	pid_t pid = dsh_clone_vm(sender_fn, &snd, SIGCHLD, stack, sizeof(stack));
	if (pid < 0)
		return -errno;
	int r = -ETIMEDOUT;
	struct pollfd pf = { listener, POLLIN, 0 };
	if (poll(&pf, 1, 10000) == 1 && (pf.revents & POLLIN)) {
		struct seccomp_notif req;
		memset(&req, 0, sizeof(req));
		r = ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0 ? -errno : 0;
		if (r >= 0) {
			bool ours = (pid_t)req.pid == pid && req.data.nr == __NR_sendmsg;
			struct seccomp_notif_resp resp = { .id = req.id, .error = ours ? 0 : -EPERM,
							   .flags = ours ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0 };
			r = ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 ? -errno : 0;
		}
	}
	if (r < 0)
		kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (r >= 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		r = -EPIPE;
	return r;
}

/*
 * The runtime broker's filter, installed just before the deny filter (SPEC 3.12), or joined with
 * it into one program; its listener goes to init, the broker, which serves it from now on.  The
 * command keeps no copy.
 */
static int st_broker(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	if (!c->plan->notify)
		return 0;
	int listener = -1;
	int r = dsh_seccomp_load_listener(c->joined.insns ? &c->joined : c->plan->notify, &listener, err);
	if (r < 0)
		return r;
	if (c->plan->broker && c->plan->broker->sockets)
		r = hand_over_served(c->broker_sock, listener);
	else
		r = dsh_fd_send(c->broker_sock, listener);
	close(listener);
	if (r < 0)
		return dsh_err_sys(err, -r, "hand the broker its listener");
	return 0;
}

/* Last before exec: after it, even the stages above could not run. */
static int st_seccomp(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	int r = 0;
	if (c->plan->seccomp && !c->joined.insns)
		r = dsh_seccomp_load(c->plan->seccomp, err);
	for (size_t i = 0; r >= 0 && i < c->plan->n_extra_seccomp; i++)
		r = dsh_seccomp_load(&c->plan->extra_seccomp[i], err);
	return r;
}

static int st_exec(struct dsh_stage_ctx *c, struct dsh_error **err)
{
	/* The command keeps the caller's limits (SPEC 3.7): init, which it was cloned from, dumps no
	   core, but kept the caller's hard limit so that this can give the soft one back. */
	if (setrlimit(RLIMIT_CORE, &c->caller_core) < 0)
		return dsh_err_sys(err, errno, "setrlimit(RLIMIT_CORE)");
	sigprocmask(SIG_SETMASK, &c->caller_mask, NULL);
	const char *name = c->plan->proc.exec_name ? c->plan->proc.exec_name : c->req->argv[0];
	int r = dsh_exec_command_as(name, c->req->argv, c->req->envp, &c->exec_exit, err);
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	return r;
}

/*
 * The fixed sequence (STYLE 5); seccomp stays the last row before exec.  Rows marked needs_ns are
 * skipped by the landlock backend, which makes no namespace.
 */
const struct dsh_stage dsh_stages[] = {
	{ "outer pid", DSH_STAGE_INIT, true, st_outer_pid },
	{ "id maps", DSH_STAGE_INIT, true, st_id_maps },
	{ "propagation", DSH_STAGE_INIT, true, st_propagation },
	{ "network", DSH_STAGE_INIT, true, st_network },
	{ "uts", DSH_STAGE_INIT, true, st_uts },
	{ "cgroup", DSH_STAGE_INIT, true, st_cgroup },
	{ "mounts", DSH_STAGE_INIT, true, st_mounts },
	{ "lock", DSH_STAGE_INIT, true, st_lock },
	{ "info", DSH_STAGE_INIT, true, st_on_locked },
	{ "lock files", DSH_STAGE_INIT, true, st_lock_files },
	{ "keeper", DSH_STAGE_INIT, true, st_keeper },
	{ "pid 1", DSH_STAGE_INIT, true, st_pid_1 },
	/* Taken by init, which the command inherits them from: init is the broker, and the broker has
	   exactly the command's rights (SPEC 3.12) — no capability, the same Landlock domain. */
	{ "caps", DSH_STAGE_INIT, false, st_caps },
	{ "no_new_privs", DSH_STAGE_INIT, false, st_no_new_privs },
	{ "landlock", DSH_STAGE_INIT, false, st_landlock },
	{ "chdir", DSH_STAGE_COMMAND, false, st_chdir },
	{ "fds", DSH_STAGE_COMMAND, false, st_fds },
	{ "scope", DSH_STAGE_COMMAND, false, st_scope },
	{ "broker", DSH_STAGE_COMMAND, false, st_broker },
	{ "seccomp", DSH_STAGE_COMMAND, false, st_seccomp },
	{ "exec", DSH_STAGE_COMMAND, false, st_exec },
	{ NULL, DSH_STAGE_INIT, false, NULL },
};

/* ---- helpers shared with the none backend ---- */

/*
 * Every descriptor from lo to hi closed, or marked close-on-exec.  CLOSE_RANGE_CLOEXEC is Linux
 * 5.11; before it (Debian 11's 5.10), or where a seccomp profile refuses close_range, each open
 * descriptor of the range is found in /proc/self/fd.
 */
static int range_apply(unsigned lo, unsigned hi, bool close_them)
{
	if (close_range(lo, hi, close_them ? 0 : CLOSE_RANGE_CLOEXEC) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != EPERM)
		return -1;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int self = dirfd(d);
	for (struct dirent *de; (de = readdir(d));) {
		char *end;
		unsigned long fd = strtoul(de->d_name, &end, 10);
		if (*end || fd < lo || fd > hi || (int)fd == self)
			continue;
		if (close_them) {
			(void)close((int)fd);
			continue;
		}
		int fl = fcntl((int)fd, F_GETFD);
		if (fl >= 0)
			(void)fcntl((int)fd, F_SETFD, fl | FD_CLOEXEC);
	}
	closedir(d);
	return 0;
}

/*
 * Every descriptor above 2 but those in keep closed (close_them), or marked close-on-exec, which
 * the kept ones then lose.
 */
static int apply_outside(const int *keep, size_t n_keep, bool close_them, struct dsh_error **err)
{
	/* Walk the gaps between the kept descriptors, lowest first. */
	unsigned lo = 3;
	for (;;) {
		unsigned next = UINT_MAX;
		for (size_t i = 0; i < n_keep; i++)
			if (keep[i] >= (int)lo && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
		if (next > lo && range_apply(lo, next - 1, close_them) < 0)
			return dsh_err_sys(err, errno, "close_range");
		if (next == UINT_MAX)
			return 0;
		if (!close_them) {
			int fl = fcntl((int)next, F_GETFD);
			if (fl < 0 || fcntl((int)next, F_SETFD, fl & ~FD_CLOEXEC) < 0)
				return dsh_err_sys(err, errno, "--preserve-fd %u", next);
		}
		lo = next + 1;
	}
}

int dsh_fds_close_on_exec(const int *keep, size_t n_keep, struct dsh_error **err)
{
	return apply_outside(keep, n_keep, false, err);
}

int dsh_fds_close_except(const int *keep, size_t n_keep, struct dsh_error **err)
{
	return apply_outside(keep, n_keep, true, err);
}

int dsh_exec_command(char *const *argv, char *const *envp, int *ret_exit, struct dsh_error **err)
{
	return dsh_exec_command_as(argv[0], argv, envp, ret_exit, err);
}

int dsh_exec_command_as(const char *name, char *const *argv, char *const *envp, int *ret_exit,
			struct dsh_error **err)
{
	*ret_exit = 127;
	if (!name || !*name)
		return dsh_err(err, DSH_ERR_USAGE, ENOENT, "empty command name");
	if (strchr(name, '/')) {
		execve(name, argv, envp);
		int e = errno;
		*ret_exit = e == ENOENT || e == ENOTDIR ? 127 : 126;
		return dsh_err_sys(err, e, "'%s'", name);
	}
	struct dsh_path_search ps;
	dsh_path_search_init(&ps, dsh_env_get(envp, "PATH"), name);
	int seen = ENOENT;
	char buf[PATH_MAX];
	for (int r; (r = dsh_path_search_next(&ps, buf, sizeof(buf))) != 0;) {
		if (r < 0)
			continue; /* longer than any path execve takes */
		execve(buf, argv, envp);
		if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP && errno != ENAMETOOLONG)
			seen = errno; /* found but not runnable: remembered, the search goes on */
	}
	*ret_exit = seen == ENOENT ? 127 : 126;
	if (seen == ENOENT)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOENT, "'%s': command not found", name);
	return dsh_err_sys(err, seen, "'%s'", name);
}
