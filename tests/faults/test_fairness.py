#!/usr/bin/env python3
"""Fairness between clients (atlas-serve on 127.0.0.0/8, real index, response cache off).

The server runs with a small work budget (--budget 300,40,1000) so that common-word searches
are cut ("partial": true), which marks their client heavy for 2 s.
1. A heavy client (127.0.0.4) sending such searches (limit=50) on 16 connections at once: some answered 429
   too_many_requests with Retry-After: 1, every other answer 200, never a 5xx; meanwhile a normal
   client (127.0.0.5, searches the budget does not cut) on 2 connections gets no 429.
2. After 2.5 s of quiet the heavy client's normal searches, 4 at once, get no 429.
3. Behind --trust-proxy 127.0.0.6: the client is the last X-Forwarded-For address. The proxy's
   requests for a heavy X-Forwarded-For client get 429s, those for another one none; from any
   other peer (127.0.0.7) X-Forwarded-For is ignored. 70 connections from the proxy are all
   accepted (the limit of 64 per address does not apply to it).
4. A client that sends a search and closes at once (data and FIN in one segment): the search is
   abandoned, no answer is written and the access log says "aborted".

Usage: test_fairness.py (environment: see faultlib.py)
"""
import json
import os
import socket
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

HEAVY = ['data system', 'the model', 'time value', 'state memory', 'system design', 'data model']
NORMAL = ['raft', 'paxos', 'gil', 'vmap', 'pallas']


def get(port, path, source, headers=b'', timeout=10):
    """One GET from source on a new connection. Returns (status, headers text, body)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(('127.0.0.1', port))
    s.sendall(b'GET ' + path.encode() + b' HTTP/1.1\r\nHost: t\r\nConnection: close\r\n' +
              headers + b'\r\n')
    data = b''
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b'\r\n\r\n')
    status = int(head.split(b' ')[1]) if head.startswith(b'HTTP/1.1 ') else 0
    return status, head.decode(errors='replace'), body


def burst(port, source, queries, conns, rounds, headers=b'', limit=10):
    """conns threads each sending rounds searches (limit results each: 50 makes a search take
    long enough for requests to overlap). Returns the list of (status, head, body)."""
    out = []
    lock = threading.Lock()

    def run(i):
        for r in range(rounds):
            q = queries[(i + r) % len(queries)].replace(' ', '+')
            res = get(port, '/api/search?q=%s&limit=%d' % (q, limit), source, headers)
            with lock:
                out.append(res)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def codes(res):
    return sorted(set(r[0] for r in res))


def main():
    F.need_env('ATLAS_SERVE', 'ATLAS_REAL_INDEX')
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix='atlas-fair-')
    srv = F.Server(F.REAL_INDEX, work, '--budget', '300,40,1000', '--cache-size', '0',
                   '--trust-proxy', '127.0.0.6')
    try:
        st, _, body = get(srv.port, '/api/search?q=data+system', '127.0.0.4')
        F.check(st == 200 and json.loads(body)['partial'] is True,
                'a common-word search is cut by the small budget (partial)')
        st, _, body = get(srv.port, '/api/search?q=raft', '127.0.0.5')
        F.check(st == 200 and json.loads(body)['partial'] is False, 'a rare word is not cut')
        normal = []
        nt = threading.Thread(target=lambda: normal.extend(
            burst(srv.port, '127.0.0.5', NORMAL, 2, 40)))
        nt.start()
        heavy = burst(srv.port, '127.0.0.4', HEAVY, 16, 15, limit=50)
        nt.join()
        n429 = [r for r in heavy if r[0] == 429]
        F.check(len(n429) > 0 and set(codes(heavy)) <= {200, 429},
                'heavy client, 16 connections: %d of %d answered 429, the rest 200 (codes %s)'
                % (len(n429), len(heavy), codes(heavy)))
        F.check(all('Retry-After: 1' in r[1] and
                    json.loads(r[2])['error']['code'] == 'too_many_requests' for r in n429),
                'each 429 has Retry-After: 1 and code too_many_requests')
        F.check(codes(normal) == [200], 'the normal client meanwhile: all %d answered 200 (%s)'
                % (len(normal), codes(normal)))
        time.sleep(2.5)
        later = burst(srv.port, '127.0.0.4', NORMAL, 4, 10)
        F.check(codes(later) == [200], 'after 2.5 s quiet, the same client\'s normal searches: '
                'all 200 (%s)' % codes(later))
        # behind a trusted proxy
        xff_a, xff_b = b'X-Forwarded-For: 198.51.100.7, 203.0.113.9\r\n', b'X-Forwarded-For: 203.0.113.10\r\n'
        get(srv.port, '/api/search?q=data+system', '127.0.0.6', xff_a)
        normal = []
        nt = threading.Thread(target=lambda: normal.extend(
            burst(srv.port, '127.0.0.6', NORMAL, 2, 40, xff_b)))
        nt.start()
        heavy = burst(srv.port, '127.0.0.6', HEAVY, 16, 15, xff_a, limit=50)
        nt.join()
        F.check(any(r[0] == 429 for r in heavy) and codes(normal) == [200],
                'through the proxy: the heavy forwarded client gets 429s (%d), another '
                'forwarded client none (%s)' % (sum(r[0] == 429 for r in heavy), codes(normal)))
        time.sleep(2.5)
        get(srv.port, '/api/search?q=data+system', '127.0.0.7', xff_b)
        other = burst(srv.port, '127.0.0.6', NORMAL, 4, 10, xff_b)
        F.check(codes(other) == [200], 'X-Forwarded-For from a peer that is no proxy is ignored '
                '(its client is the peer): %s' % codes(other))
        conns = []
        for _ in range(70):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(('127.0.0.6', 0))
            s.connect(('127.0.0.1', srv.port))
            conns.append(s)
        time.sleep(0.3)
        st, _, _ = get(srv.port, '/healthz', '127.0.0.6')
        alive = 0
        for s in conns:
            s.setblocking(False)
            try:
                alive += s.recv(1) != b''
            except BlockingIOError:
                alive += 1
            except OSError:
                pass
            s.close()
        F.check(alive == 70 and st == 200, 'the proxy holds 70 connections (%d open) and is served'
                % alive)
        # a client gone before its answer
        gone = 0
        for i in range(5):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
            s.bind(('127.0.0.8', 0))
            s.connect(('127.0.0.1', srv.port))
            s.send(b'GET /api/search?q=abandoned+%d HTTP/1.1\r\nHost: t\r\n\r\n' % i)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(5)
            try:
                data = s.recv(65536)
            except OSError:
                data = b''
            gone += data == b''
            s.close()
        time.sleep(1.5)
        log = open(srv.log, errors='replace').read()
        aborted = sum(1 for line in log.splitlines()
                      if ' /api/search ' in line and ' aborted work=' in line)
        F.check(gone >= 4 and aborted >= 4,
                'searches whose client closed at once: %d of 5 abandoned unanswered, %d logged '
                '"aborted"' % (gone, aborted))
        F.check(get(srv.port, '/healthz', '127.0.0.1')[0] == 200, 'the server still answers')
    finally:
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    return F.finish('test_fairness', t0)


if __name__ == '__main__':
    sys.exit(main())
