/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make check-install: a program outside the tree, built only from what `make install` put under
 * DESTDIR (the headers, libdshbox.pc and either libdshbox.a or libdshbox.so), that asks the library
 * it runs with for its version, loads a policy and asks for verdicts through the public API, writes
 * through the file fence (once where the policy allows it, once where a rule refuses) and makes
 * the run options a host would run a command with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dshbox/dshbox.h>
#include <dshbox/fence.h>

extern char **environ;

/* The configuration is opaque: a host fills it from YAML, through setters, or both. */
static int fail(const char *what, struct dsh_error *err)
{
	fprintf(stderr, "check-install: %s: %s\n", what, err ? err->msg : "out of memory");
	dsh_error_free(err);
	return 1;
}

static int expect(const struct dsh_policy *p, enum dsh_op op, const char *path, int allow)
{
	struct dsh_verdict v;
	if (dsh_policy_verdict(p, op, path, &v) < 0) {
		fprintf(stderr, "check-install: verdict for %s failed\n", path);
		return 1;
	}
	char *why = dsh_verdict_explain(&v);
	printf("  %s %s %s (%s)\n", v.allow ? "allow" : "deny", op == DSH_OP_READ ? "read" : "write",
	       path, why ? why : "?");
	free(why);
	return v.allow != allow;
}

/* A write through the fence; allow says whether the policy should let it happen. */
static int expect_write(const struct dsh_policy *p, const char *path, int allow)
{
	static const char text[] = "written through the fence\n";
	struct dsh_fence_write_result w;
	struct dsh_error *err = NULL;
	int bad;

	if (dsh_fence_write(p, path, text, strlen(text), &w, &err) == 0) {
		printf("  fence wrote %zu bytes to %s (version %s)\n", w.bytes, w.path, w.version);
		bad = !allow;
	} else {
		printf("  fence refused %s: %s (%s)\n", path, err->msg, dsh_err_kind_to_string(err->kind));
		bad = allow || err->kind != DSH_ERR_DENIED;
	}
	dsh_fence_write_result_clear(&w);
	dsh_error_free(err);
	return bad;
}

int main(void)
{
	static const char yaml[] = "mode: read-only\naccess:\n  - \"-- /etc/shadow\"\n";
	char cwd[4096], ws[4200], note[4300], secret[4300];
	struct dsh_config *c = dsh_config_new();
	struct dsh_policy *p = NULL;
	struct dsh_run_options *o = NULL;
	struct dsh_error *err = NULL;

	if (!getcwd(cwd, sizeof(cwd)))
		return 1;
	/* Linked dynamically, the library answering is the staged one: it must be this release. */
	if (strcmp(dsh_version(), DSHBOX_VERSION) != 0 || dsh_abi() != DSHBOX_ABI) {
		fprintf(stderr, "check-install: built against libdshbox %s (ABI %d), running %s (ABI %d)\n",
			DSHBOX_VERSION, DSHBOX_ABI, dsh_version(), dsh_abi());
		return 1;
	}

	if (!c || dsh_config_load_string(c, yaml, strlen(yaml), "check-install.yml", &err) < 0 ||
	    dsh_policy_new(c, environ, cwd, &p, &err) < 0)
		return fail("cannot load the policy", err);
	printf("libdshbox %s (ABI %d), mode %s:\n", dsh_version(), dsh_abi(),
	       dsh_mode_to_string(dsh_config_mode(c)));
	int bad = expect(p, DSH_OP_READ, "/etc/hostname", 1) + expect(p, DSH_OP_READ, "/etc/shadow", 0) +
		  expect(p, DSH_OP_WRITE, "/etc/hostname", 0);
	dsh_policy_free(p);
	dsh_config_free(c);

	/* The fence: a scratch workspace, writable but for the one name a rule hides. */
	snprintf(ws, sizeof(ws), "%s/fence.XXXXXX", cwd);
	if (!mkdtemp(ws)) {
		perror("check-install: mkdtemp");
		return 1;
	}
	snprintf(note, sizeof(note), "%s/note.txt", ws);
	snprintf(secret, sizeof(secret), "%s/secret", ws);
	c = dsh_config_new();
	if (!c || dsh_config_set_mode(c, DSH_MODE_WORKSPACE_WRITE, &err) < 0 ||
	    dsh_config_set_workspace(c, ws, &err) < 0 || dsh_config_add_access(c, "-- secret", &err) < 0 ||
	    dsh_config_set_network(c, false, &err) < 0 || dsh_policy_new(c, environ, ws, &p, &err) < 0)
		return fail("cannot set up the policy", err);
	printf("mode %s, workspace %s:\n", dsh_mode_to_string(dsh_policy_mode(p)),
	       dsh_policy_workspace(p));
	bad += expect_write(p, note, 1) + expect_write(p, secret, 0);

	/* The run options a host hands to dsh_run_prepare(), and the environment its command gets. */
	if (dsh_run_options_new(c, environ, &o, &err) < 0)
		return fail("cannot make the run options", err);
	if (!dsh_run_options_command_env(o)) {
		fprintf(stderr, "check-install: the run options have no command environment\n");
		bad++;
	}
	dsh_run_options_free(o);
	dsh_policy_free(p);
	dsh_config_free(c);
	if (access(secret, F_OK) == 0) {
		fprintf(stderr, "check-install: the refused write left %s\n", secret);
		bad++;
	}
	unlink(note);
	rmdir(ws);
	return bad ? 1 : 0;
}
