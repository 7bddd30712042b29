/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The dshbox program in use (SPEC 16): what the next run will execute or load to enforce its rules.
 * A command that renames a script over it (no ETXTBSY for a rename) would otherwise run unconfined
 * the next time the host starts dshbox: runc's CVE-2019-5736 class.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/protected.h"

static int oom(struct dsh_error **err)
{
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

/* The kernel names an unlinked executable "PATH (deleted)": the name is what a replacement takes. */
static void drop_deleted(char *path)
{
	static const char suffix[] = " (deleted)";
	size_t n = strlen(path), k = sizeof(suffix) - 1;
	if (n > k && strcmp(path + n - k, suffix) == 0)
		path[n - k] = '\0';
}

static int push_unique(char ***v, char *path, struct dsh_error **err)
{
	for (size_t i = 0; *v && (*v)[i]; i++)
		if (strcmp((*v)[i], path) == 0) {
			free(path);
			return 0;
		}
	return dsh_strv_push_take(v, path) < 0 ? oom(err) : 0;
}

int dsh_program_in_use(char ***ret, struct dsh_error **err)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	/* Without procfs the executable cannot be named: a rule that should hold and cannot be
	   stated is a refusal, not a silent gap. */
	if (n <= 0 || buf[0] != '/')
		return dsh_err(err, DSH_ERR_SYSTEM, n < 0 ? errno : ENAMETOOLONG,
			       "the program in use: readlink /proc/self/exe");
	buf[n] = '\0';
	drop_deleted(buf);
	_cleanup_strv_ char **v = NULL;
	char *exe = strdup(buf);
	if (!exe)
		return oom(err);
	int r = push_unique(&v, exe, err);
	if (r < 0)
		return r;
	/* A host that loaded libdshbox from a file of its own: that file too.  In a static program
	   dladdr names the executable, or nothing. */
	Dl_info info;
	if (dladdr((void *)dsh_program_in_use, &info) && info.dli_fname && info.dli_fname[0] == '/') {
		char *lib = realpath(info.dli_fname, NULL);
		if (lib && (r = push_unique(&v, lib, err)) < 0)
			return r;
	}
	*ret = TAKE_PTR(v);
	return 0;
}
