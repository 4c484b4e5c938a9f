#!/usr/bin/env python3
"""Work handed to whichever search worker is free, asserted by the order of the answers (never by
wall time), on the real index with one HTTP thread and one search worker (--threads 1), the
response cache off and no work budget, so that each of the heavy searches below costs the same
many retrieval steps.

1. 12 heavy searches (32 stop words, limit=50), one per connection from 127.0.0.11, all sent
   before a /healthz and a cheap search (raft) from 127.0.0.12 on two more connections: both
   cheap requests are answered before at least 8 of the 12 heavy ones (the HTTP thread answers
   /healthz itself while the worker computes, and the worker takes the clients in turn, so the
   cheap search waits for at most two heavy ones).
2. A search sent behind 4 heavy ones whose client then closes its connection (data and FIN in
   one segment): it is never computed (its access log line says "aborted work=0,0,0 not
   computed") and nothing is written back; the heavy searches are all answered 200.
3. --deadline 1: the heavy search, sent behind another so that its deadline passes while it
   waits, stops after its first retrieval step, answers 200 with "partial": true, and did fewer
   postings than the same search without a deadline (the access log's counters, "deadline").

Usage: test_handoff.py (environment: see faultlib.py)
"""
import json
import os
import re
import select
import socket
import sys
import tempfile
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

STOP = ('the of and is to in a for on it that with as by be this are or an at from not was '
        'which but can if has have one its all').split()
UNBOUNDED = '1000000000,1000000000,1000000000'


def heavy_path(i):
    """The i-th heavy search: the 32 stop words rotated by i (a distinct request each)."""
    words = STOP[i:] + STOP[:i]
    return '/api/search?' + urllib.parse.urlencode({'q': ' '.join(words), 'limit': '50'})


def send(port, source, path, close=False):
    """Opens a connection from source and sends GET path; with close, shuts the sending side in
    the same segment (TCP_CORK). Returns the socket."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect(('127.0.0.1', port))
    if close:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    s.sendall(b'GET ' + path.encode() + b' HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n')
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


def work_of(log, suffix=''):
    """The postings of the last search in the access log at log, when its line ends with
    suffix after its counters; -1 when there is none."""
    for line in reversed(open(log, errors='replace').read().splitlines()):
        m = re.search(r' work=(\d+),\d+,\d+(.*?)( results=\d+)?$', line)
        if ' /api/search' in line and m:
            return int(m.group(1)) if m.group(2) == suffix else -1
    return -1


def after(order, name, prefix):
    """How many names starting with prefix completed after name."""
    return sum(1 for n in order[order.index(name) + 1:] if n.startswith(prefix))


def main():
    F.need_env('ATLAS_SERVE', 'ATLAS_REAL_INDEX')
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix='atlas-handoff-')
    srv = F.Server(F.REAL_INDEX, work, '--budget', UNBOUNDED, '--cache-size', '0',
                   '--deadline', '0', threads=1)
    try:
        st, full = body_of(srv.port, heavy_path(0))
        time.sleep(1.2)
        full_work = work_of(srv.log)
        F.check(st == 200 and not full['partial'] and full_work > 0,
                'the heavy search unbounded: 200, whole (%d postings)' % full_work)
        socks = {'heavy%02d' % i: send(srv.port, '127.0.0.11', heavy_path(i)) for i in range(1, 13)}
        time.sleep(0.05)
        socks['healthz'] = send(srv.port, '127.0.0.12', '/healthz')
        socks['cheap'] = send(srv.port, '127.0.0.12', '/api/search?q=raft')
        order, out = collect(socks)
        F.check(all(st == 200 for st, _ in out.values()) and len(out) == 14,
                'all 14 answered 200 (%s)' % sorted(set(st for st, _ in out.values())))
        print('order: %s' % ' '.join(order), flush=True)
        for name in ('healthz', 'cheap'):
            F.check(name in order and after(order, name, 'heavy') >= 8,
                    '%s answered before %d of the 12 heavy searches sent before it (at least 8)'
                    % (name, after(order, name, 'heavy') if name in order else -1))
        # a client gone while its search waits
        socks = {'heavy%d' % i: send(srv.port, '127.0.0.13', heavy_path(i)) for i in range(13, 17)}
        time.sleep(0.05)
        gone = send(srv.port, '127.0.0.14', '/api/search?q=abandoned+probe+data', close=True)
        _, out = collect(socks)
        gone.settimeout(10)
        try:
            answer = gone.recv(65536)
        except OSError:
            answer = b''
        gone.close()
        F.check(all(st == 200 for st, _ in out.values()), 'the 4 heavy searches: 200')
        time.sleep(1.5)
        log = open(srv.log, errors='replace').read().splitlines()
        probe = [l for l in log if ' /api/search ' in l and ' aborted' in l]
        F.check(answer == b'' and len(probe) == 1 and
                probe[0].endswith(' aborted work=0,0,0 not computed'),
                'the search whose client left is not computed and gets no answer (%r, log %s)'
                % (answer[:40], probe))
    finally:
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    srv = F.Server(F.REAL_INDEX, work, '--budget', UNBOUNDED, '--cache-size', '0',
                   '--deadline', '1', threads=1)
    try:
        # behind another search, so that its deadline has passed before its first step ends
        first = send(srv.port, '127.0.0.15', heavy_path(1))
        time.sleep(0.01)
        st, cut = body_of(srv.port, heavy_path(0))
        collect({'first': first})
        time.sleep(1.2)
        cut_work = work_of(srv.log, ' deadline')
        F.check(st == 200 and cut['partial'] and 0 < cut_work < full_work,
                '--deadline 1: 200, partial, %d postings of the whole search\'s %d (log: '
                '"deadline")' % (cut_work, full_work))
    finally:
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    return F.finish('test_handoff', t0)


if __name__ == '__main__':
    sys.exit(main())
