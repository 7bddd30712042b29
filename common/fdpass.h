/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_COMMON_FDPASS_H
#define DSH_COMMON_FDPASS_H

/* One descriptor over a unix socket (SCM_RIGHTS), with one byte of payload. */

/* 0, or -errno. */
int dsh_fd_send(int sock, int fd);
/* The descriptor received (CLOEXEC), or -errno; with MSG_DONTWAIT in flags, -EAGAIN when none waits. */
int dsh_fd_recv(int sock, int flags);

#endif
