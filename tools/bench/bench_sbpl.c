/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Seatbelt profiles generated per second for policies of 10, 100 and 1,000 rules (literal denies,
 * read-only paths and globs, every one case-folded), and the profile's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/strv.h"
#include "policy/policy.h"
#include "seatbelt/sbpl.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
	int sizes[] = { 10, 100, 1000 };
	for (size_t s = 0; s < 3; s++) {
		struct dsh_config c;
		dsh_config_init(&c);
		c.workspace = strdup("/bench/ws");
		for (int i = 0; i < sizes[s]; i++) {
			switch (i % 4) {
			case 0:
				dsh_strv_pushf(&c.access, "-- **/secret%d/*.pem", i);
				break;
			case 1:
				dsh_strv_pushf(&c.access, "-- /bench/home/.ssh%d", i);
				break;
			case 2:
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
			fprintf(stderr, "bench_sbpl: %s\n", err->msg);
			return 1;
		}
		long iters = sizes[s] >= 1000 ? 200 : sizes[s] >= 100 ? 2000 : 20000;
		size_t bytes = 0;
		double t0 = now();
		for (long i = 0; i < iters; i++) {
			char *profile = NULL;
			if (dsh_sbpl_profile(p, &profile, &err) < 0) {
				fprintf(stderr, "bench_sbpl: %s\n", err->msg);
				return 1;
			}
			bytes = strlen(profile);
			free(profile);
		}
		double dt = now() - t0;
		printf("   seatbelt profile with %4d rules: %9.0f /s  (%.1f us each; %zu bytes)\n", sizes[s],
		       (double)iters / dt, dt / (double)iters * 1e6, bytes);
		dsh_policy_free(p);
		dsh_config_clear(&c);
	}
	return 0;
}
