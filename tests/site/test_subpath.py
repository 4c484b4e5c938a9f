#!/usr/bin/env python3
"""atlas-index --site on a site served under a path (https://example.org/docs/15/) with no site_url
configured: the folder is found from the sitemap's locs, else from the pages' canonical links or
og:url, and each page's path is its URL path on the host (/docs/15/guide/one.html), its url the
host and that path; links to /docs/15/..., to the full URL and relative ones are edges, a link to
another part of the host is not (and not broken). With neither, paths are relative to the folder.

Usage: test_subpath.py INDEXER QUERY WORK_DIR
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sitelib import Index, build, check, finish, query  # noqa: E402

BASE = 'https://example.org/docs/15'
RELS = ['index.html', 'guide/one.html', 'guide/two.html', 'ref.html']


def page(rel, title, body, head_for=None):
    head = head_for(rel) if head_for else ''
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>{head}</head>\n'
            f'<body><main><h1>{title}</h1>\n{body}\n</main></body></html>\n')


def site(head_for=None):
    return {
        'index.html': page('index.html', 'Home', '<p>Start with <a href="/docs/15/guide/one.html">one</a> and'
                           ' <a href="https://example.org/docs/15/ref.html#syntax">the reference</a>;'
                           ' older: <a href="/docs/14/index.html">14</a>.</p>', head_for),
        'guide/one.html': page('guide/one.html', 'One', '<p>Then <a href="two.html">two</a>, platypus.</p>',
                               head_for),
        'guide/two.html': page('guide/two.html', 'Two', '<p>Back <a href="../index.html">home</a>.</p>', head_for),
        'ref.html': page('ref.html', 'Reference', '<h2 id="syntax">Syntax</h2><p>Every name.</p>', head_for),
    }


def write(root, files):
    shutil.rmtree(root, ignore_errors=True)
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), 'w', encoding='utf-8') as f:
            f.write(text)


def url_path(rel):
    return '/docs/15/' + (rel[:-len('index.html')] if rel.endswith('index.html') else rel)


def served(name, indexer, query_bin, root, db, paths):
    """The site at root builds under --strict into pages at paths (rel -> path), each url the host's."""
    rc, out, err = build(indexer, root, db, '--strict')
    check(rc == 0, f'{name}: builds under --strict (exit {rc}; {err.strip()[:300]})')
    if rc:
        return
    ix = Index(db)
    check(sorted(ix.docs) == sorted(paths.values()), f'{name}: the pages at their URL paths ({sorted(ix.docs)})')
    check(ix.meta.get('site_url') in (None, 'https://example.org'), f'{name}: site_url is the host ({ix.meta.get("site_url")})')
    home, one, two, ref = (paths[r] for r in RELS)
    check(ix.links(home) == {one, ref} and ix.links(one) == {two} and ix.links(two) == {home},
          f'{name}: absolute, full-URL and relative links are edges; /docs/14/ is not ({ix.links(home)})')
    r = query(query_bin, db, 'platypus')
    got = [(h['path'], h['url']) for h in r['results']]
    check(got[:1] == [(one, 'https://example.org' + one)], f'{name}: url is the host and the path ({got})')


def main():
    indexer, query_bin, work = sys.argv[1:4]
    root = os.path.join(work, 'subpath-site')
    db = os.path.join(work, 'subpath.db')
    paths = {r: url_path(r) for r in RELS}

    files = site()
    files['sitemap.xml'] = ('<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                            + ''.join(f'<url><loc>https://example.org{url_path(r)}</loc></url>\n' for r in RELS)
                            + '</urlset>\n')
    write(root, files)
    served('sitemap', indexer, query_bin, root, db, paths)

    def canonical(rel):
        # one page gives its address by og:url alone
        if rel == 'ref.html':
            return f'<meta property="og:url" content="{BASE}/{rel}">'
        return f'<link rel="canonical" href="{BASE}/{rel}">'
    write(root, site(canonical))
    served('canonical links', indexer, query_bin, root, db, {r: '/docs/15/' + r for r in RELS})

    # neither: paths below the folder, as it is; the link to /docs/15/... names no file of it
    write(root, site())
    rc, out, err = build(indexer, root, db)
    ix = Index(db) if rc == 0 else None
    check(ix is not None and sorted(ix.docs) == sorted('/' + r for r in RELS),
          f'no sitemap or canonical links: paths relative to the folder ({sorted(ix.docs) if ix else err})')
    check('link to missing page /docs/15/guide/one.html' in err,
          'no sitemap or canonical links: an absolute link under a path is a missing page')
    finish()


if __name__ == '__main__':
    main()
