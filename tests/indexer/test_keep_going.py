#!/usr/bin/env python3
"""test_keep_going.py - atlas-index --keep-going and what the server says of its result.

1. A page broken between two builds keeps its old text: its new words are not found, its old ones
   are, and the index records it (kept_pages, meta kept_pages); a new broken page is left out;
   a guide whose only error was a step naming the broken page is built as it is now.
2. Exit codes: 3 built with pages set apart; 1 without --keep-going (the index untouched) and
   with --keep-going when the error is outside page files (the sitemap); 2 usage; 0 once fixed,
   with no kept pages recorded.
3. An index of an earlier build, whose page_sources(file, data) holds each file as one plain zstd
   frame, still gives a broken page its previous version.
4. atlas-serve on the index built with pages set apart: /healthz "degraded" with kept_pages,
   /metrics atlas_index_kept_pages; a failed reindex written to the status file beside the index
   shows as last_reindex_error and atlas_reindex_failed 1 at the next request, a successful one
   clears it.

Usage: test_keep_going.py (environment: ATLAS_INDEX, ATLAS_QUERY, ATLAS_SERVE, ATLAS_MINI)
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from serverlib import Server  # noqa: E402

INDEX = os.environ['ATLAS_INDEX']
QUERY = os.environ['ATLAS_QUERY']
MINI = os.environ['ATLAS_MINI']
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print('FAIL', msg)


def build(corpus, out, *extra):
    r = subprocess.run([INDEX, '--corpus', corpus, '--out', out, '--quiet'] + list(extra),
                       capture_output=True, text=True)
    return r.returncode, r.stderr


def paths_for(db, word):
    out = subprocess.run([QUERY, '--index', db, '--json', word], capture_output=True, text=True, check=True).stdout
    return [h['path'] for h in json.loads(out)['results']]


def meta(db, key):
    con = sqlite3.connect(db)
    row = con.execute('SELECT value FROM meta WHERE key = ?', (key,)).fetchone()
    con.close()
    return row[0] if row else None


def metric(srv, name):
    _, _, text = srv.request('/metrics')
    for line in text.decode().splitlines():
        if line.startswith(name + ' '):
            return float(line.split()[-1])
    return None


def break_page(corpus):
    """Makes explainers/cache-stampede.md invalid (a bad lastmod) with a new word in its text."""
    page = os.path.join(corpus, 'explainers', 'cache-stampede.md')
    text = open(page).read()
    broken = re.sub(r'"lastmod": "[0-9-]+"', '"lastmod": "2026-13-45"', text)
    broken = broken.replace('\n## ', '\nThe quokkaword appears now.\n\n## ', 1)
    check(broken != text and 'quokkaword' in broken, 'the page was broken')
    open(page, 'w').write(broken)


def first_build(tmp, label):
    """Copies the mini corpus into tmp and builds it. Returns the corpus folder and the index."""
    corpus = os.path.join(tmp, 'corpus')
    shutil.copytree(MINI, corpus)
    db = os.path.join(tmp, 'atlas.db')
    rc, err = build(corpus, db)
    check(rc == 0, '%sfirst build exits 0: %d %s' % (label, rc, err))
    return corpus, db


def legacy_sources():
    """The page sources as an index of an earlier build held them: a zstd frame of each file."""
    with tempfile.TemporaryDirectory() as tmp:
        corpus, db = first_build(tmp, 'legacy: ')
        con = sqlite3.connect(db)
        check(con.execute('SELECT count(*) FROM source_blocks').fetchone()[0] >= 1, 'legacy: the index has blocks')
        files = [r[0] for r in con.execute('SELECT file FROM page_sources')]
        con.execute('DROP TABLE page_sources')
        con.execute('DROP TABLE source_blocks')
        con.execute("DELETE FROM dictionaries WHERE name = 'page_source'")
        con.execute('CREATE TABLE page_sources(file TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID')
        for f in files:
            z = subprocess.run(['zstd', '-3', '-q', '-c', os.path.join(corpus, f)], capture_output=True,
                               check=True).stdout
            con.execute('INSERT INTO page_sources VALUES(?, ?)', (f, z))
        con.commit()
        con.close()
        check(len(files) > 5, 'legacy: page sources rewritten: %d' % len(files))
        break_page(corpus)
        rc, err = build(corpus, db, '--keep-going')
        check(rc == 3 and 'explainers/cache-stampede.md: kept at its previous version' in err,
              'legacy: kept at its previous version: %d %s' % (rc, err))
        check(paths_for(db, 'stampede')[:1] == ['/cache-stampede'], 'legacy: the old text is still found')
        check(paths_for(db, 'quokkaword') == [], 'legacy: the broken version is not in the index')


def main():
    legacy_sources()
    with tempfile.TemporaryDirectory() as tmp:
        corpus, db = first_build(tmp, '')
        check(paths_for(db, 'stampede')[:1] == ['/cache-stampede'], 'the page is found before')
        page = os.path.join(corpus, 'explainers', 'cache-stampede.md')
        text = open(page).read()
        break_page(corpus)
        new = os.path.join(corpus, 'explainers', 'brand-new.md')
        open(new, 'w').write('{\n  "title": "Brand new",\n  "description": oops\n}\n\nBody.\n')
        id_before = meta(db, 'build_id')

        rc, err = build(corpus, db)
        check(rc == 1, 'without --keep-going exit 1: %d' % rc)
        check(meta(db, 'build_id') == id_before, 'the index is untouched after exit 1')
        rc, err = build(corpus, db, '--check', '--keep-going')
        check(rc == 3, '--check --keep-going exits 3: %d %s' % (rc, err))
        check(meta(db, 'build_id') == id_before, '--check writes nothing')

        rc, err = build(corpus, db, '--keep-going')
        check(rc == 3, '--keep-going exits 3: %d %s' % (rc, err))
        check('explainers/cache-stampede.md: kept at its previous version' in err, 'reported kept: %s' % err)
        check("field 'lastmod' must be a date" in err, 'the error is reported: %s' % err)
        check('explainers/brand-new.md: left out' in err, 'reported left out: %s' % err)
        check('caching-route.md: kept' not in err and 'caching-route.md: left out' not in err,
              'the guide is not set apart: %s' % err)
        check(paths_for(db, 'stampede')[:1] == ['/cache-stampede'], 'the old text is still found')
        check(paths_for(db, 'quokkaword') == [], 'the broken version is not in the index')
        con = sqlite3.connect(db)
        kept = sorted(con.execute('SELECT file, kept FROM kept_pages').fetchall())
        docs = [r[0] for r in con.execute("SELECT path FROM docs WHERE path = '/brand-new'")]
        con.close()
        check(kept == [('explainers/brand-new.md', 0), ('explainers/cache-stampede.md', 1)], 'kept_pages %r' % kept)
        check(docs == [], 'the new broken page is left out')
        check(meta(db, 'kept_pages') == '2', 'meta kept_pages %r' % meta(db, 'kept_pages'))
        check(not [n for n in os.listdir(tmp) if 'keep' in n], 'no folder left behind: %r' % os.listdir(tmp))

        # a second --keep-going run keeps the same last good version (the kept one is in the index)
        rc, err = build(corpus, db, '--keep-going')
        check(rc == 3 and paths_for(db, 'stampede')[:1] == ['/cache-stampede'], 'kept again: %d' % rc)

        # the server says so
        srv = Server(db, tmp)
        try:
            h = srv.health()
            check(h['status'] == 'degraded' and h['kept_pages'] == 2, 'healthz degraded: %r' % h)
            check(metric(srv, 'atlas_index_kept_pages') == 2, 'gauge of kept pages')
            check(h['last_reindex_error'] is None and metric(srv, 'atlas_reindex_failed') == 0, 'no failure yet')
            with open(db + '.status', 'w') as f:
                json.dump({'exit': 1, 'at': int(time.time()), 'error': 'corpus/topics.json:3: invalid JSON'}, f)
            h = srv.health()
            check(h['last_reindex_error'] == 'corpus/topics.json:3: invalid JSON', 'last_reindex_error %r' % h)
            check(metric(srv, 'atlas_reindex_failed') == 1, 'atlas_reindex_failed 1')
            check(metric(srv, 'atlas_reindex_last_run_timestamp_seconds') is not None, 'last run time')
            with open(db + '.status', 'w') as f:
                json.dump({'exit': 3, 'at': int(time.time()), 'error': ''}, f)
            h = srv.health()
            check(h['last_reindex_error'] is None and metric(srv, 'atlas_reindex_failed') == 0, 'exit 3 is no failure')
        finally:
            srv.stop()

        # an error outside the page files is not set apart
        sitemap = os.path.join(corpus, 'sitemap.xml')
        good_sitemap = open(sitemap).read()
        open(sitemap, 'w').write('<urlset><url>')
        rc, err = build(corpus, db, '--keep-going', '--strict')
        check(rc == 1, 'a broken sitemap stops --keep-going --strict: %d' % rc)
        open(sitemap, 'w').write(good_sitemap)
        rc, _ = build(corpus, db, '--keep-going', '--bogus')
        check(rc == 2, 'usage error exits 2: %d' % rc)

        # fixed: 0, nothing kept
        open(page, 'w').write(text)
        os.unlink(new)
        rc, err = build(corpus, db, '--keep-going')
        check(rc == 0, 'fixed corpus exits 0: %d %s' % (rc, err))
        check(meta(db, 'kept_pages') == '0', 'nothing kept once fixed')
        srv = Server(db, tmp)
        try:
            check(srv.health()['status'] == 'ok', 'healthz ok once fixed')
        finally:
            srv.stop()
    print('keep-going: %s' % ('FAILED %d' % len(failures) if failures else 'ok'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
