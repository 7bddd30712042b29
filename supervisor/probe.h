/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_PROBE_H
#define DSH_SUPERVISOR_PROBE_H

/*
 * The probe table behind include/dshbox/probe.h, and the backends' probe slots built from it.
 * Each entry's function runs in a child (fork, never CLONE_VFORK: the parent must stay free to
 * enforce the deadline); the parent polls the child's pidfd until probeTimeoutMs, then kills and
 * reaps it.  Entries run for one backend share one child, so a user namespace entered by one
 * entry serves the next.
 */

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/backend.h"
#include "dshbox/error.h"
#include "dshbox/probe.h"

/* A probe child's state, and what it reports for the entry being run. */
struct dsh_probe_ctx {
	bool in_userns;  /* an earlier entry in this child entered a new user + mount namespace */
	int code;        /* positive errno of the failing step, 0 when the entry works */
	int value;       /* an entry's finding (the Landlock ABI) */
	char step[64];   /* the call that failed */
};

struct dsh_probe_entry {
	const char *name;    /* short: "user namespaces" */
	const char *checks;  /* what the function tries, one line */
	const char *remedy;  /* one line for the user when it fails */
	/* Runs in the probe child: 0, or -errno with ctx->code and ctx->step filled (dsh_probe_fail). */
	int (*fn)(struct dsh_probe_ctx *ctx);
};

/* Fill ctx->code (from errno, EPERM if none) and ctx->step; returns -ctx->code. */
int dsh_probe_fail(struct dsh_probe_ctx *ctx, const char *step);
/*
 * Whether this process runs inside a dshbox sandbox: under a seccomp filter, with a process named
 * dshbox among its ancestors (init, pid 1 of linux-ns; the parent's parent in the landlock backend).
 * Only for a hint: a nested sandbox is refused there unless the outer one says nestedSandbox: true.
 */
bool dsh_probe_inside_dshbox(void);
/* Whether this process may still install a seccomp filter with a listener (none serves it yet:
   the kernel allows one per process), tried in a forked child. */
bool dsh_probe_listener_possible(void);

/*
 * Run entries idx[0..n) of table (table_len entries) in one child, in order, stopping at the first
 * failure; the whole set is bounded by timeout_ms (> 0).  Returns 0 when all work; else -code with
 * ret describing the entry that failed or was running at the deadline (ret->id is its index).
 * Tests pass their own table (a probe that hangs) here: the real one is never mutable.
 */
int dsh_probe_run_entries(const struct dsh_probe_entry *table, size_t table_len, const size_t *idx, size_t n,
			  long long timeout_ms, struct dsh_probe_result *ret);
/* dsh_probe_run_entries() for a backend: the failure becomes err, naming backend and entry, with
   the entry's remedy as the hint. */
int dsh_probe_require(const struct dsh_probe_entry *table, size_t table_len, const char *backend,
		      const size_t *idx, size_t n, long long timeout_ms, struct dsh_error **err);

/* The backends' probe slots (struct dsh_backend.probe), bounded by o->probe_timeout_ms.
   linux-ns: user + mount namespaces, the mount API, and with network off (outside
   danger-full-access) a network namespace with its loopback brought up through ns/net.c.
   landlock: Landlock and dshbox's seccomp filter. */
int dsh_probe_backend_linux_ns(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err);
int dsh_probe_backend_landlock(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err);

/* ---- why a probe failed, and the fix (supervisor/probe_diagnose.c) ---- */

/* What the machine says about the refusals' possible causes, read once (dsh_probe_env_read);
   tests fill it by hand. */
struct dsh_probe_env {
	int seccomp_mode;               /* /proc/self/status Seccomp: (2: a filter) */
	char container[16];             /* "docker", "podman", "kubernetes", "container", or "" */
	bool proc_masked;               /* mounts over /proc/kcore and the like (/proc/self/mountinfo) */
	long max_user_namespaces;       /* the sysctls, -1 when absent */
	long unprivileged_userns_clone;
	long apparmor_restrict_userns;
	bool inside_dshbox;             /* dsh_probe_inside_dshbox() */
};

enum dsh_probe_cause {
	DSH_CAUSE_UNKNOWN,
	DSH_CAUSE_KERNEL,       /* ENOSYS: the kernel lacks the call */
	DSH_CAUSE_SYSCTL,       /* user namespaces switched off */
	DSH_CAUSE_APPARMOR,     /* Ubuntu's restriction of unprivileged user namespaces */
	DSH_CAUSE_SECCOMP,      /* a seccomp filter (a container runtime's profile, named when it is one) */
	DSH_CAUSE_MASKED_PROC,  /* a fresh procfs refused because /proc is masked */
	DSH_CAUSE_NESTED,       /* inside a dshbox sandbox */
	DSH_CAUSE_LSM,          /* EPERM without a filter or a switch: an LSM, Yama, capabilities */
};

struct dsh_probe_diagnosis {
	enum dsh_probe_cause cause; /* DSH_CAUSE_UNKNOWN: nothing to add to the entry's remedy */
	char why[256];
	char fix[512];              /* what to change, naming the container runtime's setting when the
				       cause is a container's */
};

void dsh_probe_env_read(struct dsh_probe_env *e);
/* The cause of r's failure on a machine described by e, and its fix.  Pure. */
void dsh_probe_diagnose(const struct dsh_probe_result *r, const struct dsh_probe_env *e, struct dsh_probe_diagnosis *d);
const char *dsh_probe_cause_name(enum dsh_probe_cause c);
/* Whether /proc/self/mountinfo text shows /proc masked (a mount over /proc/kcore, /proc/sys, ...). */
bool dsh_probe_proc_masked(const char *mountinfo);
/* The container runtime from its traces (/run/.containerenv, /.dockerenv, container= of pid 1, the
   cgroup path, a pod's /var/run/secrets/kubernetes.io), or NULL outside any. */
const char *dsh_probe_container_kind(bool containerenv, bool dockerenv, const char *pid1_container,
				     const char *cgroup, bool kubernetes_secrets);

#endif
