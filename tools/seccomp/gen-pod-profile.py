#!/usr/bin/env python3
"""Write dshbox-pod.json: moby's default seccomp profile plus exactly the calls dshbox needs.

usage: gen-pod-profile.py MOBY_DEFAULT_JSON > dshbox-pod.json

Moby's profile (Debian's golang-github-docker-docker-dev, profiles/seccomp/default.json) gives the
namespace and mount calls and sethostname only to a container holding CAP_SYS_ADMIN,
process_vm_readv and pidfd_getfd only to one holding CAP_SYS_PTRACE, makes clone3 fail with ENOSYS
and clone refuse namespace flags, and never allows pivot_root.  dshbox needs those calls, not those
capabilities: the sandbox makes its own user namespace (where they act on nothing of the
container's), and the broker reads a caller's path arguments and takes its descriptors.  So this drops
the named calls from every rule of the input and allows them in one rule without conditions; every
other rule, and the default action, stay as moby wrote them.  Generated, never edited: run it again
when the input changes (tests/containers/run.sh compares the committed file with a fresh one).
"""
import json
import sys

DSHBOX_CALLS = [
    # the sandbox's own namespaces (user, mount, pid, ipc, uts, net, cgroup)
    "unshare", "clone", "clone3", "setns",
    # `dshbox bwrap --hostname`, in the sandbox's own UTS namespace
    "sethostname",
    # its mount tree: the old API and the new one; pivot_root for `dshbox bwrap`'s new root
    "mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
    "mount_setattr", "pivot_root",
    # the broker: a caller's path arguments and descriptors
    "process_vm_readv", "pidfd_getfd",
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen-pod-profile.py MOBY_DEFAULT_JSON")
    with open(sys.argv[1]) as f:
        profile = json.load(f)
    if profile.get("defaultAction") != "SCMP_ACT_ERRNO" or "syscalls" not in profile:
        sys.exit(f"{sys.argv[1]}: not moby's default profile (defaultAction SCMP_ACT_ERRNO, syscalls)")
    rules = []
    for rule in profile["syscalls"]:
        names = [n for n in rule["names"] if n not in DSHBOX_CALLS]
        if names:
            rules.append(dict(rule, names=names))
    rules.append({
        "names": DSHBOX_CALLS,
        "action": "SCMP_ACT_ALLOW",
        "args": [],
        "comment": "dshbox: its sandbox's namespaces and mount tree, its broker's reads of a caller",
        "includes": {},
        "excludes": {},
    })
    profile["syscalls"] = rules
    json.dump(profile, sys.stdout, indent="\t")
    sys.stdout.write("\n")


main()
