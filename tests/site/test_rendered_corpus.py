#!/usr/bin/env python3
"""The site's own corpus rendered to plain HTML, as a static site generator would publish it, then
indexed with --site: the same pages, sections, links, guides and topics as --corpus gives.

The rendering (a few templates below): each explainer, guide and site page becomes PATH.html (the
home page index.html), its Markdown body turned into HTML by md4c's own renderer (libmd4c-html,
the parser the corpus reader uses), under <main> with the title as <h1>; <title> is the title
followed by " — Rudrite Explainers"; description and keywords are <meta>; each topic of a page is a
schema.org BreadcrumbList from the top topic down; a guide's sections are <ol data-atlas-guide>
lists of its steps in a <nav>; a header and footer of site links around every page. The topic pages
(/t/PATH) are rendered as the corpus makes them (subtopics, then member explainers). The sitemap is
the corpus's. The configuration: topic_root "/t/", and the site pages and topic pages typed by
glob.

Usage: test_rendered_corpus.py INDEXER CORPUS_DIR WORK_DIR
"""
import ctypes
import ctypes.util
import html
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sitelib import Index, build, check, finish  # noqa: E402

SITE = 'https://explainers.rudrite.com'
SUFFIX = ' — Rudrite Explainers'
MD_FLAGS = 0x0100 | 0x0200 | 0x0020 | 0x0040  # tables, strikethrough, no raw HTML (as corpus.c)

_md = ctypes.CDLL(ctypes.util.find_library('md4c-html') or 'libmd4c-html.so.0')
_OUT = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_uint, ctypes.c_void_p)
_md.md_html.argtypes = [ctypes.c_char_p, ctypes.c_uint, _OUT, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]


def markdown(text):
    """The HTML md4c makes of the Markdown text."""
    parts = []
    cb = _OUT(lambda s, n, _: parts.append(ctypes.string_at(s, n)))
    data = text.encode('utf-8')
    if _md.md_html(data, len(data), cb, None, MD_FLAGS, 0) != 0:
        raise RuntimeError('md4c cannot render')
    return b''.join(parts).decode('utf-8')


def read_page(path):
    """(front matter, Markdown body) of a corpus page file."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    fm, end = json.JSONDecoder().raw_decode(text)
    return fm, text[end:]


def file_of(path):
    return 'index.html' if path == '/' else path.strip('/') + '.html'


def crumbs(topic, titles):
    """The schema.org BreadcrumbList of a topic path: each level from the top."""
    parts = topic.split('/')
    items = [{'@type': 'ListItem', 'position': i + 1, 'name': titles['/'.join(parts[:i + 1])],
              'item': f"{SITE}/t/{'/'.join(parts[:i + 1])}"} for i in range(len(parts))]
    return {'@context': 'https://schema.org', '@type': 'BreadcrumbList', 'itemListElement': items}


def template(title, description, keywords, topics, titles, body, guide=None):
    head = [f'<meta charset="utf-8"><title>{html.escape(title + SUFFIX)}</title>',
            f'<meta name="description" content="{html.escape(description)}">']
    if keywords:
        assert not any(',' in k for k in keywords), keywords
        head.append(f'<meta name="keywords" content="{html.escape(", ".join(keywords))}">')
    for t in topics:
        head.append(f'<script type="application/ld+json">{json.dumps(crumbs(t, titles))}</script>')
    nav = ''
    if guide:
        nav = '<nav aria-label="route">' + ''.join(
            f'<ol data-atlas-guide="{html.escape(sec["title"])}">'
            + ''.join(f'<li><a href="/{s}">{html.escape(s)}</a></li>' for s in sec['steps']) + '</ol>'
            for sec in guide) + '</nav>'
    return ('<!DOCTYPE html>\n<html lang="en"><head>' + ''.join(head) + '</head>\n<body>\n'
            '<header><a href="/">Rudrite Explainers</a> <a href="/library">Library</a> <a href="/guides">Guides</a></header>\n'
            + nav + f'\n<main>\n<h1>{html.escape(title)}</h1>\n{body}</main>\n'
            '<footer><a href="/board">Board</a> <a href="/code">Code</a> Rudrite Explainers</footer>\n</body></html>\n')


def render(corpus, out):
    """Writes the corpus as a built site into out; returns its configuration."""
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    with open(os.path.join(corpus, 'topics.json'), encoding='utf-8') as f:
        tree = json.load(f)['topics']
    topics = []   # (path, parent, title, description) in file order

    def walk(nodes, parent):
        for n in nodes:
            topics.append((n['path'], parent, n['title'], n['description']))
            walk(n.get('children', []), n['path'])
    walk(tree, None)
    titles = {p: t for p, _, t, _ in topics}
    pages = []    # (kind, path, front matter, body)
    for kind in ('explainers', 'guides', 'pages'):
        d = os.path.join(corpus, kind)
        for name in sorted(os.listdir(d)):
            if name.endswith('.md'):
                fm, body = read_page(os.path.join(d, name))
                pages.append((kind, fm.get('path') or '/' + name[:-3], fm, body))
    types = {}
    for kind, path, fm, body in pages:
        page_html = template(fm['title'], fm['description'], fm.get('keywords', []), fm.get('topics', []) if kind == 'explainers' else [],
                             titles, markdown(body), fm.get('sections') if kind == 'guides' else None)
        with open(os.path.join(out, file_of(path)), 'w', encoding='utf-8') as f:
            f.write(page_html)
        if kind == 'pages':
            types[file_of(path)] = 'page'
    # topic pages, as corpus.c makes them: subtopics, then the explainers in it or below it
    for path, parent, title, desc in topics:
        chain, at = [], path
        while at:
            chain.insert(0, titles[at])
            at = next(p for q, p, _, _ in topics if q == at)
        md = ''
        subs = [(q, t, d) for q, p, t, d in topics if p == path]
        for i, (q, t, d) in enumerate(subs):
            md += ('## Topics\n\n' if i == 0 else '') + f'- [{t}](/t/{q}): {d}\n'
        members = [(fm['title'], p) for kind, p, fm, _ in pages if kind == 'explainers'
                   and any(t == path or t.startswith(path + '/') for t in fm.get('topics', []))]
        for i, (t, p) in enumerate(members):
            md += ('\n## Explainers\n\n' if i == 0 else '') + f'- [{t}]({p})\n'
        f = os.path.join(out, file_of('/t/' + path))
        os.makedirs(os.path.dirname(f), exist_ok=True)
        with open(f, 'w', encoding='utf-8') as fh:
            fh.write(template(' ▸ '.join(chain), desc, [title], [path], titles, markdown(md)))
    shutil.copy(os.path.join(corpus, 'sitemap.xml'), os.path.join(out, 'sitemap.xml'))
    return {'topic_root': '/t/', 'types': {'t/**': 'topic', **types}}


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
