# bash completion for dshbox(1)                              -*- shell-script -*-
# SPDX-License-Identifier: GPL-2.0-or-later
# Installed as share/bash-completion/completions/dshbox; or: source tools/completions/dshbox.bash
# The options are those of cli/cli.h (policy options) and each cli/cmd_*.c.

# One candidate per line, so that file names with spaces stay whole.
_dshbox_words()
{
	mapfile -t COMPREPLY < <(compgen "$@")
}

_dshbox()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= op= dashdash=0 i w
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	local policy='--config --mode --workspace --access --access-file --network --backend --cwd --warnings=stderr --allow-degraded --allow-env --allow-unix-socket --allow-domain --deny-domain --help'
	# Options whose value is the next word: skipped when looking for the command and fs's operation.
	local takes_arg=' --config --mode --workspace --access --access-file --network --backend --cwd --allow-env --allow-unix-socket --allow-domain --deny-domain --report --report-fd --ask-fd --jobs --preserve-fd --offset --limit --old --new --row --expect-version --version-fd '

	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ -z $cmd ]]; then
			[[ $w == -* ]] || cmd=$w
			continue
		fi
		if [[ $w == -- ]]; then
			dashdash=$i
			break
		fi
		if [[ $takes_arg == *" $w "* ]]; then
			((i++))
			continue
		fi
		[[ $w != -* && -z $op ]] && op=$w
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			_dshbox_words -W '--help --version' -- "$cur"
		else
			_dshbox_words -W 'run check fs serve explain probe doctor bwrap' -- "$cur"
		fi
		return
	fi

	# run ... -- CMD ARG...: complete the command line as bash would.
	if ((dashdash)); then
		if declare -F _command_offset >/dev/null; then
			_command_offset $((dashdash + 1))
		elif ((COMP_CWORD == dashdash + 1)); then
			_dshbox_words -c -- "$cur"
		else
			compopt -o filenames 2>/dev/null
			_dshbox_words -f -- "$cur"
		fi
		return
	fi

	# "--warnings=" splits at '=' where COMP_WORDBREAKS holds it.
	if [[ $prev == = && ${COMP_WORDS[COMP_CWORD - 2]} == --warnings ]]; then
		_dshbox_words -W 'stderr' -- "$cur"
		return
	fi
	case $prev in
	--config | --access-file)
		compopt -o filenames 2>/dev/null
		_dshbox_words -f -- "$cur"
		return
		;;
	--report)
		compopt -o filenames 2>/dev/null
		_dshbox_words -f -W '-' -- "$cur"
		return
		;;
	--workspace | --cwd)
		compopt -o filenames 2>/dev/null
		_dshbox_words -d -- "$cur"
		return
		;;
	--mode)
		_dshbox_words -W 'read-only workspace-write danger-full-access' -- "$cur"
		return
		;;
	--network)
		_dshbox_words -W 'on off' -- "$cur"
		return
		;;
	--backend)
		_dshbox_words -W 'auto linux-ns landlock runner none seatbelt winacl' -- "$cur"
		return
		;;
	--access | --preserve-fd | --offset | --limit | --old | --new | --row | --expect-version | --version-fd)
		COMPREPLY=()
		return
		;;
	esac

	local opts files=
	case $cmd in
	run) opts="$policy --dry-run --timing --report --report-fd --ask-fd --preserve-fd --" ;;
	check) opts="$policy --read --write --json" files=-f ;;
	fs)
		opts="$policy --offset --limit --old --new --all --expect-version --version-fd"
		if [[ -z $op ]]; then
			[[ $cur == -* ]] || {
				_dshbox_words -W 'read write edit list' -- "$cur"
				return
			}
		elif [[ $op == list ]]; then
			files=-d
		else
			files=-f
		fi
		;;
	serve) opts="$policy --stdio --jobs" ;;
	explain) opts="$policy --json --profile --all-backends" ;;
	probe) opts='--json --help' ;;
	doctor) opts='--row --help' files=-f ;;
	*) return ;;
	esac
	if [[ $cur == -* || -z $files ]]; then
		_dshbox_words -W "$opts" -- "$cur"
	else
		compopt -o filenames 2>/dev/null
		_dshbox_words "$files" -- "$cur"
	fi
}
complete -F _dshbox dshbox
