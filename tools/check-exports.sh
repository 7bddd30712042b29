#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make lint: libdshbox.so exports the dsh_ prefix only (tools/libdshbox.map).  The version
# script's node names appear in the dynamic symbol table as absolute symbols of their own; they
# are the versions, not exports, and are the only other names allowed.
set -eu
so=${1:?usage: check-exports.sh LIBDSHBOX_SO}
map=$(dirname "$0")/libdshbox.map
nodes=$(sed -n 's/^\([A-Z][A-Z0-9_.]*\) {$/\1/p' "$map")
syms=$(nm -D --defined-only "$so" | awk '{ sub(/@.*/, "", $3); print $2, $3 }')
if [ -z "$syms" ]; then
	echo "check-exports: $so exports nothing (nm -D failed?)" >&2
	exit 1
fi
bad=$(printf '%s\n' "$syms" | while read -r type name; do
	case $name in dsh_*) continue ;; esac
	if [ "$type" = A ] && printf '%s\n' $nodes | grep -qx "$name"; then
		continue
	fi
	echo "$name"
done)
if [ -n "$bad" ]; then
	echo "check-exports: $so exports names outside dsh_:" $bad >&2
	exit 1
fi
echo "check-exports: $(printf '%s\n' "$syms" | grep -c ' dsh_') symbols, all dsh_*"
