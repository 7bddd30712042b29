/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure half of the Landlock module: access masks per ABI, ruleset specs, a policy's grants. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strbuf.h"
#include "landlock/landlock.h"
#include "policy/policy.h"

#define FS_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* ABI 1: the thirteen rights of Linux 5.13. */
#define FS_ABI1 ((1ULL << 13) - 1)

uint64_t dsh_landlock_fs_handled(int abi)
{
	if (abi < 1)
		return 0;
	uint64_t a = FS_ABI1;
	if (abi >= 2)
		a |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		a |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		a |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return a;
}

uint64_t dsh_landlock_fs_read(int abi)
{
	return abi < 1 ? 0 : FS_READ;
}

uint64_t dsh_landlock_fs_write(int abi)
{
	return dsh_landlock_fs_handled(abi) & ~FS_READ;
}

uint64_t dsh_landlock_fs_rw(int abi)
{
	return dsh_landlock_fs_handled(abi);
}

uint64_t dsh_landlock_fs_file_only(int abi)
{
	return dsh_landlock_fs_handled(abi) &
	       (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
		LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV);
}

uint64_t dsh_landlock_net_handled(int abi)
{
	return abi >= 4 ? LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP : 0;
}

uint64_t dsh_landlock_scopes(int abi)
{
	return abi >= 6 ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL : 0;
}

static const char *const fs_names[] = {
	"execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file", "make_char",
	"make_dir", "make_reg", "make_sock", "make_fifo", "make_block", "make_sym", "refer",
	"truncate", "ioctl_dev",
};

char *dsh_landlock_fs_access_to_string(uint64_t access)
{
	struct dsh_buf b = { 0 };
	dsh_buf_add(&b, "");
	for (size_t i = 0; i < 64; i++) {
		if (!(access & (1ULL << i)))
			continue;
		if (b.len)
			dsh_buf_addc(&b, '|');
		if (i < ARRAY_SIZE(fs_names))
			dsh_buf_add(&b, fs_names[i]);
		else
			dsh_buf_addf(&b, "bit%zu", i);
	}
	return dsh_buf_steal(&b);
}

void dsh_landlock_spec_init(struct dsh_landlock_spec *s, int abi)
{
	memset(s, 0, sizeof(*s));
	s->abi = abi;
	s->handled_fs = dsh_landlock_fs_handled(abi);
	s->scoped = dsh_landlock_scopes(abi);
}

void dsh_landlock_spec_clear(struct dsh_landlock_spec *s)
{
	for (size_t i = 0; i < s->n_grants; i++)
		free(s->grants[i].path);
	free(s->grants);
	memset(s, 0, sizeof(*s));
}

int dsh_landlock_spec_add_rule(struct dsh_landlock_spec *s, const char *path, uint64_t access,
			       unsigned rule, struct dsh_error **err)
{
	int r = dsh_landlock_spec_add(s, path, -1, access, err);
	if (r < 0)
		return r;
	s->grants[s->n_grants - 1].rule = rule;
	return 0;
}

int dsh_landlock_spec_add(struct dsh_landlock_spec *s, const char *path, int fd, uint64_t access,
			  struct dsh_error **err)
{
	if ((path == NULL) == (fd < 0))
		return dsh_err(err, DSH_ERR_SYSTEM, EINVAL, "landlock grant: give a path or a descriptor");
	if (s->n_grants == s->cap_grants) {
		size_t cap = s->cap_grants ? s->cap_grants * 2 : 16;
		struct dsh_landlock_grant *g = realloc(s->grants, cap * sizeof(*g));
		if (!g)
			return dsh_err_sys(err, ENOMEM, "landlock grant");
		s->grants = g;
		s->cap_grants = cap;
	}
	char *copy = NULL;
	if (path && !(copy = strdup(path)))
		return dsh_err_sys(err, ENOMEM, "landlock grant");
	s->grants[s->n_grants++] = (struct dsh_landlock_grant){
		.path = copy, .fd = path ? -1 : fd, .access = access, .rule = DSH_LANDLOCK_NO_RULE,
	};
	return 0;
}

const char *const dsh_landlock_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", NULL,
};

int dsh_landlock_spec_for_sandbox(const struct dsh_policy *p, int abi, unsigned flags,
				  struct dsh_landlock_spec *ret, struct dsh_error **err)
{
	struct dsh_landlock_spec s;
	int r;
	dsh_landlock_spec_init(&s, abi);
	if (abi < 1) {
		*ret = s;
		return 0;
	}
	r = dsh_landlock_spec_add(&s, "/", -1, dsh_landlock_fs_read(abi), err);
	for (size_t i = 0; r >= 0 && i < p->n_roots; i++) {
		const struct dsh_root *root = &p->roots[i];
		/* A root inside a -- or r- rule is dead or read-only (SPEC 1.2): the mount tree says so
		   and Landlock must not say otherwise. */
		if (root->dead_by || root->readonly_by)
			continue;
		r = dsh_landlock_spec_add_rule(&s, root->path, dsh_landlock_fs_rw(abi),
					       root->rule ? root->rule->index : DSH_LANDLOCK_NO_RULE, err);
	}
	for (size_t i = 0; r >= 0 && dsh_landlock_devices[i]; i++)
		r = dsh_landlock_spec_add(&s, dsh_landlock_devices[i], -1, dsh_landlock_fs_rw(abi), err);
	/* The sandbox's own devpts, and the caller's terminal bound on /dev/console (ns/mount.c): no
	   other terminal is in this /dev.  Missing (no terminal): no grant. */
	if (r >= 0)
		r = dsh_landlock_spec_add(&s, "/dev/pts", -1, dsh_landlock_fs_rw(abi), err);
	if (r >= 0)
		r = dsh_landlock_spec_add(&s, "/dev/console", -1, dsh_landlock_fs_rw(abi), err);
	if (r >= 0 && (flags & DSH_LANDLOCK_PRIVATE_DEV_SHM))
		r = dsh_landlock_spec_add(&s, "/dev/shm", -1, dsh_landlock_fs_rw(abi), err);
	if (r >= 0 && (flags & DSH_LANDLOCK_PRIVATE_TMP))
		r = dsh_landlock_spec_add(&s, "/tmp", -1, dsh_landlock_fs_rw(abi), err);
	if (r >= 0 && (flags & DSH_LANDLOCK_OWN_PROC))
		r = dsh_landlock_spec_add(&s, "/proc", -1,
					  LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0), err);
	if (r < 0) {
		dsh_landlock_spec_clear(&s);
		return r;
	}
	*ret = s;
	return 0;
}
