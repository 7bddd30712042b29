/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The findings of the libFuzzer harnesses (tests/fuzz/, `make fuzz`), one test each, as a user or
 * host meets them: each input is also a regression case in tests/fuzz/regress/NAME/.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/strv.h"
#include "net/sni.h"
#include "policy/glob.h"
#include "policy/glob_regex.h"
#include "policy/policy.h"
#include "policy/rule.h"
#include "tests/lib/harness.h"

/*
 * fuzz_glob: "[/]" (and "[!\x01-\xff]") can match no byte, since a class never matches '/'; it was
 * accepted, its fast matcher matched nothing, and its regex was "[]//..." (a bracket expression
 * running on into the rest: Seatbelt would have been given another pattern).  It is an empty
 * class: malformed, and the rule fails the load (SPEC 1.2).
 */
Test(fuzz_regress, a_class_that_can_match_no_byte_is_malformed)
{
	const char *bad[] = { "/J[/]//*", "/ws/[/]x", "/ws/[!\x01-\xff]", "/a/[!\x01-.0-\xff]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dsh_error *err = NULL;
		cr_expect_lt(dsh_glob_validate(bad[i], &err), 0, "'%s' accepted", bad[i]);
		cr_expect(err && strstr(err->msg, "malformed glob"), "'%s': %s", bad[i], err ? err->msg : "no error");
		dsh_error_free(err);
	}
	/* A class that keeps a byte besides '/' stays valid, and both matchers agree on it. */
	struct dsh_glob g;
	cr_assert_eq(dsh_glob_compile("/ws/[/x]y", &g, NULL), 0);
	cr_expect(dsh_glob_match(&g, "/ws/xy") && dsh_glob_match_regex(&g, "/ws/xy"));
	cr_expect(!dsh_glob_match(&g, "/ws//y") && !dsh_glob_match_regex(&g, "/ws//y"));
	dsh_glob_clear(&g);

	struct dsh_config c;
	dsh_config_init(&c);
	c.workspace = strdup("/ws");
	dsh_strv_push(&c.access, "-- [/]*.pem");
	struct dsh_policy *p = NULL;
	struct dsh_error *err = NULL;
	char *env[] = { "HOME=/home/u", NULL };
	cr_expect_lt(dsh_policy_new(&c, env, "/ws", &p, &err), 0, "a rule with an empty class loaded");
	cr_expect(err && strstr(err->msg, "rule \"-- [/]*.pem\"") && strstr(err->msg, "empty class"), "%s",
		  err ? err->msg : "no error");
	dsh_error_free(err);
	dsh_policy_free(p);
	dsh_config_clear(&c);
}

/*
 * fuzz_glob: a one-character literal pattern other than "/" ("a", as a relative rule is compiled
 * before expansion) was taken for "/" by the fast matcher, which then matched every absolute path
 * and not the name itself, while the regex matched the name: the two disagreed.
 */
Test(fuzz_regress, a_one_character_literal_is_not_the_root)
{
	struct dsh_glob g;
	cr_assert_eq(dsh_glob_compile("a", &g, NULL), 0);
	cr_expect(dsh_glob_match(&g, "a") && dsh_glob_match_regex(&g, "a"));
	cr_expect(dsh_glob_match(&g, "a/b") && dsh_glob_match_regex(&g, "a/b"));
	cr_expect(!dsh_glob_match(&g, "/etc") && !dsh_glob_match_regex(&g, "/etc"));
	dsh_glob_clear(&g);
	cr_assert_eq(dsh_glob_compile("/", &g, NULL), 0);
	cr_expect(dsh_glob_match(&g, "/etc") && dsh_glob_match_regex(&g, "/etc"));
	dsh_glob_clear(&g);
}

/*
 * fuzz_env, fuzz_bwrap: an error quoting what it was given ("'{{ env.A\nB }}' may only hold
 * env.NAME", "Invalid fd: 3\n") printed as two lines, and the second could pass for another
 * `dshbox:` line.  A message is one line: control characters are spelled out.
 */
Test(fuzz_regress, an_error_quoting_a_newline_stays_one_line)
{
	struct dsh_error *err = NULL;
	char *out = NULL;
	char *env[] = { "HOME=/home/u", NULL };
	cr_assert_lt(dsh_expand_env("{{ env.A\nB }}", env, false, &out, &err), 0);
	cr_expect(err && !strchr(err->msg, '\n') && strstr(err->msg, "env.A\\nB"), "%s", err ? err->msg : "none");
	dsh_error_free(err);
	err = NULL;
	cr_assert_lt(dsh_err(&err, DSH_ERR_USAGE, EINVAL, "bad %s", "x\x01y\tz\r"), 0);
	cr_expect_str_eq(err->msg, "bad x\\x01y\\tz\\r");
	dsh_error_free(err);
}

/* A ClientHello record asking for name: TLS 1.2, one cipher suite, the server_name extension only. */
static size_t client_hello(unsigned char *b, const char *name)
{
	size_t n = strlen(name), i = 0, hs = 4 + 2 + 32 + 1 + 4 + 2 + 2 + 9 + n;
	b[i++] = 22, b[i++] = 3, b[i++] = 1, b[i++] = (unsigned char)(hs >> 8), b[i++] = (unsigned char)hs;
	b[i++] = 1, b[i++] = 0, b[i++] = (unsigned char)((hs - 4) >> 8), b[i++] = (unsigned char)(hs - 4);
	b[i++] = 3, b[i++] = 3;
	memset(b + i, 0x2a, 32), i += 32;
	b[i++] = 0;                                 /* session id */
	b[i++] = 0, b[i++] = 2, b[i++] = 0x13, b[i++] = 0x01; /* cipher suites */
	b[i++] = 1, b[i++] = 0;                     /* compression */
	b[i++] = 0, b[i++] = (unsigned char)(9 + n); /* extensions */
	b[i++] = 0, b[i++] = 0, b[i++] = 0, b[i++] = (unsigned char)(5 + n);
	b[i++] = 0, b[i++] = (unsigned char)(3 + n), b[i++] = 0, b[i++] = 0, b[i++] = (unsigned char)n;
	memcpy(b + i, name, n);
	return i + n;
}

/*
 * fuzz_sni: a ClientHello asking for "exam..e.com" (or ".example.com", "example.com.") was read as
 * FOUND with that name, though RFC 6066 3 holds host_name to a host name without a trailing dot
 * and the reader promised one.  An empty label is no host name: the hello is NOT_TLS, as for any
 * other malformed name.
 */
Test(fuzz_regress, a_server_name_with_an_empty_label_is_refused)
{
	const char *bad[] = { "exam..e.com", ".example.com", "example.com.", ".", ".." };
	unsigned char b[512];
	char name[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = client_hello(b, bad[i]);
		cr_expect_eq(dsh_sni_parse(b, n, name, sizeof(name)), DSH_SNI_NOT_TLS, "'%s' accepted", bad[i]);
	}
	size_t n = client_hello(b, "a.example.com");
	cr_assert_eq(dsh_sni_parse(b, n, name, sizeof(name)), DSH_SNI_FOUND);
	cr_expect_str_eq(name, "a.example.com");
}
