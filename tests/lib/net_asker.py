#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A host that answers dshbox's questions (SPEC 12.4), for tests/integration/test_net_filter.c:
    net_asker.py LOG NAME=DECISION[,...] -- dshbox run --ask-fd @ASKFD@ ...
runs the command with one end of a socket pair (its number in place of @ASKFD@), logs every question it gets to
LOG (one JSON line each) and answers by the table (a name not in it: deny; "silent": no answer).
Its exit status is the command's."""
import json
import os
import socket
import subprocess
import sys
import threading

log, table = sys.argv[1], dict(kv.split("=", 1) for kv in sys.argv[2].split(",") if kv)
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
argv = [str(theirs.fileno()) if a == "@ASKFD@" else a for a in sys.argv[sys.argv.index("--") + 1:]]
child = subprocess.Popen(argv, pass_fds=(theirs.fileno(),))
theirs.close()


def answer():
    with open(log, "a") as f, ours.makefile("rw") as io:
        for line in io:
            q = json.loads(line)
            f.write(line)
            f.flush()
            d = table.get(q["name"], "deny")
            if d != "silent":
                io.write(json.dumps({"id": q["id"], "decision": d}) + "\n")
                io.flush()


threading.Thread(target=answer, daemon=True).start()
sys.exit(child.wait())
