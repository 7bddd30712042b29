#!/bin/sh
# initramfs.sh KDIR OUT: a tiny initramfs (static busybox, the 9p and virtio modules of the kernel
# unpacked in KDIR, if it has any, and tools/vmtest/init) that mounts the host's root over
# virtio-9p and switches to it.  Modules are found through their own 'depends=' field (the Debian
# package ships no modules.dep) and decompressed here, so busybox's insmod loads them in order.
set -eu
kdir=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
BUSYBOX=${BUSYBOX:-/bin/busybox}
# It runs before any library is there: it must be static.
if ! "$BUSYBOX" --list 2>/dev/null | grep -qx switch_root || ldd "$BUSYBOX" >/dev/null 2>&1; then
	echo "initramfs: $BUSYBOX is not a static busybox (apt-get install busybox-static)" >&2
	exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/vmtest-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/newroot" "$root/modules"
cp "$BUSYBOX" "$root/bin/busybox"
cp "$here/init" "$root/init"
chmod 755 "$root/init"

# The modules, dependencies first.  A kernel with 9p and virtio built in (a developer's bzImage)
# needs none: then KDIR has no lib/modules and the list stays empty.
mdir=$(find "$kdir/lib/modules" "$kdir/usr/lib/modules" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n 1)
: > "$root/modules/order"
if [ -n "$mdir" ]; then
	find "$mdir" -name '*.ko*' > "$root/all"
	path_of() { grep -E "/$(printf '%s' "$1" | sed 's/[-_]/[-_]/g')\.ko(\.xz|\.zst|\.gz)?\$" "$root/all" | head -n 1; }
	unpack() {
		case $1 in
		*.xz) xz -dc "$1" ;;
		*.zst) zstd -qdc "$1" ;;
		*.gz) gzip -dc "$1" ;;
		*) cat "$1" ;;
		esac
	}
	add() {
		grep -qx "$1" "$root/modules/order" && return 0
		p=$(path_of "$1")
		[ -n "$p" ] || return 0 # built in
		unpack "$p" > "$root/modules/$1.ko"
		for d in $(tr '\0' '\n' < "$root/modules/$1.ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
			add "$d"
		done
		echo "$1" >> "$root/modules/order"
	}
	for m in virtio_pci 9pnet_virtio 9p; do add "$m"; done
	rm -f "$root/all"
fi
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
