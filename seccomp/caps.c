/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>

#include "seccomp/caps.h"

/* Every securebit that matters, each with its lock (Linux 2.6.26; NO_CAP_AMBIENT_RAISE: 4.3). */
#define SECBITS                                                                       \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |                \
	 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | \
	 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

static int cap_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	return (int)syscall(SYS_capget, &h, d);
}

static int cap_set(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	return (int)syscall(SYS_capset, &h, d);
}

/* Every capability but keep's out of the bounding set; needs CAP_SETPCAP.  EINVAL is past the
   last capability this kernel knows (never before CAP_SETPCAP, which is 8). */
static int drop_bounding(unsigned long long keep, struct dsh_error **err)
{
	for (int c = 0; c <= 63; c++) {
		if ((keep >> c) & 1)
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
			if (errno == EINVAL && c > CAP_SETPCAP)
				break;
			return dsh_err_sys(err, errno, "caps: drop %d from the bounding set", c);
		}
	}
	return 0;
}

/*
 * The syscalls themselves, not libcap-ng: it read /proc/self/status three times and every
 * capability twice to do the same (the caps stage of the timing view, issue 14).
 */
int dsh_caps_drop_all(struct dsh_caps_result *ret, struct dsh_error **err)
{
	struct dsh_caps_result res = { 0 };
	struct __user_cap_data_struct d[2];
	if (cap_get(d) < 0)
		return dsh_err_sys(err, errno, "caps: capget");
	bool setpcap = d[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP);

	if (setpcap) {
		if (prctl(PR_SET_SECUREBITS, SECBITS, 0, 0, 0) < 0)
			return dsh_err_sys(err, errno, "caps: lock securebits");
		res.securebits_locked = true;
		/* The bounding set, while CAP_SETPCAP is still effective. */
		int r = drop_bounding(0, err);
		if (r < 0)
			return r;
		res.bounding_cleared = true;
	}
	/* EINVAL: a kernel before ambient capabilities (4.3), with none to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return dsh_err_sys(err, errno, "caps: clear the ambient set");
	memset(d, 0, sizeof(d));
	if (cap_set(d) < 0)
		return dsh_err_sys(err, errno, "caps: capset");
	if (!dsh_caps_none_left(setpcap))
		return dsh_err(err, DSH_ERR_SYSTEM, EPERM, "caps: capabilities left after dropping them all");
	if (ret)
		*ret = res;
	return 0;
}

/* Ask the kernel (capget, the prctls), not libcap-ng's cached view. */
bool dsh_caps_none_left(bool bounding_too)
{
	struct __user_cap_data_struct d[2];
	if (cap_get(d) < 0)
		return false;
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return false;
	/* The ambient set is empty now: the kernel keeps it within permitted and inheritable (a
	   capset that lowers either masks it, security/commoncap.c), and both are empty. */
	for (int c = 0; bounding_too && c <= 63; c++) {
		int b = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (b < 0 && errno == EINVAL)
			break; /* past the last capability this kernel knows */
		if (b != 0)
			return false;
	}
	return true;
}

int dsh_caps_keep(unsigned long long keep, struct dsh_error **err)
{
	struct __user_cap_data_struct cur[2];
	if (cap_get(cur) < 0)
		return dsh_err_sys(err, errno, "caps: capget");
	if (!(cur[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP)))
		return dsh_err(err, DSH_ERR_SYSTEM, EPERM, "caps: keeping capabilities needs CAP_SETPCAP");
	/* Raising ambient capabilities is refused once NO_CAP_AMBIENT_RAISE is set: it stays clear. */
	unsigned long bits = SECBITS & ~(unsigned long)(SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED);
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		return dsh_err_sys(err, errno, "caps: lock securebits");
	/* The bounding set first (it needs CAP_SETPCAP, which keep may not hold), then the sets. */
	int r = drop_bounding(keep, err);
	if (r < 0)
		return r;
	struct __user_cap_data_struct set[2] = { { 0 } };
	for (int i = 0; i < 2; i++)
		set[i].effective = set[i].permitted = set[i].inheritable = (uint32_t)(keep >> (32 * i));
	if (cap_set(set) < 0)
		return dsh_err_sys(err, errno, "caps: capset");
	for (unsigned c = 0; c <= 63; c++) {
		if (!((keep >> c) & 1))
			continue;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0 && errno != EINVAL)
			return dsh_err_sys(err, errno, "caps: raise ambient capability %u", c);
	}
	/* Fail closed: the kernel's view holds exactly `keep` and nothing more. */
	struct __user_cap_data_struct d[2];
	if (cap_get(d) < 0)
		return dsh_err_sys(err, errno, "caps: capget");
	unsigned long long eff = d[0].effective | (unsigned long long)d[1].effective << 32;
	unsigned long long prm = d[0].permitted | (unsigned long long)d[1].permitted << 32;
	unsigned long long inh = d[0].inheritable | (unsigned long long)d[1].inheritable << 32;
	bool extra = (eff | prm | inh) & ~keep;
	/* The ambient set needs no asking: the kernel keeps it within permitted and inheritable. */
	for (int c = 0; c <= 63 && !extra; c++) {
		int b = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (b < 0 && errno == EINVAL)
			break;
		extra = b > 0 && !((keep >> c) & 1);
	}
	if (extra)
		return dsh_err(err, DSH_ERR_SYSTEM, EPERM, "caps: capabilities left beyond those kept");
	return 0;
}
