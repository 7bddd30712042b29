/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <time.h>

#include "dshbox/dshbox.h"

long long dsh_timing_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void dsh_timing_mark(struct dsh_timing *t, const char *stage, long long end_ns)
{
	if (!t || t->n >= DSH_TIMING_MAX)
		return;
	struct dsh_timing_entry *e = &t->e[t->n++];
	snprintf(e->stage, sizeof(e->stage), "%s", stage);
	/* A clock read in another process may come a hair before the last one read here. */
	e->usec = end_ns > t->last_ns ? (end_ns - t->last_ns) / 1000 : 0;
	if (end_ns > t->last_ns)
		t->last_ns = end_ns;
}
