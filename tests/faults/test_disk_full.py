#!/usr/bin/env python3
"""Disk full while building: atlas-index over the real corpus under a file-size limit.

`ulimit -f` (RLIMIT_FSIZE) with SIGXFSZ ignored makes write(2) fail with EFBIG past the limit, as
it would fail with ENOSPC on a full disk: the same failed write reaches SQLite and atlas-index.
With a good index already at --out, for limits of 200 KiB, 1 KiB, 64 KiB and 25/50/90 % of the
index size (~3.7 MiB):

  - exit status 1, a message on stderr that names the file (the index path) and says it is an
    I/O error, and that the previous index is untouched;
  - the old index byte-for-byte intact (sha256), still a valid Atlas index;
  - no temporary file (.atlas.db.tmp.PID, or its -journal) left behind.

Also: with SIGXFSZ at its default (the process is killed by the signal, as a crash would kill
it), the old index is intact and the next good build removes the leftover of the killed build;
--check (writes nothing) passes under `ulimit -f 0`; and a build without a limit then replaces the
index.

Usage: test_disk_full.py (environment: see faultlib.py)
"""
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

# 200 KiB (the limit of the issue), tiny ones, and fractions of the index size
LIMITS_KIB = [200, 1, 64]
FRACTIONS = [0.25, 0.5, 0.9]


def limited(kib, out, ignore_xfsz=True, extra=()):
    """Runs atlas-index on the real corpus into out under `ulimit -f kib` (in 1 KiB blocks, as
    bash counts them). Returns the CompletedProcess (stderr is a pipe: not limited)."""
    trap = "trap '' XFSZ; " if ignore_xfsz else ''
    cmd = [F.INDEXER, '--corpus', F.CORPUS, '--out', out] + list(extra)
    script = '%sulimit -f %d; exec %s' % (trap, kib, ' '.join(shlex.quote(c) for c in cmd))
    return subprocess.run(['bash', '-c', script], capture_output=True, text=True,
                          errors='replace', timeout=120)


def meta(path):
    db = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    try:
        return dict(db.execute('SELECT key, value FROM meta').fetchall()), \
            db.execute('PRAGMA quick_check').fetchone()[0]
    finally:
        db.close()


def main():
    F.need_env('ATLAS_INDEX', 'ATLAS_REAL_INDEX', 'ATLAS_CORPUS')
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='atlas-disk-full-') as work:
        live = os.path.join(work, 'live')
        os.mkdir(live)
        out = os.path.join(live, 'atlas.db')
        shutil.copyfile(F.REAL_INDEX, out)
        sha0 = F.sha256(out)
        ino0 = os.stat(out).st_ino
        m0, _ = meta(out)
        print('# the existing index: %d bytes, build %s' % (os.path.getsize(out), m0['build_id']))

        size_kib = os.path.getsize(out) // 1024
        for kib in LIMITS_KIB + [int(size_kib * f) for f in FRACTIONS]:
            p = limited(kib, out)
            err = p.stderr.strip()
            what = 'ulimit -f %d KiB' % kib
            print('  %s: exit %d, stderr: %s' % (what, p.returncode, err.replace('\n', ' | ')))
            F.check(p.returncode == 1, '%s: exit 1 (got %d)' % (what, p.returncode))
            F.check(live in err and 'atlas.db' in err, '%s: the message names the file' % what)
            F.check(re.search(r'I/O error|File too large|No space left', err, re.I) is not None,
                    '%s: the message says it is an I/O error' % what)
            F.check('previous index is untouched' in err, '%s: and that the old index is kept' % what)
            F.check(re.search(r'(?i)(assert|segmentation|sanitizer|abort)', err) is None,
                    '%s: no crash' % what)
            F.check(F.sha256(out) == sha0, '%s: the old index is byte-for-byte intact' % what)
            F.check(os.listdir(live) == ['atlas.db'],
                    '%s: no temporary file left (%s)' % (what, sorted(os.listdir(live))))
        m, qc = meta(out)
        F.check(qc == 'ok' and m['build_id'] == m0['build_id'],
                'after the failed builds the old index passes quick_check, same build_id')

        # SIGXFSZ not ignored: the build is killed by the signal; the old index stays, the
        # leftover temp file is removed by the next good build
        p = limited(200, out, ignore_xfsz=False)
        print('  SIGXFSZ at default: exit %d' % p.returncode)
        F.check(p.returncode in (-25, 128 + 25, 128 + 25 + 128),
                'SIGXFSZ at default: killed by SIGXFSZ (got %d)' % p.returncode)
        F.check(F.sha256(out) == sha0, 'SIGXFSZ: the old index is byte-for-byte intact')
        print('  leftovers of the killed build: %s' % F.temps(live, 'atlas.db'))

        # --check writes nothing: it works with no room at all
        p = limited(0, out, extra=['--check', '--quiet'])
        F.check(p.returncode == 0, '--check under ulimit -f 0: exit 0 (got %d) %s'
                % (p.returncode, p.stderr.strip()[:200]))
        F.check(F.sha256(out) == sha0, '--check: the index is unchanged')

        # room again: the build goes through and cleans up after the killed one
        p = subprocess.run([F.INDEXER, '--corpus', F.CORPUS, '--out', out, '--quiet'],
                           capture_output=True, text=True, timeout=120)
        F.check(p.returncode == 0, 'without a limit the build exits 0 (got %d) %s'
                % (p.returncode, p.stderr.strip()[:300]))
        m, qc = meta(out)
        F.check(qc == 'ok' and os.stat(out).st_ino != ino0 and m['pages'] == m0['pages'],
                'the new index replaced the old one (a new file, built %s, %s pages)'
                % (m['built_at'], m['pages']))
        F.check(os.listdir(live) == ['atlas.db'],
                'no temporary file remains: %s' % sorted(os.listdir(live)))
    return F.finish('disk-full', t0)


if __name__ == '__main__':
    sys.exit(main())
