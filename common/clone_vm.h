/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_CLONE_VM_H
#define DSH_COMMON_CLONE_VM_H

#include <sched.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * A short-lived child that runs fn(arg) on the caller's memory, on the given stack: a fork would
 * copy the caller's page tables, and every page the caller then writes would fault to be copied
 * again, for a child that makes a few system calls.  fn must allocate nothing and write no memory
 * the caller is using.  exit_signal is what clone(2) takes (SIGCHLD, or 0 for none).
 *
 * Under AddressSanitizer a second process on the same memory would confuse its runtime: there it
 * is a fork, and fn's value the child's exit status.
 */
static inline pid_t dsh_clone_vm(int (*fn)(void *), void *arg, int exit_signal, char *stack, size_t size)
{
#if !defined(__SANITIZE_ADDRESS__)
	return clone(fn, stack + size, CLONE_VM | exit_signal, arg);
#else
	(void)stack, (void)size;
	pid_t pid = (pid_t)syscall(__NR_clone, exit_signal, 0, 0, 0, 0);
	if (pid == 0)
		_exit(fn(arg));
	return pid;
#endif
}

#endif
