#!/usr/bin/env python3
"""The order of a page's links as a read-next reason: a table of contents says "Next after this page
in <page>", while pages its prose names one after the other say "Named after this page in <page>".

A site whose contents page (not its home page, a site page) lists Alpha, Beta, Gamma (ul > li > a, one link an entry), and whose
notes page names Delta then Epsilon in a paragraph and, in a definition list, a term whose entry
links Zeta then Eta (the entry's first link listed, the second one the entry's text). Read next
from Alpha gives Beta "Next after this page in Contents"; from Delta, Epsilon "Named after this
page in Notes"; from Zeta, Eta "Named after this page in Notes".

Usage: test_list_order.py INDEXER QUERY WORK_DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sitelib import check, finish, index_site, query  # noqa: E402

BODY = ('<p>This page explains one part of the storage engine: how rows are laid out, how pages split'
        ' and how the buffer cache keeps the pages most read.</p>')


def page(title, body):
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f'<body><main><h1>{title}</h1>\n{body}\n</main></body></html>\n')


PAGES = {
    'index.html': page('The Manual', '<p>Start with <a href="contents.html">the contents</a>.</p>'),
    'contents.html': page('Contents', '<p>The manual.</p><ul><li><a href="alpha.html">Alpha</a></li>'
                       '<li><a href="beta.html">Beta</a></li><li><a href="gamma.html">Gamma</a></li></ul>'),
    'notes.html': page('Notes', '<p>Read <a href="delta.html">Delta</a> and then <a href="epsilon.html">'
                       'Epsilon</a> for the details.</p><dl><dt><a href="zeta.html">Zeta</a></dt><dd>Takes'
                       ' an <a href="eta.html">Eta</a> as its argument.</dd></dl>'),
}
for name in ('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'):
    PAGES[f'{name}.html'] = page(name.capitalize(), BODY)


def main():
    indexer, query_bin, work = sys.argv[1:4]
    db = index_site(indexer, work, 'list-order', PAGES)

    def reasons(src, dst):
        for s in query(query_bin, db, '--next', src, '--limit', '10')['suggestions']:
            if s['path'] == dst:
                return s['reasons']
        return []

    got = reasons('/alpha.html', '/beta.html')
    check('Next after this page in Contents' in got, f'Alpha to Beta: the contents list\'s order (got {got})')
    got = reasons('/delta.html', '/epsilon.html')
    check('Named after this page in Notes' in got and not any(r.startswith('Next after this page') for r in got),
          f'Delta to Epsilon: named in that order by the prose (got {got})')
    got = reasons('/zeta.html', '/eta.html')
    check('Named after this page in Notes' in got and not any(r.startswith('Next after this page') for r in got),
          f'Zeta to Eta: a definition\'s text, not a list\'s entry (got {got})')
    finish()


if __name__ == '__main__':
    main()
