/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seatbelt backend (SPEC 6): a pure profile generator (sbpl.c) and, on macOS only, a runner that
 * hands the profile to /usr/bin/sandbox-exec.  Everywhere else probe() and confine() refuse, and
 * describe() says that the profile is generated and tested here but not run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/backend.h"
#include "seatbelt/sbpl.h"

#ifdef __APPLE__
#include <fcntl.h>
#include <unistd.h>
#endif

extern const struct dsh_backend dsh_backend_seatbelt;

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"

struct sb_plan {
	char *profile;
};

static int sb_probe(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_error **err)
{
	(void)o;
	(void)p;
#ifdef __APPLE__
	if (access(SANDBOX_EXEC, X_OK) < 0)
		return dsh_err_sys(err, errno, "seatbelt: %s", SANDBOX_EXEC);
	return 0;
#else
	int r = dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "backend 'seatbelt' runs only on macOS");
	dsh_err_hint(err, "'dshbox explain --backend seatbelt --profile' prints the profile on any platform");
	return r;
#endif
}

static int sb_compile(const struct dsh_policy *p, const struct dsh_run_options *o, void **ret_plan,
		      struct dsh_error **err)
{
	(void)o;
	struct sb_plan *plan = calloc(1, sizeof(*plan));
	if (!plan)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	int r = dsh_sbpl_profile(p, &plan->profile, err);
	if (r < 0) {
		free(plan);
		return r;
	}
	*ret_plan = plan;
	return 0;
}

static void sb_free(void *plan)
{
	struct sb_plan *s = plan;
	if (!s)
		return;
	free(s->profile);
	free(s);
}

static int sb_render(const struct dsh_policy *p, const void *plan, char **ret, struct dsh_error **err)
{
	const struct sb_plan *s = plan;
	if (s) {
		*ret = strdup(s->profile);
		return *ret ? 0 : dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	return dsh_sbpl_profile(p, ret, err);
}

static bool has_high_byte(const struct dsh_rule *r)
{
	for (size_t i = 0; i < r->n_match; i++)
		for (const unsigned char *c = (const unsigned char *)r->match[i].pattern; c && *c; c++)
			if (*c >= 0x80)
				return true;
	return false;
}

static int sb_describe(const struct dsh_policy *p, const void *plan, struct dsh_description *d,
		       struct dsh_error **err)
{
	(void)plan;
	memset(d, 0, sizeof(*d));
	d->backend = "seatbelt";
	d->overall = DSH_ENFORCE_FULL;
	d->rules = calloc(p->n_rules ? p->n_rules : 1, sizeof(*d->rules));
	if (!d->rules)
		goto oom;
	d->n_rules = p->n_rules;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		struct dsh_rule_report *rep = &d->rules[i];
		const char *filter = r->glob ? "(regex #\"…\")" : "(subpath \"…\") (regex #\"…\")";
		rep->level = DSH_ENFORCE_FULL;
		switch (r->kind) {
		case DSH_RULE_RW:
			rep->how = p->mode == DSH_MODE_WORKSPACE_WRITE
					   ? strdup("(allow file-write* (subpath P)) in the writable-roots form")
					   : strdup("ignored in this mode (SPEC 1.1); nothing to grant");
			break;
		case DSH_RULE_RO:
			if (asprintf(&rep->how, "(deny file-write* %s) appended last, case-folded", filter) < 0)
				rep->how = NULL;
			break;
		case DSH_RULE_DENY:
			if (asprintf(&rep->how, "(deny file-read* file-write* %s) appended last, case-folded",
				     filter) < 0)
				rep->how = NULL;
			break;
		}
		if (!rep->how)
			goto oom;
		if (r->kind != DSH_RULE_RW && has_high_byte(r)) {
			rep->level = DSH_ENFORCE_PARTIAL;
			rep->lost = strdup("APFS compares names case- and normalisation-insensitively; the profile "
					   "folds ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic letters and "
					   "matches the one Unicode normalisation written, so other spellings of the "
					   "non-ASCII characters are not denied");
			if (!rep->lost ||
			    dsh_strv_pushf(&d->warnings, "rule \"%s\": backend seatbelt: %s", r->text, rep->lost) < 0)
				goto oom;
			d->overall = DSH_ENFORCE_PARTIAL;
		}
	}
	if (dsh_strv_push(&d->notes, "globs are matched by the kernel at every access, so files created "
				     "later are covered too") < 0 ||
	    dsh_strv_push(&d->notes, "a denied path's name stays visible in its parent's listing") < 0 ||
	    dsh_strv_push(&d->notes, "sandbox-exec replaces dshbox (no supervisor): a command it cannot "
				     "execute is reported by sandbox-exec itself, with its own status") < 0 ||
	    dsh_strv_push(&d->notes, "network and the host daemon sockets are not confined by this profile "
				     "(the official base allows them)") < 0)
		goto oom;
#ifndef __APPLE__
	if (dsh_strv_push(&d->notes, "not run on this platform: the profile is generated and tested here; "
				     SANDBOX_EXEC " runs it on macOS only") < 0)
		goto oom;
#endif
	if (dsh_strv_push(&d->denial_signatures, "operation not permitted") < 0)
		goto oom;
	return 0;
oom:
	dsh_description_clear(d);
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

#ifdef __APPLE__
/*
 * sandbox-exec applies the profile to itself and execs the command, so dshbox execs sandbox-exec in
 * its own place: the command's exit status, signals and terminal are the caller's own, with no
 * supervisor in between.  Returns only when sandbox-exec could not be executed.
 */
static int sb_confine(const struct dsh_policy *p, void *plan, const struct dsh_run_request *req,
		      struct dsh_run_result *ret, struct dsh_error **err)
{
	struct sb_plan *s = plan;
	_cleanup_strv_ char **argv = NULL;
	(void)ret;
	if (dsh_strv_push(&argv, SANDBOX_EXEC) < 0 || dsh_strv_push(&argv, "-p") < 0 ||
	    dsh_strv_push(&argv, s->profile) < 0 || dsh_strv_push(&argv, "--") < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	for (size_t i = 0; req->argv[i]; i++)
		if (dsh_strv_push(&argv, req->argv[i]) < 0)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	/* Descriptors above 2 do not reach the command unless preserved (SPEC 3.7). */
	int max = getdtablesize();
	for (int fd = 3; fd < max; fd++) {
		bool keep = false;
		for (size_t i = 0; i < req->n_preserve_fds; i++)
			keep |= req->preserve_fds[i] == fd;
		int fl = fcntl(fd, F_GETFD);
		if (fl >= 0)
			fcntl(fd, F_SETFD, keep ? fl & ~FD_CLOEXEC : fl | FD_CLOEXEC);
	}
	if (p->cwd && chdir(p->cwd) < 0)
		return dsh_err_sys(err, errno, "chdir '%s'", p->cwd);
	execve(SANDBOX_EXEC, argv, req->envp);
	return dsh_err_sys(err, errno, "seatbelt: execve %s", SANDBOX_EXEC);
}
#else
static int sb_confine(const struct dsh_policy *p, void *plan, const struct dsh_run_request *req,
		      struct dsh_run_result *ret, struct dsh_error **err)
{
	(void)plan;
	(void)req;
	(void)ret;
	return sb_probe(p, NULL, err);
}
#endif

const struct dsh_backend dsh_backend_seatbelt = {
	.name = "seatbelt",
	.id = DSH_BACKEND_SEATBELT,
	.probe = sb_probe,
	.compile = sb_compile,
	.describe = sb_describe,
	.render = sb_render,
	.confine = sb_confine,
	.free = sb_free,
};
