#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The world outside a filtered run, for tests/integration/test_net_filter.c: on each address given,
HTTP on 80, HTTPS on 443 (the test CA's certificate), a line server on 22 that answers
"ssh-like ADDR", and a bulk server on 7 ("SEND N": N random bytes, then the close; "SUM": every
byte up to the client's EOF, answered "N SHA256" after it); UDP on 443 (QUIC's port) that only logs; HTTP on [fd00::2]:80.  A Host that has a directory DIR/www/HOST is served its files (a git repository,
an npm registry); any other gets "hello from ADDR".  Every connection is logged to DIR/upstream.log as one line:
    ADDR PORT http|https|line HOST PATH   (the bulk server's: ADDR 7 bulk sent|got N SHA256)
so a test asserts from the servers' own records what reached them and what did not."""
import hashlib
import http.server
import socket
import os
import socketserver
import ssl
import sys
import threading

DIR = sys.argv[1]
ADDRS = sys.argv[2:]
LOCK = threading.Lock()


def log(line):
    with LOCK, open(DIR + "/upstream.log", "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    scheme = "http"

    def do_GET(self):
        addr, port = self.server.server_address[:2]
        host = self.headers.get("Host", "-")
        log("%s %d %s %s %s" % (addr, port, self.scheme, host, self.path))
        body = ("hello from %s via %s host=%s\n" % (addr, self.scheme, host)).encode()
        root = os.path.join(DIR, "www", host.split(":")[0])
        if os.path.isdir(root):
            # A name with a document root: a git repository served the dumb way, a registry.
            name = os.path.join(root, os.path.normpath(self.path.split("?")[0]).lstrip("/"))
            if os.path.isdir(name):
                name = os.path.join(name, "index.json")
            try:
                with open(name, "rb") as f:
                    body = f.read()
            except OSError:
                self.send_error(404)
                return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args):
        pass


class TLSHandler(Handler):
    scheme = "https"


class LineHandler(socketserver.StreamRequestHandler):
    def handle(self):
        addr, port = self.server.server_address[:2]
        log("%s %d line - -" % (addr, port))
        self.wfile.write(("ssh-like %s\n" % addr).encode())


class BulkHandler(socketserver.StreamRequestHandler):
    def handle(self):
        addr = self.server.server_address[0]
        line = self.rfile.readline().split()
        h = hashlib.sha256()
        n = 0
        if line[:1] == [b"SEND"] and len(line) == 2:
            left = int(line[1])
            while left > 0:
                b = os.urandom(min(left, 1 << 20))
                h.update(b)
                self.wfile.write(b)
                left -= len(b)
                n += len(b)
            log("%s 7 bulk sent %d %s" % (addr, n, h.hexdigest()))
        elif line == [b"SUM"]:
            while True:
                b = self.rfile.read1(1 << 20)
                if not b:
                    break
                h.update(b)
                n += len(b)
            log("%s 7 bulk got %d %s" % (addr, n, h.hexdigest()))
            self.wfile.write(b"%d %s\n" % (n, h.hexdigest().encode()))


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Server6(Server):
    address_family = socket.AF_INET6


class UDPHandler(socketserver.BaseRequestHandler):
    def handle(self):
        addr, port = self.server.server_address[:2]
        log("%s %d udp - -" % (addr, port))


class LineServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(DIR + "/leaf.pem", DIR + "/leaf.key")
for a in ADDRS:
    serve(Server((a, 80), Handler))
    tls = Server((a, 443), TLSHandler)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
    serve(tls)
    serve(LineServer((a, 22), LineHandler))
    serve(LineServer((a, 7), BulkHandler))
    serve(socketserver.ThreadingUDPServer((a, 443), UDPHandler))  # QUIC's port
serve(Server6(("fd00::2", 80), Handler))
open(DIR + "/upstream.ready", "w").close()
threading.Event().wait()
