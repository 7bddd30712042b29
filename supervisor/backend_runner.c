/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runner backend: runnerCommand + bubblewrap-dialect profile arguments + "--" + the command
 * (SPEC 1.5, 4).  With no rules the arguments are the official ones, verbatim.  Any access rule
 * together with runnerCommand is refused at confine time (exit 125): the dialect cannot be shown to
 * express a rule exactly (docs/backends.md, "runner"), and a rule must fail, never vanish.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "policy/glob.h"
#include "supervisor/backends.h"
#include "supervisor/forked_run.h"
#include "supervisor/runner_exec.h"

struct runner_plan {
	const struct dsh_run_options *opts;
	char **prefix;   /* runnerCommand + profile arguments + "--"; NULL when exec'd directly */
	bool direct;     /* danger-full-access without rules: no confinement of its own (SPEC 1.1) */
};

static int push_all(char ***v, struct dsh_error **err, const char *const *args)
{
	for (size_t i = 0; args[i]; i++)
		if (dsh_strv_push(v, args[i]) < 0)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	return 0;
}

int dsh_runner_profile_args(const struct dsh_policy *p, bool network, char ***ret, struct dsh_error **err)
{
	static const char *const base[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid",
					    "--proc", "/proc", "--die-with-parent", NULL };
	_cleanup_strv_ char **v = NULL;
	int r = push_all(&v, err, base);
	if (r < 0)
		return r;
	if (!network && (r = push_all(&v, err, (const char *const[]){ "--unshare-net", NULL })) < 0)
		return r;
	if (p->mode == DSH_MODE_WORKSPACE_WRITE &&
	    (r = push_all(&v, err, (const char *const[]){ "--tmpfs", "/tmp", "--bind", p->workspace,
							   p->workspace, NULL })) < 0)
		return r;
	if (!v && !(v = calloc(1, sizeof(char *))))
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	*ret = TAKE_PTR(v);
	return 0;
}

int dsh_runner_rule_args(const struct dsh_rule *r, char ***v)
{
	if (r->glob)
		return 0;
	if (r->kind == DSH_RULE_RW) {
		/* rw paths are concrete (policy/rule.c): the canonical path is the root */
		if (!r->canonical)
			return 0;
		if (dsh_strv_push(v, "--bind-try") < 0 || dsh_strv_push(v, r->canonical) < 0 ||
		    dsh_strv_push(v, r->canonical) < 0)
			return -ENOMEM;
		return 1;
	}
	if (r->n_match == 0)
		return 0;
	for (size_t i = 0; i < r->n_match; i++) {
		_cleanup_free_ char *path = r->match[i].literal ? strdup(r->match[i].literal)
								: dsh_glob_unescape(r->match[i].pattern);
		if (!path || dsh_strv_push(v, "--ro-bind-try") < 0 || dsh_strv_push(v, path) < 0 ||
		    dsh_strv_push(v, path) < 0)
			return -ENOMEM;
	}
	return 1;
}

/* The rules the user wrote: the dialect cannot carry them (SPEC 1.5). */
static size_t user_rules(const struct dsh_policy *p, const struct dsh_rule **ret_first)
{
	size_t n = 0;
	*ret_first = NULL;
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].origin == DSH_ORIGIN_USER && n++ == 0)
			*ret_first = &p->rules[i];
	return n;
}

static bool runner_direct(const struct dsh_policy *p)
{
	return p->mode == DSH_MODE_DANGER_FULL_ACCESS && p->n_rules == 0;
}

/*
 * The default-protected names (SPEC 1.6) are literal r- paths, which the dialect spells exactly
 * (--ro-bind-try); those present now are added, so the runner keeps them read-only too.
 */
static int push_defaults(const struct dsh_policy *p, char ***v, struct dsh_error **err)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		struct stat st;
		if (r->origin == DSH_ORIGIN_USER || lstat(r->literal_dir, &st) < 0)
			continue;
		int k = dsh_runner_rule_args(r, v);
		if (k < 0)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	return 0;
}

static int rn_probe(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err)
{
	if (runner_direct(p))
		return 0;
	if (!o->runner_command || !o->runner_command[0]) {
		int r = dsh_err(err, DSH_ERR_CONFIG, EINVAL, "backend 'runner' needs runnerCommand");
		dsh_err_hint(err, "set runnerCommand (e.g. [bwrap]) and runnerFailureSignatures in the configuration");
		return r;
	}
	_cleanup_free_ char *path = NULL;
	return dsh_runner_find_program(o->runner_command[0], o->envp, &path, err);
}

static void rn_free(void *plan)
{
	struct runner_plan *rp = plan;
	if (!rp)
		return;
	dsh_strv_free(rp->prefix);
	free(rp);
}

static int rn_compile(const struct dsh_policy *p, const struct dsh_run_options *o, void **ret_plan,
		      struct dsh_error **err)
{
	struct runner_plan *rp = calloc(1, sizeof(*rp));
	if (!rp)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	rp->opts = o;
	rp->direct = runner_direct(p);
	if (!rp->direct) {
		_cleanup_strv_ char **args = NULL;
		int r = dsh_runner_profile_args(p, o->network, &args, err);
		if (r >= 0)
			r = push_defaults(p, &args, err);
		if (r >= 0 && o->runner_command)
			r = push_all(&rp->prefix, err, (const char *const *)o->runner_command);
		if (r >= 0)
			r = push_all(&rp->prefix, err, (const char *const *)args);
		if (r >= 0)
			r = push_all(&rp->prefix, err, (const char *const[]){ "--", NULL });
		if (r < 0) {
			rn_free(rp);
			return r;
		}
	}
	*ret_plan = rp;
	return 0;
}

static void add_quoted(struct dsh_buf *b, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == strlen(s)) {
		dsh_buf_add(b, s);
		return;
	}
	dsh_buf_addc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			dsh_buf_add(b, "'\\''");
		else
			dsh_buf_addc(b, *s);
	}
	dsh_buf_addc(b, '\'');
}

static int rn_render(const struct dsh_policy *p, const void *plan, char **ret, struct dsh_error **err)
{
	const struct runner_plan *rp = plan;
	const struct dsh_run_options *o = rp->opts;
	struct dsh_buf b = { 0 };
	if (!rp->direct && (!o->runner_command || !o->runner_command[0]))
		dsh_buf_add(&b, "# runnerCommand is empty: backend 'runner' cannot run; it would receive\n");
	if (rp->direct) {
		dsh_buf_add(&b, "# danger-full-access without rules: the command is run directly\nCMD...\n");
	} else {
		for (size_t i = 0; rp->prefix && rp->prefix[i]; i++) {
			if (i)
				dsh_buf_addc(&b, ' ');
			add_quoted(&b, rp->prefix[i]);
		}
		dsh_buf_add(&b, " CMD...\n");
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		if (p->rules[i].origin != DSH_ORIGIN_USER)
			continue;
		_cleanup_strv_ char **args = NULL;
		int k = dsh_runner_rule_args(&p->rules[i], &args);
		dsh_buf_addf(&b, "# rule \"%s\": ", p->rules[i].text);
		if (k < 0) {
			b.oom = true;
		} else if (k == 0) {
			dsh_buf_add(&b, "no spelling in the bubblewrap dialect (a glob)");
		} else {
			dsh_buf_add(&b, "would be");
			for (size_t j = 0; args[j]; j++) {
				dsh_buf_addc(&b, ' ');
				add_quoted(&b, args[j]);
			}
		}
		dsh_buf_add(&b, "; refused: runnerCommand with access rules fails the run (exit 125)\n");
	}
	*ret = dsh_buf_steal(&b);
	return *ret ? 0 : dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

static int rn_describe(const struct dsh_policy *p, const void *plan, struct dsh_description *d,
		       struct dsh_error **err)
{
	const struct runner_plan *rp = plan;
	const struct dsh_rule *first;
	memset(d, 0, sizeof(*d));
	d->backend = "runner";
	d->overall = user_rules(p, &first) ? DSH_ENFORCE_PARTIAL : DSH_ENFORCE_FULL;
	d->rules = calloc(p->n_rules ? p->n_rules : 1, sizeof(*d->rules));
	if (!d->rules)
		goto oom;
	d->n_rules = p->n_rules;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		struct dsh_rule_report *rep = &d->rules[i];
		_cleanup_strv_ char **args = NULL;
		int k = dsh_runner_rule_args(r, &args);
		if (k < 0)
			goto oom;
		_cleanup_free_ char *spelled = NULL;
		if (r->origin != DSH_ORIGIN_USER) {
			/* A default-protected name: spelled exactly, when present (push_defaults). */
			rep->level = DSH_ENFORCE_FULL;
			if (asprintf(&rep->how, "--ro-bind-try %s %s (when present at start)", r->literal_dir,
				     r->literal_dir) < 0) {
				rep->how = NULL;
				goto oom;
			}
			continue;
		}
		if (k > 0) {
			struct dsh_buf b = { 0 };
			for (size_t j = 0; args[j]; j++) {
				if (j)
					dsh_buf_addc(&b, ' ');
				add_quoted(&b, args[j]);
			}
			if (!(spelled = dsh_buf_steal(&b)))
				goto oom;
		}
		const char *degrade = r->kind == DSH_RULE_DENY ? " (and even then only read-only: reads would not be denied)" : "";
		/* Not enforced by the runner at all: partial, with the whole loss said (SPEC 2 has no
		   third level); rn_confine refuses the run, whatever allowDegraded says
		   (dsh_run_check_degraded leaves it to it). */
		rep->level = DSH_ENFORCE_PARTIAL;
		if (asprintf(&rep->how, "refused with runnerCommand (SPEC 1.5); the dialect would say %s%s",
			     spelled ? spelled : "nothing (it has no globs)", degrade) < 0) {
			rep->how = NULL;
			goto oom;
		}
		rep->lost = strdup("the run is refused with exit 125 before the command starts");
		if (!rep->lost)
			goto oom;
		if (dsh_strv_pushf(&d->warnings,
				   "rule \"%s\": backend runner: runnerCommand cannot carry access rules, so every "
				   "run fails with exit 125 (the bubblewrap dialect would %s)",
				   r->text,
				   r->glob ? "have no spelling for this glob"
				   : r->kind == DSH_RULE_DENY ? "only make it read-only, with --ro-bind-try"
				   : r->kind == DSH_RULE_RO ? "skip it while the path is missing (--ro-bind-try)"
							    : "skip it while the path is missing (--bind-try)") < 0)
			goto oom;
	}
	if (runner_direct(p)) {
		if (dsh_strv_push(&d->notes, "danger-full-access without rules: the command runs directly, "
					     "without the runner") < 0)
			goto oom;
	} else {
		if (dsh_strv_push(&d->notes, "the runner receives the official bubblewrap arguments verbatim; "
					     "/tmp is a private tmpfs") < 0 ||
		    dsh_strv_push(&d->notes, "the runner's stderr passes through a pipe so that "
					     "runnerFailureSignatures can be seen: the command's stderr is not a terminal") < 0 ||
		    dsh_strv_push(&d->notes, "the runner decides the exit status when the command cannot be "
					     "executed (bwrap: 1, with 'bwrap: execvp …' on stderr)") < 0)
			goto oom;
		if (p->mode == DSH_MODE_WORKSPACE_WRITE && p->tmpdir &&
		    strcmp(p->tmpdir, "/tmp") != 0 && strncmp(p->tmpdir, "/tmp/", 5) != 0 &&
		    dsh_strv_pushf(&d->notes, "$TMPDIR (%s) is not writable under the runner (its official "
					      "arguments bind only the workspace)", p->tmpdir) < 0)
			goto oom;
		if (rp->opts->protect_sockets &&
		    dsh_strv_push(&d->notes, "host daemon sockets are not masked under the runner "
					     "(protectSockets needs linux-ns)") < 0)
			goto oom;
	}
	if (dsh_strv_push(&d->denial_signatures, "permission denied") < 0 ||
	    dsh_strv_push(&d->denial_signatures, "read-only file system") < 0)
		goto oom;
	return 0;
oom:
	dsh_description_clear(d);
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

bool dsh_backend_runner_direct(const void *plan)
{
	const struct runner_plan *rp = plan;
	return rp && rp->direct;
}

/* The runner spawned, waited for, and its failure signatures looked for. */
static int runner_confine(const struct dsh_policy *p, const struct runner_plan *rp, const struct dsh_run_request *req,
			  struct dsh_run_result *ret, struct dsh_error **err)
{
	const struct dsh_run_options *o = rp->opts;
	_cleanup_strv_ char **argv = NULL;
	_cleanup_free_ char *path = NULL;
	int r;
	if ((r = rn_probe(p, o, err)) < 0)
		return r;
	if ((r = push_all(&argv, err, (const char *const *)rp->prefix)) < 0)
		return r;
	if ((r = dsh_runner_find_program(o->runner_command[0], req->envp, &path, err)) < 0)
		return r;
	if ((r = push_all(&argv, err, (const char *const *)req->argv)) < 0)
		return r;
	struct dsh_runner_spawn s = {
		.path = path,
		.argv = argv,
		.envp = req->envp,
		.cwd = p->cwd,
		.preserve_fds = req->preserve_fds,
		.n_preserve_fds = req->n_preserve_fds,
		.signatures = o->runner_failure_signatures,
		.stderr_fd = 2,
	};
	int matched = -1;
	if ((r = dsh_runner_run(&s, ret, &matched, err)) < 0)
		return r;
	/*
	 * The command's stderr and the runner's share one pipe, so a signature alone proves nothing: only
	 * a runner that exited with a non-zero status can have refused.  A status of 0 or a death by signal
	 * is the command's own (a runner that refused did not run it, and refuses by exiting), and is
	 * passed through whatever stderr held.
	 */
	if (matched >= 0 && !ret->signal && ret->exit_code != 0) {
		r = dsh_err(err, DSH_ERR_SYSTEM, EPROTO,
			    "runner '%s' failed: its stderr matched runnerFailureSignatures entry \"%s\" (exit %d)",
			    o->runner_command[0], o->runner_failure_signatures[matched], ret->exit_code);
		dsh_err_hint(err, "the runner refused to run the command; try it alone: %s --ro-bind / / true",
			     o->runner_command[0]);
		return r;
	}
	return 0;
}

struct forked_args {
	const struct dsh_policy *p;
	const struct runner_plan *rp;
	const struct dsh_run_request *req;
};

static int runner_confine_forked(const void *arg, struct dsh_run_result *ret, struct dsh_error **err)
{
	const struct forked_args *a = arg;
	return runner_confine(a->p, a->rp, a->req, ret, err);
}

static int rn_confine(const struct dsh_policy *p, void *plan, const struct dsh_run_request *req,
		      struct dsh_run_result *ret, struct dsh_error **err)
{
	struct runner_plan *rp = plan;
	const struct dsh_rule *first;
	size_t n_user = user_rules(p, &first);
	int r;
	if (n_user > 0) {
		r = dsh_err(err, DSH_ERR_CONFIG, EINVAL,
			    "runnerCommand cannot be combined with access rules (%zu given, first \"%s\"): "
			    "the runner's dialect cannot enforce them exactly",
			    n_user, first->text);
		dsh_err_hint(err, "remove runnerCommand to use the built-in sandbox, or remove the access rules");
		return r;
	}
	/* danger-full-access without rules: the none backend's direct exec, argv verbatim.  dsh_run
	   makes it in a child for a host (dsh_run_hooks.none_execs_in_place off): only a caller that
	   asked for it is replaced by the command. */
	if (rp->direct)
		return dsh_backend_none.confine(p, NULL, req, ret, err);
	/*
	 * From a multithreaded host the runner is supervised as linux-ns's init is (forked_run.h): from
	 * a single-threaded child of it.  There the signals the wait reads (SIGCHLD, those passed on)
	 * are blocked in the one thread there is, so none goes to a host's thread that leaves it
	 * unblocked (the wait would never see its child end), none of the host's own is read and
	 * passed on to the runner, and a host that reaps every child (waitpid(-1)) reaps that child,
	 * not the runner.
	 */
	if (dsh_process_is_threaded()) {
		struct forked_args a = { p, rp, req };
		return dsh_forked_run(runner_confine_forked, &a, NULL, ret, err);
	}
	return runner_confine(p, rp, req, ret, err);
}

const struct dsh_backend dsh_backend_runner = {
	.name = "runner",
	.id = DSH_BACKEND_RUNNER,
	.probe = rn_probe,
	.compile = rn_compile,
	.describe = rn_describe,
	.render = rn_render,
	.confine = rn_confine,
	.free = rn_free,
};
