/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The broker's socket calls (SPEC 3.11, broker/internal.h): connect, bind and the sends with a
 * destination, performed by the broker on its duplicate of the caller's socket, a pathname or
 * abstract destination reached only when this run bound it or allowUnixSockets lists it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/internal.h"
#include "common/cleanup.h"
#include "common/resolve.h"
#include "policy/path.h"

/* Largest payload one brokered send copies; a datagram larger than this fails as the kernel's own
   limits would (EMSGSIZE), a stream send is a short write. */
#define MAX_SEND (4u << 20)
/* Largest ancillary data copied (the kernel's optmem_max is 20 KiB to 128 KiB). */
#define MAX_CONTROL (128u << 10)
/* Most sockets one run records as bound by itself. */
#define MAX_BOUND 4096

static bool caller_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && !(fl & O_NONBLOCK);
}

/* The path of an AF_UNIX pathname address, or NULL (abstract, unnamed, another family). */
static const char *unix_path(struct sockaddr_storage *ss, socklen_t len)
{
	struct sockaddr_un *un = (struct sockaddr_un *)ss;
	size_t off = offsetof(struct sockaddr_un, sun_path);
	if (ss->ss_family != AF_UNIX || len <= off || un->sun_path[0] == '\0')
		return NULL;
	/* The kernel takes the bytes up to len and ends them itself. */
	((char *)ss)[len < sizeof(*ss) ? len : sizeof(*ss) - 1] = '\0';
	return un->sun_path;
}

/*
 * An abstract AF_UNIX address as the broker records it: "@" and the name's bytes in hex (a name may
 * hold any byte, NUL included).  NULL for any other address.
 */
static bool abstract(const struct sockaddr_storage *ss, socklen_t len)
{
	return ss->ss_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) + 1 &&
	       ((const struct sockaddr_un *)ss)->sun_path[0] == '\0';
}

static char *abstract_key(const struct sockaddr_storage *ss, socklen_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)ss;
	if (!abstract(ss, len))
		return NULL;
	size_t n = len - offsetof(struct sockaddr_un, sun_path) - 1;
	char *key = malloc(2 * n + 2);
	if (!key)
		return NULL;
	key[0] = '@';
	for (size_t i = 0; i < n; i++)
		snprintf(key + 1 + 2 * i, 3, "%02x", (unsigned char)un->sun_path[1 + i]);
	return key;
}

/* The same for an abstract name as allowUnixSockets spells it: "@name". */
static bool abstract_listed(struct dsh_broker *b, const char *key)
{
	for (size_t i = 0; b->allowed_sockets && b->allowed_sockets[i]; i++) {
		const char *a = b->allowed_sockets[i];
		if (a[0] != '@' || strlen(key) != 1 + 2 * strlen(a + 1))
			continue;
		bool same = true;
		for (size_t k = 0; same && a[1 + k]; k++) {
			char hex[3];
			snprintf(hex, sizeof(hex), "%02x", (unsigned char)a[1 + k]);
			same = memcmp(key + 1 + 2 * k, hex, 2) == 0;
		}
		if (same)
			return true;
	}
	return false;
}

static bool socket_bound(struct dsh_broker *b, const char *key)
{
	for (size_t i = 0; i < b->n_bound; i++)
		if (strcmp(b->bound[i], key) == 0)
			return true;
	return false;
}

/*
 * An abstract destination (SPEC 3.11): abstract sockets live in the network namespace, the host's
 * with the network on, where Landlock's scoping (6.12) is their only other wall.  Reached when this
 * run bound the name or allowUnixSockets lists it; -EACCES otherwise.  0 for any other address.
 */
static int abstract_destination(struct call *c, const struct sockaddr_storage *ss, socklen_t len)
{
	if (!abstract(ss, len))
		return 0;
	_cleanup_free_ char *key = abstract_key(ss, len);
	if (!key)
		return -ENOMEM;
	if (socket_bound(c->b, key) || abstract_listed(c->b, key))
		return 0;
	snprintf(c->b->denial, sizeof(c->b->denial), "abstract unix socket %s (not bound by this run, not in "
		 "allowUnixSockets)", key);
	return -EACCES;
}

static int read_addr(struct call *c, uint64_t addr, uint64_t len, struct sockaddr_storage *ss, socklen_t *ret_len)
{
	memset(ss, 0, sizeof(*ss));
	if (len > sizeof(*ss) || (int64_t)len < 0)
		return -EINVAL;
	*ret_len = (socklen_t)len;
	return len ? dsh_caller_read(c, addr, ss, (size_t)len) : 0;
}

/* Whether the command may reach the socket at this canonical path. */
static bool socket_allowed(struct dsh_broker *b, const char *canonical)
{
	if (socket_bound(b, canonical))
		return true;
	for (size_t i = 0; b->allowed_sockets && b->allowed_sockets[i]; i++) {
		if (strcmp(b->allowed_sockets[i], canonical) == 0)
			return true;
		char real[PATH_MAX];
		if (realpath(b->allowed_sockets[i], real) && strcmp(real, canonical) == 0)
			return true;
	}
	return false;
}

/*
 * Resolve a pathname socket in the caller's view (from its cwd, following symlinks as connect does)
 * and decide.  0 with *t filled: reach it through (t->pfd, t->name); -errno otherwise.
 */
static int unix_target(struct call *c, const char *path, struct target *t)
{
	/* An allowed socket as the caller spells it: through the directory held from the host, which
	   the sandbox's own tree may hide. */
	if (c->b->n_held) {
		_cleanup_free_ char *spelled = NULL;
		if (path[0] == '/') {
			spelled = dsh_path_normalize(NULL, path);
		} else {
			_cleanup_close_ int base = dsh_caller_cwd(c);
			_cleanup_free_ char *bp = NULL;
			if (base >= 0 && dsh_fd_path(base, &bp) >= 0)
				spelled = dsh_path_normalize(bp, path);
		}
		for (size_t i = 0; spelled && i < c->b->n_held; i++) {
			const struct dsh_held_socket *h = &c->b->held[i];
			if (strcmp(spelled, h->path) != 0 && strcmp(spelled, h->canonical) != 0)
				continue;
			*t = (struct target){ .pfd = fcntl(h->dir, F_DUPFD_CLOEXEC, 3), .name = strdup(h->name),
					      .canonical = strdup(h->canonical), .exists = true };
			if (t->pfd < 0 || !t->name || !t->canonical)
				return -ENOMEM;
			return 0;
		}
	}
	int r = dsh_resolve(c, AT_FDCWD, path, true, t);
	if (r < 0)
		return r;
	if (!t->exists)
		return -ENOENT;
	/* Not a socket (a masked one is a mode-000 file): the kernel says so itself, if allowed.  On a
	   file system of the command's own it is one the sandbox bound. */
	if (t->own_fs || socket_allowed(c->b, t->canonical))
		return 0;
	snprintf(c->b->denial, sizeof(c->b->denial), "%s (protectSockets: a socket this run did not bind, not in "
		 "allowUnixSockets)", t->canonical);
	return -EACCES;
}

/*
 * Run fn(arg) with the broker's cwd at dir: a socket name is spelled relative to its held parent,
 * so a long path still fits sun_path and no component is looked up again.
 */
static int in_dir(int dir, int (*fn)(void *), void *arg)
{
	_cleanup_close_ int here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (here < 0 || fchdir(dir) < 0)
		return -errno;
	int r = fn(arg);
	int e = errno;
	if (fchdir(here) < 0)
		abort(); /* the broker would resolve nothing right from now on */
	errno = e;
	return r;
}

/* Address a socket call at (dir, name): name in a sockaddr_un of its own. */
static int relative_addr(const struct target *t, struct sockaddr_un *un, socklen_t *len)
{
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	size_t n = strlen(t->name);
	if (n >= sizeof(un->sun_path))
		return -ENAMETOOLONG;
	memcpy(un->sun_path, t->name, n);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

struct sock_op {
	int fd;
	struct sockaddr_storage ss;
	socklen_t len;
	struct msghdr mh;
	struct iovec iov;
	int flags;
	size_t total;        /* bytes to send */
	pid_t sigpipe_to;    /* the caller, when it did not ask for MSG_NOSIGNAL; else 0 */
};

/*
 * The broker sends with MSG_NOSIGNAL (a SIGPIPE is the caller's, not init's); a caller that did not
 * ask for it gets the signal the kernel would have sent it.
 */
static ssize_t send_as_caller(struct sock_op *o, int flags)
{
	ssize_t n = sendmsg(o->fd, &o->mh, flags | MSG_NOSIGNAL);
	if (n < 0 && errno == EPIPE && o->sigpipe_to > 0) {
		int e = errno;
		(void)kill(o->sigpipe_to, SIGPIPE);
		errno = e;
	}
	return n;
}

static int op_connect(void *arg)
{
	struct sock_op *o = arg;
	return connect(o->fd, (struct sockaddr *)&o->ss, o->len);
}

static int64_t op_connect_blocking(void *arg)
{
	return op_connect(arg) < 0 ? -errno : 0;
}

static int op_bind(void *arg)
{
	struct sock_op *o = arg;
	return bind(o->fd, (struct sockaddr *)&o->ss, o->len);
}

static int op_send_now(void *arg)
{
	struct sock_op *o = arg;
	return (int)send_as_caller(o, o->flags);
}

/* The rest of a send, blocking as the caller's own call would; the total sent, or -errno. */
static int64_t op_send_rest(void *arg)
{
	struct sock_op *o = arg;
	size_t done = o->total - o->iov.iov_len;
	while (o->iov.iov_len > 0 || (o->total == 0 && done == 0)) {
		ssize_t n = send_as_caller(o, o->flags & ~MSG_DONTWAIT);
		if (n < 0)
			return done ? (int64_t)done : -errno;
		done += (size_t)n;
		if (o->total == 0)
			break;
		o->iov.iov_base = (char *)o->iov.iov_base + n;
		o->iov.iov_len -= (size_t)n;
		o->mh.msg_control = NULL; /* sent with the first bytes */
		o->mh.msg_controllen = 0;
		if (o->mh.msg_name)
			break; /* a datagram goes whole or not at all */
	}
	return (int64_t)done;
}

/*
 * A call that may block (connect on a blocking socket, a send that would wait for room): done by a
 * short-lived thread of the broker, which answers the notification itself, so the broker goes on
 * serving every other call meanwhile.  Only for calls whose target needs no check that a later
 * rename could undo (no pathname destination).  The thread owns its copy of everything — the
 * socket's duplicate, the data, the control data and its descriptors — and touches no state of the
 * broker's: only the listener, whose ioctls the kernel serialises.  A thread, not a child: a fork
 * of init per connect cost a millisecond.
 */
typedef int64_t (*deferred_fn)(void *arg);

struct job {
	struct sock_op o;
	deferred_fn fn;
	int listener;
	uint64_t id;
	char *data, *control;
	int *fds;
	size_t n_fds;
};

/* Threads at work at once, at most: past that a blocking call waits in the broker itself (the
   command stalls its own brokered calls, and init's memory stays bounded). */
#define MAX_JOBS 256
static unsigned jobs;

static void job_free(struct job *j)
{
	__atomic_sub_fetch(&jobs, 1, __ATOMIC_RELAXED);
	if (j->o.fd >= 0)
		close(j->o.fd);
	for (size_t i = 0; i < j->n_fds; i++)
		close(j->fds[i]);
	free(j->fds);
	free(j->data);
	free(j->control);
	free(j);
}

static void *job_run(void *arg)
{
	struct job *j = arg;
	int64_t r = j->fn(&j->o);
	struct seccomp_notif_resp resp = { .id = j->id, .val = r < 0 ? 0 : r, .error = r < 0 ? (int32_t)r : 0 };
	(void)ioctl(j->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	job_free(j);
	return NULL;
}

/*
 * Hand o to a thread.  data, control and fds (o's buffers, may be NULL) become the thread's: the
 * caller's pointers are cleared.  Without a thread the call blocks here rather than fail.
 */
static int defer(struct call *c, deferred_fn fn, struct sock_op *o, char **data, char **control, int **fds,
		 size_t *n_fds)
{
	bool room = __atomic_add_fetch(&jobs, 1, __ATOMIC_RELAXED) <= MAX_JOBS;
	struct job *j = room ? calloc(1, sizeof(*j)) : NULL;
	int fd = j ? fcntl(o->fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (fd < 0) {
		__atomic_sub_fetch(&jobs, 1, __ATOMIC_RELAXED);
		free(j);
		int64_t r = fn(o);
		return r < 0 ? dsh_call_respond(c, 0, (int)-r) : dsh_call_respond(c, r, 0);
	}
	*j = (struct job){ .o = *o, .fn = fn, .listener = c->listener, .id = c->req->id };
	j->o.fd = fd;
	if (o->mh.msg_name)
		j->o.mh.msg_name = &j->o.ss;
	j->o.mh.msg_iov = &j->o.iov;
	if (data) {
		j->data = *data;
		*data = NULL;
	}
	if (control) {
		j->control = *control;
		*control = NULL;
	}
	if (fds) {
		j->fds = *fds;
		j->n_fds = *n_fds;
		*fds = NULL;
		*n_fds = 0;
	}
	pthread_attr_t attr;
	pthread_t t;
	int e = pthread_attr_init(&attr);
	if (e == 0) {
		(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		(void)pthread_attr_setstacksize(&attr, 64 * 1024);
		e = pthread_create(&t, &attr, job_run, j);
		pthread_attr_destroy(&attr);
	}
	if (e != 0) {
		int64_t r = fn(&j->o);
		job_free(j);
		return r < 0 ? dsh_call_respond(c, 0, (int)-r) : dsh_call_respond(c, r, 0);
	}
	return 0;
}

/* connect and bind's socket (a copy of the caller's descriptor) and address: the copy, or -errno. */
static int sock_args(struct call *c, struct sock_op *o)
{
	int r = read_addr(c, ARG(1), ARG(2), &o->ss, &o->len);
	if (r < 0)
		return r;
	return o->fd = dsh_caller_fd(c, (int)ARG(0));
}

/*
 * A pathname unix destination of a connect or a send: checked (unix_target), and o's address
 * rewritten relative to the directory t then holds (cleared by the caller), for in_dir.
 */
static int unix_destination(struct call *c, const char *path, struct sock_op *o, struct target *t)
{
	int r = unix_target(c, path, t);
	struct sockaddr_un un;
	if (r >= 0)
		r = relative_addr(t, &un, &o->len);
	if (r >= 0)
		memcpy(&o->ss, &un, sizeof(un));
	return r;
}

static int do_connect(struct call *c)
{
	struct sock_op o = { .fd = -1 };
	_cleanup_close_ int fd = sock_args(c, &o);
	if (fd < 0)
		return dsh_call_answer(c, fd);
	int r;
	const char *path = unix_path(&o.ss, o.len);
	if (path) {
		/* Done here, between two notifications: no rename of the command's can swap the name
		   between the check and the connect.  A unix connect waits only while the listener's
		   backlog is full. */
		struct target t;
		r = unix_destination(c, path, &o, &t);
		if (r >= 0)
			r = in_dir(t.pfd, op_connect, &o) < 0 ? -errno : 0;
		dsh_target_clear(&t);
		return dsh_call_answer(c, r);
	}
	if ((r = abstract_destination(c, &o.ss, o.len)) < 0)
		return dsh_call_answer(c, r);
	/* Another family, or an allowed abstract or unnamed unix address: nothing more to check, but
	   a blocking connect (a TCP handshake) must not hold up every other brokered call. */
	if (caller_blocking(fd))
		return defer(c, op_connect_blocking, &o, NULL, NULL, NULL, NULL);
	return dsh_call_answer(c, op_connect(&o) < 0 ? -errno : 0);
}

static int record_bound(struct dsh_broker *b, const char *canonical)
{
	if (b->n_bound >= MAX_BOUND)
		return 0; /* connects to it are refused: the run bound more sockets than anyone needs */
	char **v = realloc(b->bound, (b->n_bound + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	b->bound = v;
	if (!(v[b->n_bound] = strdup(canonical)))
		return -ENOMEM;
	b->n_bound++;
	return 0;
}

static int do_bind(struct call *c)
{
	struct sock_op o = { .fd = -1 };
	_cleanup_close_ int fd = sock_args(c, &o);
	if (fd < 0)
		return dsh_call_answer(c, fd);
	int r;
	const char *path = unix_path(&o.ss, o.len);
	if (!path) {
		if (op_bind(&o) < 0)
			return dsh_call_answer(c, -errno);
		/* An abstract name (or one the kernel chose: autobind) is this run's from now on. */
		struct sockaddr_storage got;
		socklen_t got_len = sizeof(got);
		_cleanup_free_ char *key = NULL;
		if (getsockname(fd, (struct sockaddr *)&got, &got_len) == 0 && (key = abstract_key(&got, got_len)) &&
		    record_bound(c->b, key) < 0)
			return dsh_call_answer(c, -ENOMEM);
		return dsh_call_answer(c, 0);
	}
	/* A new name, as mknod makes one: a rule's word first. */
	mode_t um = dsh_caller_umask(c);
	struct target t;
	r = dsh_resolve(c, AT_FDCWD, path, false, &t);
	if (r >= 0 && t.exists)
		r = -EADDRINUSE;
	if (r >= 0 && (dsh_broker_create_denied(c->b, &t) || dsh_broker_nondir_denied(c->b, &t)) && !dsh_broker_kernel_refuses_name(&t))
		r = -EACCES;
	if (r >= 0) {
		struct sockaddr_un un;
		r = relative_addr(&t, &un, &o.len);
		memcpy(&o.ss, &un, sizeof(un));
	}
	if (r >= 0) {
		dsh_broker_use_umask(c->b, um);
		r = in_dir(t.pfd, op_bind, &o) < 0 ? -errno : 0;
	}
	if (r >= 0 && !t.own_fs)
		r = record_bound(c->b, t.canonical);
	dsh_target_clear(&t);
	return dsh_call_answer(c, r);
}

/* The caller's descriptors in SCM_RIGHTS, replaced by the broker's duplicates (closed by the caller). */
static int translate_rights(struct call *c, struct msghdr *mh, int **ret_fds, size_t *ret_n)
{
	*ret_fds = NULL;
	*ret_n = 0;
	const char *end = (const char *)mh->msg_control + mh->msg_controllen;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		/* The caller wrote cmsg_len: it must stay inside the copy, as the kernel requires. */
		if (cm->cmsg_len < CMSG_LEN(0) || cm->cmsg_len > (size_t)(end - (const char *)cm))
			return -EINVAL;
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *fds = realloc(*ret_fds, (*ret_n + n) * sizeof(int));
		if (!fds)
			return -ENOMEM;
		*ret_fds = fds;
		for (size_t i = 0; i < n; i++) {
			int theirs;
			memcpy(&theirs, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			int mine = dsh_caller_fd(c, theirs);
			if (mine < 0)
				return mine == -ENOENT ? -ENOENT : -EBADF;
			fds[(*ret_n)++] = mine;
			memcpy(CMSG_DATA(cm) + i * sizeof(int), &mine, sizeof(int));
		}
	}
	return 0;
}

/*
 * One send: o holds our copy of the caller's message (its data flattened into one buffer).  A
 * pathname destination is checked and sent to here, without waiting (a full receiver: EAGAIN after
 * a bounded wait); anything else is tried without waiting and, when the caller's socket blocks, the
 * rest is sent by a deferred child.  *ret is the call's result when the call was answered here
 * (0 returned), or the caller must not answer (1 returned: a child answers).
 */
static int send_one(struct call *c, struct sock_op *o, bool may_defer, int64_t *ret)
{
	bool wait = caller_blocking(o->fd) && !(o->flags & MSG_DONTWAIT);
	const char *path = o->mh.msg_name ? unix_path(&o->ss, o->len) : NULL;
	if (path) {
		struct target t;
		int r = unix_destination(c, path, o, &t);
		if (r >= 0) {
			o->mh.msg_namelen = o->len;
			o->flags |= MSG_DONTWAIT;
			for (int i = 0; i < 100; i++) {
				r = in_dir(t.pfd, op_send_now, o);
				if (r >= 0 || errno != EAGAIN || !wait)
					break;
				usleep(10000);
			}
			r = r < 0 ? -errno : r;
		}
		dsh_target_clear(&t);
		*ret = r;
		return 0;
	}
	int r = o->mh.msg_name ? abstract_destination(c, &o->ss, o->len) : 0;
	if (r < 0) {
		*ret = r;
		return 0;
	}
	int user_flags = o->flags;
	o->flags |= MSG_DONTWAIT;
	ssize_t n = send_as_caller(o, o->flags);
	int e = errno;
	o->flags = user_flags;
	if (!wait || (n >= 0 && (size_t)n == o->total) || (n < 0 && e != EAGAIN)) {
		*ret = n < 0 ? -e : n;
		return 0;
	}
	if (n > 0) {
		if (!may_defer) {
			*ret = n;
			return 0;
		}
		o->iov.iov_base = (char *)o->iov.iov_base + n;
		o->iov.iov_len -= (size_t)n;
		o->mh.msg_control = NULL;
		o->mh.msg_controllen = 0;
	} else if (!may_defer) {
		*ret = -EAGAIN;
		return 0;
	}
	return 1;
}

/* Copy a msghdr's parts out of the caller into o (name, data flattened, control). */
static int read_msghdr(struct call *c, const struct msghdr *um, struct sock_op *o, char **data, char **control)
{
	int r;
	memset(&o->mh, 0, sizeof(o->mh));
	if (um->msg_name && um->msg_namelen) {
		if ((r = read_addr(c, (uint64_t)(uintptr_t)um->msg_name, um->msg_namelen, &o->ss, &o->len)) < 0)
			return r;
		o->mh.msg_name = &o->ss;
		o->mh.msg_namelen = o->len;
	}
	if (um->msg_iovlen > UIO_MAXIOV)
		return -EMSGSIZE;
	struct iovec *iov = NULL;
	if (um->msg_iovlen) {
		iov = calloc(um->msg_iovlen, sizeof(*iov));
		if (!iov)
			return -ENOMEM;
		if ((r = dsh_caller_read(c, (uint64_t)(uintptr_t)um->msg_iov, iov, um->msg_iovlen * sizeof(*iov))) < 0) {
			free(iov);
			return r;
		}
	}
	size_t total = 0;
	for (size_t i = 0; i < um->msg_iovlen; i++) {
		if ((ssize_t)iov[i].iov_len < 0) {
			free(iov);
			return -EINVAL;
		}
		total += iov[i].iov_len < MAX_SEND - total ? iov[i].iov_len : MAX_SEND - total;
	}
	*data = malloc(total ? total : 1);
	if (!*data) {
		free(iov);
		return -ENOMEM;
	}
	size_t at = 0;
	for (size_t i = 0; i < um->msg_iovlen && at < total; i++) {
		size_t n = iov[i].iov_len < total - at ? iov[i].iov_len : total - at;
		if (n && (r = dsh_caller_read(c, (uint64_t)(uintptr_t)iov[i].iov_base, *data + at, n)) < 0) {
			free(iov);
			return r;
		}
		at += n;
	}
	free(iov);
	o->iov = (struct iovec){ *data, total };
	o->total = total;
	o->mh.msg_iov = &o->iov;
	o->mh.msg_iovlen = 1;
	if (um->msg_control && um->msg_controllen) {
		if (um->msg_controllen > MAX_CONTROL)
			return -ENOBUFS;
		*control = malloc(um->msg_controllen);
		if (!*control)
			return -ENOMEM;
		if ((r = dsh_caller_read(c, (uint64_t)(uintptr_t)um->msg_control, *control, um->msg_controllen)) < 0)
			return r;
		o->mh.msg_control = *control;
		o->mh.msg_controllen = um->msg_controllen;
	}
	return 0;
}

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
}

/* sendto with a destination, sendmsg: one message. */
static int do_send(struct call *c, bool is_sendmsg)
{
	_cleanup_close_ int fd = dsh_caller_fd(c, (int)ARG(0));
	if (fd < 0)
		return dsh_call_answer(c, fd);
	struct sock_op o = { .fd = fd };
	_cleanup_free_ char *data = NULL, *control = NULL;
	int *fds = NULL;
	size_t n_fds = 0;
	int r;
	if (is_sendmsg) {
		struct msghdr um;
		if ((r = dsh_caller_read(c, ARG(1), &um, sizeof(um))) < 0)
			return dsh_call_answer(c, r);
		o.flags = (int)ARG(2);
		r = read_msghdr(c, &um, &o, &data, &control);
		if (r >= 0 && o.mh.msg_control)
			r = translate_rights(c, &o.mh, &fds, &n_fds);
	} else {
		o.flags = (int)ARG(3);
		size_t len = ARG(2) < MAX_SEND ? (size_t)ARG(2) : MAX_SEND;
		r = read_addr(c, ARG(4), ARG(5), &o.ss, &o.len);
		if (r >= 0 && !(data = malloc(len ? len : 1)))
			r = -ENOMEM;
		if (r >= 0 && len)
			r = dsh_caller_read(c, ARG(1), data, len);
		o.iov = (struct iovec){ data, len };
		o.total = len;
		o.mh = (struct msghdr){ .msg_name = &o.ss, .msg_namelen = o.len, .msg_iov = &o.iov, .msg_iovlen = 1 };
	}
	if (r < 0) {
		close_all(fds, n_fds);
		return dsh_call_answer(c, r);
	}
	o.sigpipe_to = (o.flags & MSG_NOSIGNAL) ? 0 : (pid_t)c->req->pid;
	int64_t res = 0;
	r = send_one(c, &o, true, &res);
	if (r == 1) {
		/* The buffers the iovec and the control point into become the thread's. */
		r = defer(c, op_send_rest, &o, &data, &control, &fds, &n_fds);
	} else {
		r = res < 0 ? dsh_call_respond(c, 0, (int)-res) : dsh_call_respond(c, res, 0);
	}
	close_all(fds, n_fds);
	return r;
}

/*
 * Write one value back into the caller (sendmmsg's msg_len).  process_vm_writev, not /proc/PID/mem:
 * opening that for writing is a file write, which the broker's own Landlock domain refuses.
 */

/* sendmmsg: each message as sendmsg, in order, stopping at the first that fails or would wait. */
static int do_sendmmsg(struct call *c)
{
	_cleanup_close_ int fd = dsh_caller_fd(c, (int)ARG(0));
	if (fd < 0)
		return dsh_call_answer(c, fd);
	unsigned vlen = (unsigned)ARG(2) > UIO_MAXIOV ? UIO_MAXIOV : (unsigned)ARG(2);
	int sent = 0, first_err = 0;
	for (unsigned i = 0; i < vlen; i++) {
		uint64_t at = ARG(1) + (uint64_t)i * sizeof(struct mmsghdr);
		struct mmsghdr um;
		int r = dsh_caller_read(c, at, &um, sizeof(um));
		struct sock_op o = { .fd = fd, .flags = (int)ARG(3) };
		o.sigpipe_to = (o.flags & MSG_NOSIGNAL) ? 0 : (pid_t)c->req->pid;
		char *data = NULL, *control = NULL;
		int *fds = NULL;
		size_t n_fds = 0;
		if (r >= 0)
			r = read_msghdr(c, &um.msg_hdr, &o, &data, &control);
		if (r >= 0 && o.mh.msg_control)
			r = translate_rights(c, &o.mh, &fds, &n_fds);
		int64_t res = r;
		if (r >= 0 && send_one(c, &o, false, &res) == 1)
			res = -EAGAIN;
		close_all(fds, n_fds);
		free(data);
		free(control);
		if (res < 0) {
			first_err = (int)-res;
			break;
		}
		unsigned len = (unsigned)res;
		if ((r = dsh_caller_write(c, at + offsetof(struct mmsghdr, msg_len), &len, sizeof(len))) < 0) {
			first_err = -r;
			break;
		}
		sent++;
	}
	return sent ? dsh_call_respond(c, sent, 0) : dsh_call_respond(c, 0, first_err);
}

/* Serve a socket call: connect, bind, and the sends with a destination (SPEC 3.11). */
int dsh_broker_socket_call(struct call *c)
{
	switch (c->req->data.nr) {
	case __NR_connect:
		return do_connect(c);
	case __NR_bind:
		return do_bind(c);
	case __NR_sendto:
		return do_send(c, false);
	case __NR_sendmsg:
		return do_send(c, true);
	case __NR_sendmmsg:
		return do_sendmmsg(c);
	default:
		return dsh_call_answer(c, -ENOSYS);
	}
}

int dsh_broker_hold_sockets(struct dsh_broker *b, struct dsh_error **err)
{
	for (size_t i = 0; b->allowed_sockets && b->allowed_sockets[i]; i++) {
		const char *p = b->allowed_sockets[i];
		char real[PATH_MAX];
		if (p[0] == '@')
			continue; /* an abstract name: in the network namespace, not the tree */
		if (!realpath(p, real))
			continue; /* absent now: reached only if it appears where the command can see it */
		char *slash = strrchr(real, '/');
		_cleanup_free_ char *dir = strndup(real, slash == real ? 1 : (size_t)(slash - real));
		if (!dir)
			return dsh_err_sys(err, ENOMEM, "broker");
		int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct dsh_held_socket *v = realloc(b->held, (b->n_held + 1) * sizeof(*v));
		if (!v) {
			close(fd);
			return dsh_err_sys(err, ENOMEM, "broker");
		}
		b->held = v;
		struct dsh_held_socket *h = &v[b->n_held];
		*h = (struct dsh_held_socket){ .dir = fd, .name = strdup(slash + 1), .path = dsh_path_normalize(NULL, p),
					       .canonical = strdup(real) };
		b->n_held++;
		if (!h->name || !h->path || !h->canonical)
			return dsh_err_sys(err, ENOMEM, "broker");
	}
	return 0;
}
