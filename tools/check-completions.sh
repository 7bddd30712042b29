#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The completions must know every command of cli/main.c and every long option of the getopt_long
# tables in cli/ (the policy options of cli/cli.h included): a new option that the completions miss
# fails here, not in a user's shell.  Also checks both files' syntax (zsh only where installed).
set -eu
bash_file=tools/completions/dshbox.bash
zsh_file=tools/completions/_dshbox
fail=0
commands=$(sed -n '/commands\[\] = {/,/^};/p' cli/main.c | grep -oE '\{ "[a-z]+"' | sed 's/{ "//;s/"//')
options=$(grep -hoE '\{ "[a-z-]+", (no|required|optional)_argument' cli/*.c cli/cli.h |
	sed -E 's/\{ "([a-z-]+)".*/\1/' | sort -u)
[ -n "$commands" ] && [ -n "$options" ] || { echo "check-completions: found no commands or options in cli/" >&2; exit 1; }
for f in "$bash_file" "$zsh_file"; do
	for c in $commands; do
		grep -qE "(^|[^a-z-])$c([^a-z-]|$)" "$f" || { echo "check-completions: $f lacks the command '$c'" >&2; fail=1; }
	done
	for o in $options; do
		grep -qE -- "--$o([^a-z-]|$)" "$f" || { echo "check-completions: $f lacks the option '--$o'" >&2; fail=1; }
	done
done
bash -n "$bash_file" || fail=1
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$zsh_file" || fail=1
fi
[ "$fail" -eq 0 ] && echo "check-completions: $(echo $commands | wc -w) commands and $(echo $options | wc -w) options in both files"
exit "$fail"
