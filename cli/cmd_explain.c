/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "policy/netpolicy.h"
#include "supervisor/select.h"
#include "common/cleanup.h"
#include "common/strbuf.h"
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

/* One backend, described once; the JSON and the text are both rendered from it. */
struct described {
	const struct dsh_backend *b;
	bool available;
	char *reason; /* why not, when !available */
	struct dsh_description d;
};

static void described_clear(struct described *x)
{
	free(x->reason);
	dsh_description_clear(&x->d);
}

/* What one backend does with each rule, or why it cannot say. */
static void describe_backend(const struct dsh_policy *p, const struct dsh_run_options *ro,
			     const struct dsh_backend *b, struct described *x)
{
	*x = (struct described){ .b = b };
	if (!b->describe || !b->compile) {
		x->reason = strdup("not available in this build");
		return;
	}
	/* A description is of a compiled plan, the one a run would apply. */
	_cleanup_error_ struct dsh_error *err = NULL;
	void *plan = NULL;
	int r = b->compile(p, ro, &plan, &err);
	if (r >= 0)
		r = b->describe(p, plan, &x->d, &err);
	if (b->free)
		b->free(plan);
	if (r < 0) {
		dsh_description_clear(&x->d);
		x->reason = strdup(err && err->msg ? err->msg : "describe failed");
		return;
	}
	x->available = true;
}

static const char *rule_text(const struct dsh_rule *r)
{
	return r ? dsh_rule_text(r) : NULL;
}

/* The backends described: what a run would use, and (all) every backend built in. */
struct explained {
	const struct dsh_policy *p;
	const struct dsh_run_options *ro;
	const struct dsh_backend *only;      /* what a run would use, or NULL */
	const struct dsh_error *unavailable; /* no backend could be chosen: why */
	struct described *x;
	size_t n;
};

static json_t *backend_json(const struct described *x)
{
	json_t *o = json_pack("{s:s}", "name", x->b->name);
	if (!x->available) {
		json_object_set_new(o, "available", json_false());
		json_object_set_new(o, "reason", json_string(x->reason ? x->reason : ""));
		return o;
	}
	json_object_set_new(o, "available", json_true());
	json_object_set_new(o, "enforcement", json_string(dsh_enforcement_to_string(x->d.overall)));
	json_object_set_new(o, "notes", strv_json(x->d.notes));
	json_object_set_new(o, "denialSignatures", strv_json(x->d.denial_signatures));
	return o;
}

static json_t *rule_json(const struct explained *ex, size_t i)
{
	const struct dsh_rule *r = dsh_policy_rule(ex->p, i);
	json_t *regexes = json_array(), *per = json_object();
	const char *rx;
	for (size_t j = 0; (rx = dsh_rule_regex(r, j)); j++)
		json_array_append_new(regexes, json_string(rx));
	for (size_t k = 0; k < ex->n; k++) {
		const struct described *x = &ex->x[k];
		if (!x->available || i >= x->d.n_rules)
			continue;
		const struct dsh_rule_report *rr = &x->d.rules[i];
		json_object_set_new(per, x->b->name,
				    json_pack("{s:s, s:s?, s:s?}", "enforcement", dsh_enforcement_to_string(rr->level),
					      "how", rr->how, "lost", rr->lost));
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:o, s:o}", "rule", dsh_rule_text(r), "kind",
			 dsh_rule_kind_to_string(dsh_rule_kind(r)), "origin",
			 dsh_rule_origin_to_string(dsh_rule_origin(r)), "resolved", dsh_rule_resolved(r), "canonical",
			 dsh_rule_canonical(r), "glob", dsh_rule_is_glob(r), "regex", regexes, "backends", per);
}

/* SPEC 12.3: the network as explain names it, and a filter's patterns with where each came from. */
static const char *network_word(const struct dsh_run_options *ro)
{
	return ro->net ? "filtered" : ro->network ? "on" : "off";
}

static void print_net_filter(const struct dsh_net_policy *np)
{
	printf("\nnetwork by name (names in neither list: %s; the command's own loopback: %s):\n",
	       np->ask ? "asked of the host" : "refused", np->allow_local_binding ? "it may listen" : "no listening");
	for (int deny = 0; deny < 2; deny++) {
		const struct dsh_net_pattern *v = deny ? np->deny : np->allow;
		size_t n = deny ? np->n_deny : np->n_allow;
		for (size_t i = 0; i < n; i++) {
			char ports[16] = "80, 443";
			if (v[i].port)
				snprintf(ports, sizeof(ports), "%u", (unsigned)v[i].port);
			printf("  %s %-32s ports %-8s (%s)\n", deny ? "deny " : "allow", v[i].text, ports, v[i].origin);
		}
	}
}

static json_t *explain_json(const struct explained *ex)
{
	const struct dsh_policy *p = ex->p;
	const struct dsh_run_options *ro = ex->ro;
	json_t *roots = json_array(), *rules = json_array(), *backends = json_array();
	json_t *warnings = strv_json(dsh_policy_warnings(p));
	for (size_t i = 0; i < dsh_policy_root_count(p); i++) {
		const struct dsh_root *r = dsh_policy_root(p, i);
		json_array_append_new(roots, json_pack("{s:s, s:s, s:s?, s:s?, s:s?}", "path", dsh_root_path(r),
						       "origin", dsh_root_origin_name(r), "rule", rule_text(dsh_root_rule(r)),
						       "deadBy", rule_text(dsh_root_dead_by(r)), "readOnlyBy",
						       rule_text(dsh_root_readonly_by(r))));
	}
	/* The rules are written one by one by print_json(), not held here: 200,000 of them as one
	   tree were 750 MB. */
	for (size_t k = 0; k < ex->n; k++) {
		json_array_append_new(backends, backend_json(&ex->x[k]));
		for (size_t i = 0; ex->x[k].d.warnings && ex->x[k].d.warnings[i]; i++)
			json_array_append_new(warnings, json_sprintf("%s: %s", ex->x[k].b->name, ex->x[k].d.warnings[i]));
	}
	/* SPEC 16: what enforces the next run, and what guards it. */
	json_t *programs = json_array();
	for (size_t i = 0; i < dsh_policy_program_count(p); i++) {
		enum dsh_program_guard g;
		const char *path = dsh_policy_program(p, i, &g);
		json_array_append_new(programs, json_pack("{s:s, s:s}", "path", path, "guard", dsh_program_guard_to_string(g)));
	}
	/* SPEC 1.7: the names `run` would not pass on, never their values. */
	json_t *environment = json_pack("{s:s, s:o}", "inherit", dsh_env_inherit_to_string(ro->env_inherit), "removed",
					strv_json(ro->env_removed));
	/* "backend": what a run would use (null when nothing can enforce the policy here, with why). */
	json_t *chosen = ex->only ? json_string(ex->only->name) : json_null();
	json_t *e = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "mode",
			      dsh_mode_to_string(dsh_policy_mode(p)), "workspace", dsh_policy_workspace(p), "cwd",
			      dsh_policy_cwd(p), "tmpdir", dsh_policy_tmpdir(p), "network", network_word(ro),
			      "environment", environment, "programInUse", programs, "backend", chosen, "writableRoots", roots, "rules", rules,
			      "backends", backends, "warnings", warnings);
	if (e && ro->net)
		json_object_set_new(e, "networkFilter", dsh_net_policy_json(ro->net));
	if (e && ex->unavailable)
		json_object_set_new(e, "backendUnavailable",
				    json_pack("{s:s, s:s?}", "reason", ex->unavailable->msg ? ex->unavailable->msg : "",
					      "hint", ex->unavailable->hint));
	return e;
}

/* json_dump_callback()'s sink: the text into a buffer, each new line indented by four spaces (a
   rule's depth in the document).  Jansson hands over a token at a time: a write each was a
   seventh of the time. */
static int put_indented(const char *buf, size_t size, void *data)
{
	struct dsh_buf *out = data;
	for (const char *l = buf, *end = buf + size; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) + 1 : (size_t)(end - l);
		dsh_buf_addn(out, l, n);
		if (nl)
			dsh_buf_addn(out, "    ", 4);
		l += n;
	}
	return out->oom ? -1 : 0;
}

/*
 * The document as json_dumpf(JSON_INDENT(2)) writes it, with the rules streamed: the document is
 * dumped with an empty "rules" array, and each rule object is dumped on its own where that array
 * is.  The key is only ever at the top level, and a string in the document cannot hold an
 * unescaped quote, so its spelling there is unique.
 */
static int print_json(const struct explained *ex)
{
	static const char key[] = "\n  \"rules\": []";
	json_t *e = explain_json(ex);
	char *doc = e ? json_dumps(e, JSON_INDENT(2)) : NULL;
	json_decref(e);
	char *at = doc ? strstr(doc, key) : NULL;
	if (!at) {
		free(doc);
		return -1;
	}
	size_t n = dsh_policy_rule_count(ex->p);
	int r = 0;
	struct dsh_buf buf = { 0 };
	fwrite(doc, 1, (size_t)(at - doc) + sizeof(key) - 2, stdout); /* up to and with the '[' */
	for (size_t i = 0; i < n && r == 0; i++) {
		json_t *rule = rule_json(ex, i);
		buf.len = 0;
		dsh_buf_addn(&buf, i ? ",\n    " : "\n    ", i ? 6 : 5);
		if (!rule || json_dump_callback(rule, put_indented, &buf, JSON_INDENT(2)) < 0 || buf.oom)
			r = -1;
		else
			fwrite(buf.s, 1, buf.len, stdout);
		json_decref(rule);
	}
	free(buf.s);
	if (n)
		fputs("\n  ", stdout);
	fputs(at + sizeof(key) - 2, stdout); /* the ']' and the rest */
	fputc('\n', stdout);
	free(doc);
	return r;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/*
 * The text is written straight from the policy and the descriptions, a rule at a time: built as a
 * JSON tree first, 200,000 rules took seconds and most of a gigabyte to print (issue 24).
 */
static void print_rule(const struct explained *ex, size_t shown, size_t i)
{
	const struct dsh_rule *r = dsh_policy_rule(ex->p, i);
	bool user = dsh_rule_origin(r) == DSH_ORIGIN_USER;
	const char *resolved = dsh_rule_resolved(r), *canonical = dsh_rule_canonical(r);
	printf("  %zu. %s%s%s%s\n     resolved:  %s\n", shown + 1, dsh_rule_text(r), user ? "" : "  (",
	       user ? "" : dsh_rule_origin_to_string(dsh_rule_origin(r)), user ? "" : ")", resolved);
	if (strcmp(resolved, canonical) != 0)
		printf("     canonical: %s (both spellings are covered)\n", canonical);
	const char *rx;
	for (size_t j = 0; (rx = dsh_rule_regex(r, j)); j++)
		printf("     regex:     %s\n", rx);
	for (size_t k = 0; k < ex->n; k++) {
		const struct described *x = &ex->x[k];
		if (!x->available || i >= x->d.n_rules)
			continue;
		const struct dsh_rule_report *rr = &x->d.rules[i];
		printf("     %-9s  %-7s %s", x->b->name, dsh_enforcement_to_string(rr->level), or_empty(rr->how));
		if (rr->lost)
			printf(" (lost: %s)", rr->lost);
		printf("\n");
	}
}

/*
 * The index of the writable root whose default-protected name rule i is, when every backend
 * described enforces it in full and it is spelled canonically; else SIZE_MAX.
 */
static size_t default_root(const struct explained *ex, size_t i)
{
	const struct dsh_rule *rule = dsh_policy_rule(ex->p, i);
	const char *path = dsh_rule_resolved(rule);
	if (dsh_rule_origin(rule) != DSH_ORIGIN_DEFAULT || strcmp(path, dsh_rule_canonical(rule)) != 0)
		return SIZE_MAX;
	for (size_t k = 0; k < ex->n; k++)
		if (ex->x[k].available && i < ex->x[k].d.n_rules && ex->x[k].d.rules[i].level != DSH_ENFORCE_FULL)
			return SIZE_MAX;
	size_t best = SIZE_MAX, best_len = 0;
	for (size_t j = 0; j < dsh_policy_root_count(ex->p); j++) {
		const char *root = dsh_root_path(dsh_policy_root(ex->p, j));
		size_t n = strlen(root);
		bool beneath = strcmp(root, "/") == 0 ? path[0] == '/' && path[1]
						       : strncmp(path, root, n) == 0 && path[n] == '/';
		if (beneath && (best == SIZE_MAX || best_len < n)) {
			best = j;
			best_len = n;
		}
	}
	return best;
}

static void print_roots(const struct dsh_policy *p)
{
	printf("\nwritable roots:\n");
	if (dsh_policy_root_count(p) == 0)
		printf("  (none)\n");
	for (size_t i = 0; i < dsh_policy_root_count(p); i++) {
		const struct dsh_root *v = dsh_policy_root(p, i);
		const struct dsh_rule *rule = dsh_root_rule(v);
		printf("  %s  (%s%s%s)", dsh_root_path(v), dsh_root_origin_name(v), rule ? " " : "",
		       rule ? dsh_rule_text(rule) : "");
		if (dsh_root_dead_by(v))
			printf("  dead: inside \"%s\"", dsh_rule_text(dsh_root_dead_by(v)));
		else if (dsh_root_readonly_by(v))
			printf("  read-only: inside \"%s\"", dsh_rule_text(dsh_root_readonly_by(v)));
		printf("\n");
	}
}

/*
 * SPEC 1.6's defaults are a dozen names in every writable root: one line per root when what is
 * described enforces them in full (print_rule otherwise, as any rule).  The JSON has each.
 */
static int print_rules(const struct explained *ex)
{
	const struct dsh_policy *p = ex->p;
	size_t n_rules = dsh_policy_rule_count(p), n_roots = dsh_policy_root_count(p);
	_cleanup_free_ size_t *root_of = calloc(n_rules + 1, sizeof(*root_of));
	if (!root_of)
		return -1;
	printf("\nrules:\n");
	if (n_rules == 0)
		printf("  (none: the mode's own semantics)\n");
	bool folded = false;
	size_t shown = 0; /* numbered as printed: the folded defaults leave no gap (1-4, then 5) */
	for (size_t i = 0; i < n_rules; i++) {
		root_of[i] = default_root(ex, i);
		if (root_of[i] != SIZE_MAX)
			folded = true;
		else
			print_rule(ex, shown++, i);
	}
	if (!folded)
		return 0;
	printf("  protected by default (r-; protectDefaults: false turns them off), enforced in full:\n");
	for (size_t j = 0; j < n_roots; j++) {
		const char *root = dsh_root_path(dsh_policy_root(p, j));
		size_t n = 0, skip = strlen(root) + (strcmp(root, "/") != 0);
		for (size_t i = 0; i < n_rules; i++) {
			if (root_of[i] != j)
				continue;
			const char *name = dsh_rule_resolved(dsh_policy_rule(p, i)) + skip;
			if (n++ == 0)
				printf("     %s: %s", root, name);
			else
				printf(" %s", name);
		}
		if (n)
			printf("\n");
	}
	return 0;
}

static int print_text(const struct explained *ex)
{
	const struct dsh_policy *p = ex->p;
	const struct dsh_run_options *ro = ex->ro;
	printf("mode:       %s\nworkspace:  %s\ncwd:        %s\nnetwork:    %s\n", dsh_mode_to_string(dsh_policy_mode(p)),
	       dsh_policy_workspace(p), dsh_policy_cwd(p), network_word(ro));
	if (dsh_policy_tmpdir(p))
		printf("TMPDIR:     %s\n", dsh_policy_tmpdir(p));
	printf("env:        inherit %s", dsh_env_inherit_to_string(ro->env_inherit));
	if (ro->env_removed && ro->env_removed[0]) {
		printf("; not passed on:");
		for (size_t i = 0; ro->env_removed[i]; i++)
			printf(" %s", ro->env_removed[i]);
	}
	printf("\n");
	for (size_t i = 0; i < dsh_policy_program_count(p); i++) {
		enum dsh_program_guard g;
		const char *path = dsh_policy_program(p, i, &g);
		static const char *const why[] = {
			[DSH_PROGRAM_PROTECTED] = "r- for the run: program in use",
			[DSH_PROGRAM_OUTSIDE] = "read-only: outside every writable root",
			[DSH_PROGRAM_UNPROTECTED] = "writable: not protected in this mode or with protectDefaults: false",
		};
		printf("%s%s  (%s)\n", i ? "            " : "program:    ", path, why[g]);
	}
	print_roots(p);
	if (ro->net)
		print_net_filter(ro->net);
	if (print_rules(ex) < 0)
		return -1;
	printf(ex->n > 1 ? "\nbackends:\n" : "\nbackend:\n");
	if (ex->unavailable) {
		printf("  none can enforce this policy here: %s\n", or_empty(ex->unavailable->msg));
		if (ex->unavailable->hint)
			printf("  hint: %s\n", ex->unavailable->hint);
	}
	for (size_t k = 0; k < ex->n; k++) {
		const struct described *x = &ex->x[k];
		if (x->available)
			printf("  %-9s  enforcement %s\n", x->b->name, dsh_enforcement_to_string(x->d.overall));
		else
			printf("  %-9s  %s\n", x->b->name, or_empty(x->reason));
		for (size_t j = 0; x->available && x->d.notes && x->d.notes[j]; j++)
			printf("             note: %s\n", x->d.notes[j]);
	}
	printf("\nwarnings:\n");
	char *const *w = dsh_policy_warnings(p);
	bool any = w[0] != NULL;
	for (size_t i = 0; w[i]; i++)
		printf("  %s\n", w[i]);
	for (size_t k = 0; k < ex->n; k++)
		for (size_t i = 0; ex->x[k].d.warnings && ex->x[k].d.warnings[i]; i++, any = true)
			printf("  %s: %s\n", ex->x[k].b->name, ex->x[k].d.warnings[i]);
	if (!any)
		printf("  (none)\n");
	if (ex->n <= 1)
		printf("\n(what a run would use; --all-backends describes every backend)\n");
	return 0;
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

/* only: the backend a run would use, described (with all: every backend is); NULL when none could be
   chosen, and why is in unavailable. */
static int explain(const struct dsh_policy *p, const struct dsh_run_options *ro, const struct dsh_backend *only,
		   bool all, const struct dsh_error *unavailable, bool json)
{
	const struct dsh_backend *const *list = dsh_backend_list();
	size_t n = 0;
	while (list[n])
		n++;
	struct explained ex = { .p = p, .ro = ro, .only = only, .unavailable = unavailable,
				.x = calloc(n + 1, sizeof(*ex.x)) };
	if (!ex.x) {
		fputs("dshbox: error: out of memory\n", stderr);
		return DSH_EXIT_FAILURE;
	}
	for (size_t i = 0; list[i]; i++)
		if (all || list[i] == only)
			describe_backend(p, ro, list[i], &ex.x[ex.n++]);
	int r = 0;
	if (json) {
		r = print_json(&ex);
	} else {
		r = print_text(&ex);
	}
	for (size_t i = 0; i < ex.n; i++)
		described_clear(&ex.x[i]);
	free(ex.x);
	if (r < 0) {
		fputs("dshbox: error: out of memory\n", stderr);
		return DSH_EXIT_FAILURE;
	}
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
		ret = explain(p, &ro, only, all, unavailable, json);
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
