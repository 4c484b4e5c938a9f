#!/usr/bin/env python3
"""Work handed to whichever search worker is free, asserted by the order of the answers (never by
wall time), on the real index with one HTTP thread and one search worker (--threads 1) and the
response cache off. A slow request is a batch of 16 searches of 8 common words (limit=50, none
cut by the work budget, so its client is never limited by fair.h).

1. 12 slow batches, one per connection from 127.0.0.11, all sent before a /healthz and a cheap
   search (raft) from 127.0.0.12 on two more connections: both cheap requests are answered
   before at least 8 of the 12 slow ones (the HTTP thread answers /healthz itself while the
   worker computes, and the worker takes the clients in turn, so the cheap search waits for at
   most two slow ones).
2. A search sent behind 4 slow batches whose client then closes its connection (data and FIN in
   one segment): it is never computed (its access log line says "aborted work=0,0,0 not
   computed") and nothing is written back; the batches are all answered 200.
3. --deadline 1: a search sent behind a slow batch, so that its deadline passes while it waits,
   takes no retrieval step: 200 with "partial": true and no results, the access log's postings
   and candidates 0 and "deadline"; the same search without a deadline is whole, with results.

Usage: test_handoff.py (environment: see faultlib.py)
"""
import json
import os
import re
import select
import shutil
import socket
import sys
import tempfile
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

WORDS = 'data system model time value state memory cache'.split()
PROBE = '/api/search?' + urllib.parse.urlencode({'q': 'data system model'})


def slow_body(i):
    """The i-th slow batch: 16 searches of the 8 words rotated by i, limit=50."""
    words = ' '.join(WORDS[i % 8:] + WORDS[:i % 8])
    return json.dumps([{'endpoint': 'search', 'params': {'q': words, 'limit': 50}}] * 16).encode()


def send(port, source, path, close=False, body=None):
    """Opens a connection from source and sends GET path (POST body when given); with close,
    shuts the sending side in the same segment (TCP_CORK). Returns the socket."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect(('127.0.0.1', port))
    if close:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    if body is None:
        s.sendall(b'GET ' + path.encode() + b' HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n')
    else:
        s.sendall(b'POST ' + path.encode() + b' HTTP/1.1\r\nHost: t\r\nConnection: close\r\n'
                  b'Content-Type: application/json\r\nContent-Length: %d\r\n\r\n' % len(body) + body)
    if close:
        s.shutdown(socket.SHUT_WR)
    return s


def collect(socks, timeout=60):
    """Reads every socket of socks (name -> socket) to its end. Returns (the names in the order
    their answers completed, name -> (status, body))."""
    order, out, data = [], {}, {n: b'' for n in socks}
    left = dict(socks)
    until = time.monotonic() + timeout
    while left and time.monotonic() < until:
        ready, _, _ = select.select(list(left.values()), [], [], 1)
        for s in ready:
            name = [n for n, x in left.items() if x is s][0]
            try:
                chunk = s.recv(65536)
            except OSError:
                chunk = b''
            if chunk:
                data[name] += chunk
                continue
            s.close()
            del left[name]
            order.append(name)
            head, _, body = data[name].partition(b'\r\n\r\n')
            st = int(head.split(b' ')[1]) if head.startswith(b'HTTP/1.1 ') else 0
            out[name] = (st, body)
    return order, out


def body_of(port, path):
    s = send(port, '127.0.0.1', path)
    _, out = collect({'x': s})
    st, body = out['x']
    return st, json.loads(body) if st == 200 else None


def after(order, name, prefix):
    """How many names starting with prefix completed after name."""
    return sum(1 for n in order[order.index(name) + 1:] if n.startswith(prefix))


def slow(port, source, i):
    return send(port, source, '/api/batch', body=slow_body(i))


def main():
    F.need_env('ATLAS_SERVE', 'ATLAS_REAL_INDEX')
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix='atlas-handoff-')
    srv = F.Server(F.REAL_INDEX, work, '--cache-size', '0', '--deadline', '0', threads=1)
    try:
        st, whole = body_of(srv.port, PROBE)
        _, out = collect({'b': slow(srv.port, '127.0.0.1', 0)})
        items = json.loads(out['b'][1]) if out['b'][0] == 200 else []
        F.check(st == 200 and not whole['partial'] and whole['total'] > 0 and len(items) == 16 and
                all(it['status'] == 200 and not it['body']['partial'] for it in items),
                'the probe search and the slow batch\'s 16 searches: 200, none partial')
        socks = {'slow%02d' % i: slow(srv.port, '127.0.0.11', i) for i in range(1, 13)}
        time.sleep(0.05)
        socks['healthz'] = send(srv.port, '127.0.0.12', '/healthz')
        socks['cheap'] = send(srv.port, '127.0.0.12', '/api/search?q=raft')
        order, out = collect(socks)
        F.check(all(st == 200 for st, _ in out.values()) and len(out) == 14,
                'all 14 answered 200 (%s)' % sorted(set(st for st, _ in out.values())))
        print('order: %s' % ' '.join(order), flush=True)
        for name in ('healthz', 'cheap'):
            F.check(name in order and after(order, name, 'slow') >= 8,
                    '%s answered before %d of the 12 slow batches sent before it (at least 8)'
                    % (name, after(order, name, 'slow') if name in order else -1))
        # a client gone while its search waits
        socks = {'slow%d' % i: slow(srv.port, '127.0.0.13', i) for i in range(13, 17)}
        time.sleep(0.05)
        gone = send(srv.port, '127.0.0.14', PROBE, close=True)
        _, out = collect(socks)
        gone.settimeout(10)
        try:
            answer = gone.recv(65536)
        except OSError:
            answer = b''
        gone.close()
        F.check(all(st == 200 for st, _ in out.values()), 'the 4 slow batches: 200')
        time.sleep(1.5)
        log = open(srv.log, errors='replace').read().splitlines()
        probe = [l for l in log if ' /api/search ' in l and ' aborted' in l]
        F.check(answer == b'' and len(probe) == 1 and
                probe[0].endswith(' aborted work=0,0,0 not computed'),
                'the search whose client left is not computed and gets no answer (%r, log %s)'
                % (answer[:40], probe))
    finally:
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    srv = F.Server(F.REAL_INDEX, work, '--cache-size', '0', '--deadline', '1', threads=1)
    try:
        first = slow(srv.port, '127.0.0.15', 1)
        time.sleep(0.01)
        st, cut = body_of(srv.port, PROBE)
        collect({'first': first})
        time.sleep(1.2)
        line = [l for l in open(srv.log, errors='replace').read().splitlines()
                if ' /api/search ' in l]
        F.check(st == 200 and cut['partial'] and cut['total'] == 0 and len(line) == 1 and
                re.search(r' work=0,0,\d+ deadline', line[0]),
                '--deadline 1 passed while waiting: 200, partial, no results, no work (%s)'
                % line)
    finally:
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    shutil.rmtree(work, ignore_errors=True)
    return F.finish('test_handoff', t0)


if __name__ == '__main__':
    sys.exit(main())
