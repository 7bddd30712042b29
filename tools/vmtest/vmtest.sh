#!/bin/sh
# vmtest.sh BUILD KERNEL...: boot each kernel under QEMU (TCG, one CPU, 2 GiB) on the host's root
# shared read-only over virtio-9p, run tools/vmtest/guest.sh in it (dshbox probe, a sandbox check,
# the integration and escape suites as root and unprivileged) and print one matrix row per kernel.
# KERNEL is a Debian series (5.10, 6.1, 6.12, 7.x: fetched by fetch-kernel.sh, cached) or the path
# of a bzImage (9p and virtio built in, or VMTEST_MODULES=DIR holding lib/modules/VERSION).
# The VMs boot together, the rows print in order.  Logs: BUILD/vmtest/logs/NAME.log.  Exit 1 when a row has a failure (or none
# came back); else 3 when a kernel could not be fetched (no Debian mirror answered: its row says
# SKIP and why, and is not a pass); else 0.
# Knobs: VMTEST_FULL=1 (also the stress suites fence_kill and fence_race), VMTEST_TIMEOUT (s, per VM),
#   VMTEST_ACCEL (tcg, or kvm), VMTEST_REFRESH=1 (fetch again).
set -eu
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$(cd "$build" && pwd)
vdir=$build/vmtest
mkdir -p "$vdir/logs"
# A 6.1 row takes ~18 min under TCG on a quiet 2-CPU host and follows the host's load: room for twice that.
timeout_s=${VMTEST_TIMEOUT:-2700}
# TCG by default: it needs nothing of the host's CPU.  VMTEST_ACCEL=kvm is faster where KVM works;
# on the build host /dev/kvm exists but a guest under it never gets past the decompressor.
accel=${VMTEST_ACCEL:-tcg}
for t in qemu-system-x86_64 cpio gzip; do
	command -v "$t" >/dev/null 2>&1 || { echo "vmtest: $t is missing (apt-get install qemu-system-x86 busybox-static cpio)" >&2; exit 2; }
done

fmt='%-22s %-4s %-6s %-5s %-6s %-11s %-11s %-11s %-11s %6s\n'
header() {
	printf "$fmt" kernel ll userns mount run integ-root integ-user escape-root escape-user wall
}

echo "vmtest: qemu -accel $accel -smp 1, at most ${timeout_s}s per kernel" >&2
status=0
skipped=0
ready=
# A name fit for a shell variable: 6.1 -> 6_1.
id_of() { printf %s "$1" | tr -c 'A-Za-z0-9_' _; }
rows=$vdir/matrix.txt
: > "$rows"
header
for k in "$@"; do
	case $k in
	*/*)
		[ -f "$k" ] || { echo "vmtest: no kernel image $k" >&2; exit 2; }
		name=$(basename "$k")
		kimg=$(cd "$(dirname "$k")" && pwd)/$(basename "$k")
		kdir=$vdir/custom-$name
		rm -rf "$kdir"
		mkdir -p "$kdir"
		# make modules_install INSTALL_MOD_PATH=DIR puts them in DIR/lib/modules (merged /usr: usr/lib).
		if [ -n "${VMTEST_MODULES:-}" ]; then
			m=$(cd "$VMTEST_MODULES" && pwd)
			for d in lib usr; do [ -d "$m/$d" ] && ln -s "$m/$d" "$kdir/$d"; done
		fi
		;;
	*)
		name=$k
		rc=0
		kdir=$("$here/fetch-kernel.sh" "$k" "$vdir" 2> "$vdir/logs/fetch-$k.log") || rc=$?
		cat "$vdir/logs/fetch-$k.log" >&2
		if [ "$rc" = 3 ]; then
			# No mirror answered: say so on the row; the caller decides (CI prints it as a SKIP).
			printf "$fmt" "$name" - - - SKIP - - - - - | tee -a "$rows"
			echo "   SKIP $name: $(sed -n 's/^fetch-kernel: unreachable: //p' "$vdir/logs/fetch-$k.log" | head -n 1)" | tee -a "$rows"
			skipped=1
			continue
		elif [ "$rc" != 0 ]; then
			printf "$fmt" "$name" - - - "NO ROW" - - - - - | tee -a "$rows"
			echo "   fetching the kernel failed: $(tail -n 1 "$vdir/logs/fetch-$k.log")" | tee -a "$rows"
			status=1
			continue
		fi
		kimg=$(find "$kdir/boot" "$kdir/usr/lib/modules" -name "vmlinuz*" -type f 2>/dev/null | head -n 1)
		;;
	esac
	"$here/initramfs.sh" "$kdir" "$kdir/initrd.gz"
	ready="$ready $name"
	eval "kimg_$(id_of "$name")=\$kimg kdir_$(id_of "$name")=\$kdir"
done

# Every VM at once: each is one TCG thread, and a row's wall time is mostly its suites, so two
# kernels on a 2-CPU host take the time of the longer one instead of the sum.
for name in $ready; do
	eval "kimg=\$kimg_$(id_of "$name") kdir=\$kdir_$(id_of "$name")"
	(
		log=$vdir/logs/$name.log
		cmdline="console=ttyS0 panic=-1 loglevel=4 vmtest.top=$top vmtest.build=$build vmtest.full=${VMTEST_FULL:-0} vmtest.name=$name"
		t0=$(date +%s)
		# The console is the only channel back: the guest ends with one VMTEST-ROW line.
		timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 -accel "$accel" -smp 1 -m 2G -nographic \
			-no-reboot -nodefaults -serial stdio -cpu max \
			-kernel "$kimg" -initrd "$kdir/initrd.gz" -append "$cmdline" \
			-virtfs local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap \
			< /dev/null > "$log" 2>&1 || echo "vmtest: qemu for $name ended with $? (see $log)" >&2
		echo $(( $(date +%s) - t0 )) > "$vdir/logs/$name.wall"
	) &
done
wait

for name in $ready; do
	log=$vdir/logs/$name.log
	wall=$(cat "$vdir/logs/$name.wall")
	row=$(tr -d '\r' < "$log" | sed -n 's/^VMTEST-ROW //p' | tail -n 1)
	if [ -z "$row" ]; then
		err=$(tr -d '\r' < "$log" | sed -n 's/^VMTEST-ERROR: //p' | head -n 1)
		printf "$fmt" "$name" - - - "NO ROW" - - - - "${wall}s" | tee -a "$rows"
		echo "   ${err:-no result line: see $log}" | tee -a "$rows"
		status=1
		continue
	fi
	get() { printf '%s\n' "$row" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	printf "$fmt" "$(get kernel)" "$(get landlock)" "$(get userns)" "$(get mountapi)" "$(get sandbox)" \
		"$(get integ_root)" "$(get integ_user)" "$(get escape_root)" "$(get escape_user)" "${wall}s" | tee -a "$rows"
	case "$(get sandbox)" in ok | 125) ;; *) status=1 ;; esac
	for s in integ_root integ_user escape_root escape_user; do
		case "$(get $s)" in */0/*) ;; *) status=1 ;; esac
	done
	# What failed (with its assertions), then why tests skipped, one line per reason with a count:
	# the lines to read first.  The whole console is in the log.
	tr -d '\r' < "$log" | grep -E '^VMTEST: .*(not ok|FAIL|Assertion)' | sed 's/^VMTEST: /   /' | head -n 80 >&2 || :
	tr -d '\r' < "$log" | sed -n 's/^VMTEST: \([a-z]*\) \([a-z]*\): ok - .*# SKIP \(.*\)$/\1 \2: \3/p' | cut -c1-200 |
		sort | uniq -c | sort -rn | sed 's/^ */   skipped /' | head -n 40 >&2 || :
done
[ "$status" = 0 ] && [ "$skipped" = 1 ] && status=3
exit $status
