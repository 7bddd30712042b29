/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make soak: an embedder's soak (issue 38).  A host that links libdshbox and has threads calls
 * dsh_run() many times, as an agent host does over a day, and must end as it started: the same
 * open descriptors, the same mount table, no child left (living or zombie), nothing the commands
 * started still running, no thread more, and its memory within a bound.
 *
 * Only the public API (include/dshbox/), as a program outside the tree would use it.  Two threads
 * share SOAK_RUNS runs (default 10000), a mix that ends every way a run can end: success, the
 * command's own status, a rule's denial, an exec failure, death by a signal, a command killed by
 * a timeout inside the sandbox, a background process the sandbox must end with it; a share runs
 * with the landlock backend.  The figures are taken after a warm-up (SOAK_WARMUP, default 50: the
 * library's and the allocator's first-use state) and again at the end, while both threads are still
 * alive (their stacks and malloc arenas are part of both figures).
 *
 * Memory has two figures.  The heap in use (mallinfo2: every arena's allocated bytes) is exact, so
 * its bound is tight: SOAK_HEAP_SLACK bytes (default 64 KiB), under 7 bytes a run at 10000 runs.
 * VmRSS also sees pages the allocator keeps and fragmentation; it may grow by SOAK_RSS_SLACK_KB
 * (default 2048), which at 10000 runs still catches a leak of ~200 bytes a run the heap figure
 * might be blind to (a mapping, a leaked stack).
 *
 * Exit 0: every run came back as expected and nothing leaked; 1: a run or an invariant failed
 * (each says which); 77: nothing to soak on this kernel (a printed reason; a failure under
 * DSHBOX_TEST_NO_SKIP=1).  Output: one line per failure, then the summary line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dshbox/backend.h>
#include <dshbox/dshbox.h>

#define N_THREADS 2

extern char **environ;

/* One configuration a share of the runs uses. */
struct host_policy {
	const char *name;
	struct dsh_config *c;
	struct dsh_policy *p;
	struct dsh_run_options *o;
	bool ready;
};

enum policy_id { POL_PLAIN, POL_RULES, POL_LANDLOCK, N_POL };

/* What a run is and how it must end. */
struct run_kind {
	const char *name;
	enum policy_id pol;
	const char *script; /* sh -c SCRIPT; NULL: argv0 alone */
	const char *argv0;
	int exit_code;      /* expected when signal == 0 */
	int signal;
};

static char marker[64]; /* in the argv of every process a command leaves behind */
static char bg_script[160], timeout_script[160];

/* Ten slots, the run's index modulo 10 picks one: two plain successes, the rest one each. */
static struct run_kind kinds[10] = {
	{ "true", POL_PLAIN, NULL, "/bin/true", 0, 0 },
	{ "true", POL_PLAIN, NULL, "/bin/true", 0, 0 },
	{ "exit-3", POL_PLAIN, "exit 3", NULL, 3, 0 },
	{ "denied-by-rule", POL_RULES, "cat secret.pem >/dev/null 2>&1", NULL, 1, 0 },
	{ "landlock-true", POL_LANDLOCK, NULL, "/bin/true", 0, 0 },
	{ "landlock-exit-3", POL_LANDLOCK, "exit 3", NULL, 3, 0 },
	{ "timeout-kills", POL_PLAIN, timeout_script, NULL, 124, 0 },
	{ "left-in-background", POL_PLAIN, bg_script, NULL, 0, 0 },
	{ "no-such-command", POL_PLAIN, NULL, "dshbox-soak-no-such-command", 127, 0 },
	{ "killed-by-signal", POL_PLAIN, "kill -KILL $$", NULL, 0, SIGKILL },
};

static struct host_policy pols[N_POL];
static long total_runs, warmup_runs;
static atomic_long next_run;
static atomic_long failures, by_kind[10];
static pthread_barrier_t barrier;
static char *workspace;
static int only_kind = -1; /* SOAK_KIND=NAME: every run of that kind (to chase one failure) */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("soak: FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	atomic_fetch_add(&failures, 1);
}

static long env_long(const char *name, long def)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "soak: %s=%s is not a count\n", name, s);
		exit(2);
	}
	return v;
}

static bool no_skip(void)
{
	const char *s = getenv("DSHBOX_TEST_NO_SKIP");
	return s && *s == '1';
}

/* ---- the figures ---- */

struct figures {
	long fds, rss_kb, mounts, children, leftovers, threads;
	size_t heap;
};

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	long n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

static long status_field(const char *path, const char *key)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[256];
	long v = -1;
	size_t k = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, k) == 0 && line[k] == ':') {
			v = strtol(line + k + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static long count_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long n = 0;
	for (int ch; (ch = getc(f)) != EOF;)
		n += ch == '\n';
	fclose(f);
	return n;
}

/* The State letter of a /proc/PID/status (Z: a zombie), or '?'. */
static char process_state(const char *status_path)
{
	FILE *f = fopen(status_path, "re");
	char line[256], st = '?';
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "State: %c", &st) == 1)
			break;
	if (f)
		fclose(f);
	return st;
}

/* Whether /proc/PID/cmdline holds the marker (NULs read as spaces). */
static bool cmdline_has_marker(const char *pid)
{
	char path[300], buf[4096];
	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return strstr(buf, marker) != NULL;
}

/* The host's children (any state, zombies too: PPid is the host) and every process anywhere whose
   argv holds the marker (what a command started, reparented wherever it went).  verbose: name each. */
static void count_processes(long *children, long *leftovers, bool verbose)
{
	*children = *leftovers = 0;
	DIR *d = opendir("/proc");
	if (!d) {
		*children = *leftovers = -1;
		return;
	}
	char self[32];
	snprintf(self, sizeof(self), "%d", getpid());
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || strcmp(e->d_name, self) == 0)
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		if (status_field(path, "PPid") == getpid()) {
			(*children)++;
			if (verbose)
				fprintf(stderr, "soak:   child %s is left, state %c\n", e->d_name, process_state(path));
		}
		if (cmdline_has_marker(e->d_name)) {
			(*leftovers)++;
			if (verbose)
				fprintf(stderr, "soak:   process %s still runs what a command started\n", e->d_name);
		}
	}
	closedir(d);
}

static void take(struct figures *f, bool verbose)
{
	f->fds = count_fds();
	f->rss_kb = status_field("/proc/self/status", "VmRSS");
	f->threads = status_field("/proc/self/status", "Threads");
	f->mounts = count_lines("/proc/self/mountinfo");
	f->heap = mallinfo2().uordblks;
	count_processes(&f->children, &f->leftovers, verbose);
}

/* ---- the runs ---- */

static int policy_open(struct host_policy *hp, const char *name, enum dsh_backend_id backend, const char *rule,
		       bool required)
{
	struct dsh_error *err = NULL;
	hp->name = name;
	hp->c = dsh_config_new();
	if (!hp->c) {
		fprintf(stderr, "soak: out of memory\n");
		return -1;
	}
	int r = dsh_config_set_mode(hp->c, DSH_MODE_WORKSPACE_WRITE, &err);
	if (r == 0)
		r = dsh_config_set_workspace(hp->c, workspace, &err);
	if (r == 0)
		r = dsh_config_set_cwd(hp->c, workspace, &err);
	if (r == 0)
		r = dsh_config_set_backend(hp->c, backend, &err);
	/* The default-protected names are not what this soaks; under landlock some would be lost. */
	if (r == 0)
		r = dsh_config_set_protect_defaults(hp->c, false, &err);
	if (r == 0 && rule)
		r = dsh_config_add_access(hp->c, rule, &err);
	if (r == 0)
		r = dsh_run_options_new(hp->c, environ, &hp->o, &err);
	if (r == 0)
		r = dsh_policy_new(hp->c, environ, workspace, &hp->p, &err);
	if (r == 0) {
		const struct dsh_backend *b = dsh_backend_get(backend);
		r = b ? b->probe(hp->p, hp->o, &err) : -ENOTSUP;
	}
	if (r < 0) {
		fprintf(stderr, "soak: %s: %s%s\n", name, err ? err->msg : strerror(-r),
			required ? "" : " (its share of the runs uses linux-ns)");
		dsh_error_free(err);
		return r;
	}
	hp->ready = true;
	return 0;
}

static void policy_close(struct host_policy *hp)
{
	dsh_policy_free(hp->p);
	dsh_run_options_free(hp->o);
	dsh_config_free(hp->c);
}

static void one_run(long i)
{
	const struct run_kind *k = &kinds[only_kind >= 0 ? only_kind : i % 10];
	const struct host_policy *hp = pols[k->pol].ready ? &pols[k->pol] : &pols[POL_PLAIN];
	char *sh[] = { "/bin/sh", "-c", (char *)k->script, NULL };
	char *one[] = { (char *)k->argv0, NULL };
	struct dsh_run_request req = { .argv = k->script ? sh : one, .envp = dsh_run_options_command_env(hp->o) };
	struct dsh_run_setup setup = { 0 };
	struct dsh_run_result res = { 0 };
	struct dsh_error *err = NULL;

	int r = dsh_run(hp->p, hp->o, &req, NULL, &setup, &res, &err);
	if (r < 0)
		fail("run %ld (%s, %s): %s", i, k->name, hp->name, err ? err->msg : strerror(-r));
	else if (res.signal != k->signal || (k->signal == 0 && res.exit_code != k->exit_code))
		fail("run %ld (%s, %s): ended with status %d signal %d, expected status %d signal %d", i, k->name,
		     hp->name, res.exit_code, res.signal, k->exit_code, k->signal);
	else
		atomic_fetch_add(&by_kind[k - kinds], 1);
	dsh_run_result_clear(&res);
	dsh_run_setup_clear(&setup);
	dsh_error_free(err);
}

static void run_until(long end)
{
	for (long i; (i = atomic_fetch_add(&next_run, 1)) < end;)
		one_run(i);
}

/* Each thread: its share of the warm-up, wait while the start is measured, its share of the runs,
   wait while the end is measured (the thread still alive), then end. */
static void *worker(void *arg)
{
	(void)arg;
	run_until(warmup_runs);
	pthread_barrier_wait(&barrier); /* warm-up done */
	pthread_barrier_wait(&barrier); /* start measured */
	run_until(warmup_runs + total_runs);
	pthread_barrier_wait(&barrier); /* runs done */
	pthread_barrier_wait(&barrier); /* end measured */
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void rmtree_workspace(void)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/secret.pem", workspace);
	unlink(path);
	rmdir(workspace);
}

int main(void)
{
	total_runs = env_long("SOAK_RUNS", 10000);
	warmup_runs = env_long("SOAK_WARMUP", 50);
	long heap_slack = env_long("SOAK_HEAP_SLACK", 64 * 1024);
	long rss_slack_kb = env_long("SOAK_RSS_SLACK_KB", 2048);
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *only = getenv("SOAK_KIND");
	for (int k = 0; only && *only && k < 10; k++)
		if (strcmp(kinds[k].name, only) == 0)
			only_kind = k;
	if (only && *only && only_kind < 0) {
		fprintf(stderr, "soak: SOAK_KIND=%s: no such kind of run\n", only);
		return 2;
	}

	snprintf(marker, sizeof(marker), "1000.%d%06ld", getpid(), (long)(now_s() * 1e6) % 1000000);
	/* sleep takes "1000.PIDNNNNNN" as seconds: the marker names the process without changing it. */
	snprintf(bg_script, sizeof(bg_script), "sleep %s & exit 0", marker);
	snprintf(timeout_script, sizeof(timeout_script), "timeout 0.02 sleep %s", marker);

	char tmpl[] = "/var/tmp/dshbox-soak-XXXXXX";
	workspace = mkdtemp(tmpl);
	if (!workspace) {
		perror("soak: mkdtemp");
		return 1;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/secret.pem", workspace);
	FILE *f = fopen(path, "we");
	if (!f || fputs("a key\n", f) < 0 || fclose(f) != 0) {
		perror("soak: secret.pem");
		return 1;
	}

	int rc = 0;
	if (policy_open(&pols[POL_PLAIN], "linux-ns", DSH_BACKEND_LINUX_NS, NULL, true) < 0) {
		fprintf(stderr, "soak: SKIP: no linux-ns backend here: nothing to soak\n");
		rc = no_skip() ? 1 : 77;
		goto out;
	}
	if (policy_open(&pols[POL_RULES], "linux-ns with a rule", DSH_BACKEND_LINUX_NS, "-- *.pem", true) < 0) {
		rc = 1;
		goto out;
	}
	if (policy_open(&pols[POL_LANDLOCK], "landlock", DSH_BACKEND_LANDLOCK, NULL, false) < 0 && no_skip()) {
		fprintf(stderr, "soak: landlock missing is a failure under DSHBOX_TEST_NO_SKIP=1\n");
		rc = 1;
		goto out;
	}

	pthread_barrier_init(&barrier, NULL, N_THREADS + 1);
	pthread_t t[N_THREADS];
	for (size_t i = 0; i < N_THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			fprintf(stderr, "soak: pthread_create failed\n");
			return 1;
		}

	struct figures start, end;
	pthread_barrier_wait(&barrier);
	take(&start, false);
	long warm_failures = atomic_exchange(&failures, 0);
	for (size_t k = 0; k < 10; k++)
		atomic_store(&by_kind[k], 0);
	/* Each thread took one index past the warm-up's end to see it was done. */
	atomic_store(&next_run, warmup_runs);
	double t0 = now_s();
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	double secs = now_s() - t0;
	/* The last run's sandbox is gone when dsh_run returns; what it left behind is ended by the
	   kernel as its pid namespace goes, which may take a moment after the return. */
	take(&end, false);
	for (int tries = 0; tries < 50 && (end.children || end.leftovers); tries++) {
		usleep(20 * 1000);
		take(&end, false);
	}
	pthread_barrier_wait(&barrier);
	for (size_t i = 0; i < N_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier);

	if (warm_failures)
		fail("%ld of the %ld warm-up runs failed (above)", warm_failures, warmup_runs);
	long ok = 0;
	for (size_t k = 0; k < 10; k++)
		ok += atomic_load(&by_kind[k]);
	if (ok != total_runs)
		fail("%ld of %ld runs came back as expected", ok, total_runs);
	if (end.fds != start.fds)
		fail("open descriptors: %ld after the warm-up, %ld at the end", start.fds, end.fds);
	if (end.mounts != start.mounts)
		fail("the host's mount table: %ld lines after the warm-up, %ld at the end", start.mounts, end.mounts);
	if (end.threads != start.threads)
		fail("threads: %ld after the warm-up, %ld at the end", start.threads, end.threads);
	if (end.children || end.leftovers) {
		take(&end, true);
		fail("%ld children of the host and %ld processes a command started are left", end.children,
		     end.leftovers);
	}
	errno = 0;
	if (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD)
		fail("waitpid(-1, WNOHANG): the host still has a child (%s)", errno ? strerror(errno) : "reaped one");
	if ((long)(end.heap - start.heap) > heap_slack && end.heap > start.heap)
		fail("heap in use grew by %zu bytes (%.1f a run), more than SOAK_HEAP_SLACK=%ld", end.heap - start.heap,
		     (double)(end.heap - start.heap) / (double)(total_runs ? total_runs : 1), heap_slack);
	if (end.rss_kb - start.rss_kb > rss_slack_kb)
		fail("VmRSS grew by %ld kB, more than SOAK_RSS_SLACK_KB=%ld", end.rss_kb - start.rss_kb, rss_slack_kb);

	long n_landlock = pols[POL_LANDLOCK].ready ? atomic_load(&by_kind[4]) + atomic_load(&by_kind[5]) : 0;
	printf("soak: %ld runs (%ld landlock) from %d threads in %.1f s (%.1f ms a run), after %ld warm-up: "
	       "fds %ld -> %ld, VmRSS %ld -> %ld kB (%+ld), heap %zu -> %zu B (%+ld), threads %ld -> %ld, "
	       "mounts %ld -> %ld, children %ld, left running %ld: %s\n",
	       total_runs, n_landlock, N_THREADS, secs, total_runs ? secs * 1000.0 / (double)total_runs : 0.0,
	       warmup_runs, start.fds, end.fds, start.rss_kb, end.rss_kb, end.rss_kb - start.rss_kb, start.heap,
	       end.heap, (long)end.heap - (long)start.heap, start.threads, end.threads, start.mounts, end.mounts,
	       end.children, end.leftovers, atomic_load(&failures) ? "FAIL" : "ok");
	rc = atomic_load(&failures) ? 1 : 0;
out:
	for (size_t i = 0; i < N_POL; i++)
		policy_close(&pols[i]);
	rmtree_workspace();
	return rc;
}
