/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The command's environment (SPEC 1.7).  A host's environment is full of credentials (GITHUB_TOKEN,
 * AWS_SECRET_ACCESS_KEY, ...) that a sandboxed command has no business reading: by default every
 * variable is inherited except the names that look like one.  Names are matched with '*' and '?'
 * only (portable: this file also builds for the Windows runner, which has no fnmatch).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/env.h"

static const char *const inherit_names[] = {
	[DSH_ENV_INHERIT_ALL] = "all",
	[DSH_ENV_INHERIT_CORE] = "core",
	[DSH_ENV_INHERIT_NONE] = "none",
};

const char *dsh_env_inherit_to_string(enum dsh_env_inherit i)
{
	return (size_t)i < ARRAY_SIZE(inherit_names) ? inherit_names[i] : "?";
}

int dsh_env_inherit_from_string(const char *s, enum dsh_env_inherit *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(inherit_names); i++)
		if (strcmp(s, inherit_names[i]) == 0) {
			*ret = (enum dsh_env_inherit)i;
			return 0;
		}
	return -EINVAL;
}

/* SPEC 1.7: what a program needs to find itself, its user, its terminal and its locale. */
static const char *const core_names[] = {
	"HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_*", "TERM", "TMPDIR", "TZ",
};

/* SPEC 1.7: names that hold credentials, case-insensitive. */
static const char *const default_exclude[] = { "*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", NULL };

static unsigned char fold(unsigned char c, bool ignore_case)
{
	return ignore_case && c >= 'a' && c <= 'z' ? (unsigned char)(c - 32) : c;
}

bool dsh_env_name_match(const char *pattern, const char *name, bool ignore_case)
{
	/* Iterative, with one backtrack point for the last '*': linear enough for names. */
	const char *p = pattern, *n = name, *star = NULL, *resume = NULL;
	while (*n) {
		if (*p == '*') {
			star = p++;
			resume = n;
		} else if (*p && (*p == '?' || fold((unsigned char)*p, ignore_case) == fold((unsigned char)*n, ignore_case))) {
			p++;
			n++;
		} else if (star) {
			p = star + 1;
			n = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

static bool valid_name(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '=' || (unsigned char)s[i] <= 0x20 || (unsigned char)s[i] == 0x7f)
			return false;
	return true;
}

static int validate(const struct dsh_config *c, struct dsh_error **err)
{
	if ((size_t)c->env_inherit >= ARRAY_SIZE(inherit_names))
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "env.inherit: expected all, core or none");
	for (size_t i = 0; c->env_exclude && c->env_exclude[i]; i++) {
		const char *s = c->env_exclude[i];
		if (!valid_name(s, strlen(s))) {
			int r = dsh_err(err, DSH_ERR_CONFIG, EINVAL,
					"env.exclude[%zu]: '%s' is not a name pattern (empty, or holds '=', a space or a control character)",
					i, s);
			dsh_err_hint(err, "a pattern is a variable name with * and ?, e.g. '*_TOKEN'");
			return r;
		}
	}
	for (size_t i = 0; c->env_set && c->env_set[i]; i++) {
		const char *s = c->env_set[i], *eq = strchr(s, '=');
		if (!eq || !valid_name(s, (size_t)(eq - s)))
			return dsh_err(err, DSH_ERR_CONFIG, EINVAL,
				       "env.set: '%.*s' is not a variable name (empty, or holds '=', a space or a control character)",
				       eq ? (int)(eq - s) : (int)strlen(s), s);
	}
	return 0;
}

static bool name_in(const char *name, const char *const *patterns, size_t n, bool ignore_case)
{
	for (size_t i = 0; i < n && patterns[i]; i++)
		if (dsh_env_name_match(patterns[i], name, ignore_case))
			return true;
	return false;
}

/* Whether c->env_set names the variable of entry (NAME=...). */
static bool is_set(char *const *set, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; set && set[i]; i++)
		if (strncmp(set[i], name, n) == 0 && set[i][n] == '=')
			return true;
	return false;
}

static bool kept(const struct dsh_config *c, const char *name)
{
	switch (c->env_inherit) {
	case DSH_ENV_INHERIT_NONE:
		return false;
	case DSH_ENV_INHERIT_CORE:
		if (!name_in(name, core_names, ARRAY_SIZE(core_names), false))
			return false;
		break;
	case DSH_ENV_INHERIT_ALL:
		break;
	}
	for (size_t i = 0; c->env_allow && c->env_allow[i]; i++)
		if (strcmp(c->env_allow[i], name) == 0)
			return true;
	const char *const *ex = c->env_exclude ? (const char *const *)c->env_exclude : default_exclude;
	return !name_in(name, ex, SIZE_MAX, true);
}

int dsh_env_command(const struct dsh_config *c, char *const *envp, char ***ret_env, char ***ret_removed,
		    struct dsh_error **err)
{
	int r = validate(c, err);
	if (r < 0)
		return r;
	_cleanup_strv_ char **env = calloc(1, sizeof(char *)), **removed = calloc(1, sizeof(char *));
	if (!env || !removed)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		if (!eq || eq == envp[i])
			continue; /* not a variable: nothing a program could look up */
		_cleanup_free_ char *name = strndup(envp[i], (size_t)(eq - envp[i]));
		if (!name)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		if (is_set(c->env_set, name))
			continue; /* replaced below, not removed */
		if (kept(c, name))
			r = dsh_strv_push(&env, envp[i]);
		else if (!dsh_strv_contains(removed, name))
			r = dsh_strv_push(&removed, name);
		if (r < 0)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	for (size_t i = 0; c->env_set && c->env_set[i]; i++)
		if (dsh_strv_push(&env, c->env_set[i]) < 0)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	*ret_env = TAKE_PTR(env);
	*ret_removed = TAKE_PTR(removed);
	return 0;
}
