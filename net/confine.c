/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The service's own walls (SPEC 12.2): it parses what a hostile command sends, so it keeps only
 * what serving needs — no capability, no new privileges, not dumpable (nothing in the sandbox may
 * ptrace it or read its memory), no filesystem at all (Landlock handling every access it knows and
 * granting none), and a seccomp allow-list of the calls an event loop of sockets makes.  Called
 * after dsh_netsvc_prepare(), which opened everything the service will ever open.
 */
#include <errno.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cap-ng.h>
#include <seccomp.h>

#include "net/service.h"

static int drop_caps(struct dsh_error **err)
{
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_apply(CAPNG_SELECT_BOTH) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, EPERM, "the network service: dropping its capabilities failed");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return dsh_err_sys(err, errno, "the network service: PR_SET_NO_NEW_PRIVS");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return dsh_err_sys(err, errno, "the network service: PR_SET_DUMPABLE");
	return 0;
}

/* Every filesystem access this kernel's Landlock knows, handled and never granted. */
static uint64_t fs_all(int abi)
{
	uint64_t a = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1 */
#ifdef LANDLOCK_ACCESS_FS_REFER
	if (abi >= 2)
		a |= LANDLOCK_ACCESS_FS_REFER;
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
	if (abi >= 3)
		a |= LANDLOCK_ACCESS_FS_TRUNCATE;
#endif
#ifdef LANDLOCK_ACCESS_FS_IOCTL_DEV
	if (abi >= 5)
		a |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
#endif
	return a;
}

/* Landlock is a second wall here (the allow-list already refuses every open): a kernel without it
   leaves the allow-list alone, which dsh_netsvc_confine() still loads. */
static int no_filesystem(struct dsh_error **err)
{
	int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1)
		return 0;
	struct landlock_ruleset_attr attr = { .handled_access_fs = fs_all(abi) };
	size_t size = sizeof(attr.handled_access_fs);
#ifdef LANDLOCK_SCOPE_SIGNAL
	/* ABI 6: no signal to the command's processes, no abstract socket of theirs. */
	if (abi >= 6) {
		attr.scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
		size = sizeof(attr);
	}
#endif
	int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return dsh_err_sys(err, errno, "the network service: landlock_create_ruleset");
	int r = (int)syscall(SYS_landlock_restrict_self, fd, 0);
	int e = errno;
	close(fd);
	return r < 0 ? dsh_err_sys(err, e, "the network service: landlock_restrict_self") : 0;
}

/* What libevent's epoll loop, its bufferevents and evdns call, and malloc underneath. */
static const int allowed[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(close),
	SCMP_SYS(recvfrom), SCMP_SYS(sendto), SCMP_SYS(recvmsg), SCMP_SYS(sendmsg),
	SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(connect), SCMP_SYS(shutdown),
	SCMP_SYS(getsockopt), SCMP_SYS(setsockopt), SCMP_SYS(getsockname), SCMP_SYS(getpeername),
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_ctl), SCMP_SYS(poll), SCMP_SYS(ppoll),
	SCMP_SYS(fcntl), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(getrandom),
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(madvise), SCMP_SYS(futex),
	SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigaction), SCMP_SYS(getpid), SCMP_SYS(gettid),
	SCMP_SYS(exit), SCMP_SYS(exit_group),
	/* The spliced relay (splice.c): a pipe each way, bytes moved between its descriptors only. */
	SCMP_SYS(pipe2), SCMP_SYS(splice),
};

static int allow_list(struct dsh_error **err)
{
	/* Anything else fails with EPERM: a refused call is a failed connection, never a way out. */
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = ctx ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	/* Sockets of the internet only (upstream connections, evdns's queries): no unix socket, no
	   netlink, no packet socket. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_INET));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_INET6));
	/* evbuffer_read asks how much is waiting. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, FIONREAD));
	if (r == 0)
		r = seccomp_load(ctx);
	if (ctx)
		seccomp_release(ctx);
	return r < 0 ? dsh_err_sys(err, -r, "the network service: its seccomp allow-list") : 0;
}

int dsh_netsvc_confine(struct dsh_error **err)
{
	int r = drop_caps(err);
	if (r >= 0)
		r = no_filesystem(err);
#if !defined(__SANITIZE_ADDRESS__)
	/* Under AddressSanitizer its runtime makes calls no list can foresee (as for init's filter). */
	if (r >= 0)
		r = allow_list(err);
#else
	(void)allow_list;
#endif
	return r;
}
