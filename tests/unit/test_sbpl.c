/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Seatbelt profile generator: golden profiles, the profile read back as s-expressions for
 * 10,000 generated paths, control characters refused, and case folding.
 */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/backend.h"
#include "seatbelt/sbpl.h"
#include "supervisor/backends.h"
#include "tests/lib/harness.h"
#include "tests/unit/test_backend_fixture.h"
#include "tests/unit/test_sbpl_sexpr.h"

/* ---- golden profiles ---- */

static void check_golden(const char *name, const struct dsh_policy *p)
{
	char *profile = NULL;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_sbpl_profile(p, &profile, &e), 0, "%s: %s", name, e ? e->msg : "");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/golden/sbpl/%s.sb", DSH_TOP, name);
	const char *update = getenv("DSH_UPDATE_GOLDEN");
	if (update && *update == '1') {
		dsh_test_write_file(path, profile);
	}
	char *want = dsh_test_read_file(path);
	cr_assert_not_null(want, "golden file %s is missing (DSH_UPDATE_GOLDEN=1 writes it)", path);
	cr_expect_str_eq(profile, want, "%s differs from the generated profile:\n%s", path, profile);
	/* Every golden also reads back as s-expressions. */
	const char *why = NULL;
	struct sx *all = sx_read_all(profile, &why);
	cr_expect_not_null(all, "%s: %s", name, why);
	sx_free(all);
	free(want);
	free(profile);
}

Test(sbpl, golden_workspace_write_no_rules)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
	fx_root(&p, "/tmp", DSH_ROOT_TMP);
	fx_root(&p, "/ws", DSH_ROOT_WORKSPACE);
	check_golden("workspace-write-none", &p);
	fx_clear(&p);
}

Test(sbpl, golden_read_only_no_rules)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_READ_ONLY, "/ws");
	check_golden("read-only-none", &p);
	fx_clear(&p);
}

Test(sbpl, golden_danger_with_rules)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_DANGER_FULL_ACCESS, "/ws");
	fx_root(&p, "/", DSH_ROOT_WORKSPACE);
	fx_literal(&p, DSH_RULE_RO, "r- /etc", "/etc", NULL);
	fx_literal(&p, DSH_RULE_DENY, "-- /home/u/.ssh", "/home/u/.ssh", NULL);
	check_golden("danger-rules", &p);
	fx_clear(&p);
}

Test(sbpl, golden_workspace_write_rules)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
	fx_root(&p, "/home/u/.cache", DSH_ROOT_RULE);
	fx_root(&p, "/tmp", DSH_ROOT_TMP);
	fx_root(&p, "/ws", DSH_ROOT_WORKSPACE);
	fx_literal(&p, DSH_RULE_RW, "rw {{ env.XDG_CACHE_HOME }}", "/home/u/.cache", NULL);
	fx_literal(&p, DSH_RULE_RO, "r- .git/hooks", "/ws/.git/hooks", NULL);
	fx_literal(&p, DSH_RULE_DENY, "-- /home/u/.ssh", "/home/u/.ssh", NULL);
	/* a rule whose spelling differs from its canonical path protects both */
	fx_literal(&p, DSH_RULE_DENY, "-- link/.env", "/srv/real/.env", "/ws/link/.env");
	check_golden("workspace-write-rules", &p);
	fx_clear(&p);
}

Test(sbpl, golden_quoting)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/w s/\"q\"");
	fx_root(&p, "/w s/\"q\"", DSH_ROOT_WORKSPACE);
	fx_root(&p, "/back\\slash (1)#;x", DSH_ROOT_RULE);
	fx_literal(&p, DSH_RULE_RW, "rw /back\\slash (1)#;x", "/back\\slash (1)#;x", NULL);
	fx_literal(&p, DSH_RULE_RO, "r- /w s/\"q\"/a\"b", "/w s/\"q\"/a\"b", NULL);
	fx_literal(&p, DSH_RULE_DENY, "-- /w s/\"q\"/[id]/(x)|y$^.*+?{}", "/w s/\"q\"/[id]/(x)|y$^.*+?{}", NULL);
	fx_literal(&p, DSH_RULE_DENY, "-- /srv/Ünïcødé/日本/🙂", "/srv/Ünïcødé/日本/🙂", NULL);
	check_golden("quoting", &p);
	fx_clear(&p);
}

Test(sbpl, golden_globs)
{
	/* Regexes as the matcher writes them (policy/glob.c); tests/unit/test_sbpl_globs.c checks the
	   real ones against globs.tsv. */
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
	fx_root(&p, "/ws", DSH_ROOT_WORKSPACE);
	fx_glob(&p, DSH_RULE_DENY, "-- **/*.pem", "/ws/**/*.pem", "^/ws/(.*/)?[^/]*\\.pem(/.*)?$");
	fx_glob(&p, DSH_RULE_DENY, "-- mise.*.toml", "/ws/mise.*.toml", "^/ws/mise\\.[^/]*\\.toml(/.*)?$");
	fx_glob(&p, DSH_RULE_RO, "r- /ws/[a-c!].txt", "/ws/[a-c!].txt", "^/ws/[!a-c]\\.txt(/.*)?$");
	check_golden("globs", &p);
	fx_clear(&p);
}

/* ---- case folding ---- */

static char *fold(const char *re)
{
	char *out = NULL;
	struct dsh_error *e = NULL;
	cr_assert_eq(dsh_sbpl_casefold_regex(re, &out, &e), 0, "%s: %s", re, e ? e->msg : "");
	return out;
}

static bool ere_match(const char *re, const char *s)
{
	regex_t r;
	cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0, "regcomp %s", re);
	bool m = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return m;
}

Test(sbpl, casefold_shapes)
{
	char *f;
	f = fold("^/ws/\\.env(/.*)?$");
	cr_expect_str_eq(f, "^/[wW][sS]/\\.[eE][nN][vV](/.*)?$");
	free(f);
	f = fold("^/ws/[!a-c]\\.txt(/.*)?$");
	cr_expect_str_eq(f, "^/[wW][sS]/[!A-Ca-c]\\.[tT][xX][tT](/.*)?$");
	free(f);
	f = fold("^/[^/]*[^ab]$");
	cr_expect_str_eq(f, "^/[^/]*[^ABab]$");
	free(f);
	f = fold("^/[]x-]$");
	cr_expect_str_eq(f, "^/[]Xx-]$");
	free(f);
	f = fold("^/é$");
	cr_expect_str_eq(f, "^/(é|É)$");
	free(f);
	cr_expect(ere_match("^/[wW][sS]/[!A-Ca-c]\\.[tT][xX][tT](/.*)?$", "/WS/B.Txt/x"));
	/* refused: what the matcher never writes and the fold could get wrong */
	char *out = NULL;
	struct dsh_error *e = NULL;
	cr_expect_lt(dsh_sbpl_casefold_regex("^/[[:alpha:]]$", &out, &e), 0);
	dsh_error_free(e);
	e = NULL;
	cr_expect_lt(dsh_sbpl_casefold_regex("^/\\w$", &out, &e), 0);
	dsh_error_free(e);
}

/* ---- 10,000 generated paths read back ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

static const char *const pieces[] = {
	"a", "Z", "q", "\"", "\\", "(", ")", "#", "#\"", "\\\"", ";", " ", "|", "[", "]", "*", "?", "{",
	"}", ".", "..", "$", "^", "+", "-", "_", "~", "'", "`", "!", "@", "%", "&", "=", ",", ":", "<",
	">", "é", "É", "ß", "ı", "日本", "🙂", "Ω", "ж", "x\\", "\"\"", "))", "#|", "|#",
};

static char *gen_path(void)
{
	char buf[512] = "";
	size_t n_comp = 1 + rnd(4);
	for (size_t c = 0; c < n_comp; c++) {
		strcat(buf, "/");
		size_t n_piece = 1 + rnd(6);
		for (size_t i = 0; i < n_piece; i++)
			strcat(buf, pieces[rnd(ARRAY_SIZE(pieces))]);
	}
	return strdup(buf);
}

/* Swap the case of every ASCII letter and of the two-byte letters the fold knows. */
static char *swap_case(const char *s)
{
	char *d = strdup(s);
	for (unsigned char *p = (unsigned char *)d; *p; p++) {
		if (*p >= 'a' && *p <= 'z')
			*p -= 32;
		else if (*p >= 'A' && *p <= 'Z')
			*p += 32;
		else if (p[0] == 0xC3 && (p[1] == 0xA9 || p[1] == 0x89))
			p[1] ^= 0x20, p++; /* é <-> É */
		else if (p[0] == 0xCE && p[1] == 0xA9)
			p[0] = 0xCF, p[1] = 0x89, p++; /* Ω -> ω */
		else if (p[0] == 0xD0 && p[1] == 0xB6)
			p[1] = 0x96, p++; /* ж -> Ж */
	}
	return d;
}

static void check_regex_covers(const char *re, const char *path)
{
	char *child = NULL, *sibling = NULL, *swapped = swap_case(path);
	cr_assert(asprintf(&child, "%s/child", path) > 0);
	cr_assert(asprintf(&sibling, "%sx", path) > 0);
	regex_t r;
	cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0, "regcomp %s", re);
	cr_assert_eq(regexec(&r, path, 0, NULL, 0), 0, "%s does not match %s", re, path);
	cr_assert_eq(regexec(&r, child, 0, NULL, 0), 0, "%s does not match %s", re, child);
	cr_assert_eq(regexec(&r, swapped, 0, NULL, 0), 0, "%s does not match %s", re, swapped);
	cr_assert_neq(regexec(&r, sibling, 0, NULL, 0), 0, "%s matches %s", re, sibling);
	regfree(&r);
	free(child);
	free(sibling);
	free(swapped);
}

/* (OP… FILTER…) with the given operation symbols and filters; returns the filter list. */
static void expect_form(const struct sx *f, const char *action, const char *const *ops, size_t n_ops,
			size_t n_filters)
{
	cr_assert_eq(f->type, SX_LIST);
	cr_assert_eq(f->n, 1 + n_ops + n_filters, "form has %zu items, want %zu", f->n, 1 + n_ops + n_filters);
	cr_assert(sx_is_sym(f->kids[0], action), "form starts with %s", f->kids[0]->s);
	for (size_t i = 0; i < n_ops; i++)
		cr_assert(sx_is_sym(f->kids[1 + i], ops[i]), "operation %zu is not %s", i, ops[i]);
}

static void check_deny_literal(const struct sx *f, size_t first, const char *path)
{
	bool rx_literal;
	const char *sub = sx_filter(f->kids[first], "subpath", NULL);
	cr_assert_not_null(sub, "subpath filter missing");
	cr_assert_str_eq(sub, path);
	const char *re = sx_filter(f->kids[first + 1], "regex", &rx_literal);
	cr_assert_not_null(re, "regex filter missing");
	/* the #"…" form unless the regex must hold a quote */
	cr_assert_eq(rx_literal, strchr(path, '"') == NULL, "regex form for %s", path);
	check_regex_covers(re, path);
}

Test(sbpl, sexpr_structure_10000_paths)
{
	static const char *const w[] = { "file-write*" };
	static const char *const rw[] = { "file-read*", "file-write*" };
	static const char *const def[] = { "default" };
	for (int i = 0; i < 10000; i++) {
		char *root = gen_path(), *ro = gen_path(), *deny = gen_path(), *alt = NULL;
		cr_assert(asprintf(&alt, "/alt%s", deny) > 0);
		struct dsh_policy p;
		fx_init(&p, DSH_MODE_WORKSPACE_WRITE, root);
		fx_root(&p, root, DSH_ROOT_WORKSPACE);
		/* the rule texts carry the paths too: they end up in comments */
		char *ro_text = NULL, *deny_text = NULL;
		cr_assert(asprintf(&ro_text, "r- %s", ro) > 0 && asprintf(&deny_text, "-- %s", deny) > 0);
		fx_literal(&p, DSH_RULE_RO, ro_text, ro, NULL);
		fx_literal(&p, DSH_RULE_DENY, deny_text, deny, alt);
		free(ro_text), free(deny_text);
		char *profile = NULL;
		struct dsh_error *e = NULL;
		cr_assert_eq(dsh_sbpl_profile(&p, &profile, &e), 0, "%s", e ? e->msg : "");
		const char *why = NULL;
		struct sx *all = sx_read_all(profile, &why);
		cr_assert_not_null(all, "profile for %s / %s / %s does not read back: %s\n%s", root, ro, deny,
				   why, profile);
		cr_assert_eq(all->n, 7, "%zu forms:\n%s", all->n, profile);
		cr_assert_eq(all->kids[0]->n, 2);
		cr_assert(sx_is_sym(all->kids[0]->kids[0], "version") && sx_is_sym(all->kids[0]->kids[1], "1"));
		expect_form(all->kids[1], "allow", def, 1, 0);
		expect_form(all->kids[2], "deny", w, 1, 0);
		expect_form(all->kids[3], "allow", w, 1, 1);
		cr_assert_str_eq(sx_filter(all->kids[3]->kids[2], "literal", NULL), "/dev/null");
		expect_form(all->kids[4], "allow", w, 1, 1);
		const char *r = sx_filter(all->kids[4]->kids[2], "subpath", NULL);
		cr_assert(r && strcmp(r, root) == 0, "writable root reads back as %s, not %s", r, root);
		expect_form(all->kids[5], "deny", w, 1, 2);
		check_deny_literal(all->kids[5], 2, ro);
		expect_form(all->kids[6], "deny", rw, 2, 4);
		check_deny_literal(all->kids[6], 3, deny);
		check_deny_literal(all->kids[6], 5, alt);
		sx_free(all);
		free(profile);
		fx_clear(&p);
		free(root), free(ro), free(deny), free(alt);
	}
}

Test(sbpl, control_characters_refused)
{
	for (int c = 1; c < 0x80; c++) {
		if (c >= 0x20 && c != 0x7f)
			continue;
		char path[32];
		snprintf(path, sizeof(path), "/ws/a%cb", c);
		for (int where = 0; where < 3; where++) {
			struct dsh_policy p;
			fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
			if (where == 0)
				fx_root(&p, path, DSH_ROOT_RULE);
			else
				fx_literal(&p, where == 1 ? DSH_RULE_RO : DSH_RULE_DENY, "-- x", path, NULL);
			char *profile = NULL;
			struct dsh_error *e = NULL;
			cr_expect_eq(dsh_sbpl_profile(&p, &profile, &e), -EINVAL, "0x%02x in %d accepted", c, where);
			cr_expect_null(profile);
			cr_expect(e && strstr(e->msg, "control character"), "message: %s", e ? e->msg : "");
			dsh_error_free(e);
			fx_clear(&p);
		}
	}
}

Test(sbpl, backend_render_describe)
{
	struct dsh_policy p;
	fx_init(&p, DSH_MODE_WORKSPACE_WRITE, "/ws");
	fx_root(&p, "/ws", DSH_ROOT_WORKSPACE);
	fx_literal(&p, DSH_RULE_DENY, "-- /ws/.env", "/ws/.env", NULL);
	fx_literal(&p, DSH_RULE_RO, "r- /srv/Ünï", "/srv/Ünï", NULL);
	const struct dsh_backend *b = &dsh_backend_seatbelt;
	void *plan = NULL;
	struct dsh_error *e = NULL;
	cr_assert_eq(b->compile(&p, &fx_ro, &plan, &e), 0);
	char *text = NULL, *direct = NULL;
	cr_assert_eq(b->render(&p, plan, &text, &e), 0);
	cr_assert_eq(dsh_sbpl_profile(&p, &direct, &e), 0);
	cr_expect_str_eq(text, direct);
	struct dsh_description d;
	cr_assert_eq(b->describe(&p, plan, &d, &e), 0);
	cr_expect_eq(d.n_rules, 2);
	cr_expect_eq(d.rules[0].level, DSH_ENFORCE_FULL);
	cr_expect_eq(d.rules[1].level, DSH_ENFORCE_PARTIAL);
	cr_expect_eq(d.overall, DSH_ENFORCE_PARTIAL);
	cr_assert_eq(dsh_strv_len(d.warnings), 1);
	cr_expect(strstr(d.warnings[0], "rule \"r- /srv/Ünï\": backend seatbelt: "), "%s", d.warnings[0]);
	cr_expect(dsh_strv_contains(d.denial_signatures, "operation not permitted"));
#ifndef __APPLE__
	bool said = false;
	for (char **n = d.notes; n && *n; n++)
		said |= strstr(*n, "not run on this platform") != NULL;
	cr_expect(said, "describe() does not say the profile is not run here");
	cr_expect_lt(b->probe(&p, &fx_ro, &e), 0);
	cr_expect(e && e->hint);
	dsh_error_free(e);
	e = NULL;
#endif
	dsh_description_clear(&d);
	b->free(plan);
	free(text);
	free(direct);
	fx_clear(&p);
}
