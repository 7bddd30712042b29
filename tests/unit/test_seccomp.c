/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The seccomp filter, loaded in a forked child: every refusal is an errno, never a kill. */
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stddef.h>

#include "common/cleanup.h"
#include "supervisor/seccomp.h"
#include "tests/unit/child_check.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#define X32_BIT 0x40000000

static struct dsh_seccomp_prog prog;

static void load(const struct dsh_seccomp_opts *o)
{
	struct dsh_error *err = NULL;
	if (dsh_seccomp_compile(o, &prog, &err) < 0)
		fail("compile: %s", err->msg);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail("nnp");
	if (dsh_seccomp_load(&prog, &err) < 0)
		fail("load: %s", err->msg);
}

static void refusals_child(void *arg)
{
	(void)arg;
	load(NULL);
	EXPECT_ERRNO(mount("none", "/", NULL, MS_REMOUNT | MS_BIND, NULL), EPERM);
	EXPECT_ERRNO(umount2("/", MNT_DETACH), EPERM);
	EXPECT_ERRNO(syscall(SYS_pivot_root, "/", "/"), EPERM);
	EXPECT_ERRNO(syscall(SYS_open_tree, AT_FDCWD, "/", 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_move_mount, -1, "", -1, "", 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_fsopen, "tmpfs", 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_fsmount, -1, 0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_fspick, AT_FDCWD, "/", 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_mount_setattr, AT_FDCWD, "/", 0, NULL, 0), EPERM);
	EXPECT_ERRNO(unshare(CLONE_NEWUSER), EPERM);
	EXPECT_ERRNO(unshare(CLONE_NEWNS), EPERM);
	EXPECT_ERRNO(unshare(CLONE_NEWNET | CLONE_FILES), EPERM);
	EXPECT_ERRNO(unshare(0x80 /* CLONE_NEWTIME */), EPERM);
	EXPECT_OK(unshare(CLONE_FILES));
	EXPECT_ERRNO(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0), EPERM);
	struct clone_args ca = { .flags = 0, .exit_signal = SIGCHLD };
	EXPECT_ERRNO(syscall(SYS_clone3, &ca, sizeof(ca)), ENOSYS);
	EXPECT_ERRNO(setns(0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_add_key, "user", "x", "y", 1, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_request_key, "user", "x", NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_bpf, 0, NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_userfaultfd, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
	EXPECT_ERRNO(syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_io_uring_register, -1, 0, NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_kexec_load, 0, 0, NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_init_module, NULL, 0, ""), EPERM);
	EXPECT_ERRNO(syscall(SYS_finit_module, -1, "", 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_process_vm_writev, getppid(), NULL, 0, NULL, 0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_pidfd_getfd, -1, 0, 0), EPERM);
	/* ioctl: the two requests, also with high bits the kernel ignores; others reach the driver */
	int p[2];
	EXPECT_OK(pipe2(p, O_CLOEXEC));
	char c = 'x';
	EXPECT_ERRNO(syscall(SYS_ioctl, p[0], (unsigned long)TIOCSTI, &c), EPERM);
	EXPECT_ERRNO(syscall(SYS_ioctl, p[0], (1UL << 32) | TIOCSTI, &c), EPERM);
	EXPECT_ERRNO(syscall(SYS_ioctl, p[0], (0xffffffffUL << 32) | TIOCSTI, &c), EPERM);
	EXPECT_ERRNO(syscall(SYS_ioctl, p[0], (unsigned long)TIOCLINUX, &c), EPERM);
	EXPECT_ERRNO(syscall(SYS_ioctl, p[0], (1UL << 40) | TIOCLINUX, &c), EPERM);
	struct termios t;
	EXPECT_ERRNO(ioctl(p[0], TCGETS, &t), ENOTTY);
	int n;
	EXPECT_OK(ioctl(p[0], FIONREAD, &n));
	EXPECT_ERRNO(socket(AF_VSOCK, SOCK_STREAM, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_socket, (1UL << 32) | AF_VSOCK, SOCK_STREAM, 0), EPERM);
	EXPECT_OK(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	EXPECT_OK(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	/* personality: PER_LINUX and the query only */
	EXPECT_OK(personality(0xffffffff));
	EXPECT_OK(personality(PER_LINUX));
	EXPECT_ERRNO(personality(ADDR_NO_RANDOMIZE), EPERM);
	EXPECT_ERRNO(personality(READ_IMPLIES_EXEC), EPERM);
	EXPECT_ERRNO(personality(PER_LINUX32), EPERM);
	EXPECT_ERRNO(personality(0xfffffffe), EPERM);
	EXPECT_ERRNO(personality(0x80000000), EPERM);
	EXPECT_ERRNO(syscall(SYS_personality, 1UL << 32), EPERM);
	if (personality(0xffffffff) != PER_LINUX)
		fail("personality changed");
	/* foreign architectures */
	EXPECT_ERRNO(syscall(X32_BIT | SYS_getpid), EPERM);
	/* hot and ordinary calls still work */
	EXPECT_OK(getppid());
	pid_t pid = fork();
	if (pid == 0)
		_exit(7);
	int st;
	EXPECT_OK(waitpid(pid, &st, 0));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 7)
		fail("fork() under the filter: status %#x", st);
}

Test(seccomp, refuses_with_errno_and_never_kills)
{
	in_child(refusals_child, NULL);
}

static void inet_child(void *arg)
{
	(void)arg;
	struct dsh_seccomp_opts o = { .deny_inet = true };
	load(&o);
	EXPECT_ERRNO(socket(AF_INET, SOCK_STREAM, 0), EPERM);
	EXPECT_ERRNO(socket(AF_INET6, SOCK_DGRAM, 0), EPERM);
	EXPECT_ERRNO(socket(AF_NETLINK, SOCK_RAW, 0), EPERM);
	EXPECT_OK(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	int sv[2];
	EXPECT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
}

Test(seccomp, deny_inet_leaves_only_unix_sockets)
{
	in_child(inet_child, NULL);
}

static void nnp_child(void *arg)
{
	(void)arg;
	struct dsh_error *err = NULL;
	if (dsh_seccomp_compile(NULL, &prog, &err) < 0)
		fail("compile");
	if (geteuid() == 0)
		_exit(0); /* CAP_SYS_ADMIN may load a filter without no_new_privs */
	if (dsh_seccomp_load(&prog, &err) != -EACCES)
		fail("load without no_new_privs did not fail with EACCES");
	if (!err->hint)
		fail("no hint");
}

Test(seccomp, needs_no_new_privs)
{
	in_child(nnp_child, NULL);
}

Test(seccomp, table_is_documented)
{
	size_t n;
	const struct dsh_seccomp_rule *r = dsh_seccomp_rules(&n);
	cr_assert_gt(n, 30);
	for (size_t i = 0; i < n; i++) {
		cr_assert(r[i].why && *r[i].why, "%s has no reason", r[i].name);
		cr_assert(r[i].errno_value == EPERM || (r[i].errno_value == ENOSYS && strcmp(r[i].name, "clone3") == 0),
			  "%s: refusals are EPERM", r[i].name);
	}
	struct dsh_seccomp_prog p = { 0 };
	struct dsh_error *err = NULL;
	cr_assert_eq(dsh_seccomp_compile(NULL, &p, &err), 0);
	cr_assert_gt(p.len, 10);
	dsh_seccomp_prog_clear(&p);
	cr_assert_null(p.insns);
}

/*
 * The program itself, run by a small classic-BPF interpreter over crafted seccomp_data: the
 * architectures this machine cannot produce live (its int 0x80 traps before seccomp), and the
 * action-cache property: a hot syscall's path never loads an argument.
 */
struct run {
	uint32_t ret;
	bool loaded_args;
};

static struct run bpf_run(const struct dsh_seccomp_prog *p, const struct seccomp_data *d)
{
	struct run out = { 0, false };
	uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = { 0 };
	const uint8_t *data = (const uint8_t *)d;
	for (unsigned pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->insns[pc];
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			cr_assert_eq(BPF_MODE(f->code), BPF_ABS, "unexpected load mode %#x", f->code);
			cr_assert_leq(f->k + 4, sizeof(*d));
			memcpy(&A, data + f->k, 4);
			if (f->k >= offsetof(struct seccomp_data, args))
				out.loaded_args = true;
			break;
		case BPF_LDX:
			X = M[f->k];
			break;
		case BPF_ST:
			M[f->k] = A;
			break;
		case BPF_STX:
			M[f->k] = X;
			break;
		case BPF_ALU: {
			uint32_t v = BPF_SRC(f->code) == BPF_X ? X : f->k;
			switch (BPF_OP(f->code)) {
			case BPF_AND: A &= v; break;
			case BPF_OR: A |= v; break;
			default: cr_assert_fail("alu op %#x", f->code);
			}
			break;
		}
		case BPF_JMP: {
			uint32_t v = BPF_SRC(f->code) == BPF_X ? X : f->k;
			bool t;
			switch (BPF_OP(f->code)) {
			case BPF_JA: pc += f->k; continue;
			case BPF_JEQ: t = A == v; break;
			case BPF_JGT: t = A > v; break;
			case BPF_JGE: t = A >= v; break;
			case BPF_JSET: t = (A & v) != 0; break;
			default: cr_assert_fail("jmp op %#x", f->code); t = false;
			}
			pc += t ? f->jt : f->jf;
			break;
		}
		case BPF_RET:
			out.ret = BPF_RVAL(f->code) == BPF_A ? A : f->k;
			return out;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		default:
			cr_assert_fail("insn %#x", f->code);
		}
	}
	cr_assert_fail("fell off the program");
	return out;
}

#define RET_EPERM (SECCOMP_RET_ERRNO | EPERM)

Test(seccomp_program, foreign_architectures_and_hot_calls)
{
	struct dsh_seccomp_prog p = { 0 };
	struct dsh_error *err = NULL;
	cr_assert_eq(dsh_seccomp_compile(NULL, &p, &err), 0);
	struct seccomp_data d = { .nr = 20, .arch = AUDIT_ARCH_I386 };
	cr_assert_eq(bpf_run(&p, &d).ret, RET_EPERM, "i386 getpid");
	d.arch = AUDIT_ARCH_X86_64;
	d.nr = X32_BIT | SYS_getpid;
	cr_assert_eq(bpf_run(&p, &d).ret, RET_EPERM, "x32 getpid");
	static const int hot[] = { SYS_getppid, SYS_read, SYS_write, SYS_openat, SYS_close, SYS_newfstatat,
				   SYS_mmap, SYS_futex, SYS_getpid, SYS_execve, SYS_wait4 };
	for (size_t i = 0; i < ARRAY_SIZE(hot); i++) {
		d.nr = hot[i];
		struct run r = bpf_run(&p, &d);
		cr_assert_eq(r.ret, SECCOMP_RET_ALLOW, "syscall %d", hot[i]);
		cr_assert(!r.loaded_args, "syscall %d looks at its arguments: no action cache", hot[i]);
	}
	d.nr = SYS_ioctl;
	d.args[1] = TIOCSTI | (1ULL << 32);
	cr_assert_eq(bpf_run(&p, &d).ret, RET_EPERM);
	d.args[1] = TCGETS;
	cr_assert_eq(bpf_run(&p, &d).ret, SECCOMP_RET_ALLOW);
	d.nr = SYS_clone3;
	cr_assert_eq(bpf_run(&p, &d).ret, SECCOMP_RET_ERRNO | ENOSYS);
	dsh_seccomp_prog_clear(&p);
}
