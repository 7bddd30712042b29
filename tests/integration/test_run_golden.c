/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Golden `dshbox run --dry-run` plans (STYLE 14) for representative policies, the scratch path
 * replaced by @SCRATCH@.  Golden files change only on purpose: DSHBOX_UPDATE_GOLDEN=1 rewrites them.
 * Also the --report JSON (SPEC 2).
 */
#include <jansson.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/bin:/bin", NULL };

static char *replace_all(const char *s, const char *from, const char *to)
{
	struct dsh_buf b = { 0 };
	size_t fl = strlen(from);
	for (const char *p = s; *p;) {
		const char *m = strstr(p, from);
		if (!m) {
			dsh_buf_add(&b, p);
			break;
		}
		dsh_buf_addn(&b, p, (size_t)(m - p));
		dsh_buf_add(&b, to);
		p = m + fl;
	}
	char *r = dsh_buf_steal(&b);
	return r ? r : strdup("");
}

/* Root's kept capabilities (test_root_foreign.c) are the caller's, not the policy's: the same
   goldens hold for root and for a user. */
static void drop_caps_line(char *plan)
{
	char *l = strstr(plan, "\ncapabilities kept: ");
	if (!l)
		return;
	char *end = strchr(l + 1, '\n');
	memmove(l, end ? end : l + strlen(l), strlen(end ? end : l + strlen(l)) + 1);
}

static void make_tree(const char *root)
{
	const char *files[] = { "ws/src/main.c", "ws/id.pem", "ws/deep/er/key.pem", "ws/.git/hooks/pre-commit",
				"ws/a/node_modules/p/index.js", "ws/node_modules/q/index.js", "ws/secret/sub/k",
				"ws/mise.local.toml", "ws/a/b/f", "ws/a-b/f", "data/ro/k", "data/ro/j", "home/.ssh/id",
				"etc/conf" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = NULL;
		cr_assert(asprintf(&p, "%s/%s", root, files[i]) > 0);
		dsh_test_write_file(p, "x\n");
		free(p);
	}
	char *cfg = NULL;
	cr_assert(asprintf(&cfg, "%s/cfg.yml", root) > 0);
	dsh_test_write_file(cfg, "protectSockets: false\n");
	free(cfg);
}

struct golden_case {
	const char *name;
	const char *args[16]; /* @ at the start of an argument is replaced by the scratch root */
};

static const struct golden_case cases[] = {
	{ "default", { NULL } },
	{ "read-only", { "--mode", "read-only", "--access", "-- @/home/.ssh", "--access", "r- @/etc", NULL } },
	{ "masks-and-globs",
	  { "--access", "-- *.pem", "--access", "-- **/*.pem", "--access", "-- **/node_modules", "--access",
	    "r- .git/hooks", "--access", "-- mise.*.toml", "--access", "-- secret", "--access", "r- secret/sub", NULL } },
	{ "precedence",
	  { "--access", "rw @/data", "--access", "r- @/data/ro", "--access", "-- @/data/ro/k", "--access",
	    "rw @/home", "--access", "-- @/home/.ssh", NULL } },
	{ "component-order", { "--access", "-- a-b", "--access", "-- a/b", "--access", "r- a", NULL } },
	{ "danger-with-rules", { "--mode", "danger-full-access", "--access", "-- @/home/.ssh", "--access", "r- @/etc", NULL } },
	{ "danger-no-rules", { "--mode", "danger-full-access", NULL } },
	{ "network-off", { "--network", "off", NULL } },
};

Test(run_golden, dry_run_plans)
{
	bool update = getenv("DSHBOX_UPDATE_GOLDEN") && strcmp(getenv("DSHBOX_UPDATE_GOLDEN"), "1") == 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *root = dsh_test_mkdtemp();
		make_tree(root);
		char *argv[40];
		char *owned[40];
		int n = 0, no = 0;
		argv[n++] = (char *)dsh_test_dshbox_outside_roots();
		argv[n++] = "run";
		argv[n++] = "--dry-run";
		argv[n++] = "--backend";
		argv[n++] = "auto";
		char *cfg = NULL, *ws = NULL;
		cr_assert(asprintf(&cfg, "%s/cfg.yml", root) > 0 && asprintf(&ws, "%s/ws", root) > 0);
		argv[n++] = "--config";
		argv[n++] = owned[no++] = cfg;
		argv[n++] = "--workspace";
		argv[n++] = owned[no++] = ws;
		/* The plans are the workspace's, not the checkout's: a cwd under /tmp adds its own bind. */
		argv[n++] = "--cwd";
		argv[n++] = ws;
		for (size_t k = 0; cases[i].args[k]; k++) {
			const char *a = cases[i].args[k];
			char *at = strchr(a, '@');
			if (at) {
				char *s = NULL;
				cr_assert(asprintf(&s, "%.*s%s%s", (int)(at - a), a, root, at + 1) > 0);
				argv[n++] = owned[no++] = s;
			} else {
				argv[n++] = (char *)a;
			}
		}
		argv[n++] = "--";
		argv[n++] = "true";
		argv[n] = NULL;
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
		cr_expect_eq(r.exit_code, 0, "%s: %s", cases[i].name, r.err);
		_cleanup_free_ char *got = replace_all(r.out, root, "@SCRATCH@");
		drop_caps_line(got);
		_cleanup_free_ char *file = NULL;
		cr_assert(asprintf(&file, "%s/tests/golden/run/%s.txt", DSH_TOP, cases[i].name) > 0);
		if (update) {
			dsh_test_write_file(file, got);
		} else {
			_cleanup_free_ char *want = dsh_test_read_file(file);
			cr_expect_not_null(want, "missing golden file %s (DSHBOX_UPDATE_GOLDEN=1 writes it)", file);
			if (want)
				cr_expect_str_eq(got, want, "%s: the plan differs from %s", cases[i].name, file);
		}
		dsh_proc_clear(&r);
		for (int k = 0; k < no; k++)
			free(owned[k]);
		dsh_test_rmtree(root);
		free(root);
	}
}

/* A workspace under the host's /tmp (bound inside the private /tmp) and the daemon sockets. */
/*
 * The user's /run/user/UID is replaced when the host has it (a login session does, CI often not):
 * the plan shown without that one entry, renumbered, so the golden file holds on either host.
 */
static char *without_run_user(const char *plan)
{
	struct dsh_buf b = { 0 };
	size_t n = 0;
	bool dropped = false;
	for (const char *p = plan; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
		unsigned idx;
		int off = 0;
		if (strstr(p, "tmpfs-run-user") && strstr(p, "tmpfs-run-user") < p + len) {
			dropped = true;
		} else if (sscanf(p, "%u  %n", &idx, &off) == 1 && off > 0 && p[0] == ' ') {
			dsh_buf_addf(&b, "%3zu  %.*s", ++n, (int)(len - (size_t)off), p + off);
		} else {
			dsh_buf_addn(&b, p, len);
		}
		p += len;
	}
	char *out = dsh_buf_steal(&b);
	if (dropped && out) {
		char *m = strstr(out, "mounts: ");
		unsigned total;
		if (m && sscanf(m, "mounts: %u", &total) == 1) {
			char want[32], have[32];
			snprintf(have, sizeof(have), "mounts: %u", total);
			snprintf(want, sizeof(want), "mounts: %u", total - 1);
			char *r = replace_all(out, have, want);
			free(out);
			out = r;
		}
	}
	return out;
}

Test(run_golden, tmp_workspace_and_sockets)
{
	bool update = getenv("DSHBOX_UPDATE_GOLDEN") && strcmp(getenv("DSHBOX_UPDATE_GOLDEN"), "1") == 0;
	char tmpws[] = "/tmp/dshbox-golden.XXXXXX";
	cr_assert_not_null(mkdtemp(tmpws));
	chmod(tmpws, 0755);
	char *root = dsh_test_mkdtemp();
	_cleanup_free_ char *run = NULL, *bus = NULL, *agent = NULL, *xdg = NULL, *ssh = NULL, *pem = NULL;
	cr_assert(asprintf(&run, "%s/run", root) > 0 && asprintf(&bus, "%s/run/bus", root) > 0 &&
		  asprintf(&agent, "%s/run/gnupg/S.gpg-agent", root) > 0 && asprintf(&xdg, "XDG_RUNTIME_DIR=%s", run) > 0 &&
		  asprintf(&ssh, "SSH_AUTH_SOCK=%s/agent.sock", root) > 0 && asprintf(&pem, "%s/k.pem", tmpws) > 0);
	dsh_test_write_file(bus, "");
	dsh_test_write_file(agent, "");
	dsh_test_write_file(pem, "");
	char *sock = strchr(ssh, '=') + 1;
	dsh_test_write_file(sock, "");
	char *genv[] = { "PATH=/usr/bin:/bin", xdg, ssh, NULL };
	/* The private /tmp is tmp: private's (tmp: host, the default, binds the host's). */
	_cleanup_free_ char *cfg = NULL;
	cr_assert(asprintf(&cfg, "%s/private-tmp.yml", root) > 0);
	dsh_test_write_file(cfg, "tmp: private\n");
	char *argv[] = { (char *)dsh_test_dshbox_outside_roots(), "run", "--dry-run", "--config", cfg, "--workspace", tmpws, "--cwd", tmpws,
			 "--access", "-- *.pem", "--access", "-- /tmp/**/*.pem", "--", "true", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, genv, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	_cleanup_free_ char *a = replace_all(r.out, root, "@SCRATCH@");
	_cleanup_free_ char *b = replace_all(a, tmpws, "@TMPWS@");
	_cleanup_free_ char *got = without_run_user(b);
	drop_caps_line(got);
	_cleanup_free_ char *file = NULL;
	cr_assert(asprintf(&file, "%s/tests/golden/run/tmp-workspace-and-sockets.txt", DSH_TOP) > 0);
	if (update) {
		dsh_test_write_file(file, got);
	} else {
		_cleanup_free_ char *want = dsh_test_read_file(file);
		cr_expect_not_null(want, "missing golden file %s (DSHBOX_UPDATE_GOLDEN=1 writes it)", file);
		if (want)
			cr_expect_str_eq(got, want, "the plan differs from %s", file);
	}
	dsh_proc_clear(&r);
	unlink(pem);
	rmdir(tmpws);
	dsh_test_rmtree(root);
	free(root);
}

Test(run_golden, report_json)
{
	char *root = dsh_test_mkdtemp();
	make_tree(root);
	_cleanup_free_ char *ws = NULL, *report = NULL, *cfg = NULL;
	cr_assert(asprintf(&ws, "%s/ws", root) > 0 && asprintf(&report, "%s/report.json", root) > 0 &&
		  asprintf(&cfg, "%s/cfg.yml", root) > 0);
	char *argv[] = { (char *)dsh_test_dshbox_outside_roots(), "run", "--config", cfg, "--workspace", ws, "--access", "-- *.pem",
			 "--access", "r- .git/hooks", "--report", report, "--", "/bin/true", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.err, "");
	json_error_t je;
	json_t *o = json_load_file(report, 0, &je);
	cr_assert_not_null(o, "report is not JSON: %s", je.text);
	cr_expect_str_eq(json_string_value(json_object_get(o, "backend")), "linux-ns");
	cr_expect_str_eq(json_string_value(json_object_get(o, "enforcement")), "full");
	/* The user's rules come first; the default-protected names (SPEC 1.6) follow, marked. */
	json_t *all = json_object_get(o, "rules"), *rules = json_array(), *rv;
	size_t ri;
	json_array_foreach(all, ri, rv)
		if (strcmp(json_string_value(json_object_get(rv, "origin")), "user") == 0)
			json_array_append(rules, rv);
	cr_assert_eq(json_array_size(rules), 2);
	json_t *r0 = json_array_get(rules, 0);
	cr_expect_str_eq(json_string_value(json_object_get(r0, "rule")), "-- *.pem");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(r0, "process"), "enforcement")), "full");
	cr_expect_not_null(strstr(json_string_value(json_object_get(json_object_get(r0, "process"), "how")), "mask"));
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(r0, "file_fence"), "enforcement")), "full");
	json_t *sigs = json_object_get(o, "denial_signatures");
	cr_expect_geq(json_array_size(sigs), 2);
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(o, "runner_failure"), "exit_code")), 125);
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(o, "runner_failure"), "stderr_prefix")),
			 "dshbox: error: ");
	json_decref(rules);
	json_decref(o);
	dsh_proc_clear(&r);
	dsh_test_rmtree(root);
	free(root);
}
