#!/usr/bin/env python3
"""More-like-this: a page's most similar page is its twin, however its words are counted.

The read-next signals keep each page's term weights compactly while the corpus is read (term and
count packed in 32 bits), and a page whose counts or term ids do not fit keeps them wide. A
generated corpus of 60 explainers gets two pairs of twins, pages whose bodies are the same text:

  - one pair whose body is a long run of two rare words (a count far past what packs);
  - one pair whose second page gets the first page's ordinary text (packed).

Each twin's first 'similar' candidate must be the other twin; for the first pair, whose vectors
are the rare words almost alone, with a weight above 0.5 and the rare words named as the reason.

Usage: test_similar.py GEN_CORPUS ATLAS_INDEX
"""
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from indexlib import next_rows  # noqa: E402

RARE = 'zyzzogeton quixotry'
REPEATS = 700  # each word's weighted count then 700, past the packed limit of 511.5


def split_page(text):
    """(front matter, body) of a page file: the front matter is the JSON object up to the line
    holding only '}'."""
    end = text.index('\n}\n') + 3
    return text[:end], text[end:]


def set_body(path, body):
    with open(path, encoding='utf-8') as f:
        fm, _ = split_page(f.read())
    with open(path, 'w', encoding='utf-8') as f:
        f.write(fm + '\n' + body)


def main():
    gen, indexer = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, 'corpus')
        subprocess.run([gen, '--pages', '60', '--seed', '11', '--out', corpus, '--quiet'], check=True)
        ex = os.path.join(corpus, 'explainers')
        names = sorted(n for n in os.listdir(ex) if n.endswith('.md'))
        wide = names[10:12]
        packed = names[20:22]
        rare_body = '## Repeated words\n\n' + ' '.join([RARE] * REPEATS) + '.\n'
        for n in wide:
            set_body(os.path.join(ex, n), rare_body)
        with open(os.path.join(ex, packed[0]), encoding='utf-8') as f:
            _, ordinary = split_page(f.read())
        set_body(os.path.join(ex, packed[1]), ordinary)
        out = os.path.join(tmp, 'atlas.db')
        p = subprocess.run([indexer, '--corpus', corpus, '--out', out, '--quiet'], capture_output=True, text=True)
        if p.returncode != 0:
            print(f'FAIL: atlas-index exited {p.returncode}: {p.stderr.strip()}')
            return 1
        db = sqlite3.connect(out)
        ids = {path: i for i, path in db.execute('SELECT id, path FROM docs')}
        failures = []
        for pair, reason, least in ((wide, 'zyzzogeton', 0.5), (packed, None, 0.0)):
            paths = ['/' + n[:-3] for n in pair]
            for a, b in (paths, paths[::-1]):
                similar = sorted((r for r in next_rows(db, ids[a]) if r[3] == 'similar'),
                                 key=lambda r: (-r[4], r[1]))
                if not similar:
                    failures.append(f'{a}: no similar page')
                    continue
                dst, weight, detail = similar[0][2], similar[0][4], similar[0][5]
                if dst != ids[b] or weight <= least:
                    failures.append(f'{a}: most similar is doc {dst} at {weight:.3f}, not its twin {b} (doc {ids[b]})')
                if reason and reason not in detail:
                    failures.append(f'{a}: reason "{detail}" does not name {reason}')
        for f in failures:
            print('FAIL:', f)
        if not failures:
            print('each twin\'s most similar page is its twin (packed and wide counts)')
        return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
