/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Attacks run inside `dshbox run` by tests/escape/.  `esc_attack NAME [ARGS...]` tries one attack
 * and prints one line per step, "step=RESULT", RESULT being "ok" when the step succeeded (the
 * attack got through) or the errno's name (EPERM, EACCES, ...).  Whatever it manages to read is
 * printed too, so the test can also check that no secret leaked.  Exit status 0 when it ran.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static void step(const char *name, long r)
{
	printf("%s=%s\n", name, r >= 0 ? "ok" : strerrorname_np(errno));
	fflush(stdout);
}
#define TRY(name, call)                         \
	do {                                    \
		errno = 0;                      \
		step(name, (long)(call));       \
	} while (0)

/* Read a file and print what came out (so a leak is visible in the output). */
static void read_leak(const char *name, const char *path)
{
	char buf[256];
	errno = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		step(name, -1);
		return;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		step(name, -1);
		return;
	}
	buf[n] = '\0';
	printf("%s=ok content=%s\n", name, buf);
	fflush(stdout);
}

static int a_tiocsti(int argc, char **argv)
{
	(void)argc, (void)argv;
	char c = '!';
	TRY("tiocsti", ioctl(0, TIOCSTI, &c));
	TRY("tiocsti_high", syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, &c));
	TRY("tiocsti_high2", syscall(SYS_ioctl, 0, (0xdeadUL << 48) | TIOCSTI, &c));
	return 0;
}

static int a_tioclinux(int argc, char **argv)
{
	(void)argc, (void)argv;
	char sub[2] = { 2 /* TIOCL_SETSEL */, 0 };
	TRY("tioclinux", ioctl(0, TIOCLINUX, sub));
	TRY("tioclinux_high", syscall(SYS_ioctl, 0, (1UL << 33) | TIOCLINUX, sub));
	return 0;
}

/* argv: MASKED_PATH (a file or directory under a -- rule), SECRET_FILE inside/at it */
static int a_umount(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	TRY("umount", umount2(argv[0], 0));
	TRY("umount_detach", umount2(argv[0], MNT_DETACH));
	read_leak("read_after", argv[1]);
	return 0;
}

/* argv: RO_DIR (an r- directory), FILE in it */
static int a_remount(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	TRY("remount_rw", mount(NULL, argv[0], NULL, MS_REMOUNT | MS_BIND, NULL));
	TRY("remount_rw_plain", mount(NULL, argv[0], NULL, MS_REMOUNT, NULL));
	struct mount_attr attr = { .attr_clr = MOUNT_ATTR_RDONLY };
	TRY("setattr_rw", syscall(SYS_mount_setattr, AT_FDCWD, argv[0], 0, &attr, sizeof(attr)));
	TRY("write_after", open(argv[1], O_WRONLY | O_APPEND | O_CLOEXEC));
	return 0;
}

/* argv: PARENT (a directory holding a masked entry), MASKED_NAME, TARGET (a writable directory) */
static int a_bind_parent(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	char path[4096];
	TRY("bind", mount(argv[0], argv[2], NULL, MS_BIND, NULL));
	TRY("open_tree", syscall(SYS_open_tree, AT_FDCWD, argv[0], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
	snprintf(path, sizeof(path), "%s/%s", argv[2], argv[1]);
	read_leak("read_via_bind", path);
	return 0;
}

/* unshare -Urm, then the three mount attacks from "inside" it. argv as a_bind_parent + SECRET */
static int a_unshare(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	TRY("unshare_Urm", unshare(CLONE_NEWUSER | CLONE_NEWNS));
	TRY("umount", umount2(argv[3], MNT_DETACH));
	TRY("remount_rw", mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
	TRY("bind", mount(argv[0], argv[2], NULL, MS_BIND, NULL));
	read_leak("read_secret", argv[3]);
	/* and the real program, the way an agent would type it */
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "unshare -Urm sh -c 'umount -l %s; cat %s' 2>/dev/null; echo unshare_prog_status=$?",
		 argv[3], argv[3]);
	fflush(stdout);
	int st = system(cmd);
	(void)st;
	return 0;
}

static int a_mountapi(int argc, char **argv)
{
	(void)argc, (void)argv;
	TRY("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
	TRY("fsconfig", syscall(SYS_fsconfig, 3, 6 /* FSCONFIG_CMD_CREATE */, NULL, NULL, 0));
	TRY("fsmount", syscall(SYS_fsmount, 3, 0, 0));
	TRY("fspick", syscall(SYS_fspick, AT_FDCWD, "/", 0));
	TRY("open_tree", syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | AT_RECURSIVE));
	TRY("move_mount", syscall(SYS_move_mount, AT_FDCWD, "/", AT_FDCWD, "/", 0));
	struct mount_attr attr = { .attr_clr = MOUNT_ATTR_RDONLY };
	TRY("mount_setattr", syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &attr, sizeof(attr)));
	TRY("pivot_root", syscall(SYS_pivot_root, "/", "/"));
	TRY("mount", mount("none", "/", "tmpfs", 0, NULL));
	return 0;
}

static int a_userns(int argc, char **argv)
{
	(void)argc, (void)argv;
	TRY("unshare_user", unshare(CLONE_NEWUSER));
	TRY("unshare_mnt", unshare(CLONE_NEWNS));
	TRY("unshare_net", unshare(CLONE_NEWNET));
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	step("clone_newuser", pid);
	struct clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		_exit(0);
	step("clone3_newuser", pid);
	TRY("setns", setns(0, CLONE_NEWUSER));
	return 0;
}

static int a_kernel(int argc, char **argv)
{
	(void)argc, (void)argv;
	TRY("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0, 0, 0));
	TRY("add_key", syscall(SYS_add_key, "user", "dshbox", "x", 1, -3));
	TRY("request_key", syscall(SYS_request_key, "user", "dshbox", NULL, -3));
	union {
		char raw[128];
	} attr = { { 0 } };
	TRY("bpf", syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, &attr, sizeof(attr)));
	struct {
		unsigned type, size;
		char rest[120];
	} pe = { 1 /* PERF_TYPE_SOFTWARE */, 128, { 0 } };
	TRY("perf_event_open", syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0));
	TRY("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC));
	char params[120] = { 0 };
	TRY("io_uring_setup", syscall(SYS_io_uring_setup, 4, params));
	struct {
		unsigned bytes;
		int type;
		unsigned char h[8];
	} fh = { 8, 1, { 2, 0, 0, 0, 0, 0, 0, 0 } };
	TRY("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY));
	TRY("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
	TRY("init_module", syscall(SYS_init_module, NULL, 0, ""));
	return 0;
}

/* Every way to reach another process's memory or descriptors, tried on pid; prefix names the steps. */
static void reach_process(const char *prefix, pid_t pid)
{
	char name[64], buf[16], remote[16] = "x";
	struct iovec l = { buf, sizeof(buf) }, r = { remote, sizeof(remote) };
	snprintf(name, sizeof(name), "ptrace_attach_%s", prefix);
	TRY(name, ptrace(PTRACE_ATTACH, pid, 0, 0));
	snprintf(name, sizeof(name), "ptrace_seize_%s", prefix);
	TRY(name, ptrace(PTRACE_SEIZE, pid, 0, 0));
	/* A real buffer: with nothing to copy the kernel answers 0 before it looks at the process. */
	snprintf(name, sizeof(name), "process_vm_readv_%s", prefix);
	TRY(name, syscall(SYS_process_vm_readv, pid, &l, 1, &r, 1, 0));
	snprintf(name, sizeof(name), "process_vm_writev_%s", prefix);
	TRY(name, syscall(SYS_process_vm_writev, pid, &l, 1, &r, 1, 0));
	errno = 0;
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	snprintf(name, sizeof(name), "pidfd_getfd_%s", prefix);
	if (pfd < 0) {
		step(name, -1); /* the pidfd_open's errno: the process is not even nameable */
		return;
	}
	TRY(name, syscall(SYS_pidfd_getfd, pfd, 0, 0));
	close(pfd);
}

static int a_ptrace1(int argc, char **argv)
{
	(void)argc, (void)argv;
	reach_process("1", 1);
	/* The command's parent: init, the broker, in both backends. */
	reach_process("ppid", getppid());
	return 0;
}

/* The same from a user namespace of the command's own (nestedSandbox): every capability there. */
static int a_ptrace1_userns(int argc, char **argv)
{
	TRY("unshare_user", unshare(CLONE_NEWUSER));
	return a_ptrace1(argc, argv);
}

/* argv: HOST_PID (a process outside the sandbox, same user) */
static int a_ptrace_out(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	reach_process("out", atoi(argv[0]));
	return 0;
}

/* A process of the sandbox's own, traced and read: what debuggers, strace and LeakSanitizer do. */
static int a_ptrace_sibling(int argc, char **argv)
{
	(void)argc, (void)argv;
	static char mark[16] = "sibling-mark";
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		for (;;)
			pause();
	}
	TRY("ptrace_seize_child", ptrace(PTRACE_SEIZE, child, 0, 0));
	TRY("ptrace_interrupt_child", ptrace(PTRACE_INTERRUPT, child, 0, 0));
	int st;
	TRY("waitpid_child", waitpid(child, &st, __WALL));
	errno = 0;
	long word = ptrace(PTRACE_PEEKDATA, child, mark, 0);
	step("ptrace_peek_child", errno ? -1 : 0);
	printf("peeked=%s\n", errno == 0 && memcmp(&word, mark, sizeof(word)) == 0 ? "mark" : "?");
	TRY("ptrace_detach_child", ptrace(PTRACE_DETACH, child, 0, 0));
	char buf[sizeof(mark)] = "";
	struct iovec l = { buf, sizeof(buf) }, r = { mark, sizeof(mark) };
	TRY("process_vm_readv_child", syscall(SYS_process_vm_readv, child, &l, 1, &r, 1, 0));
	printf("read=%s\n", strcmp(buf, mark) == 0 ? "mark" : "?");
	int pfd = (int)syscall(SYS_pidfd_open, child, 0);
	TRY("pidfd_getfd_child", pfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pfd, 1, 0));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}

/* argv: HOST_PID (a process outside the sandbox) */
static int a_signal(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	pid_t pid = atoi(argv[0]);
	TRY("kill_term", kill(pid, SIGTERM));
	TRY("kill_0", kill(pid, 0));
	TRY("kill_ppid", kill(getppid(), SIGTERM));
	return 0;
}

/* argv: HOST_PID, SECRET_NAME (a file in that process's cwd and root) */
static int a_procroot(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char path[4096];
	snprintf(path, sizeof(path), "/proc/%s/cwd/%s", argv[0], argv[1]);
	read_leak("proc_cwd", path);
	snprintf(path, sizeof(path), "/proc/%s/root/%s", argv[0], argv[1]);
	read_leak("proc_root", path);
	return 0;
}

/* argv: SECRET (a masked file), DIR (a writable directory) */
static int a_links(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char sl[4096], hl[4096];
	snprintf(sl, sizeof(sl), "%s/esc-symlink", argv[1]);
	snprintf(hl, sizeof(hl), "%s/esc-hardlink", argv[1]);
	TRY("symlink", symlink(argv[0], sl));
	read_leak("read_symlink", sl);
	TRY("hardlink", link(argv[0], hl));
	TRY("hardlink_at", linkat(AT_FDCWD, argv[0], AT_FDCWD, hl, 0));
	read_leak("read_hardlink", hl);
	return 0;
}

/* argv: FILE (writable), RO_DIR */
static int a_rename_ro(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char dst[4096];
	snprintf(dst, sizeof(dst), "%s/esc-renamed", argv[1]);
	TRY("rename", rename(argv[0], dst));
	TRY("create", open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	return 0;
}

/* argv: FROM TO [exchange]: one renameat2, RENAME_EXCHANGE with "exchange" (a directory moved whole). */
static int a_rename_dir(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	unsigned flags = argc > 2 && strcmp(argv[2], "exchange") == 0 ? RENAME_EXCHANGE : 0;
	TRY("rename", syscall(SYS_renameat2, AT_FDCWD, argv[0], AT_FDCWD, argv[1], flags));
	return 0;
}

/* argv: TARGET NAME: one symlink(2). */
static int a_symlink_to(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	TRY("symlink", symlink(argv[0], argv[1]));
	return 0;
}

/* argv: FROM TO: one linkat(2) that does not follow FROM (a symlink gets a second name). */
static int a_link_to(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	TRY("link", linkat(AT_FDCWD, argv[0], AT_FDCWD, argv[1], 0));
	return 0;
}

/* argv: DIR NAME: an unnamed file made in DIR with O_TMPFILE, written, then given NAME by linkat(2)
   through /proc/self/fd (a name that no open(2) of NAME ever asked for). */
static int a_tmpfile_link(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	errno = 0;
	int fd = open(argv[0], O_TMPFILE | O_WRONLY | O_CLOEXEC, 0755);
	step("tmpfile", fd);
	if (fd < 0)
		return 0;
	TRY("tmpwrite", write(fd, "#!/bin/sh\n", 10));
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	TRY("link", linkat(AT_FDCWD, proc, AT_FDCWD, argv[1], AT_SYMLINK_FOLLOW));
	close(fd);
	return 0;
}

/* argv: PATH CONTENT: open(2) with O_CREAT (a new file, or the one there truncated) and write. */
static int a_write_file(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	errno = 0;
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0 && write(fd, argv[1], strlen(argv[1])) < 0) {
		close(fd);
		fd = -1;
	}
	step("write", fd);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* argv: PATH: mknod(2) of a fifo (a new name that is neither file nor directory). */
static int a_make_fifo(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	TRY("mknod", mknod(argv[0], S_IFIFO | 0644, 0));
	return 0;
}

/* argv: PATH: bind(2) a unix socket there (a new name, like mknod). */
static int a_bind_name(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[0]);
	TRY("bind", bind(s, (struct sockaddr *)&sa, sizeof(sa)));
	return 0;
}

/* argv: FD */
static int a_inherited(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	int fd = atoi(argv[0]);
	TRY("write_fd", write(fd, "pwned\n", 6));
	TRY("fcntl_fd", fcntl(fd, F_GETFD));
	return 0;
}

static void proc_field(pid_t pid, const char *key, char *out, size_t n)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0) {
			snprintf(out, n, "%s", line + strlen(key));
			out[strcspn(out, "\n")] = '\0';
		}
	fclose(f);
}

/* argv: SETUID_BINARY: run it (it waits for a password on our pipe) and read its credentials */
static int a_setuid(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	int p[2];
	if (pipe(p) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[0], 0);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execl(argv[0], argv[0], (char *)NULL);
		_exit(127);
	}
	char name[64] = "", uid[128] = "", capeff[64] = "";
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (int i = 0; i < 200; i++) { /* until the exec has happened (name changes), 2 s at most */
		proc_field(pid, "Name:\t", name, sizeof(name));
		if (strncmp(name, base, 15) == 0)
			break;
		usleep(10000);
	}
	proc_field(pid, "Uid:\t", uid, sizeof(uid));
	proc_field(pid, "CapEff:\t", capeff, sizeof(capeff));
	unsigned r = 0, e = 0;
	sscanf(uid, "%u %u", &r, &e);
	char mine[64] = "";
	proc_field(getpid(), "CapEff:\t", mine, sizeof(mine));
	printf("exec=%s euid=%u ruid=%u capeff=%s myuid=%u mycapeff=%s\n", name, e, r, capeff, (unsigned)getuid(), mine);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

/* argv: DEVICE */
static int a_rawdisk(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	TRY("open_rdonly", open(argv[0], O_RDONLY | O_CLOEXEC));
	TRY("open_rdwr", open(argv[0], O_RDWR | O_CLOEXEC));
	TRY("mknod", mknod("esc-disk", S_IFBLK | 0600, makedev(253, 0)));
	return 0;
}

static int a_sysrq(int argc, char **argv)
{
	(void)argc, (void)argv;
	int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	step("open_sysrq", fd);
	if (fd >= 0)
		TRY("write_sysrq", write(fd, "h", 1));
	/* core_pattern: a pipe there runs a program as root on the host at the next crash */
	TRY("open_core_pattern", open("/proc/sys/kernel/core_pattern", O_WRONLY | O_CLOEXEC));
	TRY("open_drop_caches", open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC));
	return 0;
}

/* argv: SOCKET_PATH */
static int a_unix_connect(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[0]);
	TRY("connect", connect(s, (struct sockaddr *)&sa, sizeof(sa)));
	return 0;
}

/* argv: ABSTRACT_NAME */
static int a_abstract(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(argv[0]);
	memcpy(sa.sun_path + 1, argv[0], n);
	TRY("connect_abstract",
	    connect(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)));
	return 0;
}

static int a_vsock(int argc, char **argv)
{
	(void)argc, (void)argv;
	TRY("socket_vsock", socket(AF_VSOCK, SOCK_STREAM, 0));
	TRY("socket_vsock_dgram", socket(AF_VSOCK, SOCK_DGRAM, 0));
	TRY("socket_vsock_high", syscall(SYS_socket, (1UL << 32) | AF_VSOCK, SOCK_STREAM, 0));
	return 0;
}

/* i386 getpid (20) through int 0x80, in a child: some kernels kill the caller outright. */
static int a_int80(int argc, char **argv)
{
	(void)argc, (void)argv;
#ifndef __x86_64__
	puts("int80=not x86-64");
	return 0;
#else
	pid_t pid = fork();
	if (pid == 0) {
		long ret = 20;
		__asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "r8", "r9", "r10", "r11");
		printf("int80_ret=%ld\n", ret);
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("int80_signal=%s\n", sigabbrev_np(WTERMSIG(st)));
	errno = 0;
	long r = syscall(0x40000000 | SYS_getpid);
	step("x32_getpid", r);
	return 0;
#endif
}

static int a_personality(int argc, char **argv)
{
	(void)argc, (void)argv;
	TRY("addr_no_randomize", personality(PER_LINUX | ADDR_NO_RANDOMIZE));
	TRY("read_implies_exec", personality(PER_LINUX | READ_IMPLIES_EXEC));
	TRY("query", personality(0xffffffff));
	return 0;
}

/* Crash with the largest core limit we can get; report whether a core was dumped. */
static int a_core(int argc, char **argv)
{
	(void)argc, (void)argv;
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	TRY("raise_core_limit", setrlimit(RLIMIT_CORE, &rl));
	getrlimit(RLIMIT_CORE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_CORE, &rl);
	TRY("set_dumpable", prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
	printf("core_limit=%llu\n", (unsigned long long)rl.rlim_cur);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		abort();
	}
	int st;
	waitpid(pid, &st, 0);
	printf("core_dumped=%d\n", WIFSIGNALED(st) && WCOREDUMP(st) ? 1 : 0);
	return 0;
}

/* argv: MARKER: leave a daemon behind (double fork + setsid), then exit at once. */
static int a_daemon(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		if (fork() == 0) {
			signal(SIGHUP, SIG_IGN);
			signal(SIGTERM, SIG_IGN);
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0), dup2(null, 1), dup2(null, 2);
			execlp("sleep", "sleep", "30", argv[0], (char *)NULL);
			_exit(0);
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	printf("daemon=started\n");
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} attacks[] = {
	{ "tiocsti", a_tiocsti },     { "tioclinux", a_tioclinux },   { "umount", a_umount },
	{ "remount", a_remount },     { "bind-parent", a_bind_parent }, { "unshare", a_unshare },
	{ "mountapi", a_mountapi },   { "userns", a_userns },         { "kernel", a_kernel },
	{ "ptrace1", a_ptrace1 },     { "ptrace-out", a_ptrace_out }, { "ptrace1-userns", a_ptrace1_userns }, { "ptrace-sibling", a_ptrace_sibling },
	{ "signal", a_signal },         { "procroot", a_procroot },
	{ "links", a_links },         { "rename-ro", a_rename_ro },   { "rename-dir", a_rename_dir },
	{ "symlink-to", a_symlink_to }, { "link-to", a_link_to }, { "tmpfile-link", a_tmpfile_link }, { "bind-name", a_bind_name },
	{ "write-file", a_write_file }, { "make-fifo", a_make_fifo },   { "inherited", a_inherited },
	{ "setuid", a_setuid },       { "rawdisk", a_rawdisk },       { "sysrq", a_sysrq },
	{ "unix-connect", a_unix_connect }, { "abstract", a_abstract }, { "vsock", a_vsock },
	{ "int80", a_int80 },         { "personality", a_personality }, { "core", a_core },
	{ "daemon", a_daemon },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: esc_attack NAME [ARGS...]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
		if (strcmp(argv[1], attacks[i].name) == 0)
			return attacks[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "esc_attack: unknown attack '%s'\n", argv[1]);
	return 2;
}
