/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whose view the runtime broker resolves a brokered call in (issue 20).  The broker is the
 * sandbox's init; a path it resolves for the command must mean what it means to the command:
 * /proc/self is the caller, /proc/self/fd/N the caller's own descriptor N, and nothing of init's —
 * its status pipe to dshbox, its clone of the host's /proc, its memory — is reached through it.
 * Each attack runs as tests/helpers/caller_attack inside `dshbox run`, prints what it got, and is
 * judged here, on its output and on the host.  Every attack first shows it ran and that the broker
 * was answering creating opens ("ran=1", "brokered=ok"), so none passes by not happening.
 *
 * The backend is DSHBOX_ESCAPE_BACKEND (default auto), so CI runs them against landlock too.  Most
 * attacks are tried in several settings: the default (workspace-write), danger-full-access and
 * nestedSandbox (no Landlock file layer around init), and a kernel made Landlock-less by a seccomp
 * filter around dshbox (tests/helpers/refuse_calls), which the landlock backend refuses to run on.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *top, *ws, *nested_cfg;

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

/*
 * DSHBOX_ESCAPE_BACKEND, with auto resolved to what it picks for the default mode: auto runs
 * danger-full-access unsandboxed (backend none), where there is no broker to attack.
 */
static const char *backend(void)
{
	static char picked[32];
	const char *b = getenv("DSHBOX_ESCAPE_BACKEND");
	if (b && *b && strcmp(b, "auto") != 0)
		return b;
	if (!picked[0]) {
		dsh_test_require_backend();
		const char *argv[] = { dsh_test_dshbox(), "run", "--dry-run", "--", "true", NULL };
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
		cr_assert(sscanf(r.out, "backend: %31s", picked) == 1, "dshbox run --dry-run: %s%s", r.out, r.err);
		dsh_proc_clear(&r);
	}
	return picked;
}

static bool landlock_backend(void)
{
	return strcmp(backend(), "landlock") == 0;
}

static void setup(void)
{
	top = dsh_test_mkdtemp();
	cr_assert(asprintf(&ws, "%s/ws", top) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert(asprintf(&nested_cfg, "%s/nested.yml", top) > 0);
	dsh_test_write_file(nested_cfg, "nestedSandbox: true\n");
}

static void teardown(void)
{
	dsh_test_rmtree(top);
	free(ws), free(top), free(nested_cfg);
}

TestSuite(broker_caller, .init = setup, .fini = teardown, .timeout = 90);

/* Where the attack runs: a mode, nestedSandbox, or a kernel that seems to lack Landlock. */
static const struct dsh_test_setting WORKSPACE = { "workspace-write", NULL, NULL, false, false };
static const struct dsh_test_setting FULL = { "danger-full-access", NULL, "danger-full-access", false, false };
static const struct dsh_test_setting NESTED = { "nestedSandbox: true", NULL, NULL, true, false };
static const struct dsh_test_setting NO_LANDLOCK = { "no Landlock", NULL, NULL, false, true };

/*
 * dsh_test_run_setting with this suite's backend; false when the setting cannot run with it: the
 * landlock backend on a kernel without Landlock, which must then refuse (125) without running
 * anything; the caller moves on.
 */
static bool run_in(struct dsh_proc *r, const struct dsh_test_setting *s, const char *const *extra, const char *const *cmd)
{
	dsh_test_run_setting(r, env, s, backend(), ws, nested_cfg, extra, cmd);
	if (s->no_landlock && landlock_backend()) {
		cr_expect_eq(r->exit_code, 125, "the landlock backend ran without Landlock: %s", r->err);
		cr_expect(strstr(r->err, "landlock"), "%s", r->err);
		cr_expect_str_eq(r->out, "", "the command ran");
		cr_log_info("%s: the landlock backend refuses to run without Landlock; nothing to attack", s->name);
		dsh_proc_clear(r);
		return false;
	}
	return true;
}

/* caller_attack ARGS... in setting s; false as run_in. */
static bool attack(struct dsh_proc *r, const struct dsh_test_setting *s, const char *const *extra, const char *const *args)
{
	_cleanup_free_ char *helper = dsh_test_helper("caller_attack");
	const char *cmd[16] = { helper };
	for (size_t i = 0; args[i]; i++) {
		cr_assert_lt(i, 14);
		cmd[i + 1] = args[i];
	}
	if (!run_in(r, s, extra, cmd))
		return false;
	/* It ran, and the broker answered a creating open: the attack had its chance. */
	cr_assert(strstr(r->out, "ran=1\n"), "[%s] the attack did not run: exit %d\n%s%s", s->name, r->exit_code, r->out,
		  r->err);
	cr_assert(strstr(r->out, "brokered=ok\n"), "[%s] the broker did not answer a creating open:\n%s%s", s->name,
		  r->out, r->err);
	cr_assert(strstr(r->out, "seccomp=2\n"), "[%s] the command runs under no seccomp filter, so no broker:\n%s",
		  s->name, r->out);
	return true;
}


/* What the helper read (Name, Pid) must be the helper itself (self_name, self_pid). */
static void expect_the_callers_own(const struct dsh_proc *r, const char *what, const struct dsh_test_setting *s)
{
	const char *self_pid = dsh_out_val(r->out, "self_pid"), *self_name = dsh_out_val(r->out, "self_name");
	cr_expect(dsh_out_is(r->out, "pid", self_pid) && dsh_out_is(r->out, "name", self_name),
		  "[%s] %s is not the caller's own (caller: %s, pid %s); it read Name: %s, Pid: %s\n%s", s->name, what,
		  self_name, self_pid, dsh_out_val(r->out, "name"), dsh_out_val(r->out, "pid"), r->out);
}

/* /proc/self through the broker (a creating open) is the caller, not init ("Name: dshbox"). */
Test(broker_caller, proc_self_status_is_the_callers)
{
	const struct dsh_test_setting *ss[] = { &WORKSPACE, &FULL, &NESTED, &NO_LANDLOCK };
	const char *paths[] = { "/proc/self/status", "/proc/thread-self/status" };
	for (size_t i = 0; i < 4; i++)
		for (size_t p = 0; p < 2; p++) {
			struct dsh_proc r;
			const char *args[] = { "status", "creat", paths[p], NULL };
			if (!attack(&r, ss[i], NULL, args))
				continue;
			cr_expect(dsh_out_is(r.out, "open", "ok") && dsh_out_is(r.out, "read", "ok"),
				  "[%s] open(%s, O_RDONLY|O_CREAT) failed:\n%s%s", ss[i]->name, paths[p], r.out, r.err);
			expect_the_callers_own(&r, paths[p], ss[i]);
			dsh_proc_clear(&r);
		}
}

/* openat2 with the broker on: ENOSYS (programs fall back to openat), or the caller's own file. */
Test(broker_caller, openat2_of_proc_self_is_enosys_or_the_callers)
{
	const struct dsh_test_setting *ss[] = { &WORKSPACE, &FULL, &NESTED, &NO_LANDLOCK };
	for (size_t i = 0; i < 4; i++) {
		struct dsh_proc r;
		const char *args[] = { "status", "openat2", "/proc/self/status", NULL };
		if (!attack(&r, ss[i], NULL, args))
			continue;
		if (!dsh_out_is(r.out, "open", "ENOSYS")) {
			cr_expect(dsh_out_is(r.out, "open", "ok"), "[%s] openat2: %s", ss[i]->name, r.out);
			expect_the_callers_own(&r, "openat2(/proc/self/status)", ss[i]);
		}
		dsh_proc_clear(&r);
	}
}

/* A creating open of init's /proc entry (pid 1 under linux-ns; the command's parent under the
   landlock backend) is refused: only the caller's own /proc/PID tree. */
Test(broker_caller, creating_open_of_inits_proc_is_refused)
{
	const struct dsh_test_setting *ss[] = { &WORKSPACE, &FULL };
	for (size_t i = 0; i < 2; i++) {
		struct dsh_proc r;
		const char *creat[] = { "status", "creat", "/proc/parent/status", NULL };
		if (!attack(&r, ss[i], NULL, creat))
			continue;
		cr_expect(dsh_out_is(r.out, "open", "EACCES"), "[%s] open(/proc/%s/status, O_CREAT) of init: want EACCES\n%s",
			  ss[i]->name, dsh_out_val(r.out, "parent_pid"), r.out);
		dsh_proc_clear(&r);
		const char *o2[] = { "status", "openat2", "/proc/parent/status", NULL };
		if (!attack(&r, ss[i], NULL, o2))
			continue;
		cr_expect(dsh_out_is(r.out, "open", "ENOSYS") || dsh_out_is(r.out, "open", "EACCES"),
			  "[%s] openat2(/proc/%s/status) of init: want ENOSYS or EACCES\n%s", ss[i]->name,
			  dsh_out_val(r.out, "parent_pid"), r.out);
		dsh_proc_clear(&r);
	}
}

/*
 * A forged "exited 0" frame written into init's status pipe to dshbox through /proc/self/fd/N: the
 * command exits 7, and dshbox must say 7.  "forged=" shows the attack finished its loop.
 */
Test(broker_caller, forged_exit_status_through_inits_pipe)
{
	const struct dsh_test_setting *ss[] = { &WORKSPACE, &FULL, &NO_LANDLOCK };
	for (size_t i = 0; i < 3; i++) {
		struct dsh_proc r;
		const char *args[] = { "forge-status", NULL };
		if (!attack(&r, ss[i], NULL, args))
			continue;
		cr_expect(strstr(r.out, "forged="), "[%s] the attack did not finish:\n%s%s", ss[i]->name, r.out, r.err);
		cr_expect_eq(r.exit_code, 7, "[%s] the command exited 7, dshbox said %d (a forged frame?)\n%s%s",
			     ss[i]->name, r.exit_code, r.out, r.err);
		cr_expect(dsh_out_is(r.out, "pipes", "0"), "[%s] the command reached pipes it does not hold:\n%s", ss[i]->name,
			  r.out);
		dsh_proc_clear(&r);
	}
}

/* The first word of this process's command line on the host: what a leak of it would show. */
static char *own_cmdline(void)
{
	_cleanup_free_ char *path = NULL;
	cr_assert(asprintf(&path, "/proc/%d/cmdline", (int)getpid()) > 0);
	char *s = dsh_test_read_file(path);
	cr_assert(s && *s, "cannot read %s", path);
	return s; /* NUL-terminated at the first argument */
}

/*
 * danger-full-access: /proc/self/fd/N/HOSTPID/cmdline reaches this host process through init's
 * clone of the host's /proc (linux-ns).  Under the landlock backend the command shares the host's
 * pid namespace anyway; what must not open is a path through init's descriptors.
 */
Test(broker_caller, host_processes_through_inits_proc)
{
	_cleanup_free_ char *mine = own_cmdline(), *pid = NULL;
	cr_assert(asprintf(&pid, "%d", (int)getpid()) > 0);
	struct dsh_proc r;
	const char *args[] = { "host-proc", pid, NULL };
	if (!attack(&r, &FULL, NULL, args))
		return;
	cr_expect(dsh_out_is(r.out, "read", "0"), "a host process's /proc was read through init's descriptors:\n%s", r.out);
	cr_expect_null(strstr(r.out, mine), "this host process's command line (%s) leaked:\n%s", mine, r.out);
	if (landlock_backend())
		cr_log_info("landlock backend: init holds no clone of the host's /proc; checked all the same");
	dsh_proc_clear(&r);
}

/*
 * As root, /proc/self/fd/N/sys/kernel/core_pattern through init's host /proc opened for writing
 * (opened and closed: nothing is ever written).  As another user core_pattern is not theirs to
 * write at all, so the open fails either way; the check is the same.
 */
Test(broker_caller, core_pattern_through_inits_proc)
{
	struct dsh_proc r;
	const char *args[] = { "core-pattern", NULL };
	if (!attack(&r, &FULL, NULL, args))
		return;
	cr_expect(dsh_out_is(r.out, "opened", "0"), "the host's core_pattern opened for writing through init:\n%s", r.out);
	if (geteuid() != 0)
		cr_log_info("uid %u: core_pattern is root's; this check has teeth only as root", (unsigned)geteuid());
	dsh_proc_clear(&r);
}

/*
 * /proc/self/mem opened read-write through the broker (O_CREAT) must be the command's own memory
 * (a static marker reads back, a byte written shows in the variable), and init's — /proc/1/mem,
 * or the command's parent under the landlock backend — must not open at all.  The settings are
 * those where Landlock does not refuse the command's writes under /proc (danger-full-access,
 * nestedSandbox under linux-ns, no Landlock): there the open of its own mem must succeed, which is
 * the attack's chance (as root, today, it opens init's).  By openat2: ENOSYS, or the same.
 */
Test(broker_caller, inits_memory_through_proc_mem)
{
	const struct dsh_test_setting *ss[] = { &FULL, &NESTED, &NO_LANDLOCK };
	const char *routes[] = { "creat", "openat2" };
	for (size_t i = 0; i < 3; i++)
		for (size_t k = 0; k < 2; k++) {
			if (ss[i] == &NESTED && landlock_backend()) {
				cr_log_info("landlock backend, nestedSandbox: Landlock still refuses writes under /proc");
				continue;
			}
			struct dsh_proc r;
			const char *args[] = { "mem", routes[k], NULL };
			if (!attack(&r, ss[i], NULL, args))
				continue;
			if (strcmp(routes[k], "creat") == 0 || !dsh_out_is(r.out, "self_open", "ENOSYS"))
				cr_expect(dsh_out_is(r.out, "self_open", "ok") && dsh_out_is(r.out, "self_same", "1") &&
						  dsh_out_is(r.out, "self_changed", "1"),
					  "[%s, %s] /proc/self/mem did not open as the caller's own memory:\n%s", ss[i]->name,
					  routes[k], r.out);
			cr_expect(!dsh_out_is(r.out, "parent_open", "ok"), "[%s, %s] init's /proc/%s/mem opened read-write:\n%s",
				  ss[i]->name, routes[k], dsh_out_val(r.out, "parent_pid"), r.out);
			cr_expect(!dsh_out_is(r.out, "pid1_open", "ok"), "[%s, %s] /proc/1/mem opened read-write:\n%s", ss[i]->name,
				  routes[k], r.out);
			dsh_proc_clear(&r);
		}
}

/* FS_IOC_GETFLAGS and FS_IOC_FSGETXATTR of a host file, as a string to compare. */
static char *host_flags(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	int flags = 0;
	struct fsxattr fx = { 0 };
	cr_assert_eq(ioctl(fd, FS_IOC_GETFLAGS, &flags), 0, "FS_IOC_GETFLAGS %s: %s", path, strerror(errno));
	cr_assert_eq(ioctl(fd, FS_IOC_FSGETXATTR, &fx), 0, "FS_IOC_FSGETXATTR %s: %s", path, strerror(errno));
	char *s = NULL;
	cr_assert(asprintf(&s, "flags=%#x xflags=%#x", (unsigned)flags, fx.fsx_xflags) > 0);
	return s;
}

/* Whether the host's filesystem lets the owner set +d +A on a scratch file (ext4 does). */
static void require_chattr(void)
{
	_cleanup_free_ char *probe = NULL;
	cr_assert(asprintf(&probe, "%s/chattr-probe", top) > 0);
	dsh_test_write_file(probe, "x\n");
	dsh_test_require_chattr(probe);
}

/* chattr's ioctls on a file opened read-only, r- and outside the writable roots: refused by both
   backends; the host file's flags are the oracle. */
Test(broker_caller, chattr_of_a_read_only_file)
{
	require_chattr();
	_cleanup_free_ char *ro = NULL, *rule = NULL;
	cr_assert(asprintf(&ro, "%s/ro.txt", top) > 0);
	cr_assert(asprintf(&rule, "r- %s", ro) > 0);
	dsh_test_write_file(ro, "keep\n");
	_cleanup_free_ char *before = host_flags(ro);
	const char *extra[] = { "--access", rule, NULL };
	const char *args[] = { "chattr", ro, NULL };
	struct dsh_proc r;
	if (!attack(&r, &WORKSPACE, extra, args))
		return;
	cr_expect(dsh_out_is(r.out, "open", "ok") && dsh_out_is(r.out, "getflags", "ok"), "the file was not even readable:\n%s%s", r.out,
		  r.err);
	cr_expect(!dsh_out_is(r.out, "setflags", "ok"), "FS_IOC_SETFLAGS on an r- file succeeded:\n%s", r.out);
	cr_expect(!dsh_out_is(r.out, "fssetxattr", "ok"), "FS_IOC_FSSETXATTR on an r- file succeeded:\n%s", r.out);
	_cleanup_free_ char *after = host_flags(ro);
	cr_expect_str_eq(after, before, "the r- file's attributes changed on the host");
	dsh_proc_clear(&r);
}

/* A host listener on an abstract name, non-blocking: after the run, accept() and recv() must find
   nothing. */
static int abstract_socket(int type, const char *name)
{
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	cr_assert_geq(fd, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	memcpy(sa.sun_path + 1, name, n);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)), 0,
		     "bind @%s: %s", name, strerror(errno));
	if (type == SOCK_STREAM)
		cr_assert_eq(listen(fd, 8), 0);
	return fd;
}

/*
 * With the network on, an abstract name this run did not bind (a host listener's) is out of reach
 * — connect() and sendto() — while a name the command bound in the same run is reachable.
 */
Test(broker_caller, abstract_socket_bound_outside_the_run)
{
	const struct dsh_test_setting *ss[] = { &WORKSPACE, &FULL, &NO_LANDLOCK };
	for (size_t i = 0; i < 3; i++) {
		char stream[64], dgram[64];
		snprintf(stream, sizeof(stream), "dshbox-caller-%d-%zu", (int)getpid(), i);
		snprintf(dgram, sizeof(dgram), "dshbox-caller-dgram-%d-%zu", (int)getpid(), i);
		int ls = abstract_socket(SOCK_STREAM, stream), ld = abstract_socket(SOCK_DGRAM, dgram);
		const char *extra[] = { "--network", "on", NULL };
		const char *args[] = { "abstract", stream, dgram, NULL };
		struct dsh_proc r;
		if (attack(&r, ss[i], extra, args)) {
			cr_expect(!dsh_out_is(r.out, "host_connect", "ok"), "[%s] connect() to the host's @%s:\n%s", ss[i]->name,
				  stream, r.out);
			cr_expect(!dsh_out_is(r.out, "host_sendto", "ok"), "[%s] sendto() the host's @%s:\n%s", ss[i]->name, dgram,
				  r.out);
			cr_expect(dsh_out_is(r.out, "own_connect", "ok") && dsh_out_is(r.out, "own_sendto", "ok"),
				  "[%s] a name the command bound itself was not reachable:\n%s%s", ss[i]->name, r.out, r.err);
			int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
			int e = errno;
			cr_expect(c < 0 && e == EAGAIN, "[%s] the host's listener accepted a connection from inside",
				  ss[i]->name);
			if (c >= 0)
				close(c);
			char b;
			ssize_t n = recv(ld, &b, 1, 0);
			e = errno;
			cr_expect(n < 0 && e == EAGAIN, "[%s] the host's datagram socket received from inside", ss[i]->name);
			dsh_proc_clear(&r);
		}
		close(ls), close(ld);
	}
}

/*
 * nestedSandbox: a file system the command mounts itself is judged by what it stores.  Its own
 * tmpfs holds no host file, but an overlay's upper layer is a host directory written through it:
 * a name a rule covers (a .pem file, under a rule on every .pem) made through the overlay must be
 * refused like one made at its host path; the broker, which does not place the upper layer, refuses
 * every name made there.  Run as nobody when the test is root (a nested user
 * namespace cannot map uid 0 for a creator without CAP_SETFCAP).  Host oracle: nothing named k.pem
 * in the upper layer.
 */
Test(broker_caller, a_protected_name_made_through_the_commands_own_overlay)
{
	if (landlock_backend()) {
		/* Its nestedSandbox keeps the mount refusals: no overlay can be mounted inside. */
		cr_log_info("landlock backend: nestedSandbox keeps the mount family refused; nothing to mount");
		return;
	}
	/* A kernel with overlayfs as a module not loaded (the vmtest guest's) cannot mount one here. */
	_cleanup_free_ char *fs = dsh_test_read_file("/proc/filesystems");
	if (!fs || !strstr(fs, "\toverlay\n"))
		DSH_SKIP("this kernel has no overlay file system loaded (/proc/filesystems)");
	_cleanup_free_ char *l = NULL, *u = NULL, *w = NULL, *m = NULL, *script = NULL, *planted = NULL, *made = NULL;
	cr_assert(asprintf(&l, "%s/lower", ws) > 0 && asprintf(&u, "%s/upper", ws) > 0 && asprintf(&w, "%s/work", ws) > 0 &&
		  asprintf(&m, "%s/merged", ws) > 0 && asprintf(&planted, "%s/k.pem", u) > 0 &&
		  asprintf(&made, "%s/k.txt", u) > 0);
	cr_assert(mkdir(l, 0755) == 0 && mkdir(u, 0755) == 0 && mkdir(w, 0755) == 0 && mkdir(m, 0755) == 0);
	cr_assert(asprintf(&script,
			   "unshare -Urm sh -c 'mount -t overlay overlay -o lowerdir=%s,upperdir=%s,workdir=%s %s "
			   "&& echo mounted=1; echo y > %s/k.txt && echo txt=ok; echo x > %s/k.pem && echo pem=ok'; true",
			   l, u, w, m, m, m) > 0);
	const char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
			       dsh_test_dshbox(), "run", "--backend", backend(), "--config", nested_cfg, "--workspace", ws,
			       "--cwd", ws, "--access", "-- **/*.pem", "--", "/bin/sh", "-c", script, NULL };
	const char *const *run = argv + 5;
	if (geteuid() == 0) {
		_cleanup_free_ char *own = NULL;
		cr_assert(asprintf(&own, "chown -R 65534:65534 '%s' && chmod 755 '%s'", top, top) > 0);
		cr_assert_eq(system(own), 0);
		run = argv;
	}
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)run, env, NULL, &r), 0);
	cr_assert(dsh_out_is(r.out, "mounted", "1"), "the overlay was not mounted inside: %s%s", r.out, r.err);
	/* The overlay's merged directory is not where the broker sees the upper layer: every name made
	   through it is refused (docs/security.md), the ordinary one too. */
	cr_expect(!dsh_out_is(r.out, "txt", "ok") && access(made, F_OK) != 0,
		  "a name made through the command's own overlay was not refused: %s%s", r.out, r.err);
	cr_expect(!dsh_out_is(r.out, "pem", "ok"), "a name -- **/*.pem covers was made through the overlay: %s", r.out);
	cr_expect_neq(access(planted, F_OK), 0, "%s exists on the host", planted);
	dsh_proc_clear(&r);
}
