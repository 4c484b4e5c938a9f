#!/usr/bin/env python3
"""Hot swap without a stall (real corpus, atlas-serve --threads 2, response cache off).

Two keep-alive clients search without pause while the served index is replaced 8 times (two
builds alternately, 0.6 s apart). No worker opens an engine on its request path: after a swap
the workers answer with the validated engine (warm: one search ran on it) until the watcher has
opened and warmed one engine for each of the others, which they then take. So:
  - every request is answered 200 and every replacement is swapped in;
  - settled after the swaps, atlas_engine_warm_misses_total (requests that waited for the
    shared engine) no longer grows: every worker has a warm engine of its own;
  - the latency of the requests in the 200 ms after each swap is counted against 10 ms and
    printed beside the rest (for docs/RELIABILITY.md; not asserted: the machine is shared).
The first request of each worker after start counts too: the server's workers have their warm
engine before it listens, so before /healthz answers.

Usage: test_swap_warm.py (environment: see faultlib.py)
"""
import os
import re
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

QUERIES = ['raft', 'consistent hashing', 'kv cache', 'gil', 'bloom filter', 'vmap', 'paxos']


def metric(srv, name):
    _, _, body = srv.request('/metrics')
    m = re.search(r'^%s (\d+)' % re.escape(name), body.decode(), re.M)
    return int(m.group(1)) if m else None


def main():
    F.need_env('ATLAS_SERVE', 'ATLAS_REAL_INDEX', 'ATLAS_INDEX', 'ATLAS_CORPUS')
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix='atlas-warm-')
    a_db = os.path.join(work, 'a.db')
    F.replace(a_db, F.REAL_INDEX, os.path.join(work, '.a.tmp'))
    b_db = F.build_index(os.path.join(work, 'b.db'))
    served = os.path.join(work, 'atlas.db')
    F.replace(served, a_db, os.path.join(work, '.s.tmp'))
    srv = F.Server(served, work, '--cache-size', '0', threads=2)
    samples = []  # (monotonic end, seconds, status)
    lock = threading.Lock()
    stop = threading.Event()

    def load(k):
        conn = srv.connect()
        i = k
        while not stop.is_set():
            q = QUERIES[i % len(QUERIES)].replace(' ', '+')
            i += 1
            t = time.monotonic()
            try:
                st, _, _ = srv.request('/api/search?q=%s' % q, conn=conn)
            except OSError:
                st = 0
                conn = srv.connect()
            e = time.monotonic()
            with lock:
                samples.append((e, e - t, st))
        conn.close()
    try:
        ts = [threading.Thread(target=load, args=(k,)) for k in range(2)]
        for t in ts:
            t.start()
        time.sleep(0.5)
        swaps_at = []
        for n in range(8):
            F.replace(served, b_db if n % 2 == 0 else a_db, os.path.join(work, '.s.tmp'))
            want = n + 1
            F.wait_for(lambda: srv.health()['swaps'] >= want, 5)
            swaps_at.append(time.monotonic())
            time.sleep(0.6)
        # settled: each worker has its own warm engine again, so none waits for the shared one
        time.sleep(1.0)
        waits_settled = metric(srv, 'atlas_engine_warm_misses_total')
        time.sleep(1.5)
        waits_after = metric(srv, 'atlas_engine_warm_misses_total')
        stop.set()
        for t in ts:
            t.join()
        h = srv.health()
        F.check(h['swaps'] == 8, '8 replacements swapped in (%d)' % h['swaps'])
        F.check(all(s[2] == 200 for s in samples) and len(samples) > 100,
                '%d requests during the swaps, all 200' % len(samples))
        F.check(waits_after == waits_settled,
                'settled after the swaps, no request waits for the shared engine (%d waits in '
                'all, %d in the last 1.5 s)' % (waits_after, waits_after - waits_settled))
        near = [s for s in samples if any(0 <= s[0] - at <= 0.2 for at in swaps_at)]
        slow_near = sum(1 for s in near if s[1] > 0.010)
        slow_all = sum(1 for s in samples if s[1] > 0.010)
        worst = max(s[1] for s in near) if near else 0
        print('info: %d requests in the 200 ms after the 8 swaps, %d slower than 10 ms (worst '
              '%.1f ms); %d of all %d requests slower than 10 ms' % (
                  len(near), slow_near, worst * 1e3, slow_all, len(samples)), flush=True)
    finally:
        stop.set()
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    return F.finish('test_swap_warm', t0)


if __name__ == '__main__':
    sys.exit(main())
