/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SPEC 16: nothing the command writes runs outside the sandbox later.  For every default-protected
 * name (policy/protected.c), absent and present, each route a command has to plant it — write,
 * rename over, hard link, symlink then write through, O_TMPFILE then link, RENAME_EXCHANGE, mkdir
 * then rename onto a directory name, removal — is tried from inside `dshbox run`, and the host
 * checks the name afterwards.  And the program in use: a copy of dshbox kept in the workspace and
 * run from there (the README's first command's shape) cannot be replaced for the next run.
 * The backend is DSHBOX_ESCAPE_BACKEND (default auto).  The landlock backend cannot take a grant
 * back beneath a writable root, so where a protected name exists there it must refuse the run
 * (exit 125, nothing run); the host oracle is the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "policy/protected.h"
#include "tests/lib/harness.h"

static char *top, *ws;

static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL };

static char *at(const char *rel)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", ws, rel) > 0);
	return s;
}

static void setup(void)
{
	top = dsh_test_mkdtemp();
	cr_assert(asprintf(&ws, "%s/ws", top) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
}

static void teardown(void)
{
	dsh_test_rmtree(top);
	free(ws);
	free(top);
}

TestSuite(next_run, .init = setup, .fini = teardown, .timeout = 120);

/* The names the table protects as directories: what a host reads is a file inside them. */
static bool is_dir_name(const char *name)
{
	static const char *const dirs[] = { ".git/hooks", ".claude", ".codex", ".agents", ".cursor", ".gemini",
					    ".vscode", ".idea" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (strcmp(dirs[i], name) == 0)
			return true;
	return false;
}

/* The first step of esc_attack's output that got through, other than making the unnamed file in a
   directory the command may write ("tmpfile", "tmpwrite") and, where allowed, linking it there. */
static char *breach(const char *out, bool link_allowed)
{
	for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *eq = strchr(line, '=');
		if (!eq || strncmp(eq, "=ok", 3) != 0)
			continue;
		size_t n = (size_t)(eq - line);
		if ((n == 7 && strncmp(line, "tmpfile", 7) == 0) || (n == 8 && strncmp(line, "tmpwrite", 8) == 0) ||
		    (link_allowed && n == 4 && strncmp(line, "link", 4) == 0))
			continue;
		return strndup(line, n);
	}
	return NULL;
}

static void run_script(struct dsh_proc *r, const char *script)
{
	_cleanup_free_ char *attack = dsh_test_helper("esc_attack");
	_cleanup_free_ char *full = NULL;
	cr_assert(asprintf(&full, "A=%s; %s; exit 0", attack, script) > 0);
	const char *argv[] = { dsh_test_dshbox(), "run", "--backend", dsh_test_escape_backend(), "--workspace", ws, "--cwd", ws,
			       "--", "sh", "-c", full, NULL };
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, r), 0);
}

Test(next_run, an_absent_protected_name_cannot_be_made_by_any_route)
{
	dsh_test_require_backend();
	for (size_t i = 0; i < dsh_n_protected_names; i++) {
		const char *n = dsh_protected_names[i].name;
		dsh_test_rmtree(ws);
		cr_assert_eq(mkdir(ws, 0755), 0);
		/* .git/NAME: the .git directory on the way may be made, the name in it not */
		_cleanup_free_ char *script = NULL;
		cr_assert(asprintf(&script,
				   "N=%s; case $N in */*) mkdir -p ${N%%/*};; esac; "
				   "$A write-file $N x; "
				   "echo x > t1; $A rename-dir t1 $N; "
				   "echo x > t2; $A link-to t2 $N; "
				   "$A symlink-to /nonexistent $N; "
				   "ln -s $N s1; echo x > s1; "
				   "$A tmpfile-link . $N; "
				   "mkdir d1; echo x > d1/settings.json; $A rename-dir d1 $N; "
				   "mkdir -p $N/sub; echo x > $N/f; "
				   "echo ran",
				   n) > 0);
		struct dsh_proc r;
		run_script(&r, script);
		cr_expect_eq(r.exit_code, 0, "%s: exit %d: %s", n, r.exit_code, r.err);
		cr_expect(strstr(r.out, "ran\n"), "%s: the attack did not run: %s", n, r.err);
		_cleanup_free_ char *b = breach(r.out, false);
		cr_expect_null(b, "%s: step %s got through:\n%s", n, b, r.out);
		_cleanup_free_ char *path = at(n);
		struct stat st;
		cr_expect_eq(lstat(path, &st), -1, "%s was made on the host", path);
		dsh_proc_clear(&r);
	}
}

Test(next_run, a_present_protected_name_cannot_be_changed_replaced_or_removed)
{
	dsh_test_require_backend();
	for (size_t i = 0; i < dsh_n_protected_names; i++) {
		const char *n = dsh_protected_names[i].name;
		dsh_test_rmtree(ws);
		cr_assert_eq(mkdir(ws, 0755), 0);
		bool dir = is_dir_name(n);
		_cleanup_free_ char *path = at(n), *file = NULL;
		cr_assert(asprintf(&file, "%s%s", path, dir ? "/f" : "") > 0);
		if (strchr(n, '/')) {
			_cleanup_free_ char *git = at(".git");
			cr_assert_eq(mkdir(git, 0755), 0);
		}
		if (dir)
			cr_assert_eq(mkdir(path, 0755), 0);
		dsh_test_write_file(file, "orig\n");
		_cleanup_free_ char *script = NULL;
		cr_assert(asprintf(&script,
				   "N=%s; F=%s; "
				   "$A write-file $F x; echo x >> $F; "
				   "echo x > t1; $A rename-dir t1 $F; "
				   "echo x > t2; $A rename-dir t2 $F exchange; "
				   "mkdir d1; echo x > d1/f; $A rename-dir d1 $N exchange; "
				   "$A rename-dir $N moved; "
				   "$A tmpfile-link %s new; "
				   "$A write-file $N/new x; "
				   "rm -rf $N 2>/dev/null; chmod 0777 $F 2>/dev/null; "
				   "echo ran",
				   n, dir ? "$N/f" : "$N", dir ? "$N" : ".") > 0);
		struct dsh_proc r;
		run_script(&r, script);
		if (dsh_test_escape_landlock()) {
			cr_expect_eq(r.exit_code, 125, "%s: landlock ran with a protected name it cannot hold: %s", n,
				     r.err);
			cr_expect_null(strstr(r.out, "ran"), "%s: the command ran", n);
		} else {
			cr_expect_eq(r.exit_code, 0, "%s: exit %d: %s", n, r.exit_code, r.err);
			cr_expect(strstr(r.out, "ran\n"), "%s: the attack did not run: %s", n, r.err);
			/* for a file name the unnamed file is linked as ./new, which is the command's to make */
			_cleanup_free_ char *b = breach(r.out, !dir);
			cr_expect_null(b, "%s: step %s got through:\n%s", n, b, r.out);
		}
		_cleanup_free_ char *got = dsh_test_read_file(file), *moved = at("moved"), *fresh = NULL;
		cr_expect(got && strcmp(got, "orig\n") == 0, "%s changed on the host: %s", file, got ? got : "(gone)");
		struct stat st;
		cr_expect_eq(lstat(path, &st), 0, "%s removed", path);
		cr_expect_eq(S_ISDIR(st.st_mode), dir, "%s replaced", path);
		cr_expect_eq(st.st_mode & 07777, dir ? 0755u : 0644u, "%s re-permissioned: %o", path, st.st_mode & 07777);
		cr_expect_eq(lstat(moved, &st), -1, "%s moved away", path);
		cr_assert(asprintf(&fresh, "%s/new", path) > 0);
		cr_expect_eq(lstat(fresh, &st), -1, "%s made inside %s", fresh, path);
		dsh_proc_clear(&r);
	}
}

/* A copy of dshbox in the workspace, as a project-local install or the README's checkout keeps it. */
static char *install_copy(void)
{
	_cleanup_free_ char *bin = at("bin");
	cr_assert_eq(mkdir(bin, 0755), 0);
	char *copy = at("bin/dshbox");
	const char *cp[] = { "cp", dsh_test_dshbox(), copy, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)cp, env, NULL, &r), 0);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	dsh_proc_clear(&r);
	return copy;
}

static bool same_file_content(const char *a, const char *b)
{
	const char *cmp[] = { "cmp", "-s", a, b, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)cmp, env, NULL, &r), 0);
	bool same = r.exit_code == 0;
	dsh_proc_clear(&r);
	return same;
}

Test(next_run, the_program_in_use_cannot_be_replaced_for_the_next_run)
{
	dsh_test_require_backend();
	_cleanup_free_ char *copy = install_copy(), *marker = NULL, *script = NULL;
	cr_assert(asprintf(&marker, "%s/pwned", top) > 0);
	cr_assert(asprintf(&script,
			   "printf '#!/bin/sh\\necho PWNED > %s\\n' > bin/x; chmod 755 bin/x; "
			   "mv -f bin/x bin/dshbox; "
			   "printf '#!/bin/sh\\necho PWNED > %s\\n' > bin/dshbox; "
			   "cp bin/x bin/dshbox 2>/dev/null; "
			   "ln -f bin/x bin/dshbox 2>/dev/null; "
			   "rm -f bin/dshbox; "
			   "mv bin bin.old && mkdir bin && cp bin.old/x bin/dshbox 2>/dev/null; "
			   "echo ran",
			   marker, marker) > 0);
	const char *argv[] = { copy, "run", "--backend", dsh_test_escape_backend(), "--workspace", ws, "--cwd", ws, "--", "sh", "-c",
			       script, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	/* landlock too: the executable in use cannot be written while it runs, the rest is the broker's */
	cr_expect_eq(r.exit_code, 0, "exit %d: %s", r.exit_code, r.err);
	cr_expect(strstr(r.out, "ran"), "%s", r.err);
	dsh_proc_clear(&r);
	cr_expect(same_file_content(copy, dsh_test_dshbox()), "%s was replaced", copy);
	/* the next run is dshbox's, and plants nothing */
	const char *next[] = { copy, "run", "--backend", dsh_test_escape_backend(), "--workspace", ws, "--cwd", ws, "--", "true",
			       NULL };
	cr_assert_eq(dsh_proc_run((char *const *)next, env, NULL, &r), 0);
	dsh_proc_clear(&r);
	struct stat st;
	cr_expect_eq(lstat(marker, &st), -1, "the next run executed what the command planted");
}

Test(next_run, the_file_fence_refuses_each_name_with_its_rule)
{
	for (size_t i = 0; i < dsh_n_protected_names; i++) {
		const char *n = dsh_protected_names[i].name;
		_cleanup_free_ char *rel = NULL, *rule = NULL;
		cr_assert(asprintf(&rel, "%s%s", n, is_dir_name(n) ? "/settings.json" : "") > 0);
		cr_assert(asprintf(&rule, "(rule \"r- %s/%s\")", ws, n) > 0);
		const char *argv[] = { dsh_test_dshbox(), "check", "--workspace", ws, "--cwd", ws, "--write", rel, NULL };
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
		cr_expect_eq(r.exit_code, 1, "%s: exit %d: %s%s", rel, r.exit_code, r.out, r.err);
		cr_expect(strncmp(r.out, "deny write ", 11) == 0 && strstr(r.out, rule), "%s: %s", rel, r.out);
		dsh_proc_clear(&r);
	}
}
