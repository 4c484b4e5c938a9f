#!/usr/bin/env python3
"""Work handed to whichever search worker is free, asserted by the order in which the worker took
the requests (from the access log's latency and queued= fields, never by wall time), on the real
index with one HTTP thread and one search worker (--threads 1) and the response cache off. A slow
request is a batch of 16 searches of 8 common words (limit=50, none cut by the work budget, so its
client is never limited by fair.h).

1. 12 slow batches, one per connection from 127.0.0.11, all sent before a /healthz and a cheap
   search (raft) from 127.0.0.12 on two more connections: /healthz is answered by the HTTP thread
   (never handed to the worker) while slow batches still wait, and the worker takes the cheap
   search after at most two slow batches taken since it arrived (the worker takes the clients in
   turn: the one in hand, then one more of 127.0.0.11's).
2. A search sent behind 4 slow batches whose client then closes its connection (data and FIN in
   one segment): it is never computed (its access log line says "aborted work=0,0,0 not
   computed") and nothing is written back; the batches are all answered 200.
3. --deadline 1: a search sent behind 4 slow batches from 4 addresses, which waits more than its
   1 ms for the worker, takes no retrieval step: 200 with "partial": true and no results, the
   access log's postings and candidates 0 and "deadline"; the same search without a deadline is
   whole, with results.

Each case needs the machine to have kept the queue full while the request under test arrived
(slow batches still waiting); when the log shows it did not (the test process was held up past
the slow work), the case is tried again, up to ATTEMPTS times, and fails only if it never held.

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
ATTEMPTS = 4
LOG_LINE = re.compile(r'^(\d{4}-\d\d-\d\dT\d\d):(\d\d):(\d\d\.\d{3})Z (\S+) (\S+) (\d+|-) '
                      r'([0-9.]+)ms(?: queued=([0-9.]+)ms)?(?: aborted)?(.*)$')


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


class Logged:
    """One access log line: path, status ('-' when aborted), the rest of the line, and in
    seconds of the day: arrived (its end less its latency), taken (arrived plus queued=, None
    when no worker took it) and ended."""

    def __init__(self, m):
        hour = int(m.group(1)[-2:])
        self.ended = hour * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        self.path, self.status, self.rest = m.group(5), m.group(6), m.group(9)
        self.arrived = self.ended - float(m.group(7)) / 1e3
        self.taken = self.arrived + float(m.group(8)) / 1e3 if m.group(8) else None
        self.line = m.group(0)


def logged_since(srv, skip, count):
    """The access log's lines after the first skip, once count of them are there (the log is
    flushed within a second; waits at most 5 s). Returns a list of Logged."""
    def lines():
        got = open(srv.log, errors='replace').read().splitlines()[skip:]
        return [Logged(m) for m in map(LOG_LINE.match, got) if m]
    F.wait_for(lambda: len(lines()) >= count, 5)
    return lines()


def log_length(srv, count):
    """The access log's length once it holds count lines, all the requests made so far (waits at
    most 5 s for the log to be flushed)."""
    F.wait_for(lambda: len(open(srv.log, errors='replace').read().splitlines()) >= count, 5)
    return len(open(srv.log, errors='replace').read().splitlines())


def unmet(attempt, what):
    """Reports that a case's condition did not hold on this attempt. Returns False; on the last
    attempt fails the case."""
    if attempt < ATTEMPTS:
        print('again: %s (attempt %d of %d)' % (what, attempt, ATTEMPTS), flush=True)
    else:
        F.check(False, 'the queue was never full when the request under test arrived: %s' % what)
    return False


def turns_case(srv, attempt, before):
    """Case 1, with before requests made on srv so far. Returns True when it was judged (pass or
    fail), False to try again."""
    skip = log_length(srv, before)
    socks = {'slow%02d' % i: slow(srv.port, '127.0.0.11', i) for i in range(1, 13)}
    time.sleep(0.02)
    socks['healthz'] = send(srv.port, '127.0.0.12', '/healthz')
    socks['cheap'] = send(srv.port, '127.0.0.12', '/api/search?q=raft')
    _, out = collect(socks)
    lines = logged_since(srv, skip, 14)
    health = [l for l in lines if l.path == '/healthz']
    cheap = [l for l in lines if l.path == '/api/search']
    slows = [l for l in lines if l.path == '/api/batch' and l.taken is not None]
    if len(health) != 1 or len(cheap) != 1 or len(slows) != 12 or cheap[0].taken is None:
        F.check(False, 'the access log has the 14 requests, each batch and the search taken by '
                'the worker (%s)' % [l.line for l in lines])
        return True
    health, cheap = health[0], cheap[0]
    waiting = sum(1 for l in slows if l.taken > health.ended)
    overtaken = sum(1 for l in slows if l.taken > cheap.taken)
    if waiting < 3 or overtaken < 3:
        return unmet(attempt, '%d slow batches waited past /healthz, %d past the cheap search'
                     % (waiting, overtaken))
    F.check(all(st == 200 for st, _ in out.values()) and len(out) == 14,
            'all 14 answered 200 (%s)' % sorted(set(st for st, _ in out.values())))
    F.check(health.status == '200' and 'queued=' not in health.line,
            '/healthz answered by the HTTP thread while %d slow batches waited (%s)'
            % (waiting, health.line))
    ahead = sum(1 for l in slows if cheap.arrived < l.taken < cheap.taken)
    F.check(cheap.status == '200' and ahead <= 2,
            'the cheap search taken after %d slow batches taken since it arrived (at most 2), '
            'ahead of %d (%s)' % (ahead, overtaken, cheap.line))
    return True


def gone_case(srv, attempt, before):
    """Case 2, with before requests made on srv so far. Returns True when it was judged, False
    to try again."""
    skip = log_length(srv, before)
    socks = {'slow%d' % i: slow(srv.port, '127.0.0.13', i) for i in range(13, 17)}
    time.sleep(0.02)
    gone = send(srv.port, '127.0.0.14', PROBE, close=True)
    _, out = collect(socks)
    gone.settimeout(10)
    try:
        answer = gone.recv(65536)
    except OSError:
        answer = b''
    gone.close()
    lines = logged_since(srv, skip, 5)
    probe = [l for l in lines if l.path == '/api/search']
    slows = [l for l in lines if l.path == '/api/batch' and l.taken is not None]
    if len(probe) == 1 and probe[0].taken is not None and \
            not any(l.taken > probe[0].arrived for l in slows):
        return unmet(attempt, 'the search arrived after the worker had taken every slow batch')
    F.check(all(st == 200 for st, _ in out.values()) and len(out) == 4, 'the 4 slow batches: 200')
    F.check(answer == b'' and len(probe) == 1 and probe[0].status == '-' and
            probe[0].line.endswith(' aborted work=0,0,0 not computed'),
            'the search whose client left is not computed and gets no answer (%r, log %s)'
            % (answer[:40], [l.line for l in probe]))
    return True


def deadline_case(srv, attempt, before):
    """Case 3, on a server with --deadline 1 and before requests made on it so far. Returns True
    when it was judged, False to try again."""
    skip = log_length(srv, before)
    socks = {'slow%d' % i: slow(srv.port, '127.0.0.%d' % (20 + i), i) for i in range(4)}
    time.sleep(0.005)
    socks['probe'] = send(srv.port, '127.0.0.19', PROBE)
    _, out = collect(socks)
    lines = logged_since(srv, skip, 5)
    probe = [l for l in lines if l.path == '/api/search']
    if len(probe) != 1 or probe[0].taken is None:
        F.check(False, 'the probe search is logged, taken by the worker (%s)'
                % [l.line for l in lines])
        return True
    probe = probe[0]
    if probe.taken - probe.arrived < 0.0011:
        return unmet(attempt, 'the probe search waited %.3f ms, not past its 1 ms deadline'
                     % ((probe.taken - probe.arrived) * 1e3))
    st, body = out['probe']
    cut = json.loads(body) if st == 200 else {}
    F.check(st == 200 and cut.get('partial') and cut.get('total') == 0 and
            re.search(r' work=0,0,\d+ deadline', probe.rest),
            '--deadline 1 passed while waiting: 200, partial, no results, no work (%s)'
            % probe.line)
    return True


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
        made = 2
        for attempt in range(1, ATTEMPTS + 1):
            if turns_case(srv, attempt, made):
                break
            made += 14
        made += 14
        for attempt in range(1, ATTEMPTS + 1):
            if gone_case(srv, attempt, made):
                break
            made += 5
    finally:
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    srv = F.Server(F.REAL_INDEX, work, '--cache-size', '0', '--deadline', '1', threads=1)
    try:
        for attempt in range(1, ATTEMPTS + 1):
            if deadline_case(srv, attempt, 5 * (attempt - 1)):
                break
    finally:
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    shutil.rmtree(work, ignore_errors=True)
    return F.finish('test_handoff', t0)


if __name__ == '__main__':
    sys.exit(main())
