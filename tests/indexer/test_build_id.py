#!/usr/bin/env python3
"""The build id is the content's: two builds of one corpus have the same build_id (and atlas-serve
the same ETags, a client's If-None-Match still answered 304 after the rebuilt file is swapped in),
while built_at moves on; one changed word in a page, or one changed sitemap entry, gives a new id,
and the word changed back gives the first id again.

Usage: test_build_id.py --indexer ATLAS_INDEX --serve ATLAS_SERVE --mini tests/corpora/mini
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from serverlib import Server  # noqa: E402

failures = 0


def check(cond, what):
    """Prints an ok/FAIL line for what; counts a failure. Returns cond."""
    global failures
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    failures += 0 if cond else 1
    return cond


def build(indexer, corpus, out):
    """Builds corpus into out. Returns its meta table as a dict; raises when atlas-index fails."""
    p = subprocess.run([indexer, '--corpus', corpus, '--out', out, '--quiet'],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f'atlas-index --corpus {corpus} exited {p.returncode}: {p.stderr.strip()}')
    db = sqlite3.connect(out)
    try:
        return dict(db.execute('SELECT key, value FROM meta'))
    finally:
        db.close()


def edit(path, old, new):
    """Replaces the first old in the file at path by new (old must be there)."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    if old not in text:
        raise RuntimeError(f'{path}: {old!r} not found')
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text.replace(old, new, 1))


def wait_for(fn, seconds):
    """Polls fn until it is true or seconds pass. Returns its last value."""
    end = time.monotonic() + seconds
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.05)


def serve_check(serve, first, rebuilt, work):
    """Serves first, then renames rebuilt (the same corpus built again) over it: the swap happens,
    and the ETag of a search stays and still gives 304."""
    served = os.path.join(work, 'served.db')
    shutil.copyfile(first, served)
    srv = Server(served, work, serve=serve)
    try:
        h0 = srv.health()
        path = '/api/search?q=cache'
        status, headers, _ = srv.request(path)
        etag = headers.get('etag', '')
        check(status == 200 and etag.startswith(f'W/"{h0["build_id"]}-'),
              f'the ETag carries the build id: {etag}')
        staged = os.path.join(work, 'staged.db')
        shutil.copyfile(rebuilt, staged)
        os.rename(staged, served)
        check(wait_for(lambda: srv.health()['generation'] == h0['generation'] + 1, 5),
              'the rebuilt index is swapped in (generation +1)')
        h1 = srv.health()
        check(h1['build_id'] == h0['build_id'] and h1['built_at'] != h0['built_at'],
              f'/healthz after the swap: same build_id {h1["build_id"]}, '
              f'built_at {h0["built_at"]} -> {h1["built_at"]}')
        status, headers, _ = srv.request(path)
        check(status == 200 and headers.get('etag') == etag,
              f'the same ETag after the swap ({headers.get("etag")})')
        status, headers, body = srv.request(path, headers={'If-None-Match': etag})
        check(status == 304 and body == b'', f'If-None-Match with the old ETag: {status}')
    finally:
        rc = srv.stop()
        check(rc == 0, f'atlas-serve exits 0 on SIGTERM (got {rc})')


def main():
    """Runs the checks on a copy of --mini. Returns the exit status: 1 when any failed."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--indexer', required=True)
    ap.add_argument('--serve', required=True)
    ap.add_argument('--mini', required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix='atlas-build-id-') as work:
        corpus = os.path.join(work, 'corpus')
        shutil.copytree(a.mini, corpus)
        m1 = build(a.indexer, corpus, os.path.join(work, 'one.db'))
        time.sleep(1.1)  # built_at has one-second steps
        m2 = build(a.indexer, corpus, os.path.join(work, 'two.db'))
        check(m1['build_id'] == m2['build_id'] and len(m1['build_id']) == 16,
              f'two builds of one corpus: the same build_id {m1["build_id"]} / {m2["build_id"]}')
        check(m1['built_at'] != m2['built_at'],
              f'built_at still changes: {m1["built_at"]} -> {m2["built_at"]}')
        check(m1['corpus_digest'] == m2['corpus_digest'], f'and the same corpus digest {m1["corpus_digest"]}')

        page = os.path.join(corpus, 'explainers', 'lru-cache.md')
        edit(page, 'a good guess', 'a fair guess')
        m3 = build(a.indexer, corpus, os.path.join(work, 'three.db'))
        check(m3['build_id'] not in (m1['build_id'], ''),
              f'one word changed in a page body: a new build_id {m3["build_id"]}')
        edit(page, 'a fair guess', 'a good guess')
        m4 = build(a.indexer, corpus, os.path.join(work, 'four.db'))
        check(m4['build_id'] == m1['build_id'], f'the word changed back: the first build_id again ({m4["build_id"]})')

        sitemap = os.path.join(corpus, 'sitemap.xml')
        edit(sitemap, '<loc>https://example.test/t/ml/jax</loc><lastmod>2026-07-13</lastmod><changefreq>monthly</changefreq><priority>0.7',
             '<loc>https://example.test/t/ml/jax</loc><lastmod>2026-07-13</lastmod><changefreq>monthly</changefreq><priority>0.6')
        m5 = build(a.indexer, corpus, os.path.join(work, 'five.db'))
        check(m5['build_id'] not in (m1['build_id'], m3['build_id']),
              f'one sitemap priority changed (a topic page\'s): a new build_id {m5["build_id"]}')

        serve_check(a.serve, os.path.join(work, 'one.db'), os.path.join(work, 'two.db'), work)
    print(f'{failures} failed' if failures else 'all passed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
