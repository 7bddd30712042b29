/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Attacks on whose view the runtime broker resolves a brokered call in (issue 20), run inside
 * `dshbox run` by tests/escape/test_broker_caller.c and tests/integration/test_broker_caller.c.
 * `caller_attack NAME [ARGS...]` tries one attack and prints one "key=value" line per step: a
 * step's value is "ok" when the call succeeded, else the errno's name (EACCES, ENOSYS, ...); what
 * it reads is printed too, so the test judges what came back and whose it was.  Every attack first
 * prints "ran=1", "seccomp=MODE" (its own /proc/self/status: 2 under dshbox's filter) and
 * "brokered=ok|ERRNO" (an O_CREAT open in the current directory, which the broker serves): the
 * proof that the attack ran and brokered creating opens were being answered.
 *
 * The opens that matter carry O_CREAT (or go through openat2): that is what sends them to the
 * broker.  Nothing here writes to a file of the host's /proc: core_pattern is opened for writing
 * without O_TRUNC and closed at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static const char *res(long r)
{
	return r >= 0 ? "ok" : strerrorname_np(errno);
}

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Reads what fd holds (up to cap - 1 bytes), NULs turned into spaces; -1 with errno. */
static ssize_t slurp(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;
	while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) != 0) {
		if (n < 0)
			return -1;
		len += (size_t)n;
	}
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[len] = '\0';
	return (ssize_t)len;
}

/* One "Key:" field of a status file's text, up to the end of its line. */
static void field(const char *text, const char *key, char *val, size_t cap)
{
	snprintf(val, cap, "-");
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, kl) == 0 && l[kl] == ':') {
			const char *v = l + kl + 1;
			v += strspn(v, " \t");
			size_t n = strcspn(v, "\n");
			snprintf(val, cap, "%.*s", (int)(n < cap ? n : cap - 1), v);
			return;
		}
}

/* The lines every attack starts with: it ran, under a seccomp filter (the broker's), and the
   broker answers a creating open. */
static void preamble(void)
{
	out("ran=1");
	char buf[8192], mode[16] = "-";
	int sfd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (sfd >= 0 && slurp(sfd, buf, sizeof(buf)) >= 0)
		field(buf, "Seccomp", mode, sizeof(mode));
	if (sfd >= 0)
		close(sfd);
	out("seccomp=%s", mode);
	errno = 0;
	int fd = open(".caller_attack_probe", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	out("brokered=%s", res(fd));
	if (fd >= 0) {
		close(fd);
		unlink(".caller_attack_probe");
	}
}

/* "/proc/parent/..." stands for the caller's parent (init: pid 1 under linux-ns, dshbox's init
   under the landlock backend), which only the program knows. */
static void expand(const char *in, char *path, size_t cap)
{
	if (strncmp(in, "/proc/parent/", 13) == 0)
		snprintf(path, cap, "/proc/%d/%s", (int)getppid(), in + 13);
	else
		snprintf(path, cap, "%s", in);
}

static int open_as(const char *how, const char *path, int flags)
{
	if (strcmp(how, "openat2") == 0) {
		struct open_how oh = { .flags = (uint64_t)(flags & ~O_CREAT) | O_CLOEXEC };
		return (int)syscall(SYS_openat2, AT_FDCWD, path, &oh, sizeof(oh));
	}
	return openat(AT_FDCWD, path, flags | O_CREAT | O_CLOEXEC, 0600);
}

/*
 * argv: creat|openat2 PATH.  A status file opened for reading through the broker; prints whose it
 * was (Name, Pid) next to who the caller is (self_name, self_pid).
 */
static int a_status(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char path[4096], buf[8192], name[64], pid[32], me[17] = { 0 };
	expand(argv[1], path, sizeof(path));
	prctl(PR_GET_NAME, me);
	out("self_name=%s", me);
	out("self_pid=%d", (int)getpid());
	out("parent_pid=%d", (int)getppid());
	errno = 0;
	int fd = open_as(argv[0], path, O_RDONLY);
	out("open=%s", res(fd));
	if (fd < 0)
		return 0;
	ssize_t n = slurp(fd, buf, sizeof(buf));
	close(fd);
	out("read=%s", res(n));
	if (n < 0)
		return 0;
	field(buf, "Name", name, sizeof(name));
	field(buf, "Pid", pid, sizeof(pid));
	out("name=%s", name);
	out("pid=%s", pid);
	return 0;
}

/* The frame init writes to the supervisor at the end (supervisor/sandbox.c): exit 0, no refusal. */
struct forged_frame {
	int32_t status;
	uint32_t refused;
	char refusal[512];
};

static const char *const routes[] = { "creat", "openat2" };

/*
 * No argv.  Opens /proc/self/fd/N for writing for N in 3..63, by both routes to the broker (an
 * openat with O_CREAT, an openat2), writes a forged "exited 0" frame into every pipe that opened,
 * then exits 7: dshbox must report 7.
 */
static int a_forge_status(int argc, char **argv)
{
	(void)argc, (void)argv;
	struct forged_frame f = { 0 };
	int opened = 0, pipes = 0, written = 0;
	for (size_t r = 0; r < 2; r++)
		for (int n = 3; n < 64; n++) {
			char p[64];
			snprintf(p, sizeof(p), "/proc/self/fd/%d", n);
			int fd = open_as(routes[r], p, O_WRONLY | O_NONBLOCK);
			if (fd < 0)
				continue;
			opened++;
			struct stat st;
			if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
				pipes++;
				if (write(fd, &f, sizeof(f)) == (ssize_t)sizeof(f))
					written++;
				out("%s_pipe=%d", routes[r], n);
			}
			close(fd);
		}
	out("opened=%d", opened);
	out("pipes=%d", pipes);
	out("forged=%d", written);
	return 7;
}

/*
 * argv: HOSTPID.  /proc/self/fd/N/HOSTPID/cmdline for N in 3..63, by both routes: through a
 * descriptor of init's on the host's /proc it reads a host process; prints what came back.
 */
static int a_host_proc(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	int leaked = 0;
	for (size_t r = 0; r < 2; r++)
		for (int n = 3; n < 64; n++) {
			char p[128], buf[1024];
			snprintf(p, sizeof(p), "/proc/self/fd/%d/%s/cmdline", n, argv[0]);
			int fd = open_as(routes[r], p, O_RDONLY);
			if (fd < 0)
				continue;
			if (slurp(fd, buf, sizeof(buf)) >= 0) {
				out("%s_fd%d_cmdline=%s", routes[r], n, buf);
				leaked++;
			}
			close(fd);
		}
	out("read=%d", leaked);
	return 0;
}

/*
 * No argv.  /proc/self/fd/N/sys/kernel/core_pattern opened for writing (never O_TRUNC; closed at
 * once, nothing written) for N in 3..63 by both routes.
 */
static int a_core_pattern(int argc, char **argv)
{
	(void)argc, (void)argv;
	int opened = 0;
	for (size_t r = 0; r < 2; r++)
		for (int n = 3; n < 64; n++) {
			char p[128];
			snprintf(p, sizeof(p), "/proc/self/fd/%d/sys/kernel/core_pattern", n);
			int fd = open_as(routes[r], p, O_WRONLY);
			if (fd < 0)
				continue;
			out("%s_fd%d_core_pattern=ok", routes[r], n);
			opened++;
			close(fd);
		}
	out("opened=%d", opened);
	return 0;
}

/* Whose memory a mem file is: the marker's address read through it, and a byte written through it. */
static volatile char marker[32] = "caller-attack-marker-7f3a";
static volatile char target = 'a';

static void mem_probe(const char *label, const char *how, const char *path)
{
	errno = 0;
	int fd = open_as(how, path, O_RDWR);
	out("%s_open=%s", label, res(fd));
	if (fd < 0)
		return;
	char buf[sizeof(marker)];
	errno = 0;
	ssize_t n = pread(fd, buf, sizeof(buf), (off_t)(uintptr_t)marker);
	out("%s_read=%s", label, res(n));
	out("%s_same=%d", label, n == (ssize_t)sizeof(buf) && memcmp(buf, (const char *)marker, sizeof(buf)) == 0);
	char b = target == 'a' ? 'b' : 'a', was = target;
	errno = 0;
	ssize_t w = pwrite(fd, &b, 1, (off_t)(uintptr_t)&target);
	out("%s_write=%s", label, res(w));
	out("%s_changed=%d", label, target != was);
	close(fd);
}

/*
 * argv: creat|openat2.  /proc/self/mem opened read-write through the broker: its own memory is
 * what it must get (the marker reads back, a written byte shows in the variable); then the
 * parent's, init's, /proc/PPID/mem, and /proc/1/mem, which must not open for writing.
 */
static int a_mem(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	char p[64];
	out("parent_pid=%d", (int)getppid());
	mem_probe("self", argv[0], "/proc/self/mem");
	snprintf(p, sizeof(p), "/proc/%d/mem", (int)getppid());
	mem_probe("parent", argv[0], p);
	mem_probe("pid1", argv[0], "/proc/1/mem");
	return 0;
}

/*
 * argv: NEWNAME.  Renames itself through /proc/self/comm opened with O_CREAT (a shell redirect's
 * flags), then reads the name back without the broker.
 */
static int a_comm(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	errno = 0;
	int fd = open("/proc/self/comm", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	out("open=%s", res(fd));
	if (fd >= 0) {
		errno = 0;
		out("write=%s", res(write(fd, argv[0], strlen(argv[0]))));
		close(fd);
	}
	char buf[64] = "";
	fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		close(fd);
	}
	out("comm=%s", buf);
	return 0;
}

/* argv: PATH.  chattr's ioctls on a file opened read-only: the fsxattr NODUMP flag, then +d and +A. */
static int a_chattr(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	errno = 0;
	int fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	out("open=%s", res(fd));
	if (fd < 0)
		return 0;
	struct fsxattr fx = { 0 };
	errno = 0;
	out("fsgetxattr=%s", res(ioctl(fd, FS_IOC_FSGETXATTR, &fx)));
	fx.fsx_xflags |= FS_XFLAG_NODUMP;
	errno = 0;
	out("fssetxattr=%s", res(ioctl(fd, FS_IOC_FSSETXATTR, &fx)));
	int flags = 0;
	errno = 0;
	out("getflags=%s", res(ioctl(fd, FS_IOC_GETFLAGS, &flags)));
	int set = flags | FS_NODUMP_FL | FS_NOATIME_FL;
	errno = 0;
	out("setflags=%s", res(ioctl(fd, FS_IOC_SETFLAGS, &set)));
	close(fd);
	return 0;
}

static socklen_t abstract_addr(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	size_t n = strnlen(name, sizeof(sa->sun_path) - 1);
	memcpy(sa->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/*
 * argv: STREAM_NAME DGRAM_NAME, two abstract names the host bound.  connect() to the first and
 * sendto() to the second (both brokered); then the same to names this program binds itself,
 * which must work.
 */
static int a_abstract(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	struct sockaddr_un sa;
	socklen_t len;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	len = abstract_addr(&sa, argv[0]);
	errno = 0;
	out("host_connect=%s", res(connect(s, (struct sockaddr *)&sa, len)));
	close(s);
	int d = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	len = abstract_addr(&sa, argv[1]);
	errno = 0;
	out("host_sendto=%s", res(sendto(d, "x", 1, 0, (struct sockaddr *)&sa, len)));
	close(d);

	char own[64];
	snprintf(own, sizeof(own), "%s-own-%d", argv[0], (int)getpid());
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	len = abstract_addr(&sa, own);
	errno = 0;
	out("own_bind=%s", res(bind(l, (struct sockaddr *)&sa, len)));
	listen(l, 4);
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	errno = 0;
	out("own_connect=%s", res(connect(c, (struct sockaddr *)&sa, len)));
	close(c);
	close(l);
	snprintf(own, sizeof(own), "%s-owndgram-%d", argv[1], (int)getpid());
	int r = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	len = abstract_addr(&sa, own);
	bind(r, (struct sockaddr *)&sa, len);
	d = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	errno = 0;
	out("own_sendto=%s", res(sendto(d, "y", 1, 0, (struct sockaddr *)&sa, len)));
	close(d);
	close(r);
	return 0;
}

/*
 * No argv.  Creating calls relative to a directory descriptor of the caller's (not AT_FDCWD): the
 * broker must fetch that descriptor from the caller.  Prints each result.
 */
static int a_create_at(int argc, char **argv)
{
	(void)argc, (void)argv;
	int dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	errno = 0;
	int fd = openat(dir, "at-file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	out("openat_dirfd=%s", res(fd));
	if (fd >= 0)
		close(fd);
	errno = 0;
	out("mkdirat_dirfd=%s", res(mkdirat(dir, "at-dir", 0755)));
	close(dir);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
} attacks[] = {
	{ "status", a_status }, { "forge-status", a_forge_status }, { "host-proc", a_host_proc },
	{ "core-pattern", a_core_pattern }, { "mem", a_mem }, { "comm", a_comm },
	{ "chattr", a_chattr }, { "abstract", a_abstract }, { "create-at", a_create_at },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: caller_attack NAME [ARGS...]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
		if (strcmp(argv[1], attacks[i].name) == 0) {
			preamble();
			return attacks[i].fn(argc - 2, argv + 2);
		}
	fprintf(stderr, "caller_attack: unknown attack '%s'\n", argv[1]);
	return 2;
}
