#!/usr/bin/env python3
"""Reading order from the section numbers that begin pages' titles (indexer/numbering.c): a site
with no rel=next, no table of contents in order and no guides, whose titles are numbered as DocBook,
Sphinx's numbered tables of contents and Texinfo number them.

- number_next rows go to the page numbered next in reading order: 1.1 after Chapter 1, 1.2 after
  1.1, Chapter 2 after 1.2 (the last within Chapter 1), A.1 after Appendix A, Part II after Part I,
  "3.2 Invoking" after "3.1 Overview" (no dot); and, at half the strength, Chapter 2 after Chapter 1
  (the next at the same depth when something within came first).
- Pages numbered alike in two folders (two books each with its 1.2.): 1.1's row goes to its own
  folder's 1.2 only, and Chapter 1's to its own folder's 1.1.
- Titles that only look numbered ("I/O Basics", "A Tour", "2FA Setup", "10") make no rows; a number
  nothing follows makes none.
- atlas-query --next names the reason: "Next after 1.1", and ranks 1.2 first from 1.1.

Usage: test_numbering.py INDEXER QUERY WORK_DIR
"""
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from indexlib import next_rows  # noqa: E402
from sitelib import build, check, finish, query  # noqa: E402

TEXT = ('<p>This part of the manual explains how the storage engine keeps rows on disk, how pages are'
        ' split when they fill, and how the buffer cache decides which pages stay in memory.</p>')

PAGES = {
    'index.html': 'The Manual',
    'ch1.html': 'Chapter 1. Storage',
    'ch1-pages.html': '1.1. Pages and Rows',
    'ch1-split.html': '1.2. Page Splits',
    'ch2.html': 'Chapter 2. Caching',
    'ch2-buffers.html': '2.1. The Buffer Cache',
    'appa.html': 'Appendix A. Glossary',
    'appa-terms.html': 'A.1. Terms',
    'part1.html': 'Part I. Foundations',
    'part2.html': 'Part II. Operations',
    'gcc-overview.html': '3.1 Overview',
    'gcc-invoking.html': '3.2 Invoking',
    'io.html': 'I/O Basics',
    'tour.html': 'A Tour of the Engine',
    'twofa.html': '2FA Setup',
    'ten.html': '10',
    'alone.html': '7.4. Nothing After This',
    'book2/intro.html': '1.1. Another Book',
    'book2/more.html': '1.2. Its Second Page',
}


def page(title):
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f'<body><main><h1>{title}</h1>\n{TEXT}\n</main></body></html>\n')


def main():
    indexer, query_bin, work = sys.argv[1:4]
    site = os.path.join(work, 'numbered-site')
    shutil.rmtree(site, ignore_errors=True)
    for rel, title in PAGES.items():
        os.makedirs(os.path.dirname(os.path.join(site, rel)), exist_ok=True)
        with open(os.path.join(site, rel), 'w', encoding='utf-8') as f:
            f.write(page(title))
    db_path = os.path.join(work, 'numbered.db')
    rc, _, err = build(indexer, site, db_path, '--quiet')
    check(rc == 0, f'the numbered site indexes (exit {rc}: {err.strip()[:200]})')
    db = sqlite3.connect(db_path)
    id_of = {p: i for i, p in db.execute('SELECT id, path FROM docs')}
    path_of = {i: p for p, i in id_of.items()}
    rows = {}
    for src, _, dst, sig, w, detail in next_rows(db):
        if sig == 'number_next':
            rows.setdefault(path_of[src], {})[path_of[dst]] = (w, detail)

    def expect(src, want):
        got = {d: round(w, 3) for d, (w, _) in rows.get('/' + src, {}).items()}
        want = {'/' + d: w for d, w in want.items()}
        check(got == want, f'{PAGES[src]!r}: number_next {want} (got {got})')

    expect('ch1.html', {'ch1-pages.html': 1.0, 'ch2.html': 0.5})
    expect('ch1-pages.html', {'ch1-split.html': 1.0})
    expect('ch1-split.html', {'ch2.html': 1.0})
    expect('ch2.html', {'ch2-buffers.html': 1.0})
    expect('appa.html', {'appa-terms.html': 1.0})
    expect('part1.html', {'part2.html': 1.0})
    expect('gcc-overview.html', {'gcc-invoking.html': 1.0})
    expect('book2/intro.html', {'book2/more.html': 1.0})
    for rel in ('io.html', 'tour.html', 'twofa.html', 'ten.html', 'alone.html', 'index.html',
                'ch2-buffers.html', 'gcc-invoking.html'):
        expect(rel, {})
    check(rows.get('/ch1-pages.html', {}).get('/ch1-split.html', (0, ''))[1] == '1.1',
          f"1.1's row names its number (got {rows.get('/ch1-pages.html')})")
    check(rows.get('/ch1.html', {}).get('/ch1-pages.html', (0, ''))[1] == 'Chapter 1',
          f"Chapter 1's row names its number as written (got {rows.get('/ch1.html')})")

    answer = query(query_bin, db_path, '--next', '/ch1-pages.html', '--limit', '5')
    sug = answer.get('suggestions', [])
    check(bool(sug) and sug[0]['path'] == '/ch1-split.html',
          f'next from 1.1 ranks 1.2 first (got {[s["path"] for s in sug]})')
    reasons = sug[0].get('reasons', []) if sug else []
    check('Next after 1.1' in reasons, f'its reason is "Next after 1.1" (got {reasons})')
    finish()


if __name__ == '__main__':
    main()
