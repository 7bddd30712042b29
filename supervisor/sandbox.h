/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_SANDBOX_H
#define DSH_SUPERVISOR_SANDBOX_H

/*
 * The run lifecycle of the linux-ns backend (SPEC 3.2, 3.7, 3.8).
 *
 *   dshbox (supervisor, host namespaces, no threads; the caller's process, left as it was)
 *     └─ init: clone(NEWUSER|NEWNS|NEWPID[|NEWNET]) — pid 1 of the sandbox, RLIMIT_CORE 0; runs the
 *          INIT stages (id maps, propagation, network, mounts), turns non-dumpable, then forks
 *          └─ the command: runs the COMMAND stages (lock, chdir, fds, no_new_privs, ..., exec)
 *
 * Every stage is a row of one const table (supervisor/stages.c).  A failing stage writes one record
 * naming itself into a CLOEXEC pipe; end-of-file on that pipe means the exec succeeded.  init reaps
 * zombies, forwards SIGINT/TERM/HUP/QUIT/USR1/USR2/WINCH to the command and, when the command ends,
 * hands its wait status to the supervisor and exits: the pid namespace dies with it.  init has
 * PDEATHSIG=SIGKILL, so the sandbox also dies with the supervisor.
 */

#include <signal.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "dshbox/backend.h"
#include "ns/mount.h"
#include "landlock/landlock.h"
#include "ns/plan.h"
#include "policy/policy.h"
#include "broker/broker.h"
#include "seccomp/seccomp.h"

/*
 * The one sandbox plan: what a run is, as data, built before anything is started and applied by the
 * stage table.  Both front ends build it: the policy compiler (backend_linux_ns.c,
 * backend_landlock.c: sorted mount entries) and the bubblewrap translator (bwrap/run.c: entries,
 * then operations in argv order).  Everything it points to is owned by the front end's compiled
 * plan and outlives the run.
 */
struct dsh_net_policy;

struct dsh_sandbox_plan {
	const struct dsh_policy *policy;     /* what the broker decides by */
	const struct dsh_run_options *opts;
	struct {
		/* No namespace at all (the landlock backend): a plain fork, the stages marked needs_ns
		   skipped, and an init that is a child subreaper and kills whatever the command left
		   behind (no pid namespace does it). */
		bool none;
		bool net;              /* a network namespace of its own, loopback only */
		/* ... where dshbox serves the names this policy allows (SPEC 12.2): made by init's
		   network stage after it forked the service (supervisor/net_service.c).  NULL: none. */
		const struct dsh_net_policy *net_filter;
		bool share_ipc;        /* the caller's IPC namespace kept */
		bool uts;              /* a UTS namespace of its own ... */
		const char *hostname;  /* ... with this name set in it; NULL: the caller's name stays */
		bool cgroup;           /* a cgroup namespace of its own */
	} ns;
	struct {
		uid_t uid;             /* the caller's ids, mapped to themselves */
		gid_t gid;
		/* The ids the command has in the nested user namespace, mapped to the caller's (only
		   when inner); otherwise the caller's own. */
		bool inner;
		uid_t inner_uid;
		gid_t inner_gid;
		/* Root (CAP_SETUID and CAP_SETGID): every id range of the caller's namespace mapped to
		   itself instead of the one id, in both user namespaces (ns/userns.h), the supervisor
		   writing the first map.  Files of other users keep their owners inside. */
		bool range;
	} ids;
	const struct dsh_mount_plan *mounts; /* sorted entries, then operations in order (ns/plan.h) */
	struct {
		/* The capabilities (bit N: capability N) the command keeps in the nested user
		   namespace; 0: all dropped. */
		unsigned long long keep_caps;
		/* When the current directory does not exist inside (a new root): $HOME of the command's
		   environment, then "/"; otherwise that is a setup failure. */
		bool cwd_fallback;
		/* dshbox bwrap: an entry of the request's environment, DSH_PWD_SLOT bytes, that the
		   chdir stage fills with "PWD=" and the name it went to (the argv's, the caller's, $HOME
		   or "/"), as bubblewrap sets PWD.  A buffer of the caller's: the command shares init's
		   memory until exec and must not allocate.  NULL: the environment as given. */
		char *pwd_slot;
		/* dshbox bwrap --lock-file: paths inside the finished tree that init opens and holds a
		   read lock on (fcntl F_RDLCK) for as long as the sandbox lives (NULL-terminated). */
		char *const *lock_files;
		/* The program looked up and run when it is not argv[0] (argv[0] being what it is told). */
		const char *exec_name;
		/* dshbox bwrap --as-pid-1: the command is pid 1 of a pid namespace of its own, nested in
		   the sandbox's, with init (the broker) its parent outside it. */
		bool as_pid_1;
	} proc;
	const struct dsh_landlock_spec *landlock; /* built before fork; NULL: no Landlock stage */
	const struct dsh_seccomp_prog *seccomp;   /* compiled before fork; NULL: no seccomp stage */
	/* The caller's own programs, loaded in order after seccomp. */
	const struct dsh_seccomp_prog *extra_seccomp;
	size_t n_extra_seccomp;
	/* The runtime broker (SPEC 3.12): its filter, loaded by the command just before seccomp, and
	   the broker init serves it with.  NULL: runtimeBroker off. */
	const struct dsh_seccomp_prog *notify;
	struct dsh_broker *broker;
	struct {
		/* Called by init once the namespaces are final (after the lock, capabilities still
		   held), with init's pid as the caller sees it; a failure fails the setup.  NULL: none. */
		int (*on_locked)(void *data, pid_t outer_pid, struct dsh_error **err);
		void *on_locked_data;
		/* Descriptors the supervisor closes once init has its copies (so that a reader of what
		   init writes there sees the end when init closes them). */
		const int *close_after_spawn;
		size_t n_close_after_spawn;
	} hooks;
};

/* The namespaces line and the mounts of a plan, as --dry-run prints them; adds (NULL-terminated,
   or NULL) are lines "dshbox adds: ..." between the two. */
char *dsh_sandbox_plan_render(const struct dsh_sandbox_plan *plan, char *const *adds);

/* Where a stage runs: in init before the command is forked, or in the command before exec. */
enum dsh_stage_where {
	DSH_STAGE_INIT,
	DSH_STAGE_COMMAND,
};

#define DSH_PWD_SLOT (PATH_MAX + 5)

struct dsh_stage_ctx {
	const struct dsh_sandbox_plan *plan;
	const struct dsh_run_request *req;
	sigset_t caller_mask;       /* the signal mask the command gets back */
	struct rlimit caller_core;  /* the caller's RLIMIT_CORE, which the command gets back */
	struct dsh_mount_outcome mount_outcome;
	int report_fd;              /* the setup pipe (CLOEXEC): records on failure, EOF on exec */
	int exec_errno;             /* set by the exec stage when every candidate failed */
	int broker_sock;            /* the command's end: the listener goes to init through it, or -1 */
	int keeper_fds[2];          /* SPEC 3.14: the keeper's request pipe (read, write), or -1 */
	int exec_exit;              /* 126 or 127 */
	int *lock_fds;              /* init's descriptors of proc.lock_files, kept while it serves */
	size_t n_lock_fds;
	/* The timing view: where init's and the command's stages ended (the command writes here too:
	   it shares init's memory until exec).  Kept only when plan->opts->timing is set. */
	size_t n_clock;
	struct {
		const char *stage;
		long long end_ns;
	} clock[32];
	int ids_fd;                 /* ids.range: the supervisor's word that it wrote the maps, or -1 */
	int net_events_fd;          /* ns.net_filter: where the service writes its refusals, or -1 */
	pid_t net_service;          /* ... the service, init's child, or 0 */
	int net_service_end;        /* ... its wait status if it ended before the command, or -1 */
	int fg_tty;                 /* the terminal whose foreground init takes for the sandbox, or -1 */
	pid_t outer_pid;            /* init's pid in the caller's pid namespace (plan->hooks.on_locked only) */
	/* plan->seccomp and plan->notify as one program (dsh_seccomp_join), loaded by the broker stage
	   in place of both; empty when the plan has not both or they could not be joined. */
	struct dsh_seccomp_prog joined;
	/* The broker's own filter (dsh_seccomp_compile_broker), loaded by init before it serves;
	   empty without a broker. */
	struct dsh_seccomp_prog broker_filter;
};

struct dsh_stage {
	const char *name;
	enum dsh_stage_where where;
	bool needs_ns;  /* skipped when the plan has ns.none */
	int (*run)(struct dsh_stage_ctx *c, struct dsh_error **err);
};

/* The table, in order, terminated by a row with name == NULL. */
extern const struct dsh_stage dsh_stages[];

/* The mapped pool (SPEC 12.2): addresses 198.18.0.1 up, each listening on 80, 443 and the ports
   the allow patterns spell, at most DSH_NET_POOL_PORTS of them. */
#define DSH_NET_POOL_ADDRS 32
#define DSH_NET_POOL_PORTS 8
/* init's network stage with plan->ns.net_filter: fork the service, then enter the command's network
   namespace, make its listeners there and hand them over.  events_fd: the service's refusal lines,
   or -1.  Its pid in *ret_pid, for init to tell its end from the command's. */
int dsh_sandbox_net_filtered(const struct dsh_sandbox_plan *plan, int events_fd, pid_t *ret_pid,
			     struct dsh_error **err);

/* envp with the proxy variables of the run's network service (SPEC 12.2), both cases, in place of
   the caller's. */
int dsh_sandbox_net_env(char *const *envp, char ***ret, struct dsh_error **err);

/* The service's refusal lines, read by the supervisor as they come and counted. */
struct dsh_net_tally {
	struct dsh_net_refusal *v;
	size_t n;
	char part[1024]; /* a line not ended yet */
	size_t n_part;
};
/* Read what fd holds: 1 read, 0 interrupted, -EPIPE at its end, -EAGAIN nothing now, -errno. */
int dsh_net_tally_read(struct dsh_net_tally *t, int fd);
/* Hand the counts to ret (which owns them from then on). */
void dsh_net_tally_take(struct dsh_net_tally *t, struct dsh_run_result *ret);
void dsh_net_tally_clear(struct dsh_net_tally *t);
/* n refusals and the array that holds them. */
void dsh_net_refusals_free(struct dsh_net_refusal *v, size_t n);

/* Run the request's command in a new sandbox built by plan, and wait for it. */
int dsh_sandbox_run(const struct dsh_sandbox_plan *plan, const struct dsh_run_request *req, struct dsh_run_result *ret,
		    struct dsh_error **err);

/* Look argv[0] up in envp's PATH and execve it; returns only on failure (126/127 in *ret_exit). */
int dsh_exec_command(char *const *argv, char *const *envp, int *ret_exit, struct dsh_error **err);
/* The same, name looked up and run, argv as given (dshbox bwrap --argv0). */
int dsh_exec_command_as(const char *name, char *const *argv, char *const *envp, int *ret_exit,
			struct dsh_error **err);

/* Mark every descriptor above 2 close-on-exec, except those listed (which lose the flag). */
int dsh_fds_close_on_exec(const int *keep, size_t n_keep, struct dsh_error **err);
/* Close every descriptor above 2, except those listed. */
int dsh_fds_close_except(const int *keep, size_t n_keep, struct dsh_error **err);

/*
 * Root's command (supervisor/root_caps.c): whether the caller may map its whole id ranges (root
 * with CAP_SETUID, CAP_SETGID, CAP_SETFCAP), and the capabilities the command keeps so that it
 * writes where `check` and `serve` say root may: CAP_DAC_OVERRIDE, with namespaces CAP_FOWNER too,
 * each only if the caller has it.  0 for anyone but root.
 */
bool dsh_root_maps_range(void);
unsigned long long dsh_root_keep_caps(bool namespaces);
/* --dry-run's line for what the command keeps, nothing for none. */
struct dsh_buf;
void dsh_root_caps_render(unsigned long long caps, struct dsh_buf *b);

#endif
