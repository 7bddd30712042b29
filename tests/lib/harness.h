/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef DSH_TESTS_HARNESS_H
#define DSH_TESTS_HARNESS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>

#include <criterion/criterion.h>

/*
 * Shared helpers for the Criterion suites: run the dshbox binary (or any program) with captured
 * output, make scratch trees outside /tmp (the sandbox's /tmp is private, SPEC 3.6), read the
 * shared conformance vectors in place, and skip with a printed reason.
 */

struct dsh_proc {
	int exit_code;   /* -1 when killed by a signal */
	int signal;      /* the killing signal, or 0 */
	char *out;       /* captured stdout (NUL-terminated) */
	char *err;       /* captured stderr */
};

/* Run argv (argv[0] is a path, or looked up in PATH) with env (NULL: the test's environment),
   feeding stdin_data (NULL: /dev/null).  Returns 0, or -errno when it could not start. */
int dsh_proc_run(char *const argv[], char *const env[], const char *stdin_data, struct dsh_proc *r);
/* dshbox run --backend B --workspace WS --cwd WS [--access RULE]... -- sh -c SCRIPT, the rules
   taken from ap up to a NULL. */
void dsh_test_run_sh(struct dsh_proc *r, char *const env[], const char *backend, const char *ws, const char *script,
		     va_list ap);
void dsh_proc_clear(struct dsh_proc *r);
/* A formatted string (asserted to be made); the caller frees it, or a test lets it go. */
char *dsh_test_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
/* Where a sandboxed command runs in the broker's tests: a mode, nestedSandbox, no Landlock. */
struct dsh_test_setting {
	const char *name;
	const char *backend;  /* --backend, or NULL for the caller's choice */
	const char *mode;     /* --mode, or NULL for the default (workspace-write) */
	bool nested;          /* --config with nestedSandbox: true */
	bool no_landlock;     /* dshbox under refuse_calls --errno ENOSYS landlock_create_ruleset */
};

/*
 * [refuse_calls ... --] dshbox run --backend B --workspace WS --cwd WS [--mode M] [--config NESTED]
 * [extra...] -- cmd...: backend is s->backend or the one given; nested_cfg a file saying
 * nestedSandbox: true.
 */
void dsh_test_run_setting(struct dsh_proc *r, char *const env[], const struct dsh_test_setting *s,
			  const char *backend, const char *ws, const char *nested_cfg, const char *const *extra,
			  const char *const *cmd);

/*
 * The value of "key=" at the start of a line of out (what the test helpers print), or "" when absent;
 * the last eight answers stay valid, so one message may quote several.
 */
const char *dsh_out_val(const char *out, const char *key);
/* Whether that value is want. */
bool dsh_out_is(const char *out, const char *key, const char *want);
/* The owner may set chattr's +d +A on path without privilege (ext4, tmpfs), or skip saying why not. */
void dsh_test_require_chattr(const char *path);
/* Number of lines in s that start with prefix. */
int dsh_count_lines_with_prefix(const char *s, const char *prefix);

/* Absolute path of the built dshbox binary, of a helper program, of the conformance directory. */
const char *dsh_test_dshbox(void);
/* The backend the escape suite runs: DSHBOX_ESCAPE_BACKEND, default auto (CI runs landlock too). */
const char *dsh_test_escape_backend(void);
bool dsh_test_escape_landlock(void);
/*
 * The same program kept outside every writable root of a test's policy: from a checkout under /tmp
 * (a writable root with tmp: host) build/dshbox is the program in use inside one, and gets its own
 * r- rule (SPEC 16), which a test of exact plans or watch counts does not expect.
 */
const char *dsh_test_dshbox_outside_roots(void);
char *dsh_test_helper(const char *name);
const char *dsh_test_conformance_dir(void);

/* A fresh directory under /var/tmp (never /tmp); removed by dsh_test_rmtree. */
char *dsh_test_mkdtemp(void);
void dsh_test_rmtree(const char *path);
/* Write a file (creating parents), with content. */
void dsh_test_write_file(const char *path, const char *content);
char *dsh_test_read_file(const char *path);

/*
 * Skip with a printed reason.  With DSHBOX_TEST_NO_SKIP=1 (CI) a skip is a failure: the CI
 * machines have every kernel feature, so a skip there hides a regression.
 */
#define DSH_SKIP(...)                                                             \
	do {                                                                      \
		if (getenv("DSHBOX_TEST_NO_SKIP") && *getenv("DSHBOX_TEST_NO_SKIP") == '1') \
			cr_assert_fail("skip refused under DSHBOX_TEST_NO_SKIP: " __VA_ARGS__); \
		else                                                              \
			cr_skip_test(__VA_ARGS__);                                \
	} while (0)

/* A workspace-write policy for ws with rules (NULL-terminated, or NULL), the defaults of SPEC 1.6
   off and HOME unset, so that only the rules named decide. */
struct dsh_policy;
struct dsh_policy *dsh_test_policy(const char *ws, const char *const *rules);

/* Skip (with the reason) on a kernel where dshbox probe finds no confining backend (5.10). */
void dsh_test_require_backend(void);
/* Whether `dshbox probe` finds backend b available here (asked once per process); skips with the
   reason where it does not, and where there is no confining backend at all. */
bool dsh_test_require_backend_named(const char *b);
/* Skip (with the reason) on a kernel without Landlock (before 5.13, or not in lsm=). */
void dsh_test_require_landlock(void);

/* One conformance vector file, loaded as it is. */
struct dsh_vectors {
	char *path;
	char *workspace;  /* #@ workspace= */
	char *tmpdir;     /* #@ tmpdir= */
	char **env;       /* #@ env=NAME=VALUE, in order */
	bool protect_defaults_off; /* #@ protectDefaults=false */
	struct dsh_vector {
		int line;       /* 1-based line number in the file */
		char **fields;  /* TAB-separated fields, NULL-terminated */
		size_t n_fields;
	} *cases;
	size_t n_cases;
};
/* Load tests/conformance/NAME (the exact copy of the shared vectors); aborts when it is missing. */
void dsh_vectors_load(const char *name, struct dsh_vectors *v);
void dsh_vectors_clear(struct dsh_vectors *v);
/* A configuration file saying what the file's headers say beyond the CLI flags (protectDefaults),
   or NULL when the defaults hold. */
const char *dsh_vectors_config(const struct dsh_vectors *v);

#endif
