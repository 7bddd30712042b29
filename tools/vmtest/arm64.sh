#!/bin/sh
# arm64.sh BUILD [CRITERION-ARGS...]: run BUILD/tests/unit.run (an aarch64 build: make cross
# ARCH=aarch64) in a full-system aarch64 VM: qemu-system-aarch64 -M virt -cpu max under TCG, with
# Debian 12's arm64 kernel and an initramfs of a static arm64 busybox and tools/vmtest/arm64-init.
# qemu-user is not used: on this host's kernel its 7.2 spins forever in an aarch64 program that
# starts a thread, and Criterion's runner starts one (docs/HACKING.md).
# The host's root is shared read-only over virtio-9p; the guest binds its /usr (the arm64 libc and
# libraries, multiarch), /opt (Criterion) and the tree at their own paths.  The kernel and busybox
# packages are downloaded with apt-get (the arm64 architecture is added by install-cross-deps.sh),
# unpacked, never installed, and kept in BUILD/vm (ARM64VM_REFRESH=1 fetches again).
# Exit: the suite's status; 3 when no Debian mirror answered (the caller reports a skip, never a
# pass); 1 when the VM gave no result.  Knobs: ARM64VM_TIMEOUT (s), ARM64VM_SMP (CPUs, 2).
set -eu
build=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
vdir=$build/vm
timeout_s=${ARM64VM_TIMEOUT:-3600}
for t in qemu-system-aarch64 cpio gzip apt-get dpkg-deb; do
	command -v "$t" >/dev/null 2>&1 || { echo "arm64vm: $t is missing (tools/install-cross-deps.sh aarch64)" >&2; exit 2; }
done
[ -x "$build/tests/unit.run" ] || { echo "arm64vm: no $build/tests/unit.run (make cross ARCH=aarch64)" >&2; exit 2; }

# The kernel: the newest Debian 12 arm64 build of ARM64VM_SERIES (6.12 by default: Landlock ABI 6,
# as the unit suite expects; 6.1 lacks the truncate right), its -unsigned package (the same image
# without the shim's signature: nothing here boots through UEFI).
series=${ARM64VM_SERIES:-6.12}
if [ ! -f "$vdir/.done" ] || [ "${ARM64VM_REFRESH:-0}" = 1 ] || [ "$(cat "$vdir/.done")" != "$series" ]; then
	re=$(printf '%s' "$series" | sed 's/\./\\./g')
	kpkg=$(apt-cache pkgnames "linux-image-$series" 2>/dev/null | grep -E "^linux-image-${re}[.+-][^ ]*-arm64-unsigned\$" |
		grep -Ev -- '-(rt|cloud)-arm64' | sort -V | tail -n 1)
	[ -n "$kpkg" ] || { echo "arm64vm: apt knows no linux-image-$series*-arm64-unsigned (tools/install-cross-deps.sh aarch64 adds arm64; apt-get update)" >&2; exit 2; }
	rm -rf "$vdir"
	mkdir -p "$vdir/debs"
	chmod 755 "$vdir/debs" # apt-get download fetches as _apt
	echo "arm64vm: downloading $kpkg and busybox-static (arm64)" >&2
	if ! (cd "$vdir/debs" && apt-get download -q "$kpkg:arm64" busybox-static:arm64) > "$vdir/fetch.log" 2>&1; then
		if grep -Eq 'Could not resolve|Temporary failure resolving|Could not connect|Connection failed|timed out|unreachable' "$vdir/fetch.log"; then
			echo "arm64vm: unreachable: $(grep -E '^(E|Err|W)' "$vdir/fetch.log" | head -n 1)" >&2
			exit 3
		fi
		cat "$vdir/fetch.log" >&2
		exit 1
	fi
	mkdir -p "$vdir/kernel" "$vdir/busybox"
	dpkg-deb -x "$vdir"/debs/linux-image-*.deb "$vdir/kernel"
	dpkg-deb -x "$vdir"/debs/busybox-static_*.deb "$vdir/busybox"
	rm -rf "$vdir/busybox/usr" # its initramfs-tools hooks: nothing here uses them
	rm -rf "$vdir/debs"
	echo "$series" > "$vdir/.done"
fi
kimg=$(find "$vdir/kernel/boot" -name 'vmlinuz-*' -type f | head -n 1)

# The initramfs: initramfs.sh gathers the 9p and virtio modules (and puts the host's busybox and
# the x86 init in, unused); a second archive appended to it replaces /init and /bin/busybox with
# the arm64 ones and adds the suite's command line: the kernel unpacks both, the later winning.
"$here/initramfs.sh" "$vdir/kernel" "$vdir/initrd.gz"
ov=$(mktemp -d "${TMPDIR:-/tmp}/arm64vm.XXXXXX")
trap 'rm -rf "$ov"' EXIT
mkdir -p "$ov/bin" "$ov/usr"
cp "$vdir/busybox/bin/busybox" "$ov/bin/busybox"
cp "$here/arm64-init" "$ov/init"
chmod 755 "$ov/init"
ln -s usr/lib "$ov/lib" # merged /usr: the interpreter's path /lib/ld-linux-aarch64.so.1
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
	echo "top=$(q "$top") build=$(q "$build")"
	printf 'unit_run() { env DSHBOX_TEST_NO_SKIP=%s %s' "$(q "${DSHBOX_TEST_NO_SKIP:-}")" "$(q "$build/tests/unit.run")"
	for a in "$@"; do printf ' %s' "$(q "$a")"; done
	echo; echo '}'
} > "$ov/unit.conf"
(cd "$ov" && find . | cpio -o -H newc --quiet | gzip -1) >> "$vdir/initrd.gz"

log=$vdir/console.log
smp=${ARM64VM_SMP:-2}
echo "arm64vm: $(basename "$kimg") under qemu-system-aarch64 -M virt -cpu max (TCG, $smp CPUs), at most ${timeout_s}s; console: $log" >&2
t0=$(date +%s)
# pauth-impdef: the CPU's pointer authentication by QEMU's own cheap hash instead of QARMA, which
# costs TCG most of its time; the guest cannot tell.
timeout --foreground -k 10 "$timeout_s" qemu-system-aarch64 -M virt -accel tcg,thread=multi \
	-cpu max,pauth-impdef=on -smp "$smp" -m 2G -nographic -no-reboot -nodefaults -serial stdio \
	-kernel "$kimg" -initrd "$vdir/initrd.gz" -append "console=ttyAMA0 panic=-1 loglevel=4" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap \
	< /dev/null 2>&1 | tee "$log" | tr -d '\r' | grep -Ev '^(ARM64VM-|\[ *[0-9]+\.[0-9]+\])' || :
echo "arm64vm: $(( $(date +%s) - t0 ))s in the VM" >&2
rc=$(tr -d '\r' < "$log" | sed -n 's/^ARM64VM-EXIT \([0-9]*\)$/\1/p' | tail -n 1)
if [ -z "$rc" ]; then
	err=$(tr -d '\r' < "$log" | sed -n 's/^ARM64VM-ERROR: //p' | head -n 1)
	echo "arm64vm: no result from the VM: ${err:-see $log}" >&2
	exit 1
fi
exit "$rc"
