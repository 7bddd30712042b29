/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "supervisor/probe.h"

static const char usage[] =
	"Usage: dshbox probe [--json]\n"
	"\n"
	"Report what this kernel can enforce, each feature found by trying it (never by version):\n"
	"user namespaces (and why not), the mount API, the Landlock ABI, seccomp and its user\n"
	"notification, pidfd, clone3, a network namespace's loopback; each missing piece with a\n"
	"one-line remedy; then which backends can run and what --backend auto would choose.\n"
	"Each probe runs in a child killed after probeTimeoutMs (5000 ms).\n"
	"\n"
	"Exit status: 0 when a confining backend (linux-ns or landlock) is available, 1 when none is.\n"
	"\n"
	"  --json          one JSON object instead of text\n"
	"  -h, --help      show this help\n";

enum { OPT_JSON = 1 };

int cmd_probe(int argc, char **argv, char **envp)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	int c;
	(void)envp;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_usage_error("probe", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("probe", "unexpected argument '%s'", argv[optind]);

	struct dsh_config conf;
	dsh_config_init(&conf);
	long long timeout = conf.probe_timeout_ms;
	dsh_config_clear(&conf);

	struct dsh_probe_result r[DSH_PROBE__MAX];
	for (int i = 0; i < DSH_PROBE__MAX; i++)
		dsh_probe_run((enum dsh_probe_id)i, timeout, &r[i]);
	bool linux_ns = r[DSH_PROBE_USERNS].ok && r[DSH_PROBE_MOUNT_API].ok;
	bool landlock = r[DSH_PROBE_LANDLOCK].ok && r[DSH_PROBE_SECCOMP].ok;
	const char *autob = linux_ns ? "linux-ns" : landlock ? "landlock" : NULL;

	if (json) {
		json_t *o = json_object(), *a = json_array();
		for (int i = 0; i < DSH_PROBE__MAX; i++) {
			json_t *p = json_pack("{s:s, s:b}", "name", dsh_probe_name(r[i].id), "ok", r[i].ok);
			if (r[i].id == DSH_PROBE_LANDLOCK && r[i].ok)
				json_object_set_new(p, "abi", json_integer(r[i].value));
			if (!r[i].ok) {
				json_object_set_new(p, "step", json_string(r[i].step));
				json_object_set_new(p, "error", json_string(strerror(r[i].code)));
				if (r[i].reason[0])
					json_object_set_new(p, "reason", json_string(r[i].reason));
				json_object_set_new(p, "remedy", json_string(r[i].remedy));
			}
			json_array_append_new(a, p);
		}
		json_object_set_new(o, "probes", a);
		json_object_set_new(o, "backends", json_pack("{s:b, s:b}", "linux-ns", linux_ns, "landlock", landlock));
		json_object_set_new(o, "auto", autob ? json_string(autob) : json_null());
		json_object_set_new(o, "probeTimeoutMs", json_integer(timeout));
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		for (int i = 0; i < DSH_PROBE__MAX; i++) {
			const struct dsh_probe_result *p = &r[i];
			if (p->ok && p->id == DSH_PROBE_LANDLOCK)
				printf("%-26s yes (ABI %d)\n", dsh_probe_name(p->id), p->value);
			else if (p->ok)
				printf("%-26s yes\n", dsh_probe_name(p->id));
			else {
				printf("%-26s no: %s: %s\n", dsh_probe_name(p->id), p->step, strerror(p->code));
				if (p->reason[0])
					printf("%-26s   why: %s\n", "", p->reason);
				printf("%-26s   remedy: %s\n", "", p->remedy);
			}
		}
		printf("%-26s %s\n", "backend linux-ns", linux_ns ? "available" : "unavailable");
		printf("%-26s %s\n", "backend landlock", landlock ? "available" : "unavailable");
		printf("%-26s %s\n", "backend auto", autob ? autob : "none: every run fails with 125 (except danger-full-access)");
	}
	return autob ? 0 : 1;
}
