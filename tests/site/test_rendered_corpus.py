#!/usr/bin/env python3
"""The site's own corpus rendered to plain HTML, as a static site generator would publish it
(render_site.py), then indexed with --site: the same pages, sections, links, guides and topics as
--corpus gives.

Usage: test_rendered_corpus.py INDEXER CORPUS_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render_site import render  # noqa: E402
from sitelib import Index, build, check, finish  # noqa: E402


def facts(ix):
    """What must be the same: pages, sections, links, guides, topics."""
    db = ix.db
    return {
        'pages': sorted((p, d['type'], d['title'], d['description'], d['keywords'], d['lastmod'], d['image'])
                        for p, d in ix.docs.items()),
        'doc topics': sorted((p, tuple(sorted(json.loads(d['topics'])))) for p, d in ix.docs.items()),
        'sections': sorted((ix.path_of[d], o, lv, h, a) for d, o, lv, h, a in
                           db.execute('SELECT doc_id, ord, level, heading, anchor FROM sections')),
        'links': sorted((p, q) for p, qs in ix.all_links().items() for q in qs),
        'guides': sorted((g, i, sec, p) for g, steps in ix.guides().items() for i, (sec, p) in enumerate(steps)),
        'topics': sorted((t, par, title, page) for t, (par, title, page) in ix.topics().items()),
        'site_url': ix.meta.get('site_url'),
    }


def main():
    indexer, corpus, work = sys.argv[1:4]
    site = os.path.join(work, 'rendered-site')
    if os.path.exists(site):
        shutil.rmtree(site)
    config = render(corpus, site)
    cfg = os.path.join(work, 'rendered.json')
    with open(cfg, 'w') as f:
        json.dump(config, f)
    a_db, b_db = os.path.join(work, 'corpus.db'), os.path.join(work, 'rendered.db')
    r = subprocess.run([indexer, '--corpus', corpus, '--out', a_db, '--quiet'], capture_output=True, text=True)
    check(r.returncode == 0, f'the corpus builds ({r.stderr.strip()[:200]})')
    rc, out, err = build(indexer, site, b_db, '--config', cfg, '--strict')
    check(rc == 0, f'the rendered site builds with --site --strict ({" | ".join(err.strip().splitlines()[:3])})')
    if r.returncode or rc:
        finish()
    a, b = facts(Index(a_db)), facts(Index(b_db))
    for key in a:
        if key == 'topics':
            # the corpus has no page for a topic of the topic tree: /t/<path> is its page
            a[key] = [(t, par, title, page or f'/t/{t}') for t, par, title, page in a[key]]
        same = a[key] == b[key]
        diff = ''
        if not same and isinstance(a[key], list):
            only_a = [x for x in a[key] if x not in b[key]][:2]
            only_b = [x for x in b[key] if x not in a[key]][:2]
            diff = f': corpus only {only_a}, site only {only_b}'
        n = len(a[key]) if isinstance(a[key], list) else 1
        check(same, f'{key}: the same from --corpus and --site ({n}){diff}')
    finish()


if __name__ == '__main__':
    main()
