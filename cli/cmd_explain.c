/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "dshbox/backend.h"

static const char usage[] =
	"Usage: dshbox explain [POLICY OPTIONS] [--json] [--all-backends] [--profile]\n"
	"\n"
	"Show the effective policy: the mode, the workspace, the environment, the writable roots, every\n"
	"rule as written and as resolved, what the backend a run would use enforces of each rule, and\n"
	"every load-time warning.  With --backend B that backend is described instead.\n"
	"\n"
	"  --json          one JSON object instead of text\n"
	"  --all-backends  describe every backend built in, not only the one that would run\n"
	"  --profile       print the chosen backend's generated profile or plan (needs --backend)\n"
	"  -h, --help      show this help\n"
	"\n" CLI_POLICY_HELP;

enum { OPT_JSON = 1, OPT_PROFILE, OPT_ALL_BACKENDS };

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* What one backend does with each rule, or why it cannot say. */
static json_t *describe_backend(const struct dsh_policy *p, const struct dsh_run_options *ro,
				const struct dsh_backend *b, json_t *rules, json_t *warnings)
{
	json_t *o = json_pack("{s:s}", "name", b->name);
	if (!b->describe || !b->compile) {
		json_object_set_new(o, "available", json_false());
		json_object_set_new(o, "reason", json_string("not available in this build"));
		return o;
	}
	/* A description is of a compiled plan, the one a run would apply. */
	struct dsh_description d = { 0 };
	_cleanup_error_ struct dsh_error *err = NULL;
	void *plan = NULL;
	int r = b->compile(p, ro, &plan, &err);
	if (r >= 0)
		r = b->describe(p, plan, &d, &err);
	if (b->free)
		b->free(plan);
	if (r < 0) {
		json_object_set_new(o, "available", json_false());
		json_object_set_new(o, "reason", json_string(err && err->msg ? err->msg : "describe failed"));
		return o;
	}
	json_object_set_new(o, "available", json_true());
	json_object_set_new(o, "enforcement", json_string(dsh_enforcement_to_string(d.overall)));
	json_object_set_new(o, "notes", strv_json(d.notes));
	json_object_set_new(o, "denialSignatures", strv_json(d.denial_signatures));
	for (size_t i = 0; i < d.n_rules && i < json_array_size(rules); i++) {
		json_t *per = json_object_get(json_array_get(rules, i), "backends");
		json_object_set_new(per, b->name,
				    json_pack("{s:s, s:s?, s:s?}", "enforcement",
					      dsh_enforcement_to_string(d.rules[i].level), "how", d.rules[i].how,
					      "lost", d.rules[i].lost));
	}
	for (size_t i = 0; d.warnings && d.warnings[i]; i++)
		json_array_append_new(warnings, json_sprintf("%s: %s", b->name, d.warnings[i]));
	dsh_description_clear(&d);
	return o;
}

static const char *rule_text(const struct dsh_rule *r)
{
	return r ? dsh_rule_text(r) : NULL;
}

/*
 * only: the backend a run would use, described (with all: every backend is); NULL when none could be
 * chosen, and why is in unavailable.
 */
static json_t *explain_json(const struct dsh_policy *p, const struct dsh_run_options *ro,
			    const struct dsh_backend *only, bool all, const struct dsh_error *unavailable)
{
	json_t *roots = json_array(), *rules = json_array(), *backends = json_array();
	json_t *warnings = strv_json(dsh_policy_warnings(p));
	for (size_t i = 0; i < dsh_policy_root_count(p); i++) {
		const struct dsh_root *r = dsh_policy_root(p, i);
		json_array_append_new(roots, json_pack("{s:s, s:s, s:s?, s:s?, s:s?}", "path", dsh_root_path(r),
						       "origin", dsh_root_origin_name(r), "rule", rule_text(dsh_root_rule(r)),
						       "deadBy", rule_text(dsh_root_dead_by(r)), "readOnlyBy",
						       rule_text(dsh_root_readonly_by(r))));
	}
	for (size_t i = 0; i < dsh_policy_rule_count(p); i++) {
		const struct dsh_rule *r = dsh_policy_rule(p, i);
		json_t *regexes = json_array();
		const char *rx;
		for (size_t j = 0; (rx = dsh_rule_regex(r, j)); j++)
			json_array_append_new(regexes, json_string(rx));
		json_array_append_new(rules, json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:o, s:{}}", "rule", dsh_rule_text(r),
						       "kind", dsh_rule_kind_to_string(dsh_rule_kind(r)), "origin",
						       dsh_rule_origin_to_string(dsh_rule_origin(r)), "resolved",
						       dsh_rule_resolved(r), "canonical", dsh_rule_canonical(r), "glob",
						       dsh_rule_is_glob(r), "regex", regexes, "backends"));
	}
	const struct dsh_backend *const *list = dsh_backend_list();
	for (size_t i = 0; list[i]; i++)
		if (all || list[i] == only)
			json_array_append_new(backends, describe_backend(p, ro, list[i], rules, warnings));
	/* SPEC 1.7: the names `run` would not pass on, never their values. */
	json_t *environment = json_pack("{s:s, s:o}", "inherit", dsh_env_inherit_to_string(ro->env_inherit), "removed",
					strv_json(ro->env_removed));
	/* "backend": what a run would use (null when nothing can enforce the policy here, with why). */
	json_t *chosen = only ? json_string(only->name) : json_null();
	json_t *e = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "mode",
			      dsh_mode_to_string(dsh_policy_mode(p)), "workspace", dsh_policy_workspace(p), "cwd",
			      dsh_policy_cwd(p), "tmpdir", dsh_policy_tmpdir(p), "network", ro->network ? "on" : "off",
			      "environment", environment, "backend", chosen, "writableRoots", roots, "rules", rules,
			      "backends", backends, "warnings", warnings);
	if (e && unavailable)
		json_object_set_new(e, "backendUnavailable",
				    json_pack("{s:s, s:s?}", "reason", unavailable->msg ? unavailable->msg : "",
					      "hint", unavailable->hint));
	return e;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void print_rule(size_t i, json_t *v)
{
	printf("  %zu. %s%s%s%s\n     resolved:  %s\n", i + 1, str(v, "rule"),
	       strcmp(str(v, "origin"), "user") ? "  (" : "", strcmp(str(v, "origin"), "user") ? str(v, "origin") : "",
	       strcmp(str(v, "origin"), "user") ? ")" : "", str(v, "resolved"));
	if (strcmp(str(v, "resolved"), str(v, "canonical")) != 0)
		printf("     canonical: %s (both spellings are covered)\n", str(v, "canonical"));
	size_t j;
	json_t *rx;
	json_array_foreach(json_object_get(v, "regex"), j, rx) printf("     regex:     %s\n", json_string_value(rx));
	const char *name;
	json_t *per;
	json_object_foreach(json_object_get(v, "backends"), name, per) {
		printf("     %-9s  %-7s %s", name, str(per, "enforcement"), str(per, "how"));
		if (json_is_string(json_object_get(per, "lost")))
			printf(" (lost: %s)", str(per, "lost"));
		printf("\n");
	}
}

/*
 * The writable root (its "path" string in e) whose default-protected name rule v is, when every
 * backend described enforces it in full and it is spelled canonically; else NULL.
 */
static const char *default_root(json_t *e, json_t *v)
{
	if (strcmp(str(v, "origin"), "protected by default") != 0 || strcmp(str(v, "resolved"), str(v, "canonical")) != 0)
		return NULL;
	const char *name;
	json_t *per;
	json_object_foreach(json_object_get(v, "backends"), name, per) if (strcmp(str(per, "enforcement"), "full") != 0)
		return NULL;
	const char *best = NULL;
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(e, "writableRoots"), i, r) {
		const char *root = str(r, "path");
		size_t n = strlen(root);
		const char *path = str(v, "resolved");
		bool beneath = strcmp(root, "/") == 0 ? path[0] == '/' && path[1]
						       : strncmp(path, root, n) == 0 && path[n] == '/';
		if (beneath && (!best || strlen(best) < n))
			best = root;
	}
	return best;
}

static void print_text(json_t *e)
{
	size_t i;
	json_t *v;
	printf("mode:       %s\nworkspace:  %s\ncwd:        %s\nnetwork:    %s\n", str(e, "mode"),
	       str(e, "workspace"), str(e, "cwd"), str(e, "network"));
	if (json_is_string(json_object_get(e, "tmpdir")))
		printf("TMPDIR:     %s\n", str(e, "tmpdir"));
	json_t *env = json_object_get(e, "environment");
	printf("env:        inherit %s", str(env, "inherit"));
	if (json_array_size(json_object_get(env, "removed")) > 0) {
		printf("; not passed on:");
		json_array_foreach(json_object_get(env, "removed"), i, v) printf(" %s", json_string_value(v));
	}
	printf("\n");
	printf("\nwritable roots:\n");
	if (json_array_size(json_object_get(e, "writableRoots")) == 0)
		printf("  (none)\n");
	json_array_foreach(json_object_get(e, "writableRoots"), i, v) {
		printf("  %s  (%s%s%s)", str(v, "path"), str(v, "origin"), json_is_string(json_object_get(v, "rule")) ? " " : "",
		       json_is_string(json_object_get(v, "rule")) ? str(v, "rule") : "");
		if (json_is_string(json_object_get(v, "deadBy")))
			printf("  dead: inside \"%s\"", str(v, "deadBy"));
		else if (json_is_string(json_object_get(v, "readOnlyBy")))
			printf("  read-only: inside \"%s\"", str(v, "readOnlyBy"));
		printf("\n");
	}
	printf("\nrules:\n");
	if (json_array_size(json_object_get(e, "rules")) == 0)
		printf("  (none: the mode's own semantics)\n");
	bool folded = false;
	size_t shown = 0; /* numbered as printed: the folded defaults leave no gap (1-4, then 5) */
	json_array_foreach(json_object_get(e, "rules"), i, v) {
		if (default_root(e, v)) {
			folded = true;
			continue;
		}
		print_rule(shown++, v);
	}
	/*
	 * SPEC 1.6's defaults are a dozen names in every writable root: one line per root when what is
	 * described enforces them in full (print_rule otherwise, as any rule).  The JSON has each.
	 */
	if (folded) {
		printf("  protected by default (r-; protectDefaults: false turns them off), enforced in full:\n");
		json_array_foreach(json_object_get(e, "writableRoots"), i, v) {
			const char *root = str(v, "path");
			size_t j, n = 0;
			json_t *r;
			json_array_foreach(json_object_get(e, "rules"), j, r) {
				if (default_root(e, r) != root)
					continue;
				const char *name = str(r, "resolved") + strlen(root) + (strcmp(root, "/") != 0);
				if (n++ == 0)
					printf("     %s: %s", root, name);
				else
					printf(" %s", name);
			}
			if (n)
				printf("\n");
		}
	}
	json_t *none = json_object_get(e, "backendUnavailable");
	if (json_array_size(json_object_get(e, "backends")) > 1)
		printf("\nbackends:\n");
	else
		printf("\nbackend:\n");
	if (none) {
		printf("  none can enforce this policy here: %s\n", str(none, "reason"));
		if (json_is_string(json_object_get(none, "hint")))
			printf("  hint: %s\n", str(none, "hint"));
	}
	json_array_foreach(json_object_get(e, "backends"), i, v) {
		if (json_is_true(json_object_get(v, "available")))
			printf("  %-9s  enforcement %s\n", str(v, "name"), str(v, "enforcement"));
		else
			printf("  %-9s  %s\n", str(v, "name"), str(v, "reason"));
		size_t j;
		json_t *n;
		json_array_foreach(json_object_get(v, "notes"), j, n) printf("             note: %s\n", json_string_value(n));
	}
	printf("\nwarnings:\n");
	if (json_array_size(json_object_get(e, "warnings")) == 0)
		printf("  (none)\n");
	json_array_foreach(json_object_get(e, "warnings"), i, v) printf("  %s\n", json_string_value(v));
	if (json_array_size(json_object_get(e, "backends")) <= 1)
		printf("\n(what a run would use; --all-backends describes every backend)\n");
}

static int print_profile(const struct dsh_policy *p, const struct dsh_run_options *ro, const struct dsh_backend *b)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	void *plan = NULL;
	_cleanup_free_ char *text = NULL;
	if (!b->compile || !b->render) {
		dsh_err(&err, DSH_ERR_UNSUPPORTED, ENOTSUP, "backend '%s' has no profile to print", b->name);
		return cli_fail(err);
	}
	if (b->compile(p, ro, &plan, &err) < 0)
		return cli_fail(err);
	int r = b->render(p, plan, &text, &err);
	if (b->free)
		b->free(plan);
	if (r < 0)
		return cli_fail(err);
	fputs(text, stdout);
	return 0;
}

int cmd_explain(int argc, char **argv, char **envp)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "profile", no_argument, NULL, OPT_PROFILE },
		{ "all-backends", no_argument, NULL, OPT_ALL_BACKENDS },
		{ "help", no_argument, NULL, 'h' },
		CLI_POLICY_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli_policy_opts po = { 0 };
	bool json = false, profile = false, all = false;
	int c, ret = DSH_EXIT_FAILURE;
	/* Declared before the first jump to out, where its cleanup runs. */
	_cleanup_error_ struct dsh_error *unavailable = NULL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c >= CLI_OPT_POLICY_BASE && c < CLI_OPT_POLICY_END) {
			if (cli_policy_option(&po, c, optarg, "explain"))
				goto out;
			continue;
		}
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_PROFILE:
			profile = true;
			break;
		case OPT_ALL_BACKENDS:
			all = true;
			break;
		case 'h':
			fputs(usage, stdout);
			ret = 0;
			goto out;
		default:
			cli_usage_error("explain", "unknown or incomplete option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind < argc) {
		cli_usage_error("explain", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (profile && (!po.have_backend || po.backend == DSH_BACKEND_AUTO)) {
		cli_usage_error("explain", "--profile needs --backend NAME");
		goto out;
	}

	struct dsh_config cfg;
	struct dsh_policy *p = NULL;
	struct dsh_run_options ro;
	if (cli_policy_load(&po, envp, &cfg, &p, &ro)) {
		dsh_config_clear(&cfg);
		goto out;
	}
	/*
	 * Issue 12: the full table ran to ~110 lines of warnings about backends not in use.  By default
	 * describe what a run would use (--backend B, or what auto selects here); --all-backends for
	 * every backend built in.
	 */
	const struct dsh_backend *only = NULL;
	if (po.have_backend && po.backend != DSH_BACKEND_AUTO)
		only = dsh_backend_get(po.backend);
	else if (!profile && dsh_backend_select(p, &ro, &only, &unavailable) < 0)
		only = NULL;
	if (profile) {
		ret = print_profile(p, &ro, only);
	} else {
		json_t *e = explain_json(p, &ro, only, all, unavailable);
		if (json) {
			json_dumpf(e, stdout, JSON_INDENT(2));
			fputc('\n', stdout);
		} else {
			print_text(e);
		}
		json_decref(e);
		ret = 0;
	}
	dsh_policy_free(p);
	dsh_run_options_clear(&ro);
	dsh_config_clear(&cfg);
out:
	cli_policy_opts_clear(&po);
	if (fflush(stdout) != 0 && ret == 0) {
		fputs("dshbox: error: cannot write to stdout\n", stderr);
		ret = DSH_EXIT_FAILURE;
	}
	return ret;
}
