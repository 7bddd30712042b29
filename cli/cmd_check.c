/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/cleanup.h"

static const char usage[] =
	"Usage: dshbox check [POLICY OPTIONS] [--json] (--read|--write) PATH...\n"
	"\n"
	"Ask the policy whether each PATH may be read or written, as the file fence would answer.\n"
	"Relative paths resolve against --cwd (default: the current directory); symlinks in the\n"
	"existing part of a path are resolved before the verdict.\n"
	"\n"
	"Prints one line per path: 'allow|deny read|write CANONICAL-PATH (WHAT DECIDED)'.\n"
	"Exit status: 0 every path allowed, 1 some path denied, 125 error.\n"
	"\n"
	"  --read          ask about reading\n"
	"  --write         ask about writing (creating, changing, removing)\n"
	"  --json          one JSON object per line instead\n"
	"  -h, --help      show this help\n"
	"\n" CLI_POLICY_HELP;

enum { OPT_READ = 1, OPT_WRITE, OPT_JSON };

int cmd_check(int argc, char **argv, char **envp)
{
	static const struct option opts[] = {
		{ "read", no_argument, NULL, OPT_READ },
		{ "write", no_argument, NULL, OPT_WRITE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		CLI_POLICY_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli_policy_opts po = { 0 };
	int op = -1, c, ret = DSH_EXIT_FAILURE;
	bool json = false;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c >= CLI_OPT_POLICY_BASE && c < CLI_OPT_POLICY_END) {
			if (cli_policy_option(&po, c, optarg, "check"))
				goto out;
			continue;
		}
		switch (c) {
		case OPT_READ:
		case OPT_WRITE:
			if (op >= 0 && op != (c == OPT_READ ? DSH_OP_READ : DSH_OP_WRITE)) {
				cli_usage_error("check", "--read and --write exclude each other");
				goto out;
			}
			op = c == OPT_READ ? DSH_OP_READ : DSH_OP_WRITE;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			ret = 0;
			goto out;
		default:
			cli_usage_error("check", "unknown or incomplete option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (op < 0) {
		cli_usage_error("check", "say --read or --write");
		goto out;
	}
	if (optind >= argc) {
		cli_usage_error("check", "no PATH given");
		goto out;
	}

	struct dsh_config cfg;
	struct dsh_policy *p = NULL;
	if (cli_policy_load(&po, envp, &cfg, &p, NULL)) {
		dsh_config_clear(&cfg);
		goto out;
	}
	cli_policy_print_warnings(&po, p);

	/* Resolve every path first: a bad path fails the whole call before anything is printed. */
	size_t n = (size_t)(argc - optind);
	char **paths = calloc(n, sizeof(char *));
	char **spelled = calloc(n, sizeof(char *));
	bool any_denied = false, failed = false;
	for (size_t i = 0; paths && i < n && !failed; i++) {
		_cleanup_error_ struct dsh_error *err = NULL;
		if (spelled && dsh_policy_resolve(p, argv[optind + (int)i], &paths[i], &spelled[i], &err) < 0) {
			dsh_err_prefix(&err, "check '%s'", argv[optind + (int)i]);
			cli_fail(err);
			failed = true;
		}
	}
	if (!paths || !spelled) {
		fputs("dshbox: error: out of memory\n", stderr);
		failed = true;
	}
	for (size_t i = 0; !failed && i < n; i++) {
		struct dsh_verdict v;
		/* A write makes a file, unless a directory stands there (then it is one written into). */
		struct stat st;
		bool is_dir = stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode);
		dsh_policy_decide_file(p, (enum dsh_op)op, paths[i], spelled[i], is_dir, &v);
		_cleanup_free_ char *why = dsh_verdict_explain(&v);
		const char *opname = op == DSH_OP_READ ? "read" : "write";
		any_denied |= !v.allow;
		if (json) {
			json_t *o = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?}", "verdict", v.allow ? "allow" : "deny",
					      "op", opname, "path", paths[i], "rule", v.rule ? dsh_rule_text(v.rule) : NULL,
					      "root", v.root ? dsh_root_path(v.root) : NULL, "reason", why);
			char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
			if (s)
				puts(s);
			free(s);
			json_decref(o);
		} else {
			printf("%s %s %s (%s)\n", v.allow ? "allow" : "deny", opname, paths[i], why ? why : "?");
		}
	}
	for (size_t i = 0; i < n; i++) {
		free(paths ? paths[i] : NULL);
		free(spelled ? spelled[i] : NULL);
	}
	free(paths);
	free(spelled);
	dsh_policy_free(p);
	dsh_config_clear(&cfg);
	if (!failed)
		ret = any_denied ? DSH_EXIT_DENIED : DSH_EXIT_OK;
out:
	cli_policy_opts_clear(&po);
	if (fflush(stdout) != 0 && ret != DSH_EXIT_FAILURE) {
		fputs("dshbox: error: cannot write the answer to stdout\n", stderr);
		ret = DSH_EXIT_FAILURE;
	}
	return ret;
}
