#!/bin/sh
# Install what `make test-containers` (tests/containers/run.sh) needs on Debian 12: Podman with
# runc (and catatonit, its --init), debootstrap for the rootfs, uidmap and fuse-overlayfs for the
# rootless row, and a subordinate id range for the unprivileged user dshtest when it has none.  Moby's seccomp profile is
# not installed (its package, golang-github-docker-docker-dev, drags in a Go toolchain): run.sh
# unpacks the one file from the downloaded package.  Idempotent; needs root.
set -eu
[ "$(id -u)" -eq 0 ] || { echo "tools/install-container-deps.sh: needs root (apt-get, usermod)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends podman runc catatonit debootstrap uidmap fuse-overlayfs >/dev/null
if id dshtest >/dev/null 2>&1 && ! grep -q '^dshtest:' /etc/subuid; then
	usermod --add-subuids 200000-265535 --add-subgids 200000-265535 dshtest
fi
