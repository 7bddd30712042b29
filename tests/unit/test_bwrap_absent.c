/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which absent destinations are held absent (bwrap/absent.h), and the path the rule names. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bwrap/absent.h"
#include "common/cleanup.h"
#include "tests/lib/harness.h"

static char *top;

static void setup(void)
{
	top = dsh_test_mkdtemp();
	char p[4096];
	snprintf(p, sizeof(p), "%s/ws", top);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/other", top);
	cr_assert_eq(mkdir(p, 0755), 0);
}

static void teardown(void)
{
	dsh_test_rmtree(top);
	free(top);
}

TestSuite(bwrap_absent, .init = setup, .fini = teardown);

static char *at(const char *rel)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", top, rel) > 0);
	return s;
}

/* The decision for the last of n operations (each KIND SOURCE DEST, relative to top). */
static bool held_last(const struct dsh_bwrap_op *ops, size_t n)
{
	bool skip[8] = { 0 }, held[8] = { 0 };
	for (size_t i = 0; i + 1 < n; i++)
		held[i] = dsh_bwrap_absent_held(ops, 0, i, skip, held);
	return dsh_bwrap_absent_held(ops, 0, n - 1, skip, held);
}

Test(bwrap_absent, beneath_a_writable_self_bind_it_is_held)
{
	_cleanup_free_ char *ws = at("ws"), *name = at("ws/.gitconfig");
	struct dsh_bwrap_op ops[] = { { .kind = DSH_BWRAP_BIND, .source = ws, .dest = ws, .fd = -1 },
				      { .kind = DSH_BWRAP_RO_BIND, .source = "/dev/null", .dest = name, .fd = -1 } };
	cr_expect(held_last(ops, 2));
	ops[1].kind = DSH_BWRAP_TMPFS;
	cr_expect(held_last(ops, 2), "a --tmpfs is held too");
	ops[1].kind = DSH_BWRAP_DIR;
	cr_expect(held_last(ops, 2), "a --dir is held too");
	ops[1].kind = DSH_BWRAP_SYMLINK;
	cr_expect_not(held_last(ops, 2), "a --symlink is not a mount");
}

Test(bwrap_absent, an_existing_name_is_not_held)
{
	_cleanup_free_ char *ws = at("ws"), *name = at("ws/there");
	dsh_test_write_file(name, "x");
	struct dsh_bwrap_op ops[] = { { .kind = DSH_BWRAP_BIND, .source = ws, .dest = ws, .fd = -1 },
				      { .kind = DSH_BWRAP_RO_BIND, .source = "/dev/null", .dest = name, .fd = -1 } };
	cr_expect_not(held_last(ops, 2));
}

Test(bwrap_absent, beneath_a_read_only_bind_a_tmpfs_or_another_source_it_is_not)
{
	_cleanup_free_ char *ws = at("ws"), *other = at("other"), *name = at("ws/.gitconfig");
	struct dsh_bwrap_op ops[] = { { .kind = DSH_BWRAP_RO_BIND, .source = ws, .dest = ws, .fd = -1 },
				      { .kind = DSH_BWRAP_RO_BIND, .source = "/dev/null", .dest = name, .fd = -1 } };
	cr_expect_not(held_last(ops, 2), "read-only there: bubblewrap's EROFS");
	ops[0].kind = DSH_BWRAP_TMPFS;
	cr_expect_not(held_last(ops, 2), "made inside the tmpfs");
	ops[0].kind = DSH_BWRAP_BIND;
	ops[0].source = other;
	cr_expect_not(held_last(ops, 2), "a bind from another source: refused when applied");
	cr_expect_not(held_last(&ops[1], 1), "nothing above it: the read-only root");
}

Test(bwrap_absent, the_innermost_operation_decides_and_a_held_parent_holds)
{
	_cleanup_free_ char *ws = at("ws"), *claude = at("ws/.claude"), *cmds = at("ws/.claude/commands");
	struct dsh_bwrap_op ops[] = { { .kind = DSH_BWRAP_BIND, .source = ws, .dest = ws, .fd = -1 },
				      { .kind = DSH_BWRAP_RO_BIND, .source = "/tmp", .dest = claude, .fd = -1 },
				      { .kind = DSH_BWRAP_RO_BIND, .source = "/dev/null", .dest = cmds, .fd = -1 } };
	cr_expect(held_last(ops, 3), "beneath a held name");
	struct dsh_bwrap_op tmp[] = { ops[0], { .kind = DSH_BWRAP_TMPFS, .dest = claude, .fd = -1 }, ops[2] };
	bool skip[3] = { false, true, false }, held[3] = { 0 };
	cr_expect(dsh_bwrap_absent_held(tmp, 0, 2, skip, held), "a skipped operation does not count");
	skip[1] = false;
	/* Not held itself (decided by hand here): then the tmpfs is mounted, and the name made in it. */
	cr_expect_not(dsh_bwrap_absent_held(tmp, 0, 2, skip, held));
}

/* sandbox-runtime's order: CWD/.claude read-only, then CWD writable over it, then the mask. */
Test(bwrap_absent, a_later_bind_of_a_parent_covers_an_earlier_one_beneath)
{
	_cleanup_free_ char *ws = at("ws"), *claude = at("ws/.claude"), *cmds = at("ws/.claude/commands");
	cr_assert_eq(mkdir(claude, 0755), 0);
	struct dsh_bwrap_op ops[] = { { .kind = DSH_BWRAP_RO_BIND, .source = claude, .dest = claude, .fd = -1 },
				      { .kind = DSH_BWRAP_BIND, .source = ws, .dest = ws, .fd = -1 },
				      { .kind = DSH_BWRAP_RO_BIND, .source = "/dev/null", .dest = cmds, .fd = -1 } };
	cr_expect(held_last(ops, 3));
	struct dsh_bwrap_op rev[] = { ops[1], ops[0], ops[2] };
	cr_expect_not(held_last(rev, 3), "read-only there: bubblewrap's EROFS");
}

Test(bwrap_absent, canonical_path)
{
	_cleanup_free_ char *ws = at("ws"), *link = at("link"), *via = at("link/a/b"), *want = NULL;
	cr_assert_eq(symlink(ws, link), 0);
	char real[4096];
	cr_assert_not_null(realpath(ws, real));
	cr_assert(asprintf(&want, "%s/a/b", real) > 0);
	_cleanup_free_ char *got = dsh_bwrap_absent_canonical(via);
	cr_expect_str_eq(got, want);
	_cleanup_free_ char *root = dsh_bwrap_absent_canonical("/dshbox-absent-test/x");
	cr_expect_str_eq(root, "/dshbox-absent-test/x");
	errno = 0;
	cr_expect_null(dsh_bwrap_absent_canonical("/tmp/../etc/x"));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(dsh_bwrap_absent_canonical("/tmp/x/.."));
}

/* Codex's mask: --perms 555 --tmpfs X --remount-ro X.  X held absent: its remount is of nothing
   (held); a remount of an existing destination, or of another name, is not. */
Test(bwrap_absent, a_remount_of_a_held_name_is_held)
{
	_cleanup_free_ char *ws = at("ws"), *git = at("ws/.git"), *other = at("ws/.agents");
	struct dsh_bwrap_op ops[] = { { .kind = DSH_BWRAP_BIND, .source = ws, .dest = ws, .fd = -1 },
				      { .kind = DSH_BWRAP_TMPFS, .dest = git, .perms = 0555, .fd = -1 },
				      { .kind = DSH_BWRAP_REMOUNT_RO, .dest = git, .fd = -1 } };
	bool skip[3] = { 0 }, held[3] = { 0 };
	held[1] = dsh_bwrap_absent_held(ops, 0, 1, skip, held);
	cr_assert(held[1]);
	cr_expect(dsh_bwrap_absent_remount(ops, 0, 2, skip, held));
	ops[2].dest = other;
	cr_expect_not(dsh_bwrap_absent_remount(ops, 0, 2, skip, held), "another name: nothing held there");
	ops[2].dest = ws;
	cr_expect_not(dsh_bwrap_absent_remount(ops, 0, 2, skip, held), "the bind itself is remounted");
	held[1] = false;
	ops[2].dest = git;
	cr_expect_not(dsh_bwrap_absent_remount(ops, 0, 2, skip, held), "a tmpfs mounted there is remounted");
}
