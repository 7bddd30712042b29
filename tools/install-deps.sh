#!/bin/sh
# Install what dshbox needs to build, test and benchmark on Debian 12 (or newer).
# Runs apt-get as root, through sudo when not root.
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
	build-essential pkg-config ca-certificates git \
	libmount-dev libseccomp-dev libcap-ng-dev libnl-3-dev libnl-route-3-dev \
	libyaml-dev libjansson-dev libcriterion-dev \
	util-linux iproute2 procps \
	bubblewrap hyperfine valgrind cppcheck gcc-mingw-w64-x86-64 >/dev/null
echo "dshbox: dependencies installed"
