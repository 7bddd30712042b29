#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Parse the AppArmor profile the way the kernel loader would (apparmor_parser -QT: parse and
# compile, load nothing, no cache), when a parser is installed.
#
# "userns," and abi/4.0 exist from AppArmor 4.0 on (Ubuntu 24.04, Debian 13).  An older parser
# (Debian 12 has 3.0.8) rejects them, so there the rest of the profile is parsed without those two
# lines and the check says so: it cannot prove the userns rule, only everything around it.
# APPARMOR_PARSER=path and APPARMOR_BASE=dir (its abi/ and tunables/; default /etc/apparmor.d) run
# another parser, e.g. one built from AppArmor's sources (docs/packaging.md).
set -eu
profile=${1:-tools/apparmor/dshbox}
parser=${APPARMOR_PARSER:-$(command -v apparmor_parser || true)}
[ -n "$parser" ] || parser=$(ls /sbin/apparmor_parser /usr/sbin/apparmor_parser 2>/dev/null | head -n1 || true)
base=${APPARMOR_BASE:+-b $APPARMOR_BASE -I $APPARMOR_BASE}
if [ -z "$parser" ]; then
	echo "check-apparmor: skipped: apparmor_parser is not installed (apt-get install apparmor)"
	exit 0
fi
version=$("$parser" --version 2>/dev/null | sed -n '1s/.*version \([0-9][0-9.]*\).*/\1/p')
# -QT writes "Cache read/write disabled" on stderr where the kernel has no AppArmor: not ours.
if out=$("$parser" $base -QT "$profile" 2>&1); then
	echo "check-apparmor: $profile parses (apparmor_parser $version)"
	exit 0
fi
case $version in
[0-3].*)
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	sed '/^abi <abi\/4\.0>,$/d;/^[[:space:]]*userns,$/d' "$profile" >"$tmp"
	if "$parser" $base -QT "$tmp" >/dev/null 2>&1; then
		echo "check-apparmor: apparmor_parser $version predates userns rules (AppArmor 4.0):" \
			"$profile parses without its abi/4.0 and userns lines"
		exit 0
	fi
	;;
esac
printf '%s\n' "$out" | grep -v 'Cache read/write disabled' >&2 || true
echo "check-apparmor: $profile does not parse (apparmor_parser $version)" >&2
exit 1
