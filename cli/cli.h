/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef DSH_CLI_CLI_H
#define DSH_CLI_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "dshbox/dshbox.h"
#include "policy/options.h"

/* Exit codes (SPEC 2). */
enum {
	DSH_EXIT_OK = 0,
	DSH_EXIT_DENIED = 1,       /* check: some path denied */
	DSH_EXIT_FAILURE = 125,    /* dshbox itself failed; nothing ran */
	DSH_EXIT_CANNOT_EXEC = 126,
	DSH_EXIT_NOT_FOUND = 127,
};

/*
 * `dshbox fs` answers with the kind of its failure (one table, cli/exit.c): 1 denied, 2 not-found,
 * 3 conflict, 4 not-regular-file, 5 too-large, 6 invalid, 7 io; 125 for usage, configuration and
 * policy errors, as every other command.
 */
int cli_fs_exit_code(enum dsh_err_kind k);

/* Every subcommand: argv[0] is the subcommand's name.  Returns the process exit code. */
int cmd_run(int argc, char **argv, char **envp);
int cmd_check(int argc, char **argv, char **envp);
int cmd_fs(int argc, char **argv, char **envp);
int cmd_serve(int argc, char **argv, char **envp);
int cmd_explain(int argc, char **argv, char **envp);
int cmd_probe(int argc, char **argv, char **envp);
int cmd_doctor(int argc, char **argv, char **envp);
/* bubblewrap's argv (SPEC 8); also dshbox's main when invoked under the name "bwrap".  Exit codes are
   bubblewrap's: 1 and one "bwrap: " line when dshbox failed, else the command's own status. */
int cmd_bwrap(int argc, char **argv, char **envp);

/* Print "dshbox: error: MSG" and, when present, "dshbox: hint: HINT"; returns 125. */
int cli_fail(const struct dsh_error *e);
/* Print a usage error (one line) with a hint pointing at --help; returns 125. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * POLICY OPTIONS, shared by run, check, fs, serve and explain.  A subcommand appends
 * CLI_POLICY_LONG_OPTIONS to its getopt_long table and hands every option whose value is
 * >= CLI_OPT_POLICY_BASE to cli_policy_option().
 */
enum {
	CLI_OPT_POLICY_BASE = 0x1000,
	CLI_OPT_CONFIG = CLI_OPT_POLICY_BASE,
	CLI_OPT_MODE,
	CLI_OPT_WORKSPACE,
	CLI_OPT_ACCESS,
	CLI_OPT_ACCESS_FILE,
	CLI_OPT_NETWORK,
	CLI_OPT_BACKEND,
	CLI_OPT_CWD,
	CLI_OPT_WARNINGS,
	CLI_OPT_ALLOW_DEGRADED,
	CLI_OPT_ALLOW_ENV,
	CLI_OPT_ALLOW_UNIX_SOCKET,
	CLI_OPT_ALLOW_DOMAIN,
	CLI_OPT_DENY_DOMAIN,
	CLI_OPT_POLICY_END,
};
#define CLI_POLICY_LONG_OPTIONS                                         \
	{ "config", required_argument, NULL, CLI_OPT_CONFIG },          \
	{ "mode", required_argument, NULL, CLI_OPT_MODE },              \
	{ "workspace", required_argument, NULL, CLI_OPT_WORKSPACE },    \
	{ "access", required_argument, NULL, CLI_OPT_ACCESS },          \
	{ "access-file", required_argument, NULL, CLI_OPT_ACCESS_FILE },\
	{ "network", required_argument, NULL, CLI_OPT_NETWORK },        \
	{ "backend", required_argument, NULL, CLI_OPT_BACKEND },        \
	{ "cwd", required_argument, NULL, CLI_OPT_CWD },                \
	{ "warnings", required_argument, NULL, CLI_OPT_WARNINGS },      \
	{ "allow-degraded", no_argument, NULL, CLI_OPT_ALLOW_DEGRADED },        \
	{ "allow-env", required_argument, NULL, CLI_OPT_ALLOW_ENV },            \
	{ "allow-unix-socket", required_argument, NULL, CLI_OPT_ALLOW_UNIX_SOCKET },    \
	{ "allow-domain", required_argument, NULL, CLI_OPT_ALLOW_DOMAIN },              \
	{ "deny-domain", required_argument, NULL, CLI_OPT_DENY_DOMAIN }

#define CLI_POLICY_HELP                                                                     \
	"Policy options:\n"                                                                 \
	"  --config FILE|-      read a YAML configuration, - from standard input (flags\n"  \
	"                       below override it)\n"                                      \
	"  --mode M             read-only | workspace-write (default) | danger-full-access\n" \
	"  --workspace DIR      the workspace root (default: the current directory)\n"      \
	"  --access RULE        add a rule: 'rw PATH', 'r- PATH|GLOB', '-- PATH|GLOB'\n"    \
	"                       (repeatable; added to the configuration's rules)\n"          \
	"  --access-file FILE   add the rules of FILE, one per line\n"                      \
	"  --network on|off     off: own network namespace with loopback only\n"            \
	"  --allow-domain PAT   reach only the names allowed (name, *.name, name:PORT, an\n" \
	"                       IP or CIDR; repeatable; the network is then filtered)\n"   \
	"  --deny-domain PAT    never reach PAT, even when allowed (repeatable)\n"          \
	"  --backend B          auto | linux-ns | landlock | runner | none\n"               \
	"  --cwd DIR            base of relative paths (default: the current directory)\n"  \
	"  --warnings=stderr    print load-time warnings on stderr\n"                       \
	"  --allow-degraded     run even when the backend loses a rule (one warning each)\n" \
	"  --allow-env NAME     pass NAME to the command even if env.exclude matches it\n"  \
	"  --allow-unix-socket PATH  a pathname socket the command may connect to\n"       \
	"                       (allowUnixSockets; repeatable)\n"

struct cli_policy_opts {
	char *config_file;
	bool have_mode, have_network, have_backend;
	bool allow_degraded;  /* --allow-degraded: only ever turns allowDegraded on */
	enum dsh_mode mode;
	bool network;
	enum dsh_backend_id backend;
	char *workspace;
	char *cwd;
	char **access;        /* --access, in order */
	char **access_files;  /* --access-file, in order */
	char **allow_env;     /* --allow-env */
	char **allow_sockets; /* --allow-unix-socket */
	char **domains;       /* --allow-domain P as "+P", --deny-domain P as "-P", in order */
	bool warnings_to_stderr;
};

/* Handle one policy option; returns 0, or 125 after printing the error. */
int cli_policy_option(struct cli_policy_opts *o, int opt, const char *arg, const char *cmd);
/*
 * Build the configuration (file, then flags), compile the policy and, when ret_run is not NULL, the
 * run options; prints and returns 125 on error.  *ret_config is initialised in every case.
 */
int cli_policy_load(struct cli_policy_opts *o, char **envp, struct dsh_config *ret_config,
		    struct dsh_policy **ret_policy, struct dsh_run_options *ret_run);
void cli_policy_opts_clear(struct cli_policy_opts *o);
/* Print the policy's load-time warnings on stderr when --warnings=stderr was given. */
void cli_policy_print_warnings(const struct cli_policy_opts *o, const struct dsh_policy *p);

#endif
