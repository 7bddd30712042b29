/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The man pages name everything the program accepts (issue 24: `serve --jobs`, `fs
 * --expect-version`, `tmp`, `nestedSandbox`... were missing): every long option each command's
 * --help lists is in dshbox(1), and every configuration key the loader reads is in dshbox.yml(5).
 * The lists come from the program itself and from policy/config.c, so a new option or key that the
 * pages miss fails here.  bwrap's own options are bubblewrap's, documented by bwrap(1): the page
 * says every one is recognised, and names only dshbox's additions.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

/* The page as a reader sees its words: font changes dropped, "\-" a hyphen. */
static char *man_text(const char *name)
{
	_cleanup_free_ char *path = NULL;
	cr_assert(asprintf(&path, "%s/man/%s", DSH_TOP, name) > 0);
	_cleanup_free_ char *raw = dsh_test_read_file(path);
	cr_assert(raw, "cannot read %s", path);
	char *out = malloc(strlen(raw) + 1), *o = out;
	cr_assert(out);
	for (const char *s = raw; *s;) {
		if (s[0] == '\\' && s[1] == 'f' && s[2]) {
			s += 3;
		} else if (s[0] == '\\' && s[1] == '-') {
			*o++ = '-';
			s += 2;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

/* word occurs in text not inside a longer name ("--jobs" is not found in "--jobsx"). */
static bool has_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *at = text; (at = strstr(at, word)); at++) {
		bool left = at == text || !(isalnum((unsigned char)at[-1]) || at[-1] == '-');
		bool right = !(isalnum((unsigned char)at[n]) || at[n] == '-');
		if (left && right)
			return true;
	}
	return false;
}

Test(man_pages, every_option_of_every_command_is_in_dshbox_1)
{
	_cleanup_free_ char *page = man_text("dshbox.1");
	static const char *const commands[] = { "run", "check", "fs", "serve", "explain", "probe", "doctor" };
	size_t checked = 0;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char *argv[] = { (char *)dsh_test_dshbox(), (char *)commands[i], "--help", NULL };
		struct dsh_proc r;
		cr_assert_eq(dsh_proc_run(argv, NULL, NULL, &r), 0);
		cr_assert_eq(r.exit_code, 0, "%s --help: %s", commands[i], r.err);
		for (const char *s = r.out; (s = strstr(s, "--"));) {
			size_t n = 2;
			while (islower((unsigned char)s[n]) || isdigit((unsigned char)s[n]) || s[n] == '-')
				n++;
			_cleanup_free_ char *opt = strndup(s, n);
			s += n;
			if (n < 4 || strcmp(opt, "--help") == 0)
				continue;
			checked++;
			cr_expect(has_word(page, opt), "dshbox(1) does not name %s, which `dshbox %s --help` lists", opt,
				  commands[i]);
		}
		dsh_proc_clear(&r);
	}
	/* The policy options alone are over a dozen: an empty harvest would pass without checking. */
	cr_expect_gt(checked, 40, "only %zu options found in the --help outputs", checked);
}

Test(man_pages, every_configuration_key_the_loader_reads_is_in_dshbox_yml_5)
{
	_cleanup_free_ char *page = man_text("dshbox.yml.5");
	_cleanup_free_ char *path = NULL;
	cr_assert(asprintf(&path, "%s/policy/config.c", DSH_TOP) > 0);
	_cleanup_free_ char *src = dsh_test_read_file(path);
	cr_assert(src);
	static const char needle[] = "strcmp(key, \"";
	size_t checked = 0;
	for (const char *s = src; (s = strstr(s, needle));) {
		s += strlen(needle);
		_cleanup_free_ char *key = strndup(s, strcspn(s, "\""));
		checked++;
		cr_expect(has_word(page, key), "dshbox.yml(5) does not name the key '%s' that policy/config.c reads", key);
	}
	cr_expect_gt(checked, 15, "only %zu keys found in policy/config.c", checked);
}
