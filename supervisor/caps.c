/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <cap-ng.h>

#include "supervisor/caps.h"

/* Every securebit that matters, each with its lock (Linux 2.6.26; NO_CAP_AMBIENT_RAISE: 4.3). */
#define SECBITS                                                                       \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |                \
	 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | \
	 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

int dsh_caps_drop_all(struct dsh_caps_result *ret, struct dsh_error **err)
{
	struct dsh_caps_result res = { 0 };
	capng_get_caps_process();
	bool setpcap = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);

	if (setpcap) {
		if (prctl(PR_SET_SECUREBITS, SECBITS, 0, 0, 0) < 0)
			return dsh_err_sys(err, errno, "caps: lock securebits");
		res.securebits_locked = true;
	}
	/* libcap-ng returns its own stage codes, not errno values: translate once, here. */
	capng_clear(setpcap ? CAPNG_SELECT_ALL : CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT);
	int rc = capng_apply(setpcap ? CAPNG_SELECT_ALL : CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT);
	if (rc < 0) {
		int e = errno ? errno : EPERM;
		return dsh_err_sys(err, e, "caps: capng_apply (stage %d)", rc);
	}
	res.bounding_cleared = setpcap;
	if (!dsh_caps_none_left(setpcap))
		return dsh_err(err, DSH_ERR_SYSTEM, EPERM, "caps: capabilities left after dropping them all");
	if (ret)
		*ret = res;
	return 0;
}

/* Ask the kernel (capget, the prctls), not libcap-ng's cached view. */
bool dsh_caps_none_left(bool bounding_too)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return false;
	for (int c = 0; c <= 63; c++) {
		int amb = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0);
		if (amb < 0 && errno == EINVAL)
			break; /* past the last capability this kernel knows */
		if (amb > 0)
			return false;
		if (bounding_too && prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0)
			return false;
	}
	return true;
}

int dsh_caps_keep(unsigned long long keep, struct dsh_error **err)
{
	capng_get_caps_process();
	if (!capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP))
		return dsh_err(err, DSH_ERR_SYSTEM, EPERM, "caps: keeping capabilities needs CAP_SETPCAP");
	/* Raising ambient capabilities is refused once NO_CAP_AMBIENT_RAISE is set: it stays clear. */
	unsigned long bits = SECBITS & ~(unsigned long)(SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED);
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		return dsh_err_sys(err, errno, "caps: lock securebits");
	capng_clear(CAPNG_SELECT_ALL);
	for (unsigned c = 0; c <= 63; c++)
		if (((keep >> c) & 1) &&
		    capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_INHERITABLE | CAPNG_BOUNDING_SET,
				 c) < 0)
			return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "caps: capability %u unknown to libcap-ng", c);
	int rc = capng_apply(CAPNG_SELECT_ALL);
	if (rc < 0) {
		int e = errno ? errno : EPERM;
		return dsh_err_sys(err, e, "caps: capng_apply (stage %d)", rc);
	}
	for (unsigned c = 0; c <= 63; c++) {
		if (!((keep >> c) & 1))
			continue;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0 && errno != EINVAL)
			return dsh_err_sys(err, errno, "caps: raise ambient capability %u", c);
	}
	/* Fail closed: the kernel's view, not libcap-ng's, holds exactly `keep` and nothing more. */
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return dsh_err_sys(err, errno, "caps: capget");
	unsigned long long eff = d[0].effective | (unsigned long long)d[1].effective << 32;
	unsigned long long prm = d[0].permitted | (unsigned long long)d[1].permitted << 32;
	unsigned long long inh = d[0].inheritable | (unsigned long long)d[1].inheritable << 32;
	bool extra = (eff | prm | inh) & ~keep;
	for (int c = 0; c <= 63 && !extra; c++) {
		int b = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (b < 0 && errno == EINVAL)
			break;
		extra = (b > 0 || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0) && !((keep >> c) & 1);
	}
	if (extra)
		return dsh_err(err, DSH_ERR_SYSTEM, EPERM, "caps: capabilities left beyond those kept");
	return 0;
}
