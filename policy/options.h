/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_OPTIONS_H
#define DSH_POLICY_OPTIONS_H

/*
 * The configuration and the run options as in-tree code sees them.  Hosts get the opaque types of
 * dshbox.h with their setters, so that a key added here changes no program built against an
 * earlier release; the library, the command line and the tests read and fill these fields
 * directly, and keep them on the stack with dsh_config_init() and dsh_run_options_init().
 */

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/dshbox.h"

struct dsh_net_policy;

/* Where an access entry came from: a rule error from a file names the file and line (SPEC 1.3). */
struct dsh_access_origin {
	char *file;     /* NULL: not from a file (the command line, a host's own rule) */
	unsigned line;  /* 1-based line of the entry (of its first line) */
	bool each_line; /* a YAML literal block: the entry's line k (from 0) is on line + k */
};

/* The user's configuration as written (SPEC 1.5): YAML first, then command-line overrides. */
struct dsh_config {
	enum dsh_mode mode;
	char *workspace;          /* NULL: the current directory */
	char *cwd;                /* NULL: the current directory */
	char **access;            /* rule texts; one entry may hold several lines */
	struct dsh_access_origin *access_origins; /* parallel to access for n_access_origins entries;
						     the entries past it came from no file */
	size_t n_access_origins;
	/* A rule path holding $NAME or ${NAME} is an error (SPEC 1.3: the shell's spelling, which
	   dshbox would take literally; say {{ env.NAME }}).  The CLI sets it; the library's default
	   keeps '$' a plain character, as the conformance vectors do. */
	bool refuse_shell_variables;
	bool protect_defaults;    /* the default-protected names of SPEC 1.6 and 16 */
	char **unprotect;         /* unprotect: names of that list left unprotected */
	enum dsh_tmp tmp;         /* tmp: host (default) or private */
	char **sources;           /* the configuration and access files loaded (SPEC 1.6), as given */
	long long diff_basis_max_bytes;   /* the file fence: largest old file an overwrite diffs */
	/* Run options (struct dsh_run_options), read by dsh_run_options_init(). */
	bool network;             /* false: own network namespace, loopback only */
	struct dsh_net_policy *net; /* network: a mapping, or --allow-domain/--deny-domain (SPEC 12);
				       NULL: on or off as network says.  Set, network is false. */
	char **runner_command;
	char **runner_failure_signatures;
	long long probe_timeout_ms;
	long long max_masks;
	bool protect_sockets;
	char **allow_unix_sockets; /* allowUnixSockets: socket paths a command may reach (SPEC 3.11), as written */
	bool runtime_broker;      /* runtimeBroker: the runtime broker of SPEC 3.12 */
	bool nested_sandbox;      /* nestedSandbox: new user namespaces allowed inside (mounts stay locked) */
	enum dsh_backend_id backend;
	bool allow_degraded;      /* allowDegraded: run even when the backend loses a rule (SPEC 4) */
	/* The command's environment (SPEC 1.7), read by dsh_run_options_init(). */
	enum dsh_env_inherit env_inherit;
	char **env_exclude;       /* name patterns ('*', '?'), case-insensitive; NULL: the defaults
				     *KEY* *SECRET* *TOKEN* *PASSWORD*; empty: none */
	char **env_set;           /* NAME=VALUE, in order: set whatever inherit and exclude say */
	char **env_allow;         /* names passed on whatever exclude says (--allow-env), exact */
};

void dsh_config_init(struct dsh_config *c);
void dsh_config_clear(struct dsh_config *c);

/*
 * How a command is run, apart from what it may access: the backend, the runner, limits, the
 * network and the command's environment.  Passed to a backend's probe, compile and confine.
 */
struct dsh_run_options {
	enum dsh_backend_id backend;
	bool allow_degraded;              /* SPEC 4: a backend that loses a rule runs (with a warning
					     per loss) instead of refusing; see dsh_run_check_degraded() */
	bool network;
	/* The network by name (SPEC 12), a copy of the configuration's; NULL: network on or off.  Set,
	   network is false: the command's namespace has loopback only, and dshbox serves the names. */
	struct dsh_net_policy *net;
	int ask_fd;                       /* SPEC 12.4: the host's socket for names in neither list, or -1 */
	char **runner_command;            /* NULL-terminated, or NULL */
	char **runner_failure_signatures; /* NULL-terminated, or NULL */
	long long probe_timeout_ms;       /* positive bound for each backend probe */
	long long max_masks;              /* most masks a run may create from glob matches */
	bool protect_sockets;
	/* allowUnixSockets with {{ env.NAME }} expanded: absolute paths of pathname sockets the
	   command may connect or send to besides those it bound itself (SPEC 3.11). */
	char **allow_unix_sockets;
	bool runtime_broker;              /* SPEC 3.12; off: the rules it covers are reported partial */
	/* runtimeBroker asked for, but this process already runs under another sandbox's broker and
	   the kernel allows one seccomp listener per process (dsh_run_options_probe_broker): off. */
	bool broker_unavailable;
	bool nested_sandbox;              /* new user namespaces allowed inside (SPEC 1.5 nestedSandbox) */
	char **envp;                      /* the environment the options were read with (a copy) */
	/* The environment the command gets: envp filtered by the configuration's env policy
	   (SPEC 1.7).  A front end passes it as struct dsh_run_request's envp. */
	char **command_env;
	char **env_removed;               /* the names envp held that command_env does not (no values) */
	enum dsh_env_inherit env_inherit;
	/* The timing view (DSHBOX_TIMING=1, --timing): where the stages of the run are recorded.  NULL:
	   no clock is read.  Set by the front end after dsh_run_options_init; it prints it. */
	struct dsh_timing *timing;
	/* auto: let the start decide instead of a probe (dsh_backend_select, dsh_backend_fall_back).
	   Only for a caller that runs at once and says nothing of the backend before the run. */
	bool start_decides;
};

/* Validate c's run options and copy them, with envp, into o.  Errors name the key. */
int dsh_run_options_init(struct dsh_run_options *o, const struct dsh_config *c, char *const *envp,
			 struct dsh_error **err);
void dsh_run_options_clear(struct dsh_run_options *o);

#endif
