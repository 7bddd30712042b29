/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "common/cleanup.h"
#include "common/die_with.h"
#include "landlock/landlock.h"
#include "ns/net.h"
#include "ns/sys.h"
#include "policy/options.h"
#include "supervisor/probe.h"
#include "seccomp/seccomp.h"

/* Without a limit from the caller (a zeroed dsh_run_options in a test fixture): the configuration's
   default (policy/config.c). */
#define DEFAULT_TIMEOUT_MS 5000

int dsh_probe_fail(struct dsh_probe_ctx *ctx, const char *step)
{
	ctx->code = errno ? errno : EPERM;
	snprintf(ctx->step, sizeof(ctx->step), "%s", step);
	return -ctx->code;
}

static int write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, s, strlen(s));
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* A user + mount namespace with identity maps, the way the linux-ns backend makes it; once per
   child, so the entries of one backend share it. */
static int enter_userns(struct dsh_probe_ctx *c)
{
	if (c->in_userns)
		return 0;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return dsh_probe_fail(c, "unshare(CLONE_NEWUSER|CLONE_NEWNS)");
	if (write_file("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
		return dsh_probe_fail(c, "write /proc/self/setgroups");
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		return dsh_probe_fail(c, "write /proc/self/uid_map");
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		return dsh_probe_fail(c, "write /proc/self/gid_map");
	/* An AppArmor-restricted namespace is created but holds no capability: a mount tells. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return dsh_probe_fail(c, "mount(MS_PRIVATE) in the new namespace");
	c->in_userns = true;
	return 0;
}

static int probe_userns(struct dsh_probe_ctx *c)
{
	return enter_userns(c);
}

/* The calls ns/mount.c makes, inside a user namespace as runs make them: ENOSYS on old kernels,
   EPERM where the namespace holds no capability. */
static int probe_mount_api(struct dsh_probe_ctx *c)
{
	if (enter_userns(c) < 0)
		return -c->code;
	_cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return dsh_probe_fail(c, "fsopen(tmpfs)");
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return dsh_probe_fail(c, "fsconfig(CMD_CREATE)");
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	if (mnt < 0)
		return dsh_probe_fail(c, "fsmount");
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	if (mount_setattr(mnt, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return dsh_probe_fail(c, "mount_setattr");
	_cleanup_close_ int tree = open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		return dsh_probe_fail(c, "open_tree(OPEN_TREE_CLONE, AT_RECURSIVE)");
	if (move_mount(mnt, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return dsh_probe_fail(c, "move_mount");
	/* Paths are resolved with openat2 (STYLE 11): Linux 5.6. */
	_cleanup_close_ int root = dsh_openat2(AT_FDCWD, "/", O_PATH | O_CLOEXEC, 0, RESOLVE_NO_MAGICLINKS);
	if (root < 0)
		return dsh_probe_fail(c, "openat2(RESOLVE_NO_MAGICLINKS)");
	return 0;
}

static int probe_landlock(struct dsh_probe_ctx *c)
{
	int abi = dsh_landlock_abi();
	if (abi < 0) {
		errno = -abi;
		return dsh_probe_fail(c, "landlock_create_ruleset(VERSION)");
	}
	c->value = abi;
	return 0;
}

static int probe_seccomp(struct dsh_probe_ctx *c)
{
	struct dsh_seccomp_prog prog = { 0 };
	_cleanup_error_ struct dsh_error *err = NULL;
	int r = dsh_seccomp_compile(NULL, &prog, &err);
	if (r < 0) {
		errno = -r;
		return dsh_probe_fail(c, "compile the filter (libseccomp)");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return dsh_probe_fail(c, "prctl(PR_SET_NO_NEW_PRIVS)");
	r = dsh_seccomp_load(&prog, &err);
	dsh_seccomp_prog_clear(&prog);
	if (r < 0) {
		errno = -r;
		return dsh_probe_fail(c, "seccomp(SET_MODE_FILTER)");
	}
	if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) >= 0 || errno != EPERM) {
		errno = errno ? errno : EINVAL;
		return dsh_probe_fail(c, "filter loaded but keyctl was not refused");
	}
	return 0;
}

static int probe_seccomp_notify(struct dsh_probe_ctx *c)
{
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return dsh_probe_fail(c, "seccomp(GET_NOTIF_SIZES)");
	return 0;
}

static int probe_pidfd(struct dsh_probe_ctx *c)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (fd < 0)
		return dsh_probe_fail(c, "pidfd_open");
	close(fd);
	return 0;
}

static int probe_clone3(struct dsh_probe_ctx *c)
{
	struct clone_args ca = { .exit_signal = SIGCHLD };
	long pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0)
		return dsh_probe_fail(c, "clone3");
	if (pid == 0)
		_exit(0);
	waitpid((pid_t)pid, NULL, 0);
	return 0;
}

/* The broker's two routes into a caller (broker/caller.c), tried on ourselves: a container
   runtime's default seccomp profile (Docker's, Kubernetes' RuntimeDefault) refuses both without
   CAP_SYS_PTRACE. */
static int probe_vm_readv(struct dsh_probe_ctx *c)
{
	char src = 'x', dst = 0;
	struct iovec local = { &dst, 1 }, remote = { &src, 1 };
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 1)
		return dsh_probe_fail(c, "process_vm_readv");
	return 0;
}

static int probe_pidfd_getfd(struct dsh_probe_ctx *c)
{
	_cleanup_close_ int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (self < 0)
		return dsh_probe_fail(c, "pidfd_open");
	int fd = (int)syscall(SYS_pidfd_getfd, self, self, 0);
	if (fd < 0)
		return dsh_probe_fail(c, "pidfd_getfd");
	close(fd);
	return 0;
}

/*
 * A fresh procfs, as a run mounts one on /proc (ns/mount.c): in a user + mount + pid namespace, by
 * the pid namespace's first process.  Where /proc has mounts over its entries (a container's masked
 * /proc) the kernel refuses it with EPERM, as one more revealing than the procfs it sees.
 */
static int probe_procfs(struct dsh_probe_ctx *c)
{
	if (enter_userns(c) < 0)
		return -c->code;
	if (unshare(CLONE_NEWPID) < 0)
		return dsh_probe_fail(c, "unshare(CLONE_NEWPID)");
	pid_t pid = fork();
	if (pid < 0)
		return dsh_probe_fail(c, "fork into the new pid namespace");
	if (pid == 0) {
		int fs = fsopen("proc", FSOPEN_CLOEXEC);
		if (fs < 0)
			_exit(1);
		if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
			_exit(2);
		int m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
		_exit(m < 0 ? (errno == EPERM ? 3 : 4) : 0);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	static const char *const steps[] = { "the probe's child died", "fsopen(proc)", "fsconfig(proc, CMD_CREATE)",
					     "fsmount(proc)", "fsmount(proc)" };
	int k = WIFEXITED(st) && WEXITSTATUS(st) <= 4 ? WEXITSTATUS(st) : 0;
	errno = k == 4 ? EINVAL : k == 0 ? ECHILD : EPERM;
	return dsh_probe_fail(c, steps[k]);
}

/* network: off, as a run does it (supervisor/stages.c): a new network namespace owned by the user
   namespace, its loopback brought up by ns/net.c (rtnetlink through libnl); then a TCP connection
   over it, which is what a command inside expects of "loopback only". */
static int probe_netns(struct dsh_probe_ctx *c)
{
	if (enter_userns(c) < 0)
		return -c->code;
	if (unshare(CLONE_NEWNET) < 0)
		return dsh_probe_fail(c, "unshare(CLONE_NEWNET)");
	_cleanup_error_ struct dsh_error *err = NULL;
	int r = dsh_net_loopback_up(&err);
	if (r < 0) {
		errno = -r;
		return dsh_probe_fail(c, err && err->msg ? err->msg : "loopback up (rtnetlink)");
	}
	_cleanup_close_ int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	_cleanup_close_ int cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(a);
	if (srv < 0 || cli < 0 || bind(srv, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(srv, 1) < 0 ||
	    getsockname(srv, (struct sockaddr *)&a, &len) < 0)
		return dsh_probe_fail(c, "listen on 127.0.0.1");
	if (connect(cli, (struct sockaddr *)&a, sizeof(a)) < 0)
		return dsh_probe_fail(c, "connect to 127.0.0.1");
	return 0;
}

/* The one table: `dshbox probe` prints it, the backends' probe slots below run its entries. */
static const struct dsh_probe_entry probe_table[DSH_PROBE__MAX] = {
	[DSH_PROBE_USERNS] = { "user namespaces",
			       "unshare(CLONE_NEWUSER|CLONE_NEWNS), identity uid/gid maps, a mount inside",
			       "allow unprivileged user namespaces (see the reason), or use --backend landlock",
			       probe_userns },
	[DSH_PROBE_MOUNT_API] = { "mount API",
				  "fsopen, fsconfig, fsmount, mount_setattr, open_tree, move_mount and openat2 "
				  "in a user namespace",
				  "needs Linux 5.12+ (mount_setattr); or use --backend landlock", probe_mount_api },
	[DSH_PROBE_LANDLOCK] = { "landlock", "landlock_create_ruleset(LANDLOCK_CREATE_RULESET_VERSION): the ABI",
				 "needs Linux 5.13+ with CONFIG_SECURITY_LANDLOCK and 'landlock' in the lsm= boot parameter",
				 probe_landlock },
	[DSH_PROBE_SECCOMP] = { "seccomp", "dshbox's own filter loads and refuses keyctl with EPERM",
				"needs CONFIG_SECCOMP_FILTER; a container runtime may forbid nested filters",
				probe_seccomp },
	[DSH_PROBE_SECCOMP_NOTIFY] = { "seccomp user notification", "seccomp(SECCOMP_GET_NOTIF_SIZES)",
				       "needs Linux 5.0+ (SECCOMP_GET_NOTIF_SIZES)", probe_seccomp_notify },
	[DSH_PROBE_PIDFD] = { "pidfd", "pidfd_open on itself", "needs Linux 5.3+ (pidfd_open)", probe_pidfd },
	[DSH_PROBE_CLONE3] = { "clone3", "clone3 makes a child", "needs Linux 5.3+; dshbox falls back to clone()",
			       probe_clone3 },
	[DSH_PROBE_NETNS_LOOPBACK] = { "netns loopback",
				       "in a user namespace: unshare(CLONE_NEWNET), loopback up through rtnetlink "
				       "(as runs do), a TCP connection over it",
				       "network namespaces are refused here: 'network: off' cannot be enforced by linux-ns",
				       probe_netns },
	[DSH_PROBE_VM_READV] = { "process_vm_readv", "process_vm_readv on itself (the broker reads calls' arguments so)",
				 "refused by a seccomp profile (a container runtime's default without CAP_SYS_PTRACE): the "
				 "runtime broker reads /proc/PID/mem instead; allow process_vm_readv in the profile to save "
				 "the open per call",
				 probe_vm_readv },
	[DSH_PROBE_PIDFD_GETFD] = { "pidfd_getfd", "pidfd_getfd on itself (the broker takes callers' descriptors so)",
				    "refused by a seccomp profile (a container runtime's default without CAP_SYS_PTRACE): "
				    "the runtime broker reopens through /proc/PID/fd, and protectSockets cannot be served; "
				    "allow pidfd_getfd in the profile (or --cap-add SYS_PTRACE)",
				    probe_pidfd_getfd },
	[DSH_PROBE_PROCFS] = { "fresh procfs",
			       "in a user + pid namespace: fsopen/fsmount(proc), the /proc a run mounts",
			       "a masked /proc (a container's) makes the kernel refuse it: runs refuse, or with "
			       "allowDegraded bind the container's /proc (its processes visible)",
			       probe_procfs },
};

const char *dsh_probe_name(enum dsh_probe_id id)
{
	return id < DSH_PROBE__MAX ? probe_table[id].name : "?";
}

const char *dsh_probe_checks(enum dsh_probe_id id)
{
	return id < DSH_PROBE__MAX ? probe_table[id].checks : "?";
}

/* What a probe child sends back after each entry. */
struct msg {
	int code;
	int value;
	char step[64];
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_step(struct dsh_probe_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_step(struct dsh_probe_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->step, sizeof(r->step), fmt, ap);
	va_end(ap);
}

static _Noreturn void child_main(const struct dsh_probe_entry *table, const size_t *idx, size_t n, int fd, pid_t parent)
{
	struct dsh_probe_ctx ctx = { 0 };
	/* A probe outliving dshbox would hold namespaces for nothing. */
	if (!dsh_die_with(parent, SIGKILL))
		_exit(125);
	for (size_t i = 0; i < n; i++) {
		struct msg m = { 0 };
		ctx.code = 0;
		ctx.value = 0;
		ctx.step[0] = '\0';
		errno = 0;
		int r = table[idx[i]].fn(&ctx);
		if (r < 0 && ctx.code == 0)
			ctx.code = -r;
		m.code = r < 0 ? ctx.code : 0;
		m.value = ctx.value;
		memcpy(m.step, ctx.step, sizeof(m.step));
		/* A message is far below PIPE_BUF: written whole or not at all. */
		if (write(fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
			_exit(1);
		if (r < 0)
			break;
	}
	_exit(0);
}

/*
 * Wait for the child to exit until the deadline: its pidfd when the kernel gives one (Linux 5.3;
 * every backend needs a newer kernel anyway), else the pipe's hang-up, which the child's exit
 * causes too.  Returns true when it exited in time.
 */
static bool wait_exit(int pidfd, int rfd, long long timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return false;
		/* events 0 on the pipe: only its hang-up (all writers gone) wakes us, not a message. */
		struct pollfd pf = pidfd >= 0 ? (struct pollfd){ pidfd, POLLIN, 0 } : (struct pollfd){ rfd, 0, 0 };
		int k = poll(&pf, 1, left > 60000 ? 60000 : (int)left);
		if (k < 0 && errno != EINTR)
			return false;
		if (k > 0)
			return true;
	}
}

/* Whether a seccomp filter applies to this process (/proc/self/status says mode 2). */
static bool seccomp_filtered(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool filtered = false;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Seccomp:", 8) == 0)
			filtered = atoi(line + 8) == SECCOMP_MODE_FILTER;
	return filtered;
}

bool dsh_probe_inside_dshbox(void)
{
	if (!seccomp_filtered())
		return false;
	pid_t pid = getppid();
	for (int depth = 0; pid > 0 && depth < 64; depth++) {
		char path[64], buf[512];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (n <= 0)
			return false;
		buf[n] = '\0';
		/* "PID (COMM) STATE PPID ...": COMM may hold anything, so the last ')' ends it. */
		char *open_ = strchr(buf, '('), *close_ = strrchr(buf, ')');
		if (!open_ || !close_ || close_ < open_)
			return false;
		if ((size_t)(close_ - open_ - 1) == strlen("dshbox") && strncmp(open_ + 1, "dshbox", 6) == 0)
			return true;
		int ppid = 0;
		if (sscanf(close_ + 1, " %*c %d", &ppid) != 1)
			return false;
		pid = ppid;
	}
	return false;
}

/* Why it was refused, when the machine says (supervisor/probe_diagnose.c): into r->reason. */
static void refusal_reason(struct dsh_probe_result *r)
{
	struct dsh_probe_env e;
	struct dsh_probe_diagnosis d;
	dsh_probe_env_read(&e);
	dsh_probe_diagnose(r, &e, &d);
	if (d.cause != DSH_CAUSE_UNKNOWN)
		snprintf(r->reason, sizeof(r->reason), "%.*s", (int)sizeof(r->reason) - 1, d.why);
}

int dsh_probe_run_entries(const struct dsh_probe_entry *table, size_t table_len, const size_t *idx, size_t n,
			  long long timeout_ms, struct dsh_probe_result *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->id = n ? (enum dsh_probe_id)idx[0] : 0;
	bool valid = table && n > 0 && timeout_ms > 0;
	for (size_t i = 0; valid && i < n; i++)
		valid = idx[i] < table_len && table[idx[i]].fn;
	if (!valid) {
		ret->code = EINVAL;
		set_step(ret, "internal: bad probe request");
		ret->remedy = "internal: bad probe request";
		return -EINVAL;
	}

	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		ret->code = errno;
		set_step(ret, "pipe2");
		ret->remedy = table[idx[0]].remedy;
		return -ret->code;
	}
	/* fork, not clone(CLONE_VM|CLONE_VFORK): a vfork parent is suspended until the child exits
	   or execs, and could not enforce the deadline on a child stuck in the kernel. */
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		ret->code = errno;
		set_step(ret, "fork");
		ret->remedy = table[idx[0]].remedy;
		close(p[0]), close(p[1]);
		return -ret->code;
	}
	if (pid == 0) {
		close(p[0]);
		child_main(table, idx, n, p[1], parent);
	}
	close(p[1]);
	_cleanup_close_ int rfd = p[0];
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool exited = wait_exit(pidfd, rfd, timeout_ms);
	if (!exited) {
		/* The pidfd names this child even if the pid were reused; kill(2) is the fallback. */
		if (pidfd < 0 || syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0)
			kill(pid, SIGKILL);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;

	/* Every message the child wrote before it exited or was killed: the first failure decides;
	   when all that answered worked, the next entry is the one that hung or died. */
	size_t got = 0;
	struct msg m;
	while (got < n && read(rfd, &m, sizeof(m)) == (ssize_t)sizeof(m)) {
		ret->id = (enum dsh_probe_id)idx[got];
		got++;
		if (m.code != 0) {
			ret->code = m.code;
			ret->value = m.value;
			memcpy(ret->step, m.step, sizeof(ret->step));
			ret->step[sizeof(ret->step) - 1] = '\0';
			ret->remedy = table[idx[got - 1]].remedy;
			refusal_reason(ret);
			return -ret->code;
		}
		ret->value = m.value;
	}
	if (got == n) {
		ret->ok = true;
		return 0;
	}
	ret->id = (enum dsh_probe_id)idx[got];
	ret->value = 0;
	ret->remedy = table[idx[got]].remedy;
	if (!exited) {
		ret->code = ETIMEDOUT;
		set_step(ret, "no answer within probeTimeoutMs (%lld ms)", timeout_ms);
	} else {
		ret->code = ECHILD;
		if (WIFSIGNALED(status))
			set_step(ret, "the probe child died of signal %d", WTERMSIG(status));
		else
			set_step(ret, "the probe child exited %d without an answer", WEXITSTATUS(status));
	}
	return -ret->code;
}

int dsh_probe_run(enum dsh_probe_id id, long long timeout_ms, struct dsh_probe_result *ret)
{
	size_t i = (size_t)id;
	return dsh_probe_run_entries(probe_table, DSH_PROBE__MAX, &i, 1, timeout_ms, ret);
}

int dsh_probe_require(const struct dsh_probe_entry *table, size_t table_len, const char *backend,
		      const size_t *idx, size_t n, long long timeout_ms, struct dsh_error **err)
{
	struct dsh_probe_result r;
	if (timeout_ms <= 0)
		timeout_ms = DEFAULT_TIMEOUT_MS;
	if (dsh_probe_run_entries(table, table_len, idx, n, timeout_ms, &r) == 0)
		return 0;
	const char *name = (size_t)r.id < table_len ? table[r.id].name : "?";
	int ret;
	if (r.code == ETIMEDOUT) {
		ret = dsh_err(err, DSH_ERR_UNSUPPORTED, ETIMEDOUT,
			      "backend '%s': probe '%s' gave no answer within probeTimeoutMs (%lld ms) and was killed",
			      backend, name, timeout_ms);
		dsh_err_hint(err, "a kernel call hung; raise probeTimeoutMs if this host is slow, or choose --backend");
		return ret;
	}
	if (r.code == ECHILD) /* the step says how it died; strerror(ECHILD) would mislead */
		ret = dsh_err(err, DSH_ERR_UNSUPPORTED, r.code, "backend '%s': probe '%s' failed: %s", backend, name, r.step);
	else
		ret = dsh_err(err, DSH_ERR_UNSUPPORTED, r.code, "backend '%s': %s unavailable: %s: %s%s%s", backend, name,
			      r.step, strerror(r.code), r.reason[0] ? "; " : "", r.reason);
	/* The fix for this machine's cause when one is known (a container's profile, a sysctl), else
	   the entry's general remedy. */
	struct dsh_probe_env e;
	struct dsh_probe_diagnosis d;
	dsh_probe_env_read(&e);
	dsh_probe_diagnose(&r, &e, &d);
	if (d.cause != DSH_CAUSE_UNKNOWN && d.fix[0])
		dsh_err_hint(err, "%s", d.fix);
	else if (r.remedy)
		dsh_err_hint(err, "%s", r.remedy);
	return ret;
}

int dsh_probe_backend_linux_ns(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err)
{
	size_t ids[3] = { DSH_PROBE_USERNS, DSH_PROBE_MOUNT_API };
	size_t n = 2;
	/* The same condition as the run's own (backend_linux_ns.c new_net()): a run that will make a
	   network namespace must not be chosen where one cannot be made. */
	if (!o->network && !(p && dsh_policy_mode(p) == DSH_MODE_DANGER_FULL_ACCESS))
		ids[n++] = DSH_PROBE_NETNS_LOOPBACK;
	return dsh_probe_require(probe_table, DSH_PROBE__MAX, "linux-ns", ids, n, o->probe_timeout_ms, err);
}

int dsh_probe_backend_landlock(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err)
{
	static const size_t ids[] = { DSH_PROBE_LANDLOCK, DSH_PROBE_SECCOMP };
	(void)p;
	return dsh_probe_require(probe_table, DSH_PROBE__MAX, "landlock", ids, ARRAY_SIZE(ids), o->probe_timeout_ms,
				 err);
}

bool dsh_probe_listener_possible(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return true; /* the start will say what is wrong */
	if (pid == 0) {
		struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		struct sock_fprog prog = { 1, &allow };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(0);
		long fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		_exit(fd < 0 && errno == EBUSY ? 1 : 0);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return !(WIFEXITED(st) && WEXITSTATUS(st) == 1);
}

void dsh_run_options_probe_broker(struct dsh_run_options *o)
{
	if (!o->runtime_broker || !seccomp_filtered() || dsh_probe_listener_possible())
		return;
	o->runtime_broker = false;
	o->broker_unavailable = true;
}
