/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ordinary work is unchanged with the runtime broker on (issue 10): every call that makes or
 * removes a name goes through it, so these are the workloads that would show a difference — a
 * tarball of 10,000 files unpacked and removed, a parallel build of this project's library, a
 * Python virtual environment — each inside `dshbox run`, with a `--` glob in force: every `.key`
 * file anywhere (not `.pem`: pip itself ships a cacert.pem, which that rule rightly keeps it
 * from writing).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

static void run_in(const char *ws, const char *script, struct dsh_proc *r)
{
	const char *argv[] = { dsh_test_dshbox(), "run", "--workspace", ws, "--cwd", ws, "--access", "-- **/*.key",
			       "--", "sh", "-c", script, NULL };
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, r), 0);
}

Test(run_workloads, ten_thousand_files_unpacked_and_removed, .timeout = 300)
{
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run_in(ws,
	       "set -e; mkdir src; cd src; for d in $(seq 1 100); do mkdir d$d; "
	       "for f in $(seq 1 100); do : > d$d/f$f; done; done; cd ..; "
	       "tar cf t.tar src; rm -rf src; tar xf t.tar; test $(find src -type f | wc -l) = 10000; "
	       "rm -rf src t.tar; echo ok",
	       &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "ok\n");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_workloads, a_parallel_build_of_this_project, .timeout = 600)
{
	char *ws = dsh_test_mkdtemp();
	_cleanup_free_ char *copy = NULL;
	/* The sources as they are (a git checkout or not), without what builds leave. */
	cr_assert(asprintf(&copy, "tar -C '%s' --exclude=./.git --exclude='./build*' -cf - . | tar -xf - -C '%s'", DSH_TOP,
			   ws) > 0);
	cr_assert_eq(system(copy), 0, "cannot copy the source tree at %s", DSH_TOP);
	struct dsh_proc r;
	run_in(ws, "make -j2 BUILD=build-inside build-inside/libdshbox.a >/dev/null && test -s build-inside/libdshbox.a && echo built",
	       &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "built\n");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}

Test(run_workloads, a_python_virtual_environment, .timeout = 300)
{
	if (access("/usr/bin/python3", X_OK) < 0 || system("/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null") != 0)
		DSH_SKIP("python3 with venv and ensurepip (Debian's python3-venv) is not installed");
	char *ws = dsh_test_mkdtemp();
	struct dsh_proc r;
	run_in(ws, "python3 -m venv v && v/bin/python -c 'import sys; print(sys.prefix != sys.base_prefix)'", &r);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "True\n");
	dsh_proc_clear(&r);
	dsh_test_rmtree(ws);
	free(ws);
}
