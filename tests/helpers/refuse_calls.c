/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `refuse_calls --errno ERRNO NAME... -- PROG [ARGS...]`: make the named system calls fail with
 * ERRNO for PROG and everything it starts, then exec PROG.  A seccomp filter (libseccomp, after
 * PR_SET_NO_NEW_PRIVS) stands in for a host that refuses them: Docker's default profile without
 * CAP_SYS_PTRACE (`--errno EPERM process_vm_readv pidfd_getfd`), a kernel without Landlock
 * (`--errno ENOSYS landlock_create_ruleset`).  ERRNO is a name (EPERM, ENOSYS, ...) or a number.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <seccomp.h>

static int parse_errno(const char *s)
{
	static const struct {
		const char *name;
		int value;
	} names[] = { { "EPERM", EPERM }, { "ENOSYS", ENOSYS }, { "EACCES", EACCES }, { "EINVAL", EINVAL },
		      { "EOPNOTSUPP", EOPNOTSUPP }, { "ENOMEM", ENOMEM } };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].value;
	char *end;
	long v = strtol(s, &end, 10);
	return *s && !*end && v > 0 && v < 4096 ? (int)v : -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: refuse_calls --errno ERRNO NAME... -- PROG [ARGS...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[1], "--errno") != 0)
		return usage();
	int err = parse_errno(argv[2]);
	if (err < 0) {
		fprintf(stderr, "refuse_calls: '%s' is not an errno\n", argv[2]);
		return 2;
	}
	int i = 3;
	while (i < argc && strcmp(argv[i], "--") != 0)
		i++;
	if (i == 3 || i + 1 >= argc)
		return usage();
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		fprintf(stderr, "refuse_calls: seccomp_init failed\n");
		return 2;
	}
	for (int k = 3; k < i; k++) {
		int nr = seccomp_syscall_resolve_name(argv[k]);
		if (nr == __NR_SCMP_ERROR) {
			fprintf(stderr, "refuse_calls: unknown system call '%s'\n", argv[k]);
			return 2;
		}
		int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)err), nr, 0);
		if (rc < 0) {
			fprintf(stderr, "refuse_calls: %s: %s\n", argv[k], strerror(-rc));
			return 2;
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("refuse_calls: PR_SET_NO_NEW_PRIVS");
		return 2;
	}
	int rc = seccomp_load(ctx);
	if (rc < 0) {
		fprintf(stderr, "refuse_calls: seccomp_load: %s\n", strerror(-rc));
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "refuse_calls: exec %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
