/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a file's version is made of (docs/serve.md, "Versions"): SIZE:MTIME_NS:INODE, and how the
 * fence makes sure a version it answers changes with any later change of the file, by anyone.
 *
 * The hazard: before Linux 6.13 (and on ramfs and others still) a change is stamped with the
 * kernel's coarse clock, which moves once per tick (1-10 ms).  A same-size change within the tick
 * of the mtime a version carries keeps the mtime, so a stale version would pass.  Two remedies:
 *
 * - for a file the fence writes itself, the fence sets the mtime to one nanosecond before the
 *   coarse clock (and after the mtime of the file it replaces): every later stamp by the kernel
 *   is at least the coarse clock, so any later change, by anyone, moves the mtime.  The tick is
 *   waited out only when the file replaced was itself changed within it (two writes of one file
 *   within one tick), so that the fence's stamp is later than that one too;
 * - for a file someone else wrote (a read's version), the answer waits until the coarse clock has
 *   passed the mtime, at most about two ticks, and only for a file changed within the last one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fence/fence.h"
#include "fence/shared.h"

static long long ts_ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000ll + t->tv_nsec;
}

static long long coarse_tick(void)
{
	struct timespec res;
	return clock_getres(CLOCK_REALTIME_COARSE, &res) == 0 ? ts_ns(&res) : 0;
}

/* Sleep into the coarse tick after the one holding `ahead` ns from now; sleeps may end early. */
static void sleep_past(long long ahead, long long tick)
{
	long long d = ahead + tick / 4 + 1;
	struct timespec sl = { (time_t)(d / 1000000000ll), (long)(d % 1000000000ll) };
	(void)nanosleep(&sl, NULL);
}

/*
 * fstat, answered only once the kernel's coarse clock has passed the mtime it returns: any later
 * change's stamp is then later than this mtime.  An mtime far ahead of the clock (touch -d)
 * cannot be waited out and needs no wait either: the next change stamps the present.
 * Filesystems with whole-second stamps keep the limit (docs/serve.md).
 */
int dsh_fence_fstat_settled(int fd, struct stat *st)
{
	long long tick = coarse_tick();
	for (int tries = 0;; tries++) {
		if (fstat(fd, st) < 0)
			return -errno;
		struct timespec now;
		if (tick <= 0 || clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0)
			return 0;
		long long ahead = ts_ns(&st->st_mtim) - ts_ns(&now);
		if (ahead < 0 || ahead > 2 * tick || tries == 16)
			return 0;
		sleep_past(ahead, tick);
	}
}

/*
 * Stamp a file the fence has just written through fd (before its fsync, so the stamp is durable
 * with the bytes): mtime = coarse clock - 1 ns, strictly below every later stamp the kernel gives,
 * and strictly above prev's mtime (the file this one replaces, or this inode before a write in
 * place; NULL for a new file), waiting out the tick only when prev was stamped within it.  Then
 * the stat of the file as stamped.  Where the stamp cannot be set (not the owner) or does not
 * hold (a filesystem keeping coarser times truncates it), the kernel's own stamp is restored and
 * the answer waits as a read's does.
 */
int dsh_fence_stamp(int fd, const struct stat *prev, struct stat *st)
{
	long long tick = coarse_tick();
	struct timespec now;
	for (int tries = 0;; tries++) {
		if (tick <= 0 || clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0)
			return dsh_fence_fstat_settled(fd, st);
		long long s = ts_ns(&now) - 1;
		long long ahead = prev ? ts_ns(&prev->st_mtim) - s : -1;
		if (ahead < 0 || ahead > 2 * tick || tries == 16)
			break;
		sleep_past(ahead, tick);
	}
	long long s = ts_ns(&now) - 1;
	const struct timespec times[2] = { { 0, UTIME_OMIT }, { (time_t)(s / 1000000000ll), (long)(s % 1000000000ll) } };
	if (s <= 0 || futimens(fd, times) < 0)
		return dsh_fence_fstat_settled(fd, st);
	if (fstat(fd, st) < 0)
		return -errno;
	if (ts_ns(&st->st_mtim) == s)
		return 0;
	const struct timespec kernel[2] = { { 0, UTIME_OMIT }, { 0, UTIME_NOW } };
	(void)futimens(fd, kernel);
	return dsh_fence_fstat_settled(fd, st);
}

int dsh_fence_version(const struct stat *st, char *buf, size_t size)
{
	unsigned long long mtime_ns = (unsigned long long)st->st_mtim.tv_sec * 1000000000ull +
				      (unsigned long long)st->st_mtim.tv_nsec;
	int n = snprintf(buf, size, "%llu:%llu:%llu", (unsigned long long)st->st_size, mtime_ns,
			 (unsigned long long)st->st_ino);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* A version as the caller gave it: three decimal numbers; anything else is a malformed request. */
bool dsh_fence_version_well_formed(const char *v)
{
	unsigned long long a, b, c;
	int end = -1;
	return v && sscanf(v, "%llu:%llu:%llu%n", &a, &b, &c, &end) == 3 && end >= 0 && v[end] == '\0' &&
	       v[0] >= '0' && v[0] <= '9';
}

/* The file st describes is still at the version the caller expects (NULL: no expectation). */
int dsh_fence_check_version(struct ctx *c, const char *path, const struct stat *st, const char *expect)
{
	if (!expect)
		return 0;
	char now[DSH_FENCE_VERSION_MAX];
	if (!st)
		return dsh_fence_fail(c, DSH_ERR_CONFLICT, path, 0, NULL,
				      "the file no longer exists (expected version %s); read it again", expect);
	if (dsh_fence_version(st, now, sizeof(now)) < 0 || strcmp(now, expect) != 0)
		return dsh_fence_fail(c, DSH_ERR_CONFLICT, path, 0, NULL,
				      "the file changed since it was read (version %s, expected %s); read it again",
				      now, expect);
	return 0;
}
