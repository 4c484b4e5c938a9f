#!/usr/bin/env python3
"""valgrind memcheck over the three programs.

Every run: valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite, and its
log must say 0 errors and 0 bytes definitely lost.

  - atlas-index over the real corpus (a full build, into a temporary directory);
  - atlas-query on the index it built: searches (plain, --json, phrase, exclusion, typo, prefix,
    filters, paging, --explain, hostile text), --next (plain, --guide, --seen), --suggest, --stats;
  - atlas-serve (2 threads, 127.0.0.1): every endpoint, one hot swap, one refused swap (a corrupt
    file), SIGTERM: exit 0 (the swap path is where a leak would make memory grow).

Usage: test_valgrind.py [--valgrind PATH] (environment: see faultlib.py)
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

VG_FLAGS = ['--error-exitcode=1', '--leak-check=full', '--errors-for-leak-kinds=definite']

QUERY_RUNS = [
    ['consistent', 'hashing'],
    ['--json', 'consistent', 'hashing'],
    ['--json', '--', '"consistent hashing"'],
    ['--json', '--', 'cache -redis'],
    ['--json', 'consistnt', 'hashng'],
    ['--json', 'consis'],
    ['--json', 'how', 'does', 'the', 'gil', 'work'],
    ['--json', '--type', 'guide', '--topic', 'systems', '--limit', '3', '--offset', '1', 'cache'],
    ['--explain', 'shard_map'],
    ['--json', '--', '<script>"(((* NEAR( -- \u00e9\u00e9 \U0001F600 k8s'],
    ['--json', '--next', '/consistent-hashing'],
    ['--next', '/consistent-hashing', '--seen', '/,/library,/no-such-page'],
    ['--suggest', 'cons'],
    ['--json', '--suggest', 'k8'],
    ['--stats'],
    ['--json', '--stats'],
]


def summary(log):
    """(errors, definitely lost bytes) from a valgrind log."""
    with open(log, errors='replace') as f:
        text = f.read()
    m = re.search(r'ERROR SUMMARY: ([\d,]+) errors', text)
    errors = int(m.group(1).replace(',', '')) if m else None
    if 'All heap blocks were freed -- no leaks are possible' in text:
        lost = 0
    else:
        m = re.search(r'definitely lost: ([\d,]+) bytes', text)
        lost = int(m.group(1).replace(',', '')) if m else None
    return errors, lost, text


def judge(what, rc, log, want_rc=0):
    errors, lost, text = summary(log)
    ok = rc == want_rc and errors == 0 and lost == 0
    F.check(ok, '%s: exit %s, %s errors, %s bytes definitely lost' % (what, rc, errors, lost))
    if not ok:
        print('--- %s ---\n%s' % (log, text[-6000:]))


def valgrind(vg, log, cmd, **kw):
    return subprocess.run([vg] + VG_FLAGS + ['--log-file=' + log] + cmd, **kw)


def guide_of(index):
    """A guide slug and one of its steps, for --next --guide."""
    import sqlite3
    db = sqlite3.connect('file:%s?mode=ro' % index, uri=True)
    try:
        row = db.execute("SELECT path FROM docs WHERE type='guide' ORDER BY path LIMIT 1").fetchone()
    finally:
        db.close()
    return row[0].lstrip('/') if row else None


def serve_run(vg, work, index):
    served = os.path.join(work, 'served.db')
    shutil.copyfile(index, served)
    log = os.path.join(work, 'vg-serve.log')
    proc = subprocess.Popen([vg] + VG_FLAGS + ['--log-file=' + log, F.SERVE, '--index', served,
                            '--bind', '127.0.0.1', '--port', '0', '--threads', '2', '--log',
                            os.devnull], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stdout.readline().decode()
        m = re.search(r'http://127\.0\.0\.1:(\d+)/', line)
        if not F.check(m is not None, 'atlas-serve under valgrind starts: %r' % line):
            return
        base = 'http://127.0.0.1:%s' % m.group(1)

        def get(path):
            try:
                with urllib.request.urlopen(base + path, timeout=60) as r:
                    return r.status, r.read()
            except urllib.error.HTTPError as e:
                return e.code, e.read()

        def health():
            import json
            return json.loads(get('/healthz')[1])

        paths = ['/api/search?q=consistent%20hashing', '/api/search?q=cache&type=guide&limit=2',
                 '/api/search?q=consistnt', '/api/suggest?q=cons',
                 '/api/next?path=/consistent-hashing', '/healthz', '/metrics', '/', '/atlas.js',
                 '/nope', '/api/search?q=' + 'a' * 300, '/api/search?q=%00%ff%zz']
        for path in paths * 2:  # twice: the second time from the response cache
            status, _ = get(path)
            F.check(status < 500, 'under valgrind: %s -> %d' % (path[:50], status))
        h0 = health()
        new = F.build_index(os.path.join(work, 'rebuilt.db'))
        F.replace(served, new, os.path.join(work, 'staging.db'))
        proc.send_signal(signal.SIGHUP)
        F.check(F.wait_for(lambda: health()['swaps'] == h0['swaps'] + 1, 20, 0.2),
                'under valgrind: the new index is swapped in')
        for path in paths[:5]:
            F.check(get(path)[0] == 200, 'under valgrind, after the swap: %s' % path)
        with open(os.path.join(work, 'staging.db'), 'wb') as f:
            f.write(os.urandom(64 * 1024))
        os.rename(os.path.join(work, 'staging.db'), served)
        proc.send_signal(signal.SIGHUP)
        F.check(F.wait_for(lambda: health()['swaps_refused'] == h0['swaps_refused'] + 1, 20, 0.2),
                'under valgrind: the corrupt index is refused')
        F.check(get(paths[0])[0] == 200, 'under valgrind, after the refusal: still answered')
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(120)
    except Exception:
        proc.kill()
        proc.wait()
        raise
    finally:
        proc.stdout.close()
        proc.stderr.close()
    judge('atlas-serve (endpoints, a swap, a refusal, SIGTERM)', rc, log)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--valgrind', default=shutil.which('valgrind') or 'valgrind')
    a = ap.parse_args()
    F.need_env('ATLAS_SERVE', 'ATLAS_QUERY', 'ATLAS_INDEX', 'ATLAS_CORPUS')
    t0 = time.monotonic()
    vg = a.valgrind
    with tempfile.TemporaryDirectory(prefix='atlas-valgrind-') as work:
        index = os.path.join(work, 'atlas.db')
        log = os.path.join(work, 'vg-index.log')
        t = time.monotonic()
        p = valgrind(vg, log, [F.INDEXER, '--corpus', F.CORPUS, '--out', index, '--strict'],
                     capture_output=True, text=True, timeout=240)
        print('  atlas-index under valgrind: %.1f s; %s' % (time.monotonic() - t,
                                                          p.stdout.strip().splitlines()[-1:]))
        judge('atlas-index --corpus (real corpus) --strict', p.returncode, log)
        if not os.path.exists(index):
            return F.finish('valgrind', t0)

        runs = list(QUERY_RUNS)
        guide = guide_of(index)
        if guide:
            runs.append(['--json', '--next', '/consistent-hashing', '--guide', guide])
        for i, args in enumerate(runs):
            log = os.path.join(work, 'vg-query-%d.log' % i)
            p = valgrind(vg, log, [F.QUERY, '--index', index] + args, capture_output=True,
                         timeout=120)
            judge('atlas-query %s' % ' '.join(args)[:70], p.returncode, log)
            F.check(len(p.stdout) > 0, 'atlas-query %s: printed an answer' % ' '.join(args)[:40])
        serve_run(vg, work, index)
    return F.finish('valgrind', t0)


if __name__ == '__main__':
    sys.exit(main())
