"""render_site: a corpus (corpus/README.md) written as the plain HTML site a static site generator
would publish, for tests/site/test_rendered_corpus.py and bench/gen-corpus --html.

Each explainer, guide and site page becomes PATH.html (the home page index.html), its Markdown body
turned into HTML by md4c's own renderer (libmd4c-html, the parser the corpus reader uses), under
<main> with the title as <h1>; <title> is the title followed by " — Rudrite Explainers";
description and keywords are <meta>; each topic of a page is a schema.org BreadcrumbList from the
top topic down; a guide's sections are <ol data-atlas-guide> lists of its steps in a <nav>; a
header and footer of site links around every page. The topic pages (/t/PATH) are rendered as the
corpus makes them (subtopics, then member explainers). The sitemap is the corpus's. render()
returns the site's atlas.json: topic_root "/t/", site and topic pages typed by glob. Pages are
written as they are read: memory holds the explainers' titles and topics only.
"""
import ctypes
import ctypes.util
import html
import json
import os
import shutil

SITE = 'https://explainers.rudrite.com'
SUFFIX = ' — Rudrite Explainers'
MD_FLAGS = 0x0100 | 0x0200 | 0x0020 | 0x0040  # tables, strikethrough, no raw HTML (as markdown.c)

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
    """Writes the corpus in the folder corpus as a built site into out (which must not exist or
    be empty); returns its configuration."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(corpus, 'topics.json'), encoding='utf-8') as f:
        tree = json.load(f)['topics']
    topics = []   # (path, parent, title, description) in file order

    def walk(nodes, parent):
        for n in nodes:
            topics.append((n['path'], parent, n['title'], n['description']))
            walk(n.get('children', []), n['path'])
    walk(tree, None)
    titles = {p: t for p, _, t, _ in topics}
    files = [(kind, os.path.join(corpus, kind, name)) for kind in ('explainers', 'guides', 'pages')
             for name in sorted(os.listdir(os.path.join(corpus, kind))) if name.endswith('.md')]
    members = {p: [] for p, _, _, _ in topics}   # topic -> [(title, path)] of its explainers and below
    types = {}
    for kind, file in files:
        fm, body = read_page(file)
        path = fm.get('path') or '/' + os.path.basename(file)[:-3]
        if kind == 'explainers':
            seen = set()
            for t in fm.get('topics', []):
                parts = t.split('/')
                for i in range(len(parts)):
                    up = '/'.join(parts[:i + 1])
                    if up in members and up not in seen:
                        seen.add(up)
                        members[up].append((fm['title'], path))
        page_html = template(fm['title'], fm['description'], fm.get('keywords', []),
                             fm.get('topics', []) if kind == 'explainers' else [], titles, markdown(body),
                             fm.get('sections') if kind == 'guides' else None)
        with open(os.path.join(out, file_of(path)), 'w', encoding='utf-8') as f:
            f.write(page_html)
        if kind == 'pages':
            types[file_of(path)] = 'page'
    parent_of = {p: par for p, par, _, _ in topics}
    # topic pages, as corpus_checks.c makes them: subtopics, then the explainers in it or below it
    for path, parent, title, desc in topics:
        chain, at = [], path
        while at:
            chain.insert(0, titles[at])
            at = parent_of[at]
        md = ''
        subs = [(q, t, d) for q, p, t, d in topics if p == path]
        for i, (q, t, d) in enumerate(subs):
            md += ('## Topics\n\n' if i == 0 else '') + f'- [{t}](/t/{q}): {d}\n'
        for i, (t, p) in enumerate(members[path]):
            md += ('\n## Explainers\n\n' if i == 0 else '') + f'- [{t}]({p})\n'
        f = os.path.join(out, file_of('/t/' + path))
        os.makedirs(os.path.dirname(f), exist_ok=True)
        with open(f, 'w', encoding='utf-8') as fh:
            fh.write(template(' ▸ '.join(chain), desc, [title], [path], titles, markdown(md)))
    shutil.copy(os.path.join(corpus, 'sitemap.xml'), os.path.join(out, 'sitemap.xml'))
    return {'topic_root': '/t/', 'types': {'t/**': 'topic', **types}}


