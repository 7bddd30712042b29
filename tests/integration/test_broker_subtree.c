/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The broker's walk of a directory about to be renamed (broker/subtree.h), called directly on
 * real trees: what it refuses, what it never reads, and its bounds.  The escape suite checks the
 * same through renames inside a sandbox.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/subtree.h"
#include "common/cleanup.h"
#include "common/strv.h"
#include "tests/lib/harness.h"

static char *top, *ws;
static int wsfd = -1;

static void setup(void)
{
	top = dsh_test_mkdtemp();
	cr_assert(asprintf(&ws, "%s/ws", top) > 0);
	cr_assert_eq(mkdir(ws, 0755), 0);
	wsfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(wsfd, 0);
}

static void teardown(void)
{
	close(wsfd);
	dsh_test_rmtree(top);
	free(ws);
	free(top);
}

TestSuite(broker_subtree_walk, .init = setup, .fini = teardown);

static char *at(const char *rel)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", ws, rel) > 0);
	return s;
}

static void file(const char *rel)
{
	_cleanup_free_ char *path = at(rel);
	dsh_test_write_file(path, "x\n");
}

/* The answer for moving ws/name to ws/to (spelled: ws/spelled, or none). */
static int check(const char *rule, const char *name, const char *to, const char *spelled, size_t max)
{
	struct dsh_policy *p = dsh_test_policy(ws, (const char *const[]){ rule, NULL });
	_cleanup_free_ char *canonical = at(to), *sp = spelled ? at(spelled) : NULL;
	int r = dsh_broker_subtree_check(p, wsfd, name, canonical, sp, max);
	dsh_policy_free(p);
	return r;
}

Test(broker_subtree_walk, a_descendant_under_a_rule_is_refused)
{
	file("t/a/b/k.pem");
	file("t/notes");
	cr_expect_eq(check("-- keys/**/*.pem", "t", "keys", NULL, 1000), -EACCES);
	cr_expect_eq(check("r- keys/a/b/k.pem", "t", "keys", NULL, 1000), -EACCES);
	cr_expect_eq(check("-- keys/*.pem", "t", "keys", NULL, 1000), 0, "k.pem is two levels down");
	cr_expect_eq(check("-- keys/**/*.pem", "t", "other", NULL, 1000), 0);
	cr_expect_eq(check("rw keys", "t", "keys", NULL, 1000), 0);
}

Test(broker_subtree_walk, a_symlink_is_judged_by_its_name_and_never_followed)
{
	_cleanup_free_ char *link = at("t/k.pem"), *dirlink = at("t/d");
	/* t/d leads, from its new place keys/d, to keys/stash: where the rule reaches already, so no
	   way around it (dsh_broker_link_redirects); followed, the walk would meet inner/x.pem */
	file("keys/stash/inner/x.pem");
	_cleanup_free_ char *t = at("t");
	cr_assert_eq(mkdir(t, 0755), 0);
	cr_assert_eq(symlink("stash", dirlink), 0);
	cr_expect_eq(check("-- keys/**/*.pem", "t", "keys", NULL, 1000), 0, "followed t/d");
	cr_assert_eq(symlink("/etc/hostname", link), 0);
	cr_expect_eq(check("-- keys/**/*.pem", "t", "keys", NULL, 1000), -EACCES);
	/* A symlink on the way to a literal target leads it elsewhere: t/d would become x/d. */
	cr_expect_eq(check("-- x/d/secret", "t", "x", NULL, 1000), -EACCES);
	cr_expect_eq(check("-- x/e/secret", "t", "x", NULL, 1000), 0);
	/* From its new place a relative link means something else: keys/e -> ../elsewhere leaves the
	   rule's reach for a place the command can write. */
	cr_assert_eq(unlink(link), 0);
	_cleanup_free_ char *out = at("t/e");
	file("elsewhere/inner/x.pem");
	cr_assert_eq(symlink("../elsewhere", out), 0);
	cr_expect_eq(check("-- keys/**/*.pem", "t", "keys", NULL, 1000), -EACCES, "keys/e leads the rule around");
	cr_expect_eq(check("-- keys/**/*.pem", "t", "other", NULL, 1000), 0, "no rule reaches below other/e");
}

Test(broker_subtree_walk, the_spelling_counts_as_the_fence_reads_it)
{
	file("t/k.pem");
	cr_expect_eq(check("-- spelled/*.pem", "t", "other", "spelled", 1000), -EACCES);
	cr_expect_eq(check("-- spelled/*.pem", "t", "other", NULL, 1000), 0);
}

/* Pruned directories are neither read nor counted: an unreadable one and a large one pass. */
Test(broker_subtree_walk, what_no_rule_reaches_is_not_read)
{
	file("t/readme");
	for (int i = 0; i < 50; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "t/many/f%d", i);
		file(rel);
	}
	file("t/locked/notes.txt");
	_cleanup_free_ char *locked = at("t/locked");
	cr_assert_eq(chmod(locked, 0300), 0);
	/* Pruned: t/locked is never opened, t/many never counted. */
	cr_expect_eq(check("-- keys/*.pem", "t", "keys", NULL, 3), 0);
	/* Reached: what cannot be read fails closed (root's CAP_DAC_OVERRIDE reads it, and finds
	   nothing covered). */
	int want = access(locked, R_OK) == 0 ? 0 : -EACCES;
	cr_expect_eq(check("-- keys/**/*.pem", "t", "keys", NULL, 1000), want);
	cr_expect_eq(chmod(locked, 0755), 0);
}

Test(broker_subtree_walk, beyond_the_bounds_the_answer_is_exdev)
{
	for (int i = 0; i < 20; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "t/f%d", i);
		file(rel);
	}
	cr_expect_eq(check("-- keys/**/*.pem", "t", "keys", NULL, 20), 0);
	cr_expect_eq(check("-- keys/**/*.pem", "t", "keys", NULL, 19), -EXDEV);

	char rel[4096] = "d";
	for (int i = 0; i <= DSH_SUBTREE_MAX_DEPTH; i++)
		strcat(rel, "/d");
	file(rel);
	cr_expect_eq(check("-- keys/**/*.pem", "d", "keys", NULL, 100000), -EXDEV);
	cr_expect_eq(check("-- keys/*.pem", "d", "keys", NULL, 100000), 0, "pruned below the first level");
}
