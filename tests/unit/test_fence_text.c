/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What edit calls text (no NUL, RFC 3629 UTF-8), CRLF detection, and LF -> CRLF (pure). */
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "fence/fence.h"
#include "tests/lib/harness.h"

#define VALID(s) dsh_text_valid(s, sizeof(s) - 1)

Test(fence_text, valid_utf8_and_no_nul)
{
	cr_expect(VALID(""));
	cr_expect(VALID("plain ascii\n"));
	cr_expect(VALID("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82 \xf4\x8f\xbf\xbf"));
	cr_expect_not(VALID("a\0b"), "NUL");
	cr_expect_not(VALID("caf\xe9"), "latin-1");
	cr_expect_not(VALID("\xc0\xaf"), "overlong 2");
	cr_expect_not(VALID("\xe0\x80\xaf"), "overlong 3");
	cr_expect_not(VALID("\xf0\x80\x80\xaf"), "overlong 4");
	cr_expect_not(VALID("\xed\xa0\x80"), "surrogate");
	cr_expect_not(VALID("\xf4\x90\x80\x80"), "above U+10FFFF");
	cr_expect_not(VALID("\xc3"), "cut at the end");
	cr_expect_not(VALID("\xc3("), "bad continuation");
	cr_expect_not(VALID("\x80"), "lone continuation");
}

Test(fence_text, crlf_means_every_line_end)
{
	cr_expect(dsh_text_is_crlf("a\r\nb\r\n", 6));
	cr_expect(dsh_text_is_crlf("a\r\nb", 4));
	cr_expect_not(dsh_text_is_crlf("a\r\nb\n", 5), "mixed");
	cr_expect_not(dsh_text_is_crlf("a\nb\n", 4));
	cr_expect_not(dsh_text_is_crlf("no line end", 11));
	cr_expect_not(dsh_text_is_crlf("\n", 1));
	cr_expect_not(dsh_text_is_crlf("", 0));
}

Test(fence_text, lf_to_crlf_leaves_crlf_alone)
{
	size_t n = 0;
	_cleanup_free_ char *a = dsh_text_lf_to_crlf("a\nb\r\n\n", 6, &n);
	cr_expect_eq(n, 8);
	cr_expect_str_eq(a, "a\r\nb\r\n\r\n");
	_cleanup_free_ char *b = dsh_text_lf_to_crlf("", 0, &n);
	cr_expect_eq(n, 0);
	cr_expect_str_eq(b, "");
	_cleanup_free_ char *c = dsh_text_lf_to_crlf("\n", 1, &n);
	cr_expect_str_eq(c, "\r\n");
}
