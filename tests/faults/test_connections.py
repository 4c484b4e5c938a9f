#!/usr/bin/env python3
"""Slow and idle clients, oversized and malformed requests (atlas-serve on 127.0.0.0/8 only).

1. Idle connections: 500 TCP connections held open without a byte sent (plus 20 slow ones that
   sent half a request line and stopped), from 127.0.0.2..127.0.0.10 (the server allows 64
   connections per address); a fresh client on 127.0.0.1 is still answered within 1 s, and so is
   a fresh client on each of those addresses that still has room. The 65th connection from one
   address is closed at once. atlas-serve has no flag for the connection timeout (10 s, fixed in
   server/main.c): after it, every idle and slow connection has been closed by the server (EOF or
   reset, within 10 s + 5 s of slack), and the server still answers.
2. Oversized requests: an 8 KB URL is a 4xx, never a 5xx (a q of 8 KB: 400 query_too_long; an
   8 KB path: 404; a URL beyond the connection's 32 KB of memory: 414), and so is a 64 KB header
   (431), or many headers adding up to 64 KB (431). The server keeps answering.
3. Malformed parameters, each with its asserted outcome (all 200 with a JSON body):
   q=%zz and q=% (bad percent-encoding) are kept as typed: "query" is "%zz" / "%", 0 results;
   q=%2 is kept as "%2" (and finds pages with "2"); repeated q: the FIRST one wins
   (q=raft&q=cache answers "raft", q=&q=raft answers the empty query); an encoded NUL is read as
   a space: q=a%00b is the query "a b", q=%00 is " " with 0 results, q=raft%00%00 is "raft " (a
   run of spaces is one space, as the search reads it and the cache keys it); the same holds for
   /api/suggest.

Usage: test_connections.py (environment: see faultlib.py)
"""
import errno
import json
import os
import resource
import select
import shutil
import socket
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

IDLE = 500
SLOW = 20
PER_IP = 64
SOURCES = ['127.0.0.%d' % i for i in range(2, 11)]
CONNECTION_TIMEOUT_S = 10


def open_from(source, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(5)
    s.connect(('127.0.0.1', port))
    return s


def raw_get(source, port, path, timeout=1.0):
    """A GET from source with a deadline. Returns (status line, seconds)."""
    t0 = time.monotonic()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((source, 0))
        s.settimeout(timeout)
        s.connect(('127.0.0.1', port))
        s.sendall(b'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'
                  % path.encode())
        data = b''
        while b'\r\n' not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.split(b'\r\n', 1)[0].decode(errors='replace'), time.monotonic() - t0
    except OSError as e:
        return 'error: %r' % e, time.monotonic() - t0
    finally:
        s.close()


def closed_by_peer(s):
    """Whether the server closed s (EOF or reset); s is non-blocking."""
    try:
        data = s.recv(65536)
        return data == b'' or None  # data: an answer (not expected); None: undecided
    except BlockingIOError:
        return False
    except OSError as e:
        return e.errno in (errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED)


def idle_clients(srv):
    port = srv.port
    # the per-address limit: 64 from one address, the 65th is closed at once
    probe = [open_from('127.0.0.11', port) for _ in range(PER_IP + 1)]
    for s in probe:
        s.setblocking(False)
    # a busy machine may leave the last connections in the listen backlog for a while: wait up
    # to 5 s for the refusal, then a moment more in case a second one follows
    closed = set()
    deadline = time.monotonic() + 5.0
    while not closed and time.monotonic() < deadline:
        time.sleep(0.05)
        closed = {i for i, s in enumerate(probe) if closed_by_peer(s)}
    time.sleep(0.3)
    refused = len(closed | {i for i, s in enumerate(probe) if closed_by_peer(s)})
    F.check(refused == 1, 'per-address limit: of %d connections from one address, 1 is closed '
            'at once (got %d)' % (PER_IP + 1, refused))
    for s in probe:
        s.close()

    held = []
    t_open = time.monotonic()
    for i in range(IDLE + SLOW):
        s = open_from(SOURCES[i % len(SOURCES)], port)
        if i >= IDLE:
            s.sendall(b'GET /api/search?q=slow')  # half a request line, then nothing
        held.append(s)
    opened = time.monotonic()
    print('  %d idle + %d slow connections open from %d addresses in %.2f s'
          % (IDLE, SLOW, len(SOURCES), opened - t_open))
    for s in held:
        s.setblocking(False)
    time.sleep(0.3)
    early = sum(1 for s in held if closed_by_peer(s))
    F.check(early == 0, 'none of the %d held connections is closed early (%d)' % (len(held), early))

    line, took = raw_get('127.0.0.1', port, '/api/search?q=consistent%20hashing')
    print('  fresh client on 127.0.0.1: %r in %.3f s' % (line, took))
    F.check(line.startswith('HTTP/1.1 200') and took < 1.0,
            'with %d connections held, a fresh client is answered within 1 s (%.3f s)'
            % (len(held), took))
    worst = 0.0
    for src in SOURCES:
        line, took = raw_get(src, port, '/healthz')
        worst = max(worst, took)
        F.check(line.startswith('HTTP/1.1 200') and took < 1.0,
                'a fresh client on %s (%d held there) is answered within 1 s: %r %.3f s'
                % (src, (IDLE + SLOW) // len(SOURCES), line, took))
    print('  fresh clients on the busy addresses: slowest %.3f s' % worst)
    status, _, h = srv.get_json('/healthz')
    F.check(status == 200, '/healthz answers while the connections are held')

    # the connection timeout: every held connection is closed by the server
    deadline = opened + CONNECTION_TIMEOUT_S + 5
    open_ones = {s.fileno(): s for s in held}
    closed_at = []
    poller = select.poll()
    for fd in open_ones:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    while open_ones and time.monotonic() < deadline:
        for fd, _ in poller.poll(200):
            s = open_ones.get(fd)
            if s is not None and closed_by_peer(s) is True:
                closed_at.append(time.monotonic() - opened)
                poller.unregister(fd)
                del open_ones[fd]
    if closed_at:
        print('  held connections closed by the server after %.1f .. %.1f s'
              % (min(closed_at), max(closed_at)))
    F.check(not open_ones, 'after the %d s timeout every idle and slow connection is closed '
            '(%d of %d still open after %d s)'
            % (CONNECTION_TIMEOUT_S, len(open_ones), len(held), CONNECTION_TIMEOUT_S + 5))
    F.check(not closed_at or min(closed_at) >= CONNECTION_TIMEOUT_S - 1.5,
            'and not long before the timeout (first after %.1f s)'
            % (min(closed_at) if closed_at else -1))
    for s in held:
        s.close()
    line, took = raw_get('127.0.0.2', port, '/healthz')
    F.check(line.startswith('HTTP/1.1 200') and took < 1.0,
            'after the drop, the addresses have room again: %r %.3f s' % (line, took))


def expect_4xx(srv, what, path, headers=None, want=None, code=None):
    try:
        status, h, body = srv.request(path, headers=headers)
    except OSError as e:
        F.check(False, '%s: the server answers (got %r)' % (what, e))
        return
    ok = 400 <= status < 500 and (want is None or status == want)
    F.check(ok, '%s: %d (want %s)' % (what, status, want or '4xx'))
    if code:
        try:
            got = json.loads(body)['error']['code']
        except (ValueError, KeyError, TypeError):
            got = None
        F.check(got == code, '%s: JSON error code %r (got %r)' % (what, code, got))


def oversized(srv):
    expect_4xx(srv, 'an 8 KB URL (q of 8 KB)', '/api/search?q=' + 'a' * 8192, want=400,
               code='query_too_long')
    expect_4xx(srv, 'an 8 KB URL (path of 8 KB)', '/' + 'a' * 8192, want=404, code='not_found')
    expect_4xx(srv, 'an 8 KB URL (next path of 8 KB)', '/api/next?path=/' + 'a' * 8192)
    expect_4xx(srv, 'a 40 KB URL (beyond the 32 KB per connection)',
               '/api/search?q=x&pad=' + 'a' * 40000, want=414)
    expect_4xx(srv, 'a 64 KB header', '/api/search?q=x', headers={'X-Big': 'a' * 65536},
               want=431)
    expect_4xx(srv, 'headers adding up to 64 KB', '/api/search?q=x',
               headers={'X-H%d' % i: 'a' * 1000 for i in range(64)}, want=431)
    status, _, _ = srv.request('/api/search?q=x&pad=' + 'a' * 8000)
    print('  note: an 8 KB URL whose bytes are in an unknown parameter is answered %d '
          '(unknown parameters are ignored)' % status)
    F.check(status < 500, 'an 8 KB unknown parameter: not a 5xx (%d)' % status)
    F.check(srv.request('/api/search?q=cache')[0] == 200, 'after them the server still answers')


def parameters(srv):
    cases = [
        # (query string, the expected "query", expect results)
        ('q=%zz', '%zz', False),
        ('q=%', '%', False),
        ('q=a%zzb', 'a%zzb', False),
        ('q=%2', '%2', True),
        ('q=raft&q=cache', 'raft', True),
        ('q=cache&q=raft', 'cache', True),
        ('q=&q=raft', '', False),
        ('q=raft&q=', 'raft', True),
        ('q=a%00b', 'a b', True),
        ('q=%00', ' ', False),
        ('q=raft%00%00', 'raft ', True),  # spaces collapse (the cache key's normal form)
    ]
    for qs, want, results in cases:
        status, _, body = srv.request('/api/search?' + qs)
        try:
            d = json.loads(body)
        except ValueError:
            d = {}
        F.check(status == 200 and d.get('query') == want
                and (d.get('total', 0) > 0) == results,
                'search %s: 200, query %r, %s (got %d, %r, total %r)'
                % (qs, want, 'results' if results else 'no results', status, d.get('query'),
                   d.get('total')))
        status, _, body = srv.request('/api/suggest?' + qs)
        try:
            d = json.loads(body)
        except ValueError:
            d = {}
        F.check(status == 200 and d.get('query') == want,
                'suggest %s: 200, query %r (got %d, %r)' % (qs, want, status, d.get('query')))
    # the first q wins for the ETag (and the response cache) too
    e1 = srv.request('/api/search?q=raft&q=cache')[1].get('etag')
    e2 = srv.request('/api/search?q=raft')[1].get('etag')
    F.check(e1 is not None and e1 == e2, 'q=raft&q=cache has the ETag of q=raft')
    status, _, body = srv.request('/api/search?q=cache')
    F.check(status == 200 and json.loads(body).get('query') == 'cache',
            'a cached q=raft&q=cache does not leak into q=cache')
    # repeated other parameters: the first one wins as well
    d = json.loads(srv.request('/api/search?q=cache&limit=2&limit=7')[2])
    F.check(len(d.get('results', [])) == 2, 'limit=2&limit=7: the first (2) wins (%d results)'
            % len(d.get('results', [])))
    status, _, _ = srv.request('/api/search?q=cache&limit=2&limit=x')
    F.check(status == 200, 'limit=2&limit=x: the second, invalid one is not read (%d)' % status)


def main():
    F.need_env('ATLAS_SERVE', 'ATLAS_REAL_INDEX')
    t0 = time.monotonic()
    # room for the held sockets, here and in the server (which inherits the limit)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 2 * (IDLE + SLOW + PER_IP) + 100
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    with tempfile.TemporaryDirectory(prefix='atlas-connections-') as work:
        served = os.path.join(work, 'atlas.db')
        shutil.copyfile(F.REAL_INDEX, served)
        srv = F.Server(served, work, threads=2)
        try:
            print('# oversized requests')
            oversized(srv)
            print('# malformed parameters')
            parameters(srv)
            print('# idle and slow clients')
            idle_clients(srv)
        finally:
            status = srv.stop()
            F.check(status == 0, 'SIGTERM: exit 0 (got %r)' % status)
            if F.failures:
                print('--- server stderr ---\n' + srv.stderr_text()[-2000:])
    return F.finish('connections', t0)


if __name__ == '__main__':
    sys.exit(main())
