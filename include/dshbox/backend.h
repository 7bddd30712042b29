/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_BACKEND_H
#define DSHBOX_BACKEND_H

/*
 * Every process-sandbox backend plugs in through this one table (SPEC 4).  A backend is a pure
 * part (compile, describe: built and tested everywhere) and an applier (probe, confine) that only
 * does something on its own platform.
 */

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/dshbox.h"
#include "dshbox/export.h"

/*
 * SPEC 2 knows two levels only.  A rule a backend does not enforce at all is `partial` with the whole
 * rule said as its loss ("lost"): the report never rounds a loss away, and a run that would lose it
 * refuses unless allowDegraded (dsh_run_check_degraded).
 */
enum dsh_enforcement {
	DSH_ENFORCE_FULL,    /* the rule holds as written */
	DSH_ENFORCE_PARTIAL, /* the rule holds in part, or not at all: lost says what is lost */
};
DSH_PUBLIC const char *dsh_enforcement_to_string(enum dsh_enforcement e);

struct dsh_rule_report {
	enum dsh_enforcement level;
	char *how;   /* "mask (read and write fail)", "--ro-bind-try P P" ... */
	char *lost;  /* NULL when full; else what is lost, for the one load-time warning */
};

struct dsh_description {
	const char *backend;
	enum dsh_enforcement overall;  /* the weakest of the rules' levels */
	struct dsh_rule_report *rules; /* one per policy rule, in policy order */
	size_t n_rules;
	char **warnings;           /* one per degradation: names the rule, the backend, what is lost */
	char **notes;              /* facts worth telling (e.g. files created later are not masked) */
	char **denial_signatures;  /* stderr substrings a kernel denial produces under this backend */
	/* What the run hides from the command, each "PATH (rule \"-- KEY\")": a command that fails on
	   one sees only the kernel's EACCES, so a failed run names them (SPEC 2, 3.3). */
	char **hidden;
};
DSH_PUBLIC void dsh_description_clear(struct dsh_description *d);

struct dsh_run_request {
	char *const *argv;       /* argv[0] is looked up in PATH of envp */
	char *const *envp;       /* the command's environment */
	const int *preserve_fds; /* descriptors above 2 kept open (--preserve-fd) */
	size_t n_preserve_fds;
};

/* How the command ended, for the CLI to reproduce. */
/* The longest refusal the broker reports (`PATH (rule "TEXT")`), terminator included: one size from
   the broker through init's status frame to the result. */
#define DSH_REFUSAL_MAX 512

/* One destination a filtered network refused (SPEC 12.3), as the command asked for it, and how often. */
struct dsh_net_refusal {
	char *name;          /* a host name, or an address literal */
	unsigned port;       /* 0: a DNS query, which names no port */
	char *via;           /* dns, http, socks, mapped, sni (a TLS server name), host (an HTTP Host) */
	char *reason;        /* denied, not a host name, ... */
	unsigned long count;
};

struct dsh_run_result {
	int exit_code;   /* valid when signal == 0 */
	int signal;      /* the signal that killed the command, or 0 */
	char *message;   /* why exec failed (exit 126/127), for the one error line; or NULL.  Owned. */
	char **warnings; /* degradations found while setting up (NULL-terminated, or NULL).  Owned. */
	/* The runtime broker's refusals (EACCES by a rule's word) and the first one, as
	   `PATH (rule "TEXT")`, or "" (the run names it after a failure). */
	unsigned long refused;
	char refusal[DSH_REFUSAL_MAX];
	/* A filtered network's refusals, one per distinct name, port, way and reason, in the order
	   first seen.  Owned. */
	struct dsh_net_refusal *net_refused;
	size_t n_net_refused;
};

struct dsh_backend {
	const char *name;
	enum dsh_backend_id id;
	/* 0 when this backend can enforce on this machine; else -errno and err says why (with a hint).
	   Bounded by o->probe_timeout_ms. */
	int (*probe)(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err);
	/* Build the plan (pure where the backend allows it).  The plan keeps a pointer to o. */
	int (*compile)(const struct dsh_policy *p, const struct dsh_run_options *o, void **ret_plan,
		       struct dsh_error **err);
	/* What this backend enforces of each rule; plan may be NULL (explain without compiling). */
	int (*describe)(const struct dsh_policy *p, const void *plan, struct dsh_description *ret,
			struct dsh_error **err);
	/* Print the plan for --dry-run into a newly allocated string. */
	int (*render)(const struct dsh_policy *p, const void *plan, char **ret, struct dsh_error **err);
	/* Run the command confined and wait for it.  A negative return means the command did not run
	   (dshbox's own failure, exit 125); 126/127 for exec failures come back in ret->exit_code. */
	int (*confine)(const struct dsh_policy *p, void *plan, const struct dsh_run_request *req,
		       struct dsh_run_result *ret, struct dsh_error **err);
	void (*free)(void *plan);
};

/* The registry (supervisor/): every backend compiled into this build, by id. */
DSH_PUBLIC const struct dsh_backend *dsh_backend_get(enum dsh_backend_id id);
/* All compiled-in backends (NULL-terminated), for explain's table. */
DSH_PUBLIC const struct dsh_backend *const *dsh_backend_list(void);

/*
 * Choose the backend for a run (SPEC 4).  An explicit backend is used as asked.  auto: danger-full-
 * access without r-/-- rules runs with none (argv verbatim); otherwise linux-ns, then landlock, each
 * probe bounded by o->probe_timeout_ms; when neither can enforce, fail closed (-ENOTSUP, with a
 * hint), except in danger-full-access, which falls back to none (describe says what is not enforced).
 */
DSH_PUBLIC int dsh_backend_select(const struct dsh_policy *p, const struct dsh_run_options *o,
				  const struct dsh_backend **ret, struct dsh_error **err);

/*
 * Honest degradation (SPEC 4): the rules d reports lost (a report with `lost` set).  Nothing lost, or a
 * backend that refuses its lost rules itself at confine (the runner, SPEC 1.5): 0.
 * Lost and o->allow_degraded: 0, and *ret_warnings (when ret_warnings is not NULL) gets one line per
 * lost rule (no prefix) that the caller shows at every run.  Lost without it: -ENOTSUP and one error
 * naming each lost rule (or the first ones and a count) with the remedies as its hint; the command
 * must not run.
 */
DSH_PUBLIC int dsh_run_check_degraded(const struct dsh_policy *p, const struct dsh_run_options *o,
				      const struct dsh_description *d, char ***ret_warnings,
				      struct dsh_error **err);

/* Everything a run needs before confine(), from dsh_run_prepare(). */
struct dsh_run_setup {
	const struct dsh_backend *backend; /* set once compile succeeded */
	void *plan;                        /* the backend's plan (may be NULL for "none") */
	struct dsh_description description;
	bool described;                    /* description is filled */
	char **degraded;                   /* allowDegraded: one warning per lost rule, for every run */
};

/*
 * Select the backend, compile, describe and check for lost rules (dsh_run_check_degraded): the one
 * decision a host linking libdshbox and `dshbox run` share.  On the refusal for lost rules (-ENOTSUP)
 * ret->backend, plan and description stay filled so the caller can still report what is lost or
 * print the plan; the command must not run.  Call dsh_run_setup_clear() whatever it returned.
 */
DSH_PUBLIC int dsh_run_prepare(const struct dsh_policy *p, const struct dsh_run_options *o,
			       struct dsh_run_setup *ret, struct dsh_error **err);
/* The same for a backend already chosen (auto's fallback after dsh_backend_fall_back). */
DSH_PUBLIC int dsh_run_prepare_backend(const struct dsh_policy *p, const struct dsh_run_options *o,
				       const struct dsh_backend *b, struct dsh_run_setup *ret,
				       struct dsh_error **err);
DSH_PUBLIC void dsh_run_setup_clear(struct dsh_run_setup *s);

/*
 * With o->start_decides, auto chooses linux-ns without probing it (the probe makes a throw-away
 * namespace on every run; the start makes the real one).  When that start fails where the probe
 * would have refused (an error of kind DSH_ERR_UNSUPPORTED from confine, nothing of the command run),
 * this chooses the next backend as auto would have: probed, the same errors and fallbacks.  -ENOTSUP
 * when auto has nothing to fall back on (failed was not auto's unprobed choice): report the error.
 */
DSH_PUBLIC int dsh_backend_fall_back(const struct dsh_policy *p, const struct dsh_run_options *o,
				     const struct dsh_backend *failed, const struct dsh_error *why,
				     const struct dsh_backend **ret, struct dsh_error **err);

/*
 * A person's workspace must exist and be a directory, and "/" in workspace-write (a host started
 * from / without a workspace) would make everything writable without a word: each is an error of
 * kind DSH_ERR_CONFIG with a hint.  (The policy itself resolves the workspace lexically, as the
 * conformance vectors need; this is the check a front end makes before any command.)
 */
DSH_PUBLIC int dsh_run_check_workspace(const struct dsh_policy *p, struct dsh_error **err);

struct dsh_run_hooks {
	/* Called just before each backend's confine (the first choice, and auto's fallback after a
	   refused start), with its setup: setup->degraded are the lines to say at every run. */
	void (*before_confine)(void *data, const struct dsh_run_setup *setup);
	void *data;
	/* Backend none (and the runner where it runs the command directly: danger-full-access
	   without rules) replaces the calling process with the command, as `dshbox run` does (the
	   command's status and signals are then its own).  Off, the default for a host: they run the
	   command in a child and wait, as every other backend does. */
	bool none_execs_in_place;
};

/*
 * A whole run, as `dshbox run` makes it: the workspace checked (dsh_run_check_workspace), the
 * backend chosen, compiled, described and its lost rules checked (dsh_run_prepare, unless setup
 * already holds a successful one: a caller that printed --dry-run or --report from it), the
 * command confined and waited for, and auto's fallback when the start of its unprobed first
 * choice was refused (dsh_backend_fall_back) — the next backend then answers for its own losses.
 * A negative return: the command did not run (exit 125 for a front end), err says why; setup
 * still describes what was prepared (call dsh_run_setup_clear whatever the return).  Otherwise
 * *ret says how the command ended (126/127 with ret->message for an exec failure).  hooks may be
 * NULL.
 *
 * Safe to call from a multithreaded process: the sandbox is then started from a single-threaded
 * child made by fork() (glibc resets malloc's and stdio's locks there), so no lock another thread
 * holds can stop it; signals sent to the caller are not passed on to the command in that case.
 */
DSH_PUBLIC int dsh_run(const struct dsh_policy *p, const struct dsh_run_options *o,
		       const struct dsh_run_request *req, const struct dsh_run_hooks *hooks,
		       struct dsh_run_setup *setup, struct dsh_run_result *ret, struct dsh_error **err);
/* What dsh_run's result holds (message, warnings); the struct itself is the caller's. */
DSH_PUBLIC void dsh_run_result_clear(struct dsh_run_result *r);

/* The --report JSON object (SPEC 2) for a chosen backend and its description. */
DSH_PUBLIC int dsh_run_report_json(const struct dsh_policy *p, const struct dsh_run_options *o,
				   const struct dsh_description *d, char **ret, struct dsh_error **err);
/* The same after the run: with a filtered network, what it refused (res->net_refused). */
DSH_PUBLIC int dsh_run_report_json_after(const struct dsh_policy *p, const struct dsh_run_options *o,
					 const struct dsh_description *d, const struct dsh_run_result *res, char **ret,
					 struct dsh_error **err);

#endif
