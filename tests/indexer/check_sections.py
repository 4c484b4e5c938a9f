#!/usr/bin/env python3
"""The sections' token counts agree with the fts table, for every page of an index.

For each page: the lead section's heading tokens are the title column's size, its lead tokens the
description column's, the other sections' heading tokens add up to the headings column's and all
body tokens to the body column's (sizes from fts_docsize); only the lead section has lead tokens,
and each section's body decompresses. (The spans the engine finds for those tokens are checked by
tests/query/test_sections.c.) Usage: check_sections.py INDEX
"""
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from indexlib import Bodies  # noqa: E402

FAILS = []


def check(ok, what):
    if not ok:
        FAILS.append(what)


def sqlite_varints(blob):
    """SQLite's big-endian varints (fts_docsize)."""
    out, i = [], 0
    while i < len(blob):
        v = 0
        for k in range(9):
            b = blob[i]
            i += 1
            if k == 8:
                v = (v << 8) | b
                break
            v = (v << 7) | (b & 0x7f)
            if not b & 0x80:
                break
        out.append(v)
    return out


def main():
    db = sqlite3.connect(sys.argv[1])
    bodies = Bodies(db)
    sizes = {rid: sqlite_varints(sz) for rid, sz in db.execute('SELECT id, sz FROM fts_docsize')}
    pages = db.execute('SELECT id, path FROM docs ORDER BY id').fetchall()
    nsec = 0
    for doc_id, path in pages:
        rows = db.execute('SELECT ord, heading, body, heading_tokens, lead_tokens, body_tokens'
                          ' FROM sections WHERE doc_id = ? ORDER BY id', (doc_id,)).fetchall()
        sz = sizes.get(doc_id)
        check(sz is not None and len(sz) == 6, f'{path}: fts_docsize has 6 column sizes')
        if not rows or sz is None:
            check(False, f'{path}: has sections')
            continue
        check([r[0] for r in rows] == list(range(len(rows))), f'{path}: sections numbered 0..n-1')
        check(rows[0][3] == sz[0], f'{path}: title tokens {rows[0][3]} = title column {sz[0]}')
        check(rows[0][4] == sz[3], f'{path}: lead tokens {rows[0][4]} = description column {sz[3]}')
        check(sum(r[3] for r in rows[1:]) == sz[2],
              f'{path}: heading tokens {sum(r[3] for r in rows[1:])} = headings column {sz[2]}')
        check(sum(r[5] for r in rows) == sz[4], f'{path}: body tokens {sum(r[5] for r in rows)} = body column {sz[4]}')
        for ord_, heading, stored, nh, nl, nb in rows:
            nsec += 1
            where = f'{path} section {ord_}'
            try:
                bodies.text(stored)
            except (ValueError, UnicodeDecodeError) as e:
                check(False, f'{where}: body does not decompress ({e})')
                continue
            check(ord_ == 0 or nl == 0, f'{where}: only the lead section has lead tokens')
    print(f'{len(pages)} pages, {nsec} sections checked, {len(FAILS)} problems')
    for f in FAILS[:20]:
        print('  ' + f)
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
