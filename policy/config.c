/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "policy/config.h"
#include "policy/netpolicy.h"
#include "policy/protected.h"

/* A configuration file larger than this is refused: it is a policy, not a data set. */
#define CONFIG_MAX_BYTES (4 * 1024 * 1024)

/* dsh_config_init() and dsh_config_clear(): config_defaults.c (built for Windows too, no YAML). */

/* All of fd, a regular file or a pipe, up to CONFIG_MAX_BYTES; name for the errors. */
static int read_small_fd(int fd, const char *name, char **ret, size_t *ret_len, struct dsh_error **err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return dsh_err_sys(err, errno, "stat '%s'", name);
	/* A pipe or FIFO is how a host hands over a configuration without a temporary file. */
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "'%s' is not a regular file or a pipe", name);
	if (S_ISREG(st.st_mode) && st.st_size > CONFIG_MAX_BYTES)
		return dsh_err(err, DSH_ERR_CONFIG, EFBIG, "'%s' is larger than %d bytes", name, CONFIG_MAX_BYTES);
	/* A file's own size, a pipe's growing as it comes; one byte more than the cap tells it broke. */
	size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, len = 0;
	_cleanup_free_ char *buf = malloc(cap + 1);
	if (!buf)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	for (;;) {
		if (len == cap && cap <= CONFIG_MAX_BYTES) {
			size_t more = cap * 2 > (size_t)CONFIG_MAX_BYTES + 1 ? (size_t)CONFIG_MAX_BYTES + 1 : cap * 2;
			char *v = realloc(buf, more + 1);
			if (!v)
				return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			buf = v;
			cap = more;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return dsh_err_sys(err, errno, "read '%s'", name);
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > CONFIG_MAX_BYTES)
			return dsh_err(err, DSH_ERR_CONFIG, EFBIG, "'%s' is larger than %d bytes", name, CONFIG_MAX_BYTES);
	}
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

int dsh_read_small_file(const char *path, char **ret, size_t *ret_len, struct dsh_error **err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return dsh_err_sys(err, errno, "open '%s'", path);
	return read_small_fd(fd, path, ret, ret_len, err);
}

/* Record that access entry index came from file:line (entries before it without a note: no file). */
static int note_origin(struct dsh_config *c, size_t index, const char *file, size_t line, bool each_line,
		       struct dsh_error **err)
{
	if (index >= c->n_access_origins) {
		/* Room for twice as many: one growth per doubling, not per rule. */
		size_t have = c->n_access_origins, want = index + 1 > 2 * have ? index + 1 : 2 * have;
		struct dsh_access_origin *o = realloc(c->access_origins, want * sizeof(*o));
		if (!o)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		memset(o + have, 0, (want - have) * sizeof(*o));
		c->access_origins = o;
		c->n_access_origins = want;
	}
	struct dsh_access_origin *o = &c->access_origins[index];
	free(o->file);
	o->file = strdup(file);
	o->line = (unsigned)line;
	o->each_line = each_line;
	return o->file ? 0 : dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}

/* The configuration's access: replaces every entry, and every origin noted so far. */
static void forget_origins(struct dsh_config *c)
{
	for (size_t i = 0; i < c->n_access_origins; i++)
		free(c->access_origins[i].file);
	free(c->access_origins);
	c->access_origins = NULL;
	c->n_access_origins = 0;
}

struct ctx {
	yaml_document_t *doc;
	const char *origin;
	struct dsh_error **err;
	size_t key_line;  /* the line of the key being read (1-based), 0 outside one */
};

/* A block value (a list or a mapping below its key) starts on the next line: an error about the
   value as a whole names the key's line, where the user looks. */
static int bad(struct ctx *x, yaml_node_t *n, const char *key, const char *fmt, const char *detail)
{
	int r = dsh_err(x->err, DSH_ERR_CONFIG, EINVAL, fmt, detail);
	size_t line = n->type != YAML_SCALAR_NODE && x->key_line ? x->key_line : (size_t)n->start_mark.line + 1;
	dsh_err_prefix(x->err, "%s:%zu: %s", x->origin, line, key);
	return r;
}

static int scalar(struct ctx *x, yaml_node_t *n, const char *key, const char **ret)
{
	if (n->type != YAML_SCALAR_NODE)
		return bad(x, n, key, "%s", "expected a single value");
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
		return bad(x, n, key, "%s", "the value contains a NUL character");
	*ret = (const char *)n->data.scalar.value;
	return 0;
}

static int string(struct ctx *x, yaml_node_t *n, const char *key, char **dst)
{
	const char *s;
	int r = scalar(x, n, key, &s);
	if (r < 0)
		return r;
	if (!*s)
		return bad(x, n, key, "%s", "must not be empty");
	char *v = strdup(s);
	if (!v)
		return dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	free(*dst);
	*dst = v;
	return 0;
}

static int boolean(struct ctx *x, yaml_node_t *n, const char *key, bool *dst, bool on_off)
{
	const char *s;
	int r = scalar(x, n, key, &s);
	if (r < 0)
		return r;
	if (strcmp(s, "true") == 0 || (on_off && strcmp(s, "on") == 0))
		*dst = true;
	else if (strcmp(s, "false") == 0 || (on_off && strcmp(s, "off") == 0))
		*dst = false;
	else
		return bad(x, n, key, on_off ? "expected 'on' or 'off', got '%s'" : "expected true or false, got '%s'", s);
	return 0;
}

static int integer(struct ctx *x, yaml_node_t *n, const char *key, long long *dst)
{
	const char *s;
	int r = scalar(x, n, key, &s);
	if (r < 0)
		return r;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return bad(x, n, key, "expected an integer, got '%s'", s);
	*dst = v;
	return 0;
}

/* A sequence of strings replaces *dst. */
static int strings(struct ctx *x, yaml_node_t *n, const char *key, char ***dst)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return bad(x, n, key, "%s", "expected a list");
	/* Sized once: a list of 200,000 rules must not cost a scan of the vector per item. */
	size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start), k = 0;
	_cleanup_strv_ char **v = calloc(count + 1, sizeof(char *));
	if (!v)
		return dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
		yaml_node_t *item = yaml_document_get_node(x->doc, *i);
		const char *s;
		int r = scalar(x, item, key, &s);
		if (r < 0)
			return r;
		if (!(v[k++] = strdup(s)))
			return dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	}
	dsh_strv_free(*dst);
	*dst = TAKE_PTR(v);
	return 0;
}

/* unprotect: [NAME...] (SPEC 16): each a name of the default-protected list, or the load fails there. */
static int unprotect_field(struct ctx *x, struct dsh_config *c, yaml_node_t *v)
{
	int r = strings(x, v, "unprotect", &c->unprotect);
	if (r < 0)
		return r;
	size_t k = 0;
	for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++, k++)
		if (!dsh_protected_name_find(c->unprotect[k]))
			return bad(x, yaml_document_get_node(x->doc, *i), "unprotect",
				   "'%s' is not a default-protected name (dshbox explain lists them)", c->unprotect[k]);
	return 0;
}

/* env: { inherit: all|core|none, exclude: [PATTERN...], set: {NAME: VALUE} } (SPEC 1.7). */
static int env_field(struct ctx *x, struct dsh_config *c, yaml_node_t *v)
{
	if (v->type != YAML_MAPPING_NODE)
		return bad(x, v, "env", "%s", "expected a mapping with inherit, exclude and set");
	_cleanup_strv_ char **seen = NULL;
	for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(x->doc, pr->key);
		yaml_node_t *val = yaml_document_get_node(x->doc, pr->value);
		const char *key;
		int r = scalar(x, k, "env", &key);
		if (r < 0)
			return r;
		if (dsh_strv_contains(seen, key))
			return bad(x, k, "env", "duplicate key '%s'", key);
		if (dsh_strv_push(&seen, key) < 0)
			return dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		if (strcmp(key, "inherit") == 0) {
			const char *s;
			if ((r = scalar(x, val, "env.inherit", &s)) < 0)
				return r;
			if (dsh_env_inherit_from_string(s, &c->env_inherit) < 0)
				return bad(x, val, "env.inherit", "expected all, core or none, got '%s'", s);
		} else if (strcmp(key, "exclude") == 0) {
			if ((r = strings(x, val, "env.exclude", &c->env_exclude)) < 0)
				return r;
		} else if (strcmp(key, "set") == 0) {
			if (val->type != YAML_MAPPING_NODE)
				return bad(x, val, "env.set", "%s", "expected a mapping of NAME: VALUE");
			_cleanup_strv_ char **set = calloc(1, sizeof(char *));
			if (!set)
				return dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			for (yaml_node_pair_t *q = val->data.mapping.pairs.start; q < val->data.mapping.pairs.top; q++) {
				const char *name, *value;
				yaml_node_t *nk = yaml_document_get_node(x->doc, q->key);
				if ((r = scalar(x, nk, "env.set", &name)) < 0 ||
				    (r = scalar(x, yaml_document_get_node(x->doc, q->value), "env.set", &value)) < 0)
					return r;
				for (size_t i = 0; set[i]; i++)
					if (strncmp(set[i], name, strlen(name)) == 0 && set[i][strlen(name)] == '=')
						return bad(x, nk, "env.set", "duplicate name '%s'", name);
				if (dsh_strv_pushf(&set, "%s=%s", name, value) < 0)
					return dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			}
			dsh_strv_free(c->env_set);
			c->env_set = TAKE_PTR(set);
		} else {
			return bad(x, k, "env", "unknown key '%s' (inherit, exclude, set)", key);
		}
	}
	return 0;
}

/* One list of network patterns into np, each naming its file and line. */
static int net_patterns(struct ctx *x, yaml_node_t *v, const char *key, bool deny, struct dsh_net_policy *np)
{
	if (v->type != YAML_SEQUENCE_NODE)
		return bad(x, v, key, "%s", "expected a list of patterns");
	for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
		yaml_node_t *item = yaml_document_get_node(x->doc, *i);
		const char *s;
		int r = scalar(x, item, key, &s);
		if (r < 0)
			return r;
		_cleanup_free_ char *origin = NULL;
		if (asprintf(&origin, "%s:%zu", x->origin, (size_t)item->start_mark.line + 1) < 0)
			return dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		struct dsh_net_pattern p;
		if ((r = dsh_net_pattern_parse(s, origin, &p, x->err)) < 0)
			return r;
		if ((r = dsh_net_policy_add(np, deny, &p, x->err)) < 0) {
			dsh_net_pattern_clear(&p);
			return r;
		}
	}
	return 0;
}

int dsh_config_add_domain(struct dsh_config *c, bool deny, const char *pattern, const char *origin,
			  struct dsh_error **err)
{
	struct dsh_net_pattern p;
	int r = dsh_net_pattern_parse(pattern, origin ? origin : "(host)", &p, err);
	if (r < 0)
		return r;
	if (!c->net) {
		if (!(c->net = calloc(1, sizeof(*c->net)))) {
			dsh_net_pattern_clear(&p);
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		}
		dsh_net_policy_init(c->net);
	}
	if ((r = dsh_net_policy_add(c->net, deny, &p, err)) < 0) {
		dsh_net_pattern_clear(&p);
		return r;
	}
	c->network = false;
	return 0;
}

/* network: on | off | { allowDomains, denyDomains, allowLocalBinding, ask, askTimeoutMs } (SPEC 12). */
static int network_field(struct ctx *x, struct dsh_config *c, yaml_node_t *v)
{
	if (v->type == YAML_SCALAR_NODE) {
		dsh_net_policy_free(c->net);
		c->net = NULL;
		return boolean(x, v, "network", &c->network, true);
	}
	if (v->type != YAML_MAPPING_NODE)
		return bad(x, v, "network", "%s", "expected on, off or a mapping with allowDomains and denyDomains");
	struct dsh_net_policy *np = calloc(1, sizeof(*np));
	if (!np)
		return dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	dsh_net_policy_init(np);
	_cleanup_strv_ char **seen = NULL;
	int r = 0;
	for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; r >= 0 && pr < v->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(x->doc, pr->key);
		yaml_node_t *val = yaml_document_get_node(x->doc, pr->value);
		const char *key;
		if ((r = scalar(x, k, "network", &key)) < 0)
			break;
		if (dsh_strv_contains(seen, key)) {
			r = bad(x, k, "network", "duplicate key '%s'", key);
			break;
		}
		if (dsh_strv_push(&seen, key) < 0) {
			r = dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			break;
		}
		long long ms;
		if (strcmp(key, "allowDomains") == 0)
			r = net_patterns(x, val, "network.allowDomains", false, np);
		else if (strcmp(key, "denyDomains") == 0)
			r = net_patterns(x, val, "network.denyDomains", true, np);
		else if (strcmp(key, "allowLocalBinding") == 0)
			r = boolean(x, val, "network.allowLocalBinding", &np->allow_local_binding, false);
		else if (strcmp(key, "ask") == 0)
			r = boolean(x, val, "network.ask", &np->ask, false);
		else if (strcmp(key, "askTimeoutMs") == 0) {
			if ((r = integer(x, val, "network.askTimeoutMs", &ms)) >= 0 && (ms <= 0 || ms > 3600000))
				r = bad(x, val, "network.askTimeoutMs", "expected 1 to 3600000 milliseconds, got '%s'",
					(const char *)val->data.scalar.value);
			np->ask_timeout_ms = (unsigned)ms;
		} else
			r = bad(x, k, "network", "unknown key '%s' (allowDomains, denyDomains, allowLocalBinding, ask, askTimeoutMs)", key);
	}
	if (r < 0) {
		dsh_net_policy_free(np);
		return r;
	}
	dsh_net_policy_free(c->net);
	c->net = np;
	c->network = false;
	return 0;
}

static int field(struct ctx *x, struct dsh_config *c, const char *key, yaml_node_t *v)
{
	if (strcmp(key, "mode") == 0) {
		const char *s;
		int r = scalar(x, v, key, &s);
		if (r < 0)
			return r;
		if (dsh_mode_from_string(s, &c->mode) < 0)
			return bad(x, v, key, "unknown mode '%s' (read-only, workspace-write, danger-full-access)", s);
		return 0;
	}
	if (strcmp(key, "workspace") == 0)
		return string(x, v, key, &c->workspace);
	if (strcmp(key, "cwd") == 0)
		return string(x, v, key, &c->cwd);
	if (strcmp(key, "access") == 0) {
		/* A list of rules, or one block of text with a rule per line. */
		if (v->type == YAML_SCALAR_NODE) {
			const char *s;
			int r = scalar(x, v, key, &s);
			if (r < 0)
				return r;
			dsh_strv_free(c->access);
			c->access = NULL;
			forget_origins(c);
			if (dsh_strv_push(&c->access, s) < 0)
				return dsh_err(x->err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			/* A literal block (|) keeps its lines: its first is the one after the indicator.
			   Any other scalar folds or escapes line breaks, so its rules share its line. */
			bool literal = v->data.scalar.style == YAML_LITERAL_SCALAR_STYLE;
			return note_origin(c, 0, x->origin, (size_t)v->start_mark.line + (literal ? 2 : 1), literal, x->err);
		}
		int r = strings(x, v, key, &c->access);
		if (r < 0)
			return r;
		forget_origins(c);
		size_t i = 0;
		for (yaml_node_item_t *it = v->data.sequence.items.start; r >= 0 && it < v->data.sequence.items.top; it++, i++) {
			yaml_node_t *item = yaml_document_get_node(x->doc, *it);
			bool literal = item->data.scalar.style == YAML_LITERAL_SCALAR_STYLE;
			r = note_origin(c, i, x->origin, (size_t)item->start_mark.line + (literal ? 2 : 1), literal, x->err);
		}
		return r;
	}
	if (strcmp(key, "network") == 0)
		return network_field(x, c, v);
	if (strcmp(key, "backend") == 0) {
		const char *s;
		int r = scalar(x, v, key, &s);
		if (r < 0)
			return r;
		if (dsh_backend_id_from_string(s, &c->backend) < 0)
			return bad(x, v, key, "unknown backend '%s' (auto, linux-ns, landlock, runner, none, seatbelt, winacl)", s);
		return 0;
	}
	if (strcmp(key, "runnerCommand") == 0)
		return strings(x, v, key, &c->runner_command);
	if (strcmp(key, "runnerFailureSignatures") == 0)
		return strings(x, v, key, &c->runner_failure_signatures);
	if (strcmp(key, "probeTimeoutMs") == 0)
		return integer(x, v, key, &c->probe_timeout_ms);
	if (strcmp(key, "diffBasisMaxBytes") == 0)
		return integer(x, v, key, &c->diff_basis_max_bytes);
	if (strcmp(key, "maxMasks") == 0)
		return integer(x, v, key, &c->max_masks);
	if (strcmp(key, "protectSockets") == 0)
		return boolean(x, v, key, &c->protect_sockets, false);
	if (strcmp(key, "allowUnixSockets") == 0)
		return strings(x, v, key, &c->allow_unix_sockets);
	if (strcmp(key, "runtimeBroker") == 0)
		return boolean(x, v, key, &c->runtime_broker, true);
	if (strcmp(key, "allowDegraded") == 0)
		return boolean(x, v, key, &c->allow_degraded, false);
	if (strcmp(key, "env") == 0)
		return env_field(x, c, v);
	if (strcmp(key, "protectDefaults") == 0)
		return boolean(x, v, key, &c->protect_defaults, false);
	if (strcmp(key, "unprotect") == 0)
		return unprotect_field(x, c, v);
	if (strcmp(key, "nestedSandbox") == 0)
		return boolean(x, v, key, &c->nested_sandbox, false);
	if (strcmp(key, "tmp") == 0) {
		const char *s;
		int r = scalar(x, v, key, &s);
		if (r < 0)
			return r;
		if (strcmp(s, "host") == 0)
			c->tmp = DSH_TMP_HOST;
		else if (strcmp(s, "private") == 0)
			c->tmp = DSH_TMP_PRIVATE;
		else
			return bad(x, v, key, "expected host or private, got '%s'", s);
		return 0;
	}
	return bad(x, v, key, "%s", "unknown key");
}

int dsh_config_apply_mapping(struct dsh_config *c, yaml_document_t *doc, yaml_node_t *map,
			     const char *origin, struct dsh_error **err)
{
	struct ctx x = { doc, origin, err, 0 };
	if (map->type != YAML_MAPPING_NODE)
		return bad(&x, map, "configuration", "%s", "expected a mapping of keys to values");
	_cleanup_strv_ char **seen = NULL;
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(doc, pr->value);
		if (k->type != YAML_SCALAR_NODE)
			return bad(&x, k, "configuration", "%s", "keys must be plain names");
		const char *key = (const char *)k->data.scalar.value;
		if (dsh_strv_contains(seen, key))
			return bad(&x, k, key, "%s", "duplicate key");
		if (dsh_strv_push(&seen, key) < 0)
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		x.key_line = (size_t)k->start_mark.line + 1;
		int r = field(&x, c, key, v);
		if (r < 0)
			return r;
	}
	return 0;
}

int dsh_yaml_load(const char *yaml, size_t len, const char *origin, yaml_document_t *doc,
		  struct dsh_error **err)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	int r = 0;
	if (!yaml_parser_load(&parser, doc)) {
		/* The reader's errors (a control character, bad UTF-8) carry a byte offset, not a mark. */
		size_t line = (size_t)parser.problem_mark.line + 1;
		if (parser.error == YAML_READER_ERROR) {
			line = 1;
			for (size_t i = 0; i < parser.problem_offset && i < len; i++)
				line += yaml[i] == '\n';
		}
		r = dsh_err(err, DSH_ERR_CONFIG, EINVAL, "%s:%zu: %s", origin, line,
			    parser.problem ? parser.problem : "invalid YAML");
	}
	yaml_parser_delete(&parser);
	return r;
}

int dsh_config_load_string(struct dsh_config *c, const char *yaml, size_t len, const char *origin,
			   struct dsh_error **err)
{
	yaml_document_t doc;
	int r = dsh_yaml_load(yaml, len, origin, &doc, err);
	if (r < 0)
		return r;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	/* An empty file is an empty configuration. */
	if (root)
		r = dsh_config_apply_mapping(c, &doc, root, origin, err);
	yaml_document_delete(&doc);
	return r;
}

int dsh_config_load_file(struct dsh_config *c, const char *path, struct dsh_error **err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = dsh_read_small_file(path, &buf, &len, err);
	if (r < 0) {
		dsh_err_prefix(err, "configuration");
		return r;
	}
	r = dsh_config_load_string(c, buf, len, path, err);
	if (r >= 0 && dsh_strv_push(&c->sources, path) < 0)
		r = dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	return r;
}

int dsh_config_load_fd(struct dsh_config *c, int fd, const char *name, struct dsh_error **err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = read_small_fd(fd, name, &buf, &len, err);
	if (r < 0) {
		dsh_err_prefix(err, "configuration");
		return r;
	}
	r = dsh_config_load_string(c, buf, len, name, err);
	if (r >= 0 && dsh_strv_push(&c->sources, name) < 0)
		r = dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	return r;
}

int dsh_config_load_access_file(struct dsh_config *c, const char *path, struct dsh_error **err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = dsh_read_small_file(path, &buf, &len, err);
	if (r < 0) {
		dsh_err_prefix(err, "access file");
		return r;
	}
	if (strlen(buf) != len)
		return dsh_err(err, DSH_ERR_CONFIG, EINVAL, "access file '%s': contains a NUL character", path);
	/* The vector and its origins grown once for every line: a file of 200,000 rules must not
	   cost a scan of the vector per rule. */
	size_t n = dsh_strv_len(c->access), lines = 1;
	for (const char *p = buf; (p = strchr(p, '\n')); p++)
		lines++;
	char **v = realloc(c->access, (n + lines + 1) * sizeof(char *));
	if (!v)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	c->access = v;
	v[n] = NULL;
	size_t lineno = 0;
	for (char *line = buf, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		const char *s = line + strspn(line, " \t\r");
		if (*s == '\0' || *s == '#')
			continue;
		if (!(v[n] = strdup(line)))
			return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
		v[++n] = NULL;
		r = note_origin(c, n - 1, path, lineno, false, err);
		if (r < 0)
			return r;
	}
	if (dsh_strv_push(&c->sources, path) < 0)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	return 0;
}
