/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make check-install: a program outside the tree, built only from what `make install` put under
 * DESTDIR (the headers, libdshbox.pc and either libdshbox.a or libdshbox.so), that asks the library
 * it runs with for its version, loads a policy and asks for verdicts through the public API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dshbox/dshbox.h>

extern char **environ;

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

int main(void)
{
	static const char yaml[] = "mode: read-only\naccess:\n  - \"-- /etc/shadow\"\n";
	struct dsh_config c;
	struct dsh_policy *p = NULL;
	struct dsh_error *err = NULL;
	char cwd[4096];

	if (!getcwd(cwd, sizeof(cwd)))
		return 1;
	/* Linked dynamically, the library answering is the staged one: it must be this release. */
	if (strcmp(dsh_version(), DSHBOX_VERSION) != 0 || dsh_abi() != DSHBOX_ABI) {
		fprintf(stderr, "check-install: built against libdshbox %s (ABI %d), running %s (ABI %d)\n",
			DSHBOX_VERSION, DSHBOX_ABI, dsh_version(), dsh_abi());
		return 1;
	}
	dsh_config_init(&c);
	if (dsh_config_load_string(&c, yaml, strlen(yaml), "check-install.yml", &err) < 0 ||
	    dsh_policy_new(&c, environ, cwd, &p, &err) < 0) {
		fprintf(stderr, "check-install: cannot load the policy: %s\n", err ? err->msg : "?");
		dsh_error_free(err);
		return 1;
	}
	printf("libdshbox %s (ABI %d), mode %s:\n", dsh_version(), dsh_abi(), dsh_mode_to_string(c.mode));
	int bad = expect(p, DSH_OP_READ, "/etc/hostname", 1) + expect(p, DSH_OP_READ, "/etc/shadow", 0) +
		  expect(p, DSH_OP_WRITE, "/etc/hostname", 0);
	dsh_policy_free(p);
	dsh_config_clear(&c);
	return bad ? 1 : 0;
}
