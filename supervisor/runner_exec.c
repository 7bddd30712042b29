/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Spawning an external runner: its stderr is the one stream dshbox must watch (a runner's refusal
 * looks like output), so it goes through a pipe and is relayed byte for byte to the caller's stderr
 * while the failure signatures are searched in it.  stdin and stdout stay the caller's own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/path_search.h"
#include "common/write_all.h"
#include "common/strv.h"
#include "supervisor/child.h"
#include "supervisor/runner_exec.h"
#include "supervisor/sandbox.h"

/* ---- signature scanning ---- */

static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

void dsh_sigscan_init(struct dsh_sigscan *s, char *const *sigs)
{
	memset(s, 0, sizeof(*s));
	s->sigs = sigs;
	s->matched = -1;
	for (size_t i = 0; sigs && sigs[i]; i++)
		if (strlen(sigs[i]) > s->max_len)
			s->max_len = strlen(sigs[i]);
}

/* Whether needle occurs in hay[0..n), case-insensitively (ASCII). */
static bool contains_ci(const char *hay, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	if (m == 0 || m > n)
		return false;
	unsigned char first = lower((unsigned char)needle[0]), other = first;
	if (first >= 'a' && first <= 'z')
		other = (unsigned char)(first - 32);
	const unsigned char *h = (const unsigned char *)hay, *end = h + n - m + 1;
	while (h < end) {
		/* jump to the next candidate first byte (either case) */
		const unsigned char *a = memchr(h, first, (size_t)(end - h));
		const unsigned char *b = other != first ? memchr(h, other, (size_t)(end - h)) : NULL;
		const unsigned char *c = !a ? b : !b ? a : a < b ? a : b;
		if (!c)
			return false;
		size_t j = 1;
		while (j < m && lower(c[j]) == lower((unsigned char)needle[j]))
			j++;
		if (j == m)
			return true;
		h = c + 1;
	}
	return false;
}

static void scan(struct dsh_sigscan *s, const char *buf, size_t n)
{
	for (size_t i = 0; s->sigs[i]; i++)
		if (contains_ci(buf, n, s->sigs[i])) {
			s->matched = (int)i;
			return;
		}
}

void dsh_sigscan_feed(struct dsh_sigscan *s, const char *buf, size_t n)
{
	if (s->matched >= 0 || s->max_len == 0 || n == 0)
		return;
	size_t keep = s->max_len - 1;
	/* Matches that straddle the previous chunk: the kept tail plus the head of this one. */
	if (s->window_len > 0) {
		size_t head = n < keep ? n : keep;
		char *w = realloc(s->window, s->window_len + head);
		if (w) {
			s->window = w;
			memcpy(w + s->window_len, buf, head);
			scan(s, w, s->window_len + head);
			if (s->matched >= 0)
				return;
		}
	}
	/* Matches inside this chunk, scanned where it lies. */
	scan(s, buf, n);
	if (s->matched >= 0 || keep == 0)
		return;
	/* Keep the last keep bytes seen (this chunk may be shorter than that). */
	size_t total = s->window_len + n;
	size_t from_old = total > keep ? (n >= keep ? 0 : keep - n) : s->window_len;
	char *w = malloc(keep);
	if (!w)
		return; /* no window: straddling matches are missed, chunks are still scanned */
	size_t len = 0;
	if (from_old) {
		memcpy(w, s->window + s->window_len - from_old, from_old);
		len = from_old;
	}
	size_t from_new = n < keep - len ? n : keep - len;
	memcpy(w + len, buf + n - from_new, from_new);
	len += from_new;
	free(s->window);
	s->window = w;
	s->window_len = len;
}

void dsh_sigscan_clear(struct dsh_sigscan *s)
{
	free(s->window);
	s->window = NULL;
	s->window_len = 0;
}

/* ---- finding the runner ---- */

int dsh_runner_find_program(const char *name, char *const *envp, char **ret, struct dsh_error **err)
{
	if (!name || !*name)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "runnerCommand: empty program name");
	if (strchr(name, '/')) {
		if (access(name, X_OK) < 0)
			return dsh_err_sys(err, errno, "runner '%s'", name);
		*ret = strdup(name);
		return *ret ? 0 : dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	/* An empty PATH means the default here (execvp would search only the current directory). */
	const char *path = dsh_env_get(envp, "PATH");
	struct dsh_path_search ps;
	dsh_path_search_init(&ps, path && *path ? path : NULL, name);
	char cand[PATH_MAX];
	for (int r; (r = dsh_path_search_next(&ps, cand, sizeof(cand))) != 0;) {
		struct stat st;
		if (r > 0 && stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
			*ret = strdup(cand);
			return *ret ? 0 : dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		}
	}
	int r = dsh_err(err, DSH_ERR_CONFIG, ENOENT, "runner '%s' not found in PATH", name);
	dsh_err_hint(err, "install it, or give runnerCommand an absolute path");
	return r;
}

/* ---- running ---- */

struct child_arg {
	const struct dsh_runner_spawn *s;
	int err_pipe, stderr_w;
	const sigset_t *caller_mask;
};

/* In the child: returns only when it cannot exec, after reporting errno on the CLOEXEC pipe. */
static int child_fn(void *p)
{
	const struct child_arg *a = p;
	const struct dsh_runner_spawn *s = a->s;
	int e;
	if (a->stderr_w >= 0 && dup2(a->stderr_w, 2) < 0)
		goto fail;
	if (s->cwd && chdir(s->cwd) < 0)
		goto fail;
	/* Descriptors above 2 do not reach the runner unless preserved (SPEC 3.7); the error pipe is
	   close-on-exec already. */
	if (dsh_fds_close_on_exec(s->preserve_fds, s->n_preserve_fds, NULL) < 0)
		goto fail;
	sigprocmask(SIG_SETMASK, a->caller_mask, NULL);
	execve(s->path, s->argv, s->envp);
fail:
	e = errno;
	(void)dsh_write_all(a->err_pipe, &e, sizeof(e));
	return 127;
}

static void scan_tap(void *scan, const char *buf, size_t n)
{
	dsh_sigscan_feed(scan, buf, n);
}

int dsh_runner_run(const struct dsh_runner_spawn *s, struct dsh_run_result *ret, int *ret_matched,
		   struct dsh_error **err)
{
	*ret_matched = -1;
	memset(ret, 0, sizeof(*ret));

	struct dsh_child ch;
	int r = dsh_child_begin(&ch, err);
	if (r < 0) {
		dsh_err_prefix(err, "runner");
		return r;
	}
	int errp[2] = { -1, -1 }, outp[2] = { -1, -1 };
	struct dsh_sigscan scan;
	dsh_sigscan_init(&scan, s->signatures);
	if (pipe2(errp, O_CLOEXEC) < 0 || (s->signatures && pipe2(outp, O_CLOEXEC) < 0)) {
		r = dsh_err_sys(err, errno, "runner: pipe2");
		goto out;
	}
	struct child_arg arg = { s, errp[1], outp[1], &ch.caller_mask };
	r = dsh_child_spawn(&ch, 0, child_fn, &arg, err);
	if (r < 0) {
		dsh_err_prefix(err, "runner");
		goto out;
	}
	close(errp[1]);
	errp[1] = -1;
	if (outp[1] >= 0) {
		close(outp[1]);
		outp[1] = -1;
	}

	int exec_errno = 0;
	ssize_t n;
	while ((n = read(errp[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	bool started = n == 0;

	/* The runner's stderr goes through us only to be scanned: relayed unchanged meanwhile. */
	struct dsh_child_relay relay = { .to = s->stderr_fd, .tap = scan_tap, .tap_data = &scan };
	struct dsh_child_watch w = { outp[0], dsh_child_relay_ready, &relay };
	r = dsh_child_wait(&ch, &w, 1, err);
	if (r < 0) {
		dsh_err_prefix(err, "runner");
		goto out;
	}
	if (!started) {
		r = dsh_err_sys(err, exec_errno, "runner '%s'", s->path);
		goto out;
	}
	dsh_child_decode(ch.status, ret);
	*ret_matched = scan.matched;
out:
	dsh_sigscan_clear(&scan);
	for (int i = 0; i < 2; i++) {
		if (errp[i] >= 0)
			close(errp[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	dsh_child_end(&ch);
	return r;
}
