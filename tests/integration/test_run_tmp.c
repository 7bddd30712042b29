/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /tmp as a user sees it (SPEC 1.5 `tmp`, 3.6).  workspace-write with `tmp: host` (the default): the
 * host's /tmp, writable, the same one the file fence writes, so what one command or the write tool
 * leaves there the next command finds.  `tmp: private`: a private writable tmpfs, and the fence
 * refuses host /tmp.  read-only mode: a private writable tmpfs (heredocs, mktemp, tempfile) whose
 * contents never reach the host.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL };

struct fx {
	char *ws;      /* the workspace, outside /tmp */
	char *cfg;     /* tmp: private */
	char name[96]; /* a name of this test's own under /tmp */
};

static void fx_init(struct fx *f, const char *what)
{
	f->ws = dsh_test_mkdtemp();
	cr_assert(asprintf(&f->cfg, "%s/private-tmp.yml", f->ws) > 0);
	dsh_test_write_file(f->cfg, "tmp: private\n");
	snprintf(f->name, sizeof(f->name), "/tmp/dshbox-%s-%d", what, (int)getpid());
	unlink(f->name);
}

static void fx_free(struct fx *f)
{
	unlink(f->name);
	dsh_test_rmtree(f->ws);
	free(f->ws);
	free(f->cfg);
}

/* dshbox SUB [ARGS...] with the workspace as workspace and cwd; stdin_data for fs write. */
static void dshbox(struct dsh_proc *r, const struct fx *f, const char *sub, const char *stdin_data, ...)
{
	char *argv[64] = { (char *)dsh_test_dshbox(), (char *)sub, "--workspace", f->ws, "--cwd", f->ws };
	int n = 6;
	va_list ap;
	va_start(ap, stdin_data);
	for (char *a; (a = va_arg(ap, char *)) && n < 63;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	cr_assert_eq(dsh_proc_run(argv, env, stdin_data, r), 0);
}

Test(run_tmp, the_write_tool_and_commands_share_the_hosts_tmp)
{
	struct fx f;
	fx_init(&f, "shared");
	struct dsh_proc r;
	/* The host's write tool puts a script in /tmp; the next command runs it. */
	dshbox(&r, &f, "fs", "echo from-the-write-tool\n", "write", f.name, NULL);
	cr_expect_eq(r.exit_code, 0, "fs write %s: %s", f.name, r.err);
	dsh_proc_clear(&r);
	dshbox(&r, &f, "run", NULL, "--", "/bin/sh", f.name, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "from-the-write-tool\n");
	dsh_proc_clear(&r);
	/* A command leaves a file there; the next command and the read tool find it. */
	_cleanup_free_ char *cmd = NULL;
	cr_assert(asprintf(&cmd, "echo from-a-command > %s", f.name) > 0);
	dshbox(&r, &f, "run", NULL, "--", "/bin/sh", "-c", cmd, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	dsh_proc_clear(&r);
	dshbox(&r, &f, "run", NULL, "--", "/bin/cat", f.name, NULL);
	cr_expect_str_eq(r.out, "from-a-command\n", "the next command: %s", r.err);
	dsh_proc_clear(&r);
	dshbox(&r, &f, "fs", NULL, "read", f.name, NULL);
	cr_expect_str_eq(r.out, "from-a-command\n", "the read tool: %s", r.err);
	dsh_proc_clear(&r);
	_cleanup_free_ char *host = dsh_test_read_file(f.name);
	cr_expect_str_eq(host ? host : "", "from-a-command\n", "host oracle: the host's /tmp");
	fx_free(&f);
}

Test(run_tmp, private_tmp_keeps_both_sides_apart)
{
	struct fx f;
	fx_init(&f, "private");
	dsh_test_write_file(f.name, "host-only\n");
	struct dsh_proc r;
	_cleanup_free_ char *cmd = NULL;
	cr_assert(asprintf(&cmd, "cat %s 2>/dev/null || echo absent; echo inside > %s && cat %s", f.name, f.name,
			   f.name) > 0);
	dshbox(&r, &f, "run", NULL, "--config", f.cfg, "--", "/bin/sh", "-c", cmd, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "absent\ninside\n", "the host's file must be invisible, /tmp writable");
	dsh_proc_clear(&r);
	_cleanup_free_ char *host = dsh_test_read_file(f.name);
	cr_expect_str_eq(host ? host : "", "host-only\n", "host oracle: the command's write reached the host");
	/* The fence follows: host /tmp is outside the writable roots. */
	dshbox(&r, &f, "fs", "x\n", "--config", f.cfg, "write", f.name, NULL);
	cr_expect_neq(r.exit_code, 0, "fs write to host /tmp with tmp: private");
	cr_expect(strstr(r.err, "outside the writable roots") != NULL, "%s", r.err);
	dsh_proc_clear(&r);
	free(host);
	host = dsh_test_read_file(f.name);
	cr_expect_str_eq(host ? host : "", "host-only\n", "host oracle: the fence wrote host /tmp");
	fx_free(&f);
}

/* With a private /tmp, a $TMPDIR under /tmp is bound at its own path inside it (SPEC 3.6). */
Test(run_tmp, private_tmp_binds_a_tmpdir_under_tmp)
{
	struct fx f;
	fx_init(&f, "tmpdir");
	char dir[] = "/tmp/dshbox-tmpdir.XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	char tmpdir[64];
	snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", dir);
	char *tenv[] = { env[0], env[1], tmpdir, NULL };
	char *argv[] = { (char *)dsh_test_dshbox(), "run", "--config", f.cfg, "--workspace", f.ws, "--cwd", f.ws, "--",
			 "/bin/sh", "-c", "echo kept > \"$TMPDIR/out\" && echo gone > /tmp/dshbox-not-kept", NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(argv, tenv, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	dsh_proc_clear(&r);
	_cleanup_free_ char *out = NULL;
	cr_assert(asprintf(&out, "%s/out", dir) > 0);
	_cleanup_free_ char *c = dsh_test_read_file(out);
	cr_expect_str_eq(c ? c : "", "kept\n", "a write in $TMPDIR did not land on the host");
	cr_expect_neq(access("/tmp/dshbox-not-kept", F_OK), 0, "a write to the private /tmp reached the host");
	unlink(out);
	rmdir(dir);
	fx_free(&f);
}

/* Compilers, heredocs, mktemp and tempfile need a writable /tmp in read-only mode too. */
Test(run_tmp, read_only_mode_has_a_private_writable_tmp)
{
	struct fx f;
	fx_init(&f, "ro");
	_cleanup_free_ char *cmd = NULL;
	cr_assert(asprintf(&cmd,
			   "big=$(head -c 70000 /dev/zero | tr '\\0' a)\n"
			   "cat <<EOF | wc -c\n$big\nEOF\n"
			   "t=$(mktemp) && echo mk > \"$t\" && cat \"$t\"\n"
			   "echo leak > %s && cat %s\n"
			   "if command -v python3 >/dev/null; then python3 -c 'import tempfile\n"
			   "with tempfile.NamedTemporaryFile() as t: t.write(b\"x\"); t.flush(); print(\"tempfile\")'; "
			   "else echo tempfile; fi\n",
			   f.name, f.name) > 0);
	struct dsh_proc r;
	dshbox(&r, &f, "run", NULL, "--mode", "read-only", "--", "/bin/sh", "-c", cmd, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "70001\nmk\nleak\ntempfile\n", "stderr: %s", r.err);
	dsh_proc_clear(&r);
	cr_expect_neq(access(f.name, F_OK), 0, "host oracle: a write to /tmp in read-only mode reached the host");
	fx_free(&f);
}

Test(run_tmp, a_bad_tmp_value_is_one_error)
{
	struct fx f;
	fx_init(&f, "bad");
	dsh_test_write_file(f.cfg, "tmp: shared\n");
	struct dsh_proc r;
	dshbox(&r, &f, "run", NULL, "--config", f.cfg, "--", "/bin/echo", "ran", NULL);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect_str_eq(r.out, "", "nothing must run");
	cr_expect_eq(dsh_count_lines_with_prefix(r.err, "dshbox: error: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "tmp: expected host or private, got 'shared'") != NULL, "%s", r.err);
	dsh_proc_clear(&r);
	fx_free(&f);
}

/* A workspace (or a cwd) under /tmp stays there, read-only, when /tmp is private (read-only mode,
   tmp: private): the command starts in it and reads it, writes neither it nor the host's /tmp,
   and the host's other /tmp files stay invisible. */
Test(run_tmp, a_workspace_under_tmp_stays_in_a_private_tmp)
{
	struct fx f;
	fx_init(&f, "sibling");
	dsh_test_write_file(f.name, "host-only\n");
	char tws[] = "/tmp/dshbox-ws-XXXXXX";
	cr_assert(mkdtemp(tws));
	_cleanup_free_ char *a = NULL, *b = NULL, *cmd = NULL;
	cr_assert(asprintf(&a, "%s/a.txt", tws) > 0 && asprintf(&b, "%s/b.txt", tws) > 0);
	dsh_test_write_file(a, "in-the-workspace\n");
	cr_assert(asprintf(&cmd, "cat a.txt; cat %s 2>/dev/null || echo sibling-absent; "
				 "(echo y > b.txt) 2>/dev/null || echo write-refused; echo s > /tmp/scratch && echo scratch",
			   f.name) > 0);
	char *ro[] = { (char *)dsh_test_dshbox(), "run", "--mode", "read-only", "--workspace", tws, "--cwd", tws,
		       "--", "/bin/sh", "-c", cmd, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run(ro, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "in-the-workspace\nsibling-absent\nwrite-refused\nscratch\n", "stderr: %s", r.err);
	dsh_proc_clear(&r);
	cr_expect_neq(access(b, F_OK), 0, "host oracle: read-only mode wrote the workspace");
	/* tmp: private in workspace-write, the workspace elsewhere, the cwd under /tmp. */
	char *cwd[] = { (char *)dsh_test_dshbox(), "run", "--config", f.cfg, "--workspace", f.ws, "--cwd", tws,
			"--", "/bin/sh", "-c", cmd, NULL };
	cr_assert_eq(dsh_proc_run(cwd, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "in-the-workspace\nsibling-absent\nwrite-refused\nscratch\n", "stderr: %s", r.err);
	dsh_proc_clear(&r);
	cr_expect_neq(access(b, F_OK), 0, "host oracle: the cwd outside the workspace was written");
	dsh_test_rmtree(tws);
	fx_free(&f);
}
