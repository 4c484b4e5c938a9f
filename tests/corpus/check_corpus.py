#!/usr/bin/env python3
"""Content checks over corpus/: runs `atlas-index --check --strict`, which enforces every rule of
corpus/README.md (the numeric ones as corpus/lint.json states them), and checks that
corpus/sitemap.xml is the published sitemap (the seed's TSV): same pages, lastmod, priority,
image and title. Prints one line per problem as `file:line: message` and exits 1 if any.

usage: check_corpus.py CORPUS_DIR [SITEMAP_TSV] [--indexer ATLAS_INDEX]
  ATLAS_INDEX defaults to build/indexer/atlas-index under the project root.
"""
import csv
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
NS = {'s': 'http://www.sitemaps.org/schemas/sitemap/0.9',
      'i': 'http://www.google.com/schemas/sitemap-image/1.1'}


def sitemap_problems(corpus, seed):
    """Returns the differences between corpus/sitemap.xml and the seed TSV as file:line lines."""
    xml_path = os.path.join(corpus, 'sitemap.xml')
    with open(seed, newline='') as f:
        want = {row['loc']: row for row in csv.DictReader(f, delimiter='\t')}
    got = {}
    for url in ET.parse(xml_path).getroot().findall('s:url', NS):
        loc = url.findtext('s:loc', '', NS)
        got[loc] = {'lastmod': url.findtext('s:lastmod', '', NS), 'priority': url.findtext('s:priority', '', NS),
                    'image': url.findtext('i:image/i:loc', '', NS), 'title': url.findtext('i:image/i:title', '', NS)}
    out = []
    for loc, row in want.items():
        if loc not in got:
            out.append(f'{xml_path}:1: the published page {loc} is missing')
            continue
        for key in ('lastmod', 'priority', 'image', 'title'):
            if got[loc][key] != row[key]:
                out.append(f'{xml_path}:1: {loc}: {key} {got[loc][key]!r}, published {row[key]!r}')
    out += [f'{xml_path}:1: {loc} is not a published page' for loc in got if loc not in want]
    return out


def main():
    args = sys.argv[1:]
    indexer = os.path.join(ROOT, 'build', 'indexer', 'atlas-index')
    if '--indexer' in args:
        i = args.index('--indexer')
        indexer = args[i + 1]
        del args[i:i + 2]
    if not args or args[0].startswith('-'):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    corpus = args[0]
    seed = args[1] if len(args) > 1 else os.path.join(ROOT, '..', 'shared', 'seed', 'sitemap.tsv')
    r = subprocess.run([indexer, '--corpus', corpus, '--check', '--strict', '--quiet'],
                       capture_output=True, text=True)
    problems = [line for line in r.stderr.splitlines() if line and not line.startswith('atlas-index: ')]
    problems += sitemap_problems(corpus, seed)
    for p in problems:
        print(p)
    print(f'{corpus}: {len(problems)} problems')
    return 1 if problems or r.returncode else 0


if __name__ == '__main__':
    sys.exit(main())
