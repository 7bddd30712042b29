/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "winacl/plan.h"

static const char *const sid_names[] = {
	[DSH_WIN_SID_SANDBOX] = "sandbox",
	[DSH_WIN_SID_LOGON] = "logon",
	[DSH_WIN_SID_USER] = "user",
};

const char *dsh_win_sid_to_string(enum dsh_win_sid s)
{
	return (size_t)s < ARRAY_SIZE(sid_names) ? sid_names[s] : "?";
}

char *dsh_win_access_to_string(unsigned access)
{
	struct dsh_buf b = { 0 };
	if (access & DSH_WIN_ACCESS_READ)
		dsh_buf_add(&b, "read,");
	if (access & DSH_WIN_ACCESS_WRITE)
		dsh_buf_add(&b, "write,");
	if (access & DSH_WIN_ACCESS_DELETE)
		dsh_buf_add(&b, "delete,");
	if (b.len)
		b.s[--b.len] = '\0';
	return dsh_buf_steal(&b);
}

static bool is_sep(char c)
{
	return c == '/' || c == '\\';
}
static char fold(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
}

bool dsh_win_path_is_beneath(const char *path, const char *base)
{
	size_t n = strlen(base);
	while (n > 0 && is_sep(base[n - 1]))
		n--; /* "/" and "C:\" end with a separator */
	for (size_t i = 0; i < n; i++) {
		if (is_sep(base[i]) && is_sep(path[i]))
			continue;
		if (fold(base[i]) != fold(path[i]))
			return false;
	}
	return path[n] == '\0' || is_sep(path[n]);
}

/* Parents before children, component-wise ("/a" < "/a/b" < "/a-b"), case-insensitive. */
static int path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		char x = is_sep(*a) ? '\1' : fold(*a), y = is_sep(*b) ? '\1' : fold(*b);
		if (x != y || !x)
			return (unsigned char)x - (unsigned char)y;
	}
}

static int ace_cmp(const void *pa, const void *pb)
{
	const struct dsh_win_ace *a = pa, *b = pb;
	int c = path_cmp(a->path, b->path);
	if (c)
		return c;
	if (a->type != b->type)
		return a->type == DSH_WIN_ACE_ALLOW ? -1 : 1;
	return a->rule - b->rule;
}

static int add_ace(struct dsh_winacl_plan *p, enum dsh_win_ace_type type, enum dsh_win_sid sid, unsigned access,
		   const char *path, int rule, char *why)
{
	struct dsh_win_ace *a = realloc(p->aces, (p->n_aces + 1) * sizeof(*a));
	if (!a) {
		free(why);
		return -ENOMEM;
	}
	p->aces = a;
	a = &p->aces[p->n_aces];
	a->type = type;
	a->sid = sid;
	a->access = access;
	a->rule = rule;
	a->why = why;
	a->path = strdup(path);
	if (!a->path || !why) {
		free(a->path);
		free(why);
		return -ENOMEM;
	}
	p->n_aces++;
	return 0;
}

static char *dupf(const char *fmt, const char *a)
{
	char *s = NULL;
	return asprintf(&s, fmt, a) < 0 ? NULL : s;
}

/* The literal r-/-- rule covering path, or NULL. */
static const struct dsh_winacl_rule *covering_rule(const struct dsh_winacl_input *in, const char *path)
{
	for (size_t i = 0; i < in->n_rules; i++) {
		const struct dsh_winacl_rule *r = &in->rules[i];
		if (r->kind == DSH_RULE_RW || r->glob || !r->paths)
			continue;
		for (size_t j = 0; r->paths[j]; j++)
			if (dsh_win_path_is_beneath(path, r->paths[j]))
				return r;
	}
	return NULL;
}

int dsh_winacl_plan_build(const struct dsh_winacl_input *in, struct dsh_winacl_plan *ret, struct dsh_error **err)
{
	struct dsh_winacl_plan p = { 0 };
	bool deny_rules = false;
	for (size_t i = 0; i < in->n_rules; i++)
		deny_rules |= in->rules[i].kind != DSH_RULE_RW;
	p.n_rules = in->n_rules;
	p.refuse = calloc(in->n_rules ? in->n_rules : 1, sizeof(*p.refuse));
	if (!p.refuse)
		goto oom;
	for (size_t i = 0; i < in->n_rules; i++)
		p.refuse[i] = in->rules[i].glob && in->rules[i].kind != DSH_RULE_RW;

	if (in->mode == DSH_MODE_DANGER_FULL_ACCESS && !deny_rules) {
		/* No confinement of its own (SPEC 1.1): the caller's token, unchanged. */
		*ret = p;
		return 0;
	}
	p.restricted = true;
	p.restricting[p.n_restricting++] = DSH_WIN_SID_SANDBOX;
	p.restricting[p.n_restricting++] = DSH_WIN_SID_LOGON;
	if (in->mode == DSH_MODE_DANGER_FULL_ACCESS)
		/* Writes stay wherever the user may write; only the deny ACEs take something away. */
		p.restricting[p.n_restricting++] = DSH_WIN_SID_USER;

	if (in->mode == DSH_MODE_WORKSPACE_WRITE) {
		for (size_t i = 0; in->roots && in->roots[i]; i++) {
			const char *label = in->root_labels && in->root_labels[i] ? in->root_labels[i] : "root";
			const struct dsh_winacl_rule *cover = covering_rule(in, in->roots[i]);
			if (cover) {
				/* An explicit allow on the root would outrank the inherited deny: never
				   grant what a rule takes away (-- > r- > rw). */
				if (dsh_strv_pushf(&p.notes, "writable root %s (%s) is not granted: rule \"%s\" covers it",
						   in->roots[i], label, cover->text) < 0)
					goto oom;
				continue;
			}
			if (add_ace(&p, DSH_WIN_ACE_ALLOW, DSH_WIN_SID_SANDBOX, DSH_WIN_ACCESS_WRITE | DSH_WIN_ACCESS_DELETE,
				    in->roots[i], -1, dupf("writable root (%s)", label)) < 0)
				goto oom;
		}
	}
	for (size_t i = 0; i < in->n_rules; i++) {
		const struct dsh_winacl_rule *r = &in->rules[i];
		if (r->kind == DSH_RULE_RW || r->glob || !r->paths)
			continue;
		for (size_t j = 0; r->paths[j]; j++)
			if (add_ace(&p, DSH_WIN_ACE_DENY, DSH_WIN_SID_SANDBOX, DSH_WIN_ACCESS_WRITE | DSH_WIN_ACCESS_DELETE,
				    r->paths[j], (int)i, dupf("rule \"%s\"", r->text)) < 0)
				goto oom;
	}
	if (p.n_aces)
		qsort(p.aces, p.n_aces, sizeof(*p.aces), ace_cmp);
	*ret = p;
	return 0;
oom:
	dsh_winacl_plan_clear(&p);
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

void dsh_winacl_plan_clear(struct dsh_winacl_plan *p)
{
	for (size_t i = 0; i < p->n_aces; i++) {
		free(p->aces[i].path);
		free(p->aces[i].why);
	}
	free(p->aces);
	free(p->refuse);
	dsh_strv_free(p->notes);
	memset(p, 0, sizeof(*p));
}

char *dsh_winacl_plan_render(const struct dsh_winacl_plan *p)
{
	struct dsh_buf b = { 0 };
	if (!p->restricted) {
		dsh_buf_add(&b, "token: unchanged (danger-full-access without r-/-- rules)\n");
	} else {
		dsh_buf_add(&b, "token: write-restricted; restricting SIDs:");
		for (size_t i = 0; i < p->n_restricting; i++)
			dsh_buf_addf(&b, " %s", dsh_win_sid_to_string(p->restricting[i]));
		dsh_buf_addc(&b, '\n');
	}
	for (size_t i = 0; i < p->n_aces; i++) {
		const struct dsh_win_ace *a = &p->aces[i];
		_cleanup_free_ char *acc = dsh_win_access_to_string(a->access);
		dsh_buf_addf(&b, "%-5s %s %s inherit \"%s\"  # %s\n", a->type == DSH_WIN_ACE_ALLOW ? "allow" : "deny",
			     dsh_win_sid_to_string(a->sid), acc ? acc : "?", a->path, a->why);
	}
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->refuse[i])
			dsh_buf_addf(&b, "refuse: rule %u is a glob (the Windows runner expands none)\n", (unsigned)(i + 1));
	for (size_t i = 0; p->notes && p->notes[i]; i++)
		dsh_buf_addf(&b, "note: %s\n", p->notes[i]);
	return dsh_buf_steal(&b);
}
