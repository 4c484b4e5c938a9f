#!/usr/bin/env python3
"""The served index file goes missing or bad (atlas-serve on 127.0.0.1).

1. No usable index at start: a missing file, an empty file, a directory, a truncated index and an
   index of another schema version each make atlas-serve exit 1 with a message naming the file.
2. The index deleted while serving: searches, suggestions and next go on (from the open file),
   answers byte-for-byte those of before; /healthz still answers 200, status "ok", the same
   build_id, swaps_refused +1 and last_swap_error "<path>: No such file or directory".
3. A truncated index (half of a real one) renamed into place: refused, the old index keeps
   serving, /healthz reports it (swaps_refused +1, last_swap_error "... malformed").
4. A good index renamed into place afterwards is swapped in, and the error is cleared; SIGTERM
   still exits 0.
5. An index truncated *in place* (`cp new.db atlas.db`, `truncate`): the server keeps answering
   from the build it read into memory, and refuses the damaged file.
6. An index missing only the tail of its last page (cut by 100 bytes) is refused at start: its
   size disagrees with its header.

Usage: test_index_faults.py (environment: see faultlib.py)
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

QUERIES = ['/api/search?q=consistent%20hashing', '/api/search?q=gil&limit=3',
           '/api/search?q=consis', '/api/suggest?q=cach', '/api/next?path=/consistent-hashing',
           '/api/search?q=raft%20leader&type=explainer', '/api/search?q=pallas%20kernel&offset=2']


def truncated(src, dst, size):
    with open(src, 'rb') as f:
        data = f.read(size)
    with open(dst, 'wb') as f:
        f.write(data)
    return dst


def answers(srv, tag):
    """Each of QUERIES on a new connection (so both worker threads are used). Returns
    {path: body with took_ms zeroed}, checking each is a 200."""
    out = {}
    for rnd in range(2):
        for path in QUERIES:
            status, _, body = srv.request(path)
            if rnd == 0 or status != 200:
                F.check(status == 200, '%s: %s answers 200 (got %d)' % (tag, path, status))
            out[path] = F.strip_took(body)
    return out


def startup_failures(work):
    cases = {}
    cases['missing'] = os.path.join(work, 'missing.db')
    cases['empty'] = os.path.join(work, 'empty.db')
    open(cases['empty'], 'wb').close()
    cases['directory'] = os.path.join(work, 'dir.db')
    os.mkdir(cases['directory'])
    cases['truncated'] = truncated(F.REAL_INDEX, os.path.join(work, 'half.db'),
                                   os.path.getsize(F.REAL_INDEX) // 2)
    cases['other schema'] = os.path.join(work, 'other.db')
    shutil.copyfile(F.REAL_INDEX, cases['other schema'])
    db = sqlite3.connect(cases['other schema'])
    db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    db.commit()
    db.close()
    for what, path in cases.items():
        p = subprocess.run([F.SERVE, '--index', path, '--bind', '127.0.0.1', '--port', '0'],
                           capture_output=True, text=True, timeout=F.TIMEOUT)
        print('  %s: exit %d: %s' % (what, p.returncode, p.stderr.strip()))
        F.check(p.returncode == 1 and path in p.stderr and p.stdout == '',
                'no usable index at start (%s): exit 1, a message naming the file' % what)


def deleted_then_truncated(work):
    served = os.path.join(work, 'atlas.db')
    shutil.copyfile(F.REAL_INDEX, served)
    good2 = F.build_index(os.path.join(work, 'rebuilt.db'))
    build2 = F.stats(good2)['build_id']
    srv = F.Server(served, work, threads=2)
    try:
        before = answers(srv, 'before')
        h0 = srv.health()

        os.remove(served)
        F.check(F.wait_for(lambda: srv.health()['swaps_refused'] > h0['swaps_refused'], 3),
                'deleted: the watcher notices within 3 s')
        after = answers(srv, 'deleted')
        F.check(after == before, 'deleted: every answer is byte-for-byte the one of before')
        status, _, h = srv.get_json('/healthz')
        print('  /healthz with the index deleted: %s' % h)
        F.check(status == 200 and h['status'] == 'ok', 'deleted: /healthz answers 200 "ok"')
        F.check(h['build_id'] == h0['build_id'] and h['pages'] == h0['pages']
                and h['generation'] == h0['generation'],
                'deleted: /healthz reports the build still served')
        F.check(h['swaps_refused'] == h0['swaps_refused'] + 1,
                'deleted: swaps_refused +1 (%d)' % h['swaps_refused'])
        F.check(isinstance(h['last_swap_error'], str) and served in h['last_swap_error']
                and 'No such file' in h['last_swap_error'],
                'deleted: last_swap_error names the file: %r' % h['last_swap_error'])
        time.sleep(1.2)  # the watcher looks again: the refusal is not counted again
        F.check(srv.health()['swaps_refused'] == h['swaps_refused'],
                'deleted: a missing file is refused once, not on every look')

        half = truncated(F.REAL_INDEX, os.path.join(work, 'half.db'),
                         os.path.getsize(F.REAL_INDEX) // 2)
        os.rename(half, served)
        F.check(F.wait_for(lambda: srv.health()['swaps_refused'] > h['swaps_refused'], 3),
                'truncated: the refusal is reported within 3 s')
        h2 = srv.health()
        print('  /healthz after a truncated index: %s' % h2)
        F.check(h2['build_id'] == h0['build_id'] and h2['generation'] == h0['generation'],
                'truncated: the old index keeps serving')
        F.check('malformed' in (h2['last_swap_error'] or ''),
                'truncated: last_swap_error says why: %r' % h2['last_swap_error'])
        F.check(answers(srv, 'truncated') == before,
                'truncated: every answer is still the one of before')

        F.replace(served, good2, os.path.join(work, 'staging.db'))
        F.check(F.wait_for(lambda: srv.health()['build_id'] == build2, 3),
                'a good index after them is swapped in within 3 s')
        h3 = srv.health()
        F.check(h3['last_swap_error'] is None and h3['swaps'] == h0['swaps'] + 1
                and h3['generation'] == h0['generation'] + 1,
                'and the error is cleared (swaps %d, generation %d)' % (h3['swaps'], h3['generation']))
        for path in QUERIES:
            F.check(srv.request(path)[0] == 200, 'new index: %s answers 200' % path)
    finally:
        status = srv.stop()
        F.check(status == 0, 'SIGTERM: exit 0 (got %r)' % status)
        if F.failures:
            print('--- server stderr ---\n' + srv.stderr_text()[-3000:])


def known_issues(work):
    # B2: a file that lacks the tail of its last page
    short = truncated(F.REAL_INDEX, os.path.join(work, 'short.db'),
                      os.path.getsize(F.REAL_INDEX) - 100)
    p = subprocess.Popen([F.SERVE, '--index', short, '--bind', '127.0.0.1', '--port', '0'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        rc = p.wait(5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = None
    p.stdout.close()
    p.stderr.close()
    F.check(rc == 1, 'an index truncated by 100 bytes is refused at start (exit %r)' % rc)

    # B1: the served file truncated in place
    served = os.path.join(work, 'inplace.db')
    shutil.copyfile(F.REAL_INDEX, served)
    srv = F.Server(served, work, threads=2)
    try:
        F.check(srv.request(QUERIES[0])[0] == 200, 'in place: served before')
        os.truncate(served, 100000)
        ok = True
        for path in QUERIES:
            try:
                ok = srv.request(path, timeout=3)[0] == 200 and ok
            except OSError:
                ok = False
        alive = srv.proc.poll() is None
        F.check(ok and alive, 'an index truncated in place: the server survives '
                '(alive %s, exit %r, all answered %s)' % (alive, srv.proc.poll(), ok))
    finally:
        srv.kill()
        srv.proc.stdout.close()
        srv.stderr.close()


def main():
    F.need_env('ATLAS_SERVE', 'ATLAS_QUERY', 'ATLAS_INDEX', 'ATLAS_REAL_INDEX', 'ATLAS_CORPUS')
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='atlas-index-faults-') as work:
        print('# no usable index at start')
        startup_failures(work)
        print('# deleted, then truncated, then good, while serving')
        deleted_then_truncated(work)
        print('# known issues')
        known_issues(work)
    return F.finish('index-faults', t0)


if __name__ == '__main__':
    sys.exit(main())
