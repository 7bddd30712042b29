/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/strv.h"
#include "bwrap/args.h"
#include "bwrap/run.h"

/*
 * `dshbox bwrap ARGS…`, and dshbox invoked as `bwrap` (SPEC 8): bubblewrap's argv, enforced by
 * dshbox.  Failures speak bubblewrap's interface, not dshbox run's: exit status 1 and one line
 * starting "bwrap: " (hosts detect a runner failure by that prefix); the command's own exit status
 * otherwise, 128+N when it died of signal N, as bubblewrap reports it.
 */

#define BWRAP_EXIT_FAILURE 1

static bool level_prefix;

/* bubblewrap names itself as it was invoked (argv[0]); "bwrap" when run as `dshbox bwrap`. */
static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [OPTIONS...] [--] COMMAND [ARGS...]\n\n", prog && *prog ? prog : "bwrap");
	fprintf(f,
		
		"dshbox bwrap: bubblewrap's argv, enforced by dshbox's own mount code, lock and hardening.\n"
		"dshbox's options, first on the line (or DSHBOX_BWRAP_COMPAT=strict in the environment):\n"
		"    --dry-run                    Print the plan, with what dshbox adds, and exit\n"
		"    --dshbox-compat=strict       No additions (seccomp list, broker, IPC namespace, socket masks,\n"
		"                                 Landlock): the argv's behaviour exactly\n"
		"bubblewrap's options (see bwrap(1)); what dshbox bwrap cannot carry out fails with one\n"
		"'bwrap: ' line and exit status 1, never a weaker run:\n"
		"    --help --version --args FD --argv0 VALUE --level-prefix --unshare-all --share-net\n"
		"    --unshare-{user,user-try,ipc,pid,net,uts,cgroup,cgroup-try} --disable-userns\n"
		"    --assert-userns-disabled --uid UID --gid GID --hostname NAME --chdir DIR --clearenv\n"
		"    --setenv VAR VALUE --unsetenv VAR --sync-fd FD --bind(-try) SRC DEST\n"
		"    --dev-bind(-try) SRC DEST --ro-bind(-try) SRC DEST --remount-ro DEST --proc DEST\n"
		"    --dev DEST --tmpfs DEST --mqueue DEST --dir DEST --file FD DEST --bind-data FD DEST\n"
		"    --ro-bind-data FD DEST --symlink SRC DEST --seccomp FD --add-seccomp-fd FD --block-fd FD\n"
		"    --info-fd FD --json-status-fd FD --new-session --die-with-parent --as-pid-1\n"
		"    --cap-add CAP --cap-drop CAP --perms OCTAL --size BYTES --chmod OCTAL PATH\n"
		"    --lock-file DEST --bind-fd FD DEST --ro-bind-fd FD DEST\n"
		"See dshbox(1), section BWRAP, for what is applied today.\n");
}

static int fail_msg(const char *msg)
{
	fflush(stdout);
	fprintf(stderr, "%sbwrap: %s\n", level_prefix ? "<3>" : "", msg);
	return BWRAP_EXIT_FAILURE;
}

static int fail(const struct dsh_error *e)
{
	return fail_msg(e && e->msg ? e->msg : "unknown failure");
}

/* --args FD: everything the descriptor holds, then closed (bubblewrap closes it too). */
static int read_fd(int fd, char **ret, size_t *ret_len, void *userdata)
{
	(void)userdata;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			/* bubblewrap's arguments are bounded by count; bound the bytes too. */
			if (cap >= (64u << 20)) {
				free(buf);
				return -EFBIG;
			}
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	close(fd);
	*ret = buf;
	*ret_len = len;
	return 0;
}

/*
 * --seccomp FD and --add-seccomp-fd FD: each a compiled BPF program (struct sock_filter words),
 * read whole and closed, as bubblewrap reads them; bubblewrap's messages when it cannot.
 */
static int read_seccomp(const struct dsh_bwrap_args *a, struct dsh_seccomp_prog **ret, size_t *ret_n)
{
	size_t n = (a->seccomp_fd >= 0 ? 1 : 0) + a->n_add_seccomp_fds;
	*ret = NULL;
	*ret_n = 0;
	if (n == 0)
		return 0;
	struct dsh_seccomp_prog *v = calloc(n, sizeof(*v));
	if (!v)
		return fail_msg("out of memory");
	*ret = v;
	for (size_t i = 0; i < n; i++) {
		int fd = a->seccomp_fd >= 0 ? a->seccomp_fd : a->add_seccomp_fds[i];
		char *buf = NULL;
		size_t len = 0;
		int r = read_fd(fd, &buf, &len, NULL);
		if (r < 0) {
			char m[128];
			snprintf(m, sizeof(m), "Can't read seccomp data: %s", strerror(-r));
			return fail_msg(m);
		}
		if (len % 8 != 0 || len / 8 > 0xffff) {
			free(buf);
			return fail_msg("Invalid seccomp data, must be multiple of 8");
		}
		v[i].insns = (struct sock_filter *)buf;
		v[i].len = (unsigned short)(len / 8);
		*ret_n = i + 1;
	}
	return 0;
}

static void free_seccomp(struct dsh_seccomp_prog *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dsh_seccomp_prog_clear(&v[i]);
	free(v);
}

/* --block-fd: wait until the descriptor has data (or is closed), as bubblewrap does before exec. */
static int block_on(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* The descriptors above 2 open when dshbox started: bubblewrap hands the caller's on. */
static int *open_fds(size_t *ret_n)
{
	*ret_n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return NULL;
	int *v = NULL;
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char *end = NULL;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd <= 2 || fd == dirfd(d) || fd > INT_MAX)
			continue;
		int *nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n++] = (int)fd;
	}
	closedir(d);
	*ret_n = n;
	return v;
}

/* Those the argv's options consume (bubblewrap closes them or keeps them to itself), and those
   no longer open (--args, read and closed), are not the command's. */
static void drop_consumed(const struct dsh_bwrap_args *a, int *fds, size_t *n)
{
	size_t out = 0;
	for (size_t i = 0; i < *n; i++) {
		int fd = fds[i];
		bool used = fd == a->info_fd || fd == a->json_status_fd || fd == a->block_fd || fd == a->sync_fd ||
			    fd == a->seccomp_fd || fcntl(fd, F_GETFD) < 0;
		for (size_t k = 0; k < a->n_add_seccomp_fds; k++)
			used |= fd == a->add_seccomp_fds[k];
		for (size_t k = 0; k < a->n_ops; k++)
			used |= fd == a->ops[k].fd;
		if (!used)
			fds[out++] = fd;
	}
	*n = out;
}

int cmd_bwrap(int argc, char **argv, char **envp)
{
	size_t n_fds = 0;
	_cleanup_free_ int *fds = open_fds(&n_fds);
	bool dry_run = false, strict = false;
	int i = 1;
	const char *env_compat = NULL;
	for (char **e = envp; e && *e; e++)
		if (strncmp(*e, "DSHBOX_BWRAP_COMPAT=", 20) == 0)
			env_compat = *e + 20;
	if (env_compat && strcmp(env_compat, "strict") == 0)
		strict = true;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0)
			dry_run = true;
		else if (strcmp(argv[i], "--dshbox-compat=strict") == 0)
			strict = true;
		else if (strcmp(argv[i], "--dshbox-compat=default") == 0)
			strict = false;
		else if (strncmp(argv[i], "--dshbox-compat", 15) == 0) {
			char m[256];
			snprintf(m, sizeof(m), "%s: expected --dshbox-compat=strict or --dshbox-compat=default", argv[i]);
			return fail_msg(m);
		} else
			break;
	}
	if (i >= argc) {
		usage(stderr, argv[0]);
		return BWRAP_EXIT_FAILURE;
	}

	/* bubblewrap prefixes its messages from the moment it reads --level-prefix: a parse error after
	   it is prefixed too. */
	for (int k = i; k < argc && strcmp(argv[k], "--") != 0; k++)
		if (strcmp(argv[k], "--level-prefix") == 0)
			level_prefix = true;
	struct dsh_bwrap_args a;
	_cleanup_error_ struct dsh_error *err = NULL;
	if (dsh_bwrap_parse(argc - i, argv + i, read_fd, NULL, &a, &err) < 0)
		return fail(err);
	level_prefix = a.level_prefix;
	/* --bind-fd/--ro-bind-fd: the descriptor's directory by its name on the host, as bubblewrap
	   resolves its sources before it builds the tree (a descriptor's mount is of the caller's
	   mount namespace, which the sandbox's copy cannot clone from). */
	for (size_t k = 0; k < a.n_ops; k++) {
		struct dsh_bwrap_op *op = &a.ops[k];
		if (op->fd < 0 || (op->kind != DSH_BWRAP_BIND && op->kind != DSH_BWRAP_RO_BIND))
			continue;
		char *real = realpath(op->source, NULL);
		if (!real) {
			char m[256];
			snprintf(m, sizeof(m), "Can't find source path %s: %s", op->source, strerror(errno));
			dsh_bwrap_args_clear(&a);
			return fail_msg(m);
		}
		free(op->source);
		op->source = real;
	}
	if (a.chdir_repeated)
		fprintf(stderr, "%sbwrap: Only the last --chdir option will take effect\n", level_prefix ? "<4>" : "");
	int rc = 0;
	struct dsh_bwrap_plan *plan = NULL;
	struct dsh_seccomp_prog *progs = NULL;
	size_t n_progs = 0;
	_cleanup_strv_ char **env = NULL;
	_cleanup_free_ char *cwd = NULL;
	if (a.help) {
		usage(stdout, argv[0]);
		goto out;
	}
	if (a.version) {
		printf("dshbox bwrap %s (bubblewrap's argv)\n", DSHBOX_VERSION);
		goto out;
	}
	if (dsh_bwrap_validate(&a, getuid(), getgid(), &err) < 0) {
		rc = fail(err);
		goto out;
	}
	if (!dry_run && !a.argv[0]) {
		usage(stderr, argv[0]);
		rc = BWRAP_EXIT_FAILURE;
		goto out;
	}
	if (!(cwd = getcwd(NULL, 0))) {
		rc = fail_msg("getcwd: cannot find the current directory");
		goto out;
	}
	if (dry_run) {
		_cleanup_free_ char *ops = dsh_bwrap_render(&a);
		printf("bwrap operations: %zu\n%s", a.n_ops, ops ? ops : "");
	}
	drop_consumed(&a, fds, &n_fds);
	if (!dry_run && (rc = read_seccomp(&a, &progs, &n_progs)) != 0)
		goto out;
	struct dsh_bwrap_settings s = { .strict = strict, .envp = envp, .cwd = cwd, .pass_fds = fds,
					.n_pass_fds = n_fds, .user_seccomp = progs, .n_user_seccomp = n_progs };
	if (dsh_bwrap_plan_build(&a, &s, &plan, &err) < 0) {
		rc = fail(err);
		goto out;
	}
	if (dry_run) {
		_cleanup_free_ char *text = dsh_bwrap_plan_render(plan);
		fputs(text ? text : "", stdout);
		rc = fflush(stdout) == 0 ? 0 : BWRAP_EXIT_FAILURE;
		goto out;
	}
	if (dsh_bwrap_apply_env(&a, envp, &env, &err) < 0) {
		rc = fail(err);
		goto out;
	}
	/* --die-with-parent: dshbox dies with its parent, and the sandbox dies with dshbox. */
	if (a.die_with_parent && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) {
		rc = fail_msg("prctl: cannot die with the parent");
		goto out;
	}
	if (a.block_fd >= 0 && block_on(a.block_fd) < 0) {
		rc = fail_msg("--block-fd: poll failed");
		goto out;
	}
	/* --sync-fd stays open in dshbox for as long as the sandbox runs: it closes when dshbox exits. */
	fflush(NULL);
	struct dsh_run_result res = { 0 };
	if (dsh_bwrap_plan_run(plan, a.argv, env, &res, &err) < 0) {
		rc = fail(err);
		goto out;
	}
	dsh_strv_free(res.warnings);
	if (res.message) {
		/* bubblewrap's own line for a command that could not be run. */
		char m[4096];
		snprintf(m, sizeof(m), "execvp %s: %s", a.argv[0],
			 strerror(res.exit_code == DSH_EXIT_NOT_FOUND ? ENOENT : EACCES));
		free(res.message);
		rc = fail_msg(m);
		goto out;
	}
	rc = res.signal ? 128 + res.signal : res.exit_code;
	/* bubblewrap's last line there, once the command ran: its status. */
	if (a.json_status_fd >= 0) {
		dprintf(a.json_status_fd, "{ \"exit-code\": %d }\n", rc);
		close(a.json_status_fd);
	}
out:
	dsh_bwrap_plan_free(plan);
	free_seccomp(progs, n_progs);
	dsh_bwrap_args_clear(&a);
	return rc;
}
