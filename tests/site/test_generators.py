#!/usr/bin/env python3
"""atlas-index --site on two more generators' output shipped by Debian, each configured with
nothing but exclude globs: Sphinx's own manual (sphinx-doc) and MkDocs' (mkdocs-doc, which has a
sitemap.xml). Checked against their HTML:

Sphinx: every HTML file not excluded is a page; titles without the repeated " — Sphinx
documentation"; sections are the h2-h4 of each page's div.body with the ids of their <section>
wrappers; definitions (dt with an id) rank the page that defines a configuration value first;
topics from the "related" bar; the toctree order of "Using Sphinx" is its guide. With its module
sources indexed too, each is a site page, and a signature's parameters are not definitions.

MkDocs: paths and lastmod from the sitemap, urls under its site; titles without " - MkDocs";
sections with the headings' ids; the User Guide's rel=next chain is its guide; the one broken link
of the manual is a warning naming file and line, an error under --strict that leaves the index
untouched.

Usage: test_generators.py INDEXER QUERY SPHINX_DIR MKDOCS_DIR WORK_DIR
"""
import fnmatch
import hashlib
import html.parser
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sitelib import Index, build, check, finish, query  # noqa: E402

VOID = {'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr'}


class Headings(html.parser.HTMLParser):
    """The h2-h4 inside the content root (the element with role=main), and any h1 but the first
    (as h2), each with its own id or that of the innermost enclosing element holding no earlier
    heading."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []     # [tag, id, headed]
        self.main = None    # depth of the content root
        self.cur = None
        self.out = []
        self.h1 = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in VOID:
            return
        self.stack.append([tag, a.get('id'), False])
        if self.main is None and a.get('role') == 'main':
            self.main = len(self.stack)
        if self.main is not None and self.main > 0 and tag == 'h1' and not self.h1:
            self.h1 = True   # the page's title
            for e in self.stack:
                e[2] = True
            return
        if self.main is not None and self.main > 0 and tag in ('h1', 'h2', 'h3', 'h4') and self.cur is None:
            wrapper = None
            for e in reversed(self.stack[self.main:-1]):
                if e[1] and not e[2]:
                    wrapper = e[1]
                    break
            for e in self.stack:
                e[2] = True
            self.cur = [tag, a.get('id') or wrapper, '']

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            t = self.stack.pop()[0]
            if self.main is not None and self.main > 0 and len(self.stack) < self.main:
                self.main = -1   # only the first content root
            if self.cur and t == self.cur[0]:
                # permalink marks: a pilcrow, or an icon of a private-use font
                text = ''.join(c for c in self.cur[2] if c != '¶' and not '\ue000' <= c <= '\uf8ff')
                self.out.append((max(2, int(t[1])), ' '.join(text.split()), self.cur[1]))
                self.cur = None
            if t == tag:
                break

    def handle_data(self, d):
        if self.cur is not None:
            self.cur[2] += d


def headings(path):
    h = Headings()
    with open(path, encoding='utf-8') as f:
        h.feed(f.read())
    return h.out


def anchor_of(heading):
    """common/anchor.c for ASCII headings: letters and digits lowercased, spaces to '-'."""
    out = ''
    for c in heading:
        if c.isascii():
            if c.isalnum():
                out += c.lower()
            elif c == ' ':
                out += '-'
            elif c in '-_':
                out += c
        elif c.isalpha():
            out += c
    return out


def html_files(root, exclude):
    out = []
    for d, _, names in os.walk(root):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), root)
            if not n.endswith('.html'):
                continue
            with open(os.path.join(d, n), 'rb') as f:
                noindex = b'name="robots" content="noindex"' in f.read(4096)
            if not noindex and not any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(n, g) for g in exclude):
                out.append(rel)
    return sorted(out)


def check_sections(ix, root, rels, name, base=''):
    """Each page's sections are its content's h2-h4 with the anchor the page gives them (the
    pages' paths below base)."""
    wrong = []
    n = 0
    for rel in rels:
        want = headings(os.path.join(root, rel))
        got = ix.sections(base + '/' + rel)[1:]
        n += len(got)
        flat = [(lv, h, a or anchor_of(h)) for _, lv, h, a in got]
        exp = [(lv, h, a or anchor_of(h)) for lv, h, a in want]
        if flat != exp:
            wrong.append((rel, flat[:2], exp[:2]))
    check(n > 100, f'{name}: more than 100 sections ({n})')
    check(not wrong, f'{name}: sections are the content headings with their ids ({len(wrong)} differ: {wrong[:1]})')


def build_excluding(indexer, root, work, name, exclude):
    """Builds ROOT with a configuration of nothing but EXCLUDE into WORK/NAME.db; returns
    (the db's path, stderr), or (None, stderr) after a failed check of the exit status."""
    cfg = os.path.join(work, name + '.json')
    with open(cfg, 'w') as f:
        json.dump({'exclude': exclude}, f)
    db = os.path.join(work, name + '.db')
    rc, out, err = build(indexer, root, db, '--config', cfg)
    check(rc == 0, f'{name}: atlas-index --site exits 0 ({rc}: {err.strip()[-200:]})')
    return (None if rc else db), err


def sphinx(indexer, query_bin, root, work):
    db, _ = build_excluding(indexer, root, work, 'sphinx', ['genindex.html', 'search.html', 'py-modindex.html', '_modules/**'])
    if not db:
        return
    B = '/en/master'
    ix = Index(db)
    rels = [r for r in html_files(root, ['genindex.html', 'search.html', 'py-modindex.html'])
            if not r.startswith('_modules/')]
    # served under /en/master/ (its canonical links): paths are URL paths on the host
    check(sorted(ix.docs) == [B + '/' + r for r in rels], f'sphinx: the {len(rels)} pages not excluded, at their URL paths')
    check(ix.meta.get('site_url') == 'https://www.sphinx-doc.org', f"sphinx: site_url from the canonical links ({ix.meta.get('site_url')})")
    check(not any(d['title'].endswith('Sphinx documentation') for d in ix.docs.values()),
          'sphinx: no title keeps the site suffix')
    check(ix.docs[B + '/usage/configuration.html']['title'] == 'Configuration', 'sphinx: /usage/configuration.html is "Configuration"')
    check_sections(ix, root, rels, 'sphinx', B)
    for name, page, n in [('html_theme_options', B + '/usage/configuration.html', 1),
                          ('latex_engine', B + '/usage/configuration.html', 1),
                          ('add_config_value', B + '/extdev/appapi.html', 2),
                          # a method printed bare inside its class, found as a reader writes it
                          ('BuildEnvironment.doc2path', B + '/extdev/envapi.html', 1)]:
        r = query(query_bin, db, name)
        top = [h['path'] for h in r['results'][:n]]
        check(page in top, f'sphinx: search {name}: the page defining it in the first {n} ({top})')
    topics = ix.topics()
    check(json.loads(ix.docs[B + '/usage/extensions/autodoc.html']['topics']) == ['usage/extensions'],
          'sphinx: autodoc is in topic usage/extensions (its related bar)')
    check(topics.get('usage/extensions') == ('usage', 'Extensions', B + '/usage/extensions/index.html'),
          f"sphinx: topic usage/extensions below usage, the page of Extensions ({topics.get('usage/extensions')})")
    steps = [p for _, p in ix.guide(B + '/usage/index.html')]
    check(steps[:5] == [B + '/usage/restructuredtext/index.html', B + '/usage/markdown.html', B + '/usage/configuration.html',
                        B + '/usage/builders/index.html', B + '/usage/extensions/index.html'],
          f'sphinx: "Using Sphinx" is a guide in its toctree order ({steps[:5]})')
    check(ix.docs[B + '/index.html']['type'] == 'page', 'sphinx: the top page is a site page')
    check(B + '/usage/theming.html' in ix.links(B + '/usage/configuration.html'), 'sphinx: configuration links to theming')


def sphinx_sources(indexer, query_bin, root, work):
    """The manual with its module sources (_modules/, Sphinx's viewcode) not excluded: each is a
    site page (code whole, outside the toctree's rel=next order), and no signature's parameter is
    a name its page defines."""
    db, _ = build_excluding(indexer, root, work, 'sphinx-sources', ['genindex.html', 'search.html', 'py-modindex.html'])
    if not db:
        return
    ix = Index(db)
    B = '/en/master'
    sources = [p for p in ix.docs if p.startswith(B + '/_modules/') and p != B + '/_modules/index.html']
    check(len(sources) >= 20, f'sphinx sources: the module sources are pages ({len(sources)})')
    check(all(ix.docs[p]['type'] == 'page' for p in sources),
          f"sphinx sources: each is a site page ({[p for p in sources if ix.docs[p]['type'] != 'page'][:3]})")
    steps = {p for g in ix.docs if ix.docs[g]['type'] == 'guide' for _, p in ix.guide(g)}
    check(len(steps) > 50 and not any(ix.docs[p]['type'] == 'page' for p in steps if p in ix.docs),
          'sphinx sources: no step of a rel=next route is a site page')
    listed = {p for (p,) in sqlite3.connect(db).execute('SELECT path FROM docs WHERE code_listing = 1')}
    check(set(sources) <= listed and not listed & steps,
          f'sphinx sources: each is a code listing, no step of a route is ({sorted(listed ^ set(sources))[:3]})')
    # a module's name: the page that declares it, not the module's code titled by it
    for name, page in [('add_config_value', B + '/extdev/appapi.html'), ('latex_engine', B + '/usage/configuration.html'),
                       ('sphinx.domains', B + '/extdev/domainapi.html'),
                       ('sphinx.builders.linkcheck', B + '/usage/builders/index.html')]:
        r = query(query_bin, db, name)
        top = r['results'][0]['path'] if r['results'] else None
        check(top == page, f'sphinx sources: search {name}: the page defining it first, not a source ({top})')
    # add_config_value(name, default, rebuild, types=()) defines add_config_value, not rebuild
    r = query(query_bin, db, '--explain', 'rebuild')
    hit = [h for h in r['results'] if h['path'] == B + '/extdev/appapi.html']
    check(hit and 'defs 0.000' in hit[0]['explain'],
          f"sphinx sources: a parameter's name is not a definition ({hit[0]['explain'][:160] if hit else 'no result'})")


def mkdocs(indexer, query_bin, root, work):
    db, err = build_excluding(indexer, root, work, 'mkdocs', ['404.html'])
    if not db:
        return
    cfg = os.path.join(work, 'mkdocs.json')
    ix = Index(db)
    rels = html_files(root, ['404.html'])
    check(sorted(ix.docs) == ['/' + r for r in rels], f'mkdocs: the {len(rels)} pages but the redirections (robots noindex)')
    check(ix.meta.get('site_url') == 'https://www.mkdocs.org', f"mkdocs: site_url from the sitemap ({ix.meta.get('site_url')})")
    check(all(d['lastmod'] == '2022-11-29' for d in ix.docs.values()), 'mkdocs: lastmod of every page from the sitemap')
    check(ix.docs['/user-guide/configuration.html']['title'] == 'Configuration', 'mkdocs: titles without " - MkDocs"')
    check_sections(ix, root, rels, 'mkdocs')
    r = query(query_bin, db, 'site_name')
    check(r['results'] and r['results'][0]['url'] == 'https://www.mkdocs.org/user-guide/configuration.html',
          'mkdocs: search site_name: the configuration page, at its URL')
    steps = [p for _, p in ix.guide('/user-guide/index.html')]
    check(steps[:3] == ['/user-guide/installation.html', '/user-guide/writing-your-docs.html',
                        '/user-guide/choosing-your-theme.html'], f'mkdocs: the User Guide is a guide of its pages ({steps[:3]})')
    check(json.loads(ix.docs['/user-guide/cli.html']['topics']) == ['user-guide'], 'mkdocs: topic user-guide from the folder')
    check('release-notes.html:' in err and 'link to missing page /user-guide/configuration.md' in err,
          'mkdocs: the broken link is a warning naming file and line')
    before = hashlib.sha256(open(db, 'rb').read()).hexdigest()
    rc, out, err = build(indexer, root, db, '--config', cfg, '--strict')
    check(rc == 1 and 'error: link to missing page' in err, f'mkdocs: --strict makes it an error (exit {rc})')
    check(hashlib.sha256(open(db, 'rb').read()).hexdigest() == before, 'mkdocs: the index is untouched')


def main():
    indexer, query_bin, sphinx_dir, mkdocs_dir, work = sys.argv[1:6]
    sphinx(indexer, query_bin, sphinx_dir, work)
    sphinx_sources(indexer, query_bin, sphinx_dir, work)
    mkdocs(indexer, query_bin, mkdocs_dir, work)
    finish()


if __name__ == '__main__':
    main()
