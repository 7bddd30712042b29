#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The network section's helper (tools/bench.d/network.sh), three roles in one file:

  net_bench.py serve ADDR PORT READY
      a fast HTTP/1.0 server (a thread per connection, backlog 4096): GET /bulk/N streams N bytes
      from one buffer, any other path gets a one-line body.  Touches READY once listening.
  net_bench.py inner NAME PORT
      runs inside `dshbox run --allow-domain NAME:PORT`; reads one command a line on stdin and
      answers one line on stdout, so that the outer side can interleave its direct connections
      with the sandbox's, one by one.
  net_bench.py outer ADDR PORT NAME DNS ROUNDS CONNS BULK CONC DNSQ -- DSHBOX-ARGV...
      runs in the world (tests/lib/net_world.sh): starts the inner run and measures each row
      against the direct path to ADDR:PORT (and the DNS server DNS) in the same run.

Every cycle is timed with time.perf_counter around the socket calls alone, never a run's start."""
import os
import resource
import selectors
import socket
import socketserver
import statistics
import struct
import subprocess
import sys
import threading
import time

CHUNK = 4 << 20
ZEROS = bytes(CHUNK)


# ---------------------------------------------------------------------------------------- server
class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head = b""
        while b"\r\n\r\n" not in head:
            b = s.recv(4096)
            if not b:
                return
            head += b
            if len(head) > 65536:
                return
        path = head.split(b" ", 2)[1] if head.count(b" ") >= 2 else b"/"
        if path.startswith(b"/bulk/"):
            n = int(path[6:])
            s.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % n)
            view = memoryview(ZEROS)
            while n > 0:
                k = min(n, CHUNK)
                s.sendall(view[:k])
                n -= k
        else:
            s.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n")


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 4096


def serve(addr, port, ready):
    srv = Server((addr, int(port)), Handler)
    open(ready, "w").close()
    srv.serve_forever()


# ---------------------------------------------------------------------------------------- clients
def request(host, port, path="/"):
    return b"GET %s HTTP/1.0\r\nHost: %s:%d\r\n\r\n" % (path.encode(), host.encode(), port)


def recv_head(s):
    """Read up to the end of a reply's head; return the head and whatever came after it."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = s.recv(65536)
        if not b:
            raise OSError("EOF in a reply's head")
        buf += b
    i = buf.index(b"\r\n\r\n") + 4
    return buf[:i], buf[i:]


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            raise OSError("EOF in the SOCKS5 reply")
        buf += b
    return buf


def open_path(path, name, port, target):
    """A connected socket through path, ready for the request: the proxy's handshake done."""
    if path == "http":
        s = socket.create_connection(("127.0.0.1", 3128))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (name.encode(), port, name.encode(), port))
        head, rest = recv_head(s)
        if not head.startswith(b"HTTP/1.1 200") and not head.startswith(b"HTTP/1.0 200"):
            raise OSError("CONNECT: " + head.split(b"\r\n")[0].decode(errors="replace"))
        assert not rest
        return s
    if path == "socks":
        s = socket.create_connection(("127.0.0.1", 1080))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b"\x05\x01\x00")
        if recv_exact(s, 2) != b"\x05\x00":
            raise OSError("SOCKS5: no method")
        n = name.encode()
        s.sendall(b"\x05\x01\x00\x03" + bytes([len(n)]) + n + struct.pack("!H", port))
        rep = recv_exact(s, 4)
        if rep[1] != 0:
            raise OSError("SOCKS5: reply %d" % rep[1])
        recv_exact(s, {1: 4 + 2, 4: 16 + 2}.get(rep[3]) or recv_exact(s, 1)[0] + 2)
        return s
    # mapped (the run's pool address for name) or direct: a plain connect().
    s = socket.create_connection((target, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def drain(s):
    try:
        while s.recv(65536):
            pass
    except OSError:
        pass
    s.close()


def cycle(path, name, port, target):
    """One connection set-up: connect (and the proxy's handshake), a request, its first byte. µs."""
    t0 = time.perf_counter()
    s = open_path(path, name, port, target)
    s.sendall(request(name, port))
    if not s.recv(1):
        raise OSError("no reply")
    t1 = time.perf_counter()
    drain(s)
    return (t1 - t0) * 1e6


def bulk(path, name, port, target, n):
    """n bytes from /bulk/n: seconds from connect to the last byte."""
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    t0 = time.perf_counter()
    s = open_path(path, name, port, target)
    s.sendall(request(name, port, "/bulk/%d" % n))
    head, rest = recv_head(s)
    got = len(rest)
    while got < n:
        k = s.recv_into(view)
        if not k:
            raise OSError("EOF after %d of %d bytes" % (got, n))
        got += k
    t1 = time.perf_counter()
    s.close()
    return t1 - t0


def concurrent(name, port, target, c):
    """c connections at once to target:port, each a whole request and reply: (seconds, how many ok)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < c + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, c + 64), hard))
    sel = selectors.DefaultSelector()
    req = request(name, port)
    ok = 0
    t0 = time.perf_counter()
    for _ in range(c):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((target, port))
        sel.register(s, selectors.EVENT_WRITE, [b""])
    left = c
    deadline = t0 + 60
    while left and time.perf_counter() < deadline:
        for key, ev in sel.select(1):
            s, got = key.fileobj, key.data
            done = False
            if ev & selectors.EVENT_WRITE:
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    done = True
                else:
                    s.send(req)
                    sel.modify(s, selectors.EVENT_READ, got)
                    continue
            else:
                try:
                    b = s.recv(65536)
                except OSError:
                    b, done = b"", True
                if b:
                    got[0] += b
                else:
                    done = True
                    ok += got[0].startswith(b"HTTP/1.0 200") and got[0].endswith(b"ok\n")
            if done:
                sel.unregister(s)
                s.close()
                left -= 1
    t1 = time.perf_counter()
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    return t1 - t0, ok


def dns_query(qid, name):
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00\x00\x01\x00\x01"


def dns(server, name, k):
    """k A queries for name, one after another from one socket: µs each (and the answer checked)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.connect((server, 53))
    out = []
    for i in range(k):
        q = dns_query(i & 0xFFFF, name)
        t0 = time.perf_counter()
        s.send(q)
        a = s.recv(512)
        t1 = time.perf_counter()
        # id, QR set, RCODE 0, one answer
        if a[:2] != q[:2] or not a[2] & 0x80 or a[3] & 0x0F or struct.unpack("!H", a[6:8])[0] < 1:
            raise OSError("DNS: a bad answer from %s" % server)
        out.append((t1 - t0) * 1e6)
    s.close()
    return out


# ---------------------------------------------------------------------------------------- inner
def inner(name, port):
    port = int(port)
    mapped = socket.gethostbyname(name)
    for line in sys.stdin:
        w = line.split()
        try:
            if w[0] == "conn":
                r = "%.1f" % cycle(w[1], name, port, mapped)
            elif w[0] == "bulk":
                r = "%.6f" % bulk(w[1], name, port, mapped, int(w[2]))
            elif w[0] == "conc":
                r = "%.6f %d" % concurrent(name, port, mapped, int(w[1]))
            elif w[0] == "dns":
                r = " ".join("%.1f" % x for x in dns("127.0.0.1", name, int(w[1])))
            else:
                break
        except OSError as e:
            r = "error %s" % e
        sys.stdout.write(r + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------------------------------- outer
class Inner:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        r = self.p.stdout.readline()
        if not r:
            raise SystemExit("network: the sandboxed client ended (exit %s)" % self.p.wait())
        if r.startswith("error"):
            raise SystemExit("network: %s: %s" % (line, r.strip()))
        return r.split()

    def close(self):
        self.p.stdin.close()
        return self.p.wait()


def med(xs):
    return statistics.median(xs)


def outer(args):
    addr, port, name, dnssrv = args[0], int(args[1]), args[2], args[3]
    rounds, conns, size, conc, dnsq = (int(x) for x in args[4:9])
    argv = args[10:]
    inn = Inner(argv)
    print("-- connection set-up: connect (and the proxy's handshake), a request, its first byte;"
          " %d each, interleaved one by one" % conns)
    paths = (("http", "HTTP proxy (CONNECT)"), ("socks", "SOCKS5"), ("mapped", "mapped address"))
    t = {"direct": []}
    t.update((p, []) for p, _ in paths)
    for _ in range(3):  # warm both sides up: the relay's first resolution, python's first socket
        cycle("direct", name, port, addr)
        for p, _ in paths:
            inn.ask("conn " + p)
    for _ in range(conns):
        t["direct"].append(cycle("direct", name, port, addr))
        for p, _ in paths:
            t[p].append(float(inn.ask("conn " + p)[0]))
    d = med(t["direct"])
    print("   %-22s median %7.0f µs" % ("direct (loopback)", d))
    for p, label in paths:
        m = med(t[p])
        print("   %-22s median %7.0f µs   added %+6.0f µs   (goal: <= 1000 µs added)" % (label, m, m - d))
    sys.stdout.flush()

    print("-- %d MiB in one connection, %d rounds alternating, direct vs each relay" % (size >> 20, rounds))
    b = {"direct": [], "mapped": [], "http": []}
    for _ in range(rounds):
        b["direct"].append(bulk("direct", name, port, addr, size))
        b["mapped"].append(float(inn.ask("bulk mapped %d" % size)[0]))
        b["http"].append(float(inn.ask("bulk http %d" % size)[0]))
    d = size / med(b["direct"]) / 1e6
    print("   %-22s median %7.0f MB/s" % ("direct", d))
    for p, label in (("mapped", "mapped address"), ("http", "HTTP proxy (CONNECT)")):
        m = size / med(b[p]) / 1e6
        print("   %-22s median %7.0f MB/s   %5.1f%% of direct   (goal: >= 90%%)" % (label, m, 100 * m / d))
    sys.stdout.flush()

    print("-- %d connections at once, each a whole request and reply; %d rounds alternating" % (conc, rounds))
    c = {"direct": [], "mapped": []}
    bad = []
    for _ in range(rounds):
        s, ok = concurrent(name, port, addr, conc)
        c["direct"].append(s)
        bad += [] if ok == conc else ["direct %d/%d" % (ok, conc)]
        r = inn.ask("conc %d" % conc)
        c["mapped"].append(float(r[0]))
        bad += [] if int(r[1]) == conc else ["mapped %d/%d" % (int(r[1]), conc)]
    d = med(c["direct"]) * 1e3
    m = med(c["mapped"]) * 1e3
    print("   %-22s median %7.1f ms" % ("direct", d))
    print("   %-22s median %7.1f ms   %.2fx direct   all succeeded: %s   (goal: all succeed)"
          % ("mapped address", m, m / d if d else 0, "yes" if not bad else "NO (" + ", ".join(bad) + ")"))
    sys.stdout.flush()

    print("-- DNS: %d A queries for %s from one socket, in batches of 100 alternating" % (dnsq, name))
    q = {"direct": [], "run": []}
    for _ in range(max(1, dnsq // 100)):
        q["direct"] += dns(dnssrv, name, 100)
        q["run"] += [float(x) for x in inn.ask("dns 100")]
    d, m = med(q["direct"]), med(q["run"])
    print("   %-22s median %7.1f µs" % ("dnsmasq (direct)", d))
    print("   %-22s median %7.1f µs   added %+6.1f µs   (goal: <= 200 µs added)" % ("the run's resolver", m, m - d))
    rc = inn.close()
    if rc:
        raise SystemExit("network: the sandboxed run exited %d" % rc)


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "serve":
        serve(*sys.argv[2:5])
    elif role == "inner":
        inner(*sys.argv[2:4])
    elif role == "outer":
        outer(sys.argv[2:])
    else:
        raise SystemExit("usage: net_bench.py serve|inner|outer ...")
