#!/bin/sh
# Issue 25's table, every figure against its peers in one run (tools/bench.sh prints the summary):
# start-up of `dshbox run -- true` against bubblewrap with the same mounts and namespaces, the
# kernel's floor for those namespaces (unshare -Urmpf --mount-proc true) and a bare `true`; `tar x`
# then `rm -rf` of 3,000 files in the workspace, on ext4 (under /var/tmp) and on tmpfs, against
# bubblewrap and bare; a `serve` 4 KiB write round trip against the same write done in process;
# start-up of `dshbox bwrap` against bubblewrap for sandbox-runtime's and Codex's argv
# (tools/bench/argv/); the floor of one brokered call (tools/bench/bench_notify.c).  Commands
# alternate run by run (A B C A B C ...: build/bench/bench_run), so a busy machine slows all alike;
# figures are medians.  BENCH_N runs per start-up figure (default 30), a third as many (at least 5)
# per file-tree figure.
set -eu
D="$BUILD/dshbox"
B="$BUILD/bench/bench_run"
N=${BENCH_N:-30}
NT=$((N / 3))
[ "$NT" -ge 5 ] || NT=5
ARGV_DIR=$(cd "$(dirname "$0")/../bench/argv" && pwd)
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
mounted=
cleanup() {
	[ -z "$mounted" ] || umount "$mounted" 2>/dev/null || true
	rm -rf "$S"
}
trap cleanup EXIT
have_bwrap=false
command -v bwrap >/dev/null 2>&1 && have_bwrap=true
$have_bwrap || echo "   bwrap not installed (tools/install-deps.sh installs bubblewrap): figures without that peer"

# bubblewrap with what `dshbox run` makes for a plain workspace-write run (its --dry-run): the root
# read-only, a minimal /dev, a fresh /proc (bubblewrap too makes /proc/sys, irq and bus read-only),
# /tmp and the workspace writable; user, mount, pid and IPC namespaces.
bw() { # WS: the argv up to and including --
	echo "bwrap --unshare-user --unshare-pid --unshare-ipc --die-with-parent --ro-bind / / --dev /dev --proc /proc --bind /tmp /tmp --bind $1 $1 --"
}
FLOOR="unshare -Urmpf --mount-proc /bin/true"

WS="$S/ws"
mkdir "$WS"
cd "$WS"
echo "-- start-up: dshbox run -- true (workspace-write, no rules) vs bubblewrap (same mounts), the floor, bare"
if $have_bwrap; then
	"$B" -t "start-up: run -- true" "$N" dshbox "$D run --workspace $WS -- /bin/true" bwrap "$(bw "$WS") /bin/true" \
		floor "$FLOOR" bare "/bin/true" || echo "   (failed)"
else
	"$B" -t "start-up: run -- true" "$N" dshbox "$D run --workspace $WS -- /bin/true" floor "$FLOOR" bare "/bin/true" ||
		echo "   (failed)"
fi

# 3,000 files in 30 directories, made once per user and kept (rm -rf the cache to remake it).
C=/var/tmp/dshbox-bench-cache-$(id -u)
T="$C/small3k.tar"
if [ ! -e "$T" ]; then
	mkdir -p "$C" "$S/src"
	d=0
	while [ $d -lt 30 ]; do
		mkdir "$S/src/d$d"
		seq -f "$S/src/d$d/f%g" 0 99 | xargs -n 100 sh -c 'for f; do echo "$f" > "$f"; done' sh
		d=$((d + 1))
	done
	tar cf "$T.tmp" -C "$S/src" . && mv "$T.tmp" "$T"
	rm -rf "$S/src"
fi
printf 'mkdir "$1" && tar xf "$2" -C "$1" && exec rm -rf "$1"\n' > "$S/xr.sh"

tree_row() { # TITLE WS
	w=$2
	cd "$w"
	if $have_bwrap; then
		"$B" -t "$1" "$NT" dshbox "$D run --workspace $w -- sh $S/xr.sh $w/x $T" \
			bwrap "$(bw "$w") sh $S/xr.sh $w/x $T" bare "sh $S/xr.sh $w/x $T" || echo "   (failed)"
	else
		"$B" -t "$1" "$NT" dshbox "$D run --workspace $w -- sh $S/xr.sh $w/x $T" bare "sh $S/xr.sh $w/x $T" ||
			echo "   (failed)"
	fi
	cd "$WS"
}
fs=$(findmnt -no FSTYPE -T "$WS" 2>/dev/null || stat -f -c %T "$WS")
echo "-- tar x + rm -rf of 3,000 files in the workspace, $fs ($WS)"
tree_row "tar x + rm -rf 3,000 files, $fs" "$WS"

# tmpfs: BENCH_TMPFS, else a tmpfs the user can write that neither sandbox covers (not under /dev,
# /run/user, /tmp or /sys), else (root) one mounted for this run.
tdir=${BENCH_TMPFS:-}
if [ -z "$tdir" ]; then
	for m in $(findmnt -rn -t tmpfs -o TARGET 2>/dev/null); do
		case "$m" in /dev | /dev/* | /run/user* | /tmp | /tmp/* | /sys/*) continue ;; esac
		if [ -w "$m" ] && [ -x "$m" ]; then tdir=$m; break; fi
	done
fi
if [ -z "$tdir" ] && [ "$(id -u)" = 0 ] && mkdir "$S/tmpfs" && mount -t tmpfs -o size=256m tmpfs "$S/tmpfs"; then
	tdir=$S/tmpfs
	mounted=$tdir
fi
if [ -n "$tdir" ] && [ "$(stat -f -c %T "$tdir")" = tmpfs ]; then
	TW=$(mktemp -d "$tdir/dshbox-bench.XXXXXX")
	chmod 755 "$TW"
	echo "-- the same on tmpfs ($TW)"
	tree_row "tar x + rm -rf 3,000 files, tmpfs" "$TW"
	rm -rf "$TW"
else
	echo "-- the same on tmpfs: skipped, no tmpfs writable here that the sandboxes leave visible (set BENCH_TMPFS=DIR)"
fi

# What the file rows cannot go below while every create, unlink and metadata change is brokered
# (SPEC 3.12): a notification answered at once, nothing read or done (tools/bench/bench_notify.c).
echo "-- the floor of one brokered call: a seccomp notification answered at once (ns per call, best of 7)"
if "$BUILD/bench/bench_notify" "${BENCH_NOTIFY_ITERS:-20000}" > "$S/nf" 2>&1; then
	sed 's/^/   /' "$S/nf"
	# 1,000 calls, in ms: the summary's unit.
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		END { s = v["poll-sync"] != "-" ? v["poll-sync"] : v["poll"]
		      if (s && v["bare"]) printf "1,000 notified calls, nothing done\tnotified=%.3f\tbare=%.3f\n", s / 1000, v["bare"] / 1000 }' \
		"$S/nf" >> "${BENCH_TABLE:-/dev/null}"
else
	echo "   (failed: $(cat "$S/nf"))"
fi

echo "-- serve: 4 KiB write round trip, against the same durable write done in process"
"$BUILD/bench/bench_serve_write" "$D" "${BENCH_SERVE_ROUNDS:-$((N * 10))}" > "$S/sw" 2>&1 || echo "   (failed)"
cat "$S/sw"
awk '/^   serve round trip/ { for (i = 1; i <= NF; i++) if ($i == "median") { d = $(i + 1) / 1000 } }
	/^   peer, in-process/ { for (i = 1; i <= NF; i++) if ($i == "median") { p = $(i + 1) / 1000 } }
	END { if (d && p) printf "serve 4 KiB write\tserve=%.3f\tin-process=%.3f\n", d, p }' "$S/sw" >> "${BENCH_TABLE:-/dev/null}"

# The agent hosts' argv (docs/bwrap.md): each fixture's placeholders filled in for this run.  Names the
# hosts protect are made first, so that bubblewrap does not make them on the host and both bind
# over the same tree.
mkdir -p "$S/home/.ssh" "$S/home/.aws" "$S/empty" "$WS/.claude" "$WS/.git" "$WS/.agents" "$WS/.codex"
for n in .gitconfig .gitmodules .bashrc .bash_profile .zshrc .zprofile .profile .ripgreprc .mcp.json .vscode .idea; do
	: > "$WS/$n"
done
: > "$S/sock"
argv_of() { # FIXTURE: its words on one line, placeholders filled in
	root=
	[ "$(id -u)" = 0 ] || root='^@ROOT_ONLY@'
	grep -v '^#' "$1" | { [ -n "$root" ] && grep -v "$root" || cat; } | sed -e "s|@ROOT_ONLY@||" -e "s|@WS@|$WS|g" \
		-e "s|@HOME@|$S/home|g" -e "s|@SOCK@|$S/sock|g" -e "s|@EMPTY@|$S/empty|g" | tr '\n' ' '
}
for f in "$ARGV_DIR"/*.argv; do
	name=$(basename "$f" .argv)
	a=$(argv_of "$f")
	echo "-- start-up: dshbox bwrap vs bubblewrap, $name's argv ($f)"
	if ! $have_bwrap; then
		echo "   no bubblewrap: no peer"
		continue
	fi
	label=$name
	# An option one side does not know (bubblewrap before 0.9: --argv0) is left out of both, and
	# the figure says so.
	for _ in 1 2; do
		# shellcheck disable=SC2086
		if out=$("$D" bwrap $a 2>&1) && out=$(bwrap $a 2>&1); then
			break
		fi
		case "$out" in
		*--as-pid-1*) a=$(echo " $a " | sed 's/ --as-pid-1 / /') opt=--as-pid-1 ;;
		*--argv0*) a=$(echo " $a " | sed 's/ --argv0 [^ ]* / /') opt=--argv0 ;;
		*) break ;;
		esac
		echo "   refused: $(echo "$out" | head -n 1); measured without $opt"
		label="$label, no $opt"
	done
	# shellcheck disable=SC2086
	if ! { out=$("$D" bwrap $a 2>&1) && out=$(bwrap $a 2>&1); }; then
		echo "   refused: $(echo "$out" | head -n 1)"
		continue
	fi
	"$B" -t "start-up: bwrap, $label" "$N" dshbox-bwrap "$D bwrap $a" bwrap "bwrap $a" || echo "   (failed)"
done
