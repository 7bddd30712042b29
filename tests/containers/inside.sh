#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs inside a container of tests/containers/run.sh: the smoke set's dshbox commands, each one's
# exit status, stdout and stderr recorded under /ws/out.  It judges nothing: run.sh reads the
# records and the workspace from the host.
#
#   inside.sh DSHBOX
set -u
dshbox=$1
out=/ws/out
w=/ws/w

rec() {	# rec NAME CMD... : run CMD in the workspace, record rc, stdout, stderr
	name=$1
	shift
	(cd "$w" && "$@") > "$out/$name.out" 2> "$out/$name.err"
	echo $? > "$out/$name.rc"
}

# A process of the container's own, which a command in a fresh pid namespace cannot see.
(exec -a dshbox-container-marker sleep 600) &
marker=$!

rec probe "$dshbox" probe
rec dryrun "$dshbox" run --dry-run -- true
rec explain "$dshbox" explain
rec true "$dshbox" run -- true
rec create "$dshbox" run -- sh -c 'echo ok > f'
rec mkdir "$dshbox" run -- mkdir d
rec deny "$dshbox" run --access "-- $w/secret" -- cat "$w/secret/key"
rec procs "$dshbox" run -- sh -c 'cat /proc/[0-9]*/cmdline | tr "\0" " "'
rec linuxns "$dshbox" run --backend linux-ns -- true
kill "$marker"
