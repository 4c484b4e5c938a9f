#!/usr/bin/env python3
"""The response cache is bounded by bytes and keyed on the normalized request.

1. With --cache-bytes 4M (and --cache-size 100000, so that only the byte bound binds), 2,000
   distinct large answers (limit=50, about 30 KB each: 60 MB if all were kept) leave the cache
   at most 4 MiB (atlas_cache_bytes), with evictions counted, and the server's resident memory
   grows by less than 4 MiB + 24 MiB of slack (allocator and SQLite page cache) over the run.
2. Spellings of one query share a key: "raft log", "raft  log", " raft\\tlog" and "raft%20log"
   give one ETag, and the second to fourth are cache hits; a trailing space (no prefix word) is
   a different query.
3. --cache-bytes takes K/M/G suffixes (accepted: the run goes on to the missing index, exit 1);
   a bad size or one over 64G is a usage error (exit 2); --cache-size over 100000 too.

Usage: test_cache_bytes.py (environment: see faultlib.py)
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

WORDS = ['hashing', 'cache', 'raft', 'consensus', 'shard', 'python', 'memory', 'compile', 'index',
         'queue', 'tensor', 'lock', 'graph', 'vector', 'network', 'design', 'system', 'data',
         'model', 'time']


def metric(srv, name):
    _, _, body = srv.request('/metrics')
    m = re.search(r'^%s (\d+)' % re.escape(name), body.decode(), re.M)
    return int(m.group(1)) if m else None


def main():
    F.need_env('ATLAS_SERVE', 'ATLAS_REAL_INDEX')
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix='atlas-cache-')
    bound = 4 << 20
    srv = F.Server(F.REAL_INDEX, work, '--cache-bytes', '4M', '--cache-size', '100000')
    try:
        conn = srv.connect()
        for w in WORDS:  # warm: the engines, the page cache, the allocator
            srv.request('/api/search?q=%s&limit=50&offset=1' % w, conn=conn)
        rss0 = F.rss_kib(srv.pid)
        sizes = []
        n = 0
        for i in range(100):
            for w in WORDS:
                st, _, body = srv.request('/api/search?q=%s+zq%d&limit=50' % (w, i), conn=conn)
                if st == 200:
                    sizes.append(len(body))
                n += 1
        rss1 = F.rss_kib(srv.pid)
        held = metric(srv, 'atlas_cache_bytes')
        total = sum(sizes)
        F.check(n == 2000 and len(sizes) == 2000, '2,000 distinct searches answered 200')
        F.check(total > 10 * bound, 'the answers add up to %.1f MB (%.0f KB on average)'
                % (total / 1e6, total / 1e3 / max(1, len(sizes))))
        F.check(metric(srv, 'atlas_cache_max_bytes') == bound, 'atlas_cache_max_bytes is 4 MiB')
        F.check(held is not None and 0 < held <= bound,
                'the cache holds %s bytes, at most 4 MiB' % held)
        F.check((metric(srv, 'atlas_cache_evictions_total') or 0) > 1000, 'evictions counted')
        F.check(rss1 - rss0 < (bound >> 10) + 24 * 1024,
                'resident memory grew by %d KiB (bound 4 MiB + 24 MiB slack)' % (rss1 - rss0))
        # one key for spellings of one query
        hits0 = metric(srv, 'atlas_cache_hits_total')
        tags = []
        for q in ['raft%20log', 'raft++log', '+raft%09log', 'raft+log']:
            st, h, _ = srv.request('/api/search?q=' + q, conn=conn)
            tags.append(h.get('etag'))
        F.check(len(set(tags)) == 1 and tags[0], 'four spellings of "raft log": one ETag (%s)'
                % sorted(set(tags)))
        F.check(metric(srv, 'atlas_cache_hits_total') - hits0 == 3, 'three of them cache hits')
        _, h, _ = srv.request('/api/search?q=raft+log+', conn=conn)
        F.check(h.get('etag') != tags[0], 'a trailing space is another query (no prefix word)')
        conn.close()
    finally:
        F.check(srv.stop() == 0, 'atlas-serve exits 0 on SIGTERM')
    missing = os.path.join(work, 'missing.db')
    for args, want in [(['--cache-bytes', '512K'], 1), (['--cache-bytes', '1G'], 1),
                       (['--cache-bytes', '0'], 1), (['--cache-bytes', '65G'], 2),
                       (['--cache-bytes', '12X'], 2), (['--cache-bytes', '-1'], 2),
                       (['--cache-size', '100001'], 2)]:
        r = subprocess.run([F.SERVE, '--index', missing, '--port', '0'] + args,
                           capture_output=True, text=True, timeout=10)
        F.check(r.returncode == want, '%s: exit %d (want %d: %s)' % (
            ' '.join(args), r.returncode, want, 'accepted' if want == 1 else 'usage error'))
    return F.finish('test_cache_bytes', t0)


if __name__ == '__main__':
    sys.exit(main())
