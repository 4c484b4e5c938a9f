#!/usr/bin/env python3
"""atlas-index replaces the index atomically.

1. Failed builds leave the index alone (on a copy of the mini corpus):
   - build mini into out.db and record its sha256;
   - break the corpus (invalid JSON front matter) and build again: exit 1, out.db byte-for-byte
     unchanged, no .out.db.tmp.* file left;
   - an --out that cannot be renamed over (a directory) fails with exit 1 and leaves no temp file;
   - leftovers of killed builds: .out.db.tmp.<dead pid> (and its -journal) are removed by the next
     good build, .out.db.tmp.<live pid> (a build still running) is kept; the good build replaces
     out.db (new sha256 and build_id) and meta.schema_version is ATLAS_SCHEMA_VERSION (common/schema.h).
2. kill -9 during builds of the real corpus: with a fixed seed, 20 builds are killed at random
   moments within the measured build time; after each one the live index still opens, passes
   PRAGMA quick_check, and is either byte-for-byte the old one with the old build_id or, when the
   kill landed after the build's rename (while the process was still freeing memory and exiting,
   which takes a while under the sanitizers), a complete new index; at least half of the kills
   land before the rename. A reader that kept the index open all along still reads it. A final
   good build leaves no temporary file.

Usage: test_atomic.py --indexer PATH --mini DIR --corpus DIR [--kills N] [--seed S]
"""
import argparse
import hashlib
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

# the schema version this build writes, from the header that defines it
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'schema.h')) as f:
    SCHEMA_VERSION = re.search(r'#define ATLAS_SCHEMA_VERSION (\d+)', f.read()).group(1)
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checklib import check, failures  # noqa: E402


def sha256(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def meta(path):
    db = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
    try:
        return dict(db.execute('SELECT key, value FROM meta').fetchall())
    finally:
        db.close()


def quick_check(path):
    db = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
    try:
        return db.execute('PRAGMA quick_check').fetchone()[0]
    finally:
        db.close()


def temps(directory, base):
    return sorted(f for f in os.listdir(directory) if f.startswith(f'.{base}.tmp.'))


def run(indexer, corpus, out, *extra):
    p = subprocess.run([indexer, '--corpus', corpus, '--out', out, '--quiet', *extra],
                       capture_output=True, text=True, errors='replace', timeout=120)
    return p.returncode, p.stderr


def dead_pid():
    for pid in (999999, 999998, 4194303, 4194302):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
    raise RuntimeError('no free pid found for a fake leftover')


def failed_builds(indexer, mini, work):
    corpus = os.path.join(work, 'corpus')
    shutil.copytree(mini, corpus)
    idx = os.path.join(work, 'idx')
    os.mkdir(idx)
    out = os.path.join(idx, 'out.db')

    rc, err = run(indexer, corpus, out)
    if not check(rc == 0 and os.path.exists(out), f'mini builds into out.db (exit {rc}) {err.strip()}'):
        return
    sha0, id0 = sha256(out), meta(out).get('build_id')

    page = os.path.join(corpus, 'explainers', 'lru-cache.md')
    with open(page, encoding='utf-8') as f:
        good = f.read()
    with open(page, 'w', encoding='utf-8') as f:
        f.write(good.replace('"description":', '"description"', 1))
    rc, err = run(indexer, corpus, out)
    check(rc == 1, f'a build of a broken corpus exits 1 (got {rc})')
    check('invalid JSON in front matter' in err, 'it says why: invalid JSON in front matter')
    check(sha256(out) == sha0, 'out.db is byte-for-byte unchanged')
    check(temps(idx, 'out.db') == [], f'no temporary file is left: {temps(idx, "out.db")}')

    blocker = os.path.join(idx, 'blocked.db')
    os.makedirs(os.path.join(blocker, 'keep'))
    with open(page, 'w', encoding='utf-8') as f:
        f.write(good)
    rc, err = run(indexer, corpus, blocker)
    check(rc == 1 and 'cannot rename into place' in err,
          f'a build whose rename fails exits 1 with a message (got {rc}: {err.strip()[:120]})')
    check(temps(idx, 'blocked.db') == [], f'and leaves no temporary file: {temps(idx, "blocked.db")}')

    # leftovers: one of a killed build (dead pid, with a journal), one of a build still running
    dead = dead_pid()
    stale = [f'.out.db.tmp.{dead}', f'.out.db.tmp.{dead}-journal']
    running = f'.out.db.tmp.{os.getpid()}'
    for name in stale + [running]:
        with open(os.path.join(idx, name), 'wb') as f:
            f.write(b'partial index')
    # a real edit, so the new index differs whatever the clock says
    with open(page, 'w', encoding='utf-8') as f:
        f.write(good.replace('in O(1).', 'in constant time.', 1))
    rc, err = run(indexer, corpus, out)
    check(rc == 0, f'a good build exits 0 (got {rc}) {err.strip()}')
    left = temps(idx, 'out.db')
    check(not set(stale) & set(left), f'it removes the leftovers of a killed build (pid {dead}): {left}')
    check(running in left, 'it keeps the temporary file of a build still running (a live pid)')
    os.remove(os.path.join(idx, running))
    check(sha256(out) != sha0, 'out.db is replaced (new sha256)')
    m = meta(out)
    check(m.get('build_id') not in (None, id0), f'with a new build_id ({id0} -> {m.get("build_id")})')
    check(m.get('schema_version') == SCHEMA_VERSION,
          f"meta schema_version is '{SCHEMA_VERSION}' (got {m.get('schema_version')!r})")
    check(quick_check(out) == 'ok', 'the new index passes PRAGMA quick_check')


def killed_builds(indexer, real, work, kills, seed):
    live_dir = os.path.join(work, 'live')
    os.mkdir(live_dir)
    live = os.path.join(live_dir, 'atlas.db')
    t0 = time.monotonic()
    rc, err = run(indexer, real, live)
    duration = time.monotonic() - t0
    if not check(rc == 0, f'the real corpus builds (exit {rc}, {duration:.2f} s) {err.strip()[:300]}'):
        return
    sha0, m0 = sha256(live), meta(live)
    print(f'     baseline build_id {m0.get("build_id")}, {m0.get("pages")} pages, build {duration:.2f} s')

    reader = sqlite3.connect(f'file:{live}?mode=ro', uri=True)
    rng = random.Random(seed)
    killed_pids, real_kills, before_rename = [], 0, 0
    for i in range(kills):
        delay = rng.uniform(0.05, 0.9) * duration
        proc = subprocess.Popen([indexer, '--corpus', real, '--out', live, '--quiet'],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        running = proc.poll() is None
        proc.kill()
        rc = proc.wait()
        killed = rc == -9
        real_kills += killed
        if killed:
            killed_pids.append(proc.pid)
        what = f'kill {i + 1} at {delay * 1000:.0f} ms (pid {proc.pid}, ' + \
            ('killed' if killed else f'had already exited {rc}') + ')'
        try:
            m = meta(live)
            qc = quick_check(live)
        except sqlite3.Error as e:
            check(False, f'{what}: the live index does not open: {e}')
            continue
        unchanged = sha256(live) == sha0
        # the build id is the content's, the same for every build of this corpus: only the bytes
        # (built_at among them) tell the old file from a new one
        if killed and running and unchanged:
            before_rename += 1
            check(qc == 'ok' and m.get('build_id') == m0.get('build_id'),
                  f'{what}: index opens (quick_check {qc}), same build_id, unchanged bytes')
        elif killed and running:
            # killed after its rename, on the way out: the new index must be complete
            check(qc == 'ok' and m.get('pages') == m0.get('pages'),
                  f'{what}, after the rename: a complete index replaced the old one (quick_check {qc})')
            sha0, m0 = sha256(live), m
        else:
            # the build finished before the kill landed: the new index must be complete
            check(qc == 'ok' and m.get('pages') == m0.get('pages'),
                  f'{what}: a complete index replaced the old one (quick_check {qc})')
            sha0, m0 = sha256(live), m
        try:
            n = reader.execute('SELECT count(*) FROM docs').fetchone()[0]
            check(str(n) == m0.get('pages'), f'{what}: a reader holding the index still reads {n} docs')
        except sqlite3.Error as e:
            check(False, f'{what}: a reader holding the index fails: {e}')
    reader.close()
    check(real_kills >= kills // 2, f'{real_kills} of {kills} builds were killed while running')
    check(before_rename >= kills // 2, f'{before_rename} of {kills} builds were killed before their rename')
    left = temps(live_dir, 'atlas.db')
    print(f'     leftovers of killed builds: {left}')
    check(all(int(f.split('.tmp.')[1].split('-')[0]) in killed_pids for f in left),
          'every leftover belongs to a killed build')

    rc, err = run(indexer, real, live)
    check(rc == 0, f'a final good build exits 0 (got {rc}) {err.strip()[:300]}')
    check(temps(live_dir, 'atlas.db') == [], f'no temporary file remains: {temps(live_dir, "atlas.db")}')
    check(os.listdir(live_dir) == ['atlas.db'], f'the directory holds only atlas.db: {os.listdir(live_dir)}')
    m = meta(live)
    check(quick_check(live) == 'ok' and m.get('schema_version') == SCHEMA_VERSION and m.get('pages') == m0.get('pages'),
          f'the final index is complete ({m.get("pages")} pages, build_id {m.get("build_id")})')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    ap.add_argument('--indexer', required=True)
    ap.add_argument('--mini', required=True, help='the valid mini corpus')
    ap.add_argument('--corpus', required=True, help='the real corpus')
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument('--seed', type=int, default=20260713)
    a = ap.parse_args()
    indexer = os.path.abspath(a.indexer)
    with tempfile.TemporaryDirectory(prefix='atlas-atomic-') as work:
        print('# failed builds (mini corpus)')
        failed_builds(indexer, os.path.abspath(a.mini), work)
        print(f'# kill -9 during builds (real corpus, seed {a.seed})')
        killed_builds(indexer, os.path.abspath(a.corpus), work, a.kills, a.seed)
    print(f'{len(failures)} failure(s)' if failures else 'all checks passed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
