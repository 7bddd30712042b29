/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs inside a sandbox and reports what the kernel let it do, one line on stdout:
 *   probe_access read PATH          "ok" or the errno name (EACCES, ENOENT, ...)
 *   probe_access write PATH TEXT    writes TEXT (a directory: into PATH/.probe-write)
 *   probe_access list DIR NAME      "ok" when NAME is in DIR's listing
 *   probe_access listen-connect     serves on 127.0.0.1, connects to itself: "ok"
 *   probe_access connect IP PORT    tcp connect: "ok" or the errno name
 *   probe_access unix PATH          connect to a unix socket: "ok" or the errno name
 * Exit 0 on "ok", 1 otherwise.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EROFS: return "EROFS";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENETUNREACH: return "ENETUNREACH";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ETIMEDOUT: return "ETIMEDOUT";
	default: return strerror(e);
	}
}

static int fail(int e)
{
	printf("%s\n", errname(e));
	return 1;
}

static int ok(void)
{
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *op = argv[1];
	if (strcmp(op, "read") == 0 && argc == 3) {
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fail(errno);
		char buf[256];
		if (read(fd, buf, sizeof(buf)) < 0)
			return fail(errno);
		return ok();
	}
	if (strcmp(op, "write") == 0 && argc == 4) {
		char path[4096];
		struct stat st;
		if (stat(argv[2], &st) == 0 && S_ISDIR(st.st_mode))
			snprintf(path, sizeof(path), "%s/.probe-write", argv[2]);
		else
			snprintf(path, sizeof(path), "%s", argv[2]);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return fail(errno);
		size_t n = strlen(argv[3]);
		if (write(fd, argv[3], n) != (ssize_t)n)
			return fail(errno);
		if (close(fd) < 0)
			return fail(errno);
		return ok();
	}
	if (strcmp(op, "list") == 0 && argc == 4) {
		DIR *d = opendir(argv[2]);
		if (!d)
			return fail(errno);
		for (struct dirent *de; (de = readdir(d));)
			if (strcmp(de->d_name, argv[3]) == 0)
				return ok();
		return fail(ENOENT);
	}
	if (strcmp(op, "listen-connect") == 0) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof(a);
		if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 1) < 0 ||
		    getsockname(s, (struct sockaddr *)&a, &len) < 0)
			return fail(errno);
		int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
			return fail(errno);
		int x = accept(s, NULL, NULL);
		if (x < 0 || write(c, "x", 1) != 1)
			return fail(errno);
		char b;
		if (read(x, &b, 1) != 1 || b != 'x')
			return fail(EIO);
		return ok();
	}
	if (strcmp(op, "connect") == 0 && argc == 4) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[3])) };
		if (c < 0 || inet_pton(AF_INET, argv[2], &a.sin_addr) != 1)
			return fail(EINVAL);
		if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
			return fail(errno);
		return ok();
	}
	if (strcmp(op, "unix") == 0 && argc == 3) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", argv[2]);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
			return fail(errno);
		return ok();
	}
	return 2;
}
