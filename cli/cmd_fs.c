/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dshbox fs: the file fence for one operation (SPEC 5).  Exit codes: see usage() and docs/serve.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/write_all.h"
#include "dshbox/fence.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: dshbox fs [POLICY OPTIONS] read PATH [--offset N] [--limit N]\n"
		"       dshbox fs [POLICY OPTIONS] write PATH [--expect-version V]   (the content on stdin)\n"
		"       dshbox fs [POLICY OPTIONS] edit PATH --old S --new S [--all] [--expect-version V]\n"
		"       dshbox fs [POLICY OPTIONS] list DIR\n\n"
		"Read, write, edit or list a file through the file fence: the path is resolved by the\n"
		"kernel (openat2, no magic links), the policy's verdict is taken on the canonical path, and\n"
		"the operation acts through the descriptor.  Relative paths start at --cwd.\n\n"
		"  read    the bytes from --offset (default 0), at most --limit bytes (default: all,\n"
		"          up to %u), on stdout\n"
		"  write   replace or create PATH atomically with stdin (at most %u bytes); an existing\n"
		"          file keeps its mode; an overwrite of a text file prints a unified diff\n"
		"  edit    replace the exact string --old with --new: it must occur once, or use --all;\n"
		"          fails with a conflict if the file changed after it was read; prints the diff\n"
		"  list    one line per entry: TYPE SIZE ACCESS NAME, ACCESS 'rw', 'r-' or '--' (denied;\n"
		"          a denied entry shows only its name)\n\n"
		"  --version-fd N       read, write, edit: write the file's version (SIZE:MTIME_NS:INODE) and\n"
		"                       a newline to descriptor N: as read, or as written\n"
		"  --expect-version V   write, edit: fail with a conflict (exit 3) unless the file still has\n"
		"                       version V\n\n"
		"Exit status: 0 done; 1 denied by the policy; 2 not found; 3 conflict; 4 not a regular\n"
		"file; 5 too large; 6 invalid (string absent or ambiguous, dangling symlink, ...);\n"
		"7 the operating system refused (I/O error); 8 edit of a file that is not text (a NUL\n"
		"byte or invalid UTF-8); 125 bad usage or policy (nothing was done).\n"
		"A failure prints one line, 'dshbox: error: OP PATH: WHY'.\n\n" CLI_POLICY_HELP,
		DSH_FENCE_MAX_CONTENT, DSH_FENCE_MAX_CONTENT);
}

enum {
	OPT_OFFSET = 0x100,
	OPT_LIMIT,
	OPT_OLD,
	OPT_NEW,
	OPT_ALL,
	OPT_HELP,
	OPT_EXPECT_VERSION,
	OPT_VERSION_FD,
};

static int parse_u64(const char *s, uint64_t *ret)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Read stdin, bounded: one byte more than the bound tells it was too large. */
static int read_stdin(char **ret, size_t *ret_len)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap > DSH_FENCE_MAX_CONTENT) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		ssize_t n = read(STDIN_FILENO, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > DSH_FENCE_MAX_CONTENT) {
			free(buf);
			return -EFBIG;
		}
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* The fence's failure: its one line, and the exit code of its kind (cli/exit.c). */
static int fence_failed(const struct dsh_error *e)
{
	cli_fail(e);
	return cli_fs_exit_code(e ? e->kind : DSH_ERR_SYSTEM);
}

/* The version goes to its own descriptor: stdout stays the file's bytes (read) or the diff. */
static int put_version(int fd, const char *version)
{
	if (fd < 0)
		return 0;
	char line[DSH_FENCE_VERSION_MAX + 1];
	int n = snprintf(line, sizeof(line), "%s\n", version);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -EINVAL;
	for (const char *s = line; n > 0;) {
		ssize_t w = write(fd, s, (size_t)n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			fprintf(stderr, "dshbox: error: --version-fd %d: %s\n", fd, strerror(e));
			return -e;
		}
		s += w;
		n -= (int)w;
	}
	return 0;
}

/* Names are printed with control characters escaped, so one entry is one line. */
static void print_name(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c < 0x20 || *c == 0x7f || *c == '\\')
			printf("\\x%02x", *c);
		else
			putchar(*c);
	}
}

enum fs_op { FS_READ, FS_WRITE, FS_EDIT, FS_LIST };

/* One call of dshbox fs as its command line asks for it (the policy options apart). */
struct fs_request {
	enum fs_op op;
	const char *path;
	uint64_t offset, limit;
	bool have_offset, have_limit;
	const char *old_s, *new_s;
	bool all;
	struct dsh_fence_write_opts wo;
	int version_fd; /* -1: none */
};

/* What the parsers below return to go on; anything else is the exit code to stop with. */
#define FS_PARSED (-1)

static int parse_fs_options(int argc, char **argv, struct cli_policy_opts *po, struct fs_request *q)
{
	static const struct option longopts[] = {
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "old", required_argument, NULL, OPT_OLD },
		{ "new", required_argument, NULL, OPT_NEW },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "expect-version", required_argument, NULL, OPT_EXPECT_VERSION },
		{ "version-fd", required_argument, NULL, OPT_VERSION_FD },
		CLI_POLICY_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_HELP:
		case 'h':
			usage(stdout);
			return 0;
		case OPT_OFFSET:
			if (parse_u64(optarg, &q->offset) < 0)
				return cli_usage_error("fs", "--offset: expected a byte count, got '%s'", optarg);
			q->have_offset = true;
			break;
		case OPT_LIMIT:
			if (parse_u64(optarg, &q->limit) < 0 || q->limit == 0)
				return cli_usage_error("fs", "--limit: expected a positive byte count, got '%s'", optarg);
			q->have_limit = true;
			break;
		case OPT_OLD:
			q->old_s = optarg;
			break;
		case OPT_NEW:
			q->new_s = optarg;
			break;
		case OPT_ALL:
			q->all = true;
			break;
		case OPT_EXPECT_VERSION:
			q->wo.expect_version = optarg;
			break;
		case OPT_VERSION_FD: {
			uint64_t v;
			if (parse_u64(optarg, &v) < 0 || v > INT_MAX || v <= STDERR_FILENO)
				return cli_usage_error("fs", "--version-fd: expected a descriptor above 2, got '%s'", optarg);
			q->version_fd = (int)v;
			break;
		}
		case ':':
			return cli_usage_error("fs", "option '%s' needs a value", argv[optind - 1]);
		case '?':
			return cli_usage_error("fs", "unknown option '%s'", argv[optind - 1]);
		default:
			if (opt >= CLI_OPT_POLICY_BASE && opt < CLI_OPT_POLICY_END) {
				int r = cli_policy_option(po, opt, optarg, "fs");
				if (r)
					return r;
				break;
			}
			return cli_usage_error("fs", "unknown option");
		}
	}
	return FS_PARSED;
}

/* The operation and its path (the operands after the options), and the options it may take. */
static int parse_fs_operation(int argc, char **argv, struct fs_request *q)
{
	/* GNU getopt moved the operands to the end, in order. */
	const char *pos[3] = { NULL, NULL, NULL };
	size_t npos = 0;
	for (int i = optind; i < argc && npos < 3; i++)
		pos[npos++] = argv[i];
	if (npos == 0)
		return cli_usage_error("fs", "no operation given (read, write, edit or list)");
	const char *op = pos[0];
	if (npos < 2)
		return cli_usage_error("fs", "'%s' needs a path", op);
	if (npos > 2)
		return cli_usage_error("fs", "'%s' takes one path, got '%s' too", op, pos[2]);
	q->path = pos[1];

	if (strcmp(op, "read") == 0)
		q->op = FS_READ;
	else if (strcmp(op, "write") == 0)
		q->op = FS_WRITE;
	else if (strcmp(op, "edit") == 0)
		q->op = FS_EDIT;
	else if (strcmp(op, "list") == 0)
		q->op = FS_LIST;
	else
		return cli_usage_error("fs", "unknown operation '%s' (read, write, edit or list)", op);
	if ((q->have_offset || q->have_limit) && q->op != FS_READ)
		return cli_usage_error("fs", "--offset and --limit belong to 'read'");
	if ((q->old_s || q->new_s || q->all) && q->op != FS_EDIT)
		return cli_usage_error("fs", "--old, --new and --all belong to 'edit'");
	if (q->op == FS_EDIT && (!q->old_s || !q->new_s))
		return cli_usage_error("fs", "edit needs --old S and --new S");
	if (q->wo.expect_version && q->op != FS_WRITE && q->op != FS_EDIT)
		return cli_usage_error("fs", "--expect-version belongs to 'write' and 'edit'");
	if (q->version_fd >= 0 && q->op == FS_LIST)
		return cli_usage_error("fs", "--version-fd belongs to 'read', 'write' and 'edit'");
	return FS_PARSED;
}

static int fs_read(const struct dsh_policy *policy, const struct fs_request *q)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	int code = DSH_EXIT_OK;
	struct dsh_fence_read_result res;
	if (dsh_fence_read(policy, q->path, q->offset, q->limit, &res, &err) < 0)
		code = fence_failed(err);
	else if (dsh_write_all(STDOUT_FILENO, res.data, res.len) < 0 || put_version(q->version_fd, res.version) < 0)
		code = cli_fs_exit_code(DSH_ERR_SYSTEM);
	dsh_fence_read_result_clear(&res);
	return code;
}

/*
 * What a write or an edit reports once the fence has answered (r): its failure; or a warning when
 * it could not be atomic, then the diff on stdout and the new version.
 */
static int fs_written(const char *op, int r, const struct dsh_error *err, const struct dsh_fence_write_result *res,
		      int version_fd)
{
	if (r < 0)
		return fence_failed(err);
	if (res->in_place)
		fprintf(stderr, "dshbox: warning: %s %s: written in place, not atomically (the directory "
			"refuses new files)\n", op, res->path);
	if ((res->diff && dsh_write_all(STDOUT_FILENO, res->diff, strlen(res->diff)) < 0) ||
	    put_version(version_fd, res->version) < 0)
		return cli_fs_exit_code(DSH_ERR_SYSTEM);
	return DSH_EXIT_OK;
}

static int fs_write(const struct dsh_policy *policy, const struct fs_request *q)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = read_stdin(&data, &len);
	if (r == -EFBIG) {
		fprintf(stderr, "dshbox: error: write %s: more than %u bytes on stdin\n", q->path, DSH_FENCE_MAX_CONTENT);
		return cli_fs_exit_code(DSH_ERR_TOO_LARGE);
	}
	if (r < 0) {
		fprintf(stderr, "dshbox: error: write %s: reading stdin: %s\n", q->path, strerror(-r));
		return cli_fs_exit_code(DSH_ERR_SYSTEM);
	}
	_cleanup_error_ struct dsh_error *err = NULL;
	struct dsh_fence_write_result res;
	r = dsh_fence_write_ex(policy, q->path, data, len, &q->wo, &res, &err);
	int code = fs_written("write", r, err, &res, q->version_fd);
	dsh_fence_write_result_clear(&res);
	return code;
}

static int fs_edit(const struct dsh_policy *policy, const struct fs_request *q)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	struct dsh_fence_write_result res;
	int r = dsh_fence_edit_ex(policy, q->path, q->old_s, strlen(q->old_s), q->new_s, strlen(q->new_s), q->all,
				  &q->wo, &res, &err);
	int code = fs_written("edit", r, err, &res, q->version_fd);
	dsh_fence_write_result_clear(&res);
	return code;
}

static int fs_list(const struct dsh_policy *policy, const struct fs_request *q)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	int code = DSH_EXIT_OK;
	struct dsh_fence_list_result res;
	if (dsh_fence_list(policy, q->path, &res, &err) < 0) {
		code = fence_failed(err);
	} else {
		for (size_t i = 0; i < res.n_entries; i++) {
			const struct dsh_fence_entry *e = &res.entries[i];
			if (e->denied)
				printf("%-7s %12s -- ", dsh_fence_entry_type_to_string(e->type), "-");
			else
				printf("%-7s %12" PRIu64 " %s ", dsh_fence_entry_type_to_string(e->type), e->size,
				       e->writable ? "rw" : "r-");
			print_name(e->name);
			putchar('\n');
		}
		if (res.truncated)
			fprintf(stderr, "dshbox: warning: list %s: only the first %u entries are shown\n", res.path,
				DSH_FENCE_MAX_ENTRIES);
		if (fflush(stdout) != 0)
			code = cli_fs_exit_code(DSH_ERR_SYSTEM);
	}
	dsh_fence_list_result_clear(&res);
	return code;
}

int cmd_fs(int argc, char **argv, char **envp)
{
	_cleanup_(cli_policy_opts_clear) struct cli_policy_opts po = { 0 };
	struct fs_request q = { .version_fd = -1 };
	int r = parse_fs_options(argc, argv, &po, &q);
	if (r == FS_PARSED)
		r = parse_fs_operation(argc, argv, &q);
	if (r != FS_PARSED)
		return r;

	struct dsh_config config;
	struct dsh_policy *policy = NULL;
	r = cli_policy_load(&po, envp, &config, &policy, NULL);
	if (r) {
		dsh_config_clear(&config);
		return r;
	}
	cli_policy_print_warnings(&po, policy);

	int code = DSH_EXIT_OK;
	switch (q.op) {
	case FS_READ:
		code = fs_read(policy, &q);
		break;
	case FS_WRITE:
		code = fs_write(policy, &q);
		break;
	case FS_EDIT:
		code = fs_edit(policy, &q);
		break;
	case FS_LIST:
		code = fs_list(policy, &q);
		break;
	}
	dsh_policy_free(policy);
	dsh_config_clear(&config);
	return code;
}
