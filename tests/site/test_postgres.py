#!/usr/bin/env python3
"""atlas-index --site on Debian's PostgreSQL 15 manual (DocBook HTML, no configuration), checked
against the HTML itself, read here with Python's own HTML parser:

- every HTML file is a page, at its URL path ("/sql-createtable.html"), titled by its <title>;
- every section anchor stored is an id the page holds, and the sections of a DocBook page are its
  sect1/sect2/refsect1 headings, with the wrapper's id (the one the page's table of contents uses);
- each page's links are exactly the other pages its content links to (DocBook's navigation header
  and footer left out);
- every chapter or part whose table of contents lists its own sub-pages is a guide whose steps are
  those pages, in that order; the pages below it are in its topic;
- concrete pages: CREATE TABLE's sections, the tutorial's first chapter as a guide, the
  configuration parameters as definitions (the page that defines shared_buffers comes first),
  read next after a tutorial step is the next step.

Usage: test_postgres.py INDEXER QUERY HTML_DIR WORK_DIR
"""
import html.parser
import json
import os
import posixpath
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sitelib import Index, build, check, finish, query  # noqa: E402


VOID = {'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr'}


class Page(html.parser.HTMLParser):
    """What a DocBook page holds: ids, content links (outside div.navheader and div.navfooter),
    its rel=next, its "Up" link, and the entries of its table of contents (div.toc > dl.toc >
    dt, the first level)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.toc = set(), [], []
        self.up = self.next = None
        self.stack = []          # (tag, skipping navigation, in toc, toc depth)
        self.nav = 0
        self.toc_depth = None    # depth of the dl.toc being read
        self.dl_depth = 0
        self.in_dt = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ('id', 'name'):
            if a.get(k):
                self.ids.add(a[k])
        cls = (a.get('class') or '').split()
        if tag == 'link' and a.get('rel') == 'next':
            self.next = a.get('href')
        if tag in VOID:
            return
        nav = tag == 'div' and ('navheader' in cls or 'navfooter' in cls)
        self.stack.append((tag, nav))
        if nav:
            self.nav += 1
        if tag == 'dl':
            self.dl_depth += 1
            if 'toc' in cls and self.toc_depth is None and not self.toc:
                self.toc_depth = self.dl_depth
        if tag == 'dt' and self.toc_depth == self.dl_depth:
            self.in_dt = True
        if tag == 'a' and a.get('href'):
            if a.get('accesskey') == 'u':
                self.up = a['href']
            if not self.nav:
                self.links.append(a['href'])
            if self.in_dt:
                self.toc.append(a['href'])
                self.in_dt = False

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            t, nav = self.stack.pop()
            if nav:
                self.nav -= 1
            if t == 'dl':
                if self.toc_depth == self.dl_depth:
                    self.toc_depth = -1  # only the first table of contents
                self.dl_depth -= 1
            if t == 'dt':
                self.in_dt = False
            if t == tag:
                break


def read_page(path):
    p = Page()
    with open(path, encoding='utf-8') as f:
        p.feed(f.read())
    return p


def target(href, html_dir):
    """The page path an href of a page at the top of the folder names, or None."""
    u = urllib.parse.urlsplit(href)
    if u.scheme or u.netloc or not u.path:
        return None
    rel = posixpath.normpath(urllib.parse.unquote(u.path))
    if rel.startswith('..') or not rel.endswith('.html') or not os.path.isfile(os.path.join(html_dir, rel)):
        return None
    return '/' + rel


def main():
    indexer, query_bin, html_dir, work = sys.argv[1:5]
    db = os.path.join(work, 'pg.db')
    rc, out, err = build(indexer, html_dir, db)
    check(rc == 0, f'atlas-index --site {html_dir} exits 0 (got {rc}: {err.strip()[-300:]})')
    if rc != 0:
        finish()
    ix = Index(db)
    files = sorted(f for f in os.listdir(html_dir) if f.endswith('.html'))
    check(len(files) > 1100, f'the manual has more than 1100 pages ({len(files)})')
    check(sorted(ix.docs) == ['/' + f for f in files], 'every HTML file is a page, at its URL path')
    check(f'pages       {len(files)}' in out, 'the summary counts them')

    pages = {'/' + f: read_page(os.path.join(html_dir, f)) for f in files}

    # anchors: the page's own ids
    bad, derived, nsec = [], set(), 0
    for path in ix.docs:
        for ord_, level, heading, anchor in ix.sections(path)[1:]:
            nsec += 1
            if not anchor:
                derived.add(heading)
            elif anchor not in pages[path].ids:
                bad.append(f'{path}#{anchor}')
    check(nsec > 2500, f'more than 2500 sections ({nsec})')
    check(not bad, f'every stored anchor is an id of its page ({len(bad)} are not: {bad[:3]})')
    # DocBook gives every section wrapper an id but the reference pages' synopsis
    check(derived <= {'Synopsis'}, f'only the synopses, which have no id, have none ({sorted(derived)[:5]})')

    # links: exactly the content's links to other pages
    all_links = ix.all_links()
    wrong = []
    for path, p in pages.items():
        want = {t for t in (target(h, html_dir) for h in p.links) if t and t != path}
        if all_links.get(path, set()) != want:
            wrong.append(path)
    check(not wrong, f'each page links to the pages its content links to ({len(wrong)} differ: {wrong[:3]})')

    # guides: a table of contents of its own sub-pages, in order
    guides = ix.guides()
    missing = []
    nguides = 0
    for path, p in pages.items():
        if path == '/index.html':
            continue
        toc = [target(h, html_dir) for h in p.toc]
        kids = [t for t in toc if t and target(pages[t].up or '', html_dir) == path]
        if len(kids) >= 2 and len(kids) == len(toc):
            nguides += 1
            if [s for _, s in guides.get(path, [])] != kids:
                missing.append(path)
            elif ix.docs[path]['type'] != 'guide':
                missing.append(path + ' (type)')
    check(nguides > 50, f'more than 50 chapters and parts list their sub-pages ({nguides})')
    check(not missing, f'each is a guide of those pages in order ({len(missing)} are not: {missing[:3]})')

    # topics: a page's topic is its parent page's
    topics = ix.topics()
    by_page = {page: t for t, (_, _, page) in topics.items()}
    off = []
    for path, p in pages.items():
        up = target(p.up or '', html_dir)
        want = [by_page[up]] if up and up != '/index.html' and up in by_page else []
        if json.loads(ix.docs[path]['topics']) != want:
            off.append(path)
    check(not off, f"each page's topic is its Up page's ({len(off)} differ: {off[:3]})")

    # concrete pages
    ct = ix.docs.get('/sql-createtable.html')
    check(ct and ct['title'] == 'CREATE TABLE' and ct['type'] == 'explainer', '/sql-createtable.html: CREATE TABLE, an explainer')
    check(ct and ct['description'].startswith('CREATE TABLE — define a new table'),
          f"its description is its refpurpose line ({ct and ct['description'][:60]!r})")
    secs = {h: a for _, _, h, a in ix.sections('/sql-createtable.html')}
    check(secs.get('Description') == 'SQL-CREATETABLE-DESCRIPTION',
          f"its Description section's anchor is the refsect1's id ({secs.get('Description')!r})")
    check('Parameters' in secs and 'Examples' in secs and 'Compatibility' in secs, 'it has Parameters, Examples, Compatibility')
    rs = {h: a for _, _, h, a in ix.sections('/runtime-config-resource.html')}
    check(rs.get('20.4.1. Memory') == 'RUNTIME-CONFIG-RESOURCE-MEMORY', f'sect2 anchors: 20.4.1. Memory ({rs.get("20.4.1. Memory")!r})')
    check(ix.docs['/index.html']['type'] == 'page', 'the top page is a site page')
    check(ix.guide('/tutorial-start.html') == [('Chapter 1. Getting Started', p) for p in
          ['/tutorial-install.html', '/tutorial-arch.html', '/tutorial-createdb.html', '/tutorial-accessdb.html']],
          'Chapter 1 is the guide of its four sections')
    check(topics.get('tutorial-start') == ('tutorial', 'Chapter 1. Getting Started', '/tutorial-start.html'),
          f"topic tutorial-start, below tutorial, is Chapter 1's page ({topics.get('tutorial-start')})")

    r = query(query_bin, db, 'create', 'table')
    check(r['results'] and r['results'][0]['path'] == '/sql-createtable.html', 'search "create table": CREATE TABLE first')
    r = query(query_bin, db, '--explain', 'shared_buffers')
    top = r['results'][0] if r['results'] else {}
    check(top.get('path') == '/runtime-config-resource.html', f"search shared_buffers: the page defining it first ({top.get('path')})")
    check('defs 0.000' not in top.get('explain', 'defs 0.000'), 'its definitions field matched')
    r = query(query_bin, db, '--next', '/tutorial-arch.html')
    nxt = r['suggestions'][0] if r['suggestions'] else {}
    check(nxt.get('path') == '/tutorial-createdb.html', f"read next after 1.2 is 1.3 ({nxt.get('path')})")

    # the manual's own reading order: from every page, the page its rel=next names comes first (when
    # it is one read next suggests: not a site page, the book index), the four pages read before it
    # in that order given as read: across chapters and parts too (1.4 to Chapter 2, a part's page to
    # its first chapter), which no chapter's route holds. Every 7th such page, asked in one process
    # each.
    after = {p: target(pg.next, html_dir) for p, pg in pages.items() if pg.next}
    before = {n: p for p, n in after.items()}
    cases = [(p, n) for p, n in sorted(after.items()) if n in ix.docs and ix.docs[n]['type'] != 'page'][::7]
    cases += [('/tutorial-accessdb.html', '/tutorial-sql.html'), ('/admin.html', '/install-binaries.html')]
    missed = []
    for p, n in cases:
        seen, at = [], p
        while at in before and len(seen) < 4:
            at = before[at]
            seen.insert(0, at)
        r = query(query_bin, db, '--next', p, *(['--seen', ','.join(seen)] if seen else []))
        top = r['suggestions'][0] if r['suggestions'] else {}
        if top.get('path') != n or 'Next after this page' not in top.get('reasons', []):
            missed.append(f"{p}: {top.get('path')} before {n}")
    check(len(cases) > 150 and not missed, f'each page\'s rel=next page first, "Next after this page" ({len(cases)} pages;'
          f' {len(missed)} not: {missed[:3]})')
    # a reader going from chapter page to chapter page of Part III's route (Chapter 17's page read
    # last, which does not name Chapter 18's as its next) is shown Chapter 19 first, then 18.1
    r = query(query_bin, db, '--next', '/install-windows.html', '--seen', '/install-binaries.html,/installation.html')
    got = [x['path'] for x in r['suggestions'][:2]]
    check(got == ['/runtime.html', '/install-windows-full.html'],
          f'a reader on a route and not the site\'s order: the route\'s next step, then the site\'s next page ({got})')
    r = query(query_bin, db, '--next', '/install-windows.html', '--guide', '/admin.html')
    got = [x['path'] for x in r['suggestions'][:2]]
    check(got == ['/runtime.html', '/install-windows-full.html'], f'and a guide named, with nothing read ({got})')
    finish()


if __name__ == '__main__':
    main()
