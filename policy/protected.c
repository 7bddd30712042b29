/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "common/cleanup.h"
#include "policy/protected.h"

/*
 * In every writable root, directly beneath it.  A directory entry protects everything in it, made
 * before the run or not: an absent one stays absent (the broker keeps absent targets absent).
 */
const struct dsh_protected_name dsh_protected_names[] = {
	{ ".git/hooks", "git runs its hooks on the user's next commit, checkout or push", "SPEC 1.6; sandbox-runtime; Codex (.git)" },
	{ ".git/config", "git reads core.hooksPath, core.fsmonitor, filters and aliases from it", "SPEC 1.6; sandbox-runtime; Codex (.git)" },
	{ ".gitconfig", "git reads it as the user's global configuration where the root is $HOME", "SPEC 1.6; sandbox-runtime" },
	{ ".gitmodules", "git submodule commands clone and check out what it names", "SPEC 16; sandbox-runtime" },
	{ ".bashrc", "bash runs it when an interactive shell starts", "SPEC 1.6; sandbox-runtime" },
	{ ".bash_profile", "bash runs it at login", "SPEC 1.6; sandbox-runtime" },
	{ ".bash_login", "bash runs it at login", "SPEC 1.6" },
	{ ".bash_logout", "bash runs it when a login shell exits", "dshbox (the shells' start-up and exit files)" },
	{ ".profile", "sh, dash and bash run it at login", "SPEC 1.6; sandbox-runtime" },
	{ ".zshrc", "zsh runs it when an interactive shell starts", "SPEC 1.6; sandbox-runtime" },
	{ ".zprofile", "zsh runs it at login", "SPEC 1.6; sandbox-runtime" },
	{ ".zshenv", "zsh runs it whenever it starts", "SPEC 1.6" },
	{ ".zlogin", "zsh runs it at login", "dshbox (the shells' start-up and exit files)" },
	{ ".zlogout", "zsh runs it when a login shell exits", "dshbox (the shells' start-up and exit files)" },
	{ ".envrc", "direnv runs it when a shell enters the directory", "SPEC 16" },
	{ ".ripgreprc", "ripgrep reads options from it, --pre naming a program it runs", "SPEC 16; sandbox-runtime" },
	{ ".mcp.json", "agent hosts start the MCP servers it names", "SPEC 16; sandbox-runtime" },
	{ ".claude", "Claude Code's settings (hooks it runs), commands and agents", "SPEC 16; sandbox-runtime (.claude/commands, .claude/agents)" },
	{ ".codex", "Codex's configuration and the commands it allows", "SPEC 16; Codex" },
	{ ".agents", "agent hosts' skills and instructions", "SPEC 16; Codex" },
	{ ".cursor", "Cursor's rules, MCP servers and hooks", "SPEC 16" },
	{ ".gemini", "Gemini CLI's settings, MCP servers and commands", "SPEC 16" },
	{ ".vscode", "VS Code's tasks, launch configurations and settings that name programs", "SPEC 16; sandbox-runtime" },
	{ ".idea", "JetBrains IDEs' run configurations and tool settings", "SPEC 16; sandbox-runtime" },
	{ "cordis.patch.yml", "the dsh host's patch file, where its sandbox rules live", "SPEC 16" },
};

const size_t dsh_n_protected_names = ARRAY_SIZE(dsh_protected_names);

const struct dsh_protected_name *dsh_protected_name_find(const char *name)
{
	for (size_t i = 0; i < dsh_n_protected_names; i++)
		if (strcmp(dsh_protected_names[i].name, name) == 0)
			return &dsh_protected_names[i];
	return NULL;
}
