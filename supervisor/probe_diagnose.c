/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "supervisor/probe.h"

/*
 * Why a probe failed and what a platform engineer changes (issue 22 item 2).  The machine is read
 * once into struct dsh_probe_env (dsh_probe_env_read); everything else is a pure function of it and
 * of the probe's result, so that the tests give it a container, a seccomp filter or a masked /proc
 * without having one.
 */

/* Entries that a container's masked /proc covers (Docker's and Kubernetes' default masked and
   read-only paths).  /proc/sys/fs/binfmt_misc, mounted by systemd on ordinary hosts, is not one. */
static const char *const masked_paths[] = { "/proc/kcore",	  "/proc/keys",	 "/proc/timer_list", "/proc/sched_debug",
					    "/proc/latency_stats", "/proc/acpi",  "/proc/scsi",	     "/proc/asound",
					    "/proc/sys",	   "/proc/sysrq-trigger", "/proc/irq", "/proc/bus",
					    NULL };

bool dsh_probe_proc_masked(const char *mountinfo)
{
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...": the fifth field. */
	for (const char *line = mountinfo; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char mp[256] = "";
		char copy[1024];
		snprintf(copy, sizeof(copy), "%.*s", (int)(len < sizeof(copy) ? len : sizeof(copy) - 1), line);
		if (sscanf(copy, "%*s %*s %*s %*s %255s", mp) == 1)
			for (size_t i = 0; masked_paths[i]; i++)
				if (strcmp(mp, masked_paths[i]) == 0)
					return true;
		line = end ? end + 1 : NULL;
	}
	return false;
}

const char *dsh_probe_container_kind(bool containerenv, bool dockerenv, const char *pid1_container,
				     const char *cgroup, bool kubernetes_secrets)
{
	if (kubernetes_secrets)
		return "kubernetes";
	if (cgroup && strstr(cgroup, "kubepods"))
		return "kubernetes";
	if (containerenv || (pid1_container && strcmp(pid1_container, "podman") == 0) || (cgroup && strstr(cgroup, "libpod")))
		return "podman";
	if (dockerenv || (cgroup && strstr(cgroup, "docker")))
		return "docker";
	if (pid1_container && *pid1_container)
		return "container";
	if (cgroup && (strstr(cgroup, "containerd") || strstr(cgroup, "crio") || strstr(cgroup, "/lxc")))
		return "container";
	return NULL;
}

static char *read_all(const char *path, size_t max)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *buf = malloc(max + 1);
	if (buf) {
		size_t n = fread(buf, 1, max, f);
		buf[n] = '\0';
	}
	fclose(f);
	return buf;
}

static long read_long(const char *path)
{
	_cleanup_free_ char *s = read_all(path, 64);
	char *end;
	long v = s ? strtol(s, &end, 10) : -1;
	return s && end != s ? v : -1;
}

/* container= in pid 1's environment (podman, systemd-nspawn, lxc set it); "" when unreadable. */
static void pid1_container(char *out, size_t size)
{
	out[0] = '\0';
	_cleanup_fclose_ FILE *f = fopen("/proc/1/environ", "re");
	char var[256];
	size_t n = 0;
	for (int ch; f && (ch = fgetc(f)) != EOF;) {
		if (ch != '\0') {
			if (n < sizeof(var) - 1)
				var[n++] = (char)ch;
			continue;
		}
		var[n] = '\0';
		n = 0;
		if (strncmp(var, "container=", 10) == 0) {
			size_t len = strnlen(var + 10, size - 1);
			memcpy(out, var + 10, len);
			out[len] = '\0';
			return;
		}
	}
}

void dsh_probe_env_read(struct dsh_probe_env *e)
{
	memset(e, 0, sizeof(*e));
	_cleanup_free_ char *status = read_all("/proc/self/status", 8192);
	const char *s = status ? strstr(status, "\nSeccomp:") : NULL;
	e->seccomp_mode = s ? atoi(s + 9) : 0;
	char p1[64];
	pid1_container(p1, sizeof(p1));
	_cleanup_free_ char *cgroup = read_all("/proc/self/cgroup", 4096);
	const char *kind = dsh_probe_container_kind(access("/run/.containerenv", F_OK) == 0,
						    access("/.dockerenv", F_OK) == 0, p1, cgroup,
						    access("/var/run/secrets/kubernetes.io", F_OK) == 0);
	if (kind)
		snprintf(e->container, sizeof(e->container), "%s", kind);
	_cleanup_free_ char *mountinfo = read_all("/proc/self/mountinfo", 1 << 20);
	e->proc_masked = dsh_probe_proc_masked(mountinfo);
	e->max_user_namespaces = read_long("/proc/sys/user/max_user_namespaces");
	e->unprivileged_userns_clone = read_long("/proc/sys/kernel/unprivileged_userns_clone");
	e->apparmor_restrict_userns = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	e->inside_dshbox = dsh_probe_inside_dshbox();
}

static bool needs_namespaces(enum dsh_probe_id id)
{
	return id == DSH_PROBE_USERNS || id == DSH_PROBE_MOUNT_API || id == DSH_PROBE_NETNS_LOOPBACK ||
	       id == DSH_PROBE_PROCFS;
}

static bool ptrace_class(enum dsh_probe_id id)
{
	return id == DSH_PROBE_VM_READV || id == DSH_PROBE_PIDFD_GETFD;
}

/* The step failed at creating the user namespace itself (not a later call inside it). */
static bool at_userns(const struct dsh_probe_result *r)
{
	return strncmp(r->step, "unshare(CLONE_NEWUSER", 21) == 0 || strstr(r->step, "_map") ||
	       strstr(r->step, "setgroups") || strstr(r->step, "new namespace");
}

#define SECCOMP_FIX                                                                                               \
	"run the container with the profile dshbox ships (RuntimeDefault plus what dshbox needs): docker/podman run " \
	"--security-opt seccomp=tools/seccomp/dshbox-pod.json; Kubernetes: securityContext.seccompProfile "       \
	"{type: Localhost, localhostProfile: dshbox-pod.json}"

static void say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* The sysctls and AppArmor: only where they are what refuses user namespaces. */
static bool userns_switches(const struct dsh_probe_result *r, const struct dsh_probe_env *e, struct dsh_probe_diagnosis *d)
{
	if (!needs_namespaces(r->id) || !at_userns(r))
		return false;
	if (e->max_user_namespaces == 0) {
		d->cause = DSH_CAUSE_SYSCTL;
		say(d->why, sizeof(d->why), "sysctl user.max_user_namespaces is 0");
		say(d->fix, sizeof(d->fix), "sysctl -w user.max_user_namespaces=10000 (on the node, for a container)");
		return true;
	}
	if (e->unprivileged_userns_clone == 0) {
		d->cause = DSH_CAUSE_SYSCTL;
		say(d->why, sizeof(d->why), "sysctl kernel.unprivileged_userns_clone is 0");
		say(d->fix, sizeof(d->fix), "sysctl -w kernel.unprivileged_userns_clone=1 (on the node, for a container)");
		return true;
	}
	if (e->apparmor_restrict_userns == 1 && r->code == EPERM && !(e->container[0] && e->seccomp_mode == 2)) {
		d->cause = DSH_CAUSE_APPARMOR;
		say(d->why, sizeof(d->why),
		    "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)");
		say(d->fix, sizeof(d->fix), "give dshbox a profile with 'userns,': the AppArmor profile tools/apparmor/dshbox "
					    "(make install-apparmor); or use --backend landlock");
		return true;
	}
	return false;
}

void dsh_probe_diagnose(const struct dsh_probe_result *r, const struct dsh_probe_env *e, struct dsh_probe_diagnosis *d)
{
	memset(d, 0, sizeof(*d));
	if (r->ok)
		return;
	bool in_container = e->container[0] != '\0';
	const char *where = in_container ? e->container : "";
	if (r->code == ENOSYS) {
		if (r->id == DSH_PROBE_CLONE3 && e->seccomp_mode == 2) {
			d->cause = DSH_CAUSE_SECCOMP;
			say(d->why, sizeof(d->why), "a seccomp filter answers clone3 with ENOSYS (moby's profile does)");
			say(d->fix, sizeof(d->fix), "nothing needed: dshbox falls back to clone()");
			return;
		}
		d->cause = DSH_CAUSE_KERNEL;
		say(d->why, sizeof(d->why), "the kernel lacks %s (ENOSYS)", r->step);
		say(d->fix, sizeof(d->fix), "%s", r->remedy ? r->remedy : "a newer kernel");
		return;
	}
	/* The switches first: user.max_user_namespaces=0 answers ENOSPC. */
	if (userns_switches(r, e, d))
		return;
	if (r->code != EPERM && r->code != EACCES)
		return; /* a timeout, a crash, an odd errno: the entry's own remedy says what is known */
	if (e->inside_dshbox && needs_namespaces(r->id)) {
		d->cause = DSH_CAUSE_NESTED;
		say(d->why, sizeof(d->why), "inside a dshbox sandbox, which refuses new user namespaces");
		say(d->fix, sizeof(d->fix), "give the outer sandbox nestedSandbox: true");
		return;
	}
	/* A fresh procfs refused where /proc has mounts over its entries: the kernel will not mount a
	   procfs more revealing than the one it sees (mount_too_revealing), seccomp or not. */
	if (r->id == DSH_PROBE_PROCFS && e->proc_masked && !at_userns(r)) {
		d->cause = DSH_CAUSE_MASKED_PROC;
		say(d->why, sizeof(d->why), "/proc is masked%s%s (mounts over /proc/kcore and others in "
		    "/proc/self/mountinfo): the kernel refuses a fresh procfs", in_container ? " by the " : "",
		    in_container ? where : "");
		say(d->fix, sizeof(d->fix), "unmask /proc: docker run --security-opt systempaths=unconfined; podman run "
					    "--security-opt unmask=/proc/*; Kubernetes: securityContext.procMount: Unmasked "
					    "with hostUsers: false");
		return;
	}
	if (e->seccomp_mode == 2 && in_container) {
		d->cause = DSH_CAUSE_SECCOMP;
		say(d->why, sizeof(d->why), "the %s runtime's seccomp profile refuses %s with EPERM (Seccomp: 2 in "
		    "/proc/self/status)", where, r->step);
		if (ptrace_class(r->id))
			say(d->fix, sizeof(d->fix), "%s; or add CAP_SYS_PTRACE (docker/podman --cap-add SYS_PTRACE; "
			    "Kubernetes: securityContext.capabilities.add: [SYS_PTRACE]), with which the default profile "
			    "allows it", SECCOMP_FIX);
		else
			say(d->fix, sizeof(d->fix), "%s", SECCOMP_FIX);
		return;
	}
	if (e->seccomp_mode == 2) {
		d->cause = DSH_CAUSE_SECCOMP;
		say(d->why, sizeof(d->why), "a seccomp filter on this process refuses %s with EPERM (not a container "
		    "runtime dshbox recognises: a service manager's SystemCallFilter=, or a sandbox around this one)",
		    r->step);
		say(d->fix, sizeof(d->fix), "allow the call in that filter (systemd: SystemCallFilter=; the calls dshbox "
					    "needs are those of tools/seccomp/dshbox-pod.json beyond the runtime default)");
		return;
	}
	if (ptrace_class(r->id)) {
		d->cause = DSH_CAUSE_LSM;
		say(d->why, sizeof(d->why), "%s refused without a seccomp filter: Yama (kernel.yama.ptrace_scope) or "
		    "an LSM", r->step);
		say(d->fix, sizeof(d->fix), "kernel.yama.ptrace_scope at most 1, or allow ptrace-read access to "
					    "its own children in the LSM policy");
		return;
	}
	if (needs_namespaces(r->id)) {
		d->cause = DSH_CAUSE_LSM;
		say(d->why, sizeof(d->why), "refused with EPERM%s, no sysctl and no seccomp filter says why: an LSM "
		    "(SELinux, AppArmor) or missing capabilities of the %s", in_container ? " in a container" : "",
		    in_container ? "container" : "caller");
		say(d->fix, sizeof(d->fix), "%s", in_container ? "Kubernetes: hostUsers: false gives the pod a user "
					    "namespace of its own; otherwise see the LSM's audit log"
							   : "see the LSM's audit log (dmesg, ausearch)");
	}
}

const char *dsh_probe_cause_name(enum dsh_probe_cause c)
{
	switch (c) {
	case DSH_CAUSE_KERNEL: return "kernel";
	case DSH_CAUSE_SYSCTL: return "sysctl";
	case DSH_CAUSE_APPARMOR: return "apparmor";
	case DSH_CAUSE_SECCOMP: return "seccomp";
	case DSH_CAUSE_MASKED_PROC: return "masked-proc";
	case DSH_CAUSE_NESTED: return "nested-dshbox";
	case DSH_CAUSE_LSM: return "lsm";
	case DSH_CAUSE_UNKNOWN: break;
	}
	return "unknown";
}
