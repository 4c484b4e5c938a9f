#!/usr/bin/env python3
"""Pages read on several threads are reported and indexed as if read one by one, in name order.

A generated corpus of 700 explainers (three batches of the reading threads) gets broken files
spread over it: front matter that is not JSON, a title that is not a string, and a directory named
like a page (a file that cannot be read). Then:

  - `atlas-index --check`, run three times, reports one error for each broken file, in the order
    of the files' names, and the same messages every time;
  - two builds of the unbroken corpus give the same corpus digest and the same documents, with ids
    in path order.

Usage: test_read_order.py GEN_CORPUS ATLAS_INDEX
"""
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

BROKEN_EVERY = 97   # one explainer in this many is broken, across the reading batches


def check(indexer, corpus):
    p = subprocess.run([indexer, '--corpus', corpus, '--check'], capture_output=True, text=True)
    return p.returncode, [ln for ln in p.stderr.splitlines() if re.match(r'^\S+:\d+: (error|warning): ', ln)]


def build(indexer, corpus, out):
    p = subprocess.run([indexer, '--corpus', corpus, '--out', out, '--quiet'], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f'atlas-index exited {p.returncode}: {p.stderr.strip()}')
    db = sqlite3.connect(out)
    try:
        digest = db.execute("SELECT value FROM meta WHERE key = 'corpus_digest'").fetchone()[0]
        docs = db.execute('SELECT id, path, title, words FROM docs ORDER BY id').fetchall()
    finally:
        db.close()
    return digest, docs


def main():
    gen, indexer = sys.argv[1], sys.argv[2]
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, 'corpus')
        subprocess.run([gen, '--pages', '700', '--seed', '3', '--out', corpus, '--quiet'], check=True)

        # the unbroken corpus, built twice
        a = build(indexer, corpus, os.path.join(tmp, 'a.db'))
        b = build(indexer, corpus, os.path.join(tmp, 'b.db'))
        if a[0] != b[0]:
            fails.append(f'the corpus digest differs between two builds: {a[0]} and {b[0]}')
        if a[1] != b[1]:
            fails.append('the documents differ between two builds')
        paths = [d[1] for d in a[1]]
        if paths != sorted(paths):
            fails.append('document ids are not in path order')

        # broken files spread over the batches
        exp = os.path.join(corpus, 'explainers')
        names = sorted(n for n in os.listdir(exp) if n.endswith('.md'))
        broken = []
        for k, name in enumerate(names[BROKEN_EVERY // 2::BROKEN_EVERY]):
            path = os.path.join(exp, name)
            with open(path, encoding='utf-8') as f:
                lines = f.read().split('\n')
            if k % 2 == 0:
                lines[1] = 'this is not JSON'
            else:
                lines[1] = re.sub(r'"title":\s*"[^"]*"', '"title": 12', lines[1]) if '"title"' in lines[1] \
                    else '  "title": 12,'
            with open(path, 'w', encoding='utf-8') as f:
                f.write('\n'.join(lines))
            broken.append(name)
        unreadable = names[len(names) // 2][:-3] + '-0.md'   # sorts right after a page in the middle
        os.mkdir(os.path.join(exp, unreadable))
        broken = sorted(broken + [unreadable])

        runs = [check(indexer, corpus) for _ in range(3)]
        for status, msgs in runs:
            if status != 1:
                fails.append(f'--check on the broken corpus exited {status}, not 1')
        first = runs[0][1]
        for i, (_, msgs) in enumerate(runs[1:], 2):
            if msgs != first:
                fails.append(f'run {i} reported differently from run 1:\n  ' + '\n  '.join(msgs))
        # the files' own errors (others follow: pages that list a broken one as a prerequisite)
        own = ('invalid JSON in front matter', "field 'title' must be", 'cannot read file')
        in_exp = [m for m in first if '/explainers/' in m and any(o in m for o in own)]
        reported = [os.path.basename(m.split(':', 1)[0]) for m in in_exp]
        if reported != broken:
            fails.append('errors not one per broken file in name order:\n  expected ' + ' '.join(broken) +
                         '\n  got      ' + ' '.join(reported))
        if not any('cannot read file' in m for m in in_exp):
            fails.append('the unreadable page was not reported as such')

    for f in fails:
        print('FAIL ' + f)
    print(f'read order: {len(broken)} broken files over {len(names)} explainers, '
          f'{"ok" if not fails else str(len(fails)) + " failure(s)"}')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
