/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dshbox-winrun.exe: the Windows applier of the winacl plan.  Built by `make windows` with
 * mingw-w64; not run on the build machines (wine fakes tokens and ACLs).
 *
 *   dshbox-winrun [--mode M] [--workspace DIR] [--access RULE]... [--dry-run] -- CMD [ARG...]
 *
 * The rules are dshbox's own (SPEC 1.2-1.4): the runner fills a struct dsh_config and hands it,
 * with the environment and the current directory, to the same compile explain uses
 * (winacl/compile.c over policy/), so what `dshbox explain --backend winacl` describes is what
 * runs here.  Windows paths are spelled /C:/dir inside the policy (policy/winpath.h): the runner
 * maps its directories and the environment's drive paths into that spelling, and the compile maps
 * the plan back.  It then adds the plan's ACEs for a fresh per-run sandbox SID, runs the command
 * under a write-restricted token in a kill-on-close job, removes every ACE naming that SID again,
 * and exits with the command's status.  --dry-run prints the plan and runs nothing (exit 0, or
 * 125 when the run would be refused).  Its own failures print "dshbox-winrun: error: …" (and a
 * hint line) and exit 125 before the command runs (or, for the clean-up, after it, with the
 * command's status lost).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <aclapi.h>
#include <ntsecapi.h>
#include <sddl.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "common/strv.h"
#include "dshbox/dshbox.h"
#include "policy/options.h"
#include "policy/winpath.h"
#include "winacl/compile.h"
#include "winacl/plan.h"

#define WINRUN_EXIT_FAILURE 125
#define WINRUN_PREFIX "dshbox-winrun: error: "
#define WINRUN_HINT "dshbox-winrun: hint: "

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;
	fputs(WINRUN_PREFIX, stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(WINRUN_EXIT_FAILURE);
}

/* A library error: its one line, and its hint on a second. */
static void fail_err(struct dsh_error *err) __attribute__((noreturn));
static void fail_err(struct dsh_error *err)
{
	if (err && err->hint)
		fprintf(stderr, WINRUN_PREFIX "%s\n" WINRUN_HINT "%s\n", err->msg, err->hint);
	else
		fprintf(stderr, WINRUN_PREFIX "%s\n", err ? err->msg : "unknown error");
	exit(WINRUN_EXIT_FAILURE);
}

static char *to_utf8(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	char *s = n > 0 ? malloc((size_t)n) : NULL;
	if (!s || WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) <= 0)
		fail("cannot convert an argument to UTF-8");
	return s;
}

static wchar_t *to_wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
	wchar_t *w = n > 0 ? malloc((size_t)n * sizeof(wchar_t)) : NULL;
	if (!w || MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n) <= 0)
		fail("cannot convert '%s' from UTF-8", s);
	return w;
}

/* A directory the runner was given (or is in), in the policy's spelling (/C:/dir). */
static char *policy_path(const char *what, const char *win)
{
	char *p = NULL;
	struct dsh_error *err = NULL;
	if (dsh_win_path_to_policy(win, &p, &err) < 0) {
		dsh_err_prefix(&err, "%s", what);
		fail_err(err);
	}
	return p;
}

/* The process environment as UTF-8 NAME=VALUE strings (the library never reads it itself). */
static char **environment(void)
{
	wchar_t *block = GetEnvironmentStringsW();
	char **env = NULL;
	if (!block)
		fail("GetEnvironmentStrings failed (error %lu)", GetLastError());
	for (const wchar_t *e = block; *e; e += wcslen(e) + 1)
		if (dsh_strv_push_take(&env, to_utf8(e)) < 0)
			fail("out of memory");
	FreeEnvironmentStringsW(block);
	return env;
}

/* ---- SIDs ---- */

static PSID sandbox_sid(void)
{
	/* S-1-9-R1-R2-R3-R4: a resource-manager authority SID no account holds, fresh per run. */
	SID_IDENTIFIER_AUTHORITY auth = { { 0, 0, 0, 0, 0, 9 } };
	DWORD r[4];
	if (!RtlGenRandom(r, sizeof(r)))
		fail("RtlGenRandom failed");
	PSID sid = NULL;
	if (!AllocateAndInitializeSid(&auth, 4, r[0], r[1], r[2], r[3], 0, 0, 0, 0, &sid))
		fail("AllocateAndInitializeSid failed (error %lu)", GetLastError());
	return sid;
}

static void *token_info(HANDLE tok, TOKEN_INFORMATION_CLASS cls)
{
	DWORD n = 0;
	GetTokenInformation(tok, cls, NULL, 0, &n);
	void *buf = n ? malloc(n) : NULL;
	if (!buf || !GetTokenInformation(tok, cls, buf, n, &n))
		fail("GetTokenInformation(%d) failed (error %lu)", (int)cls, GetLastError());
	return buf;
}

static PSID logon_sid(HANDLE tok)
{
	TOKEN_GROUPS *g = token_info(tok, TokenGroups);
	for (DWORD i = 0; i < g->GroupCount; i++)
		if ((g->Groups[i].Attributes & SE_GROUP_LOGON_ID) == SE_GROUP_LOGON_ID)
			return g->Groups[i].Sid; /* g is kept for the run */
	fail("the token has no logon SID");
}

/* ---- ACEs ---- */

static DWORD file_rights(const struct dsh_win_ace *a)
{
	DWORD m = 0;
	if (a->access & DSH_WIN_ACCESS_WRITE)
		m |= FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA | FILE_WRITE_ATTRIBUTES | FILE_DELETE_CHILD;
	if (a->access & DSH_WIN_ACCESS_DELETE)
		m |= DELETE;
	if (a->access & DSH_WIN_ACCESS_READ)
		m |= FILE_READ_DATA | FILE_READ_EA | FILE_READ_ATTRIBUTES | FILE_EXECUTE;
	/* An allow must also cover what every open asks for; a deny must never take it away, or
	   reading would break too. */
	if (a->type == DSH_WIN_ACE_ALLOW)
		m |= SYNCHRONIZE | READ_CONTROL | FILE_READ_ATTRIBUTES;
	return m;
}

static DWORD ace_add(const struct dsh_win_ace *a, PSID sid)
{
	wchar_t *path = to_wide(a->path);
	PACL old = NULL, acl = NULL;
	PSECURITY_DESCRIPTOR sd = NULL;
	DWORD e = GetNamedSecurityInfoW(path, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &old, NULL, &sd);
	if (e != ERROR_SUCCESS) {
		free(path);
		return e;
	}
	EXPLICIT_ACCESS_W ea;
	memset(&ea, 0, sizeof(ea));
	ea.grfAccessPermissions = file_rights(a);
	ea.grfAccessMode = a->type == DSH_WIN_ACE_ALLOW ? GRANT_ACCESS : DENY_ACCESS;
	ea.grfInheritance = SUB_CONTAINERS_AND_OBJECTS_INHERIT;
	ea.Trustee.TrusteeForm = TRUSTEE_IS_SID;
	ea.Trustee.TrusteeType = TRUSTEE_IS_UNKNOWN;
	ea.Trustee.ptstrName = (LPWSTR)sid;
	e = SetEntriesInAclW(1, &ea, old, &acl);
	if (e == ERROR_SUCCESS)
		e = SetNamedSecurityInfoW(path, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, acl, NULL);
	LocalFree(acl);
	LocalFree(sd);
	free(path);
	return e;
}

/* Remove every explicit ACE naming sid from path's DACL.  Returns 0 or the Windows error. */
static DWORD ace_remove(const char *p, PSID sid)
{
	wchar_t *path = to_wide(p);
	PACL old = NULL;
	PSECURITY_DESCRIPTOR sd = NULL;
	DWORD e = GetNamedSecurityInfoW(path, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &old, NULL, &sd);
	if (e == ERROR_SUCCESS && old) {
		ACL_SIZE_INFORMATION info;
		GetAclInformation(old, &info, sizeof(info), AclSizeInformation);
		DWORD size = info.AclBytesInUse + 64;
		PACL acl = malloc(size);
		if (!acl || !InitializeAcl(acl, size, ACL_REVISION)) {
			e = ERROR_NOT_ENOUGH_MEMORY;
		} else {
			for (DWORD i = 0; i < info.AceCount; i++) {
				ACE_HEADER *h;
				if (!GetAce(old, i, (void **)&h))
					continue;
				PSID ace_sid = NULL;
				if (h->AceType == ACCESS_ALLOWED_ACE_TYPE)
					ace_sid = &((ACCESS_ALLOWED_ACE *)h)->SidStart;
				else if (h->AceType == ACCESS_DENIED_ACE_TYPE)
					ace_sid = &((ACCESS_DENIED_ACE *)h)->SidStart;
				if (ace_sid && EqualSid(ace_sid, sid))
					continue;
				/* Inherited ACEs are recomputed by SetNamedSecurityInfo. */
				if (h->AceFlags & INHERITED_ACE)
					continue;
				AddAce(acl, ACL_REVISION, MAXDWORD, h, h->AceSize);
			}
			e = SetNamedSecurityInfoW(path, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, acl, NULL);
		}
		free(acl);
	}
	LocalFree(sd);
	free(path);
	return e;
}

/* ---- the command line ---- */

/* Quote one argument the way CommandLineToArgvW reads it back. */
static void quote_arg(wchar_t **buf, size_t *len, size_t *cap, const wchar_t *a)
{
	size_t need = *len + 2 * wcslen(a) + 4;
	if (need > *cap) {
		*cap = need * 2;
		*buf = realloc(*buf, *cap * sizeof(wchar_t));
		if (!*buf)
			fail("out of memory");
	}
	wchar_t *o = *buf + *len;
	if (*len)
		*o++ = L' ';
	bool plain = *a && !wcspbrk(a, L" \t\n\v\"");
	if (plain) {
		wcscpy(o, a);
		o += wcslen(a);
	} else {
		*o++ = L'"';
		for (const wchar_t *p = a;; p++) {
			size_t bs = 0;
			while (*p == L'\\')
				p++, bs++;
			if (!*p) {
				for (size_t i = 0; i < 2 * bs; i++)
					*o++ = L'\\';
				break;
			}
			if (*p == L'"') {
				for (size_t i = 0; i < 2 * bs + 1; i++)
					*o++ = L'\\';
			} else {
				for (size_t i = 0; i < bs; i++)
					*o++ = L'\\';
			}
			*o++ = *p;
		}
		*o++ = L'"';
	}
	*o = 0;
	*len = (size_t)(o - *buf);
}

static BOOL WINAPI ignore_ctrl(DWORD type)
{
	(void)type;
	return TRUE; /* the command gets the console event; the runner stays to remove the ACEs */
}

/* ---- the run ---- */

/* The options, up to "--".  Returns the index of the command's first word (argc: there is none). */
static int parse_options(int argc, wchar_t **wargv, struct dsh_config *c, bool *ret_dry_run)
{
	int i = 1;
	for (; i < argc; i++) {
		char *a = to_utf8(wargv[i]);
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "--dry-run") == 0) {
			*ret_dry_run = true;
			continue;
		}
		if (i + 1 >= argc)
			fail("option '%s' needs a value", a);
		char *v = to_utf8(wargv[++i]);
		if (strcmp(a, "--mode") == 0) {
			if (dsh_mode_from_string(v, &c->mode) < 0)
				fail("unknown mode '%s' (read-only, workspace-write, danger-full-access)", v);
		} else if (strcmp(a, "--workspace") == 0) {
			free(c->workspace);
			c->workspace = policy_path("workspace", v);
		} else if (strcmp(a, "--access") == 0) {
			/* As written: the policy parses, expands and resolves it (SPEC 1.2-1.4). */
			if (dsh_strv_push(&c->access, v) < 0)
				fail("out of memory");
		} else {
			fail("unknown option '%s'", a);
		}
	}
	return i;
}

/*
 * The policy and its plan, compiled as explain compiles them, for the runner's current directory
 * and environment; the policy's warnings are printed.
 */
static struct dsh_policy *compile_plan(const struct dsh_config *c, struct dsh_winacl_plan *ret_plan)
{
	wchar_t wcwd[32768];
	DWORD n = GetCurrentDirectoryW(32768, wcwd);
	if (n == 0 || n >= 32768)
		fail("GetCurrentDirectory failed (error %lu)", GetLastError());
	char *cwd = policy_path("the current directory", to_utf8(wcwd));
	/* %TEMP% is the Windows temporary directory: the policy's $TMPDIR root (SPEC 1.1). */
	wchar_t wtmp[MAX_PATH + 1];
	n = GetTempPathW(MAX_PATH + 1, wtmp);
	char *temp = n > 0 && n <= MAX_PATH ? to_utf8(wtmp) : NULL;
	char **host_env = environment(), **env = NULL;
	struct dsh_error *err = NULL;
	if (dsh_winacl_env_for_policy(host_env, temp, &env, &err) < 0)
		fail_err(err);

	struct dsh_policy *policy = NULL;
	if (dsh_winacl_plan_from_config(c, env, cwd, DSH_WINACL_WINDOWS_PATHS, &policy, ret_plan, &err) < 0)
		fail_err(err);
	for (char *const *w = dsh_policy_warnings(policy); *w; w++)
		fprintf(stderr, "dshbox-winrun: warning: %s\n", *w);
	return policy;
}

/* The command's words as the one string CreateProcess takes. */
static wchar_t *command_line(int argc, wchar_t **wargv, int first)
{
	wchar_t *cmdline = NULL;
	size_t len = 0, cap = 0;
	for (int k = first; k < argc; k++)
		quote_arg(&cmdline, &len, &cap, wargv[k]);
	return cmdline;
}

/* Closing the runner's handle (or the runner's end) kills the command and all it started. */
static HANDLE kill_on_close_job(void)
{
	HANDLE job = CreateJobObjectW(NULL, NULL);
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim;
	memset(&lim, 0, sizeof(lim));
	lim.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
	if (!job || !SetInformationJobObject(job, JobObjectExtendedLimitInformation, &lim, sizeof(lim)))
		fail("job object setup failed (error %lu)", GetLastError());
	return job;
}

/* Objects the command creates (its own threads, pipes) stay writable for it. */
static void set_default_dacl(HANDLE tok, PSID user, PSID sbx)
{
	EXPLICIT_ACCESS_W dacl_ea[2];
	memset(dacl_ea, 0, sizeof(dacl_ea));
	PSID who[2] = { user, sbx };
	for (int k = 0; k < 2; k++) {
		dacl_ea[k].grfAccessPermissions = GENERIC_ALL;
		dacl_ea[k].grfAccessMode = GRANT_ACCESS;
		dacl_ea[k].Trustee.TrusteeForm = TRUSTEE_IS_SID;
		dacl_ea[k].Trustee.ptstrName = (LPWSTR)who[k];
	}
	PACL dacl = NULL;
	TOKEN_DEFAULT_DACL tdd;
	if (SetEntriesInAclW(2, dacl_ea, NULL, &dacl) != ERROR_SUCCESS)
		fail("SetEntriesInAcl for the default DACL failed");
	tdd.DefaultDacl = dacl;
	if (!SetTokenInformation(tok, TokenDefaultDacl, &tdd, sizeof(tdd)))
		fail("SetTokenInformation(TokenDefaultDacl) failed (error %lu)", GetLastError());
}

/* The command's token: the runner's, without privileges, write-restricted to the plan's SIDs. */
static HANDLE restricted_token(HANDLE self, const struct dsh_winacl_plan *plan, PSID sbx)
{
	SID_AND_ATTRIBUTES restrict_sids[3];
	TOKEN_USER *user = token_info(self, TokenUser);
	for (size_t k = 0; k < plan->n_restricting; k++) {
		restrict_sids[k].Attributes = 0;
		switch (plan->restricting[k]) {
		case DSH_WIN_SID_SANDBOX:
			restrict_sids[k].Sid = sbx;
			break;
		case DSH_WIN_SID_LOGON:
			restrict_sids[k].Sid = logon_sid(self);
			break;
		case DSH_WIN_SID_USER:
			restrict_sids[k].Sid = user->User.Sid;
			break;
		}
	}
	HANDLE tok = NULL;
	if (!CreateRestrictedToken(self, DISABLE_MAX_PRIVILEGE | WRITE_RESTRICTED, 0, NULL, 0, NULL,
				   (DWORD)plan->n_restricting, restrict_sids, &tok))
		fail("CreateRestrictedToken failed (error %lu)", GetLastError());
	set_default_dacl(tok, user->User.Sid, sbx);
	return tok;
}

static void add_aces(const struct dsh_winacl_plan *plan, PSID sbx)
{
	for (size_t k = 0; k < plan->n_aces; k++) {
		DWORD e = ace_add(&plan->aces[k], sbx);
		if (e == ERROR_SUCCESS)
			continue;
		/* Take back what was added before saying why nothing ran. */
		for (size_t j = 0; j < k; j++)
			ace_remove(plan->aces[j].path, sbx);
		fail("add the ACE on '%s' (%s): error %lu", plan->aces[k].path, plan->aces[k].why, e);
	}
}

/* Every ACE naming the sandbox SID taken away again.  false: some stayed (each is named). */
static bool remove_aces(const struct dsh_winacl_plan *plan, PSID sbx)
{
	bool removed = true;
	for (size_t k = 0; sbx && k < plan->n_aces; k++) {
		DWORD e = ace_remove(plan->aces[k].path, sbx);
		if (e != ERROR_SUCCESS) {
			fprintf(stderr, WINRUN_PREFIX "remove the ACE on '%s': error %lu\n", plan->aces[k].path, e);
			removed = false;
		}
	}
	return removed;
}

/*
 * Start the command suspended (under tok, when there is one), put it in the job, then let it run
 * and wait for it.  FALSE: it did not start.  *ret_code: its exit status (WINRUN_EXIT_FAILURE when
 * it did not run); *ret_start_error: why it did not start or could not join the job, else 0.
 */
static BOOL run_in_job(HANDLE job, HANDLE tok, wchar_t *cmdline, DWORD *ret_code, DWORD *ret_start_error)
{
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	/* The command starts where the runner was started (SPEC 1.5: cwd defaults to the process's). */
	BOOL ok = tok ? CreateProcessAsUserW(tok, NULL, cmdline, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL,
					     &si, &pi)
		      : CreateProcessW(NULL, cmdline, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &si, &pi);
	DWORD code = WINRUN_EXIT_FAILURE;
	DWORD start_error = ok ? 0 : GetLastError();
	if (ok) {
		if (!AssignProcessToJobObject(job, pi.hProcess)) {
			start_error = GetLastError();
			TerminateProcess(pi.hProcess, WINRUN_EXIT_FAILURE);
		} else {
			ResumeThread(pi.hThread);
			WaitForSingleObject(pi.hProcess, INFINITE);
			GetExitCodeProcess(pi.hProcess, &code);
		}
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
	}
	*ret_code = code;
	*ret_start_error = start_error;
	return ok;
}

/* The entry point -municode asks for (wide arguments); declared for -Wmissing-prototypes. */
int wmain(int argc, wchar_t **wargv);
int wmain(int argc, wchar_t **wargv)
{
	struct dsh_config c;
	bool dry_run = false;
	dsh_config_init(&c);
	int first = parse_options(argc, wargv, &c, &dry_run);
	if (first >= argc && !dry_run)
		fail("no command given (dshbox-winrun [OPTIONS] -- CMD [ARG...])");

	struct dsh_winacl_plan plan;
	struct dsh_policy *policy = compile_plan(&c, &plan);
	if (dry_run) {
		char *text = dsh_winacl_plan_render(&plan);
		if (!text)
			fail("out of memory");
		fputs(text, stdout);
		fflush(stdout);
	}
	/* A dry run says so too: the exit status is the one the run would have had before starting. */
	struct dsh_error *err = NULL;
	if (dsh_winacl_plan_refusal(policy, &plan, &err) < 0)
		fail_err(err);
	if (dry_run)
		return 0;

	wchar_t *cmdline = command_line(argc, wargv, first);
	SetConsoleCtrlHandler(ignore_ctrl, TRUE);
	HANDLE job = kill_on_close_job();
	HANDLE self;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY, &self))
		fail("OpenProcessToken failed (error %lu)", GetLastError());
	HANDLE tok = NULL;
	PSID sbx = NULL;
	if (plan.restricted) {
		sbx = sandbox_sid();
		tok = restricted_token(self, &plan, sbx);
		add_aces(&plan, sbx);
	}

	DWORD code, start_error;
	BOOL ok = run_in_job(job, tok, cmdline, &code, &start_error);
	CloseHandle(job);
	bool cleanup_failed = !remove_aces(&plan, sbx);
	if (!ok || start_error) {
		/* As env(1): 127 not found, 126 found but not runnable. */
		if (start_error == ERROR_FILE_NOT_FOUND || start_error == ERROR_PATH_NOT_FOUND)
			return 127;
		fail("cannot start the command (error %lu)", start_error);
	}
	if (cleanup_failed)
		return WINRUN_EXIT_FAILURE;
	return (int)code;
}
