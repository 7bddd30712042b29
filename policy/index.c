/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rules' index: the verdict's questions in time that grows with the path's depth, not with
 * the number of rules.  A workspace-write policy carries ten protected names per writable root
 * besides the user's rules, and the broker asks on every call that creates or renames a name, so
 * a scan of every rule per question does not scale (issue 14: 100 user rules became 320 scanned).
 *
 * A literal spelling L covers a path exactly when the path's first strlen(L) bytes are L and the
 * next is '/' or its end (dsh_glob_match); so the path's prefixes that end before a '/' or at its
 * end are looked up in a hash of the literal spellings.  A literal target T lies at or beneath a
 * path exactly when the path is one of T's prefixes that ends before a '/' or at T's end
 * (dsh_path_is_beneath); so those prefixes of every target are in the hash too.  What no hash can
 * answer — wildcard patterns, and the one-byte literal "/" — is tried in rule order, only for
 * rules before the best answer so far; a pattern whose literal prefix holds a directory is filed
 * under it and tried only when the walk passes that directory (every match starts with it).  Every answer names the same rule the scan in rule order
 * would: the lowest index.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "policy/glob.h"
#include "policy/index.h"
#include "policy/path.h"

#define NO_RULE UINT_MAX

struct dsh_index_slot {
	const char *key; /* into a rule's own strings; NULL: empty slot */
	size_t len;
	uint64_t hash;
	unsigned cover[2]; /* lowest DENY, RO rule with a literal spelling equal to key */
	unsigned below;    /* lowest non-rw rule with a target equal to key or beneath it */
	unsigned globs, n_globs; /* in x->filed: the patterns whose every match lies below key */
};

struct dsh_index_slow {
	unsigned rule;
	const struct dsh_glob *g;
};

static inline unsigned kind_slot(enum dsh_rule_kind k)
{
	return k == DSH_RULE_DENY ? 0 : 1;
}

static const struct dsh_index_slot *lookup(const struct dsh_rule_index *x, const char *key, size_t len,
					   uint64_t hash)
{
	for (size_t i = (size_t)hash & x->mask;; i = (i + 1) & x->mask) {
		const struct dsh_index_slot *s = &x->slots[i];
		if (!s->key)
			return NULL;
		if (s->hash == hash && s->len == len && memcmp(s->key, key, len) == 0)
			return s;
	}
}

/* Twice the room, every slot re-filed by its kept hash: amortized O(1) per key. */
static int grow(struct dsh_rule_index *x)
{
	size_t cap = 2 * (x->mask + 1);
	struct dsh_index_slot *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i <= x->mask; i++) {
		const struct dsh_index_slot *s = &x->slots[i];
		if (!s->key)
			continue;
		size_t j = (size_t)s->hash & (cap - 1);
		while (slots[j].key)
			j = (j + 1) & (cap - 1);
		slots[j] = *s;
	}
	free(x->slots);
	x->slots = slots;
	x->mask = cap - 1;
	return 0;
}

/*
 * The slot of key, made if new; NULL only when out of memory.  The table grows with the keys
 * actually there (at most half full): sized for every prefix of every rule it held mostly copies
 * of the workspace's own prefixes, hundreds of megabytes for 200,000 rules.
 */
static struct dsh_index_slot *slot_hashed(struct dsh_rule_index *x, const char *key, size_t len, uint64_t hash)
{
	for (size_t i = (size_t)hash & x->mask;; i = (i + 1) & x->mask) {
		struct dsh_index_slot *s = &x->slots[i];
		if (s->key) {
			if (s->hash == hash && s->len == len && memcmp(s->key, key, len) == 0)
				return s;
			continue;
		}
		if (2 * (x->n_slots + 1) > x->mask + 1) {
			if (grow(x) < 0)
				return NULL;
			return slot_hashed(x, key, len, hash);
		}
		*s = (struct dsh_index_slot){ .key = key, .len = len, .hash = hash,
					      .cover = { NO_RULE, NO_RULE }, .below = NO_RULE };
		x->n_slots++;
		return s;
	}
}

static struct dsh_index_slot *slot_for(struct dsh_rule_index *x, const char *key, size_t len)
{
	return slot_hashed(x, key, len, dsh_fnv1a(key, len));
}

static void lower(unsigned *at, unsigned v)
{
	if (v < *at)
		*at = v;
}

/* Every prefix of target that ends before a '/' or at its end: the paths target lies at or below.
   *last (when asked for) is target's own slot, valid until the next key is added. */
static int add_target(struct dsh_rule_index *x, const char *target, unsigned rule, struct dsh_index_slot **last)
{
	if (!target[0])
		return 0;
	/* FNV-1a extends a prefix's hash: one pass over target, not one per prefix. */
	uint64_t h = dsh_fnv1a_step(DSH_FNV1A_INIT, (unsigned char)target[0]);
	for (size_t k = 1;; h = dsh_fnv1a_step(h, (unsigned char)target[k]), k++)
		if (target[k] == '/' || target[k] == '\0') {
			struct dsh_index_slot *s = slot_hashed(x, target, k, h);
			if (!s)
				return -ENOMEM;
			lower(&s->below, rule);
			if (target[k] == '\0') {
				if (last)
					*last = s;
				return 0;
			}
		}
}

/* A rule's keys: its targets' prefixes, its literal spellings, its patterns' directories. */
static int add_rule(struct dsh_rule_index *x, const struct dsh_rule *r, unsigned idx, size_t *n_filed)
{
	/* A literal rule's directory is its canonical spelling: its prefixes are added once. */
	bool dir_added = false;
	for (size_t k = 0; k < r->n_match; k++) {
		const struct dsh_glob *g = &r->match[k];
		if (g->literal && g->literal_len >= 2) {
			struct dsh_index_slot *s = NULL;
			if (add_target(x, g->literal, idx, &s) < 0)
				return -ENOMEM;
			lower(&s->cover[kind_slot(r->kind)], idx);
			dir_added |= r->literal_dir && strcmp(r->literal_dir, g->literal) == 0;
		} else if (dsh_glob_prefix_dir_len(g) >= 2) {
			/* Filed under its literal directory: tried only for the paths below it. */
			struct dsh_index_slot *d = slot_for(x, dsh_glob_prefix(g), dsh_glob_prefix_dir_len(g));
			if (!d)
				return -ENOMEM;
			d->n_globs++;
			x->filed[(*n_filed)++] = (struct dsh_index_slow){ .rule = idx, .g = g };
		} else {
			x->slow[x->n_slow++] = (struct dsh_index_slow){ .rule = idx, .g = g };
		}
	}
	if (r->literal_dir && !dir_added && add_target(x, r->literal_dir, idx, NULL) < 0)
		return -ENOMEM;
	return 0;
}

/* Group the filed patterns by directory, each group in rule order (a stable counting sort). */
static int group_filed(struct dsh_rule_index *x, size_t n_filed)
{
	unsigned at = 0;
	for (size_t i = 0; i <= x->mask; i++) {
		x->slots[i].globs = at;
		at += x->slots[i].n_globs;
		x->slots[i].n_globs = 0;
	}
	struct dsh_index_slow *sorted = calloc(n_filed + 1, sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < n_filed; i++) {
		const struct dsh_glob *g = x->filed[i].g;
		/* Its directory was made a key above: the lookup finds it, slots no longer move. */
		struct dsh_index_slot *d = slot_for(x, dsh_glob_prefix(g), dsh_glob_prefix_dir_len(g));
		sorted[d->globs + d->n_globs++] = x->filed[i];
	}
	free(x->filed);
	x->filed = sorted;
	return 0;
}

int dsh_rule_index_build(struct dsh_rule_index *x, const struct dsh_rule *rules, size_t n)
{
	memset(x, 0, sizeof(*x));
	/* Room for a key per rule at half load from the start: most rules add one key of their own
	   (their directories are shared), and growing by doubling re-files every key each time. */
	size_t cap = 16;
	while (cap < 2 * n && cap < ((size_t)1 << 40))
		cap *= 2;
	x->slots = calloc(cap, sizeof(*x->slots));
	x->mask = cap - 1;
	x->slow = calloc(2 * n + 1, sizeof(*x->slow));
	x->filed = calloc(2 * n + 1, sizeof(*x->filed));
	if (!x->slots || !x->slow || !x->filed) {
		dsh_rule_index_clear(x);
		return -ENOMEM;
	}
	size_t n_filed = 0;
	for (size_t i = 0; i < n; i++)
		if (rules[i].kind != DSH_RULE_RW && add_rule(x, &rules[i], (unsigned)i, &n_filed) < 0) {
			dsh_rule_index_clear(x);
			return -ENOMEM;
		}
	if (group_filed(x, n_filed) < 0) {
		dsh_rule_index_clear(x);
		return -ENOMEM;
	}
	return 0;
}

void dsh_rule_index_clear(struct dsh_rule_index *x)
{
	free(x->slots);
	free(x->slow);
	free(x->filed);
	memset(x, 0, sizeof(*x));
}

/* Patterns in rule order: each only where it could still be the first of its kind. */
static void try_patterns(const struct dsh_policy *p, const struct dsh_index_slow *e, size_t n, const char *path,
			 bool want_ro, unsigned first[2])
{
	for (size_t i = 0; i < n; i++) {
		unsigned k = kind_slot(p->rules[e[i].rule].kind);
		if ((k == 1 && !want_ro) || e[i].rule >= first[k])
			continue;
		if (dsh_glob_match(e[i].g, path))
			first[k] = e[i].rule;
	}
}

/*
 * The lowest DENY rule and (want_ro) the lowest RO rule covering path, NO_RULE for none.
 * Rules and their index belong to the same policy; unsorted rules would still be answered right,
 * only slower, since the slow list is in rule order.
 */
static void first_covers(const struct dsh_policy *p, const char *path, bool want_ro, unsigned first[2])
{
	const struct dsh_rule_index *x = &p->index;
	first[0] = first[1] = NO_RULE;
	uint64_t h = DSH_FNV1A_INIT;
	if (x->n_slots && path[0]) {
		h = dsh_fnv1a_step(h, (unsigned char)path[0]);
		for (size_t k = 1;; k++) {
			unsigned char c = (unsigned char)path[k];
			if (c == '/' || c == '\0') {
				const struct dsh_index_slot *s = lookup(x, path, k, h);
				if (s) {
					lower(&first[0], s->cover[0]);
					if (want_ro)
						lower(&first[1], s->cover[1]);
					if (c == '/')
						try_patterns(p, &x->filed[s->globs], s->n_globs, path, want_ro, first);
				}
				if (c == '\0')
					break;
			}
			h = dsh_fnv1a_step(h, c);
		}
	}
	try_patterns(p, x->slow, x->n_slow, path, want_ro, first);
}

static const struct dsh_rule *rule_at(const struct dsh_policy *p, unsigned i)
{
	return i == NO_RULE ? NULL : &p->rules[i];
}

const struct dsh_rule *dsh_index_first_deny(const struct dsh_policy *p, const char *path)
{
	unsigned first[2];
	first_covers(p, path, false, first);
	return rule_at(p, first[0]);
}

void dsh_index_first_deny_ro(const struct dsh_policy *p, const char *path, const struct dsh_rule **deny,
			     const struct dsh_rule **ro)
{
	unsigned first[2];
	first_covers(p, path, true, first);
	*deny = rule_at(p, first[0]);
	*ro = rule_at(p, first[1]);
}

/* For a path of two bytes or more (shorter ones are on the way to every target: the caller scans). */
const struct dsh_rule *dsh_index_first_guarding(const struct dsh_policy *p, const char *path)
{
	const struct dsh_rule_index *x = &p->index;
	unsigned first[2];
	first_covers(p, path, true, first);
	unsigned best = first[0] < first[1] ? first[0] : first[1];
	size_t len = strlen(path);
	if (x->n_slots) {
		const struct dsh_index_slot *s = lookup(x, path, len, dsh_fnv1a(path, len));
		if (s)
			lower(&best, s->below);
	}
	return rule_at(p, best);
}
