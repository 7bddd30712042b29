#!/bin/sh
# fetch-kernel.sh SERIES DIR: the newest Debian amd64 kernel of SERIES (5.10, 6.1, 6.12, 7.x),
# unpacked into DIR/SERIES (vmlinuz, config, modules), never installed: apt runs on a private
# state and cache directory under DIR with only the suites that carry that series.
# A second run is offline: an unpacked kernel is reused unless VMTEST_REFRESH=1.
# Prints the unpacked directory on stdout.  Exit 3 (and one 'fetch-kernel: unreachable: …' line on
# stderr) when no Debian mirror answers: the caller reports the row as skipped, never as passed.
set -eu
series=$1
dir=$2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
out="$dir/$series"

if [ -f "$out/.done" ] && [ "${VMTEST_REFRESH:-0}" != 1 ]; then
	echo "$out"
	exit 0
fi

D=http://deb.debian.org/debian
S=http://deb.debian.org/debian-security
# Which suites carry which series (deb.debian.org, checked 2026-12-03): bullseye's security suite
# is gone (LTS ended), bookworm and trixie have theirs; 7.x is in sid or experimental.
case $series in
5.10) suites="$D bullseye main|$D bullseye-updates main" ;;
6.1) suites="$D bookworm main|$S bookworm-security main" ;;
6.12) suites="$D trixie main|$S trixie-security main|$D bookworm-backports main" ;;
7.x) suites="$D sid main|$D experimental main" ;;
*) echo "fetch-kernel: unknown series '$series' (5.10, 6.1, 6.12, 7.x, or a bzImage path)" >&2; exit 2 ;;
esac
re=$(printf "%s" "$series" | sed 's/\./\\./g; s/\\\.x$/\\.[0-9]+/')

apt="$dir/apt-$series"
# No directory here may end in .d: the Makefile includes every build/**/*.d as a dependency file.
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/etc"
: > "$apt/status"
printf '%s\n' "$suites" | tr '|' '\n' | sed 's/^/deb [arch=amd64 signed-by=\/usr\/share\/keyrings\/debian-archive-keyring.gpg] /' \
	> "$apt/sources.list"
set -- -o Dir::Etc="$apt/etc" -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/etc" \
	-o Dir::Etc::Parts="$apt/etc" -o Dir::Etc::PreferencesParts="$apt/etc" -o Dir::Etc::TrustedParts="$apt/etc" \
	-o Dir::State="$apt" -o Dir::State::Lists="$apt/lists" -o Dir::State::status="$apt/status" \
	-o Dir::Cache="$apt" -o Dir::Cache::Archives="$apt/archives" -o APT::Architecture=amd64 \
	-o APT::Architectures=amd64 -o Acquire::Languages=none -o Debug::NoLocking=1 -o APT::Sandbox::User=root
# A bounded wait per mirror: an unreachable network must end this in seconds, not minutes.
set -- "$@" -o Acquire::http::Timeout=20 -o Acquire::Retries=1
# apt-get update exits 0 when an index fails to download (it keeps the old one): read its messages.
log="$apt/update.log"
update() {
	apt-get "$@" -q update > "$log" 2>&1 && ! grep -Eq '^(W|E|Err):? .*(Failed to fetch|does not have a Release file|Could not|Unable to|No Hash entry)|^Err:' "$log"
}
unreachable() {
	grep -Eq 'Could not resolve|Temporary failure resolving|Could not connect|Connection failed|Connection timed out|Network is unreachable|No route to host|Failed to fetch.*Timeout' "$log"
}
echo "fetch-kernel: apt-get update ($series: $(printf '%s' "$suites" | tr '|' ',' | sed "s#$D ##g; s#$S ##g"))" >&2
if ! update "$@"; then
	# A release past its support moves from deb.debian.org to archive.debian.org (bullseye's turn
	# comes when its LTS ends); the archive's Release files are past their Valid-Until on purpose.
	sed 's#http://deb\.debian\.org/#http://archive.debian.org/#' "$apt/sources.list" > "$apt/sources.list.tmp"
	mv "$apt/sources.list.tmp" "$apt/sources.list"
	echo "fetch-kernel: deb.debian.org failed ($(grep -E '^(W|E|Err)' "$log" | head -n 1)); trying archive.debian.org" >&2
	set -- "$@" -o Acquire::Check-Valid-Until=false
	if ! update "$@"; then
		if unreachable; then
			echo "fetch-kernel: unreachable: neither deb.debian.org nor archive.debian.org answers ($(grep -E '^(W|E|Err)' "$log" | head -n 1))" >&2
			exit 3
		fi
		echo "fetch-kernel: apt-get update failed on both mirrors:" >&2
		grep -E '^(W|E|Err)' "$log" >&2 || cat "$log" >&2
		exit 1
	fi
fi
# The image package: '-unsigned' where it exists (bullseye to trixie), else the signed one; since
# 2026 sid splits it into linux-image (a shell), linux-binary (vmlinuz) and linux-modules, all
# fetched.  Release candidates (experimental's ~rc) only with VMTEST_RC=1.
pkg=
for p in $(apt-cache "$@" pkgnames linux-image- | grep -E "^linux-image-${re}[.+-][^ ]*-amd64(-unsigned)?\$" |
	grep -Ev -- '-(rt|cloud)-amd64' | sort -V -r); do
	v=$(apt-cache "$@" show "$p" | sed -n 's/^Version: //p' | sort -V | tail -n 1)
	case $v in *~rc*) [ "${VMTEST_RC:-0}" = 1 ] || continue ;; esac
	pkg=$p
	break
done
if [ -z "$pkg" ]; then
	echo "fetch-kernel: no linux-image-$series*-amd64 in those suites" >&2
	exit 1
fi
ver=$(apt-cache "$@" show "$pkg" | sed -n 's/^Version: //p' | sort -V | tail -n 1)
parts=$(apt-cache "$@" show "$pkg=$ver" | sed -n 's/^Depends: //p' | tr ',' '\n' |
	sed -n 's/^ *\(linux-\(binary\|modules\)-[^ ]*\).*/\1/p')
echo "fetch-kernel: $pkg $ver${parts:+ (with $(echo $parts))}" >&2
# shellcheck disable=SC2046 # one word per package
if ! (cd "$apt/archives" && rm -f ./*.deb && apt-get "$@" -q download "$pkg=$ver" $(for q in $parts; do echo "$q=$ver"; done) > "$log" 2>&1); then
	if unreachable; then
		echo "fetch-kernel: unreachable: the download of $pkg failed ($(grep -E '^(W|E|Err)' "$log" | head -n 1))" >&2
		exit 3
	fi
	cat "$log" >&2
	exit 1
fi
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
for deb in "$apt"/archives/*.deb; do dpkg-deb -x "$deb" "$out.tmp"; done
rm -f "$apt"/archives/*.deb
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$pkg" > "$out/.done"
echo "$out"
