#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make deb: build the dshbox and libdshbox-dev packages with dpkg-buildpackage -us -uc -b, in a
# copy of the tree under BUILD/deb (dpkg-buildpackage writes its results into the parent directory,
# and debian/rules clean runs `make clean`, which would delete BUILD itself), then move the .deb,
# .changes and .buildinfo files into BUILD and run lintian on them when it is installed.
# Needs no network: the build dependencies come from the system (tools/install-deps.sh).
set -eu
if ! command -v dpkg-buildpackage >/dev/null 2>&1 || ! command -v dh >/dev/null 2>&1; then
	echo "make deb: needs dpkg-dev and debhelper (tools/install-deps.sh installs them)" >&2
	exit 1
fi
top=$(pwd)
build=${1:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
version=$(sed -n 's/^#define DSHBOX_VERSION "\(.*\)"$/\1/p' include/dshbox/version.h)
debversion=$(dpkg-parsechangelog -S Version)
if [ "$version" != "$debversion" ]; then
	echo "make deb: include/dshbox/version.h says $version, debian/changelog says $debversion" >&2
	exit 1
fi

stage="$build/deb"
src="$stage/dshbox-$version"
rm -rf "$stage"
mkdir -p "$src"
# The files of the checkout as they are now (tracked and new, not ignored); any tree without git:
# everything but the build directories.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard | xargs -0 sh -c 'for f; do if [ -e "$f" ] || [ -L "$f" ]; then printf "%s\0" "$f"; fi; done' sh |
		tar --null -T - -cf - | tar -xf - -C "$src"
else
	tar --exclude=./build --exclude=./build-san -cf - . | tar -xf - -C "$src"
fi

: "${DEB_BUILD_OPTIONS:=parallel=2}"
export DEB_BUILD_OPTIONS
(cd "$src" && dpkg-buildpackage -us -uc -b)

rm -f "$build"/*.deb "$build"/*.changes "$build"/*.buildinfo
mv "$stage"/*.deb "$stage"/*.changes "$stage"/*.buildinfo "$build"/
rm -rf "$stage"
ls -l "$build"/*.deb

if command -v lintian >/dev/null 2>&1; then
	echo "lintian $build/*.changes"
	lintian --fail-on error,warning "$build"/dshbox_"$version"_*.changes
else
	echo "make deb: lintian is not installed: the packages are not checked (tools/install-deps.sh)"
fi
