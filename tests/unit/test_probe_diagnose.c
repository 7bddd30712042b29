/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `dshbox probe` names the cause of a refusal and the fix (issue 22 item 2), decided from what the
 * machine says — injected here, never this machine's state: a container runtime's seccomp profile
 * (EPERM under Seccomp: 2 in a container), a kernel without the call (ENOSYS), a masked /proc, the
 * sysctls, AppArmor (only where it is the cause).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "supervisor/probe.h"

static struct dsh_probe_result failed(enum dsh_probe_id id, int code, const char *step)
{
	struct dsh_probe_result r = { .id = id, .ok = false, .code = code, .remedy = "the entry's remedy" };
	snprintf(r.step, sizeof(r.step), "%s", step);
	return r;
}

/* An ordinary host: no filter, no container, the switches on. */
static struct dsh_probe_env host(void)
{
	return (struct dsh_probe_env){ .seccomp_mode = 0, .max_user_namespaces = 63000, .unprivileged_userns_clone = -1,
				       .apparmor_restrict_userns = -1 };
}

static struct dsh_probe_env container(const char *kind)
{
	struct dsh_probe_env e = host();
	e.seccomp_mode = 2;
	snprintf(e.container, sizeof(e.container), "%s", kind);
	return e;
}

static struct dsh_probe_diagnosis diagnose(struct dsh_probe_result r, struct dsh_probe_env e)
{
	struct dsh_probe_diagnosis d;
	dsh_probe_diagnose(&r, &e, &d);
	return d;
}

Test(probe_diagnose, a_container_profile_refusing_user_namespaces)
{
	struct dsh_probe_diagnosis d =
		diagnose(failed(DSH_PROBE_USERNS, EPERM, "unshare(CLONE_NEWUSER|CLONE_NEWNS)"), container("docker"));
	cr_expect_eq(d.cause, DSH_CAUSE_SECCOMP);
	cr_expect(strstr(d.why, "docker") && strstr(d.why, "seccomp profile"), "%s", d.why);
	cr_expect(strstr(d.fix, "--security-opt seccomp=tools/seccomp/dshbox-pod.json"), "%s", d.fix);
	cr_expect(strstr(d.fix, "seccompProfile"), "no Kubernetes setting: %s", d.fix);
	cr_expect(!strstr(d.fix, "AppArmor") && !strstr(d.fix, "apparmor"), "AppArmor named: %s", d.fix);
}

Test(probe_diagnose, apparmor_only_where_it_is_the_cause)
{
	/* Ubuntu 24.04 on the host: AppArmor's switch on, no filter. */
	struct dsh_probe_env e = host();
	e.apparmor_restrict_userns = 1;
	struct dsh_probe_diagnosis d = diagnose(failed(DSH_PROBE_USERNS, EPERM, "mount(MS_PRIVATE) in the new namespace"), e);
	cr_expect_eq(d.cause, DSH_CAUSE_APPARMOR);
	cr_expect(strstr(d.fix, "userns,"), "%s", d.fix);
	/* The same switch seen from a container whose profile refuses the call: the profile is the cause. */
	struct dsh_probe_env c = container("podman");
	c.apparmor_restrict_userns = 1;
	d = diagnose(failed(DSH_PROBE_USERNS, EPERM, "unshare(CLONE_NEWUSER|CLONE_NEWNS)"), c);
	cr_expect_eq(d.cause, DSH_CAUSE_SECCOMP);
	cr_expect(!strstr(d.fix, "AppArmor"), "%s", d.fix);
	/* A later call inside a namespace that was made: not the user-namespace switch. */
	d = diagnose(failed(DSH_PROBE_MOUNT_API, EPERM, "fsmount"), e);
	cr_expect_neq(d.cause, DSH_CAUSE_APPARMOR);
}

Test(probe_diagnose, enosys_is_the_kernel_eperm_is_the_profile)
{
	struct dsh_probe_diagnosis d = diagnose(failed(DSH_PROBE_MOUNT_API, ENOSYS, "mount_setattr"), container("docker"));
	cr_expect_eq(d.cause, DSH_CAUSE_KERNEL, "ENOSYS blamed on %s", dsh_probe_cause_name(d.cause));
	cr_expect(strstr(d.why, "mount_setattr"), "%s", d.why);
	d = diagnose(failed(DSH_PROBE_MOUNT_API, EPERM, "fsopen(tmpfs)"), container("docker"));
	cr_expect_eq(d.cause, DSH_CAUSE_SECCOMP);
	/* A profile's ENOSYS for clone3 (moby's): nothing to change, dshbox falls back. */
	d = diagnose(failed(DSH_PROBE_CLONE3, ENOSYS, "clone3"), container("docker"));
	cr_expect_eq(d.cause, DSH_CAUSE_SECCOMP);
	cr_expect(strstr(d.fix, "nothing needed"), "%s", d.fix);
}

Test(probe_diagnose, the_broker_calls_name_cap_sys_ptrace)
{
	const enum dsh_probe_id ids[] = { DSH_PROBE_VM_READV, DSH_PROBE_PIDFD_GETFD };
	const char *steps[] = { "process_vm_readv", "pidfd_getfd" };
	for (int i = 0; i < 2; i++) {
		struct dsh_probe_diagnosis d = diagnose(failed(ids[i], EPERM, steps[i]), container("kubernetes"));
		cr_expect_eq(d.cause, DSH_CAUSE_SECCOMP);
		cr_expect(strstr(d.fix, "SYS_PTRACE") && strstr(d.fix, "dshbox-pod.json"), "%s", d.fix);
		cr_expect(strstr(d.why, "kubernetes"), "%s", d.why);
	}
	/* No filter at all: not a profile; Yama or an LSM. */
	struct dsh_probe_diagnosis d = diagnose(failed(DSH_PROBE_VM_READV, EPERM, "process_vm_readv"), host());
	cr_expect_eq(d.cause, DSH_CAUSE_LSM);
	cr_expect(!strstr(d.fix, "--security-opt"), "%s", d.fix);
}

Test(probe_diagnose, a_masked_proc_refuses_a_fresh_procfs)
{
	struct dsh_probe_env e = container("podman");
	e.proc_masked = true;
	struct dsh_probe_diagnosis d = diagnose(failed(DSH_PROBE_PROCFS, EPERM, "fsmount(proc)"), e);
	cr_expect_eq(d.cause, DSH_CAUSE_MASKED_PROC);
	cr_expect(strstr(d.fix, "systempaths=unconfined") && strstr(d.fix, "unmask=/proc/*") &&
			  strstr(d.fix, "procMount: Unmasked") && strstr(d.fix, "hostUsers: false"),
		  "%s", d.fix);
	/* Refused before any procfs, at the user namespace: the profile, not the mask. */
	d = diagnose(failed(DSH_PROBE_PROCFS, EPERM, "unshare(CLONE_NEWUSER|CLONE_NEWNS)"), e);
	cr_expect_eq(d.cause, DSH_CAUSE_SECCOMP);
}

Test(probe_diagnose, sysctls_and_nesting)
{
	struct dsh_probe_env e = host();
	e.max_user_namespaces = 0;
	struct dsh_probe_diagnosis d = diagnose(failed(DSH_PROBE_USERNS, ENOSPC, "unshare(CLONE_NEWUSER|CLONE_NEWNS)"), e);
	/* ENOSPC is what max_user_namespaces=0 gives. */
	cr_expect_eq(d.cause, DSH_CAUSE_SYSCTL);
	cr_expect(strstr(d.fix, "user.max_user_namespaces"), "%s", d.fix);
	struct dsh_probe_env n = host();
	n.inside_dshbox = true;
	n.seccomp_mode = 2;
	d = diagnose(failed(DSH_PROBE_USERNS, EPERM, "unshare(CLONE_NEWUSER|CLONE_NEWNS)"), n);
	cr_expect_eq(d.cause, DSH_CAUSE_NESTED);
	cr_expect(strstr(d.fix, "nestedSandbox: true"), "%s", d.fix);
	/* A filter outside any container: not named as a container's. */
	struct dsh_probe_env f = host();
	f.seccomp_mode = 2;
	d = diagnose(failed(DSH_PROBE_USERNS, EPERM, "unshare(CLONE_NEWUSER|CLONE_NEWNS)"), f);
	cr_expect_eq(d.cause, DSH_CAUSE_SECCOMP);
	cr_expect(!strstr(d.fix, "--security-opt"), "%s", d.fix);
}

Test(probe_diagnose, the_detection_inputs)
{
	static const char host_mi[] =
		"22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw\n"
		"23 22 0:22 / /proc/sys/fs/binfmt_misc rw,relatime shared:14 - autofs systemd-1 rw\n";
	static const char docker_mi[] =
		"600 590 0:60 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
		"601 600 0:60 /bus /proc/bus ro,nosuid,nodev,noexec,relatime - proc proc rw\n"
		"610 600 0:64 /null /proc/kcore rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755\n";
	cr_expect(!dsh_probe_proc_masked(host_mi), "an ordinary host's binfmt_misc taken for a mask");
	cr_expect(dsh_probe_proc_masked(docker_mi));
	cr_expect(!dsh_probe_proc_masked(""));
	cr_expect_str_eq(dsh_probe_container_kind(true, false, "", "0::/", false), "podman");
	cr_expect_str_eq(dsh_probe_container_kind(false, true, "", "0::/", false), "docker");
	cr_expect_str_eq(dsh_probe_container_kind(false, false, "", "0::/kubepods/besteffort/pod1/abc", false),
			 "kubernetes");
	cr_expect_str_eq(dsh_probe_container_kind(false, false, "", "0::/", true), "kubernetes");
	cr_expect_str_eq(dsh_probe_container_kind(false, false, "lxc", "0::/", false), "container");
	cr_expect_null(dsh_probe_container_kind(false, false, "", "0::/user.slice/user-1000.slice", false));
}
