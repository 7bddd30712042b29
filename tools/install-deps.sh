#!/bin/sh
# Install what dshbox needs to build, test, benchmark and package on Debian 12 (or newer).
# Runs apt-get as root: directly when run as root, through sudo otherwise.
set -eu
if [ "$(id -u)" -eq 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	echo "tools/install-deps.sh: needs root to run apt-get: run it as root, or install sudo" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# build:      the compiler, pkg-config and the libraries libdshbox links (SPEC 7), git for .ci/run;
#             libevent: the network service's event loop, relays and DNS (SPEC 12.2)
# test:       Criterion; libmount (the integration suite reads mount tables with it: dshbox and
#             libdshbox do not link it); util-linux (setpriv), iproute2 and procps, which the suites
#             run; strace and gdb, which run inside `dshbox run` (debuggers work there: SPEC 3.7);
#             uidmap (newuidmap: the root tests run unprivileged as root of a subordinate-id namespace)
#             dnsmasq-base: the DNS server of the world outside a filtered run (tests/lib/net_world.sh)
# compare:    bubblewrap, hyperfine, valgrind, cppcheck (make bench, make lint)
# windows:    the mingw-w64 cross compiler (make windows)
# fuzz:       clang and its runtime libraries (libFuzzer, ASan, UBSan: make fuzz, tests/fuzz)
# vmtest:     qemu-system-x86, busybox-static, cpio, xz-utils and zstd (make vmtest boots Debian's
#             kernels with them: tools/vmtest)
# man:        man-db, so that `man ./man/dshbox.1` works
# workloads:  python3-venv (a virtual environment built inside dshbox run, tests/integration)
# srt:        nodejs, npm, socat, ripgrep and curl: Anthropic's sandbox-runtime through dshbox bwrap
#             (tests/srt/run.sh); npm only where no nodejs of another origin already brings it
# package:    dpkg-dev (dpkg-buildpackage), debhelper and dh-apparmor (debian/rules), apparmor
#             (apparmor_parser: make check-apparmor, and debian/rules decides on the profile with
#             it), lintian (make deb checks the packages)
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	build-essential pkg-config ca-certificates git \
	libmount-dev libseccomp-dev libcap-ng-dev libnl-3-dev libnl-route-3-dev \
	libyaml-dev libjansson-dev libidn2-dev libunistring-dev libevent-dev libcriterion-dev \
	util-linux uidmap iproute2 procps strace gdb dnsmasq-base \
	bubblewrap hyperfine valgrind cppcheck gcc-mingw-w64-x86-64 clang libclang-rt-dev \
	qemu-system-x86 busybox-static cpio xz-utils zstd \
	man-db \
	python3-venv nodejs socat ripgrep curl \
	dpkg-dev debhelper dh-apparmor apparmor lintian >/dev/null
command -v npm >/dev/null 2>&1 ||
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
echo "dshbox: dependencies installed"
