/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Windows ACL plan, tested on Linux: which SIDs restrict the token, which allow and deny ACEs
 * land on which paths, per mode and rule; and what describe() admits.  The Windows runner that
 * applies the plan (winacl/runner_win.c) is built by `make windows` and not run here.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "common/strv.h"
#include "supervisor/backends.h"
#include "tests/unit/test_backend_fixture.h"
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
	cr_expect_eq(d.rules[4].level, DSH_ENFORCE_NONE);
	cr_expect_eq(d.overall, DSH_ENFORCE_NONE);
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
