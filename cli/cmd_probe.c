/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "dshbox/backend.h"
#include "dshbox/probe.h"
#include "supervisor/probe.h"

static const char usage[] =
	"Usage: dshbox probe [--json] [POLICY OPTIONS]\n"
	"\n"
	"Report what this kernel can enforce, each feature found by trying it (never by version):\n"
	"user namespaces (and why not), the mount API, the Landlock ABI, seccomp and its user\n"
	"notification, pidfd, clone3, a network namespace's loopback, the broker's process_vm_readv\n"
	"and pidfd_getfd, a fresh procfs.  Each refusal with its cause where the machine tells it (a\n"
	"container runtime's seccomp profile, a masked /proc, a sysctl, AppArmor) and the fix, naming\n"
	"the container runtime's setting when the cause is a container's; then which backends can run\n"
	"and what --backend auto would choose for the\n"
	"policy options given (--network off adds the network namespace to linux-ns's needs).\n"
	"The backends and auto are decided by the same probes and selection code as `dshbox run`.\n"
	"Each probe runs in a child killed after probeTimeoutMs (5000 ms).\n"
	"\n"
	"Exit status: 0 when a confining backend (linux-ns or landlock) is available, 1 when none is.\n"
	"\n"
	"  --json          one JSON object instead of text\n"
	"  -h, --help      show this help\n"
	"\n" CLI_POLICY_HELP;

enum { OPT_JSON = 1 };

/* A confining backend: whether its probe slot (the one auto uses) says it can enforce here. */
struct backend_row {
	enum dsh_backend_id id;
	bool ok;
	char *why; /* the probe's error when not ok */
};

static void probe_backend(const struct dsh_policy *p, const struct dsh_run_options *o, struct backend_row *row)
{
	_cleanup_error_ struct dsh_error *err = NULL;
	const struct dsh_backend *b = dsh_backend_get(row->id);
	row->ok = b && b->probe && b->probe(p, o, &err) == 0;
	if (!row->ok)
		row->why = strdup(err && err->msg ? err->msg : "not built into this dshbox");
}

/* A probe that hung or died: its step says so, and strerror(ETIMEDOUT) ("Connection timed out")
   would only mislead. */
static bool step_only(const struct dsh_probe_result *r)
{
	return r->code == ETIMEDOUT || r->code == ECHILD;
}

static json_t *probe_json(const struct dsh_probe_result *r, const struct dsh_probe_env *env)
{
	json_t *p = json_pack("{s:s, s:s, s:b}", "name", dsh_probe_name(r->id), "checks", dsh_probe_checks(r->id),
			      "ok", r->ok);
	if (!p)
		return NULL;
	if (r->id == DSH_PROBE_LANDLOCK && r->ok)
		json_object_set_new(p, "abi", json_integer(r->value));
	if (!r->ok) {
		json_object_set_new(p, "step", json_string(r->step));
		json_object_set_new(p, "error", json_string(step_only(r) ? r->step : strerror(r->code)));
		if (r->reason[0])
			json_object_set_new(p, "reason", json_string(r->reason));
		if (r->remedy)
			json_object_set_new(p, "remedy", json_string(r->remedy));
		struct dsh_probe_diagnosis d;
		dsh_probe_diagnose(r, env, &d);
		json_object_set_new(p, "cause", json_string(dsh_probe_cause_name(d.cause)));
		if (d.fix[0])
			json_object_set_new(p, "fix", json_string(d.fix));
	}
	return p;
}

int cmd_probe(int argc, char **argv, char **envp)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		CLI_POLICY_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli_policy_opts po = { 0 };
	struct dsh_config config;
	struct dsh_policy *policy = NULL;
	struct dsh_run_options ro;
	/* Before any goto: the cleanup runs at the end of the function whatever path led there. */
	_cleanup_error_ struct dsh_error *auto_err = NULL;
	bool json = false;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			cli_policy_opts_clear(&po);
			return 0;
		case '?':
			rc = cli_usage_error("probe", "unknown option '%s'", argv[optind - 1]);
			goto out;
		case ':':
			rc = cli_usage_error("probe", "option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			if (c >= CLI_OPT_POLICY_BASE && c < CLI_OPT_POLICY_END) {
				if ((rc = cli_policy_option(&po, c, optarg, "probe")) != 0)
					goto out;
				break;
			}
			rc = cli_usage_error("probe", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind < argc) {
		rc = cli_usage_error("probe", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	/* The policy and run options `run` would use with the same flags: auto depends on them
	   (network off needs a network namespace; danger-full-access may need no backend). */
	if ((rc = cli_policy_load(&po, envp, &config, &policy, &ro)) != 0)
		goto out_config;
	cli_policy_print_warnings(&po, policy);
	/* What auto would choose, whatever --backend says. */
	ro.backend = DSH_BACKEND_AUTO;
	long long timeout = ro.probe_timeout_ms;

	/* Read once: what the causes are decided from (a container, a filter, a masked /proc). */
	struct dsh_probe_env env;
	dsh_probe_env_read(&env);
	struct dsh_probe_result r[DSH_PROBE__MAX];
	for (int i = 0; i < DSH_PROBE__MAX; i++)
		dsh_probe_run((enum dsh_probe_id)i, timeout, &r[i]);
	struct backend_row rows[] = { { DSH_BACKEND_LINUX_NS, false, NULL }, { DSH_BACKEND_LANDLOCK, false, NULL } };
	bool available = false;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		probe_backend(policy, &ro, &rows[i]);
		available |= rows[i].ok;
	}
	/* auto, by the selection code `dshbox run` calls: never a formula of its own here. */
	const struct dsh_backend *chosen = NULL;
	if (dsh_backend_select(policy, &ro, &chosen, &auto_err) < 0)
		chosen = NULL;
	const char *autob = chosen ? chosen->name : NULL;

	if (json) {
		json_t *o = json_object(), *a = json_array(), *bo = json_object(), *why = json_object();
		for (int i = 0; i < DSH_PROBE__MAX; i++)
			json_array_append_new(a, probe_json(&r[i], &env));
		json_object_set_new(o, "probes", a);
		json_object_set_new(o, "environment",
				    json_pack("{s:s?, s:b, s:b}", "container", env.container[0] ? env.container : NULL,
					      "seccompFilter", env.seccomp_mode == 2, "procMasked", env.proc_masked));
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			json_object_set_new(bo, dsh_backend_id_to_string(rows[i].id), json_boolean(rows[i].ok));
			if (rows[i].why)
				json_object_set_new(why, dsh_backend_id_to_string(rows[i].id), json_string(rows[i].why));
		}
		json_object_set_new(o, "backends", bo);
		json_object_set_new(o, "backendErrors", why);
		json_object_set_new(o, "auto", autob ? json_string(autob) : json_null());
		if (!chosen && auto_err)
			json_object_set_new(o, "autoError", json_string(auto_err->msg));
		json_object_set_new(o, "network", json_boolean(ro.network));
		json_object_set_new(o, "probeTimeoutMs", json_integer(timeout));
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		printf("%-26s %s%s%s, seccomp filter %s, /proc %s\n", "environment",
		       env.container[0] ? "a " : "not a container", env.container, env.container[0] ? " container" : "",
		       env.seccomp_mode == 2 ? "on" : "off", env.proc_masked ? "masked" : "not masked");
		for (int i = 0; i < DSH_PROBE__MAX; i++) {
			const struct dsh_probe_result *p = &r[i];
			if (p->ok && p->id == DSH_PROBE_LANDLOCK)
				printf("%-26s yes (ABI %d)\n", dsh_probe_name(p->id), p->value);
			else if (p->ok)
				printf("%-26s yes\n", dsh_probe_name(p->id));
			else {
				printf("%-26s no: %s%s%s\n", dsh_probe_name(p->id), p->step, step_only(p) ? "" : ": ",
				       step_only(p) ? "" : strerror(p->code));
				struct dsh_probe_diagnosis d;
				dsh_probe_diagnose(p, &env, &d);
				if (d.cause != DSH_CAUSE_UNKNOWN)
					printf("%-26s   why: %s\n", "", d.why);
				else if (p->reason[0])
					printf("%-26s   why: %s\n", "", p->reason);
				if (d.fix[0])
					printf("%-26s   fix: %s\n", "", d.fix);
				else if (p->remedy)
					printf("%-26s   remedy: %s\n", "", p->remedy);
			}
		}
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			char label[64];
			snprintf(label, sizeof(label), "backend %s", dsh_backend_id_to_string(rows[i].id));
			printf("%-26s %s\n", label, rows[i].ok ? "available" : "unavailable");
			if (rows[i].why)
				printf("%-26s   why: %s\n", "", rows[i].why);
		}
		if (autob)
			printf("%-26s %s\n", "backend auto", autob);
		else
			printf("%-26s none: every run fails with 125 (%s)\n", "backend auto",
			       auto_err ? auto_err->msg : "no backend");
	}
	rc = available ? 0 : 1;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		free(rows[i].why);
	dsh_policy_free(policy);
	dsh_run_options_clear(&ro);
out_config:
	dsh_config_clear(&config);
out:
	cli_policy_opts_clear(&po);
	return rc;
}
