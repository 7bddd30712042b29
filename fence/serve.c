/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The JSON-lines protocol of `dshbox serve`: request object -> answer object (docs/serve.md). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/resolve.h"
#include "common/strbuf.h"
#include "fence/fence.h"
#include "fence/serve.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *dsh_base64_encode(const unsigned char *s, size_t n, size_t *ret_len)
{
	size_t out_len = (n + 2) / 3 * 4;
	char *out = malloc(out_len + 1);
	if (!out)
		return NULL;
	size_t o = 0, i = 0;
	for (; i + 2 < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = b64[v >> 6 & 63];
		out[o++] = b64[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0);
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	if (ret_len)
		*ret_len = o;
	return out;
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;
	return p ? (int)(p - b64) : -1;
}

int dsh_base64_decode(const char *s, size_t n, unsigned char **ret, size_t *ret_len)
{
	if (n % 4)
		return -EINVAL;
	unsigned char *out = malloc(n / 4 * 3 + 1);
	if (!out)
		return -ENOMEM;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		bool last = i + 4 == n;
		for (int k = 0; k < 4; k++) {
			v[k] = b64_value(s[i + k]);
			if (v[k] < 0 && !(last && k >= 2 && s[i + k] == '=')) {
				free(out);
				return -EINVAL;
			}
		}
		if (v[2] < 0 && v[3] >= 0) {
			free(out);
			return -EINVAL;
		}
		unsigned x = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)(v[2] < 0 ? 0 : v[2]) << 6 |
			     (unsigned)(v[3] < 0 ? 0 : v[3]);
		out[o++] = (unsigned char)(x >> 16);
		if (v[2] >= 0)
			out[o++] = (unsigned char)(x >> 8 & 0xff);
		if (v[3] >= 0)
			out[o++] = (unsigned char)(x & 0xff);
	}
	out[o] = '\0';
	*ret = out;
	*ret_len = o;
	return 0;
}

static void dsh_json_decrefp(json_t **j)
{
	if (*j)
		json_decref(*j);
}
#define _cleanup_json_ _cleanup_(dsh_json_decrefp)

/* Set a key, taking the reference; a NULL value (out of memory) is remembered. */
static void put(json_t *o, const char *k, json_t *v, bool *oom)
{
	if (!v || json_object_set_new(o, k, v) < 0)
		*oom = true;
}

/* A path or name that is not UTF-8, as its bytes in base64 (a request can give it back so). */
static void put_base64(json_t *o, const char *key, const char *s, bool *oom)
{
	char *enc = dsh_base64_encode((const unsigned char *)s, strlen(s), NULL);
	put(o, key, enc ? json_string(enc) : NULL, oom);
	free(enc);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *error_answer(json_t *id, const char *op, enum dsh_err_kind kind, const char *path,
			    const struct dsh_policy *p, const char *rule, const char *message)
{
	bool oom = false;
	json_t *a = json_object(), *e = json_object();
	if (!a || !e) {
		json_decref(a);
		json_decref(e);
		return NULL;
	}
	put(a, "id", id ? json_incref(id) : json_null(), &oom);
	put(a, "ok", json_false(), &oom);
	put(e, "kind", json_string(dsh_err_kind_to_string(kind)), &oom);
	put(e, "op", str_or_null(op), &oom);
	put(e, "path", str_or_null(path), &oom);
	put(e, "mode", p ? json_string(dsh_mode_to_string(dsh_policy_mode(p))) : json_null(), &oom);
	put(e, "rule", str_or_null(rule), &oom);
	put(e, "message", json_string(message ? message : "failed"), &oom);
	put(a, "error", e, &oom);
	if (oom) {
		json_decref(a);
		return NULL;
	}
	return a;
}

__attribute__((format(printf, 4, 5))) static json_t *invalid(json_t *id, const char *op,
							     const struct dsh_policy *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The message may quote a key or a parser error: keep it valid UTF-8 by dropping high bytes. */
	for (char *c = msg; *c; c++)
		if ((unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20)
			*c = '?';
	return error_answer(id, op, DSH_ERR_INVALID, NULL, p, NULL, msg);
}

static json_t *failure_answer(json_t *id, const char *op, const struct dsh_policy *p, const struct dsh_error *f)
{
	static const struct dsh_error none = { .kind = DSH_ERR_SYSTEM };
	if (!f)
		f = &none;
	const char *msg = f->msg ? f->msg : "failed";
	/* Paths are bytes; JSON strings are UTF-8.  A path that is not UTF-8 is sent with its invalid
	   bytes replaced, and the message likewise (json_string refuses invalid UTF-8). */
	json_t *a = error_answer(id, op, f->kind, f->path, p, f->rule, msg);
	if (a)
		return a;
	_cleanup_free_ char *path = f->path ? strdup(f->path) : NULL, *m = strdup(msg),
			    *rule = f->rule ? strdup(f->rule) : NULL; /* a rule may hold such bytes too */
	char *const texts[] = { path, m, rule };
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		for (char *c = texts[i]; c && *c; c++)
			if ((unsigned char)*c >= 0x80)
				*c = '?';
	a = error_answer(id, op, f->kind, path, p, rule, m ? m : "failed");
	json_t *pv = f->path ? json_string(f->path) : NULL;
	if (a && f->path && !pv) {
		bool oom = false;
		put_base64(json_object_get(a, "error"), "path_base64", f->path, &oom);
		if (oom) {
			json_decref(a);
			return NULL;
		}
	}
	json_decref(pv);
	return a;
}

static json_t *ok_answer(json_t *id, const char *op, const char *path, bool *oom)
{
	json_t *a = json_object();
	if (!a) {
		*oom = true;
		return NULL;
	}
	put(a, "id", id ? json_incref(id) : json_null(), oom);
	put(a, "ok", json_true(), oom);
	put(a, "op", json_string(op), oom);
	json_t *ps = json_string(path);
	put(a, "path", ps ? ps : json_string("?"), oom);
	if (!ps)
		put_base64(a, "path_base64", path, oom);
	return a;
}

/* Every key of the request must be one the operation knows: a typo is an error, not a default. */
static const char *unknown_key(json_t *req, const char *const *allowed)
{
	const char *k;
	json_t *v;
	json_object_foreach(req, k, v) {
		bool found = false;
		for (size_t i = 0; allowed[i]; i++)
			if (strcmp(k, allowed[i]) == 0)
				found = true;
		if (!found)
			return k;
	}
	return NULL;
}

static int get_string(json_t *req, const char *key, bool required, const char **ret, size_t *ret_len)
{
	json_t *v = json_object_get(req, key);
	if (!v) {
		*ret = NULL;
		*ret_len = 0;
		return required ? -ENOENT : 0;
	}
	if (!json_is_string(v))
		return -EINVAL;
	*ret = json_string_value(v);
	*ret_len = json_string_length(v);
	return 0;
}

static int get_u64(json_t *req, const char *key, uint64_t *ret)
{
	json_t *v = json_object_get(req, key);
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -EINVAL;
	*ret = (uint64_t)json_integer_value(v);
	return 0;
}


/*
 * A JSON string, escaped, appended to b; false when s is not valid UTF-8 (nothing usable appended).
 * The read answer is the hot path of the protocol: jansson's dumper decodes every character, this
 * copies runs of plain ASCII whole (4 KiB reads: most of the CPU time of an answer otherwise).
 */
static bool json_put_string(struct dsh_buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	dsh_buf_addc(b, '"');
	size_t run = 0; /* start of the pending run of bytes copied as they are */
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			/* One UTF-8 sequence, checked as jansson checks it. */
			size_t len = dsh_utf8_sequence(s + i, n - i);
			if (!len)
				return false;
			i += len;
			continue;
		}
		dsh_buf_addn(b, str + run, i - run);
		switch (c) {
		case '"':
			dsh_buf_add(b, "\\\"");
			break;
		case '\\':
			dsh_buf_add(b, "\\\\");
			break;
		case '\n':
			dsh_buf_add(b, "\\n");
			break;
		case '\t':
			dsh_buf_add(b, "\\t");
			break;
		case '\r':
			dsh_buf_add(b, "\\r");
			break;
		case '\b':
			dsh_buf_add(b, "\\b");
			break;
		case '\f':
			dsh_buf_add(b, "\\f");
			break;
		default:
			dsh_buf_addf(b, "\\u%04x", c);
		}
		i++;
		run = i;
	}
	dsh_buf_addn(b, str + run, n - run);
	dsh_buf_addc(b, '"');
	return true;
}

/* The success answer of a read, serialised directly; NULL when out of memory. */
static char *read_answer_text(json_t *id, const struct dsh_fence_read_result *r)
{
	struct dsh_buf b = { 0 };
	dsh_buf_add(&b, "{\"id\":");
	if (id && json_is_string(id)) {
		if (!json_put_string(&b, json_string_value(id), json_string_length(id)))
			dsh_buf_add(&b, "null"); /* cannot happen: jansson only holds valid UTF-8 */
	} else if (id && json_is_integer(id)) {
		dsh_buf_addf(&b, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
	} else {
		dsh_buf_add(&b, "null");
	}
	dsh_buf_add(&b, ",\"ok\":true,\"op\":\"read\",\"path\":");
	size_t mark = b.len;
	if (!json_put_string(&b, r->path, strlen(r->path))) {
		b.len = mark;
		char *enc = dsh_base64_encode((const unsigned char *)r->path, strlen(r->path), NULL);
		if (!enc)
			b.oom = true;
		dsh_buf_add(&b, "\"?\",\"path_base64\":\"");
		if (enc)
			dsh_buf_add(&b, enc);
		dsh_buf_addc(&b, '"');
		free(enc);
	}
	dsh_buf_add(&b, ",\"encoding\":\"utf-8\",\"content\":");
	mark = b.len;
	if (!json_put_string(&b, r->data, r->len)) {
		b.len = mark;
		if (b.s)
			b.s[b.len] = '\0';
		/* Not UTF-8: the bytes in base64. */
		b.len -= strlen("\"utf-8\",\"content\":");
		size_t n = 0;
		char *enc = dsh_base64_encode((const unsigned char *)r->data, r->len, &n);
		if (!enc)
			b.oom = true;
		dsh_buf_add(&b, "\"base64\",\"content\":\"");
		if (enc)
			dsh_buf_addn(&b, enc, n);
		dsh_buf_addc(&b, '"');
		free(enc);
	}
	/* The version is digits and colons: nothing to escape. */
	dsh_buf_addf(&b, ",\"size\":%llu,\"offset\":%llu,\"length\":%zu,\"eof\":%s,\"version\":\"%s\"}",
		     (unsigned long long)r->size, (unsigned long long)r->offset, r->len, r->eof ? "true" : "false",
		     r->version);
	return dsh_buf_steal(&b);
}

/* A list's answer: its entries, a name that is not UTF-8 given in base64. */
static json_t *list_answer(json_t *id, const char *op, const struct dsh_fence_list_result *r, bool *oom)
{
	json_t *a = ok_answer(id, op, r->path, oom);
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < r->n_entries; i++) {
		const struct dsh_fence_entry *e = &r->entries[i];
		json_t *o = json_object();
		if (!o) {
			*oom = true;
			break;
		}
		json_t *name = json_string(e->name);
		if (name)
			put(o, "name", name, oom);
		else
			put_base64(o, "name_base64", e->name, oom);
		put(o, "type", json_string(dsh_fence_entry_type_to_string(e->type)), oom);
		if (e->denied)
			put(o, "denied", json_true(), oom);
		else
			put(o, "size", json_integer((json_int_t)e->size), oom);
		put(o, "writable", json_boolean(e->writable), oom);
		if (json_array_append_new(arr, o) < 0)
			*oom = true;
	}
	put(a, "entries", arr, oom);
	put(a, "truncated", json_boolean(r->truncated), oom);
	return a;
}

/* A write's or an edit's answer. */
static json_t *write_answer(json_t *id, const char *op, const struct dsh_fence_write_result *r, bool is_edit,
			    bool *oom)
{
	json_t *a = ok_answer(id, op, r->path, oom);
	put(a, "created", json_boolean(r->created), oom);
	put(a, "bytes", json_integer((json_int_t)r->bytes), oom);
	if (is_edit)
		put(a, "replacements", json_integer((json_int_t)r->replacements), oom);
	json_t *d = r->diff ? json_string(r->diff) : json_null();
	put(a, "diff", d ? d : json_null(), oom); /* a diff of non-UTF-8 text is left out */
	put(a, "version", json_string(r->version), oom);
	put(a, "atomic", json_boolean(!r->in_place), oom);
	return a;
}

static json_t *do_request(const struct dsh_policy *p, json_t *req, json_t *id, char **ret_text, bool *oom)
{
	const char *op = NULL, *path = NULL;
	size_t op_len = 0, path_len = 0;
	if (get_string(req, "op", true, &op, &op_len) < 0)
		return invalid(id, NULL, p, "\"op\" must be a string: read, write, edit or list");
	/* A path that is not UTF-8 (as list gives it, name_base64) cannot be a JSON string: its
	   bytes come in base64 instead. */
	_cleanup_free_ unsigned char *path_bytes = NULL;
	json_t *pb = json_object_get(req, "path_base64");
	if (pb) {
		if (json_object_get(req, "path"))
			return invalid(id, op, p, "give \"path\" or \"path_base64\", not both");
		if (!json_is_string(pb))
			return invalid(id, op, p, "\"path_base64\" must be a string");
		int d = dsh_base64_decode(json_string_value(pb), json_string_length(pb), &path_bytes, &path_len);
		if (d == -ENOMEM) {
			*oom = true;
			return NULL;
		}
		if (d < 0)
			return invalid(id, op, p, "\"path_base64\" is not valid base64");
		path = (const char *)path_bytes;
	} else if (get_string(req, "path", true, &path, &path_len) < 0) {
		return invalid(id, op, p, "\"path\" (or \"path_base64\") must be a non-empty string");
	}
	if (path_len == 0)
		return invalid(id, op, p, "\"path\" (or \"path_base64\") must be a non-empty string");
	if (strlen(path) != path_len)
		return invalid(id, op, p, "the path holds a NUL character");

	_cleanup_error_ struct dsh_error *err = NULL;
	json_t *a = NULL;

	if (strcmp(op, "read") == 0) {
		static const char *const keys[] = { "id", "op", "path", "path_base64", "offset", "limit", NULL };
		const char *k = unknown_key(req, keys);
		if (k)
			return invalid(id, op, p, "unknown key \"%s\" for read", k);
		uint64_t offset = 0, limit = 0;
		if (get_u64(req, "offset", &offset) < 0 || get_u64(req, "limit", &limit) < 0)
			return invalid(id, op, p, "\"offset\" and \"limit\" must be non-negative integers");
		struct dsh_fence_read_result r;
		if (dsh_fence_read(p, path, offset, limit, &r, &err) < 0) {
			a = failure_answer(id, op, p, err);
		} else {
			*ret_text = read_answer_text(id, &r);
			if (!*ret_text)
				*oom = true;
			dsh_fence_read_result_clear(&r);
			return NULL;
		}
		dsh_fence_read_result_clear(&r);
	} else if (strcmp(op, "write") == 0 || strcmp(op, "edit") == 0) {
		bool is_edit = op[0] == 'e';
		static const char *const wkeys[] = { "id",	   "op",       "path",		"path_base64",
						     "content", "encoding", "expectVersion", NULL };
		static const char *const ekeys[] = { "id",  "op",  "path", "path_base64",
						     "old", "new", "all",  "expectVersion", NULL };
		const char *k = unknown_key(req, is_edit ? ekeys : wkeys);
		if (k)
			return invalid(id, op, p, "unknown key \"%s\" for %s", k, op);
		struct dsh_fence_write_opts wo = { 0 };
		size_t vl;
		if (get_string(req, "expectVersion", false, &wo.expect_version, &vl) < 0)
			return invalid(id, op, p, "\"expectVersion\" must be a string (a read answer's \"version\")");
		struct dsh_fence_write_result r;
		int rc;
		if (is_edit) {
			const char *o, *n;
			size_t ol, nl;
			if (get_string(req, "old", true, &o, &ol) < 0 || get_string(req, "new", true, &n, &nl) < 0)
				return invalid(id, op, p, "edit needs \"old\" and \"new\" strings");
			json_t *all = json_object_get(req, "all");
			if (all && !json_is_boolean(all))
				return invalid(id, op, p, "\"all\" must be true or false");
			rc = dsh_fence_edit_ex(p, path, o, ol, n, nl, all && json_is_true(all), &wo, &r, &err);
		} else {
			const char *content, *enc;
			size_t cl, el;
			if (get_string(req, "content", true, &content, &cl) < 0)
				return invalid(id, op, p, "write needs a \"content\" string");
			if (get_string(req, "encoding", false, &enc, &el) < 0)
				return invalid(id, op, p, "\"encoding\" must be \"utf-8\" or \"base64\"");
			if (enc && strcmp(enc, "base64") == 0) {
				_cleanup_free_ unsigned char *bytes = NULL;
				size_t bl = 0;
				int d = dsh_base64_decode(content, cl, &bytes, &bl);
				if (d == -ENOMEM) {
					*oom = true;
					return NULL;
				}
				if (d < 0)
					return invalid(id, op, p, "\"content\" is not valid base64");
				rc = dsh_fence_write_ex(p, path, (const char *)bytes, bl, &wo, &r, &err);
			} else if (!enc || strcmp(enc, "utf-8") == 0) {
				rc = dsh_fence_write_ex(p, path, content, cl, &wo, &r, &err);
			} else {
				return invalid(id, op, p, "\"encoding\" must be \"utf-8\" or \"base64\"");
			}
		}
		if (rc < 0) {
			a = failure_answer(id, op, p, err);
		} else {
			a = write_answer(id, op, &r, is_edit, oom);
		}
		dsh_fence_write_result_clear(&r);
	} else if (strcmp(op, "list") == 0) {
		static const char *const keys[] = { "id", "op", "path", "path_base64", NULL };
		const char *k = unknown_key(req, keys);
		if (k)
			return invalid(id, op, p, "unknown key \"%s\" for list", k);
		struct dsh_fence_list_result r;
		if (dsh_fence_list(p, path, &r, &err) < 0) {
			a = failure_answer(id, op, p, err);
		} else {
			a = list_answer(id, op, &r, oom);
		}
		dsh_fence_list_result_clear(&r);
	} else {
		return invalid(id, op, p, "unknown op (read, write, edit or list)");
	}
	if (!a)
		*oom = true;
	return a;
}

static int dump(json_t *a, char **ret, struct dsh_error **err)
{
	char *s = a ? json_dumps(a, JSON_COMPACT) : NULL;
	if (!s)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "serve: out of memory");
	*ret = s;
	return 0;
}

struct dsh_serve_request {
	json_t *req;    /* the request, or NULL when answer holds its (error) answer already */
	json_t *answer;
	char *key;      /* the lexically absolute path it names, or NULL */
};

void dsh_serve_request_free(struct dsh_serve_request *r)
{
	if (!r)
		return;
	dsh_json_decrefp(&r->req);
	dsh_json_decrefp(&r->answer);
	free(r->key);
	free(r);
}

/* The path a request names, made absolute and normalised as resolution will (no file looked at). */
static char *request_key(const struct dsh_policy *p, json_t *req)
{
	json_t *pv = json_object_get(req, "path"), *pb = json_object_get(req, "path_base64");
	_cleanup_free_ unsigned char *bytes = NULL;
	const char *path = NULL;
	size_t len = 0;
	if (pv && !pb && json_is_string(pv)) {
		path = json_string_value(pv);
		len = json_string_length(pv);
	} else if (pb && !pv && json_is_string(pb) &&
		   dsh_base64_decode(json_string_value(pb), json_string_length(pb), &bytes, &len) == 0) {
		path = (const char *)bytes;
	}
	if (!path || len == 0 || strlen(path) != len)
		return NULL;
	char *abs = NULL;
	if (dsh_path_absolute(dsh_policy_cwd(p), path, &abs, NULL) < 0)
		return NULL;
	return abs;
}

int dsh_serve_parse(const struct dsh_policy *p, const char *line, size_t len, struct dsh_serve_request **ret,
		    struct dsh_error **err)
{
	struct dsh_serve_request *r = calloc(1, sizeof(*r));
	if (!r)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "serve: out of memory");
	json_error_t je;
	r->req = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	json_t *id = r->req && json_is_object(r->req) ? json_object_get(r->req, "id") : NULL;
	if (!r->req)
		r->answer = invalid(NULL, NULL, p, "malformed JSON at column %d: %s", je.column, je.text);
	else if (!json_is_object(r->req))
		r->answer = invalid(NULL, NULL, p, "a request is a JSON object");
	else if (id && !json_is_string(id) && !json_is_integer(id) && !json_is_null(id))
		r->answer = invalid(NULL, NULL, p, "\"id\" must be a string, an integer or null");
	else
		r->key = request_key(p, r->req);
	if (r->answer || !r->req || !json_is_object(r->req)) {
		dsh_json_decrefp(&r->req);
		r->req = NULL;
		if (!r->answer) {
			dsh_serve_request_free(r);
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "serve: out of memory");
		}
	}
	*ret = r;
	return 0;
}

const char *dsh_serve_request_key(const struct dsh_serve_request *r)
{
	return r->key;
}

int dsh_serve_request_answer(const struct dsh_policy *p, struct dsh_serve_request *r, char **ret,
			     struct dsh_error **err)
{
	if (!r->req)
		return dump(r->answer, ret, err);
	char *text = NULL;
	bool oom = false;
	_cleanup_json_ json_t *a = do_request(p, r->req, json_object_get(r->req, "id"), &text, &oom);
	if (oom)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "serve: out of memory");
	if (text) {
		*ret = text;
		return 0;
	}
	return dump(a, ret, err);
}

int dsh_serve_answer(const struct dsh_policy *p, const char *line, size_t len, char **ret,
		     struct dsh_error **err)
{
	struct dsh_serve_request *r = NULL;
	int rc = dsh_serve_parse(p, line, len, &r, err);
	if (rc < 0)
		return rc;
	rc = dsh_serve_request_answer(p, r, ret, err);
	dsh_serve_request_free(r);
	return rc;
}

char *dsh_serve_answer_too_long(size_t limit)
{
	_cleanup_json_ json_t *a = NULL;
	char msg[128];
	snprintf(msg, sizeof(msg), "request line longer than %zu bytes; it was skipped", limit);
	a = error_answer(NULL, NULL, DSH_ERR_TOO_LARGE, NULL, NULL, NULL, msg);
	return a ? json_dumps(a, JSON_COMPACT) : NULL;
}
