/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_LANDLOCK_SYSCALLS_H
#define DSH_LANDLOCK_SYSCALLS_H

/*
 * The Landlock UAPI as the running kernel speaks it, and the raw syscalls glibc lacks.
 *
 * The build machines' headers (linux-libc-dev 6.1) stop at ABI 2 while the kernels we run on go to
 * ABI 7, so everything newer is defined here, guarded, with the ABI (and kernel) that brought it.
 * What we use is decided at run time by landlock_create_ruleset(NULL, 0, VERSION), never by the
 * headers or a version string.
 */

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/landlock.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/* ABI 3 (Linux 6.2) */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* ABI 5 (Linux 6.10) */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
/* ABI 4 (Linux 6.7): TCP bind/connect, rule type LANDLOCK_RULE_NET_PORT (an enum upstream, so
   it cannot be #ifndef-guarded: we use our own name for it). */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#define DSH_LANDLOCK_RULE_PATH_BENEATH 1
#define DSH_LANDLOCK_RULE_NET_PORT 2
/* ABI 6 (Linux 6.12): the `scoped` field */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr with every field up to ABI 6.  The kernel copies with
   copy_struct_from_user(), so an older kernel accepts the larger size as long as the fields it does
   not know are zero; we still pass the size the probed ABI knows (see dsh_landlock_attr_size). */
struct dsh_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

struct dsh_landlock_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct dsh_landlock_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

static inline int dsh_sys_landlock_create_ruleset(const struct dsh_landlock_ruleset_attr *attr,
						  size_t size, uint32_t flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline int dsh_sys_landlock_add_rule(int ruleset_fd, int rule_type, const void *attr,
					    uint32_t flags)
{
	return (int)syscall(__NR_landlock_add_rule, ruleset_fd, rule_type, attr, flags);
}

static inline int dsh_sys_landlock_restrict_self(int ruleset_fd, uint32_t flags)
{
	return (int)syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

#endif
