#!/usr/bin/env python3
"""Load with faults: atlas-serve under continuous load while its index is replaced every second.

Two builds of the real corpus (A, B, made beforehand) are renamed over the served path once a
second for 30 seconds, alternately, with a corrupt file (random bytes, or the first half of an
index) in place of every 5th replacement. Meanwhile 2 client threads send requests without pause
over keep-alive connections on 127.0.0.1 (search, suggest, next, healthz). Expected:

  - 0 failed requests: every response is a 200 with a valid body (JSON, the fields of its route,
    results for queries that always have some);
  - every good replacement is swapped in and every corrupt one refused (/healthz counters);
  - memory steady (sampled once a second, just before each replacement: settled, not during a
    swap): VmRSS of the server at the end at most 10 % above VmRSS a second after the
    first swap, and no rising floor (the lowest of the last third of the samples within 10 % of
    the first third's median: a leak of an engine a swap lifts every later sample, two engines
    coexisting for a moment only some); valgrind finds
    no leak in the swap path (test faults-valgrind);
  - bounded: the whole run takes under 60 s and stops by itself; SIGTERM exits 0.

Usage: test_swap_churn.py [--seconds N] (environment: see faultlib.py)
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

WARM_UP = 10  # the replacement after which VmRSS is the reference of the steady state
WORDS = ['consistent hashing', 'gil', 'consis', 'raft', 'cache', 'pallas kernel', 'shard_map',
         'tpu', 'load balancer', 'attention']


def request_of(i):
    """The i-th request: (path, validator of the parsed body)."""
    word = WORDS[i % len(WORDS)]
    qw = urllib.parse.quote(word)
    kind = i % 5
    if kind in (0, 1):
        return ('/api/search?q=%s&limit=%d' % (qw, 1 + i % 10),
                lambda d: d.get('query') == word and isinstance(d.get('results'), list)
                and d.get('total', 0) > 0 and len(d['results']) > 0
                and all('path' in r and 'title' in r for r in d['results']))
    if kind == 2:
        return ('/api/suggest?q=' + urllib.parse.quote(word[:4]),
                lambda d: isinstance(d.get('suggestions'), list))
    if kind == 3:
        return ('/api/next?path=/consistent-hashing',
                lambda d: d.get('path') == '/consistent-hashing'
                and isinstance(d.get('suggestions'), list) and len(d['suggestions']) > 0)
    return ('/healthz', lambda d: d.get('status') == 'ok' and d.get('pages') == 216)


def corrupt(path, n, good):
    """Writes a corrupt index to path: random bytes, or the first half of a good index."""
    with open(path, 'wb') as f:
        if n % 2:
            f.write(os.urandom(256 * 1024))
        else:
            with open(good, 'rb') as g:
                f.write(g.read(os.path.getsize(good) // 2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seconds', type=int, default=30)
    a = ap.parse_args()
    F.need_env('ATLAS_SERVE', 'ATLAS_QUERY', 'ATLAS_INDEX', 'ATLAS_REAL_INDEX', 'ATLAS_CORPUS')
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='atlas-swap-churn-') as work:
        served = os.path.join(work, 'atlas.db')
        staging = os.path.join(work, '.staging.db')
        a_db = os.path.join(work, 'a.db')
        shutil.copyfile(F.REAL_INDEX, a_db)
        b_db = F.build_index(os.path.join(work, 'b.db'))
        builds = {a_db: F.stats(a_db)['build_id'], b_db: F.stats(b_db)['build_id']}
        F.check(builds[a_db] != builds[b_db], 'two different builds: %s, %s'
                % (builds[a_db], builds[b_db]))
        shutil.copyfile(a_db, served)
        srv = F.Server(served, work, threads=2)

        stop = threading.Event()
        counts = {'ok': 0, 'failed': 0}
        errors = []
        lock = threading.Lock()

        def load(seed):
            conn = srv.connect()
            i = seed
            while not stop.is_set():
                i += 1
                path, valid = request_of(i)
                try:
                    status, _, body = srv.request(path, conn=conn)
                    err = None
                    if status != 200:
                        err = '%s: status %d %r' % (path, status, body[:200])
                    elif not valid(json.loads(body)):
                        err = '%s: unexpected body %r' % (path, body[:200])
                except Exception as e:  # reset, timeout, bad JSON: all failures
                    err = '%s: %r' % (path, e)
                    conn.close()
                    conn = srv.connect()
                with lock:
                    counts['failed' if err else 'ok'] += 1
                    if err and len(errors) < 10:
                        errors.append(err)
            conn.close()

        threads = [threading.Thread(target=load, args=(k * 7,), daemon=True) for k in range(2)]
        for t in threads:
            t.start()
        good = refused = 0
        rss_first = rss_warm = None
        rss_samples = []
        try:
            h_start = srv.health()
            start = time.monotonic()
            for n in range(1, a.seconds + 1):
                # one replacement per second, on the second
                time.sleep(max(0.0, start + n - time.monotonic()))
                # sampled before this replacement, a second after the previous one: settled,
                # not in the middle of a swap (which holds the new build's warm engines beside
                # the old ones until the workers have moved)
                if n > 1:
                    rss_samples.append(F.rss_kib(srv.pid))
                    if n - 1 == WARM_UP:
                        rss_warm = rss_samples[-1]
                if n == 2:
                    # a second after the first swap, settled as the end is: every worker has
                    # reopened on the new build and the old build is gone
                    rss_first = F.rss_kib(srv.pid)
                if n % 5 == 0:
                    corrupt(staging, n // 5, a_db)
                    os.rename(staging, served)
                    refused += 1
                    want = None
                else:
                    good += 1
                    src = b_db if good % 2 else a_db
                    F.replace(served, src, staging)
                    want = builds[src]
                if want and n == 1:
                    F.check(F.wait_for(lambda: srv.health()['build_id'] == want, 3),
                            'the first swap is served within 3 s')

            # the last replacement is seen, then load stops
            time.sleep(1.2)
        finally:
            stop.set()
            for t in threads:
                t.join(F.TIMEOUT)
        rss_end = F.rss_kib(srv.pid)
        _, anon_end, file_end = F.rss_parts(srv.pid)
        h_end = srv.health()
        elapsed = time.monotonic() - t0
        print('requests: %d ok, %d failed (%.0f/s); replacements: %d good, %d corrupt'
              % (counts['ok'], counts['failed'], counts['ok'] / max(1, a.seconds), good, refused))
        print('healthz: swaps %d -> %d, swaps_refused %d -> %d, generation %d, last_swap_error %r'
              % (h_start['swaps'], h_end['swaps'], h_start['swaps_refused'],
                 h_end['swaps_refused'], h_end['generation'], h_end['last_swap_error']))
        def pct(x, ref):
            return 100.0 * (x - ref) / ref if ref else 0.0
        print('VmRSS (KiB): after the first swap %s, after replacement %d %s, at the end %d '
              '(%+.1f %% of the first, %+.1f %% of the warm-up), min %d, max %d'
              % (rss_first, WARM_UP, rss_warm, rss_end, pct(rss_end, rss_first),
                 pct(rss_end, rss_warm), min(rss_samples), max(rss_samples)))
        print('VmRSS samples, one a second before each replacement: %s' % ' '.join(str(x) for x in rss_samples))
        print('at the end: RssAnon %d KiB, RssFile %d KiB' % (anon_end, file_end))
        F.check(counts['failed'] == 0,
                '0 failed requests (%d failed: %s)' % (counts['failed'], errors))
        F.check(counts['ok'] > 20 * a.seconds, 'requests were made (%d)' % counts['ok'])
        F.check(h_end['swaps'] - h_start['swaps'] == good,
                'every good replacement swapped in (%d of %d)'
                % (h_end['swaps'] - h_start['swaps'], good))
        F.check(h_end['swaps_refused'] - h_start['swaps_refused'] == refused,
                'every corrupt replacement refused (%d of %d)'
                % (h_end['swaps_refused'] - h_start['swaps_refused'], refused))
        last_src = b_db if good % 2 else a_db
        F.check(h_end['build_id'] == builds[last_src], 'the last good build is served')
        # a leak raises the floor of the samples: a sample taken while a swap's engines coexist
        # (the watcher warming the workers' engines behind a loaded machine) runs higher for a
        # moment and is no leak, nor is a lower figure at the end, once the load has stopped
        head = sorted(rss_samples[:len(rss_samples) // 3])
        tail = sorted(rss_samples[len(rss_samples) * 2 // 3:])
        mid_head = head[len(head) // 2] if head else 0
        F.check(head and tail and tail[0] <= 1.10 * mid_head,
                'memory steady: the last third\'s lowest sample within 10 %% of the first third\'s '
                'median (%d -> %d KiB)' % (mid_head, tail[0] if tail else 0))
        F.check(rss_first is not None and rss_end <= 1.10 * rss_first,
                'memory steady: VmRSS at the end at most 10 %% above after the first swap (%s -> %d KiB)'
                % (rss_first, rss_end))
        status = srv.stop()
        F.check(status == 0, 'SIGTERM: exit 0 (got %r)' % status)
        F.check(elapsed < 60, 'bounded: the run took %.1f s (< 60 s)' % elapsed)
        if F.failures:
            print('--- server stderr ---\n' + srv.stderr_text()[-3000:])
    return F.finish('swap-churn', t0)


if __name__ == '__main__':
    sys.exit(main())
