/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The well-known host daemon sockets (SPEC 3.11): candidates, existing or not. */
#include <errno.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/policy.h"

int dsh_host_sockets(char *const *envp, char ***ret, struct dsh_error **err)
{
	static const char *const fixed[] = {
		"/var/run/docker.sock", "/run/docker.sock", "/run/podman", "/run/containerd/containerd.sock",
	};
	static const char *const runtime[] = {
		"bus", "docker.sock", "podman", "gnupg", "keyring", "ssh-agent.socket", "openssh_agent", "gcr/ssh",
	};
	_cleanup_strv_ char **v = NULL;
	const char *xdg = dsh_env_get(envp, "XDG_RUNTIME_DIR");
	const char *ssh = dsh_env_get(envp, "SSH_AUTH_SOCK");
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		if (dsh_strv_push(&v, fixed[i]) < 0)
			goto oom;
	if (xdg && xdg[0] == '/')
		for (size_t i = 0; i < ARRAY_SIZE(runtime); i++)
			if (dsh_strv_pushf(&v, "%s/%s", xdg, runtime[i]) < 0)
				goto oom;
	if (ssh && ssh[0] == '/' && dsh_strv_push(&v, ssh) < 0)
		goto oom;
	*ret = TAKE_PTR(v);
	return 0;
oom:
	return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
}
