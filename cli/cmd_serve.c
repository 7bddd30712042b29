/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dshbox serve --stdio: the file fence as JSON lines (docs/serve.md).  After the policy is loaded
 * the process confines itself with Landlock (read beneath /, write beneath the live writable roots
 * only), so a bug in the fence still cannot write outside the writable roots.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/write_all.h"
#include "fence/serve.h"
#include "fence/serve_pool.h"
#include "dshbox/serve.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: dshbox serve [POLICY OPTIONS] --stdio\n\n"
		"Answer file-fence requests, one JSON object per line on stdin, one answer per line on\n"
		"stdout, in order, each carrying the request's \"id\":\n"
		"  {\"id\":1,\"op\":\"read\",\"path\":\"src/main.c\",\"offset\":0,\"limit\":4096}\n"
		"  {\"id\":2,\"op\":\"write\",\"path\":\"notes.txt\",\"content\":\"hello\\n\"}\n"
		"  {\"id\":3,\"op\":\"edit\",\"path\":\"notes.txt\",\"old\":\"hello\",\"new\":\"bye\",\"all\":false}\n"
		"  {\"id\":4,\"op\":\"list\",\"path\":\".\"}\n"
		"An answer is {\"id\":..,\"ok\":true,...} or {\"id\":..,\"ok\":false,\"error\":{\"kind\":..,\"op\":..,\n"
		"\"path\":..,\"mode\":..,\"rule\":..,\"message\":..}}; kind is denied, not-found, conflict,\n"
		"not-regular-file, too-large, invalid or io.  A malformed line gets an error answer and the\n"
		"server goes on; end of input ends it (exit 0).  Lines are at most %u bytes.\n"
		"  --jobs N   answer up to N requests at once (1-64, default 1): requests naming the same\n"
		"             path in the order sent, others in any order; match answers by \"id\"\n\n"
		"Once the policy is loaded the server confines itself with Landlock: it can read beneath /\n"
		"and write only beneath the writable roots.  Without Landlock it warns and runs on.\n"
		"Exit status: 0 at end of input; 125 bad usage or policy, or the confinement failed.\n"
		"See docs/serve.md.\n\n" CLI_POLICY_HELP,
		DSH_SERVE_MAX_LINE);
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* Answer one line (on the pool's threads with --jobs); returns 0, or -errno when stdout is gone
   or memory ran out. */
static int answer(const struct dsh_policy *p, struct dsh_serve_pool *pool, const char *line, size_t len)
{
	if (blank(line, len))
		return 0;
	if (pool) {
		struct dsh_serve_request *req = NULL;
		_cleanup_error_ struct dsh_error *err = NULL;
		int r = dsh_serve_parse(p, line, len, &req, &err);
		return r < 0 ? r : dsh_serve_pool_submit(pool, req);
	}
	_cleanup_error_ struct dsh_error *err = NULL;
	_cleanup_free_ char *a = NULL;
	int r = dsh_serve_answer(p, line, len, &a, &err);
	if (r < 0)
		return r;
	size_t n = strlen(a);
	/* One write per answer: the newline goes with it. */
	a[n] = '\n';
	r = dsh_write_all(STDOUT_FILENO, a, n + 1);
	a[n] = '\0';
	return r;
}

static int serve_loop(const struct dsh_policy *p, struct dsh_serve_pool *pool)
{
	size_t cap = 65536, len = 0, start = 0;
	bool skipping = false; /* inside a line that was too long */
	_cleanup_free_ char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (start > 0) {
				memmove(buf, buf + start, len - start);
				len -= start;
				start = 0;
			} else {
				size_t ncap = cap * 2 > DSH_SERVE_MAX_LINE + 1 ? DSH_SERVE_MAX_LINE + 1 : cap * 2;
				if (ncap <= cap) {
					/* The line is longer than the bound: answer once, drop it to its end. */
					if (!skipping) {
						_cleanup_free_ char *a = dsh_serve_answer_too_long(DSH_SERVE_MAX_LINE);
						if (!a)
							return -ENOMEM;
						if (pool && dsh_serve_pool_write(pool, a, strlen(a)) < 0)
							return -EPIPE;
						if (!pool && (dsh_write_all(STDOUT_FILENO, a, strlen(a)) < 0 ||
							      dsh_write_all(STDOUT_FILENO, "\n", 1) < 0))
							return -EPIPE;
					}
					skipping = true;
					len = 0;
				} else {
					char *nb = realloc(buf, ncap + 1);
					if (!nb)
						return -ENOMEM;
					buf = nb;
					cap = ncap;
				}
			}
		}
		ssize_t n = read(STDIN_FILENO, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			/* End of input: a last line without its newline is still a request. */
			if (len > start && !skipping)
				return answer(p, pool, buf + start, len - start);
			return 0;
		}
		size_t scan = len;
		len += (size_t)n;
		for (;;) {
			char *nl = memchr(buf + scan, '\n', len - scan);
			if (!nl)
				break;
			size_t end = (size_t)(nl - buf);
			if (skipping) {
				skipping = false;
			} else {
				int r = answer(p, pool, buf + start, end - start);
				if (r < 0)
					return r;
			}
			start = end + 1;
			scan = start;
		}
		if (start == len) {
			start = 0;
			len = 0;
		}
		/* Shrink back after a big request, so one huge line does not pin its memory. */
		if (len == 0 && cap > 65536) {
			char *nb = realloc(buf, 65536 + 1);
			if (nb) {
				buf = nb;
				cap = 65536;
			}
		}
	}
}

int cmd_serve(int argc, char **argv, char **envp)
{
	enum { OPT_STDIO = 0x100, OPT_HELP, OPT_JOBS };
	static const struct option longopts[] = {
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "help", no_argument, NULL, OPT_HELP },
		CLI_POLICY_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_(cli_policy_opts_clear) struct cli_policy_opts po = { 0 };
	bool stdio = false;
	size_t jobs = 1; /* one at a time, answers in request order */
	int opt;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_HELP:
		case 'h':
			usage(stdout);
			return 0;
		case OPT_STDIO:
			stdio = true;
			break;
		case OPT_JOBS: {
			char *end = NULL;
			errno = 0;
			unsigned long n = strtoul(optarg, &end, 10);
			if (errno || !end || *end || optarg[0] < '1' || optarg[0] > '9' || n > 64)
				return cli_usage_error("serve", "--jobs takes a number from 1 to 64, not '%s'", optarg);
			jobs = (size_t)n;
			break;
		}
		case ':':
			return cli_usage_error("serve", "option '%s' needs a value", argv[optind - 1]);
		case '?':
			return cli_usage_error("serve", "unknown option '%s'", argv[optind - 1]);
		default:
			if (opt >= CLI_OPT_POLICY_BASE && opt < CLI_OPT_POLICY_END) {
				int r = cli_policy_option(&po, opt, optarg, "serve");
				if (r)
					return r;
				break;
			}
			return cli_usage_error("serve", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error("serve", "unexpected argument '%s'", argv[optind]);
	if (!stdio)
		return cli_usage_error("serve", "--stdio is the only transport; give it explicitly");
	if (po.config_file && strcmp(po.config_file, "-") == 0) {
		cli_policy_opts_clear(&po);
		return cli_usage_error("serve", "--config -: standard input carries the requests; pass the "
					"configuration on another descriptor (--config /dev/fd/N)");
	}

	struct dsh_config config;
	struct dsh_policy *policy = NULL;
	int r = cli_policy_load(&po, envp, &config, &policy, NULL);
	if (r) {
		dsh_config_clear(&config);
		return r;
	}
	cli_policy_print_warnings(&po, policy);

	_cleanup_error_ struct dsh_error *err = NULL;
	_cleanup_free_ char *warning = NULL;
	if (dsh_serve_confine(policy, &warning, &err) < 0) {
		dsh_policy_free(policy);
		dsh_config_clear(&config);
		return cli_fail(err);
	}
	if (warning)
		cli_warn("%s", warning);

	/* A host that goes away mid-answer ends us with EPIPE, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	/* After the confinement: the workers inherit it. */
	struct dsh_serve_pool *pool = NULL;
	if (jobs > 1 && dsh_serve_pool_new(policy, STDOUT_FILENO, jobs, &pool, &err) < 0) {
		dsh_policy_free(policy);
		dsh_config_clear(&config);
		return cli_fail(err);
	}
	r = serve_loop(policy, pool);
	if (pool) {
		int f = dsh_serve_pool_finish(pool);
		if (r == 0)
			r = f;
	}
	dsh_policy_free(policy);
	dsh_config_clear(&config);
	if (r == -EPIPE)
		return 0;
	if (r < 0) {
		dsh_err_sys(&err, -r, "serve");
		return cli_fail(err);
	}
	return 0;
}
