/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bubblewrap's argv as data: each option, order, --perms/--size for the next operation only, errors. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"
#include "bwrap/args.h"

static struct dsh_bwrap_args A;
static struct dsh_error *E;

/* --args FD in tests: fd 7 holds "--unshare-net\0--dir\0/x\0", fd 8 nests --args, others fail. */
static int fake_read(int fd, char **ret, size_t *len, void *ud)
{
	(void)ud;
	static const char seven[] = "--unshare-net\0--dir\0/x\0";
	static const char eight[] = "--args\0" "7\0";
	const char *src = fd == 7 ? seven : fd == 8 ? eight : NULL;
	size_t n = fd == 7 ? sizeof(seven) - 1 : sizeof(eight) - 1;
	if (!src)
		return -EBADF;
	*ret = malloc(n + 1);
	memcpy(*ret, src, n);
	(*ret)[n] = 0;
	*len = n;
	return 0;
}

#define PARSE(...)                                                                   \
	({                                                                           \
		char *const v_[] = { __VA_ARGS__, NULL };                           \
		dsh_bwrap_args_clear(&A);                                            \
		dsh_error_free(E);                                                   \
		E = NULL;                                                            \
		dsh_bwrap_parse((int)(sizeof(v_) / sizeof(v_[0]) - 1), v_, fake_read, NULL, &A, &E); \
	})

#define FAILS(want, ...)                                                              \
	do {                                                                         \
		cr_assert_lt(PARSE(__VA_ARGS__), 0);                                 \
		cr_assert_not_null(E);                                               \
		cr_assert_str_eq(E->msg, want);                                      \
	} while (0)

static void setup(void)
{
	memset(&A, 0, sizeof(A));
	E = NULL;
}
static void teardown(void)
{
	dsh_bwrap_args_clear(&A);
	dsh_error_free(E);
}
TestSuite(bwrap_args, .init = setup, .fini = teardown);

Test(bwrap_args, dsh_host_workspace_write)
{
	cr_assert_eq(PARSE("--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
			   "--die-with-parent", "--tmpfs", "/tmp", "--bind", "/w", "/w", "--unshare-net", "--",
			   "sh", "-c", "exit 3"),
		     0);
	cr_assert_eq(A.n_ops, 5);
	enum dsh_bwrap_op_kind want[] = { DSH_BWRAP_RO_BIND, DSH_BWRAP_DEV, DSH_BWRAP_PROC, DSH_BWRAP_TMPFS,
					  DSH_BWRAP_BIND };
	const char *dest[] = { "/", "/dev", "/proc", "/tmp", "/w" };
	for (size_t i = 0; i < 5; i++) {
		cr_assert_eq(A.ops[i].kind, want[i], "op %zu", i);
		cr_assert_str_eq(A.ops[i].dest, dest[i]);
	}
	cr_assert_str_eq(A.ops[0].source, "/");
	cr_assert_eq(A.ops[3].perms, 0755);
	cr_assert(A.unshare_pid && A.unshare_net && A.die_with_parent);
	cr_assert(!A.unshare_user && !A.unshare_ipc);
	cr_assert_eq(dsh_strv_len(A.argv), 3);
	cr_assert_str_eq(A.argv[0], "sh");
	cr_assert_str_eq(A.argv[2], "exit 3");
}

Test(bwrap_args, command_starts_at_first_non_option)
{
	cr_assert_eq(PARSE("--dev", "/dev", "true", "--dev", "/x"), 0);
	cr_assert_eq(A.n_ops, 1);
	cr_assert_eq(dsh_strv_len(A.argv), 3);
	cr_assert_str_eq(A.argv[1], "--dev");
	cr_assert_eq(PARSE("--dev", "/dev"), 0);
	cr_assert_not_null(A.argv);
	cr_assert_eq(dsh_strv_len(A.argv), 0);
	cr_assert_eq(PARSE("--", "--not-an-option"), 0);
	cr_assert_str_eq(A.argv[0], "--not-an-option");
}

Test(bwrap_args, every_mount_operation_in_order)
{
	cr_assert_eq(PARSE("--ro-bind-try", "/a", "/a", "--bind-try", "/b", "/b", "--dev-bind", "/c", "/c",
			   "--dev-bind-try", "/d", "/d", "--remount-ro", "/e", "--mqueue", "/f", "--dir", "/g",
			   "--symlink", "t", "/h", "--file", "3", "/i", "--bind-data", "4", "/j", "--ro-bind-data",
			   "5", "/k", "--chmod", "0700", "/l", "--", "x"),
		     0);
	cr_assert_eq(A.n_ops, 12);
	cr_assert(A.ops[0].try_ && A.ops[0].kind == DSH_BWRAP_RO_BIND);
	cr_assert(A.ops[1].try_ && A.ops[1].kind == DSH_BWRAP_BIND);
	cr_assert(!A.ops[2].try_ && A.ops[2].kind == DSH_BWRAP_DEV_BIND);
	cr_assert(A.ops[3].try_ && A.ops[3].kind == DSH_BWRAP_DEV_BIND);
	cr_assert_eq(A.ops[4].kind, DSH_BWRAP_REMOUNT_RO);
	cr_assert_eq(A.ops[5].kind, DSH_BWRAP_MQUEUE);
	cr_assert_eq(A.ops[6].kind, DSH_BWRAP_DIR);
	cr_assert_eq(A.ops[6].perms, 0755);
	cr_assert_eq(A.ops[7].kind, DSH_BWRAP_SYMLINK);
	cr_assert_str_eq(A.ops[7].source, "t");
	cr_assert_eq(A.ops[8].kind, DSH_BWRAP_FILE);
	cr_assert_eq(A.ops[8].fd, 3);
	cr_assert_eq(A.ops[8].perms, 0666);
	cr_assert_eq(A.ops[9].kind, DSH_BWRAP_BIND_DATA);
	cr_assert_eq(A.ops[9].perms, 0600);
	cr_assert_eq(A.ops[10].kind, DSH_BWRAP_RO_BIND_DATA);
	cr_assert_eq(A.ops[10].fd, 5);
	cr_assert_eq(A.ops[11].kind, DSH_BWRAP_CHMOD);
	cr_assert_eq(A.ops[11].perms, 0700);
	cr_assert(!A.ops[11].have_perms);
}

Test(bwrap_args, perms_and_size_apply_to_the_next_operation_only)
{
	cr_assert_eq(PARSE("--perms", "0700", "--size", "1048576", "--tmpfs", "/t", "--tmpfs", "/u", "--perms",
			   "0640", "--file", "3", "/f", "--dir", "/d", "x"),
		     0);
	cr_assert_eq(A.ops[0].perms, 0700);
	cr_assert(A.ops[0].have_perms);
	cr_assert_eq(A.ops[0].size, 1048576);
	cr_assert_eq(A.ops[1].perms, 0755);
	cr_assert(!A.ops[1].have_perms);
	cr_assert_eq(A.ops[1].size, 0);
	cr_assert_eq(A.ops[2].perms, 0640);
	cr_assert_eq(A.ops[3].perms, 0755);
}

Test(bwrap_args, perms_and_size_errors)
{
	FAILS("--perms must be followed by an option that creates a file", "--perms", "0700", "--bind", "/a", "/b", "x");
	FAILS("--perms must be followed by an option that creates a file", "--perms", "0700", "--unshare-pid", "x");
	FAILS("--perms must be followed by an option that creates a file", "--perms", "0700");
	FAILS("--perms given twice for the same action", "--perms", "0700", "--perms", "0600", "--dir", "/d");
	FAILS("--perms takes an octal argument <= 07777", "--perms", "8", "--dir", "/d");
	FAILS("--perms takes an octal argument <= 07777", "--perms", "10000", "--dir", "/d");
	FAILS("--perms takes an argument", "--perms");
	FAILS("--size must be followed by --tmpfs", "--size", "100", "--dir", "/d", "x");
	FAILS("--size takes a non-zero number of bytes", "--size", "0", "--tmpfs", "/t");
	FAILS("--size takes a non-zero number of bytes", "--size", "-1", "--tmpfs", "/t");
	FAILS("--size takes a non-zero number of bytes", "--size", "12k", "--tmpfs", "/t");
	FAILS("--size given twice for the same action", "--size", "1", "--size", "2", "--tmpfs", "/t");
	FAILS("--chmod takes an octal argument <= 07777", "--chmod", "rw", "/x");
}

Test(bwrap_args, missing_values_and_unknown_options)
{
	FAILS("Unknown option --frobnicate", "--frobnicate", "x");
	FAILS("Unknown option -x", "-x");
	FAILS("--bind takes two arguments", "--bind", "/a");
	FAILS("--ro-bind-try takes two arguments", "--ro-bind-try", "/a");
	FAILS("--dev-bind takes two arguments", "--dev-bind");
	FAILS("--tmpfs takes an argument", "--tmpfs");
	FAILS("--proc takes an argument", "--proc");
	FAILS("--dev takes an argument", "--dev");
	FAILS("--dir takes an argument", "--dir");
	FAILS("--symlink takes two arguments", "--symlink", "a");
	FAILS("--remount-ro takes one argument", "--remount-ro");
	FAILS("--chdir takes one argument", "--chdir");
	FAILS("--setenv takes two arguments", "--setenv", "A");
	FAILS("--unsetenv takes an argument", "--unsetenv");
	FAILS("--file takes two arguments", "--file", "3");
	FAILS("Invalid fd: x", "--file", "x", "/f");
	FAILS("Invalid fd: -1", "--bind-data", "-1", "/f");
	FAILS("Invalid fd: 3a", "--ro-bind-data", "3a", "/f");
	FAILS("Invalid fd: ", "--info-fd", "");
	FAILS("--seccomp takes an argument", "--seccomp");
	FAILS("--argv0 takes one argument", "--argv0");
	FAILS("--argv0 used multiple times", "--argv0", "a", "--argv0", "b");
	FAILS("Invalid uid: x", "--uid", "x");
	FAILS("--hostname takes an argument", "--hostname");
	FAILS("--cap-drop takes an argument", "--cap-drop");
	FAILS("--overlay takes 3 arguments", "--overlay", "a");
	cr_assert_eq(E->kind, DSH_ERR_USAGE);
}

Test(bwrap_args, namespaces_and_process_options)
{
	cr_assert_eq(PARSE("--unshare-all", "--share-net", "x"), 0);
	cr_assert(A.unshare_user_try && A.unshare_ipc && A.unshare_pid && A.unshare_uts && A.unshare_cgroup_try);
	cr_assert(!A.unshare_net && !A.unshare_user && !A.unshare_cgroup);
	cr_assert_eq(PARSE("--unshare-user", "--unshare-cgroup", "--unshare-uts", "--hostname", "box", "--uid", "0",
			   "--gid", "0", "--new-session", "--as-pid-1", "--unshare-pid", "--cap-drop", "ALL",
			   "--disable-userns", "--assert-userns-disabled", "--level-prefix", "--argv0", "zero",
			   "--chdir", "/a", "--chdir", "/b", "x"),
		     0);
	cr_assert(A.unshare_user && A.unshare_cgroup && A.unshare_uts && A.new_session && A.as_pid_1);
	cr_assert(A.n_cap_ops == 1 && !A.cap_ops[0].add && A.cap_ops[0].cap == DSH_BWRAP_CAP_ALL && A.disable_userns && A.assert_userns_disabled && A.level_prefix);
	cr_assert(A.have_uid && A.uid == 0 && A.have_gid && A.gid == 0);
	cr_assert_str_eq(A.hostname, "box");
	cr_assert_str_eq(A.argv0, "zero");
	cr_assert_str_eq(A.chdir, "/b");
	cr_assert_eq(dsh_bwrap_validate(&A, 0, 0, &E), 0);
	cr_assert_eq(PARSE("--cap-add", "CAP_SETFCAP", "--cap-drop", "CAP_NET_RAW", "x"), 0);
	cr_assert_eq(A.n_cap_ops, 2);
}

/* bubblewrap's set: the ops in order over one set, names as libcap reads them. */
Test(bwrap_args, capabilities_in_order)
{
	cr_assert_eq(PARSE("--cap-drop", "ALL", "--cap-add", "CAP_SETFCAP", "x"), 0);
	cr_assert_eq(dsh_bwrap_caps(&A, ~0ULL), 1ULL << 31);
	cr_assert_eq(PARSE("--cap-add", "cap_setfcap", "--cap-add", "0", "--cap-add", "0x1", "x"), 0);
	cr_assert_eq(dsh_bwrap_caps(&A, 0), (1ULL << 31) | 3);
	cr_assert_eq(PARSE("--cap-add", "all", "--cap-drop", "CAP_SYS_ADMIN", "--cap-drop", "cap_net_raw", "x"), 0);
	cr_assert_eq(dsh_bwrap_caps(&A, 0), ~((1ULL << 21) | (1ULL << 13)));
	/* A later ALL undoes an earlier add; an earlier drop does not stop a later add. */
	cr_assert_eq(PARSE("--cap-add", "CAP_CHOWN", "--cap-drop", "ALL", "x"), 0);
	cr_assert_eq(dsh_bwrap_caps(&A, 1ULL << 5), 0);
	cr_assert_eq(PARSE("--cap-drop", "CAP_KILL", "--cap-add", "Cap_Kill", "x"), 0);
	cr_assert_eq(dsh_bwrap_caps(&A, 0), 1ULL << 5);
	/* libcap reads the name up to the first character that cannot be in one. */
	cr_assert_eq(PARSE("--cap-add", "cap_setfcap,cap_chown", "x"), 0);
	cr_assert_eq(dsh_bwrap_caps(&A, 0), 1ULL << 31);
	FAILS("unknown cap: setfcap", "--cap-add", "setfcap");
	FAILS("unknown cap: cap_frob", "--cap-drop", "cap_frob");
	FAILS("unknown cap:  cap_chown", "--cap-add", " cap_chown");
	FAILS("unknown cap: 64", "--cap-add", "64");
	FAILS("--cap-add takes an argument", "--cap-add");
}

Test(bwrap_args, descriptors)
{
	cr_assert_eq(PARSE("--info-fd", "3", "--json-status-fd", "4", "--block-fd", "5", "--sync-fd", "6",
			   "--add-seccomp-fd", "7", "--add-seccomp-fd", "8", "x"),
		     0);
	cr_assert_eq(A.info_fd, 3);
	cr_assert_eq(A.json_status_fd, 4);
	cr_assert_eq(A.block_fd, 5);
	cr_assert_eq(A.sync_fd, 6);
	cr_assert_eq(A.n_add_seccomp_fds, 2);
	cr_assert_eq(A.add_seccomp_fds[1], 8);
	cr_assert_eq(A.seccomp_fd, -1);
	cr_assert_eq(PARSE("--seccomp", "9", "x"), 0);
	cr_assert_eq(A.seccomp_fd, 9);
	FAILS("--add-seccomp-fd cannot be combined with --seccomp", "--seccomp", "9", "--add-seccomp-fd", "3");
	FAILS("--seccomp cannot be combined with --add-seccomp-fd", "--add-seccomp-fd", "3", "--seccomp", "9");
}

Test(bwrap_args, args_fd)
{
	cr_assert_eq(PARSE("--dev", "/dev", "--args", "7", "--tmpfs", "/t", "x"), 0);
	cr_assert_eq(A.n_ops, 3);
	cr_assert_eq(A.ops[1].kind, DSH_BWRAP_DIR);
	cr_assert_str_eq(A.ops[1].dest, "/x");
	cr_assert_eq(A.ops[2].kind, DSH_BWRAP_TMPFS);
	cr_assert(A.unshare_net);
	FAILS("--args not supported in arguments file", "--args", "8", "x");
	cr_assert_lt(PARSE("--args", "9", "x"), 0);
	cr_assert(strstr(E->msg, "Can't read --args data") == E->msg);
}

Test(bwrap_args, help_and_version_stop_parsing)
{
	cr_assert_eq(PARSE("--help", "--frob"), 0);
	cr_assert(A.help);
	cr_assert_eq(PARSE("--version"), 0);
	cr_assert(A.version);
	FAILS("Unknown option --frob", "--frob", "--help");
}

Test(bwrap_args, cross_option_checks)
{
	cr_assert_eq(PARSE("--uid", "5", "x"), 0);
	cr_assert_eq(dsh_bwrap_validate(&A, 1000, 1000, &E), 0, "a user namespace is implied for non-root");
	cr_assert_eq(dsh_bwrap_validate(&A, 5, 0, &E), 0, "a caller whose uid is 5");
	cr_assert_lt(dsh_bwrap_validate(&A, 0, 0, &E), 0);
	cr_assert_str_eq(E->msg, "Specifying --uid requires --unshare-user or --userns");
	dsh_error_free(E);
	E = NULL;
	cr_assert_eq(PARSE("--hostname", "h", "x"), 0);
	cr_assert_lt(dsh_bwrap_validate(&A, 1000, 1000, &E), 0);
	cr_assert_str_eq(E->msg, "Specifying --hostname requires --unshare-uts");
	dsh_error_free(E);
	E = NULL;
	cr_assert_eq(PARSE("--as-pid-1", "x"), 0);
	cr_assert_lt(dsh_bwrap_validate(&A, 1000, 1000, &E), 0);
	cr_assert_str_eq(E->msg, "Specifying --as-pid-1 requires --unshare-pid");
	dsh_error_free(E);
	E = NULL;
	cr_assert_eq(PARSE("--disable-userns", "x"), 0);
	cr_assert_lt(dsh_bwrap_validate(&A, 1000, 1000, &E), 0);
	cr_assert_str_eq(E->msg, "--disable-userns requires --unshare-user");
}

Test(bwrap_args, environment_ops_in_order)
{
	cr_assert_eq(PARSE("--setenv", "A", "1", "--unsetenv", "B", "--clearenv", "--setenv", "C", "3",
			   "--setenv", "C", "4", "x"),
		     0);
	char *const env[] = { "A=0", "B=2", "D=5", NULL };
	char **out = NULL;
	cr_assert_eq(dsh_bwrap_apply_env(&A, env, &out, &E), 0);
	cr_assert_eq(dsh_strv_len(out), 1);
	cr_assert_str_eq(out[0], "C=4");
	dsh_strv_free(out);
	cr_assert_eq(PARSE("--setenv", "A", "1", "--unsetenv", "B", "x"), 0);
	cr_assert_eq(dsh_bwrap_apply_env(&A, env, &out, &E), 0);
	cr_assert_eq(dsh_strv_len(out), 2);
	cr_assert_str_eq(out[0], "D=5");
	cr_assert_str_eq(out[1], "A=1");
	dsh_strv_free(out);
}

Test(bwrap_args, render_lists_operations)
{
	cr_assert_eq(PARSE("--ro-bind", "/", "/", "--perms", "0700", "--tmpfs", "/tmp", "x"), 0);
	char *text = dsh_bwrap_render(&A);
	cr_assert_str_eq(text, "  1  ro-bind  / ->  /\n  2  tmpfs  /tmp  mode 0700 (--perms)\n");
	free(text);
}
