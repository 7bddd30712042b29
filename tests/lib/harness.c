/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "landlock/landlock.h"
#include "policy/policy.h"
#include "tests/lib/harness.h"

extern char **environ;

static void append(char **buf, size_t *len, const char *data, size_t n)
{
	char *b = realloc(*buf, *len + n + 1);
	cr_assert_not_null(b);
	memcpy(b + *len, data, n);
	*len += n;
	b[*len] = '\0';
	*buf = b;
}

/* dshbox probe's verdict, asked once per test process: exit 1 means no confining backend. */
static bool kernel_has_a_backend(void)
{
	static int has = -1;
	if (has < 0) {
		pid_t pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR | O_CLOEXEC);
			dup2(null, 1);
			dup2(null, 2);
			execl(dsh_test_dshbox(), "dshbox", "probe", (char *)NULL);
			_exit(127);
		}
		int status = 0;
		while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		has = !(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 1);
	}
	return has;
}

void dsh_test_require_landlock(void)
{
	int abi = dsh_landlock_abi();
	if (abi < 1)
		DSH_SKIP("this kernel has no Landlock (landlock_create_ruleset: %s; Linux 5.13+ with landlock "
			 "in lsm=)", strerror(-abi));
}

void dsh_test_require_backend(void)
{
	if (!kernel_has_a_backend())
		DSH_SKIP("this kernel has no confining backend (dshbox probe: neither linux-ns nor landlock): "
			 "every sandboxed run refuses with 125");
}

int dsh_proc_run(char *const argv[], char *const env[], const char *stdin_data, struct dsh_proc *r)
{
	int in[2], out[2], err[2];
	memset(r, 0, sizeof(*r));
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		/* A suite started in the background by a non-interactive shell (`.ci/run &`, nohup)
		   inherits SIGINT and SIGQUIT ignored, and so would every command under test: a
		   `kill -INT $$` inside would do nothing.  Tests see what a user at a terminal sees. */
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		if (env)
			execvpe(argv[0], argv, env);
		else
			execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	/* Partial writes, so a child that answers while it reads never deadlocks against us. */
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	size_t in_len = stdin_data ? strlen(stdin_data) : 0, in_off = 0;
	if (in_len == 0) {
		close(in[1]);
		in[1] = -1;
	}
	size_t out_len = 0, err_len = 0;
	append(&r->out, &out_len, "", 0);
	append(&r->err, &err_len, "", 0);
	signal(SIGPIPE, SIG_IGN);
	while (out[0] >= 0 || err[0] >= 0) {
		struct pollfd p[3] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 }, { in[1], POLLOUT, 0 } };
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		char buf[65536];
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(p[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(p[i].fd);
				if (i == 0)
					out[0] = -1;
				else
					err[0] = -1;
			} else if (i == 0)
				append(&r->out, &out_len, buf, (size_t)n);
			else
				append(&r->err, &err_len, buf, (size_t)n);
		}
		if (p[2].fd >= 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t n = write(in[1], stdin_data + in_off, in_len - in_off);
			if (n > 0)
				in_off += (size_t)n;
			if ((n < 0 && errno != EAGAIN) || in_off >= in_len) {
				close(in[1]);
				in[1] = -1;
			}
		}
	}
	if (in[1] >= 0)
		close(in[1]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(status)) {
		r->exit_code = -1;
		r->signal = WTERMSIG(status);
	} else {
		r->exit_code = WEXITSTATUS(status);
	}
	/*
	 * On a kernel with no confining backend (Debian's 5.10: no mount_setattr, no Landlock) dshbox
	 * refuses every sandboxed run with 125, as it must; a test that needs a sandbox cannot run
	 * there and skips, saying why.  Only that refusal, and only when the probe agrees (its exit
	 * status 1: no backend); tools/vmtest asserts the refusal itself.
	 */
	bool is_dshbox = false;
	for (size_t i = 0; argv[i] && !is_dshbox; i++) /* directly, or behind a shim */
		is_dshbox = strcmp(argv[i], dsh_test_dshbox()) == 0;
	/* The refusals a missing backend causes, by their stable wording; any other 125 still fails
	   (danger-full-access and the runner must work on every kernel). */
	bool refused = strstr(r->err, "no backend can enforce this policy here") ||
		       strstr(r->err, "landlock unavailable: ") || strstr(r->err, "mount_setattr: Function not implemented");
	if (r->exit_code == 125 && is_dshbox && refused && !kernel_has_a_backend()) {
		const char *nl = strchr(r->err, '\n');
		DSH_SKIP("this kernel has no confining backend (dshbox probe: neither linux-ns nor landlock); "
			 "dshbox refused with 125, as it must: %.*s", (int)(nl ? nl - r->err : (ptrdiff_t)strlen(r->err)), r->err);
	}
	return 0;
}

void dsh_proc_clear(struct dsh_proc *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

int dsh_count_lines_with_prefix(const char *s, const char *prefix)
{
	int n = 0;
	size_t pl = strlen(prefix);
	for (const char *l = s; l && *l;) {
		if (strncmp(l, prefix, pl) == 0)
			n++;
		const char *nl = strchr(l, '\n');
		l = nl ? nl + 1 : NULL;
	}
	return n;
}

const char *dsh_test_dshbox(void)
{
	return DSH_BUILD "/dshbox";
}

const char *dsh_test_escape_backend(void)
{
	const char *b = getenv("DSHBOX_ESCAPE_BACKEND");
	return b && *b ? b : "auto";
}

bool dsh_test_escape_landlock(void)
{
	return strcmp(dsh_test_escape_backend(), "landlock") == 0;
}

/*
 * A copy of the build's file NAME under /var/tmp, where the build lies under /tmp: a sandbox whose
 * workspace is elsewhere has a private /tmp, and a program there is not in it.  One copy per user,
 * made again only when the build's file is newer (suites running side by side bind it: replacing
 * it under one of them fails its mount), and then by rename, so no test sees half of it.
 */
static char *copy_outside_tmp(const char *name)
{
	char dir[200], tmp[PATH_MAX + 32], src[PATH_MAX], *path = NULL;
	snprintf(src, sizeof(src), "%s/%s", DSH_BUILD, name);
	struct stat from;
	cr_assert_eq(stat(src, &from), 0, "%s: %s", src, strerror(errno));
	/*
	 * One directory per build of the file: a copy, once made, is never replaced, so a suite
	 * running beside this one can bind or run it at any moment (a rename over a copy in use made
	 * a side-by-side suite's bind fail with ENOENT).
	 */
	snprintf(dir, sizeof(dir), "/var/tmp/dshbox-test-bin-%u", (unsigned)getuid());
	(void)mkdir(dir, 0700);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%lld.%09ld-%lld", (long long)from.st_mtim.tv_sec,
		 from.st_mtim.tv_nsec, (long long)from.st_size);
	(void)mkdir(dir, 0700);
	const char *slash = strrchr(name, '/');
	cr_assert(asprintf(&path, "%s/%s", dir, slash ? slash + 1 : name) > 0);
	if (access(path, X_OK) == 0)
		return path;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	char *cp[] = { "cp", src, tmp, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(cp, NULL, NULL, &r), 0);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	dsh_proc_clear(&r);
	/* link, not rename: whoever made the copy first keeps it; the same build's file either way. */
	if (link(tmp, path) != 0)
		cr_assert_eq(errno, EEXIST, "%s: %s", path, strerror(errno));
	unlink(tmp);
	return path;
}

static bool build_under_tmp(void)
{
	return strncmp(DSH_BUILD, "/tmp/", 5) == 0;
}

const char *dsh_test_dshbox_outside_roots(void)
{
	static char *path;
	if (!build_under_tmp())
		return dsh_test_dshbox();
	if (!path)
		path = copy_outside_tmp("dshbox");
	return path;
}

char *dsh_test_helper(const char *name)
{
	_cleanup_free_ char *rel = NULL;
	cr_assert(asprintf(&rel, "helpers/%s", name) > 0);
	if (build_under_tmp())
		return copy_outside_tmp(rel);
	char *p = NULL;
	cr_assert(asprintf(&p, "%s/%s", DSH_BUILD, rel) > 0);
	return p;
}

const char *dsh_test_conformance_dir(void)
{
	return DSH_TOP "/tests/conformance";
}

/*
 * Scratch trees live under /var/tmp: outside the sandbox's default writable roots, so a test can
 * make the workspace whatever it needs.  Where /var/tmp is read-only (these tests run inside a
 * sandbox, as an agent runs them), the build directory serves: it is in the workspace, and unlike
 * /tmp holds nothing of other users' that a walk from / would trip on.
 */
#define SCRATCH_FALLBACK DSH_BUILD "/scratch"

char *dsh_test_mkdtemp(void)
{
	char *p = NULL;
	cr_assert(asprintf(&p, "/var/tmp/dshbox-test.XXXXXX%*s", (int)strlen(SCRATCH_FALLBACK), "") > 0);
	p[strlen("/var/tmp/dshbox-test.XXXXXX")] = '\0';
	if (!mkdtemp(p)) {
		(void)mkdir(SCRATCH_FALLBACK, 0755);
		strcpy(p, SCRATCH_FALLBACK "/dshbox-test.XXXXXX");
		cr_assert_not_null(mkdtemp(p), "mkdtemp: %s", strerror(errno));
	}
	/* The sandbox maps the caller's uid to itself; the tree must be reachable by it. */
	chmod(p, 0755);
	return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D)
		chmod(path, 0700), rmdir(path);
	else
		unlink(path);
	return 0;
}

void dsh_test_rmtree(const char *path)
{
	static const char fallback[] = SCRATCH_FALLBACK "/dshbox-test.";
	if (path && (strncmp(path, "/var/tmp/dshbox-test.", 21) == 0 || strncmp(path, fallback, sizeof(fallback) - 1) == 0))
		nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS);
}

void dsh_test_write_file(const char *path, const char *content)
{
	char *dup = strdup(path);
	for (char *s = dup + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(dup, 0755);
		*s = '/';
	}
	free(dup);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
	fputs(content, f);
	fclose(f);
}

char *dsh_test_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	char chunk[4096];
	size_t n;
	append(&buf, &len, "", 0);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		append(&buf, &len, chunk, n);
	fclose(f);
	return buf;
}

static char **push(char **v, size_t *n, char *s)
{
	v = realloc(v, (*n + 2) * sizeof(char *));
	cr_assert_not_null(v);
	v[(*n)++] = s;
	v[*n] = NULL;
	return v;
}

void dsh_vectors_load(const char *name, struct dsh_vectors *v)
{
	memset(v, 0, sizeof(*v));
	cr_assert(asprintf(&v->path, "%s/%s", dsh_test_conformance_dir(), name) > 0);
	FILE *f = fopen(v->path, "r");
	cr_assert_not_null(f, "conformance vectors %s: %s", v->path, strerror(errno));
	char *line = NULL;
	size_t cap = 0, n_env = 0;
	ssize_t len;
	int lineno = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (strncmp(line, "#@ ", 3) == 0) {
			const char *kv = line + 3;
			if (strncmp(kv, "workspace=", 10) == 0)
				v->workspace = strdup(kv + 10);
			else if (strncmp(kv, "tmpdir=", 7) == 0)
				v->tmpdir = strdup(kv + 7);
			else if (strcmp(kv, "protectDefaults=false") == 0)
				v->protect_defaults_off = true;
			else if (strcmp(kv, "protectDefaults=true") == 0)
				v->protect_defaults_off = false;
			else if (strncmp(kv, "env=", 4) == 0)
				v->env = push(v->env, &n_env, strdup(kv + 4));
			else
				cr_assert_fail("%s:%d: unknown header %s", v->path, lineno, kv);
			continue;
		}
		if (len == 0 || line[0] == '#')
			continue;
		v->cases = realloc(v->cases, (v->n_cases + 1) * sizeof(*v->cases));
		cr_assert_not_null(v->cases);
		struct dsh_vector *c = &v->cases[v->n_cases++];
		memset(c, 0, sizeof(*c));
		c->line = lineno;
		char *rest = line;
		for (;;) {
			char *tab = strchr(rest, '\t');
			if (tab)
				*tab = '\0';
			c->fields = push(c->fields, &c->n_fields, strdup(rest));
			if (!tab)
				break;
			rest = tab + 1;
		}
	}
	free(line);
	fclose(f);
}

void dsh_vectors_clear(struct dsh_vectors *v)
{
	for (size_t i = 0; i < v->n_cases; i++) {
		for (size_t j = 0; j < v->cases[i].n_fields; j++)
			free(v->cases[i].fields[j]);
		free(v->cases[i].fields);
	}
	free(v->cases);
	for (size_t i = 0; v->env && v->env[i]; i++)
		free(v->env[i]);
	free(v->env);
	free(v->path);
	free(v->workspace);
	free(v->tmpdir);
	memset(v, 0, sizeof(*v));
}

const char *dsh_vectors_config(const struct dsh_vectors *v)
{
	static char path[128];
	if (!v->protect_defaults_off)
		return NULL;
	snprintf(path, sizeof(path), "/var/tmp/dshbox-vectors-%u.yml", (unsigned)getuid());
	char tmp[160];
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	cr_assert_not_null(f, "%s: %s", tmp, strerror(errno));
	fputs("protectDefaults: false\n", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rename(tmp, path), 0, "%s: %s", path, strerror(errno));
	return path;
}

void dsh_test_run_sh(struct dsh_proc *r, char *const env[], const char *backend, const char *ws, const char *script,
		     va_list ap)
{
	const char *argv[64];
	size_t n = 0;
	argv[n++] = dsh_test_dshbox();
	argv[n++] = "run";
	argv[n++] = "--backend";
	argv[n++] = backend;
	argv[n++] = "--workspace";
	argv[n++] = ws;
	argv[n++] = "--cwd";
	argv[n++] = ws;
	for (const char *rule; (rule = va_arg(ap, const char *));) {
		cr_assert_lt(n, 56, "too many rules");
		argv[n++] = "--access";
		argv[n++] = rule;
	}
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, r), 0);
}

struct dsh_policy *dsh_test_policy(const char *ws, const char *const *rules)
{
	struct dsh_config c;
	dsh_config_init(&c);
	c.workspace = strdup(ws);
	c.protect_defaults = false;
	for (size_t i = 0; rules && rules[i]; i++)
		dsh_strv_push(&c.access, rules[i]);
	char *env[] = { "HOME=/nonexistent", NULL };
	struct dsh_policy *p = NULL;
	_cleanup_error_ struct dsh_error *err = NULL;
	cr_assert_eq(dsh_policy_new(&c, env, ws, &p, &err), 0, "%s", err ? err->msg : "");
	dsh_config_clear(&c);
	return p;
}

const char *dsh_out_val(const char *out, const char *key)
{
	static char ring[8][4096];
	static unsigned next;
	char *buf = ring[next++ % 8];
	size_t kl = strlen(key);
	buf[0] = '\0';
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, kl) == 0 && l[kl] == '=') {
			size_t n = strcspn(l + kl + 1, "\n");
			snprintf(buf, 4096, "%.*s", (int)(n < 4096 ? n : 4095), l + kl + 1);
			break;
		}
	return buf;
}

bool dsh_out_is(const char *out, const char *key, const char *want)
{
	return strcmp(dsh_out_val(out, key), want) == 0;
}

void dsh_test_run_setting(struct dsh_proc *r, char *const env[], const struct dsh_test_setting *s,
			  const char *backend, const char *ws, const char *nested_cfg, const char *const *extra,
			  const char *const *cmd)
{
	char *refuse = dsh_test_helper("refuse_calls");
	const char *argv[64];
	size_t n = 0;
	if (s->no_landlock) {
		const char *pre[] = { refuse, "--errno", "ENOSYS", "landlock_create_ruleset", "--" };
		for (size_t i = 0; i < 5; i++)
			argv[n++] = pre[i];
	}
	const char *base[] = { dsh_test_dshbox(), "run", "--backend", s->backend ? s->backend : backend,
			       "--workspace", ws, "--cwd", ws };
	for (size_t i = 0; i < 8; i++)
		argv[n++] = base[i];
	if (s->mode) {
		argv[n++] = "--mode";
		argv[n++] = s->mode;
	}
	if (s->nested) {
		argv[n++] = "--config";
		argv[n++] = nested_cfg;
	}
	for (size_t i = 0; extra && extra[i]; i++) {
		cr_assert_lt(n, 60);
		argv[n++] = extra[i];
	}
	argv[n++] = "--";
	for (size_t i = 0; cmd[i]; i++) {
		cr_assert_lt(n, 63);
		argv[n++] = cmd[i];
	}
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, r), 0);
	free(refuse);
}

void dsh_test_require_chattr(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int flags = 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
		close(fd);
		DSH_SKIP("%s: FS_IOC_GETFLAGS: %s: the host filesystem has no chattr flags", path, strerror(errno));
	}
	int set = flags | FS_NODUMP_FL | FS_NOATIME_FL;
	if (ioctl(fd, FS_IOC_SETFLAGS, &set) < 0) {
		close(fd);
		DSH_SKIP("%s: FS_IOC_SETFLAGS +d +A: %s: the host filesystem refuses them", path, strerror(errno));
	}
	(void)ioctl(fd, FS_IOC_SETFLAGS, &flags);
	close(fd);
}

char *dsh_test_fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, f);
	cr_assert(vasprintf(&s, f, ap) > 0);
	va_end(ap);
	return s;
}

bool dsh_test_require_backend_named(const char *b)
{
	static char *probe;
	if (!probe) {
		dsh_test_require_backend();
		char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };
		const char *argv[] = { dsh_test_dshbox(), "probe", NULL };
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
		probe = strdup(r.out);
		dsh_proc_clear(&r);
	}
	/* "backend linux-ns           available" */
	bool yes = false;
	size_t bl = strlen(b);
	for (const char *l = probe; l && *l && !yes; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char word[32] = "";
		if (strncmp(l, "backend ", 8) == 0 && strncmp(l + 8, b, bl) == 0 && l[8 + bl] == ' ')
			yes = sscanf(l + 8 + bl, "%31s", word) == 1 && strcmp(word, "available") == 0;
	}
	/* A backend the machine lacks is a skip with its reason (a failure in CI), never a pass. */
	if (!yes)
		DSH_SKIP("backend %s is not available here (dshbox probe)", b);
	return yes;
}
