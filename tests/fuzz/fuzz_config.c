/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The YAML configuration (dsh_config_load_string, policy/config.c) and the access file
 * (dsh_config_load_access_file, read from a memfd through /proc/self/fd: no file is written).
 * The first byte chooses which; a configuration that loads is then built into a policy.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

static void load_access_file(struct dsh_config *c, const uint8_t *data, size_t size, struct dsh_error **err)
{
	int fd = memfd_create("fuzz-access", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	(void)dsh_config_load_access_file(c, path, err);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	struct dsh_config c;
	dsh_config_init(&c);
	struct dsh_error *err = NULL;
	int r;
	if (data[0] & 1) {
		load_access_file(&c, data + 1, size - 1, &err);
		r = err ? -1 : 0;
	} else {
		r = dsh_config_load_string(&c, (const char *)data + 1, size - 1, "fuzz.yml", &err);
	}
	if (r < 0) {
		FUZZ_CHECK_ERROR(err);
	} else if (size < 4096) {
		char *env[] = { "HOME=/home/u", NULL };
		if (!c.workspace)
			c.workspace = strdup("/ws");
		struct dsh_policy *p = NULL;
		dsh_error_free(err);
		err = NULL;
		if (dsh_policy_new(&c, env, "/", &p, &err) == 0)
			dsh_policy_free(p);
	}
	dsh_error_free(err);
	dsh_config_clear(&c);
	return 0;
}
