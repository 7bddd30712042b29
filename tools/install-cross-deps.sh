#!/bin/sh
# Install what `make cross ARCH=...` and `make cross-test ARCH=...` need on Debian 12 (or newer):
# Debian's cross compiler, the target's -dev packages through multiarch (the libraries
# tools/install-deps.sh installs natively, and libmount for the integration suite), Criterion
# unpacked beside them (below), qemu-user (the seccomp generator runs under it) and qemu-system-arm
# (the unit suite runs in an aarch64 VM: tools/vmtest/arm64.sh).  Idempotent.
# Usage: tools/install-cross-deps.sh aarch64
set -eu
arch=${1:-}
case $arch in
aarch64) debarch=arm64 ;;
riscv64) debarch=riscv64 ;;
*) echo "usage: tools/install-cross-deps.sh aarch64|riscv64" >&2; exit 2 ;;
esac
if [ "$(id -u)" -eq 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	echo "tools/install-cross-deps.sh: needs root to run apt-get: run it as root, or install sudo" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The archive's Release file lists the architectures it carries.  Debian 12 builds riscv64 in
# debian-ports only, so its libseccomp-dev:riscv64 and friends do not exist there: say so and stop,
# rather than add an architecture apt then skips with a notice.
$SUDO apt-get update -qq
if ! grep -qs "^Architectures:.* $debarch\b" /var/lib/apt/lists/*_InRelease; then
	echo "tools/install-cross-deps.sh: no configured apt repository carries $debarch" \
		"(Debian 12 builds riscv64 only in debian-ports): no target libraries to link against" >&2
	exit 1
fi
dpkg --print-foreign-architectures | grep -qx "$debarch" || {
	$SUDO dpkg --add-architecture "$debarch"
	$SUDO apt-get update -qq
}
triplet=$arch-linux-gnu
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	"gcc-$triplet" "binutils-$triplet" "libc6-dev-$debarch-cross" pkg-config qemu-user qemu-system-arm \
	"libseccomp-dev:$debarch" "libcap-ng-dev:$debarch" "libnl-3-dev:$debarch" \
	"libnl-route-3-dev:$debarch" "libyaml-dev:$debarch" "libjansson-dev:$debarch" \
	"libidn2-dev:$debarch" "libunistring-dev:$debarch" "libevent-core-2.1-7:$debarch" \
	"libevent-extra-2.1-7:$debarch" \
	"libmount-dev:$debarch" "libffi8:$debarch" "libgit2-1.5:$debarch" >/dev/null
# Criterion is not co-installable: Debian 12's amd64 libnanomsg5 is a binNMU (+b1) the other
# architectures lack, Multi-Arch: same wants one version, so apt would remove the native Criterion
# (and every native test build with it).  Its target packages are unpacked into a directory of
# their own instead, which `make cross` links against (CROSS_LIBS in the Makefile); its other
# libraries (libffi8, libgit2-1.5) install through apt above.  libevent-dev is not Multi-Arch
# either (its event-config.h lies in /usr/include, one per architecture): apt would swap the native
# one out, and the native build would lose it.  It is unpacked there too, its pkg-config files
# pointed at where it lies; its shared libraries (Multi-Arch: same) install through apt above.
root=/opt/dshbox-cross/$debarch
if [ ! -e "$root/.complete-2" ]; then
	tmp=$(mktemp -d)
	chmod 755 "$tmp" # apt-get download fetches as _apt
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -qq "libcriterion3:$debarch" "libcriterion-dev:$debarch" \
		"libnanomsg5:$debarch" "libevent-dev:$debarch" >/dev/null)
	$SUDO rm -rf "$root"
	$SUDO mkdir -p "$root"
	for deb in "$tmp"/*.deb; do
		$SUDO dpkg-deb -x "$deb" "$root"
	done
	$SUDO sed -i "s|^prefix=/usr\$|prefix=$root/usr|" "$root/usr/lib/$triplet/pkgconfig/"libevent*.pc
	$SUDO touch "$root/.complete-2"
fi
echo "dshbox: cross dependencies for $arch ($debarch) installed (Criterion in $root)"
