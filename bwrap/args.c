/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cap-ng.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "common/strv.h"
#include "bwrap/args.h"

/* The parser of bubblewrap's argv (bwrap/args.h): facts from bubblewrap's manual. */

static const char *const op_names[] = {
#define DSH_BWRAP_X(e, s) [e] = s,
	DSH_BWRAP_OPS(DSH_BWRAP_X)
#undef DSH_BWRAP_X
};

const char *dsh_bwrap_op_to_string(enum dsh_bwrap_op_kind k)
{
	return (size_t)k < sizeof(op_names) / sizeof(op_names[0]) ? op_names[k] : "?";
}

/* bubblewrap's own bound on arguments, --args included (a guard against huge argument files). */
#define BWRAP_MAX_ARGS 9000
/* bubblewrap's bound on --size: the largest size_t it accepts that the kernel's tmpfs also takes. */
#define BWRAP_MAX_TMPFS_BYTES ((unsigned long long)SIZE_MAX >> 1)

/* bubblewrap's options that dshbox bwrap knows and refuses, with how many values each takes. */
static const struct {
	const char *name;
	int n_values;
} refused[] = {
	{ "--userns", 1 },  { "--userns2", 1 },	    { "--pidns", 1 },	      { "--userns-block-fd", 1 },
	{ "--overlay-src", 1 },
	{ "--overlay", 3 }, { "--tmp-overlay", 1 }, { "--ro-overlay", 1 },  { "--exec-label", 1 },
	{ "--file-label", 1 },
};

struct parser {
	struct dsh_bwrap_args *a;
	dsh_bwrap_read_fd_fn read_fd;
	void *userdata;
	int next_perms;                    /* -1: no --perms pending */
	unsigned long long next_size;      /* 0: no --size pending */
	size_t total;                      /* arguments seen, --args included */
	char **args_data;                  /* --args buffers, kept until the parse ends */
};

static int usage_err(struct dsh_error **err, const char *fmt, ...) DSH_PRINTF(2, 3);
static int usage_err(struct dsh_error **err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *m = NULL;
	int r = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (r < 0)
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	return dsh_err(err, DSH_ERR_USAGE, EINVAL, "%s", m);
}

/* bubblewrap's "Invalid fd" rule: decimal, non-negative, nothing after it. */
static int parse_fd(const char *s, int *ret, struct dsh_error **err)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > INT_MAX)
		return usage_err(err, "Invalid fd: %s", s);
	*ret = (int)v;
	return 0;
}

static int parse_octal(const char *s, const char *what, int *ret, struct dsh_error **err)
{
	char *end = NULL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 8);
	if (!*s || *end || errno || v > 07777 || *s == '-')
		return usage_err(err, "%s takes an octal argument <= 07777", what);
	*ret = (int)v;
	return 0;
}

static int add_op(struct parser *p, enum dsh_bwrap_op_kind kind, const char *source, const char *dest, int fd,
		  bool try_, struct dsh_bwrap_op **ret, struct dsh_error **err)
{
	struct dsh_bwrap_args *a = p->a;
	struct dsh_bwrap_op *ops = realloc(a->ops, (a->n_ops + 1) * sizeof(*ops));
	if (!ops)
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	a->ops = ops;
	struct dsh_bwrap_op *op = &ops[a->n_ops];
	*op = (struct dsh_bwrap_op){ .kind = kind, .fd = fd, .try_ = try_, .perms = -1 };
	op->source = source ? strdup(source) : NULL;
	op->dest = strdup(dest);
	if ((source && !op->source) || !op->dest) {
		free(op->source);
		free(op->dest);
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	}
	a->n_ops++;
	if (ret)
		*ret = op;
	return 0;
}

/* The operations that create a file or directory take --perms (bubblewrap's defaults otherwise). */
static void take_perms(struct parser *p, struct dsh_bwrap_op *op, int dflt)
{
	op->have_perms = p->next_perms >= 0;
	op->perms = p->next_perms >= 0 ? p->next_perms : dflt;
	p->next_perms = -1;
}

static int add_env(struct parser *p, enum dsh_bwrap_env_kind kind, const char *name, const char *value,
		   struct dsh_error **err)
{
	struct dsh_bwrap_args *a = p->a;
	struct dsh_bwrap_env_op *env = realloc(a->env, (a->n_env + 1) * sizeof(*env));
	if (!env)
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	a->env = env;
	struct dsh_bwrap_env_op *e = &env[a->n_env];
	*e = (struct dsh_bwrap_env_op){ .kind = kind };
	e->name = name ? strdup(name) : NULL;
	e->value = value ? strdup(value) : NULL;
	if ((name && !e->name) || (value && !e->value)) {
		free(e->name);
		free(e->value);
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	}
	a->n_env++;
	return 0;
}

static int set_str(char **slot, const char *v, struct dsh_error **err)
{
	char *s = strdup(v);
	if (!s)
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	free(*slot);
	*slot = s;
	return 0;
}

static int parse_id(const char *s, const char *what, unsigned *ret, struct dsh_error **err)
{
	char *end = NULL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || v > UINT_MAX - 1)
		return usage_err(err, "Invalid %s: %s", what, s);
	*ret = (unsigned)v;
	return 0;
}

/*
 * A capability as libcap's cap_from_name reads it (bubblewrap's lookup): a number (any base strtoul
 * takes) below 64, or "cap_" and a name, any case, read up to the first character that is neither a
 * letter nor '_' (what follows is ignored, as libcap ignores it).  -1: unknown.
 */
static int cap_from_text(const char *s)
{
	if (isdigit((unsigned char)s[0])) {
		errno = 0;
		unsigned long v = strtoul(s, NULL, 0);
		return errno || v >= 64 ? -1 : (int)v;
	}
	if (strncasecmp(s, "cap_", 4) != 0)
		return -1;
	char name[64];
	size_t n = 0;
	for (const char *q = s + 4; (isalpha((unsigned char)*q) || *q == '_') && n + 1 < sizeof(name); q++)
		name[n++] = (char)tolower((unsigned char)*q);
	name[n] = 0;
	return n ? capng_name_to_capability(name) : -1;
}

static int add_cap(struct parser *p, bool add, const char *text, struct dsh_error **err)
{
	struct dsh_bwrap_args *a = p->a;
	int cap = DSH_BWRAP_CAP_ALL;
	if (strcasecmp(text, "ALL") != 0 && (cap = cap_from_text(text)) < 0)
		return usage_err(err, "unknown cap: %s", text);
	struct dsh_bwrap_cap_op *v = realloc(a->cap_ops, (a->n_cap_ops + 1) * sizeof(*v));
	if (!v)
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	a->cap_ops = v;
	v[a->n_cap_ops++] = (struct dsh_bwrap_cap_op){ .add = add, .cap = cap };
	return 0;
}

unsigned long long dsh_bwrap_caps(const struct dsh_bwrap_args *a, unsigned long long initial)
{
	unsigned long long set = initial;
	for (size_t i = 0; i < a->n_cap_ops; i++) {
		const struct dsh_bwrap_cap_op *c = &a->cap_ops[i];
		unsigned long long bits = c->cap == DSH_BWRAP_CAP_ALL ? ~0ULL : 1ULL << c->cap;
		set = c->add ? set | bits : set & ~bits;
	}
	return set;
}

/* One option on the command line as its parser sees it: the values after it, and what it used. */
struct option_step {
	const char *arg;
	char *const *val; /* the arguments after arg */
	int left;         /* how many of them there are */
	int used;         /* how many of them the option took as values */
	bool modifier;    /* --perms or --size: it waits for the next operation */
};

/* An option's values are there, or its usage error (in bubblewrap's words) returns. */
#define NEED(n, ...)                                           \
	do {                                                   \
		if (s->left < (n))                             \
			return usage_err(err, __VA_ARGS__);    \
	} while (0)

static int parse_recurse(struct parser *p, int argc, char *const *argv, bool in_file, int *ret_consumed,
			 struct dsh_error **err);

static int do_args(struct parser *p, struct option_step *s, bool in_file, struct dsh_error **err)
{
	int fd, r;
	if (in_file)
		return usage_err(err, "--args not supported in arguments file");
	NEED(1, "--args takes an argument");
	s->used = 1;
	if ((r = parse_fd(s->val[0], &fd, err)) < 0)
		return r;
	char *buf = NULL;
	size_t len = 0;
	r = p->read_fd ? p->read_fd(fd, &buf, &len, p->userdata) : -EBADF;
	if (r < 0)
		return dsh_err_sys(err, -r, "Can't read --args data");
	if (dsh_strv_push_take(&p->args_data, buf) < 0) {
		free(buf);
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	}
	/* NUL-separated; a last argument without its NUL still counts (the buffer ends in one). */
	_cleanup_free_ char **v = NULL;
	size_t n = 0;
	for (const char *q = buf; q < buf + len; q += strlen(q) + 1) {
		if (++p->total > BWRAP_MAX_ARGS)
			return usage_err(err, "Exceeded maximum number of arguments %u", BWRAP_MAX_ARGS);
		char **nv = realloc(v, (n + 2) * sizeof(*nv));
		if (!nv)
			return dsh_err_sys(err, ENOMEM, "bwrap arguments");
		v = nv;
		v[n++] = (char *)q;
		v[n] = NULL;
	}
	/* As in bubblewrap, a "--" or a non-option inside the file ends the file's options, and the
	   rest of the file is ignored: the command comes from the command line. */
	int consumed = 0;
	return parse_recurse(p, (int)n, v, true, &consumed, err);
}

/* The options without a value that only set a switch.  false: not one of them. */
static bool parse_switch(struct dsh_bwrap_args *a, const char *arg)
{
	if (strcmp(arg, "--level-prefix") == 0)
		a->level_prefix = true;
	else if (strcmp(arg, "--unshare-all") == 0)
		/* The -try variants of user and cgroup, as bubblewrap does. */
		a->unshare_user_try = a->unshare_ipc = a->unshare_pid = a->unshare_uts = a->unshare_cgroup_try =
			a->unshare_net = true;
	else if (strcmp(arg, "--unshare-user") == 0)
		a->unshare_user = true;
	else if (strcmp(arg, "--unshare-user-try") == 0)
		a->unshare_user_try = true;
	else if (strcmp(arg, "--unshare-ipc") == 0)
		a->unshare_ipc = true;
	else if (strcmp(arg, "--unshare-pid") == 0)
		a->unshare_pid = true;
	else if (strcmp(arg, "--unshare-net") == 0)
		a->unshare_net = true;
	else if (strcmp(arg, "--unshare-uts") == 0)
		a->unshare_uts = true;
	else if (strcmp(arg, "--unshare-cgroup") == 0)
		a->unshare_cgroup = true;
	else if (strcmp(arg, "--unshare-cgroup-try") == 0)
		a->unshare_cgroup_try = true;
	else if (strcmp(arg, "--share-net") == 0)
		a->unshare_net = false;
	else if (strcmp(arg, "--disable-userns") == 0)
		a->disable_userns = true;
	else if (strcmp(arg, "--assert-userns-disabled") == 0)
		a->assert_userns_disabled = true;
	else if (strcmp(arg, "--new-session") == 0)
		a->new_session = true;
	else if (strcmp(arg, "--die-with-parent") == 0)
		a->die_with_parent = true;
	else if (strcmp(arg, "--as-pid-1") == 0)
		a->as_pid_1 = true;
	else
		return false;
	return true;
}

/*
 * The parsers of one family of options each: 1 when the option was theirs (s->used says how many
 * values it took), 0 when it is not theirs, a negative errno-style value on error.
 */

/* The operations that mount something. */
static int parse_mount_op(struct parser *p, struct option_step *s, struct dsh_error **err)
{
	const char *arg = s->arg;
	struct dsh_bwrap_op *op = NULL;
	int r;
	if (strcmp(arg, "--remount-ro") == 0) {
		NEED(1, "--remount-ro takes one argument");
		s->used = 1;
		r = add_op(p, DSH_BWRAP_REMOUNT_RO, NULL, s->val[0], -1, false, NULL, err);
	} else if (strcmp(arg, "--bind") == 0 || strcmp(arg, "--bind-try") == 0 || strcmp(arg, "--ro-bind") == 0 ||
		   strcmp(arg, "--ro-bind-try") == 0 || strcmp(arg, "--dev-bind") == 0 ||
		   strcmp(arg, "--dev-bind-try") == 0) {
		NEED(2, "%s takes two arguments", arg);
		s->used = 2;
		enum dsh_bwrap_op_kind k = strncmp(arg, "--ro-", 5) == 0    ? DSH_BWRAP_RO_BIND
					   : strncmp(arg, "--dev-", 6) == 0 ? DSH_BWRAP_DEV_BIND
									    : DSH_BWRAP_BIND;
		bool try_ = strlen(arg) > 4 && strcmp(arg + strlen(arg) - 4, "-try") == 0;
		r = add_op(p, k, s->val[0], s->val[1], -1, try_, NULL, err);
	} else if (strcmp(arg, "--bind-fd") == 0 || strcmp(arg, "--ro-bind-fd") == 0) {
		/* bubblewrap binds what the descriptor refers to, by its /proc/self/fd name. */
		NEED(2, "%s takes two arguments", arg);
		s->used = 2;
		int fd;
		if ((r = parse_fd(s->val[0], &fd, err)) < 0)
			return r;
		char src[64];
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
		if ((r = add_op(p, strcmp(arg, "--bind-fd") == 0 ? DSH_BWRAP_BIND : DSH_BWRAP_RO_BIND, src, s->val[1], fd,
				false, NULL, err)) < 0)
			return r;
	} else if (strcmp(arg, "--proc") == 0 || strcmp(arg, "--dev") == 0 || strcmp(arg, "--mqueue") == 0) {
		NEED(1, "%s takes an argument", arg);
		s->used = 1;
		r = add_op(p, strcmp(arg, "--proc") == 0  ? DSH_BWRAP_PROC
			      : strcmp(arg, "--dev") == 0 ? DSH_BWRAP_DEV
							  : DSH_BWRAP_MQUEUE,
			   NULL, s->val[0], -1, false, NULL, err);
	} else if (strcmp(arg, "--tmpfs") == 0) {
		NEED(1, "--tmpfs takes an argument");
		s->used = 1;
		if ((r = add_op(p, DSH_BWRAP_TMPFS, NULL, s->val[0], -1, false, &op, err)) < 0)
			return r;
		take_perms(p, op, 0755);
		op->size = p->next_size;
		p->next_size = 0;
	} else
		return 0;
	return r < 0 ? r : 1;
}

/* The operations that make a file, a directory or a link, or change a mode. */
static int parse_file_op(struct parser *p, struct option_step *s, struct dsh_error **err)
{
	const char *arg = s->arg;
	struct dsh_bwrap_op *op = NULL;
	int r;
	if (strcmp(arg, "--dir") == 0) {
		NEED(1, "--dir takes an argument");
		s->used = 1;
		if ((r = add_op(p, DSH_BWRAP_DIR, NULL, s->val[0], -1, false, &op, err)) < 0)
			return r;
		/* bubblewrap: 0755 unless --perms; an existing directory keeps its mode. */
		take_perms(p, op, 0755);
	} else if (strcmp(arg, "--file") == 0 || strcmp(arg, "--bind-data") == 0 ||
		   strcmp(arg, "--ro-bind-data") == 0) {
		NEED(2, "%s takes two arguments", arg);
		s->used = 2;
		int fd;
		if ((r = parse_fd(s->val[0], &fd, err)) < 0)
			return r;
		enum dsh_bwrap_op_kind k = strcmp(arg, "--file") == 0	     ? DSH_BWRAP_FILE
					   : strcmp(arg, "--bind-data") == 0 ? DSH_BWRAP_BIND_DATA
									     : DSH_BWRAP_RO_BIND_DATA;
		if ((r = add_op(p, k, NULL, s->val[1], fd, false, &op, err)) < 0)
			return r;
		take_perms(p, op, k == DSH_BWRAP_FILE ? 0666 : 0600);
	} else if (strcmp(arg, "--symlink") == 0) {
		NEED(2, "--symlink takes two arguments");
		s->used = 2;
		r = add_op(p, DSH_BWRAP_SYMLINK, s->val[0], s->val[1], -1, false, NULL, err);
	} else if (strcmp(arg, "--chmod") == 0) {
		NEED(2, "--chmod takes two arguments");
		s->used = 2;
		int perms;
		if ((r = parse_octal(s->val[0], "--chmod", &perms, err)) < 0)
			return r;
		if ((r = add_op(p, DSH_BWRAP_CHMOD, NULL, s->val[1], -1, false, &op, err)) < 0)
			return r;
		op->perms = perms;
	} else
		return 0;
	return r < 0 ? r : 1;
}

/* The descriptors the caller hands in: status and synchronisation, seccomp programs. */
static int parse_fd_option(struct parser *p, struct option_step *s, struct dsh_error **err)
{
	struct dsh_bwrap_args *a = p->a;
	const char *arg = s->arg;
	int fd, r;
	if (strcmp(arg, "--sync-fd") == 0 || strcmp(arg, "--block-fd") == 0 || strcmp(arg, "--info-fd") == 0 ||
	    strcmp(arg, "--json-status-fd") == 0) {
		NEED(1, "%s takes an argument", arg);
		s->used = 1;
		if ((r = parse_fd(s->val[0], &fd, err)) < 0)
			return r;
		*(strcmp(arg, "--sync-fd") == 0	   ? &a->sync_fd
		  : strcmp(arg, "--block-fd") == 0 ? &a->block_fd
		  : strcmp(arg, "--info-fd") == 0  ? &a->info_fd
						   : &a->json_status_fd) = fd;
	} else if (strcmp(arg, "--seccomp") == 0) {
		NEED(1, "--seccomp takes an argument");
		s->used = 1;
		if (a->n_add_seccomp_fds)
			return usage_err(err, "--seccomp cannot be combined with --add-seccomp-fd");
		if ((r = parse_fd(s->val[0], &a->seccomp_fd, err)) < 0)
			return r;
	} else if (strcmp(arg, "--add-seccomp-fd") == 0) {
		NEED(1, "--add-seccomp-fd takes an argument");
		s->used = 1;
		if (a->seccomp_fd >= 0)
			return usage_err(err, "--add-seccomp-fd cannot be combined with --seccomp");
		if ((r = parse_fd(s->val[0], &fd, err)) < 0)
			return r;
		int *v = realloc(a->add_seccomp_fds, (a->n_add_seccomp_fds + 1) * sizeof(*v));
		if (!v)
			return dsh_err_sys(err, ENOMEM, "bwrap arguments");
		a->add_seccomp_fds = v;
		v[a->n_add_seccomp_fds++] = fd;
	} else
		return 0;
	return 1;
}

/* What the command runs as and with: argv[0], directory, environment, ids, host name, capabilities. */
static int parse_process_option(struct parser *p, struct option_step *s, struct dsh_error **err)
{
	struct dsh_bwrap_args *a = p->a;
	const char *arg = s->arg;
	int r;
	if (strcmp(arg, "--argv0") == 0) {
		NEED(1, "--argv0 takes one argument");
		s->used = 1;
		if (a->argv0)
			return usage_err(err, "--argv0 used multiple times");
		r = set_str(&a->argv0, s->val[0], err);
	} else if (strcmp(arg, "--chdir") == 0) {
		NEED(1, "--chdir takes one argument");
		s->used = 1;
		if (a->chdir)
			a->chdir_repeated = true;
		r = set_str(&a->chdir, s->val[0], err); /* the last one wins */
	} else if (strcmp(arg, "--setenv") == 0) {
		NEED(2, "--setenv takes two arguments");
		s->used = 2;
		r = add_env(p, DSH_BWRAP_SETENV, s->val[0], s->val[1], err);
	} else if (strcmp(arg, "--unsetenv") == 0) {
		NEED(1, "--unsetenv takes an argument");
		s->used = 1;
		r = add_env(p, DSH_BWRAP_UNSETENV, s->val[0], NULL, err);
	} else if (strcmp(arg, "--clearenv") == 0) {
		r = add_env(p, DSH_BWRAP_CLEARENV, NULL, NULL, err);
	} else if (strcmp(arg, "--uid") == 0 || strcmp(arg, "--gid") == 0) {
		bool uid = strcmp(arg, "--uid") == 0;
		NEED(1, "%s takes an argument", arg);
		s->used = 1;
		unsigned v = 0;
		if ((r = parse_id(s->val[0], uid ? "uid" : "gid", &v, err)) < 0)
			return r;
		if (uid) {
			a->uid = v;
			a->have_uid = true;
		} else {
			a->gid = v;
			a->have_gid = true;
		}
	} else if (strcmp(arg, "--lock-file") == 0) {
		NEED(1, "--lock-file takes an argument");
		s->used = 1;
		r = dsh_strv_push(&a->lock_files, s->val[0]) < 0 ? dsh_err_sys(err, ENOMEM, "bwrap arguments") : 0;
	} else if (strcmp(arg, "--hostname") == 0) {
		NEED(1, "--hostname takes an argument");
		s->used = 1;
		r = set_str(&a->hostname, s->val[0], err);
	} else if (strcmp(arg, "--cap-add") == 0 || strcmp(arg, "--cap-drop") == 0) {
		NEED(1, "%s takes an argument", arg);
		s->used = 1;
		r = add_cap(p, strcmp(arg, "--cap-add") == 0, s->val[0], err);
	} else
		return 0;
	return r < 0 ? r : 1;
}

/* --perms and --size: they wait for the next operation (which checks that it takes them). */
static int parse_modifier(struct parser *p, struct option_step *s, struct dsh_error **err)
{
	const char *arg = s->arg;
	int r;
	if (strcmp(arg, "--perms") == 0) {
		NEED(1, "--perms takes an argument");
		s->used = 1;
		if (p->next_perms != -1)
			return usage_err(err, "--perms given twice for the same action");
		if ((r = parse_octal(s->val[0], "--perms", &p->next_perms, err)) < 0)
			return r;
	} else if (strcmp(arg, "--size") == 0) {
		NEED(1, "--size takes an argument");
		s->used = 1;
		if (p->next_size != 0)
			return usage_err(err, "--size given twice for the same action");
		char *end = NULL;
		errno = 0;
		unsigned long long v = strtoull(s->val[0], &end, 0);
		if (errno || !isdigit((unsigned char)s->val[0][0]) || *end || v == 0)
			return usage_err(err, "--size takes a non-zero number of bytes");
		if (v > BWRAP_MAX_TMPFS_BYTES)
			return usage_err(err, "--size (for tmpfs) is limited to %llu", BWRAP_MAX_TMPFS_BYTES);
		p->next_size = v;
	} else
		return 0;
	s->modifier = true;
	return 1;
}

/* What dshbox bwrap knows and refuses: recorded with its values skipped; anything else is unknown. */
static int parse_refused(struct parser *p, struct option_step *s, struct dsh_error **err)
{
	const char *arg = s->arg;
	size_t k;
	for (k = 0; k < sizeof(refused) / sizeof(refused[0]); k++)
		if (strcmp(arg, refused[k].name) == 0)
			break;
	if (k == sizeof(refused) / sizeof(refused[0]))
		return usage_err(err, "Unknown option %s", arg);
	NEED(refused[k].n_values, "%s takes %d argument%s", arg, refused[k].n_values,
	     refused[k].n_values > 1 ? "s" : "");
	if (dsh_strv_push(&p->a->unsupported, arg) < 0)
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	s->used = refused[k].n_values;
	return 0;
}
#undef NEED

/* Any option but --args, --help, --version and "--": one family's parser takes it, or none does. */
static int parse_option(struct parser *p, struct option_step *s, struct dsh_error **err)
{
	static int (*const families[])(struct parser *, struct option_step *, struct dsh_error **) = {
		parse_mount_op, parse_file_op, parse_fd_option, parse_process_option, parse_modifier,
	};
	if (parse_switch(p->a, s->arg))
		return 0;
	for (size_t k = 0; k < sizeof(families) / sizeof(families[0]); k++) {
		int r = families[k](p, s, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return parse_refused(p, s, err);
}

/*
 * The command: everything from argv[i] on (an empty vector when nothing follows).  Inside an --args
 * file it ends the file's options and is not taken (the command comes from the command line).
 */
static int take_command(struct dsh_bwrap_args *a, int argc, char *const *argv, int i, bool in_file,
			int *ret_consumed, struct dsh_error **err)
{
	if (in_file) {
		*ret_consumed = i;
		return 0;
	}
	if (!a->argv && !(a->argv = calloc(1, sizeof(char *))))
		return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	for (; i < argc; i++)
		if (dsh_strv_push(&a->argv, argv[i]) < 0)
			return dsh_err_sys(err, ENOMEM, "bwrap arguments");
	*ret_consumed = argc;
	return 0;
}

static int parse_recurse(struct parser *p, int argc, char *const *argv, bool in_file, int *ret_consumed,
			 struct dsh_error **err)
{
	struct dsh_bwrap_args *a = p->a;
	int i = 0, r;
	while (i < argc && !a->argv && !a->help && !a->version) {
		const char *arg = argv[i];
		if (strcmp(arg, "--help") == 0) {
			a->help = true;
			break;
		}
		if (strcmp(arg, "--version") == 0) {
			a->version = true;
			break;
		}
		if (strcmp(arg, "--") == 0)
			return take_command(a, argc, argv, i + 1, in_file, ret_consumed, err);
		if (arg[0] != '-')
			return take_command(a, argc, argv, i, in_file, ret_consumed, err);
		struct option_step s = { .arg = arg, .val = argv + i + 1, .left = argc - i - 1 };
		if (strcmp(arg, "--args") == 0)
			r = do_args(p, &s, in_file, err);
		else
			r = parse_option(p, &s, err);
		if (r < 0)
			return r;
		/* --perms and --size belong to the very next operation, and only to one that takes them. */
		if (!s.modifier && p->next_perms >= 0)
			return usage_err(err, "--perms must be followed by an option that creates a file");
		if (!s.modifier && p->next_size != 0)
			return usage_err(err, "--size must be followed by --tmpfs");
		i += 1 + s.used;
	}
	*ret_consumed = i;
	return 0;
}

int dsh_bwrap_parse(int argc, char *const *argv, dsh_bwrap_read_fd_fn read_fd, void *userdata,
		    struct dsh_bwrap_args *ret, struct dsh_error **err)
{
	memset(ret, 0, sizeof(*ret));
	ret->seccomp_fd = ret->info_fd = ret->json_status_fd = ret->block_fd = ret->sync_fd = -1;
	struct parser p = { .a = ret, .read_fd = read_fd, .userdata = userdata, .next_perms = -1 };
	p.total = (size_t)(argc > 0 ? argc : 0);
	int r;
	if (p.total > BWRAP_MAX_ARGS)
		r = usage_err(err, "Exceeded maximum number of arguments %u", BWRAP_MAX_ARGS);
	else {
		int consumed = 0;
		r = parse_recurse(&p, argc, argv, false, &consumed, err);
		/* A modifier left pending at the end of an --args file is checked by the next option;
		   at the very end, nothing followed it. */
		if (r >= 0 && !ret->help && !ret->version && p.next_perms >= 0)
			r = usage_err(err, "--perms must be followed by an option that creates a file");
		if (r >= 0 && !ret->help && !ret->version && p.next_size != 0)
			r = usage_err(err, "--size must be followed by --tmpfs");
	}
	dsh_strv_free(p.args_data);
	if (r < 0)
		dsh_bwrap_args_clear(ret);
	else if (!ret->argv && !(ret->argv = calloc(1, sizeof(char *))))
		r = dsh_err_sys(err, ENOMEM, "bwrap arguments");
	return r;
}

void dsh_bwrap_args_clear(struct dsh_bwrap_args *a)
{
	for (size_t i = 0; i < a->n_ops; i++) {
		free(a->ops[i].source);
		free(a->ops[i].dest);
	}
	free(a->ops);
	for (size_t i = 0; i < a->n_env; i++) {
		free(a->env[i].name);
		free(a->env[i].value);
	}
	free(a->env);
	free(a->cap_ops);
	free(a->chdir);
	free(a->argv0);
	free(a->hostname);
	free(a->add_seccomp_fds);
	dsh_strv_free(a->unsupported);
	dsh_strv_free(a->lock_files);
	dsh_strv_free(a->argv);
	memset(a, 0, sizeof(*a));
	a->seccomp_fd = a->info_fd = a->json_status_fd = a->block_fd = a->sync_fd = -1;
}

int dsh_bwrap_validate(const struct dsh_bwrap_args *a, uid_t uid, gid_t gid, struct dsh_error **err)
{
	if (a->disable_userns && !a->unshare_user)
		return usage_err(err, "--disable-userns requires --unshare-user");
	/* Not setuid, bubblewrap makes a user namespace for every caller but root (and for root with
	   -try where the kernel has them): dshbox bwrap is never setuid. */
	bool userns = a->unshare_user || a->unshare_user_try || uid != 0;
	if (a->have_uid && !userns && a->uid != uid)
		return usage_err(err, "Specifying --uid requires --unshare-user or --userns");
	if (a->have_gid && !userns && a->gid != gid)
		return usage_err(err, "Specifying --gid requires --unshare-user or --userns");
	if (a->hostname && !a->unshare_uts)
		return usage_err(err, "Specifying --hostname requires --unshare-uts");
	if (a->as_pid_1 && !a->unshare_pid)
		return usage_err(err, "Specifying --as-pid-1 requires --unshare-pid");
	if (a->as_pid_1 && a->lock_files)
		return usage_err(err, "Specifying --as-pid-1 and --lock-file is not permitted");
	return 0;
}

static bool env_name_is(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

int dsh_bwrap_apply_env(const struct dsh_bwrap_args *a, char *const *envp, char ***ret, struct dsh_error **err)
{
	_cleanup_strv_ char **env = dsh_strv_copy(envp);
	if (!env)
		return dsh_err_sys(err, ENOMEM, "environment");
	for (size_t i = 0; i < a->n_env; i++) {
		const struct dsh_bwrap_env_op *e = &a->env[i];
		size_t out = 0;
		for (size_t j = 0; env[j]; j++) {
			bool drop = e->kind == DSH_BWRAP_CLEARENV || env_name_is(env[j], e->name);
			if (drop)
				free(env[j]);
			else
				env[out++] = env[j];
		}
		env[out] = NULL;
		if (e->kind == DSH_BWRAP_SETENV && dsh_strv_pushf(&env, "%s=%s", e->name, e->value) < 0)
			return dsh_err_sys(err, ENOMEM, "environment");
	}
	*ret = TAKE_PTR(env);
	return 0;
}

char *dsh_bwrap_render(const struct dsh_bwrap_args *a)
{
	struct dsh_buf b = { 0 };
	for (size_t i = 0; i < a->n_ops; i++) {
		const struct dsh_bwrap_op *op = &a->ops[i];
		dsh_buf_addf(&b, "%3zu  %s%s", i + 1, dsh_bwrap_op_to_string(op->kind), op->try_ ? "-try" : "");
		if (op->source)
			dsh_buf_addf(&b, "  %s ->", op->source);
		if (op->fd >= 0)
			dsh_buf_addf(&b, "  fd %d ->", op->fd);
		dsh_buf_addf(&b, "  %s", op->dest);
		if (op->perms >= 0)
			dsh_buf_addf(&b, "  mode %04o%s", op->perms, op->have_perms ? " (--perms)" : "");
		if (op->size)
			dsh_buf_addf(&b, "  size %llu", op->size);
		dsh_buf_add(&b, "\n");
	}
	return dsh_buf_steal(&b);
}
