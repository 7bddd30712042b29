/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "supervisor/backends.h"
#include "supervisor/select.h"

bool dsh_policy_has_deny_rules(const struct dsh_policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].kind != DSH_RULE_RW)
			return true;
	return false;
}

static const enum dsh_backend_id auto_order[] = { DSH_BACKEND_LINUX_NS, DSH_BACKEND_LANDLOCK };

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A probe that hung (dsh_probe_require's ETIMEDOUT), or auto's budget spent: fail closed. */
static int timed_out(const char *name, const struct dsh_error *e, long long bound, struct dsh_error **err)
{
	int r;
	if (e)
		r = dsh_err(err, DSH_ERR_SYSTEM, ETIMEDOUT, "auto: %s (probeTimeoutMs, %lld ms, bounds each probe and "
			    "auto's probing as a whole)", e->msg ? e->msg : name, bound);
	else
		r = dsh_err(err, DSH_ERR_SYSTEM, ETIMEDOUT,
			    "auto: its probes took all of probeTimeoutMs (%lld ms) before backend '%s' was probed", bound, name);
	dsh_err_hint(err, "auto fails closed rather than choose a weaker backend on a host whose kernel calls hang: "
			  "raise probeTimeoutMs if this host is slow, or choose --backend");
	return r;
}

/*
 * SPEC 12.3: a network filtered by name is enforced where the command's namespace has loopback only
 * and dshbox serves the names in it: linux-ns (supervisor/net_service.c).  The other backends
 * have no network namespace of their own and this build no broker-mediated connect(): each
 * refuses up front, so that auto passes over it and a chosen one fails at start (125), never runs
 * with less than the policy says, nor with less network than it allows without saying so.
 */
int dsh_backend_check_network(const struct dsh_backend *b, const struct dsh_run_options *o, struct dsh_error **err)
{
	if (!o->net)
		return 0;
	if (b->id == DSH_BACKEND_LINUX_NS && !o->net->allow_local_binding) {
		/* Nothing in the command's namespace tells its own listening sockets from the rest. */
		int r = dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "network: allowLocalBinding: false is not held by this "
					"build: the command's loopback is its own, and it may listen there");
		dsh_err_hint(err, "remove allowLocalBinding: false (the command's listeners are reachable only from "
				  "inside its own network namespace)");
		return r;
	}
	if (b->id == DSH_BACKEND_LINUX_NS && !(o->protect_sockets && o->runtime_broker)) {
		/* Pathname unix sockets cross network namespaces: systemd-resolved, nscd and D-Bus
		   would resolve names (and more) for the command outside the filter. */
		int r = dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "network: filtered needs protectSockets and the runtime "
					"broker: without them the host's resolver daemons answer the command through unix "
					"sockets, outside the filter");
		dsh_err_hint(err, "set protectSockets: true and runtimeBroker: true, or choose network on or off");
		return r;
	}
	if (b->id == DSH_BACKEND_LINUX_NS)
		return 0;
	int r = dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "backend '%s' cannot filter the network by name: only "
				"linux-ns serves the names (SPEC 12.2)", b->name);
	dsh_err_hint(err, "use --backend linux-ns where user namespaces are allowed, or choose network on or off");
	return r;
}

int dsh_backend_select_among(const struct dsh_policy *p, const struct dsh_run_options *o,
			     const struct dsh_backend *const *order, size_t n, const struct dsh_error *prior,
			     const struct dsh_backend **ret, struct dsh_error **err)
{
	bool danger = p->mode == DSH_MODE_DANGER_FULL_ACCESS;
	/* probeTimeoutMs bounds each probe and auto's probing as a whole (issue 24): each backend gets
	   what is left of one bound. */
	long long bound = o->probe_timeout_ms > 0 ? o->probe_timeout_ms : 5000;
	long long deadline = now_ms() + bound;
	/* Every backend's refusal goes into the one error: on a host that refuses both, the user needs
	   to see both reasons to choose a remedy.  The hint is the first backend's, the preferred one. */
	_cleanup_error_ struct dsh_error *first = NULL;
	struct dsh_buf why = { 0 };
	const char *first_hint = prior ? prior->hint : NULL;
	if (prior)
		dsh_buf_addf(&why, ": backend 'linux-ns': %s", prior->msg ? prior->msg : "refused");
	for (size_t i = 0; i < n; i++) {
		const struct dsh_backend *b = order[i];
		if (!b || !b->probe || !b->confine)
			continue;
		struct dsh_run_options left = *o; /* read by the probe only: a shallow copy */
		left.probe_timeout_ms = deadline - now_ms();
		if (left.probe_timeout_ms <= 0) {
			dsh_buf_free(&why);
			return timed_out(b->name, NULL, bound, err);
		}
		struct dsh_error *e = NULL;
		if (dsh_backend_check_network(b, o, &e) == 0 && b->probe(p, &left, &e) == 0) {
			dsh_buf_free(&why);
			*ret = b;
			return 0;
		}
		if (e && e->code == ETIMEDOUT) {
			dsh_buf_free(&why);
			int r = timed_out(b->name, e, bound, err);
			dsh_error_free(e);
			return r;
		}
		dsh_buf_addf(&why, "%s%s", why.len ? "; " : ": ", e && e->msg ? e->msg : b->name);
		if (!first)
			first = e;
		else
			dsh_error_free(e);
		if (!first_hint && first)
			first_hint = first->hint;
	}
	if (danger && !o->net) {
		dsh_buf_free(&why);
		*ret = &dsh_backend_none;
		return 0;
	}
	_cleanup_free_ char *reasons = dsh_buf_steal(&why);
	int r = dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "no backend can enforce this policy here%s",
			reasons ? reasons : "");
	dsh_err_hint(err, "%s", first_hint ? first_hint
				: "linux-ns needs Linux 5.12+ (the new mount API) with unprivileged user namespaces, "
				  "the landlock backend Linux 5.13+ with Landlock enabled; or choose --mode "
				  "danger-full-access");
	return r;
}

/*
 * auto from auto_order[from] on, each probed; prior, when set, is the refusal of an earlier backend
 * (the unprobed start of linux-ns), counted as its probe's.
 */
static int select_auto(const struct dsh_policy *p, const struct dsh_run_options *o, size_t from,
		       const struct dsh_error *prior, const struct dsh_backend **ret, struct dsh_error **err)
{
	const struct dsh_backend *order[ARRAY_SIZE(auto_order)];
	size_t n = 0;
	for (size_t i = from; i < ARRAY_SIZE(auto_order); i++)
		order[n++] = dsh_backend_get(auto_order[i]);
	return dsh_backend_select_among(p, o, order, n, prior, ret, err);
}

int dsh_backend_select(const struct dsh_policy *p, const struct dsh_run_options *o,
		       const struct dsh_backend **ret, struct dsh_error **err)
{
	bool danger = p->mode == DSH_MODE_DANGER_FULL_ACCESS;
	if (o->backend != DSH_BACKEND_AUTO) {
		const struct dsh_backend *b = dsh_backend_get(o->backend);
		if (!b)
			return dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "backend '%s' is not built into this dshbox",
				       dsh_backend_id_to_string(o->backend));
		int r = dsh_backend_check_network(b, o, err);
		if (r < 0)
			return r;
		/* linux-ns reports its own clone failure with a hint; the others say up front. */
		if (b->id != DSH_BACKEND_LINUX_NS && b->probe) {
			r = b->probe(p, o, err);
			if (r < 0)
				return r;
		}
		if (!b->confine)
			return dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "backend '%s' cannot run commands here", b->name);
		*ret = b;
		return 0;
	}
	if (danger && !dsh_policy_has_deny_rules(p) && !o->net) {
		*ret = &dsh_backend_none;
		return 0;
	}
	/* The start itself is linux-ns's probe: the same namespaces, made once (issue 14). */
	const struct dsh_backend *ln = dsh_backend_get(DSH_BACKEND_LINUX_NS);
	if (o->start_decides && ln && ln->confine && !o->net) {
		*ret = ln;
		return 0;
	}
	return select_auto(p, o, 0, NULL, ret, err);
}

int dsh_backend_fall_back(const struct dsh_policy *p, const struct dsh_run_options *o,
			  const struct dsh_backend *failed, const struct dsh_error *why,
			  const struct dsh_backend **ret, struct dsh_error **err)
{
	if (o->backend != DSH_BACKEND_AUTO || !o->start_decides || !failed || failed->id != DSH_BACKEND_LINUX_NS ||
	    !why || why->kind != DSH_ERR_UNSUPPORTED)
		return -ENOTSUP;
	return select_auto(p, o, 1, why, ret, err);
}

/* The remedy for a backend's losses: what would enforce every rule instead, then the opt-in. */
static const char *degraded_remedy(const struct dsh_run_options *o, const struct dsh_description *d)
{
	if (strcmp(d->backend, "runner") == 0)
		return NULL; /* its confine() refuses every lost rule itself (SPEC 1.5) */
	if (o->broker_unavailable)
		return "this runs under another sandbox's runtime broker, and the kernel allows one per process: "
		       "the outer sandbox's rules still hold, this run's need the outer one to state them (and a "
		       "linux-ns run inside needs nestedSandbox: true in the outer one)";
	if (strcmp(d->backend, "linux-ns") == 0)
		return "turn the runtime broker back on (runtimeBroker: on)";
	if (strcmp(d->backend, "landlock") == 0 || strcmp(d->backend, "none") == 0)
		return "allow user namespaces for dshbox (the AppArmor profile tools/apparmor/dshbox, `make "
		       "install-apparmor`; `dshbox probe` says what refuses them), so that backend linux-ns enforces "
		       "every rule";
	return "use a backend that enforces every rule (dshbox explain shows each backend's)";
}

int dsh_run_check_degraded(const struct dsh_policy *p, const struct dsh_run_options *o,
			   const struct dsh_description *d, char ***ret_warnings, struct dsh_error **err)
{
	/* At most this many rules are named in the one error line; the rest are counted. */
	enum { NAMED = 3 };
	_cleanup_strv_ char **lines = NULL;
	struct dsh_buf names = { 0 };
	size_t n_lost = 0, first = 0;
	for (size_t i = 0; i < p->n_rules && i < d->n_rules; i++) {
		if (!d->rules[i].lost)
			continue;
		if (n_lost == 0)
			first = i;
		if (n_lost < NAMED)
			dsh_buf_addf(&names, "%s\"%s\"", n_lost ? ", " : "", p->rules[i].text);
		n_lost++;
		if (dsh_strv_pushf(&lines, "rule \"%s\" is not fully enforced (allowDegraded): backend %s: %s",
				   p->rules[i].text, d->backend, d->rules[i].lost) < 0) {
			dsh_buf_free(&names);
			return dsh_err_sys(err, ENOMEM, "degraded rules");
		}
	}
	/* No rule lost; or a backend that refuses its lost rules itself, with its own words (the runner:
	   SPEC 1.5, whatever allowDegraded says). */
	if (n_lost == 0 || !degraded_remedy(o, d)) {
		dsh_buf_free(&names);
		return 0;
	}
	if (o->allow_degraded) {
		dsh_buf_free(&names);
		if (ret_warnings)
			*ret_warnings = TAKE_PTR(lines);
		return 0;
	}
	_cleanup_free_ char *named = dsh_buf_steal(&names);
	int r;
	if (n_lost == 1)
		r = dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "backend %s cannot enforce rule %s: %s", d->backend,
			    named ? named : "?", d->rules[first].lost);
	else
		r = dsh_err(err, DSH_ERR_UNSUPPORTED, ENOTSUP, "backend %s cannot enforce %zu rules: %s%s (first: %s)",
			    d->backend, n_lost, named ? named : "?", n_lost > NAMED ? " and more" : "",
			    d->rules[first].lost);
	dsh_err_hint(err, "%s; or accept the loss: --allow-degraded (allowDegraded: true) runs with one "
			  "warning per lost rule", degraded_remedy(o, d));
	return r;
}

void dsh_run_setup_clear(struct dsh_run_setup *s)
{
	if (s->backend && s->backend->free)
		s->backend->free(s->plan);
	if (s->described)
		dsh_description_clear(&s->description);
	dsh_strv_free(s->degraded);
	memset(s, 0, sizeof(*s));
}

int dsh_run_prepare(const struct dsh_policy *p, const struct dsh_run_options *o, struct dsh_run_setup *ret,
		    struct dsh_error **err)
{
	const struct dsh_backend *b = NULL;
	memset(ret, 0, sizeof(*ret));
	int r = dsh_backend_select(p, o, &b, err);
	if (r < 0)
		return r;
	dsh_timing_mark(o->timing, "select", o->timing ? dsh_timing_now() : 0);
	return dsh_run_prepare_backend(p, o, b, ret, err);
}

int dsh_run_prepare_backend(const struct dsh_policy *p, const struct dsh_run_options *o, const struct dsh_backend *b,
			    struct dsh_run_setup *ret, struct dsh_error **err)
{
	void *plan = NULL;
	memset(ret, 0, sizeof(*ret));
	int r = b->compile(p, o, &plan, err);
	if (r < 0)
		return r;
	dsh_timing_mark(o->timing, "compile", o->timing ? dsh_timing_now() : 0);
	ret->backend = b;
	ret->plan = plan;
	if ((r = b->describe(p, plan, &ret->description, err)) < 0)
		return r;
	ret->described = true;
	return dsh_run_check_degraded(p, o, &ret->description, &ret->degraded, err);
}

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; a && v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *patterns_json(const struct dsh_net_pattern *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "pattern", v[i].text, "origin", v[i].origin));
	return a;
}

json_t *dsh_net_policy_json(const struct dsh_net_policy *np)
{
	return json_pack("{s:o, s:o, s:b, s:b, s:I}", "allowDomains", patterns_json(np->allow, np->n_allow), "denyDomains",
			 patterns_json(np->deny, np->n_deny), "allowLocalBinding", np->allow_local_binding, "ask", np->ask,
			 "askTimeoutMs", (json_int_t)np->ask_timeout_ms);
}

/* SPEC 12.3: the patterns, how they are held, and after the run what was refused. */
static json_t *net_filter_report(const struct dsh_net_policy *np, const struct dsh_run_result *res)
{
	json_t *o = dsh_net_policy_json(np);
	if (!o)
		return NULL;
	json_object_set_new(o, "enforcement", json_string("full"));
	json_object_set_new(o, "how", json_string("the command's network namespace has loopback only; on it dshbox serves "
						  "a resolver, HTTP and SOCKS5 proxies and the addresses it maps names "
						  "to, and connects to allowed names from outside"));
	if (!res)
		return o;
	json_t *refused = json_array();
	for (size_t i = 0; refused && i < res->n_net_refused; i++) {
		const struct dsh_net_refusal *f = &res->net_refused[i];
		json_array_append_new(refused, json_pack("{s:s, s:i, s:s, s:s, s:I}", "name", f->name, "port", (int)f->port,
							 "via", f->via, "reason", f->reason, "count", (json_int_t)f->count));
	}
	json_object_set_new(o, "refused", refused ? refused : json_array());
	return o;
}

int dsh_run_report_json(const struct dsh_policy *p, const struct dsh_run_options *ro,
			const struct dsh_description *d, char **ret, struct dsh_error **err)
{
	return dsh_run_report_json_after(p, ro, d, NULL, ret, err);
}

int dsh_run_report_json_after(const struct dsh_policy *p, const struct dsh_run_options *ro,
			      const struct dsh_description *d, const struct dsh_run_result *res, char **ret,
			      struct dsh_error **err)
{
	json_t *o = json_object();
	if (!o)
		return dsh_err_sys(err, ENOMEM, "report");
	enum dsh_enforcement overall = d->overall;
	json_object_set_new(o, "backend", json_string(d->backend));
	json_object_set_new(o, "enforcement", json_string(dsh_enforcement_to_string(overall)));
	json_object_set_new(o, "mode", json_string(dsh_mode_to_string(p->mode)));
	json_object_set_new(o, "network", json_boolean(!ro->net && (ro->network || p->mode == DSH_MODE_DANGER_FULL_ACCESS)));
	if (ro->net)
		json_object_set_new(o, "network_filter", net_filter_report(ro->net, res));
	json_t *rules = json_array();
	for (size_t i = 0; i < p->n_rules && i < d->n_rules; i++) {
		const struct dsh_rule *r = &p->rules[i];
		const struct dsh_rule_report *rr = &d->rules[i];
		json_t *proc = json_pack("{s:s, s:s}", "enforcement", dsh_enforcement_to_string(rr->level), "how",
					 rr->how ? rr->how : "");
		if (proc && rr->lost)
			json_object_set_new(proc, "lost", json_string(rr->lost));
		json_t *fence = json_pack("{s:s, s:s}", "enforcement", "full", "how",
					  "verdict on the canonical path before every operation (check, fs, serve)");
		json_t *jr = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "rule", r->text, "kind",
				       dsh_rule_kind_to_string(r->kind), "origin", dsh_rule_origin_to_string(r->origin),
				       "path", r->canonical ? r->canonical : "",
				       "process", proc ? proc : json_null(), "file_fence", fence ? fence : json_null());
		if (jr)
			json_array_append_new(rules, jr);
	}
	json_object_set_new(o, "rules", rules);
	json_object_set_new(o, "denial_signatures", strv_json(d->denial_signatures));
	json_object_set_new(o, "runner_failure",
			    json_pack("{s:i, s:s}", "exit_code", 125, "stderr_prefix", "dshbox: error: "));
	json_object_set_new(o, "warnings", strv_json(d->warnings));
	json_object_set_new(o, "notes", strv_json(d->notes));
	/* SPEC 1.7: the names the command does not get, never their values. */
	json_object_set_new(o, "environment", json_pack("{s:s, s:o}", "inherit", dsh_env_inherit_to_string(ro->env_inherit),
							 "removed", strv_json(ro->env_removed)));
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!s)
		return dsh_err_sys(err, ENOMEM, "report");
	*ret = s;
	return 0;
}
