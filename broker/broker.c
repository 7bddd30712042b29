/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime broker (broker.h): receiving a notification, handing it to its handler (file calls:
 * broker/files.c; socket calls: broker/sockets.c), and the answers.  Every handler follows the same
 * shape: copy the arguments out of the caller (once), resolve the target in the caller's view,
 * decide, act on our own copy through held descriptors, answer.  The caller's registers and memory
 * are never read again after the decision, so a racing thread of the command changes nothing that
 * was checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker/broker.h"
#include "broker/internal.h"
#include "common/cleanup.h"

int dsh_call_respond(struct call *c, int64_t val, int error)
{
	struct seccomp_notif_resp resp = { .id = c->req->id, .val = error ? 0 : val, .error = error ? -error : 0 };
	if (error == EACCES) {
		c->b->refused++;
		/* the first refusal that knows its reason is kept for the run's note */
		if (!c->b->first_refusal[0] && c->b->denial[0])
			memcpy(c->b->first_refusal, c->b->denial, DSH_REFUSAL_MAX);
	}
	if (ioctl(c->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* A result of ours: 0 or -errno from a call the broker made. */
int dsh_call_answer(struct call *c, int r)
{
	return dsh_call_respond(c, r < 0 ? 0 : r, r < 0 ? -r : 0);
}

/* A descriptor the broker opened, installed in the caller as the call's result. */
int dsh_call_respond_fd(struct call *c, int fd, bool cloexec)
{
	struct seccomp_notif_addfd a = {
		.id = c->req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int r = ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	if (r < 0 && errno == EINVAL) {
		/* Before 5.14 there is no SECCOMP_ADDFD_FLAG_SEND: install, then answer with the number.
		   The caller is still blocked in the call, so nothing of it sees the descriptor before. */
		a.flags = 0;
		r = ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
		close(fd);
		if (r < 0)
			return errno == ENOENT ? 0 : dsh_call_respond(c, 0, errno);
		return dsh_call_respond(c, r, 0);
	}
	close(fd);
	if (r < 0 && errno != ENOENT)
		return dsh_call_respond(c, 0, errno);
	return 0;
}

int dsh_call_sys_result(int r)
{
	return r < 0 ? -errno : r;
}

/*
 * umask() is sent here only to be followed (caller.c): nothing is checked, the kernel applies it,
 * with the argument it already holds.  The only notification the broker lets go on.
 */
static int follow_umask(struct call *c)
{
	dsh_caller_umask_set(c, (mode_t)(ARG(0) & 0777));
	struct seccomp_notif_resp resp = { .id = c->req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
	if (ioctl(c->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int dispatch(struct call *c)
{
	switch (c->req->data.nr) {
	case __NR_umask:
		return follow_umask(c);
	case __NR_connect:
	case __NR_bind:
	case __NR_sendto:
	case __NR_sendmsg:
	case __NR_sendmmsg:
		return dsh_broker_socket_call(c);
	default:
		return dsh_broker_file_call(c);
	}
}

void dsh_broker_clear(struct dsh_broker *b)
{
	dsh_caller_cache_clear(b);
	if (b->started) {
		close(b->proc);
		b->started = false;
	}
	free(b->mount_devs);
	b->mount_devs = NULL;
	b->n_mount_devs = 0;
	for (size_t i = 0; i < b->n_held; i++) {
		close(b->held[i].dir);
		free(b->held[i].name);
		free(b->held[i].path);
		free(b->held[i].canonical);
	}
	free(b->held);
	b->held = NULL;
	b->n_held = 0;
	for (size_t i = 0; i < b->n_bound; i++)
		free(b->bound[i]);
	free(b->bound);
	b->bound = NULL;
	b->n_bound = 0;
}

bool dsh_broker_hung_up(short revents)
{
	return revents & (POLLHUP | POLLERR | POLLNVAL);
}

int dsh_broker_serve_one(struct dsh_broker *b, int listener, struct dsh_error **err)
{
	if (!b->started && dsh_broker_start(b, err) < 0)
		return -EIO;
	size_t rsize = b->notif_size > sizeof(struct seccomp_notif) ? b->notif_size : sizeof(struct seccomp_notif);
	_cleanup_free_ struct seccomp_notif *req = calloc(1, rsize);
	if (!req)
		return dsh_err_sys(err, ENOMEM, "broker");
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		int e = errno;
		if (e == EINTR || e == ENOENT)
			return 0; /* interrupted, or the caller died before we read it */
		return e == EBADF ? -ENOENT : dsh_err_sys(err, e, "broker: SECCOMP_IOCTL_NOTIF_RECV");
	}
	struct call c = { .b = b, .listener = listener, .req = req };
	b->served++;
	b->denial[0] = '\0';
	int r = dispatch(&c);
	if (r < 0)
		return dsh_err_sys(err, -r, "broker: answer call %d", req->data.nr);
	return 0;
}
