#!/usr/bin/env python3
"""A build whose full-text index outgrows its memory (atlas-index --fts-memory 1 on the real corpus:
several segments, merged at the end) gives the same index as a build that fits: the same column
sizes for every page, the same answers (totals, pages, snippets, sections) to a search for each
of the 150 most frequent terms, and sections whose token counts agree (check_sections.py).

Usage: test_fts_memory.py ATLAS_INDEX ATLAS_QUERY CORPUS_DIR
"""
import os
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    indexer, query, corpus = sys.argv[1], sys.argv[2], sys.argv[3]
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        small, big = os.path.join(tmp, 'small.db'), os.path.join(tmp, 'big.db')
        for out, extra in ((small, ['--fts-memory', '1']), (big, ['--fts-memory', '64'])):
            p = subprocess.run([indexer, '--corpus', corpus, '--out', out, '--quiet'] + extra,
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f'FAIL atlas-index {" ".join(extra)} exited {p.returncode}: {p.stderr.strip()}')
                return 1
        a, b = sqlite3.connect(small), sqlite3.connect(big)
        sizes = 'SELECT id, sz FROM fts_docsize ORDER BY id'
        if a.execute(sizes).fetchall() != b.execute(sizes).fetchall():
            fails.append('the column sizes differ')
        terms = [t for (t,) in b.execute('SELECT term FROM vocab ORDER BY df DESC, term LIMIT 150')]
        differ = []
        for t in terms:
            out = []
            for idx in (small, big):
                p = subprocess.run([query, '--index', idx, '--json', '--limit', '20', t + ' '],
                                   capture_output=True, text=True)
                body = p.stdout.replace('"took_ms":', '"took":')
                out.append((p.returncode, body.split('"took":')[0], body.split(',"did_you_mean"')[-1]))
            if out[0] != out[1]:
                differ.append(t)
        if differ:
            fails.append(f'{len(differ)} of {len(terms)} searches answer differently: {differ[:5]}')
        segs = a.execute('SELECT count(*) FROM fts_data').fetchone()[0]
        a.close()
        b.close()
        p = subprocess.run([sys.executable, os.path.join(HERE, 'check_sections.py'), small],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fails.append('sections: ' + p.stdout.strip())
    for f in fails:
        print('FAIL ' + f)
    print(f'{len(terms)} searches compared, {segs} rows in fts_data after the merge, {len(fails)} problems')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
