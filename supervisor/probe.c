/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include "common/cleanup.h"
#include "landlock/landlock.h"
#include "supervisor/probe.h"
#include "supervisor/seccomp.h"

static const struct {
	const char *name;
	const char *remedy;
} probes[DSH_PROBE__MAX] = {
	[DSH_PROBE_USERNS] = { "user namespaces",
			       "allow unprivileged user namespaces (see the reason), or use --backend landlock" },
	[DSH_PROBE_MOUNT_API] = { "mount API", "needs Linux 5.12+ (mount_setattr); or use --backend landlock" },
	[DSH_PROBE_LANDLOCK] = { "landlock",
				 "needs Linux 5.13+ with CONFIG_SECURITY_LANDLOCK and 'landlock' in the lsm= boot parameter" },
	[DSH_PROBE_SECCOMP] = { "seccomp", "needs CONFIG_SECCOMP_FILTER; a container runtime may forbid nested filters" },
	[DSH_PROBE_SECCOMP_NOTIFY] = { "seccomp user notification", "needs Linux 5.0+ (SECCOMP_GET_NOTIF_SIZES)" },
	[DSH_PROBE_PIDFD] = { "pidfd", "needs Linux 5.3+ (pidfd_open)" },
	[DSH_PROBE_CLONE3] = { "clone3", "needs Linux 5.3+; dshbox falls back to clone()" },
	[DSH_PROBE_NETNS_LOOPBACK] = { "netns loopback",
				       "network namespaces are refused here: 'network: off' cannot be enforced by linux-ns" },
};

const char *dsh_probe_name(enum dsh_probe_id id)
{
	return id < DSH_PROBE__MAX ? probes[id].name : "?";
}

/* What a probe child sends back. */
struct msg {
	int code;
	int value;
	char step[64];
};

static int failed(struct msg *m, const char *step)
{
	m->code = errno ? errno : EPERM;
	snprintf(m->step, sizeof(m->step), "%s", step);
	return -m->code;
}

static int write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, s, strlen(s));
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* A user + mount namespace with identity maps, the way the linux-ns backend makes it. */
static int enter_userns(struct msg *m)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return failed(m, "unshare(CLONE_NEWUSER|CLONE_NEWNS)");
	if (write_file("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
		return failed(m, "write /proc/self/setgroups");
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		return failed(m, "write /proc/self/uid_map");
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		return failed(m, "write /proc/self/gid_map");
	/* An AppArmor-restricted namespace is created but holds no capability: a mount tells. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return failed(m, "mount(MS_PRIVATE) in the new namespace");
	return 0;
}

static int probe_userns(struct msg *m)
{
	return enter_userns(m);
}

static int probe_mount_api(struct msg *m)
{
	if (enter_userns(m) < 0)
		return -m->code;
	_cleanup_close_ int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return failed(m, "fsopen(tmpfs)");
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return failed(m, "fsconfig(CMD_CREATE)");
	_cleanup_close_ int mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	if (mnt < 0)
		return failed(m, "fsmount");
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	if (syscall(SYS_mount_setattr, mnt, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return failed(m, "mount_setattr");
	_cleanup_close_ int tree = (int)syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		return failed(m, "open_tree(OPEN_TREE_CLONE, AT_RECURSIVE)");
	if (syscall(SYS_move_mount, mnt, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return failed(m, "move_mount");
	return 0;
}

static int probe_landlock(struct msg *m)
{
	int abi = dsh_landlock_abi();
	if (abi < 0) {
		errno = -abi;
		return failed(m, "landlock_create_ruleset(VERSION)");
	}
	m->value = abi;
	return 0;
}

static int probe_seccomp(struct msg *m)
{
	struct dsh_seccomp_prog prog = { 0 };
	_cleanup_error_ struct dsh_error *err = NULL;
	int r = dsh_seccomp_compile(NULL, &prog, &err);
	if (r < 0) {
		errno = -r;
		return failed(m, "compile the filter (libseccomp)");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return failed(m, "prctl(PR_SET_NO_NEW_PRIVS)");
	r = dsh_seccomp_load(&prog, &err);
	dsh_seccomp_prog_clear(&prog);
	if (r < 0) {
		errno = -r;
		return failed(m, "seccomp(SET_MODE_FILTER)");
	}
	if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) >= 0 || errno != EPERM) {
		errno = errno ? errno : EINVAL;
		return failed(m, "filter loaded but keyctl was not refused");
	}
	return 0;
}

static int probe_seccomp_notify(struct msg *m)
{
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return failed(m, "seccomp(GET_NOTIF_SIZES)");
	return 0;
}

static int probe_pidfd(struct msg *m)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (fd < 0)
		return failed(m, "pidfd_open");
	close(fd);
	return 0;
}

static int probe_clone3(struct msg *m)
{
	struct clone_args ca = { .exit_signal = SIGCHLD };
	long pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0)
		return failed(m, "clone3");
	if (pid == 0)
		_exit(0);
	waitpid((pid_t)pid, NULL, 0);
	return 0;
}

static int probe_netns(struct msg *m)
{
	if (enter_userns(m) < 0)
		return -m->code;
	if (unshare(CLONE_NEWNET) < 0)
		return failed(m, "unshare(CLONE_NEWNET)");
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return failed(m, "SIOCGIFFLAGS lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return failed(m, "SIOCSIFFLAGS lo up");
	_cleanup_close_ int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	_cleanup_close_ int cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(a);
	if (srv < 0 || cli < 0 || bind(srv, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(srv, 1) < 0 ||
	    getsockname(srv, (struct sockaddr *)&a, &len) < 0)
		return failed(m, "listen on 127.0.0.1");
	if (connect(cli, (struct sockaddr *)&a, sizeof(a)) < 0)
		return failed(m, "connect to 127.0.0.1");
	return 0;
}

static int (*const probe_fns[DSH_PROBE__MAX])(struct msg *) = {
	[DSH_PROBE_USERNS] = probe_userns,
	[DSH_PROBE_MOUNT_API] = probe_mount_api,
	[DSH_PROBE_LANDLOCK] = probe_landlock,
	[DSH_PROBE_SECCOMP] = probe_seccomp,
	[DSH_PROBE_SECCOMP_NOTIFY] = probe_seccomp_notify,
	[DSH_PROBE_PIDFD] = probe_pidfd,
	[DSH_PROBE_CLONE3] = probe_clone3,
	[DSH_PROBE_NETNS_LOOPBACK] = probe_netns,
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Fork the probe; wait for its message until the deadline, then kill it. */
static void run_bounded(int (*fn)(struct msg *), long long timeout_ms, struct msg *ret)
{
	int p[2];
	memset(ret, 0, sizeof(*ret));
	if (pipe2(p, O_CLOEXEC) < 0) {
		ret->code = errno;
		snprintf(ret->step, sizeof(ret->step), "pipe");
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		ret->code = errno;
		snprintf(ret->step, sizeof(ret->step), "fork");
		close(p[0]), close(p[1]);
		return;
	}
	if (pid == 0) {
		struct msg m = { 0 };
		close(p[0]);
		errno = 0;
		fn(&m);
		_exit(write(p[1], &m, sizeof(m)) == (ssize_t)sizeof(m) ? 0 : 1);
	}
	close(p[1]);
	long long deadline = now_ms() + timeout_ms;
	ssize_t got = -1;
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0)
			break;
		struct pollfd pf = { p[0], POLLIN, 0 };
		int n = poll(&pf, 1, left > 60000 ? 60000 : (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			got = read(p[0], ret, sizeof(*ret));
		if (n != 0)
			break;
	}
	close(p[0]);
	if (got != (ssize_t)sizeof(*ret)) {
		kill(pid, SIGKILL);
		memset(ret, 0, sizeof(*ret));
		ret->code = got < 0 ? ETIMEDOUT : EPIPE;
		snprintf(ret->step, sizeof(ret->step), got < 0 ? "deadline (probeTimeoutMs) passed" : "probe died");
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static long read_sysctl(const char *path)
{
	FILE *f = fopen(path, "re");
	long v;
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Why user namespaces are refused: the well-known switches, read (not guessed from versions). */
static void userns_reason(struct dsh_probe_result *r)
{
	if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0)
		snprintf(r->reason, sizeof(r->reason),
			 "sysctl user.max_user_namespaces is 0 (fix: sysctl -w user.max_user_namespaces=10000)");
	else if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0)
		snprintf(r->reason, sizeof(r->reason),
			 "sysctl kernel.unprivileged_userns_clone is 0 (fix: sysctl -w kernel.unprivileged_userns_clone=1)");
	else if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
		snprintf(r->reason, sizeof(r->reason),
			 "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1): "
			 "give dshbox a profile with 'userns,' or use --backend landlock");
	else if (r->code == EPERM)
		snprintf(r->reason, sizeof(r->reason),
			 "refused with EPERM, no sysctl says why: a container runtime's seccomp profile or an LSM");
}

int dsh_probe_run(enum dsh_probe_id id, long long timeout_ms, struct dsh_probe_result *ret)
{
	struct msg m;
	memset(ret, 0, sizeof(*ret));
	ret->id = id;
	if (id >= DSH_PROBE__MAX || timeout_ms <= 0) {
		ret->code = EINVAL;
		ret->remedy = "internal: bad probe request";
		return -EINVAL;
	}
	run_bounded(probe_fns[id], timeout_ms, &m);
	ret->ok = m.code == 0;
	ret->code = m.code;
	ret->value = m.value;
	memcpy(ret->step, m.step, sizeof(ret->step));
	ret->step[sizeof(ret->step) - 1] = '\0';
	if (ret->ok)
		return 0;
	ret->remedy = probes[id].remedy;
	if (id == DSH_PROBE_USERNS || id == DSH_PROBE_MOUNT_API || id == DSH_PROBE_NETNS_LOOPBACK)
		if (strncmp(ret->step, "unshare(CLONE_NEWUSER", 21) == 0 || strstr(ret->step, "_map") ||
		    strstr(ret->step, "setgroups") || strstr(ret->step, "new namespace"))
			userns_reason(ret);
	return -ret->code;
}

static int backend_needs(const char *backend, const enum dsh_probe_id *ids, size_t n, long long timeout_ms,
			 struct dsh_error **err)
{
	for (size_t i = 0; i < n; i++) {
		struct dsh_probe_result r;
		if (dsh_probe_run(ids[i], timeout_ms, &r) == 0)
			continue;
		dsh_err(err, DSH_ERR_UNSUPPORTED, r.code, "backend '%s': %s unavailable: %s: %s%s%s", backend,
			dsh_probe_name(ids[i]), r.step, strerror(r.code), r.reason[0] ? "; " : "", r.reason);
		dsh_err_hint(err, "%s", r.remedy);
		return -r.code;
	}
	return 0;
}

int dsh_probe_backend_landlock(long long timeout_ms, struct dsh_error **err)
{
	static const enum dsh_probe_id ids[] = { DSH_PROBE_LANDLOCK, DSH_PROBE_SECCOMP };
	return backend_needs("landlock", ids, ARRAY_SIZE(ids), timeout_ms, err);
}
