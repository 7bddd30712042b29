/* SPDX-License-Identifier: GPL-2.0-or-later */
/* No prebuilt programs: what tools/gen_seccomp links, so that it generates every one itself. */
#include <linux/filter.h>

#include "seccomp/seccomp.h"

const struct dsh_seccomp_prebuilt dsh_seccomp_prebuilt[1];
const size_t dsh_seccomp_n_prebuilt = 0;
const uint32_t dsh_seccomp_prebuilt_arch = 0;
