#!/bin/sh
# dshbox run (auto: linux-ns here): start-up against bubblewrap's official profile and the kernel's
# floor (unshare -Urmpf --mount-proc true), bare and with the README's sample policy; 1,000 and
# 10,000 literal masks against the same run without rules; a '**/*.pem' glob over 100,000 and
# 1,000,000 files against find.  Every figure is a median from runs that alternate the commands
# compared (build/bench/bench_run), so a busy machine slows both alike.  The file trees are made
# once under /var/tmp/dshbox-bench-cache-UID and kept between runs (rm -rf it to rebuild).
set -eu
D="$BUILD/dshbox"
B="$BUILD/bench/bench_run"
RUNS=${DSHBOX_BENCH_RUNS:-60}
C=/var/tmp/dshbox-bench-cache-$(id -u)
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
WS="$S/ws"
mkdir -p "$WS" "$C"
cd "$WS"
have_bwrap=false
command -v bwrap >/dev/null 2>&1 && have_bwrap=true
BWRAP="bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp --bind $WS $WS --"
FLOOR="unshare -Urmpf --mount-proc /bin/true"

echo "-- start-up: dshbox run -- true (workspace-write, broker on, no rules) vs bwrap's official profile and the floor"
if $have_bwrap; then
	"$B" "$RUNS" dshbox "$D run --workspace $WS -- /bin/true" bwrap "$BWRAP /bin/true" floor "$FLOOR"
else
	echo "   bwrap not installed (tools/install-deps.sh): no peer"
	"$B" "$RUNS" dshbox "$D run --workspace $WS -- /bin/true" floor "$FLOOR"
fi

echo "-- the same with the README's sample policy (rw \$XDG_CACHE_HOME, r- \$HOME/.config, -- mise.*.toml, -- **/*.pem)"
export HOME="$S/home" XDG_CACHE_HOME="$S/cache"
mkdir -p "$HOME/.config" "$XDG_CACHE_HOME" "$WS/src"
: > "$WS/mise.local.toml"
: > "$WS/src/key.pem"
cat > "$S/dshbox.yml" <<'YML'
mode: workspace-write
access: |
  rw {{ env.XDG_CACHE_HOME }}
  r- {{ env.HOME }}/.config
  -- mise.*.toml
  -- **/*.pem
YML
if $have_bwrap; then
	"$B" "$RUNS" dshbox-sample "$D run --config $S/dshbox.yml --workspace $WS -- /bin/true" bwrap "$BWRAP /bin/true" floor "$FLOOR"
else
	"$B" "$RUNS" dshbox-sample "$D run --config $S/dshbox.yml --workspace $WS -- /bin/true" floor "$FLOOR"
fi

echo "-- literal file masks (each: '-- FILE') against the same run without rules (cost should grow linearly)"
L="$C/lit"
if [ ! -e "$L/.complete" ]; then
	rm -rf "$L"
	mkdir -p "$L"
	seq -f "$L/f%g" 0 9999 | xargs touch
	: > "$L/.complete"
fi
for n in 1000 10000; do
	seq -f "-- $L/f%g" 0 $((n - 1)) > "$S/rules$n"
done
"$B" 20 no-rules "$D run --workspace $WS -- /bin/true" masks-1000 "$D run --workspace $WS --access-file $S/rules1000 -- /bin/true" \
	masks-10000 "$D run --workspace $WS --access-file $S/rules10000 -- /bin/true"
echo "   (a mask's cost: (masks-N minus no-rules) / N)"
if $have_bwrap; then
	args=$(seq -f "--ro-bind /dev/null $L/f%g" 0 999 | tr '\n' ' ')
	"$B" 10 masks-1000 "$D run --workspace $WS --access-file $S/rules1000 -- /bin/true" \
		bwrap-1000 "bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp --bind $WS $WS $args -- /bin/true"
fi

# A tree of DIRS directories of PER files each, one of them k.pem: DIRS matches of '**/*.pem'.
tree() { # NAME DIRS PER
	G="$C/$1"
	if [ ! -e "$G/.complete" ]; then
		echo "   (making $G once: $2 x $3 files)"
		rm -rf "$G"
		mkdir -p "$G"
		d=0
		while [ $d -lt "$2" ]; do
			mkdir "$G/d$d"
			seq -f "$G/d$d/f%g.txt" 1 $(($3 - 1)) | xargs touch
			: > "$G/d$d/k.pem"
			d=$((d + 1))
		done
		: > "$G/.complete"
	fi
}
echo "-- **/*.pem" > "$S/globrule"
for size in 100000:1000:100:20 1000000:1000:1000:5; do
	IFS=: read -r total dirs per runs <<EOT
$size
EOT
	tree "tree-$total" "$dirs" "$per"
	echo "-- '-- **/*.pem' over $total files ($dirs directories x $per, $dirs matches), against find"
	"$B" "$runs" glob-run "$D run --workspace $G --access-file $S/globrule -- /bin/true" \
		no-rules "$D run --workspace $G -- /bin/true" find "find $G -name *.pem"
	echo "   (the glob's cost: glob-run minus no-rules, against find; goal at 1,000,000: <= 2x find)"
done
