/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/glob.h"
#include "policy/policy.h"
#include "policy/winpath.h"
#include "winacl/compile.h"

/* Everything the plan's input points at, owned here. */
struct wa_input {
	struct dsh_winacl_input in;
	char **roots;
	const char **labels;
	struct dsh_winacl_rule *rules;
	char ***paths;
	size_t n_rules;
	char **notes; /* said before the plan's own notes */
};

static void wa_input_clear(struct wa_input *w)
{
	for (size_t i = 0; i < w->n_rules; i++)
		dsh_strv_free(w->paths[i]);
	free(w->paths);
	free(w->rules);
	dsh_strv_free(w->roots);
	free(w->labels);
	dsh_strv_free(w->notes);
}

static int oom(struct dsh_error **err)
{
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

/* Whether a policy path names a Windows drive: "/C:" or "/C:/...". */
static bool names_drive(const char *s)
{
	return s[0] == '/' && ((s[1] >= 'A' && s[1] <= 'Z') || (s[1] >= 'a' && s[1] <= 'z')) && s[2] == ':' &&
	       (s[3] == '\0' || s[3] == '/');
}

/* Whether s holds cmd.exe's %NAME%, which nothing here expands. */
static bool has_percent_var(const char *s)
{
	for (const char *p = strchr(s, '%'); p; p = strchr(p + 1, '%')) {
		const char *e = p + 1;
		while ((*e >= 'A' && *e <= 'Z') || (*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9') || *e == '_')
			e++;
		if (e > p + 1 && *e == '%')
			return true;
	}
	return false;
}

/* Why a rule's spelling cannot be a Windows path, or NULL. */
static const char *windows_spelling_problem(const struct dsh_rule *r, const char *s)
{
	/* First: "%USERPROFILE%/.ssh" would otherwise be read as a directory of the workspace. */
	if (has_percent_var(s))
		return "%NAME% is not expanded (write {{ env.NAME }})";
	if (!names_drive(s))
		return "it names no Windows drive";
	if (strchr(s + 3, ':'))
		return "a ':' after the drive (a stream name, or a drive path written where a relative one "
		       "was read)";
	for (const char *p = s; (p = strchr(p, '\\')); p += 2) {
		/* rw paths are concrete (no escapes); elsewhere '\' may escape a wildcard only. */
		if (r->kind == DSH_RULE_RW || !p[1] || !strchr("*?[]", p[1]))
			return "a '\\' that is not a glob escape of a wildcard (Windows names hold no '\\')";
	}
	return NULL;
}

static int check_windows_rule(const struct dsh_rule *r, struct dsh_error **err)
{
	const char *why = windows_spelling_problem(r, r->resolved);
	if (!why && r->canonical)
		why = windows_spelling_problem(r, r->canonical);
	if (!why)
		return 0;
	int ret = dsh_err(err, DSH_ERR_POLICY, EINVAL, "rule \"%s\": not a path the Windows runner can name: %s",
			  r->text, why);
	dsh_err_hint(err, "write drive paths as /C:/dir/name (or {{ env.USERPROFILE }}/name), with '/' between names");
	return ret;
}

/* The path as the plan holds it: Windows's spelling for the runner, the policy's for explain. */
static int plan_path(const char *path, unsigned flags, char **ret)
{
	if (!(flags & DSH_WINACL_WINDOWS_PATHS)) {
		*ret = strdup(path);
		return *ret ? 0 : -ENOMEM;
	}
	return dsh_win_path_from_policy(path, ret);
}

static int wa_input_from_policy(const struct dsh_policy *p, unsigned flags, struct wa_input *w,
				struct dsh_error **err)
{
	bool win = flags & DSH_WINACL_WINDOWS_PATHS;
	int r;
	memset(w, 0, sizeof(*w));
	w->labels = calloc(p->n_roots + 1, sizeof(char *));
	w->rules = calloc(p->n_rules + 1, sizeof(*w->rules));
	w->paths = calloc(p->n_rules + 1, sizeof(char **));
	if (!w->labels || !w->rules || !w->paths)
		goto oom;
	w->n_rules = p->n_rules;
	size_t n = 0;
	for (size_t i = 0; i < p->n_roots; i++) {
		const struct dsh_root *root = &p->roots[i];
		if (win && root->origin == DSH_ROOT_MODE)
			continue; /* danger-full-access's "/": the plan grants no root in that mode */
		if (win && root->origin == DSH_ROOT_TMP) {
			if (dsh_strv_pushf(&w->notes, "writable root %s is not granted: Windows has no /tmp (%%TEMP%% "
					   "is granted as $TMPDIR)", root->path) < 0)
				goto oom;
			continue;
		}
		char *path = NULL;
		r = plan_path(root->path, flags, &path);
		if (r == -ENOMEM || (r >= 0 && dsh_strv_push_take(&w->roots, path) < 0))
			goto oom;
		if (r < 0) {
			wa_input_clear(w);
			return dsh_err(err, DSH_ERR_POLICY, EINVAL, "writable root %s (%s) names no Windows drive",
				       root->path, dsh_root_origin_to_string(root->origin));
		}
		w->labels[n++] = dsh_root_origin_to_string(root->origin);
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct dsh_rule *rule = &p->rules[i];
		w->rules[i].kind = rule->kind;
		w->rules[i].text = rule->text;
		/* A default-protected name of the /tmp root (SPEC 1.6): that root is not granted here. */
		if (win && rule->origin != DSH_ORIGIN_USER && !names_drive(rule->canonical))
			continue;
		if (win && (r = check_windows_rule(rule, err)) < 0) {
			wa_input_clear(w);
			return r;
		}
		w->rules[i].kind = rule->kind;
		w->rules[i].text = rule->text;
		w->rules[i].glob = rule->glob;
		if (rule->glob)
			continue;
		for (size_t j = 0; j < rule->n_match; j++) {
			const struct dsh_glob *g = &rule->match[j];
			_cleanup_free_ char *lit = g->literal ? strdup(g->literal) : dsh_glob_unescape(g->pattern);
			char *path = NULL;
			if (!lit || plan_path(lit, flags, &path) < 0)
				goto oom; /* check_windows_rule() saw that every spelling names a drive */
			/* Two spellings may differ in their escapes only ("build\[1]" as written, the
			   canonical "build\[1\]"): one path, one ACE. */
			if (dsh_strv_contains(w->paths[i], path)) {
				free(path);
				continue;
			}
			if (dsh_strv_push_take(&w->paths[i], path) < 0)
				goto oom;
		}
		w->rules[i].paths = (const char *const *)w->paths[i];
	}
	w->in.mode = p->mode;
	w->in.roots = (const char *const *)w->roots;
	w->in.root_labels = w->labels;
	w->in.rules = w->rules;
	w->in.n_rules = p->n_rules;
	return 0;
oom:
	wa_input_clear(w);
	return oom(err);
}

int dsh_winacl_plan_from_policy(const struct dsh_policy *p, unsigned flags, struct dsh_winacl_plan *ret,
				struct dsh_error **err)
{
	struct wa_input w;
	int r = wa_input_from_policy(p, flags, &w, err);
	if (r < 0)
		return r;
	struct dsh_winacl_plan plan;
	r = dsh_winacl_plan_build(&w.in, &plan, err);
	if (r < 0) {
		wa_input_clear(&w);
		return r;
	}
	/* The input's notes first: they say why a root is missing before anything else is said. */
	for (size_t i = 0; plan.notes && plan.notes[i]; i++)
		if (dsh_strv_push(&w.notes, plan.notes[i]) < 0) {
			wa_input_clear(&w);
			dsh_winacl_plan_clear(&plan);
			return oom(err);
		}
	dsh_strv_free(plan.notes);
	plan.notes = TAKE_PTR(w.notes);
	wa_input_clear(&w);
	*ret = plan;
	return 0;
}

int dsh_winacl_plan_from_config(const struct dsh_config *c, char *const *envp, const char *cwd, unsigned flags,
				struct dsh_policy **ret_policy, struct dsh_winacl_plan *ret, struct dsh_error **err)
{
	struct dsh_policy *p = NULL;
	int r = dsh_policy_new(c, envp, cwd, &p, err);
	if (r < 0)
		return r;
	r = dsh_winacl_plan_from_policy(p, flags, ret, err);
	if (r < 0) {
		dsh_policy_free(p);
		return r;
	}
	*ret_policy = p;
	return 0;
}

int dsh_winacl_plan_refusal(const struct dsh_policy *p, const struct dsh_winacl_plan *plan, struct dsh_error **err)
{
	for (size_t i = 0; i < plan->n_rules && i < p->n_rules; i++)
		if (plan->refuse[i]) {
			int r = dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP,
					"rule \"%s\": a glob cannot be expressed as an ACE; the run is refused",
					p->rules[i].text);
			dsh_err_hint(err, "list the paths the glob would match as literal rules");
			return r;
		}
	return 0;
}

/* One absolute drive path ("C:\x", "C:/x"): not a list (';'), not relative, not UNC. */
static bool is_drive_path(const char *v)
{
	return ((v[0] >= 'A' && v[0] <= 'Z') || (v[0] >= 'a' && v[0] <= 'z')) && v[1] == ':' &&
	       (v[2] == '\\' || v[2] == '/') && !strchr(v, ';');
}

int dsh_winacl_env_for_policy(char *const *envp, const char *temp_dir, char ***ret, struct dsh_error **err)
{
	_cleanup_strv_ char **out = NULL;
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		/* Windows keeps per-drive directories as "=C:=C:\dir": not a name a rule can use. */
		if (!eq || eq == envp[i] || strncmp(envp[i], "TMPDIR=", 7) == 0)
			continue;
		_cleanup_free_ char *mapped = NULL;
		if (is_drive_path(eq + 1) && dsh_win_path_to_policy(eq + 1, &mapped, NULL) == 0) {
			if (dsh_strv_pushf(&out, "%.*s=%s", (int)(eq - envp[i]), envp[i], mapped) < 0)
				return oom(err);
		} else if (dsh_strv_push(&out, envp[i]) < 0) {
			return oom(err);
		}
	}
	if (temp_dir) {
		_cleanup_free_ char *tmp = NULL;
		int r = dsh_win_path_to_policy(temp_dir, &tmp, err);
		if (r < 0) {
			dsh_err_prefix(err, "the temporary directory");
			return r;
		}
		if (dsh_strv_pushf(&out, "TMPDIR=%s", tmp) < 0)
			return oom(err);
	}
	*ret = out ? TAKE_PTR(out) : calloc(1, sizeof(char *));
	return *ret ? 0 : oom(err);
}
