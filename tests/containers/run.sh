#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# dshbox inside a real container runtime (issue 22, docs/containers.md): Podman with runc, over a
# Debian 12 rootfs made by debootstrap and kept in BUILD_DIR/containers/rootfs (`podman run
# --rootfs DIR:O`: an overlay, so nothing a run writes reaches the cache; no image registry).  The
# source tree is bound read-only at its own path (the test binaries carry their absolute paths),
# a scratch workspace from the host at /ws.  Rows:
#
#   rootful   root's podman, its default seccomp profile, /proc masked
#   rootless  the same as the unprivileged user dshtest (needs /etc/subuid, uidmap)
#   moby      moby's default seccomp profile (Docker's; Kubernetes' RuntimeDefault), /proc masked
#   pod       tools/seccomp/dshbox-pod.json with /proc unmasked: the smoke set, then the
#             integration and escape suites
#
# The smoke set (tests/containers/inside.sh runs it, this script judges it from the host): a
# relative create and a mkdir in the workspace land on the host, or the run refuses with 125 and a
# `dshbox: error:` line; a `-- DIR` rule keeps its file's content out; the command does not see the
# container's processes; `dshbox probe` names the fix for what the row lacks; no output says "Bad
# address".  A row whose container cannot start here (nested-container limits, no cgroups, no
# debootstrap mirror) prints "SKIP: ROW: REASON" and does not fail; once its container runs, every
# failed check fails the script.
#
#   tests/containers/run.sh BUILD_DIR [ROW...]        (make test-containers)
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
shift || true
top=$(cd "$(dirname "$0")/../.." && pwd)
rows=${*:-rootful rootless moby pod}
dshbox=$build/dshbox
cache=$build/containers
rootfs=$cache/rootfs
# What the suites need inside, beyond minbase: the libraries the test binaries and helpers link
# (Criterion and its libnl, libseccomp, jansson, libyaml, libevent), and what their workload and runner tests
# run (python3 with venv, git, bubblewrap).
packages=libcriterion3,libseccomp2,libjansson4,libnl-route-3-200,libyaml-0-2,libevent-core-2.1-7,libevent-extra-2.1-7,python3,python3-venv,git,bubblewrap
mirror=${DSHBOX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
moby_pkg=golang-github-docker-docker-dev
moby_rel=usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json
pod_profile=$top/tools/seccomp/dshbox-pod.json
unpriv=dshtest
# Tests that build or debug with a compiler, make, gdb or strace, or install with npm: the rootfs
# would need a toolchain, node and this project's -dev packages (minutes more of debootstrap) for
# what the host already tests.
toolchain_tests='run_debug/gdb_runs_a_program|run_debug/strace_follows_a_command'
toolchain_tests+='|run_debug/leak_sanitizer_reports_a_leak|run_workloads/a_parallel_build_of_this_project'
toolchain_tests+='|run_workloads/this_projects_unit_tests_pass_inside'
toolchain_tests+='|readme_policy/the_sample_policy_lets_npm_ci_install_a_package_shipping_a_pem'
# The filtered network's tests build a world of DNS, HTTP and HTTPS servers (dnsmasq, curl,
# openssl, iproute2, node) that the rootfs does not carry either; the host runs them.
toolchain_tests+='|net_filter/*'
bubblewrap_tests='bwrap_vs_bubblewrap/*|runner_bwrap/*|threaded_host/runner_bwrap_*'

failures=0
checks=0
skipped=()

skip() { echo "SKIP: $1: $2"; skipped+=("SKIP: $1: $2"); }
fail() { echo "FAIL: $row: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $row: $*"; }

skip_all() {
	for r in $rows; do skip "$r" "$1"; done
	exit 0
}

[ "$(id -u)" = 0 ] || skip_all "needs root (debootstrap, and podman as root and as $unpriv)"
for t in podman runc catatonit debootstrap newuidmap setpriv; do
	command -v "$t" >/dev/null || skip_all "$t is missing (tools/install-container-deps.sh)"
done
[ -x "$dshbox" ] || { echo "$dshbox is not built (make)" >&2; exit 2; }

# ---- moby's default profile: from the Debian package, installed or only unpacked ----
moby_profile() {
	local f
	f=$(dpkg -L "$moby_pkg" 2>/dev/null | grep "/profiles/seccomp/default.json\$" || true)
	if [ -n "$f" ] && [ -f "$f" ]; then echo "$f"; return; fi
	f=$cache/moby/$moby_rel
	if [ ! -f "$f" ]; then
		# Installing it drags in a Go toolchain: unpack the one file from the downloaded .deb.
		rm -rf "$cache/moby" && mkdir -p "$cache/moby"
		(cd "$cache/moby" && apt-get -q download "$moby_pkg" >/dev/null 2>&1 &&
			dpkg-deb --fsys-tarfile ./*.deb | tar -x "./$moby_rel" && rm -f ./*.deb) || return 0
	fi
	echo "$f"
}
moby=$(moby_profile)

# ---- the rootfs, made once per package list ----
make_rootfs() {
	[ -f "$rootfs/.dshbox-packages" ] && [ "$(cat "$rootfs/.dshbox-packages")" = "$packages" ] && return 0
	echo "debootstrap: Debian 12 minbase + $packages into $rootfs (a few minutes, once)"
	rm -rf "$rootfs" "$rootfs.new"
	mkdir -p "$cache"
	if ! debootstrap --variant=minbase --include="$packages" bookworm "$rootfs.new" "$mirror" \
		> "$cache/debootstrap.log" 2>&1; then
		tail -n 3 "$cache/debootstrap.log" >&2
		rm -rf "$rootfs.new"
		return 1
	fi
	rm -rf "$rootfs.new/var/cache/apt/archives/"*.deb
	# Podman links /etc/mtab where it is missing, which a rootless container may not.
	ln -sfn ../proc/self/mounts "$rootfs.new/etc/mtab"
	echo "$packages" > "$rootfs.new/.dshbox-packages"
	mv "$rootfs.new" "$rootfs"
}
make_rootfs || skip_all "debootstrap from $mirror failed (see $cache/debootstrap.log)"

# Rootless Podman's root is the user: runc makes mount points (/etc/hosts, /run/.containerenv) in
# the rootfs, which it may only where the user owns it.  So that row has a copy the user owns.
user_rootfs() {
	local r=$cache/rootfs-$1
	if ! cmp -s "$rootfs/.dshbox-packages" "$r/.dshbox-packages"; then
		rm -rf "$r" "$r.new"
		cp -a "$rootfs" "$r.new" && chown -R "$1:" "$r.new" && mv "$r.new" "$r"
	fi
	echo "$r"
}

# ---- one row ----
# Podman asks for RLIMIT_NOFILE/NPROC above what this machine may grant without CAP_SYS_RESOURCE
# (runc: "error setting rlimit"): ask for what the caller has, NPROC bounded.
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
[ "$nproc" = unlimited ] || [ "$nproc" -gt 16384 ] && nproc=16384

podman_as() {	# podman_as USER ARGS...: podman as root, or rootless as USER
	local user=$1
	shift
	if [ "$user" = root ]; then
		podman "$@"
	else
		setpriv --reuid="$user" --regid="$user" --init-groups --reset-env \
			env HOME="$(getent passwd "$user" | cut -d: -f6)" XDG_RUNTIME_DIR="$xdg" podman "$@"
	fi
}

contains() { grep -Eq -- "$2" "$out/$1" 2>/dev/null; }
field() { cat "$out/$1" 2>/dev/null || echo "?"; }

# A run that did not do what it was asked must have refused, exit 125 with a dshbox: error: line.
refused_named() {
	[ "$(field "$1.rc")" = 125 ] && contains "$1.err" '^dshbox: error: .'
}

judge_smoke() {
	local name
	checks=$((checks + 1))
	if grep -rl 'Bad address' "$out" >/dev/null 2>&1; then
		fail "\"Bad address\" in $(grep -rl 'Bad address' "$out" | xargs -n1 basename | tr '\n' ' ')"
	fi
	for name in probe dryrun explain true create mkdir deny procs linuxns; do
		[ -f "$out/$name.rc" ] || { fail "$name: never ran (the container stopped early)"; continue; }
		if [ "$(field "$name.rc")" = 125 ] && ! refused_named "$name"; then
			fail "$name: exit 125 without a 'dshbox: error:' line: $(head -c 300 "$out/$name.err")"
		fi
	done
	if [ -n "$cause" ]; then
		for name in true create mkdir deny procs linuxns; do
			if refused_named "$name" && ! grep '^dshbox: error:' "$out/$name.err" | grep -Eq -- "$cause"; then
				fail "$name: refused without naming the cause ($cause): $(grep -m1 '^dshbox: error:' "$out/$name.err")"
			fi
		done
	fi
	# Where a run goes on with the container's /proc bound in, the plan and explain say so.
	if [ "$(field true.rc)" = 0 ] && contains true.err 'warning.*/proc'; then
		if contains dryrun.out 'fresh procfs'; then
			fail "--dry-run says 'fresh procfs' where the run warns: $(grep -m1 '/proc' "$out/true.err")"
		fi
		if ! contains explain.out 'partial'; then
			fail "explain does not say partial where the run warns: $(grep -m1 '/proc' "$out/true.err")"
		fi
	fi
	[ "$(field probe.rc)" = 0 ] || fail "dshbox probe: exit $(field probe.rc): $(head -c 300 "$out/probe.err")"

	if [ "$(field create.rc)" = 0 ] && [ "$(cat "$ws/w/f" 2>/dev/null)" = ok ]; then
		pass "sh -c 'echo ok > f' made f on the host"
	elif refused_named create; then
		pass "sh -c 'echo ok > f' refused: $(grep -m1 '^dshbox: error:' "$out/create.err")"
	else
		fail "sh -c 'echo ok > f': exit $(field create.rc), f on the host: $(cat "$ws/w/f" 2>/dev/null || echo missing): $(head -c 300 "$out/create.err")"
	fi
	if [ "$(field mkdir.rc)" = 0 ] && [ -d "$ws/w/d" ]; then
		pass "mkdir d made d on the host"
	elif refused_named mkdir; then
		pass "mkdir d refused: $(grep -m1 '^dshbox: error:' "$out/mkdir.err")"
	else
		fail "mkdir d: exit $(field mkdir.rc), d on the host: $([ -d "$ws/w/d" ] && echo yes || echo no): $(head -c 300 "$out/mkdir.err")"
	fi
	if contains deny.out 'dshbox-secret-content'; then
		fail "--access '-- /ws/w/secret': cat printed the file's content"
	elif [ "$(field deny.rc)" != 0 ]; then
		pass "-- /ws/w/secret: cat refused (exit $(field deny.rc))"
	else
		fail "-- /ws/w/secret: cat exited 0"
	fi
	if contains procs.out 'dshbox-container-marker'; then
		fail "the command sees the container's processes (a marker process's cmdline)"
	elif [ "$(field procs.rc)" = 0 ] && contains procs.out 'cat'; then
		pass "the command sees only its own processes"
	elif refused_named procs; then
		pass "listing /proc refused: $(grep -m1 '^dshbox: error:' "$out/procs.err")"
	else
		fail "listing /proc: exit $(field procs.rc): $(head -c 300 "$out/procs.err")"
	fi
}

# What this row must show: the probe names the fix for what the row lacks; under the pod profile,
# linux-ns runs everything.
judge_row() {
	case $row in
	rootful|rootless)
		if contains probe.out '/proc' && contains probe.out 'unmask|systempaths|procMount'; then
			pass "probe names the masked /proc and its fix"
		else
			fail "probe does not name the masked /proc and its fix (unmask/systempaths/procMount):
$(cat "$out/probe.out")"
		fi ;;
	moby)
		if contains probe.out 'seccomp' && contains probe.out 'CAP_SYS_PTRACE|seccompProfile|--security-opt'; then
			pass "probe names the seccomp profile and its fix"
		else
			fail "probe does not name the seccomp profile and its fix:
$(cat "$out/probe.out")"
		fi ;;
	pod)
		if contains probe.out '^backend auto +linux-ns' && ! contains probe.out '^backend linux-ns +(unavailable|no)'; then
			pass "probe: linux-ns available"
		else
			fail "probe: linux-ns not available under the pod profile:
$(cat "$out/probe.out")"
		fi
		for name in create mkdir procs; do
			[ "$(field "$name.rc")" = 0 ] ||
				fail "$name: exit $(field "$name.rc") where the pod profile allows everything dshbox needs"
		done
		if [ "$(field linuxns.rc)" = 0 ] && ! contains linuxns.err 'warning'; then
			pass "--backend linux-ns runs, without a warning"
		else
			fail "--backend linux-ns: exit $(field linuxns.rc): $(head -c 300 "$out/linuxns.err")"
		fi ;;
	esac
}

run_row() {
	local user=root opts=() rfs=$rootfs
	# What a refusal must name in this row: what the row takes away.
	cause=/proc
	case $row in
	rootful) ;;
	rootless) user=$unpriv ;;
	moby)
		[ -n "$moby" ] || { skip moby "no $moby_pkg to take default.json from (apt-get download failed)"; return; }
		cause='seccomp|unshare|clone|setns|mount|fsopen|fsmount|open_tree|process_vm_readv|pidfd_getfd|/proc'
		opts=(--security-opt "seccomp=$moby") ;;
	pod) opts=(--security-opt "seccomp=$pod_profile" --security-opt unmask=ALL)
		cause= ;;
	*) echo "unknown row $row" >&2; exit 2 ;;
	esac
	if [ "$user" != root ]; then
		id "$user" >/dev/null 2>&1 || { skip "$row" "no user $user"; return; }
		grep -q "^$user:" /etc/subuid || { skip "$row" "$user has no /etc/subuid range"; return; }
		xdg=/var/tmp/dshbox-containers-xdg-$user
		mkdir -p "$xdg" && chown "$user:" "$xdg" && chmod 700 "$xdg"
		rfs=$(user_rootfs "$user")
	fi
	ws=$(mktemp -d /var/tmp/dshbox-containers.XXXXXX)
	out=$ws/out
	mkdir -p "$out" "$ws/w/secret"
	echo dshbox-secret-content > "$ws/w/secret/key"
	[ "$user" = root ] || chown -R "$user:" "$ws"
	# --init: a test binary as the pid namespace's init would reap the orphans its tests leave, and
	# Criterion, finding children it did not start, spins (seen: integration.run, 20 minutes).
	local base=(run --rm --init --runtime runc --network none --ulimit "nofile=$nofile:$nofile"
		--ulimit "nproc=$nproc:$nproc" -v "$top:$top:ro" -v "$ws:/ws" -e DSHBOX_TEST_NO_SKIP=1
		"${opts[@]}")
	# --rootfs is a switch: the rootfs takes the image's place, after every option.
	local image=(--rootfs "$rfs:O")
	local err
	if ! err=$(podman_as "$user" "${base[@]}" "${image[@]}" /bin/true 2>&1); then
		skip "$row" "the container does not start: $(printf '%s' "$err" | tail -n 1)"
		rm -rf "$ws"
		return
	fi
	echo "== $row: podman ${base[*]} ${image[*]}"
	podman_as "$user" "${base[@]}" "${image[@]}" /bin/bash "$top/tests/containers/inside.sh" "$dshbox" ||
		fail "tests/containers/inside.sh: exit $?"
	judge_smoke
	judge_row
	if [ "$row" = pod ]; then
		# Scratch trees (/var/tmp) on the host's filesystem, as on a host: the tests mount overlays
		# there, which an overlay root refuses as an upper layer.  A loop device stands in for the
		# disk the raw-device attack looks for.
		local suite scratch dev
		scratch=$(mktemp -d /var/tmp/dshbox-containers-scratch.XXXXXX)
		chmod 1777 "$scratch"
		dev=$(find /dev -maxdepth 1 -name 'loop[0-9]*' -type b -print -quit)
		local suite_opts=(-v "$scratch:/var/tmp" -w /var/tmp ${dev:+--device "$dev"})
		echo "== $row: not run here, they need a toolchain the rootfs does not carry (they run on the host):"
		echo "   ${toolchain_tests//|/ }"
		for suite in integration escape; do
			checks=$((checks + 1))
			echo "== $row: $suite suite"
			if podman_as "$user" "${base[@]}" "${suite_opts[@]}" "${image[@]}" "$build/tests/$suite.run" -j2 \
				--filter "!($toolchain_tests|$bubblewrap_tests)"; then
				pass "$suite suite as root"
			else
				fail "$suite suite as root (see above)"
			fi
		done
		# Bubblewrap itself, run by root, makes no user namespace and so needs CAP_SYS_ADMIN, which
		# a container's root lacks: its comparisons run as an unprivileged user, as in most pods.
		checks=$((checks + 1))
		echo "== $row: integration suite's bubblewrap tests as uid 65534"
		if podman_as "$user" "${base[@]}" "${suite_opts[@]}" --user 65534:65534 "${image[@]}" \
			"$build/tests/integration.run" -j2 --filter "@($bubblewrap_tests)"; then
			pass "bubblewrap tests as uid 65534"
		else
			fail "bubblewrap tests as uid 65534 (see above)"
		fi
	fi
	rm -rf "$ws" "${scratch:-}"
}

regenerate_pod_profile() {
	checks=$((checks + 1))
	row=profile
	if [ -z "$moby" ]; then
		skip profile "no $moby_pkg to regenerate tools/seccomp/dshbox-pod.json from"
	elif "$top/tools/seccomp/gen-pod-profile.py" "$moby" | cmp -s - "$pod_profile"; then
		pass "tools/seccomp/dshbox-pod.json is gen-pod-profile.py's output for $moby"
	else
		fail "tools/seccomp/dshbox-pod.json differs from tools/seccomp/gen-pod-profile.py $moby: run it again"
	fi
}

start=$(date +%s)
regenerate_pod_profile
for row in $rows; do run_row; done
echo
echo "containers: $checks checks, $failures failed, ${#skipped[@]} rows skipped, $(( $(date +%s) - start ))s"
[ ${#skipped[@]} = 0 ] || printf '%s\n' "${skipped[@]}"
[ "$failures" = 0 ]
