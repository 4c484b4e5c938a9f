#!/usr/bin/env python3
"""Strict HTTP framing and the request deadline, over raw sockets (atlas-serve on 127.0.0.0/8).

1. Framing: each malformed case is answered at once (well within 2 s, never by a timeout) with
   400, or 501 for a transfer coding other than chunked, and the connection is closed after the
   answer, so that nothing after a refused head is read as a request: duplicate Host, HTTP/1.1
   without Host, two Content-Length fields (equal or not), a non-numeric Content-Length,
   Transfer-Encoding gzip / xchunked / "identity, chunked" (501), chunked with Content-Length,
   bare LF (request line, field line, the empty line), obs-fold, NUL in a value and in a name,
   CR inside a value, a space before the colon, NUL in the request line, /app.js%00.html (an
   encoded NUL in the path: not app.js). The well-formed neighbours are served: HTTP/1.0 without
   Host, a chunked request, Content-Length 0, pipelined requests on one connection, a field
   value with obs-text (bytes >= 0x80).
2. Smuggling: "Content-Length: 0" then "Content-Length: 26" followed by a second request in
   the body: exactly one answer (400), never a second one.
3. Deadline (slowloris): the server runs with --request-timeout 2; 64 connections from
   127.0.0.3 (the per-address limit) each send one byte of a request line every 0.3 s. A 65th
   from that address is refused while they trickle; within 2 s + 2 s of slack every one of them
   has been answered 408 and closed although it never stopped sending; a request from 127.0.0.3
   succeeds after it. A request (head and body) that arrives whole in time is served, even one
   whose body comes in pieces.

Usage: test_http_strict.py (environment: see faultlib.py)
"""
import os
import re
import socket
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

H = b'Host: atlas.test\r\n'
BAD = [
    ('duplicate Host', b'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400),
    ('HTTP/1.1 without Host', b'GET /healthz HTTP/1.1\r\n\r\n', 400),
    ('two equal Content-Length', b'GET /healthz HTTP/1.1\r\n' + H +
     b'Content-Length: 0\r\nContent-Length: 0\r\n\r\n', 400),
    ('non-numeric Content-Length', b'GET /healthz HTTP/1.1\r\n' + H + b'Content-Length: 1x\r\n\r\n', 400),
    ('Transfer-Encoding gzip', b'GET /healthz HTTP/1.1\r\n' + H + b'Transfer-Encoding: gzip\r\n\r\n', 501),
    ('Transfer-Encoding xchunked', b'GET /healthz HTTP/1.1\r\n' + H +
     b'Transfer-Encoding: xchunked\r\n\r\n', 501),
    ('Transfer-Encoding identity, chunked', b'GET /healthz HTTP/1.1\r\n' + H +
     b'Transfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n', 501),
    ('two Transfer-Encoding fields', b'GET /healthz HTTP/1.1\r\n' + H +
     b'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400),
    ('chunked with Content-Length', b'GET /healthz HTTP/1.1\r\n' + H +
     b'Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n', 400),
    ('bare LF everywhere', b'GET /healthz HTTP/1.1\nHost: a\n\n', 400),
    ('bare LF after a field', b'GET /healthz HTTP/1.1\r\nHost: a\nX-A: b\r\n\r\n', 400),
    ('bare LF as the empty line', b'GET /healthz HTTP/1.1\r\nHost: a\r\n\n', 400),
    ('obs-fold', b'GET /healthz HTTP/1.1\r\n' + H + b'X-A: b\r\n c\r\n\r\n', 400),
    ('NUL in a value', b'GET /healthz HTTP/1.1\r\n' + H + b'X-A: b\x00c\r\n\r\n', 400),
    ('NUL in a name', b'GET /healthz HTTP/1.1\r\n' + H + b'X\x00A: b\r\n\r\n', 400),
    ('CR inside a value', b'GET /healthz HTTP/1.1\r\n' + H + b'X-A: b\rc\r\n\r\n', 400),
    ('space before the colon', b'GET /healthz HTTP/1.1\r\n' + H + b'X-A : b\r\n\r\n', 400),
    ('NUL in the request line', b'GET /app.js\x00.html HTTP/1.1\r\n' + H + b'\r\n', 400),
    ('encoded NUL in the path', b'GET /app.js%00.html HTTP/1.1\r\n' + H + b'\r\n', 400),
    ('encoded NUL in the path (absolute form)', b'GET http://atlas.test/app.js%00 HTTP/1.1\r\n' +
     H + b'\r\n', 400),
    ('unknown version', b'GET /healthz HTTP/1.7\r\n' + H + b'\r\n', 400),
]
GOOD = [
    ('HTTP/1.0 without Host', b'GET /healthz HTTP/1.0\r\n\r\n'),
    ('chunked request', b'GET /healthz HTTP/1.1\r\n' + H +
     b'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n'),
    ('Content-Length 0', b'GET /healthz HTTP/1.1\r\n' + H + b'Content-Length: 0\r\nConnection: close\r\n\r\n'),
    ('obs-text in a value', b'GET /healthz HTTP/1.1\r\n' + H + b'X-A: caf\xc3\xa9\r\nConnection: close\r\n\r\n'),
    ('%00 in the query only', b'GET /api/search?q=a%00b HTTP/1.1\r\n' + H + b'Connection: close\r\n\r\n'),
]


def exchange(port, data, source='127.0.0.1', wait=2.0):
    """Sends data, reads until the server closes or wait passes. Returns (bytes, seconds, closed)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(wait)
    s.connect(('127.0.0.1', port))
    t0 = time.monotonic()
    s.sendall(data)
    got = b''
    closed = False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            got += chunk
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True
    s.close()
    return got, time.monotonic() - t0, closed


def statuses(data):
    """The status codes of the responses in data, in order (each status line starts a line)."""
    return [int(m) for m in re.findall(rb'(?:^|\n)HTTP/1\.1 (\d{3}) ', data)]


def framing(srv):
    for name, data, want in BAD:
        got, secs, closed = exchange(srv.port, data)
        st = statuses(got)
        F.check(st == [want] and closed and secs < 1.5,
                '%s: answered %s once and closed in %.2f s (got %s, closed %s)'
                % (name, want, secs, st, closed))
    for name, data in GOOD:
        got, secs, closed = exchange(srv.port, data)
        F.check(statuses(got) == [200], '%s: 200 (got %s)' % (name, statuses(got)))
    pipelined = (b'GET /healthz HTTP/1.1\r\n' + H + b'\r\n') * 3 + \
        b'GET /healthz HTTP/1.1\r\n' + H + b'Connection: close\r\n\r\n'
    got, _, _ = exchange(srv.port, pipelined)
    F.check(statuses(got) == [200] * 4, 'four pipelined requests: four 200 (got %s)' % statuses(got))
    body = b'{"q":"raft"}'
    got, _, _ = exchange(srv.port, b'GET /healthz HTTP/1.1\r\n' + H + b'Content-Length: %d\r\n\r\n'
                         % len(body) + body + b'GET /healthz HTTP/1.1\r\n' + H +
                         b'Connection: close\r\n\r\n')
    F.check(statuses(got) == [200, 200], 'a body then a pipelined request: two 200 (got %s)'
            % statuses(got))


def smuggling(srv):
    inner = b'GET /metrics HTTP/1.1\r\n\r\n'
    data = (b'GET /healthz HTTP/1.1\r\n' + H + b'Content-Length: 0\r\nContent-Length: %d\r\n\r\n'
            % len(inner)) + inner
    got, secs, closed = exchange(srv.port, data)
    F.check(statuses(got) == [400] and closed,
            'Content-Length 0 then %d: one 400 and closed, the body never a request (got %s)'
            % (len(inner), statuses(got)))


def slowloris(srv, timeout):
    src = '127.0.0.3'
    conns = []
    for _ in range(64):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((src, 0))
        s.connect(('127.0.0.1', srv.port))
        s.setblocking(False)
        conns.append(s)
    line = b'GET /api/search?q=' + b'a' * 200 + b' HTTP/1.1\r\n'
    t0 = time.monotonic()
    sent = 0
    answers = {}
    closed_at = {}
    refused_checked = False
    while time.monotonic() - t0 < timeout + 2 and len(closed_at) < len(conns):
        for i, s in enumerate(conns):
            if i in closed_at:
                continue
            try:
                s.send(line[sent % len(line):sent % len(line) + 1])
            except OSError:
                pass
            try:
                data = s.recv(4096)
                if data:
                    answers[i] = answers.get(i, b'') + data
                else:
                    closed_at[i] = time.monotonic() - t0
            except BlockingIOError:
                pass
            except OSError:
                closed_at[i] = time.monotonic() - t0
        sent += 1
        if not refused_checked and time.monotonic() - t0 > 0.5:
            refused_checked = True
            got, _, closed = exchange(srv.port, b'GET /healthz HTTP/1.1\r\n' + H + b'\r\n',
                                      source=src, wait=1.0)
            F.check(statuses(got) == [] and closed,
                    'a 65th connection from %s while 64 trickle: refused (got %s)'
                    % (src, statuses(got)))
        time.sleep(0.3)
    n408 = sum(1 for a in answers.values() if statuses(a) == [408])
    last = max(closed_at.values()) if closed_at else None
    F.check(len(closed_at) == len(conns),
            '64 trickling connections: all closed by the server (%d), the last after %s s'
            % (len(closed_at), '%.1f' % last if last else '-'))
    F.check(last is not None and timeout - 0.5 <= last <= timeout + 2,
            'closed at the request deadline of %d s, not before, though still sending' % timeout)
    F.check(n408 == len(conns), 'each answered 408 first (%d of 64)' % n408)
    for s in conns:
        s.close()
    time.sleep(0.2)
    got, _, _ = exchange(srv.port, b'GET /healthz HTTP/1.1\r\n' + H + b'Connection: close\r\n\r\n',
                         source=src)
    F.check(statuses(got) == [200], 'then a request from %s: 200 (got %s)' % (src, statuses(got)))
    # a whole request in time, its body in pieces, is served
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(('127.0.0.1', srv.port))
    s.sendall(b'GET /healthz HTTP/1.1\r\n' + H + b'Content-Length: 4\r\nConnection: close\r\n\r\n')
    for b in b'abcd':
        time.sleep(0.2)
        s.sendall(bytes([b]))
    got = b''
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    s.close()
    F.check(statuses(got) == [200], 'a body sent in 4 pieces within the deadline: 200 (got %s)'
            % statuses(got))


def main():
    F.need_env('ATLAS_SERVE', 'ATLAS_REAL_INDEX')
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix='atlas-strict-')
    timeout = 2
    srv = F.Server(F.REAL_INDEX, work, '--request-timeout', str(timeout))
    try:
        framing(srv)
        smuggling(srv)
        slowloris(srv, timeout)
        F.check(srv.request('/healthz')[0] == 200, 'the server still answers')
    finally:
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    return F.finish('test_http_strict', t0)


if __name__ == '__main__':
    sys.exit(main())
