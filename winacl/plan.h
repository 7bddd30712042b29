/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_WINACL_PLAN_H
#define DSH_WINACL_PLAN_H

/*
 * The Windows ACL plan (SPEC 4, 6): pure, built into the library on Linux (explain, tests) and into
 * the Windows runner (make windows).  It depends on nothing but common/ and libc.
 *
 * The model: the command runs under a WRITE-RESTRICTED token (CreateRestrictedToken with
 * WRITE_RESTRICTED) whose restricting SIDs are a per-run sandbox SID and the logon SID.  Reads are
 * checked against the user's own SIDs as before; a write must also be granted to a restricting SID.
 * So: writable roots get an inheritable allow-write ACE for the sandbox SID; r- and -- paths get an
 * inheritable deny-write ACE for it.  Reads cannot be taken away through the sandbox SID (the token
 * restricts writes only), so -- degrades to read-only — said out loud as a warning.
 */

#include <stdbool.h>
#include <stddef.h>

#include "dshbox/dshbox.h"

enum dsh_win_sid {
	DSH_WIN_SID_SANDBOX,  /* a fresh SID per run, only in this token's restricting list */
	DSH_WIN_SID_LOGON,    /* the logon session's SID (window station, console) */
	DSH_WIN_SID_USER,     /* the user's own SID (danger-full-access with rules only) */
};
const char *dsh_win_sid_to_string(enum dsh_win_sid s);

enum dsh_win_ace_type {
	DSH_WIN_ACE_ALLOW,
	DSH_WIN_ACE_DENY,
};

/* Access, symbolically; winacl/runner_win.c maps each bit to the exact FILE_* rights. */
enum {
	DSH_WIN_ACCESS_WRITE = 1 << 0,  /* write/append data, write attributes and EA, delete child */
	DSH_WIN_ACCESS_DELETE = 1 << 1, /* DELETE */
	DSH_WIN_ACCESS_READ = 1 << 2,   /* read data, attributes, EA, execute */
};

struct dsh_win_ace {
	enum dsh_win_ace_type type;
	enum dsh_win_sid sid;
	unsigned access;
	char *path;
	int rule;          /* index of the rule that asked for it, or -1 for a writable root */
	char *why;         /* "writable root (workspace)", "rule \"r- .git\"" */
};

struct dsh_winacl_rule {
	enum dsh_rule_kind kind;
	const char *text;
	bool glob;
	const char *const *paths; /* literal paths (every spelling), NULL-terminated; NULL for a glob */
};

struct dsh_winacl_input {
	enum dsh_mode mode;
	const char *const *roots;       /* writable roots in the mode's sense (canonical) */
	const char *const *root_labels; /* "workspace", "TEMP", "rule rw …" (parallel, may be NULL) */
	const struct dsh_winacl_rule *rules;
	size_t n_rules;
};

struct dsh_winacl_plan {
	bool restricted;            /* false: the command runs with the caller's token, unchanged */
	enum dsh_win_sid restricting[3];
	size_t n_restricting;
	struct dsh_win_ace *aces;   /* sorted parents first, allows before denies on one path */
	size_t n_aces;
	bool *refuse;               /* per rule: the runner refuses the run (a glob) */
	size_t n_rules;
	char **notes;               /* roots not granted because a rule covers them, ... */
};

int dsh_winacl_plan_build(const struct dsh_winacl_input *in, struct dsh_winacl_plan *ret, struct dsh_error **err);
void dsh_winacl_plan_clear(struct dsh_winacl_plan *plan);
/* The plan as text, one ACE per line. */
char *dsh_winacl_plan_render(const struct dsh_winacl_plan *plan);
char *dsh_win_access_to_string(unsigned access);

/* Component-wise, case-insensitive, '/' and '\' alike: whether path is base or beneath it. */
bool dsh_win_path_is_beneath(const char *path, const char *base);

#endif
