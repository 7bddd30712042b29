/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Verdicts per second for policies of 10, 100 and 1,000 rules: a mix a user writes (literal
 * denies and read-only paths around the home directory and the workspace, and a fifth globs
 * rooted in the workspace), asked about paths inside and outside the workspace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/strv.h"
#include "policy/policy.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *const globs[] = { "**/*.pem%d", "mise.*.toml%d", "**/node_modules%d", "secrets%d/**",
				     "**/.env%d", "[abc]*.key%d", "build/**/*.o%d", "src/?%d.c" };

static struct dsh_policy *make_policy(int n)
{
	struct dsh_config c;
	dsh_config_init(&c);
	c.workspace = strdup("/bench/ws");
	for (int i = 0; i < n; i++) {
		switch (i % 5) {
		case 0: {
			char fmt[64];
			snprintf(fmt, sizeof(fmt), "-- %s", globs[(i / 5) % 8]);
			dsh_strv_pushf(&c.access, fmt, i);
			break;
		}
		case 1:
			dsh_strv_pushf(&c.access, "-- /bench/home/.ssh%d", i);
			break;
		case 2:
			dsh_strv_pushf(&c.access, "r- /bench/etc/conf%d", i);
			break;
		case 3:
			dsh_strv_pushf(&c.access, "r- /bench/ws/vendor%d", i);
			break;
		default:
			dsh_strv_pushf(&c.access, "rw /bench/cache/tool%d", i);
			break;
		}
	}
	char *env[] = { NULL };
	struct dsh_policy *p = NULL;
	struct dsh_error *err = NULL;
	if (dsh_policy_new(&c, env, "/", &p, &err) < 0) {
		fprintf(stderr, "bench_verdict: %s\n", err->msg);
		exit(1);
	}
	dsh_config_clear(&c);
	return p;
}

int main(void)
{
	static const char *const dirs[] = { "/bench/ws/src", "/bench/ws/src/lib/deep/er", "/bench/ws",
					    "/bench/home", "/bench/etc", "/usr/lib/x86_64-linux-gnu",
					    "/bench/ws/node_modules/pkg", "/bench/cache/tool9" };
	static const char *const names[] = { "main.c", "key.pem", "README.md", "a.o", "mise.local.toml", "x.py" };
	char *paths[1024];
	for (int i = 0; i < 1024; i++)
		if (asprintf(&paths[i], "%s/%s", dirs[i % 8], names[(i / 8) % 6]) < 0)
			return 1;

	int sizes[] = { 10, 100, 1000 };
	for (size_t s = 0; s < 3; s++) {
		struct dsh_policy *p = make_policy(sizes[s]);
		for (int op = 0; op < 2; op++) {
			long iters = sizes[s] >= 1000 ? 200000 : 2000000;
			unsigned long allowed = 0;
			double t0 = now();
			for (long i = 0; i < iters; i++) {
				struct dsh_verdict v;
				dsh_policy_verdict(p, op ? DSH_OP_WRITE : DSH_OP_READ, paths[i & 1023], &v);
				allowed += v.allow;
			}
			double dt = now() - t0;
			printf("   verdicts %-5s with %4d rules: %10.0f /s  (%.0f ns each; %lu allowed)\n",
			       op ? "write" : "read", sizes[s], (double)iters / dt, dt / (double)iters * 1e9, allowed);
		}
		dsh_policy_free(p);
	}
	for (int i = 0; i < 1024; i++)
		free(paths[i]);
	return 0;
}
