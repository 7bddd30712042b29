/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "common/cleanup.h"
#include "seccomp/seccomp.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080 /* Linux 5.6; unshare() only: in clone() the low byte is the exit signal */
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef __NR_open_tree_attr
#if defined(__alpha__) || defined(__mips__) || defined(__ia64__)
#error "__NR_open_tree_attr: this architecture numbers its syscalls apart; take it from newer kernel headers"
#endif
/* Linux 6.15; the build headers (6.1) predate it.  Since 424 every other architecture shares one number. */
#define __NR_open_tree_attr 467
#endif
_Static_assert(__NR_open_tree_attr <= DSH_SECCOMP_NEWEST_NR, "a rule above the reviewed horizon is never reached");
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64) /* Linux 6.6 */
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
/* The x32 ABI's bit in the syscall number (x86-64); libseccomp's own program refuses those. */
#define X32_SYSCALL_BIT 0x40000000U

#define RW(n, c, d, e, w, when) { #n, __NR_##n, c, d, e, w, when }
#define R(n, c, d, e, w) RW(n, c, d, e, w, DSH_SC_EVERY_RUN)
#define DENY(n, w) R(n, DSH_SC_ALWAYS, 0, EPERM, w)
#define DENY_SYSV(n, w) RW(n, DSH_SC_ALWAYS, 0, EPERM, w, DSH_SC_NO_IPCNS)
/* Refused unless nestedSandbox: the calls a sandbox inside the sandbox needs. */
#define DENY_NN(n, w) RW(n, DSH_SC_ALWAYS, 0, EPERM, w, DSH_SC_NOT_NESTED)

static const struct dsh_seccomp_rule rules[] = {
	/* The mount family: the tree is complete and locked; nothing inside may change it.  With
	   nestedSandbox these are allowed, as is a new user namespace: the command holds no capability
	   over the sandbox's mounts, and in a user namespace of its own they are locked by the kernel
	   (tests/escape: nested_sandbox_keeps_the_mounts_locked). */
	DENY_NN(mount, "mount table is fixed (SPEC 3.7)"),
	DENY_NN(umount2, "mount table is fixed: uncovering a mask"),
	DENY_NN(pivot_root, "mount table is fixed"),
	DENY_NN(open_tree, "new mount API: cloning a subtree could uncover a mask"),
	DENY_NN(move_mount, "new mount API"),
	DENY_NN(fsopen, "new mount API"),
	DENY_NN(fsconfig, "new mount API"),
	DENY_NN(fsmount, "new mount API"),
	DENY_NN(fspick, "new mount API: reconfiguring a superblock (remount read-write)"),
	DENY_NN(mount_setattr, "new mount API: clearing read-only"),
	DENY_NN(open_tree_attr, "new mount API (Linux 6.15): open_tree that also sets attributes"),
	/* statmount and listmount (Linux 6.8) stay allowed: read-only queries of the caller's own
	   mount namespace, the same facts /proc/self/mountinfo shows; other namespaces need
	   CAP_SYS_ADMIN over them. */
	/* Namespaces: a new user namespace gives back every capability and a fresh mount table. */
	RW(unshare, DSH_SC_UNSHARE_NS, 0, EPERM, "new namespaces (nested user namespaces regain capabilities)",
	   DSH_SC_NOT_NESTED),
	RW(clone, DSH_SC_CLONE_NS, 0, EPERM, "new namespaces through clone flags", DSH_SC_NOT_NESTED),
	R(clone3, DSH_SC_ALWAYS, 0, ENOSYS,
	  "its flags live in memory a filter cannot read: ENOSYS makes libc fall back to clone()"),
	DENY_NN(setns, "joining another namespace"),
	/* Kernel attack surface an ordinary build or script never needs. */
	DENY(keyctl, "kernel keyrings are shared per user, not per sandbox"),
	DENY(add_key, "kernel keyrings"),
	DENY(request_key, "kernel keyrings"),
	DENY(bpf, "eBPF: large kernel attack surface"),
	DENY(perf_event_open, "performance events: side channels, attack surface"),
	DENY(userfaultfd, "stalls kernel page faults: a classic exploit primitive"),
	DENY(io_uring_setup, "io_uring: bypasses per-syscall filtering, large attack surface"),
	DENY(io_uring_enter, "io_uring"),
	DENY(io_uring_register, "io_uring"),
	DENY(open_by_handle_at, "opens files by handle, around the mount tree (shocker)"),
	DENY(name_to_handle_at, "file handles: pairs with open_by_handle_at"),
	DENY(kexec_load, "replacing the kernel"),
	DENY(kexec_file_load, "replacing the kernel"),
	DENY(init_module, "kernel modules"),
	DENY(finit_module, "kernel modules"),
	DENY(delete_module, "kernel modules"),
	DENY(acct, "process accounting writes a host file"),
	DENY(swapon, "swap"),
	DENY(swapoff, "swap"),
	DENY(reboot, "reboot"),
	DENY(quotactl, "quotas"),
	DENY(quotactl_fd, "quotas, by descriptor (Linux 5.14): found reviewing up to the horizon"),
	/* ptrace, process_vm_readv/writev and pidfd_getfd stay allowed (SPEC 3.7): debuggers, strace
	   and LeakSanitizer need them, and they cannot leave the sandbox.  The kernel asks
	   ptrace_may_access() for each: in linux-ns only the sandbox's own pid namespace can be named;
	   in either backend a process outside the command's Landlock domain is refused (a domain may
	   trace only itself and its children), and init, the broker, sits in the parent domain, is not
	   dumpable, and its memory belongs to the host's user namespace, where the command holds no
	   CAP_SYS_PTRACE.  tests/escape/test_escape.c ptrace_pid_1 and ptrace_outside keep it so. */
	/* Terminal injection: typing commands into the caller's shell. */
	R(ioctl, DSH_SC_IOCTL_REQ, TIOCSTI, EPERM, "TIOCSTI types into the caller's terminal"),
	R(ioctl, DSH_SC_IOCTL_REQ, TIOCLINUX, EPERM, "TIOCLINUX pastes console selections"),
	R(ioctl, DSH_SC_IOCTL_REQ, TIOCSETD, EPERM,
	  "TIOCSETD swaps the caller's terminal's line discipline (N_NULL kills it) and autoloads ldisc modules"),
	R(ioctl, DSH_SC_IOCTL_REQ, TIOCCONS, EPERM, "TIOCCONS redirects the system console to this terminal"),
	/* Sockets that leave every namespace. */
	R(socket, DSH_SC_SOCKET_FAMILY, AF_VSOCK, EPERM, "AF_VSOCK reaches the hypervisor and other VMs"),
	/* Execution domains: a personality can disable ASLR (ADDR_NO_RANDOMIZE) or READ_IMPLIES_EXEC. */
	R(personality, DSH_SC_PERSONALITY, 0, EPERM, "only PER_LINUX (and the query)"),
	/* Backend-specific: what a namespace does in linux-ns, refused outright where there is none. */
	RW(socket, DSH_SC_SOCKET_NOT_UNIX, 0, EPERM, "network off without a namespace", DSH_SC_NO_NETNS),
	/* SysV objects live in the IPC namespace; without one they are the host's, found by key or by
	   a guessed id, and 0666 ones are common.  The whole family, so the refusal reads the same
	   everywhere (shmdt could only fail: nothing can be attached). */
	DENY_SYSV(shmget, "SysV shm of the host (no IPC namespace)"),
	DENY_SYSV(shmat, "SysV shm of the host, by id"),
	DENY_SYSV(shmctl, "SysV shm of the host: IPC_RMID, IPC_SET"),
	DENY_SYSV(shmdt, "SysV shm (the family)"),
	DENY_SYSV(msgget, "SysV message queues of the host"),
	DENY_SYSV(msgsnd, "SysV message queues of the host, by id"),
	DENY_SYSV(msgrcv, "SysV message queues of the host, by id"),
	DENY_SYSV(msgctl, "SysV message queues of the host: IPC_RMID, IPC_SET"),
	DENY_SYSV(semget, "SysV semaphores of the host"),
	DENY_SYSV(semop, "SysV semaphores of the host, by id"),
	DENY_SYSV(semtimedop, "SysV semaphores of the host, by id"),
	DENY_SYSV(semctl, "SysV semaphores of the host: SETVAL, IPC_RMID"),
#ifdef __NR_ipc
	DENY_SYSV(ipc, "the SysV multiplexer of some architectures"),
#endif
	/* POSIX message queues are named in the IPC namespace too.  Landlock refuses mq_open there
	   (the queue lives on the kernel's internal mqueue mount, beneath no grant), but not
	   mq_unlink: found by the escape suite, the command could delete the host's queues.  The
	   calls on a descriptor stay: one can only come from the caller (--preserve-fd). */
	DENY_SYSV(mq_open, "POSIX message queues of the host, by name"),
	DENY_SYSV(mq_unlink, "POSIX message queues of the host: removing one"),
};

const struct dsh_seccomp_rule *dsh_seccomp_rules(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(rules);
	return rules;
}

const char *dsh_seccomp_cond_to_string(enum dsh_seccomp_cond c)
{
	switch (c) {
	case DSH_SC_ALWAYS:
		return "always";
	case DSH_SC_CLONE_NS:
		return "flags & CLONE_NEW*";
	case DSH_SC_UNSHARE_NS:
		return "flags & CLONE_NEW*";
	case DSH_SC_IOCTL_REQ:
		return "(request & 0xffffffff) ==";
	case DSH_SC_SOCKET_FAMILY:
		return "family ==";
	case DSH_SC_SOCKET_NOT_UNIX:
		return "family != AF_UNIX";
	case DSH_SC_PERSONALITY:
		return "persona not in {PER_LINUX, 0xffffffff}";
	}
	return "?";
}

const char *dsh_seccomp_when_to_string(enum dsh_seccomp_when w)
{
	switch (w) {
	case DSH_SC_EVERY_RUN:
		return "every run";
	case DSH_SC_NO_NETNS:
		return "network off without a namespace (landlock backend)";
	case DSH_SC_NO_IPCNS:
		return "no IPC namespace (landlock backend)";
	case DSH_SC_NOT_NESTED:
		return "unless nestedSandbox";
	}
	return "?";
}

/* Namespace flags of clone() (no CLONE_NEWTIME: its bit is part of the exit signal there). */
static const uint64_t clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

static int add_rule(scmp_filter_ctx ctx, const struct dsh_seccomp_rule *r, struct dsh_error **err)
{
	uint32_t act = SCMP_ACT_ERRNO((uint32_t)r->errno_value);
	int rc = 0;
	switch (r->cond) {
	case DSH_SC_ALWAYS:
		rc = seccomp_rule_add(ctx, act, r->nr, 0);
		break;
	case DSH_SC_UNSHARE_NS:
		rc = seccomp_rule_add(ctx, act, r->nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWTIME, CLONE_NEWTIME));
		/* fall through: unshare also refuses every clone() namespace flag */
		__attribute__((fallthrough));
	case DSH_SC_CLONE_NS:
		/* One rule per bit: libseccomp ORs rules, and "any of these bits" is an OR. */
		for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(clone_ns_flags); i++)
			rc = seccomp_rule_add(ctx, act, r->nr, 1,
					      SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns_flags[i], clone_ns_flags[i]));
		break;
	case DSH_SC_IOCTL_REQ:
		/* The kernel reads the request as a 32-bit int: compare the low 32 bits only, or
		   TIOCSTI | (1 << 32) would pass a plain equality test and still inject. */
		rc = seccomp_rule_add(ctx, act, r->nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, r->datum));
		break;
	case DSH_SC_SOCKET_FAMILY:
		rc = seccomp_rule_add(ctx, act, r->nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffULL, r->datum));
		break;
	case DSH_SC_SOCKET_NOT_UNIX:
		rc = seccomp_rule_add(ctx, act, r->nr, 1, SCMP_A0(SCMP_CMP_NE, (uint64_t)AF_UNIX));
		break;
	case DSH_SC_PERSONALITY:
		/* persona is an unsigned int; allowed: exactly 0 (PER_LINUX) and 0xffffffff (query).
		   libseccomp takes one comparison per argument per rule and ORs rules, so: anything
		   above 32 bits (harmless to the kernel, refused anyway), plus every 32-bit value that
		   is neither all zeros nor all ones — such a value has, cyclically, a one followed by a
		   zero: bit i set and bit i+1 clear, one masked test per i. */
		rc = seccomp_rule_add(ctx, act, r->nr, 1, SCMP_A0(SCMP_CMP_GT, 0xffffffffULL));
		for (unsigned i = 0; rc == 0 && i < 32; i++) {
			uint64_t one = 1ULL << i, next = 1ULL << ((i + 1) % 32);
			rc = seccomp_rule_add(ctx, act, r->nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, one | next, one));
		}
		break;
	}
	if (rc < 0)
		return dsh_err_sys(err, -rc, "seccomp: rule for %s (%s)", r->name, dsh_seccomp_cond_to_string(r->cond));
	return 0;
}

/*
 * Put in front of libseccomp's program: on the native architecture, a number above the reviewed
 * horizon answers ENOSYS.  libseccomp 2.5 matches one syscall number per rule and has no range,
 * and its jumps are relative, so a prefix that falls through to its first instruction leaves that
 * program intact.  Numbers with the x32 bit (and -1, which tracers use to skip a call) go on to
 * libseccomp, which refuses x32 as a foreign ABI.  Only the architecture and the number are
 * loaded, so the kernel's action cache still resolves every allowed call to a constant.
 */
#define NEWER_PREFIX_LEN 6
static void newer_prefix(uint32_t arch, struct sock_filter out[NEWER_PREFIX_LEN])
{
	const struct sock_filter p[NEWER_PREFIX_LEN] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, 4),                      /* foreign: to libseccomp */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 2, 0),           /* x32, -1: to libseccomp */
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, DSH_SECCOMP_NEWEST_NR, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
	};
	memcpy(out, p, sizeof(p));
}

static int export_prog(scmp_filter_ctx ctx, uint32_t arch, bool prefix, struct dsh_seccomp_prog *ret,
		       struct dsh_error **err)
{
	const size_t pre = prefix ? NEWER_PREFIX_LEN : 0;
	/* libseccomp 2.5 exports only to a descriptor: go through a memfd and read it back. */
	_cleanup_close_ int fd = memfd_create("dshbox-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return dsh_err_sys(err, errno, "seccomp: memfd_create");
	int rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return dsh_err_sys(err, -rc, "seccomp_export_bpf");
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) ||
	    st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS - (off_t)pre)
		return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "seccomp: exported program has a bad size");
	size_t n = (size_t)st.st_size / sizeof(struct sock_filter);
	struct sock_filter *insns = calloc(pre + n, sizeof(struct sock_filter));
	if (!insns)
		return dsh_err_sys(err, ENOMEM, "seccomp program");
	if (pread(fd, insns + pre, (size_t)st.st_size, 0) != st.st_size) {
		free(insns);
		return dsh_err_sys(err, errno ? errno : EIO, "seccomp: read back the program");
	}
	/* ctx holds one architecture, arch; its SCMP_ARCH_* is the AUDIT_ARCH_*. */
	if (prefix)
		newer_prefix(arch, insns);
	ret->insns = insns;
	ret->len = (unsigned short)(pre + n);
	return 0;
}

static bool rule_applies(const struct dsh_seccomp_rule *r, const struct dsh_seccomp_opts *o)
{
	switch (r->when) {
	case DSH_SC_EVERY_RUN:
		return true;
	case DSH_SC_NO_NETNS:
		return o && o->deny_inet;
	case DSH_SC_NO_IPCNS:
		return o && o->deny_sysv_ipc;
	case DSH_SC_NOT_NESTED:
		return !(o && o->nested_sandbox);
	}
	return true; /* an unknown scope refuses: never less than asked */
}

/*
 * A binary tree of syscall numbers instead of a chain (libseccomp 2.5): the same decisions, but the
 * kernel's load, which runs the filter for every syscall number to fill its action cache, takes
 * half the time (issue 14), and a call with an argument check walks log(n) compares, not n.  An
 * older libseccomp refuses the attribute and keeps the chain.
 */
static void prefer_tree(scmp_filter_ctx ctx)
{
#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 5)
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
#else
	(void)ctx;
#endif
}

static void ctx_releasep(scmp_filter_ctx *c)
{
	if (*c)
		seccomp_release(*c);
}

/*
 * A filter for arch alone (0: the native one).  The build generates the programs on the build
 * machine, which for a cross build is not the target (tools/gen_seccomp.c): libseccomp then swaps
 * its native architecture for the target's and translates each rule's number by the call's name.
 */
static scmp_filter_ctx new_ctx(uint32_t def_action, uint32_t *arch, struct dsh_error **err)
{
	scmp_filter_ctx ctx = seccomp_init(def_action);
	if (!ctx) {
		dsh_err_sys(err, ENOMEM, "seccomp_init");
		return NULL;
	}
	if (*arch == 0)
		*arch = seccomp_arch_native();
	if (*arch != seccomp_arch_native()) {
		int rc = seccomp_arch_add(ctx, *arch);
		if (rc >= 0)
			rc = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
		if (rc < 0) {
			seccomp_release(ctx);
			dsh_err_sys(err, -rc, "seccomp: a filter for architecture 0x%x", *arch);
			return NULL;
		}
	}
	return ctx;
}

/*
 * The number to give libseccomp for a call by name (the build machine's, which it translates),
 * or -1 when arch has no such call: open, mkdir, rename ... are absent on asm-generic
 * architectures (aarch64, riscv64), where only their *at forms exist, and a rule for them would be
 * a dead compare.
 */
static int call_nr(uint32_t arch, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR || seccomp_syscall_resolve_name_arch(arch, name) < 0)
		return -1;
	return nr;
}

unsigned dsh_seccomp_opts_key(const struct dsh_seccomp_opts *o)
{
	if (!o)
		return 0;
	return (unsigned)o->deny_inet | (unsigned)o->deny_sysv_ipc << 1 | (unsigned)o->nested_sandbox << 2;
}

/* A copy of the build's program for this key, or 0 when the build has none (then generate it). */
static int prebuilt(int kind, unsigned key, struct dsh_seccomp_prog *ret, struct dsh_error **err)
{
	if (dsh_seccomp_prebuilt_arch != seccomp_arch_native())
		return 0; /* generated for another architecture: a program of its numbers would be wrong here */
	for (size_t i = 0; i < dsh_seccomp_n_prebuilt; i++) {
		const struct dsh_seccomp_prebuilt *p = &dsh_seccomp_prebuilt[i];
		if (p->kind != kind || p->key != key)
			continue;
		struct sock_filter *insns = malloc(p->len * sizeof(*insns));
		if (!insns)
			return dsh_err_sys(err, ENOMEM, "seccomp program");
		memcpy(insns, p->insns, p->len * sizeof(*insns));
		ret->insns = insns;
		ret->len = p->len;
		return 1;
	}
	return 0;
}

int dsh_seccomp_compile(const struct dsh_seccomp_opts *o, struct dsh_seccomp_prog *ret,
			struct dsh_error **err)
{
	int r = prebuilt(DSH_SECCOMP_KIND_DENY, dsh_seccomp_opts_key(o), ret, err);
	return r != 0 ? (r < 0 ? r : 0) : dsh_seccomp_generate(o, 0, ret, err);
}

int dsh_seccomp_generate(const struct dsh_seccomp_opts *o, uint32_t arch, struct dsh_seccomp_prog *ret,
			 struct dsh_error **err)
{
	_cleanup_(ctx_releasep) scmp_filter_ctx ctx = new_ctx(SCMP_ACT_ALLOW, &arch, err);
	if (!ctx)
		return -ENOMEM;
	/* Only the native architecture is in the filter: i386 (int 0x80) and x32 calls take the
	   bad-architecture action, which is EPERM rather than libseccomp's default kill.  The
	   program is loaded by dsh_seccomp_load() after no_new_privs has its own stage. */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (rc >= 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	prefer_tree(ctx);
	if (rc < 0)
		return dsh_err_sys(err, -rc, "seccomp: filter attributes");
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		/* A name libseccomp does not know yet (open_tree_attr) keeps its number from the table. */
		if (!rule_applies(&rules[i], o) || (seccomp_syscall_resolve_name(rules[i].name) != __NR_SCMP_ERROR &&
						     call_nr(arch, rules[i].name) < 0))
			continue;
		if ((rc = add_rule(ctx, &rules[i], err)) < 0)
			return rc;
	}
	return export_prog(ctx, arch, true, ret, err);
}

/*
 * The runtime broker's filter (SPEC 3.12): the calls that create, remove, rename or link a name or
 * change an inode's metadata go to the broker; open-family calls only when their flags create.
 * Everything else is allowed without an argument check, so the kernel's action cache answers it.
 */
static const char *const notify_always[] = {
	"creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat",
	"rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "truncate", "chmod", "fchmod",
	"fchmodat", "fchmodat2", "chown", "fchown", "fchownat", "lchown", "utime", "utimes", "utimensat",
	"futimesat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
	"setxattrat", "removexattrat",
	/* A pathname socket is a new name too, with or without protectSockets (SPEC 3.12). */
	"bind",
	/* Not checked, only followed, and let go on: the broker keeps each process's umask rather than
	   read it from /proc on every create (broker/caller.c). */
	"umask",
};

const uint32_t dsh_seccomp_attr_ioctls[6] = {
	FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR, FS_IOC_SETVERSION, FS_IOC32_SETVERSION,
	FS_IOC_ENABLE_VERITY,
};

const char *const *dsh_seccomp_notified(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(notify_always);
	return notify_always;
}

/*
 * The calls that reach a socket by address (SPEC 3.11): connect always (the address is in memory,
 * which a filter cannot read; bind is in notify_always), sendto only with a destination (arg 4),
 * sendmsg and sendmmsg always (the destination, msg_name, is in memory too).  The broker answers
 * every one of them itself, on its own copy of the arguments.
 */
static const char *const notify_sockets[] = { "connect", "sendmsg", "sendmmsg" };

int dsh_seccomp_compile_notify(struct dsh_seccomp_prog *ret, bool sockets, struct dsh_error **err)
{
	int r = prebuilt(DSH_SECCOMP_KIND_NOTIFY, sockets, ret, err);
	return r != 0 ? (r < 0 ? r : 0) : dsh_seccomp_generate_notify(0, ret, sockets, err);
}

int dsh_seccomp_generate_notify(uint32_t arch, struct dsh_seccomp_prog *ret, bool sockets, struct dsh_error **err)
{
	_cleanup_(ctx_releasep) scmp_filter_ctx ctx = new_ctx(SCMP_ACT_ALLOW, &arch, err);
	if (!ctx)
		return -ENOMEM;
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (rc >= 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	prefer_tree(ctx);
	if (rc < 0)
		return dsh_err_sys(err, -rc, "seccomp: filter attributes");
	for (size_t i = 0; i < ARRAY_SIZE(notify_always); i++) {
		int nr = call_nr(arch, notify_always[i]);
		if (nr < 0)
			continue; /* not on arch, or a name this libseccomp does not know: the deny filter's ENOSYS horizon */
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0)) < 0)
			return dsh_err_sys(err, -rc, "seccomp: notify %s", notify_always[i]);
	}
	/* openat2's flags are in memory, which a filter cannot read, and the broker cannot open for
	   the caller what only the caller may open (an O_PATH descriptor cannot be handed over; /proc
	   entries are the opener's): it answers ENOSYS, as a kernel before 5.6 would, and programs
	   fall back on openat, which the kernel serves for the caller itself. */
	int o2 = call_nr(arch, "openat2");
	if (o2 >= 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), o2, 0)) < 0)
		return dsh_err_sys(err, -rc, "seccomp: openat2");
	/* open and openat only when they create: O_CREAT, or O_TMPFILE (its own bit). */
	static const struct { const char *name; unsigned arg; } opens[] = { { "open", 1 }, { "openat", 2 } };
	static const uint64_t bits[] = { O_CREAT, __O_TMPFILE };
	for (size_t i = 0; i < ARRAY_SIZE(opens); i++)
		for (size_t k = 0; k < ARRAY_SIZE(bits); k++) {
			int nr = call_nr(arch, opens[i].name);
			if (nr < 0)
				break; /* open(2) on asm-generic architectures: openat is the only one */
			struct scmp_arg_cmp c = { opens[i].arg, SCMP_CMP_MASKED_EQ, bits[k], bits[k] };
			if ((rc = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr, 1, &c)) < 0)
				return dsh_err_sys(err, -rc, "seccomp: notify %s", opens[i].name);
		}
	for (size_t i = 0; sockets && i < ARRAY_SIZE(notify_sockets); i++) {
		int nr = call_nr(arch, notify_sockets[i]);
		if (nr < 0)
			continue;
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0)) < 0)
			return dsh_err_sys(err, -rc, "seccomp: notify %s", notify_sockets[i]);
	}
	/* The ioctls that change an inode's attributes (chattr's flags, the project id, the version):
	   a metadata change like chmod, which neither the mount tree (the landlock backend has none)
	   nor Landlock sees on a descriptor opened for reading. */
	for (size_t i = 0; i < ARRAY_SIZE(dsh_seccomp_attr_ioctls); i++) {
		struct scmp_arg_cmp c = { 1, SCMP_CMP_MASKED_EQ, 0xffffffffULL, dsh_seccomp_attr_ioctls[i] };
		if ((rc = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 1, &c)) < 0)
			return dsh_err_sys(err, -rc, "seccomp: notify ioctl");
	}
	if (sockets) {
		int nr = call_nr(arch, "sendto");
		struct scmp_arg_cmp c = { 4, SCMP_CMP_NE, 0, 0 };
		if ((rc = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr, 1, &c)) < 0)
			return dsh_err_sys(err, -rc, "seccomp: notify sendto");
	}
	return export_prog(ctx, arch, false, ret, err);
}

/*
 * The broker's own filter (init, while it serves the command's calls): an allow-list of what
 * serving needs — reading the caller's memory and descriptors, the file and socket calls it makes
 * for the caller, waiting, signals to the command, its deferred socket threads — and nothing that
 * would let a borrowed broker do more: no exec, no ptrace, no mounts or namespaces, no handles.
 * Anything else answers EPERM.
 */
static const char *const broker_allowed[] = {
	/* memory, threads, time */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "clone", "clone3", "set_robust_list", "rseq",
	"futex", "exit", "exit_group", "sched_yield", "gettid", "getpid", "getppid", "getuid", "geteuid", "getgid",
	"getegid", "rt_sigprocmask", "rt_sigaction", "rt_sigreturn", "sigaltstack", "restart_syscall",
	"nanosleep", "clock_nanosleep", "clock_gettime", "gettimeofday", "getrandom", "getrlimit",
	"prlimit64",
	/* files: the caller's calls, done for it, and the broker's own look-ups */
	"read", "write", "pread64", "pwrite64", "readv", "writev", "lseek", "close", "close_range", "open",
	"openat", "openat2", "newfstatat", "fstat", "lstat", "stat", "statx", "fstatfs", "statfs", "readlink",
	"readlinkat", "getdents64", "fcntl", "dup", "dup2", "dup3", "mkdir", "mkdirat", "mknod", "mknodat",
	"symlink", "symlinkat", "link", "linkat", "rename", "renameat", "renameat2", "unlink", "unlinkat",
	"rmdir", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "fchownat", "lchown",
	"utimensat", "utimes", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
	"fremovexattr", "ftruncate", "truncate", "umask", "fchdir", "chdir", "getcwd", "ioctl",
	/* the caller and the command */
	"pidfd_open", "pidfd_getfd", "pidfd_send_signal", "kill", "tgkill", "waitid", "wait4",
	"process_vm_readv", "process_vm_writev", "poll", "ppoll",
	/* sockets, for the caller */
	"connect", "bind", "sendmsg", "sendto", "sendmmsg", "getsockname",
};

int dsh_seccomp_generate_broker(uint32_t arch, struct dsh_seccomp_prog *ret, struct dsh_error **err)
{
	_cleanup_(ctx_releasep) scmp_filter_ctx ctx = new_ctx(SCMP_ACT_ERRNO(EPERM), &arch, err);
	if (!ctx)
		return -ENOMEM;
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	prefer_tree(ctx);
	if (rc < 0)
		return dsh_err_sys(err, -rc, "seccomp: filter attributes");
	for (size_t i = 0; i < ARRAY_SIZE(broker_allowed); i++) {
		int nr = call_nr(arch, broker_allowed[i]);
		if (nr < 0)
			continue; /* not on this architecture (open, stat, ... on asm-generic ones) */
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0)) < 0)
			return dsh_err_sys(err, -rc, "seccomp: broker allows %s", broker_allowed[i]);
	}
	return export_prog(ctx, arch, false, ret, err);
}

int dsh_seccomp_compile_broker(struct dsh_seccomp_prog *ret, struct dsh_error **err)
{
	int r = prebuilt(DSH_SECCOMP_KIND_BROKER, 0, ret, err);
	return r != 0 ? (r < 0 ? r : 0) : dsh_seccomp_generate_broker(0, ret, err);
}

bool dsh_seccomp_const_allow(const struct dsh_seccomp_prog *p, uint32_t arch, uint32_t nr)
{
	uint32_t a = 0;
	for (unsigned pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->insns[pc];
		bool t;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k == offsetof(struct seccomp_data, nr))
				a = nr;
			else if (f->k == offsetof(struct seccomp_data, arch))
				a = arch;
			else
				return false;
			continue;
		case BPF_RET | BPF_K:
			return f->k == SECCOMP_RET_ALLOW;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			continue;
		case BPF_JMP | BPF_JEQ | BPF_K: t = a == f->k; break;
		case BPF_JMP | BPF_JGE | BPF_K: t = a >= f->k; break;
		case BPF_JMP | BPF_JGT | BPF_K: t = a > f->k; break;
		case BPF_JMP | BPF_JSET | BPF_K: t = (a & f->k) != 0; break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= f->k;
			continue;
		default:
			return false;
		}
		pc += t ? f->jt : f->jf;
	}
	return false;
}

/* The low 32 bits of argument i, which is all the kernel reads of an open's int flags. */
#define ARG_LO(i) (offsetof(struct seccomp_data, args[i]) + (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0))

/*
 * Ahead of the joined program: an open that creates nothing is allowed after four compares.
 * Nothing else is decided here, and only what both programs would allow anyway: the deny program
 * must allow the number whatever its arguments (checked, not assumed), and the broker's sends an
 * open on only when one of these bits is set (dsh_seccomp_generate_notify).
 */
static size_t open_prefix(const struct dsh_seccomp_prog *deny, uint32_t arch, struct sock_filter out[16])
{
	static const struct { int nr; unsigned arg; } opens[] = {
		{ __NR_openat, 2 },
#ifdef __NR_open
		{ __NR_open, 1 },
#endif
	};
	size_t m = 0, which[ARRAY_SIZE(opens)];
	for (size_t i = 0; i < ARRAY_SIZE(opens); i++)
		if (dsh_seccomp_const_allow(deny, arch, (uint32_t)opens[i].nr))
			which[m++] = i;
	if (m == 0)
		return 0; /* no open the deny program leaves alone: nothing to shorten */
	/* arch, its check, the number; three per open (a miss keeps the number in A for the next);
	   "allow"; then `end`, the first instruction after the prefix */
	const size_t allow = 3 + 3 * m, end = allow + 1;
	size_t n = 0;
	out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	out[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, (uint8_t)(end - n - 1));
	n++;
	out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (size_t k = 0; k < m; k++) {
		const size_t miss = k + 1 < m ? n + 3 : end;
		out[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)opens[which[k]].nr, 0,
						      (uint8_t)(miss - n - 1));
		n++;
		out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(opens[which[k]].arg));
		out[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT | __O_TMPFILE,
						      (uint8_t)(end - n - 1), (uint8_t)(allow - n - 1));
		n++;
	}
	out[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return n;
}

int dsh_seccomp_join(const struct dsh_seccomp_prog *deny, const struct dsh_seccomp_prog *notify,
		     struct dsh_seccomp_prog *ret, struct dsh_error **err)
{
	*ret = (struct dsh_seccomp_prog){ 0 };
	for (unsigned i = 0; i < deny->len; i++)
		if (BPF_CLASS(deny->insns[i].code) == BPF_RET && BPF_RVAL(deny->insns[i].code) != BPF_K)
			return 0; /* a verdict computed at run time: not one to rewrite */
	struct sock_filter pre[16];
	size_t np = open_prefix(deny, (uint32_t)seccomp_arch_native(), pre);
	size_t len = np + deny->len + notify->len;
	if (len > BPF_MAXINSNS)
		return 0;
	struct sock_filter *insns = malloc(len * sizeof(*insns));
	if (!insns)
		return dsh_err_sys(err, ENOMEM, "seccomp program");
	memcpy(insns, pre, np * sizeof(*insns));
	for (unsigned i = 0; i < deny->len; i++) {
		struct sock_filter f = deny->insns[i];
		/* "allow" from the deny program means "ask the broker's": a jump to its first instruction */
		if (f.code == (BPF_RET | BPF_K) && f.k == SECCOMP_RET_ALLOW)
			f = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, deny->len - i - 1, 0, 0);
		insns[np + i] = f;
	}
	memcpy(insns + np + deny->len, notify->insns, notify->len * sizeof(*insns));
	ret->insns = insns;
	ret->len = (unsigned short)len;
	return 1;
}

/* SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19; spelled here for older headers. */
#define DSH_SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)

int dsh_seccomp_load_listener(const struct dsh_seccomp_prog *p, int *ret_fd, struct dsh_error **err)
{
	struct sock_fprog prog = { .len = p->len, .filter = p->insns };
	if (!p->insns)
		return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "seccomp: no program compiled");
	/*
	 * Once the broker holds a call, the caller waits for the answer as for any file call: only a
	 * fatal signal ends the wait (Linux 5.19).  Otherwise a handled signal (a Ctrl-C with a
	 * handler, Go's preemption every 10 ms) returns EINTR from an open(2) that already created its
	 * file, or restarts it forever.  Before 5.19 the kernel refuses the flag, and the wait stays
	 * interruptible.
	 */
	int fd = (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
			      SECCOMP_FILTER_FLAG_NEW_LISTENER | DSH_SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		return dsh_err_sys(err, errno, "seccomp: load the broker's filter");
	/* Every brokered call is a round trip: the command blocks until the broker answers.  Linux 6.6
	   can hand each over on the current CPU, as a synchronous call, instead of waking the other
	   side wherever the scheduler puts it; an older kernel refuses the flag and keeps the wake-ups. */
	(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP); /* by value */
	*ret_fd = fd;
	return 0;
}

int dsh_seccomp_load(const struct dsh_seccomp_prog *p, struct dsh_error **err)
{
	struct sock_fprog prog = { .len = p->len, .filter = p->insns };
	if (!p->insns)
		return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "seccomp: no program compiled");
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		int e = errno;
		dsh_err_sys(err, e, "seccomp: load filter");
		if (e == EACCES)
			dsh_err_hint(err, "set no_new_privs (PR_SET_NO_NEW_PRIVS) before seccomp");
		return -e;
	}
	return 0;
}

void dsh_seccomp_prog_clear(struct dsh_seccomp_prog *p)
{
	free(p->insns);
	p->insns = NULL;
	p->len = 0;
}
