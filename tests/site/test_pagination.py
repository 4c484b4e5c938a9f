#!/usr/bin/env python3
"""Reading routes from the links a generator marks as the next page without rel=next: Docusaurus'
pagination (a.pagination-nav__link--next), VitePress' pager (a.pager-link.next) and an accesskey
"n" bar. Each folder's pages chain one to the next so, and atlas-index makes the chain a guide, as it
does for rel=next; a carousel's "next" anchor to a fragment of the page is not a next page. The top
page's chain is a guide only for a flat site (a book whose chapters are all right below it), whose
chapters also get topic_after rows in their file names' order.

Usage: test_pagination.py INDEXER QUERY WORK_DIR
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sitelib import Index, build, check, finish  # noqa: E402

TEXT = ('<p>This page of the tutorial explains one step of building a site: the project, its pages,'
        ' its configuration and how the pages are published.</p>')

STYLES = {
    'docusaurus': lambda nxt: (f'<nav class="pagination-nav" aria-label="Docs pages"><a class="pagination-nav__link'
                               f' pagination-nav__link--next" href="{nxt}"><div>Next</div></a></nav>'),
    'vitepress': lambda nxt: f'<div class="pager"><a class="VPLink link pager-link next" href="{nxt}">Next page</a></div>',
    'accesskey': lambda nxt: f'<div class="navfooter"><a accesskey="n" href="{nxt}">Next</a></div>',
}


def page(title, nav):
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f'<body><main><h1 id="top">{title}</h1>\n{TEXT}\n<a class="carousel-next" href="#top">more</a>\n'
            f'{nav}</main></body></html>\n')


def main():
    indexer, _, work = sys.argv[1:4]
    site = os.path.join(work, 'pagination-site')
    shutil.rmtree(site, ignore_errors=True)
    os.makedirs(site)
    with open(os.path.join(site, 'index.html'), 'w', encoding='utf-8') as f:
        f.write(page('Home', ''.join(f'<p><a href="{s}/index.html">{s}</a></p>' for s in STYLES)))
    for style, nav in STYLES.items():
        os.makedirs(os.path.join(site, style))
        names = ['index', 'one', 'two', 'three']
        for i, name in enumerate(names):
            nxt = f'{names[i + 1]}.html' if i + 1 < len(names) else None
            with open(os.path.join(site, style, f'{name}.html'), 'w', encoding='utf-8') as f:
                f.write(page(f'{style.capitalize()} {name}', nav(nxt) if nxt else ''))
    db = os.path.join(work, 'pagination.db')
    rc, _, err = build(indexer, site, db, '--quiet')
    check(rc == 0, f'the site indexes (exit {rc}: {err.strip()[:200]})')
    ix = Index(db)
    for style in STYLES:
        got = [p for _, p in ix.guide(f'/{style}/index.html')] if f'/{style}/index.html' in ix.docs else []
        want = [f'/{style}/one.html', f'/{style}/two.html', f'/{style}/three.html']
        check(got == want, f'{style}: the chain of next links is a guide, in order (got {got})')
    # the top page's chain is no guide here: its steps (the styles' pages) have pages of their own
    check('/index.html' not in ix.guides(), 'a chain through the parts of a deeper site is no guide')

    # a flat book (mdBook's): every chapter right below the top page, rel=next from each to the
    # next; the top page's chain is the book's route, and the file names' order is kept for the
    # read-next blend (topic_after rows from each chapter to the one after it by path)
    book = os.path.join(work, 'flat-book')
    shutil.rmtree(book, ignore_errors=True)
    os.makedirs(book)
    names = ['index', 'ch01-intro', 'ch02-setup', 'ch03-pages', 'ch04-publish']
    for i, name in enumerate(names):
        nxt = f'<a rel="next" href="{names[i + 1]}.html">Next</a>' if i + 1 < len(names) else ''
        with open(os.path.join(book, f'{name}.html'), 'w', encoding='utf-8') as f:
            f.write(page(f'Book {name}', nxt))
    db = os.path.join(work, 'flat-book.db')
    rc, _, err = build(indexer, book, db, '--quiet')
    check(rc == 0, f'the flat book indexes (exit {rc}: {err.strip()[:200]})')
    ix = Index(db)
    got = [p for _, p in ix.guides().get('/index.html', [])]
    check(got == [f'/{n}.html' for n in names[1:]], f'a flat book: the top page\'s chain is its route (got {got})')
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    from indexlib import next_rows
    after = {(ix.path_of[s], ix.path_of[d]) for s, _, d, sig, _, _ in next_rows(ix.db) if sig == 'topic_after'}
    want = {(f'/{names[i]}.html', f'/{names[i + 1]}.html') for i in range(1, len(names) - 1)}
    check(after == want, f'a flat book: each chapter\'s topic_after row leads to the next file (got {sorted(after)})')
    finish()


if __name__ == '__main__':
    main()
