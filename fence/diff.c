/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A line-based unified diff (pure).  Common leading and trailing lines are stripped, then Myers'
 * O(ND) greedy algorithm finds a shortest edit script for the middle.  The trace it keeps grows
 * with D², so past MAX_D edits the middle is emitted as one deletion plus one insertion: still a
 * correct diff (it applies and reverses), only not minimal.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/hash.h"
#include "common/strbuf.h"
#include "fence/fence.h"

#define CONTEXT 3
#define MAX_D 1024

struct line {
	const char *s;
	size_t len;     /* with the '\n' when there is one */
	uint64_t hash;
};

enum op_type { OP_EQ, OP_DEL, OP_INS };
struct op {
	enum op_type type;
	size_t a, b;    /* index in old (EQ, DEL) and new (EQ, INS) */
};

struct ops {
	struct op *v;
	size_t n, cap;
};

static int ops_push(struct ops *o, enum op_type t, size_t a, size_t b)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		struct op *v = realloc(o->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n++] = (struct op){ t, a, b };
	return 0;
}

static int split(const char *s, size_t len, struct line **ret, size_t *ret_n)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n')
			n++;
	if (len && s[len - 1] != '\n')
		n++;
	struct line *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(s + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (s + i)) + 1 : len - i;
		v[k].s = s + i;
		v[k].len = l;
		v[k].hash = dsh_fnv1a(s + i, l);
		k++;
		i += l;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static bool line_eq(const struct line *x, const struct line *y)
{
	return x->hash == y->hash && x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

/*
 * Shortest edit script of a[0..n) -> b[0..m), appended to o with indexes offset by (ao, bo).
 * Returns 1 when D exceeded MAX_D (nothing appended), 0 on success, -ENOMEM.
 */
static int myers(const struct line *a, size_t n, const struct line *b, size_t m, size_t ao, size_t bo,
		 struct ops *o)
{
	long N = (long)n, M = (long)m, max = N + M;
	long dmax = max < MAX_D ? max : MAX_D;
	/* trace[d] holds V[-d..d] after step d: offset d*d (sum of 2i+1 for i<d). */
	_cleanup_free_ long *v = calloc((size_t)(2 * max + 3), sizeof(long));
	_cleanup_free_ long *trace = NULL;
	size_t trace_cap = 0;
	if (!v)
		return -ENOMEM;
	long *V = v + max + 1;
	long D = -1;
	for (long d = 0; d <= dmax; d++) {
		for (long k = -d; k <= d; k += 2) {
			long x;
			if (k == -d || (k != d && V[k - 1] < V[k + 1]))
				x = V[k + 1];
			else
				x = V[k - 1] + 1;
			long y = x - k;
			while (x < N && y < M && line_eq(&a[x], &b[y])) {
				x++;
				y++;
			}
			V[k] = x;
		}
		size_t need = (size_t)((d + 1) * (d + 1));
		if (need > trace_cap) {
			size_t cap = trace_cap ? trace_cap * 2 : 256;
			while (cap < need)
				cap *= 2;
			long *t = realloc(trace, cap * sizeof(long));
			if (!t)
				return -ENOMEM;
			trace = t;
			trace_cap = cap;
		}
		memcpy(trace + d * d, V - d, (size_t)(2 * d + 1) * sizeof(long));
		bool done = false;
		for (long k = -d; k <= d; k += 2)
			if (V[k] >= N && V[k] - k >= M)
				done = true;
		if (done) {
			D = d;
			break;
		}
	}
	if (D < 0)
		return 1;

	/* Backtrack from (N, M), collecting operations in reverse. */
	struct ops rev = { 0 };
	long x = N, y = M;
	int r = 0;
	for (long d = D; d > 0 && r == 0; d--) {
		const long *P = trace + (d - 1) * (d - 1) + (d - 1); /* P[k], k in [-(d-1), d-1] */
		long k = x - y;
		long pk;
		if (k == -d || (k != d && P[k - 1] < P[k + 1]))
			pk = k + 1;
		else
			pk = k - 1;
		long px = P[pk], py = px - pk;
		while (r == 0 && x > px && y > py) {
			x--;
			y--;
			r = ops_push(&rev, OP_EQ, ao + (size_t)x, bo + (size_t)y);
		}
		if (r)
			break;
		if (x == px)
			r = ops_push(&rev, OP_INS, ao + (size_t)x, bo + (size_t)py);
		else
			r = ops_push(&rev, OP_DEL, ao + (size_t)px, bo + (size_t)y);
		x = px;
		y = py;
	}
	while (r == 0 && x > 0 && y > 0) {
		x--;
		y--;
		r = ops_push(&rev, OP_EQ, ao + (size_t)x, bo + (size_t)y);
	}
	for (size_t i = rev.n; r == 0 && i > 0; i--)
		r = ops_push(o, rev.v[i - 1].type, rev.v[i - 1].a, rev.v[i - 1].b);
	free(rev.v);
	return r;
}

static void emit_line(struct dsh_buf *out, char tag, const struct line *l)
{
	dsh_buf_addc(out, tag);
	dsh_buf_addn(out, l->s, l->len);
	if (l->len == 0 || l->s[l->len - 1] != '\n')
		dsh_buf_add(out, "\n\\ No newline at end of file\n");
}

static void emit_range(struct dsh_buf *out, size_t start, size_t len)
{
	/* GNU style: a range of length 1 is just its line; an empty range names the line before it. */
	if (len == 1)
		dsh_buf_addf(out, "%zu", start + 1);
	else if (len == 0)
		dsh_buf_addf(out, "%zu,0", start);
	else
		dsh_buf_addf(out, "%zu,%zu", start + 1, len);
}

int dsh_diff_unified(const char *path, const char *old_s, size_t old_len, const char *new_s,
		     size_t new_len, char **ret, struct dsh_error **err)
{
	_cleanup_free_ struct line *a = NULL, *b = NULL;
	size_t n = 0, m = 0;
	if (split(old_s, old_len, &a, &n) < 0 || split(new_s, new_len, &b, &m) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "diff: out of memory");

	size_t pre = 0;
	while (pre < n && pre < m && line_eq(&a[pre], &b[pre]))
		pre++;
	size_t suf = 0;
	while (suf < n - pre && suf < m - pre && line_eq(&a[n - 1 - suf], &b[m - 1 - suf]))
		suf++;

	struct ops o = { 0 };
	int r = 0;
	for (size_t i = 0; i < pre && r == 0; i++)
		r = ops_push(&o, OP_EQ, i, i);
	if (r == 0) {
		r = myers(a + pre, n - pre - suf, b + pre, m - pre - suf, pre, pre, &o);
		if (r == 1) {
			/* Too many edits for the minimal search: the whole middle out, then in. */
			r = 0;
			for (size_t i = pre; i < n - suf && r == 0; i++)
				r = ops_push(&o, OP_DEL, i, pre);
			for (size_t j = pre; j < m - suf && r == 0; j++)
				r = ops_push(&o, OP_INS, n - suf, j);
		}
	}
	for (size_t i = 0; i < suf && r == 0; i++)
		r = ops_push(&o, OP_EQ, n - suf + i, m - suf + i);
	if (r < 0) {
		free(o.v);
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "diff: out of memory");
	}

	struct dsh_buf out = { 0 };
	bool any = false;
	for (size_t i = 0; i < o.n; i++)
		if (o.v[i].type != OP_EQ)
			any = true;
	if (any)
		dsh_buf_addf(&out, "--- %s\n+++ %s\n", path, path);
	size_t i = 0;
	while (any && i < o.n) {
		/* Find the next change. */
		while (i < o.n && o.v[i].type == OP_EQ)
			i++;
		if (i >= o.n)
			break;
		size_t start = i > CONTEXT ? i - CONTEXT : 0;
		/* Extend the hunk while the gap of equal lines to the next change is <= 2*CONTEXT. */
		size_t end = i; /* exclusive, after the last change */
		size_t j = i;
		for (;;) {
			while (j < o.n && o.v[j].type != OP_EQ)
				j++;
			end = j;
			size_t k = j;
			while (k < o.n && o.v[k].type == OP_EQ)
				k++;
			if (k < o.n && k - j <= 2 * CONTEXT) {
				j = k;
				continue;
			}
			break;
		}
		size_t stop = end + CONTEXT < o.n ? end + CONTEXT : o.n;
		/* Line ranges of the hunk. */
		size_t a0 = 0, b0 = 0, al = 0, bl = 0;
		bool a_set = false, b_set = false;
		for (size_t k = start; k < stop; k++) {
			const struct op *p = &o.v[k];
			if (p->type != OP_INS) {
				if (!a_set) {
					a0 = p->a;
					a_set = true;
				}
				al++;
			}
			if (p->type != OP_DEL) {
				if (!b_set) {
					b0 = p->b;
					b_set = true;
				}
				bl++;
			}
		}
		if (!a_set)
			a0 = o.v[start].a; /* pure insertion: the old line index where it goes */
		if (!b_set)
			b0 = o.v[start].b;
		dsh_buf_add(&out, "@@ -");
		emit_range(&out, a0, al);
		dsh_buf_add(&out, " +");
		emit_range(&out, b0, bl);
		dsh_buf_add(&out, " @@\n");
		for (size_t k = start; k < stop; k++) {
			const struct op *p = &o.v[k];
			switch (p->type) {
			case OP_EQ:
				emit_line(&out, ' ', &a[p->a]);
				break;
			case OP_DEL:
				emit_line(&out, '-', &a[p->a]);
				break;
			case OP_INS:
				emit_line(&out, '+', &b[p->b]);
				break;
			}
		}
		i = stop;
	}
	free(o.v);
	if (!any)
		dsh_buf_add(&out, "");
	char *s = dsh_buf_steal(&out);
	if (!s)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "diff: out of memory");
	*ret = s;
	return 0;
}
