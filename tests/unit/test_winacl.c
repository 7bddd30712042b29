/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Windows ACL plan, tested on Linux: which SIDs restrict the token, which allow and deny ACEs
 * land on which paths, per mode and rule; and what describe() admits.  The Windows runner that
 * applies the plan (winacl/runner_win.c) is built by `make windows` and not run here.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/winpath.h"
#include "supervisor/backends.h"
#include "tests/unit/test_backend_fixture.h"
#include "winacl/compile.h"
#include "winacl/plan.h"

static char *plan_text(const struct dsh_policy *p)
{
	char *text = NULL;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_backend_winacl.render(p, NULL, &text, &e), 0, "%s", e ? e->msg : "");
	return text;
}

Test(winacl, workspace_write_no_rules)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
	fx_root(&p, "/tmp", DSH_ROOT_TMP);
	fx_root(&p, "/ws", DSH_ROOT_WORKSPACE);
	char *t = plan_text(&p);
	cr_expect_str_eq(t, "token: write-restricted; restricting SIDs: sandbox logon\n"
			    "allow sandbox write,delete inherit \"/tmp\"  # writable root (/tmp)\n"
			    "allow sandbox write,delete inherit \"/ws\"  # writable root (workspace)\n");
	free(t);
	fx_clear(&p);
}

Test(winacl, read_only_grants_nothing)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_READ_ONLY, "/ws");
	fx_literal(&p, DSH_RULE_RW, "rw /opt/x", "/opt/x", NULL);
	char *t = plan_text(&p);
	cr_expect_str_eq(t, "token: write-restricted; restricting SIDs: sandbox logon\n");
	free(t);
	fx_clear(&p);
}

Test(winacl, danger)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_DANGER_FULL_ACCESS, "/ws");
	fx_root(&p, "/", DSH_ROOT_WORKSPACE);
	char *t = plan_text(&p);
	cr_expect_str_eq(t, "token: unchanged (danger-full-access without r-/-- rules)\n");
	free(t);
	fx_literal(&p, DSH_RULE_RO, "r- /etc", "/etc", NULL);
	t = plan_text(&p);
	cr_expect_str_eq(t, "token: write-restricted; restricting SIDs: sandbox logon user\n"
			    "deny  sandbox write,delete inherit \"/etc\"  # rule \"r- /etc\"\n");
	free(t);
	fx_clear(&p);
}

Test(winacl, rules_and_precedence)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
	fx_root(&p, "/home/u/.local/share/app", DSH_ROOT_RULE);
	fx_root(&p, "/ws", DSH_ROOT_WORKSPACE);
	fx_literal(&p, DSH_RULE_RW, "rw /home/u/.local/share/app", "/home/u/.local/share/app", NULL);
	fx_literal(&p, DSH_RULE_RO, "r- /home/u/.local/share", "/home/u/.local/share", NULL);
	fx_literal(&p, DSH_RULE_RO, "r- .git/hooks", "/ws/.git/hooks", NULL);
	fx_literal(&p, DSH_RULE_DENY, "-- link/.env", "/srv/.env", "/ws/link/.env");
	fx_glob(&p, DSH_RULE_DENY, "-- **/*.pem", "/ws/**/*.pem", "^/ws/(.*/)?[^/]*\\.pem(/.*)?$");
	char *t = plan_text(&p);
	cr_expect_str_eq(t, "token: write-restricted; restricting SIDs: sandbox logon\n"
			    "deny  sandbox write,delete inherit \"/home/u/.local/share\"  # rule \"r- /home/u/.local/share\"\n"
			    "deny  sandbox write,delete inherit \"/srv/.env\"  # rule \"-- link/.env\"\n"
			    "allow sandbox write,delete inherit \"/ws\"  # writable root (workspace)\n"
			    "deny  sandbox write,delete inherit \"/ws/.git/hooks\"  # rule \"r- .git/hooks\"\n"
			    "deny  sandbox write,delete inherit \"/ws/link/.env\"  # rule \"-- link/.env\"\n"
			    "refuse: rule 5 is a glob (the Windows runner expands none)\n"
			    "note: writable root /home/u/.local/share/app (rw rule) is not granted: rule \"r- "
			    "/home/u/.local/share\" covers it\n");
	free(t);

	struct dsh_description d;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_backend_winacl.describe(&p, NULL, &d, &e), 0);
	cr_assert_eq(d.n_rules, 5);
	cr_expect_eq(d.rules[0].level, DSH_ENFORCE_FULL);
	cr_expect_eq(d.rules[1].level, DSH_ENFORCE_FULL);
	cr_expect_eq(d.rules[2].level, DSH_ENFORCE_FULL);
	cr_expect_eq(d.rules[3].level, DSH_ENFORCE_PARTIAL);
	cr_expect_eq(d.rules[4].level, DSH_ENFORCE_PARTIAL);
	cr_expect_eq(d.overall, DSH_ENFORCE_PARTIAL);
	cr_assert_eq(dsh_strv_len(d.warnings), 2);
	cr_expect(strstr(d.warnings[0], "rule \"-- link/.env\": backend winacl: degrades to read-only"), "%s",
		  d.warnings[0]);
	cr_expect(strstr(d.warnings[1], "rule \"-- **/*.pem\": backend winacl: "), "%s", d.warnings[1]);
	bool said = false;
	for (char **n = d.notes; n && *n; n++)
		said |= strstr(*n, "not run on this platform") != NULL;
	cr_expect(said);
	cr_expect(dsh_strv_contains(d.denial_signatures, "access is denied"));
	dsh_description_clear(&d);
	cr_expect_lt(dsh_backend_winacl.probe(&p, &fx_ro, &e), 0);
	cr_expect(e && e->hint);
	dsh_error_free(e);
	fx_clear(&p);
}

Test(winacl, path_beneath)
{
	cr_expect(dsh_win_path_is_beneath("C:\\Users\\U\\x", "c:\\users\\u"));
	cr_expect(dsh_win_path_is_beneath("C:\\Users\\U", "C:/Users/U/"));
	cr_expect(dsh_win_path_is_beneath("C:\\a", "C:\\"));
	cr_expect(dsh_win_path_is_beneath("/a/b", "/"));
	cr_expect(!dsh_win_path_is_beneath("C:\\Users\\U2", "C:\\Users\\U"));
	cr_expect(!dsh_win_path_is_beneath("/a-b", "/a"));
	cr_expect(!dsh_win_path_is_beneath("/a", "/a/b"));
}

Test(winacl, plan_direct_input)
{
	/* The input the Windows runner builds from its own arguments. */
	const char *const roots[] = { "C:\\ws", "C:\\Users\\u\\AppData\\Local\\Temp", NULL };
	const char *const labels[] = { "workspace", "TEMP", NULL };
	const char *const secret[] = { "C:\\WS\\Secrets", NULL };
	struct dsh_winacl_rule rules[] = { { DSH_RULE_DENY, "-- C:\\WS\\Secrets", false, secret } };
	struct dsh_winacl_input in = { DSH_MODE_WORKSPACE_WRITE, roots, labels, rules, 1 };
	struct dsh_winacl_plan plan;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_winacl_plan_build(&in, &plan, &e), 0);
	cr_assert_eq(plan.n_aces, 3);
	cr_expect_str_eq(plan.aces[0].path, "C:\\Users\\u\\AppData\\Local\\Temp");
	cr_expect_str_eq(plan.aces[1].path, "C:\\ws");
	cr_expect_eq(plan.aces[1].type, DSH_WIN_ACE_ALLOW);
	cr_expect_str_eq(plan.aces[2].path, "C:\\WS\\Secrets");
	cr_expect_eq(plan.aces[2].type, DSH_WIN_ACE_DENY);
	cr_expect_eq(plan.aces[2].access, DSH_WIN_ACCESS_WRITE | DSH_WIN_ACCESS_DELETE);
	cr_expect_eq(plan.aces[2].rule, 0);
	dsh_winacl_plan_clear(&plan);
}

/*
 * The Windows runner's whole "what to apply" step, run here (issue 9): dshbox-winrun.exe calls
 * dsh_winacl_env_for_policy() and dsh_winacl_plan_from_config() exactly so, with Windows paths in
 * the policy's spelling (/C:/ws; nothing under /C: exists on this machine, so every path resolves
 * lexically, as a missing path does on Windows).  Its old parser wanted exactly one space after
 * the prefix, expanded no {{ env.NAME }} and took an escaped wildcard for a glob.
 */
static char **runner_env(void)
{
	char *const host[] = { "USERPROFILE=C:\\Users\\u", "PATH=C:\\Windows;C:\\bin", "=C:=C:\\ws",
			       "TMPDIR=/nonsense", NULL };
	char **env = NULL;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_winacl_env_for_policy(host, "C:\\Users\\u\\AppData\\Local\\Temp\\", &env, &e), 0, "%s",
		     e ? e->msg : "");
	return env;
}

static int runner_plan(const char *const *access, struct dsh_policy **ret_policy, struct dsh_winacl_plan *ret,
		       struct dsh_error **err)
{
	struct dsh_config c;
	dsh_config_init(&c);
	c.protect_defaults = false; /* the rules written; the default names are tested in test_conformance */
	for (size_t i = 0; access[i]; i++)
		cr_assert_eq(dsh_strv_push(&c.access, access[i]), 0);
	char **env = runner_env();
	int r = dsh_winacl_plan_from_config(&c, env, "/C:/ws", DSH_WINACL_WINDOWS_PATHS, ret_policy, ret, err);
	dsh_strv_free(env);
	dsh_config_clear(&c);
	return r;
}

Test(winacl, runner_env_for_policy)
{
	char **env = runner_env();
	cr_expect_str_eq(dsh_env_get(env, "USERPROFILE"), "/C:/Users/u");
	cr_expect_str_eq(dsh_env_get(env, "PATH"), "C:\\Windows;C:\\bin");
	cr_expect_str_eq(dsh_env_get(env, "TMPDIR"), "/C:/Users/u/AppData/Local/Temp");
	cr_expect_eq(dsh_strv_len(env), 3, "the per-drive '=C:' entry is not a name");
	dsh_strv_free(env);
}

Test(winacl, runner_applies_the_plan_explain_prints)
{
	const char *const access[] = {
		"rw  /C:/data/out",               /* two spaces after the prefix */
		"r- {{ env.USERPROFILE }}/.ssh",  /* expanded from the (mapped) environment */
		"-- secret\\*name",               /* an escaped '*': a literal, not a glob */
		"r-\tbuild\\[1]",                 /* a tab, and an escaped class: literal "build[1]" */
		"-- **/*.pem",                    /* a real glob: refused by the runner */
		NULL,
	};
	struct dsh_policy *p = NULL;
	struct dsh_winacl_plan plan;
	struct dsh_error *e = NULL;
	cr_assert_eq(runner_plan(access, &p, &plan, &e), 0, "%s", e ? e->msg : "");

	char *t = dsh_winacl_plan_render(&plan);
	cr_expect_str_eq(t, "token: write-restricted; restricting SIDs: sandbox logon\n"
			    "allow sandbox write,delete inherit \"C:\\data\\out\"  # writable root (rw rule)\n"
			    "deny  sandbox write,delete inherit \"C:\\Users\\u\\.ssh\"  # rule \"r- {{ env.USERPROFILE }}/.ssh\"\n"
			    "allow sandbox write,delete inherit \"C:\\Users\\u\\AppData\\Local\\Temp\"  # writable root ($TMPDIR)\n"
			    "allow sandbox write,delete inherit \"C:\\ws\"  # writable root (workspace)\n"
			    "deny  sandbox write,delete inherit \"C:\\ws\\build[1]\"  # rule \"r-\tbuild\\[1]\"\n"
			    "deny  sandbox write,delete inherit \"C:\\ws\\secret*name\"  # rule \"-- secret\\*name\"\n"
			    "refuse: rule 5 is a glob (the Windows runner expands none)\n"
			    "note: writable root /tmp is not granted: Windows has no /tmp (%TEMP% is granted as $TMPDIR)\n");
	free(t);

	/* What explain prints for the same policy: ACE for ACE the same, in the policy's spelling. */
	struct dsh_winacl_plan *explained = NULL;
	cr_assert_eq(dsh_backend_winacl.compile(p, NULL, (void **)&explained, &e), 0, "%s", e ? e->msg : "");
	size_t k = 0;
	for (size_t i = 0; i < explained->n_aces; i++) {
		const struct dsh_win_ace *x = &explained->aces[i];
		if (strcmp(x->path, "/tmp") == 0)
			continue; /* the one root Windows does not have, noted above */
		cr_assert_lt(k, plan.n_aces);
		const struct dsh_win_ace *w = &plan.aces[k++];
		char *back = NULL;
		cr_assert_eq(dsh_win_path_to_policy(w->path, &back, NULL), 0);
		cr_expect_str_eq(back, x->path);
		cr_expect_eq(w->type, x->type);
		cr_expect_eq(w->rule, x->rule);
		cr_expect_eq(w->access, x->access);
		cr_expect_str_eq(w->why, x->why);
		free(back);
	}
	cr_expect_eq(k, plan.n_aces);
	cr_assert_eq(explained->n_rules, plan.n_rules);
	for (size_t i = 0; i < plan.n_rules; i++)
		cr_expect_eq(explained->refuse[i], plan.refuse[i], "rule %zu", i + 1);
	dsh_backend_winacl.free(explained);

	/* The glob refuses the run, naming the rule. */
	cr_expect_lt(dsh_winacl_plan_refusal(p, &plan, &e), 0);
	cr_expect(e && strstr(e->msg, "rule \"-- **/*.pem\": a glob cannot be expressed"), "%s", e ? e->msg : "");
	dsh_error_free(e);
	dsh_winacl_plan_clear(&plan);
	dsh_policy_free(p);
}

Test(winacl, runner_refuses_what_it_cannot_name)
{
	static const struct {
		const char *rule, *why;
	} cases[] = {
		{ "r- C:\\Users\\u", "a ':' after the drive" },   /* read as relative to the workspace */
		{ "r- /etc/hosts", "names no Windows drive" },
		{ "rw /C:/data\\out", "a '\\' that is not a glob escape" },
		{ "-- /C:/ws/sub\\dir", "a '\\' that is not a glob escape" },
		{ "-- /C:/ws/file.txt:stream", "a ':' after the drive" },
		{ "r- %USERPROFILE%/.ssh", "%NAME% is not expanded" },
		{ "rw {{ env.NOPE }}/x", "NOPE is not set" },       /* the policy's own errors, unchanged */
		{ "rw /C:/ws/*", "must be concrete" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *const access[] = { cases[i].rule, NULL };
		struct dsh_policy *p = NULL;
		struct dsh_winacl_plan plan;
		struct dsh_error *e = NULL;
		cr_expect_lt(runner_plan(access, &p, &plan, &e), 0, "%s", cases[i].rule);
		cr_expect(e && strstr(e->msg, cases[i].why), "%s: %s", cases[i].rule, e ? e->msg : "(no error)");
		cr_expect(e && strstr(e->msg, cases[i].rule), "%s: names the rule: %s", cases[i].rule, e ? e->msg : "");
		dsh_error_free(e);
	}
}

Test(winacl, windows_path_spelling)
{
	static const struct {
		const char *win, *policy;
	} ok[] = {
		{ "C:\\a\\b", "/C:/a/b" },   { "c:/a/b/", "/C:/a/b" },     { "C:\\", "/C:" },
		{ "\\\\?\\D:\\x", "/D:/x" }, { "sub\\dir", "sub/dir" },    { "C:", "/C:" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		char *s = NULL;
		cr_assert_eq(dsh_win_path_to_policy(ok[i].win, &s, NULL), 0, "%s", ok[i].win);
		cr_expect_str_eq(s, ok[i].policy, "%s", ok[i].win);
		free(s);
	}
	const char *const bad[] = { "\\\\server\\share", "\\\\?\\UNC\\server\\share", "C:x", "\\x", "/x" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *s = NULL;
		struct dsh_error *e = NULL;
		cr_expect_lt(dsh_win_path_to_policy(bad[i], &s, &e), 0, "%s", bad[i]);
		cr_expect(e != NULL);
		dsh_error_free(e);
	}
	char *w = NULL;
	cr_assert_eq(dsh_win_path_from_policy("/C:/a/b", &w), 0);
	cr_expect_str_eq(w, "C:\\a\\b");
	free(w);
	cr_assert_eq(dsh_win_path_from_policy("/c:", &w), 0);
	cr_expect_str_eq(w, "C:\\");
	free(w);
	cr_expect_eq(dsh_win_path_from_policy("/tmp", &w), -EINVAL);
	cr_expect_eq(dsh_win_path_from_policy("/", &w), -EINVAL);
	cr_expect_eq(dsh_win_path_from_policy("/C:x", &w), -EINVAL);
}
