/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/die_with.h"
#include "common/strv.h"
#include "common/write_all.h"
#include "supervisor/forked_run.h"

bool dsh_process_is_threaded(void)
{
	/* /proc/self/stat's 20th field; the command name (2nd) may hold spaces, so count from ')'. */
	char buf[1024];
	_cleanup_close_ int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return true;
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	long threads = 0;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld",
			 &threads) != 1)
		return true;
	return threads != 1;
}

/* What goes back, before the strings: fixed-size, the same program on both ends. */
struct outcome {
	int rc;
	int exit_code, signal;
	unsigned long refused;
	char refusal[DSH_REFUSAL_MAX];
	bool have_err;
	int err_kind, err_code;
	uint32_t n_warnings;
	uint32_t n_net_refused;
	struct dsh_timing timing;
};

static int put_string(int fd, const char *s)
{
	uint32_t len = s ? (uint32_t)strlen(s) + 1 : 0;
	if (dsh_write_all(fd, &len, sizeof(len)) < 0)
		return -1;
	return len ? dsh_write_all(fd, s, len) : 0;
}

static int read_full(int fd, void *buf, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t r = read(fd, (char *)buf + off, n - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		off += (size_t)r;
	}
	return 0;
}

/* A string put_string wrote: *ret NULL for none; -1 when the stream ended or memory did. */
static int get_string(int fd, char **ret)
{
	uint32_t len;
	*ret = NULL;
	if (read_full(fd, &len, sizeof(len)) < 0)
		return -1;
	if (!len)
		return 0;
	if (len > (1U << 24) || !(*ret = malloc(len)))
		return -1;
	if (read_full(fd, *ret, len) < 0 || (*ret)[len - 1]) {
		free(*ret);
		*ret = NULL;
		return -1;
	}
	return 0;
}

static void send_outcome(int fd, int rc, const struct dsh_run_result *res, const struct dsh_error *e,
			 const struct dsh_timing *timing)
{
	static struct outcome o; /* static: a struct dsh_timing is large for a stack in a small child */
	memset(&o, 0, sizeof(o));
	o.rc = rc;
	o.exit_code = res->exit_code;
	o.signal = res->signal;
	o.refused = res->refused;
	memcpy(o.refusal, res->refusal, sizeof(o.refusal));
	o.have_err = e != NULL;
	o.err_kind = e ? (int)e->kind : 0;
	o.err_code = e ? e->code : 0;
	o.n_warnings = (uint32_t)dsh_strv_len(res->warnings);
	o.n_net_refused = (uint32_t)res->n_net_refused;
	if (timing)
		o.timing = *timing;
	if (dsh_write_all(fd, &o, sizeof(o)) < 0 || put_string(fd, res->message) < 0 ||
	    put_string(fd, e ? e->msg : NULL) < 0 || put_string(fd, e ? e->hint : NULL) < 0 ||
	    put_string(fd, e ? e->path : NULL) < 0 || put_string(fd, e ? e->rule : NULL) < 0)
		return;
	for (uint32_t i = 0; i < o.n_warnings; i++)
		if (put_string(fd, res->warnings[i]) < 0)
			return;
	for (uint32_t i = 0; i < o.n_net_refused; i++) {
		const struct dsh_net_refusal *f = &res->net_refused[i];
		uint64_t nums[2] = { f->port, f->count };
		if (dsh_write_all(fd, nums, sizeof(nums)) < 0 || put_string(fd, f->name) < 0 || put_string(fd, f->via) < 0 ||
		    put_string(fd, f->reason) < 0)
			return;
	}
}

/* The refusals send_outcome() wrote after the warnings. */
static int receive_net_refused(int fd, uint32_t n, struct dsh_run_result *ret)
{
	if (n > 4096 || !n)
		return n ? -1 : 0;
	ret->net_refused = calloc(n, sizeof(*ret->net_refused));
	if (!ret->net_refused)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		struct dsh_net_refusal *f = &ret->net_refused[i];
		uint64_t nums[2];
		ret->n_net_refused = i + 1; /* what was read so far is the caller's to free */
		if (read_full(fd, nums, sizeof(nums)) < 0 || get_string(fd, &f->name) < 0 || get_string(fd, &f->via) < 0 ||
		    get_string(fd, &f->reason) < 0 || !f->name || !f->via || !f->reason)
			return -1;
		f->port = (unsigned)nums[0];
		f->count = (unsigned long)nums[1];
	}
	return 0;
}

/* -ENODATA (no error set) when the child sent nothing at all: fn exec'd (the pipe is CLOEXEC). */
static int receive_outcome(int fd, struct dsh_timing *timing, struct dsh_run_result *ret, struct dsh_error **err)
{
	struct outcome o; /* not static: threads of the host receive at once (make soak) */
	_cleanup_free_ char *msg = NULL, *hint = NULL, *path = NULL, *rule = NULL;
	ssize_t first;
	while ((first = read(fd, &o, 1)) < 0 && errno == EINTR)
		;
	if (first == 0)
		return -ENODATA;
	if (first < 0 || read_full(fd, (char *)&o + 1, sizeof(o) - 1) < 0 || get_string(fd, &ret->message) < 0 ||
	    get_string(fd, &msg) < 0 ||
	    get_string(fd, &hint) < 0 || get_string(fd, &path) < 0 || get_string(fd, &rule) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, EPIPE, "run: the supervising child ended without its outcome");
	for (uint32_t i = 0; i < o.n_warnings; i++) {
		char *w;
		if (get_string(fd, &w) < 0 || !w || dsh_strv_push_take(&ret->warnings, w) < 0)
			return dsh_err(err, DSH_ERR_SYSTEM, EPIPE, "run: the supervising child's warnings were cut short");
	}
	if (receive_net_refused(fd, o.n_net_refused, ret) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, EPIPE, "run: the supervising child's network refusals were cut short");
	ret->exit_code = o.exit_code;
	ret->signal = o.signal;
	ret->refused = o.refused;
	memcpy(ret->refusal, o.refusal, sizeof(ret->refusal));
	ret->refusal[sizeof(ret->refusal) - 1] = 0;
	if (timing)
		*timing = o.timing;
	if (o.have_err) {
		dsh_err(err, (enum dsh_err_kind)o.err_kind, o.err_code, "%s", msg ? msg : "run failed");
		if (hint)
			dsh_err_hint(err, "%s", hint);
		if (path || rule)
			dsh_err_subject(err, path, rule);
	}
	if (o.rc < 0 && !o.have_err)
		return dsh_err(err, DSH_ERR_SYSTEM, -o.rc, "run");
	return o.rc;
}

int dsh_forked_run(int (*fn)(const void *arg, struct dsh_run_result *ret, struct dsh_error **err), const void *arg,
		   struct dsh_timing *timing, struct dsh_run_result *ret, struct dsh_error **err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return dsh_err_sys(err, errno, "pipe");
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return dsh_err_sys(err, e, "fork");
	}
	if (pid == 0) {
		close(p[0]);
		if (!dsh_die_with(parent, SIGKILL))
			_exit(125);
		struct dsh_run_result res = { 0 };
		struct dsh_error *e = NULL;
		int rc = fn(arg, &res, &e);
		send_outcome(p[1], rc, &res, e, timing);
		/* _exit: the caller's atexit handlers and stdio buffers are the caller's, run once. */
		_exit(0);
	}
	close(p[1]);
	memset(ret, 0, sizeof(*ret));
	int r = receive_outcome(p[0], timing, ret, err);
	close(p[0]);
	/* The outcome came through the pipe: a host that ignores SIGCHLD (no status to wait for) still
	   gets it.  When fn exec'd the command instead (backend none), the status is the result. */
	int status = 0;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (r != -ENODATA)
		return r;
	if (w < 0)
		return dsh_err_sys(err, errno, "run: wait for the command");
	if (WIFSIGNALED(status))
		ret->signal = WTERMSIG(status);
	else
		ret->exit_code = WEXITSTATUS(status);
	return 0;
}
