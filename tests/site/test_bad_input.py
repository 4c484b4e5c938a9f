#!/usr/bin/env python3
"""atlas-index --site on small sites written here, one problem each: what is read, what is a
warning naming file and line (an error under --strict), what is an error that leaves the previous
index untouched.

- malformed HTML (unclosed and misnested tags) is read as browsers read it: its sections and text;
- the content root and what is removed in it (data-atlas-body, nav, hidden, data-atlas-ignore,
  the configuration's ignore selectors), pages skipped by robots noindex or data-atlas-ignore;
- a page without a title (one showing its title in an h1, a div.title or a heading is titled
  so, without a warning), a page with an empty content root, a broken link, a duplicate path, a
  sitemap URL with no file and a file the sitemap omits: warnings with file:line, errors with
  --strict (exit 1, previous index byte for byte);
- bytes not valid in the page's charset are replaced and the page named; a windows-1252 page
  (meta charset) and a UTF-16 page (byte order mark) decoded; an unknown charset and an unreadable
  file are errors;
- a symbolic link out of the site is not followed (a warning), one inside is;
- exclude globs (with **), type rules, data-atlas-guide lists, the configuration's errors;
- redirect pages (meta refresh to another address) left out, links to them followed; a page made
  of other pages whole left out, and all copies of one page but one, 404.html and the rel=search
  page; a block of links before the first heading of a page with no
  content root marked left out as navigation; a title's
  repeated part in parentheses (Texinfo's) taken off.

Usage: test_bad_input.py INDEXER QUERY WORK_DIR
"""
import hashlib
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sitelib import Index, build, check, finish, query  # noqa: E402


def page(title, body, head=''):
    t = f'<title>{title}</title>' if title is not None else ''
    return f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">{t}{head}</head>\n<body>\n{body}\n</body></html>\n'


GOOD = {
    'index.html': page('Home — Probe Site', '<main><h1>Home</h1><p>Welcome to the probe site, start with'
                       ' <a href="guide/">the guide</a>.</p></main>'),
    'guide/index.html': page('The guide — Probe Site',
                             '<main><h1>The guide</h1><p>Read these pages in order, first to last.</p>'
                             '<h2>Route</h2><ol data-atlas-guide="Getting started"><li><a href="one.html">One</a></li>'
                             '<li><a href="two.html">Two</a></li></ol></main>'),
    'guide/one.html': page('Step one — Probe Site',
                           '<nav>Site menu navword</nav><main><h1>Step one</h1><p>The first step explains'
                           ' quokkas at length.</p><p hidden>hiddenword</p><div data-atlas-ignore>ignoredword</div>'
                           '<div class="ad">adword</div><h2 id="details">Details</h2><p>More on quokkas.</p>'
                           '<dl><dt id="quokka-def">quokka</dt><dd>A small wallaby.</dd></dl>'
                           '<p>Then <a href="two.html#the-part">step two</a>.</p></main>'),
    'guide/two.html': page('Step two — Probe Site',
                           '<main><h1>Step two</h1><p>The second step: wombats <b>and <i>misnested</b> tags</i>'
                           '<div><p>unclosed paragraph<h2>Loose heading</h2><section id="the-part"><h3>Part</h3>'
                           '<p>Inside the part about numbats.</main>'),
    'marked.html': page('Marked — Probe Site', '<div class="chrome">chromeword</div><div data-atlas-body>'
                        '<p>Only this marked text about echidnas counts here.</p></div>'),
    'noindex.html': page('Hidden — Probe Site', '<main><p>noindexword</p></main>',
                         '<meta name="robots" content="noindex, follow">'),
    'skipped.html': '<html><body data-atlas-ignore><p>skippedword</p></body></html>',
    'drafts/wip.html': page('Draft — Probe Site', '<main><p>draftword</p></main>'),
    'legal/terms.html': page('Terms — Probe Site', '<main><h1>Terms</h1><p>The terms of the probe site, which apply.</p></main>'),
}
CONFIG = {'site_url': 'https://probe.example.org', 'exclude': ['drafts/**'], 'ignore': ['.ad'],
          'types': {'legal/**': 'page'}}


def write(root, files, config=CONFIG):
    if os.path.exists(root):
        shutil.rmtree(root)
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f:
            f.write(text if isinstance(text, bytes) else text.encode('utf-8'))
    if config is not None:
        with open(os.path.join(root, 'atlas.json'), 'w') as f:
            json.dump(config, f)


def one(text):
    """text on one line, shortened: for a check's message."""
    return ' | '.join(text.strip().splitlines())[:300]


def sha(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def words(query_bin, db, word):
    return [h['path'] for h in query(query_bin, db, word)['results']]


def warns(indexer, root, work, name, files, message, config=CONFIG):
    """The site's build warns with message (a regular expression of 'file:line: warning: ...'),
    exits 0; with --strict it exits 1 with the same as an error and leaves the index as it was."""
    import re
    write(root, files, config)
    db = os.path.join(work, 'bad.db')
    rc, out, err = build(indexer, root, db)
    m = re.search(message.replace('LEVEL', 'warning'), err)
    check(rc == 0 and m, f'{name}: a warning "{m.group(0) if m else message}" (exit {rc}; {one(err)})')
    before = sha(db) if os.path.exists(db) else None
    rc, out, err = build(indexer, root, db, '--strict')
    m = re.search(message.replace('LEVEL', 'error'), err)
    check(rc == 1 and m and 'the previous one is untouched' in err, f'{name}: an error with --strict (exit {rc})')
    check(before is not None and sha(db) == before, f'{name}: the previous index untouched')


def fails(indexer, root, work, name, files, message, config=CONFIG, setup=None):
    """The site's build fails with message; the previous index stays as it was."""
    write(root, GOOD, config)
    db = os.path.join(work, 'bad.db')
    build(indexer, root, db)
    before = sha(db)
    write(root, files, config)
    if setup:
        setup(root)
    rc, out, err = build(indexer, root, db)
    check(rc == 1 and message in err, f'{name}: exit 1 with "{message}" (exit {rc}; {one(err)})')
    check(sha(db) == before, f'{name}: the previous index untouched')


def main():
    indexer, query_bin, work = sys.argv[1:4]
    root = os.path.join(work, 'probe-site')
    db = os.path.join(work, 'probe.db')

    # the good site
    write(root, GOOD)
    rc, out, err = build(indexer, root, db, '--strict')
    check(rc == 0, f'the probe site builds under --strict ({one(err)})')
    ix = Index(db)
    check(sorted(ix.docs) == ['/guide/index.html', '/guide/one.html', '/guide/two.html', '/index.html',
                              '/legal/terms.html', '/marked.html'],
          f'pages: noindex, data-atlas-ignore and excluded ones left out ({sorted(ix.docs)})')
    check(ix.docs['/guide/one.html']['title'] == 'Step one', 'the repeated " — Probe Site" is taken off titles')
    check(ix.docs['/legal/terms.html']['type'] == 'page' and ix.docs['/index.html']['type'] == 'page',
          'type rules by glob; the top page a site page')
    check(ix.docs['/guide/index.html']['type'] == 'guide', 'a page with a data-atlas-guide list is a guide')
    check(ix.guide('/guide/index.html') == [('Getting started', '/guide/one.html'), ('Getting started', '/guide/two.html')],
          f"its steps in the list's order ({ix.guide('/guide/index.html')})")
    check(json.loads(ix.docs['/guide/one.html']['topics']) == ['guide'], 'topic from the folder')
    check(ix.links('/guide/one.html') == {'/guide/two.html'}, 'a link with a fragment is an edge to its page')
    check(ix.links('/index.html') == {'/guide/index.html'}, 'a link to a folder is an edge to its index page')
    for w in ['navword', 'hiddenword', 'ignoredword', 'adword', 'chromeword', 'noindexword', 'skippedword', 'draftword']:
        check(words(query_bin, db, w) == [], f'"{w}" (removed or skipped) is not found')
    check(words(query_bin, db, 'echidnas') == ['/marked.html'], 'data-atlas-body is the content root')
    check(words(query_bin, db, 'numbats') == ['/guide/two.html'], 'malformed HTML: the text after misnested and unclosed tags is read')
    two = [(lv, h, a) for _, lv, h, a in ix.sections('/guide/two.html')]
    check(two[1:] == [(2, 'Loose heading', ''), (3, 'Part', 'the-part')], f'malformed HTML: its sections ({two})')
    one_secs = {h: a for _, _, h, a in ix.sections('/guide/one.html')}
    check(one_secs.get('Details') == '', f'a heading id equal to its derived anchor is stored empty ({one_secs})')
    r = query(query_bin, db, '--explain', 'quokka')
    check(r['results'][0]['path'] == '/guide/one.html' and 'defs 0.000' not in r['results'][0]['explain'],
          'a dt with an id is a definition')
    check(r['results'][0]['url'] == 'https://probe.example.org/guide/one.html', 'url is site_url + path')

    # warnings, errors under --strict
    warns(indexer, root, work, 'no title', {**GOOD, 'untitled.html': '<html><body><main><p>No title anywhere here.</p></main></body></html>'},
          r'untitled\.html:\d+: LEVEL: page has no title')
    # no <title>: the title the page shows, its h1, else an element of class "title" (Doxygen's
    # div.title), else its first heading of another level; no warning then
    shown = {**GOOD,
             'doxy.html': '<html><body><div class="header"><div class="title">Json::Value Class Reference</div></div>'
                          '<h2 class="groupheader">Public Member Functions</h2><p>Doxygen text.</p></body></html>',
             'howto.html': '<html><body><main><h2>How we coordinate releases</h2><p>The howto text.</p></main></body></html>',
             'both.html': '<html><body><main><h2>Second level</h2><h1>First level</h1><p>Body.</p></main></body></html>'}
    write(root, shown)
    rc, out, err = build(indexer, root, os.path.join(work, 'shown.db'))
    ix = Index(os.path.join(work, 'shown.db'))
    titles = {p: ix.docs[p]['title'] for p in ('/doxy.html', '/howto.html', '/both.html')}
    check(rc == 0 and titles == {'/doxy.html': 'Json::Value Class Reference', '/howto.html': 'How we coordinate releases',
                                 '/both.html': 'First level'} and 'no title' not in err,
          f'a page without <title> is titled as it shows itself ({titles}; {one(err)})')
    # chrome left inside the content: a line of two words or more on half the pages or more (5 at
    # least) and at most twice on each is taken out; a line on fewer pages, or on each many times
    # (a signature's parameter), stays; a Texinfo panel at the foot (rel contents and index, its
    # next and previous links without rel) is navigation as the one at the top is
    def chromed(i):
        foot = (f'<div class="header"><p>Next: <a href="p{i + 1}.html">Zebraword next</a>, Up: <a href="p0.html">Top</a>'
                ' [<a href="p0.html#SEC_Contents" rel="contents">Contents</a>][<a href="ix.html" rel="index">Index</a>]</p></div>')
        sig = ''.join(f'<pre>int fn{i}_{k}(int a,\n    unsigned int sigflagword);</pre>' for k in range(4))
        return (f'<html><head><title>Page {i}</title></head><body><div><table><tr><td><a href="p0.html">Projectword home</a>'
                f'</td><td><a href="p1.html">Classes</a></td></tr></table><h1>Page {i}</h1><p>Own text of page'
                f' {i}, ownword{i}{" and sharedfewword" if i < 2 else ""}.</p>{sig}<address>Generated on Mon Jan 1'
                f' by gennerword 1.9</address>{foot}</div></body></html>')
    chrome_site = {f'p{i}.html': chromed(i) for i in range(8)}
    write(root, chrome_site)
    rc, out, err = build(indexer, root, os.path.join(work, 'chrome.db'))
    cdb = os.path.join(work, 'chrome.db')
    check(rc == 0 and 'chrome      2 lines on most pages, taken out of 8 pages' in out,
          f'the chrome line counted in the summary ({one(out)})')
    for w, want in [('projectword', []), ('gennerword', []), ('zebraword', []), ('ownword3', ['/p3.html']),
                    ('sharedfewword', ['/p0.html', '/p1.html'])]:
        got = sorted(words(query_bin, cdb, w))
        check(got == want, f'chrome: "{w}" on {want} ({got})')
    check(len(words(query_bin, cdb, 'sigflagword')) == 8, 'chrome: a line many times on each page stays')
    # a code block's indentation and line breaks read as one space in a snippet
    write(root, {**GOOD, 'code.html': page('Code', '<main><h1>Code</h1><p>The listing:</p><pre>def walrusfunc():\n'
                                           '        return     42\n\n\n    # walrusfunc ends</pre></main>')})
    rc, out, err = build(indexer, root, os.path.join(work, 'code.db'))
    r = query(query_bin, os.path.join(work, 'code.db'), 'walrusfunc')
    snips = [r['results'][0]['snippet']] + [x['snippet'] for x in r['results'][0].get('sections', [])] if r['results'] else []
    check(rc == 0 and snips and all('  ' not in x for x in snips) and 'return 42' in snips[0],
          f'runs of spaces in a snippet are one ({snips})')
    warns(indexer, root, work, 'empty content', {**GOOD, 'empty.html': page('Empty', '<main>  </main><footer>only a footer</footer>')},
          r'empty\.html:\d+: LEVEL: the page\'s content is empty')
    warns(indexer, root, work, 'broken link', {**GOOD, 'broken.html': page('Broken', '<main><p>See\n<a href="nowhere.html">this</a>.</p></main>')},
          r'broken\.html:5: LEVEL: link to missing page nowhere\.html')
    # a fragment is checked against the ids and a[name]s of its target (itself for "#..."), as
    # written or percent-decoded; "#top" and text directives need none, a range of lines its
    # first line ("#12-15", "#L7-L9"); the edge keeps it
    anchors = {**GOOD, 'anchors.html': page('Anchors', '<main><p>See\n<a href="guide/two.html#no-such-part">this</a>,'
                                            ' <a href="#here">here</a>, <a href="#%C3%A9t%C3%A9">summer</a>,'
                                            ' <a name="here"></a><span id="été">x</span>, <a href="guide/one.html#top">top</a>,'
                                            ' <a href="guide/one.html#:~:text=quokkas">text</a>,'
                                            ' <span id="12">l</span><span id="L7">l</span><a href="#12-15">lines</a>,'
                                            ' <a href="#L7-L9">lines</a>, <a href="#40-45">lines</a>,'
                                            '\n<a href="#gone">gone</a>.</p></main>')}
    warns(indexer, root, work, 'broken anchor', anchors,
          r'anchors\.html:5: LEVEL: link to missing anchor #no-such-part of /guide/two\.html')
    rc, out, err = build(indexer, root, os.path.join(work, 'anchors.db'))
    missing = [ln for ln in err.splitlines() if 'missing anchor' in ln]
    check(rc == 0 and len(missing) == 3 and 'anchors.html:5: warning: link to missing anchor #40-45 of /anchors.html'
          in missing[1] and 'anchors.html:6: warning: link to missing anchor #gone of /anchors.html' in missing[2],
          f'only the missing anchors warn, a link to the page itself too, a range of lines whose first is missing'
          f' ({missing})')
    ix = Index(os.path.join(work, 'anchors.db'))
    check(ix.anchors('/anchors.html') == {'/guide/two.html': 'no-such-part', '/guide/one.html': 'top'},
          f'the link edges keep the first link\'s fragment ({ix.anchors("/anchors.html")})')
    check(ix.anchors('/guide/one.html').get('/guide/two.html') == 'the-part', 'a fragment that exists is kept too')
    sitemap = ('<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
               + ''.join(f'<url><loc>https://probe.example.org/{p}</loc><lastmod>2026-01-02</lastmod></url>\n'
                         for p in ['', 'guide/', 'guide/one.html', 'guide/two.html', 'marked.html', 'legal/terms.html',
                                   'a%20b.html', 'gone.html'])
               + '</urlset>\n')
    dup = {**GOOD, 'sitemap.xml': sitemap, 'a b.html': page('Spaced', '<main><p>A page with a space in its name.</p></main>'),
           'a%20b.html': page('Percent', '<main><p>A page whose name holds a percent sign.</p></main>')}
    warns(indexer, root, work, 'duplicate path', dup, r'a%20b\.html:1: LEVEL: duplicate path /a%20b\.html')
    warns(indexer, root, work, 'sitemap URL with no file', dup, r'sitemap\.xml:\d+: LEVEL: sitemap lists /gone\.html but the site has no such page')
    warns(indexer, root, work, 'file not in the sitemap', {**dup, 'extra.html': page('Extra', '<main><p>Not listed in the sitemap at all.</p></main>')},
          r'extra\.html:1: LEVEL: page /extra\.html is not in sitemap\.xml')
    write(root, dup)
    build(indexer, root, db)
    ix = Index(db)
    check('/' in ix.docs and '/guide/' in ix.docs and ix.docs['/guide/one.html']['lastmod'] == '2026-01-02',
          f"paths and lastmod from the sitemap's locs ({sorted(ix.docs)[:3]})")
    warns(indexer, root, work, 'invalid bytes', {**GOOD, 'latin.html': page('Latin', '<main><p>caf\xe9 au lait</p></main>').encode('utf-8').replace(b'caf\xc3\xa9', b'caf\xe9')},
          r'latin\.html:1: LEVEL: 1 byte not valid UTF-8, replaced')
    outside = os.path.join(work, 'outside.html')
    with open(outside, 'w') as f:
        f.write(page('Outside', '<main><p>outsideword lives outside the site.</p></main>'))

    def link_out(r):
        os.symlink(outside, os.path.join(r, 'out.html'))

    write(root, GOOD)
    link_out(root)
    os.symlink(os.path.join(root, 'marked.html'), os.path.join(root, 'alias.html'))
    rc, out, err = build(indexer, root, db)
    check(rc == 0 and 'out.html:0: warning: symbolic link out of the site, not followed' in err,
          f'a symbolic link out of the site: a warning ({one(err)})')
    check(words(query_bin, db, 'outsideword') == [], 'and its page is not read')
    check('/alias.html' in Index(db).docs, 'a symbolic link inside the site is followed')

    # redirects (<meta http-equiv="refresh"> to another address): left out, links to them lead to
    # their targets, through a chain; one to a file the site lacks is a warning; a page that
    # reloads itself is a page
    moved = {**GOOD,
             'old-one.html': page('Moved — Probe Site', '<p>movedword: this page is now <a href="guide/one.html">step one</a>.</p>',
                                  '<meta http-equiv="Refresh" content="0; URL=\'guide/one.html#details\'">'),
             'older-one.html': page('Moved — Probe Site', '<p>movedword</p>', '<meta http-equiv="refresh" content="3;url=old-one.html">'),
             'away.html': page('Away — Probe Site', '<p>movedword</p>', '<meta http-equiv="refresh" content="0, https://other.example.com/">'),
             'live.html': page('Live — Probe Site', '<main><p>Scores about dingoes, reloaded every minute.</p>'
                               '<p>See <a href="older-one.html">the first step</a>.</p></main>',
                               '<meta http-equiv="refresh" content="60">')}
    write(root, moved)
    rc, out, err = build(indexer, root, db, '--strict')
    check(rc == 0 and 'redirects   3 ' in out, f'redirects: built under --strict, 3 counted ({one(out + err)})')
    ix = Index(db)
    check(not {'/old-one.html', '/older-one.html', '/away.html'} & set(ix.docs) and '/live.html' in ix.docs,
          f'redirects are not pages; a page that reloads itself is ({sorted(ix.docs)})')
    check(words(query_bin, db, 'movedword') == [], 'a redirect\'s text is not found')
    check(ix.links('/live.html') == {'/guide/one.html'}, f'a link to a chain of redirects leads to its end ({ix.links("/live.html")})')
    warns(indexer, root, work, 'redirect to a missing page',
          {**GOOD, 'gone.html': page('Gone', '<p>x</p>', '\n<meta http-equiv="refresh" content="0; url=nowhere.html">')},
          r'gone\.html:3: LEVEL: redirects to nowhere\.html, which is not in the site')
    # the page for missing addresses (404.html at the top) is no page, nor is the search page the
    # pages name with rel=search (an OpenSearch description before it is no page of the site)
    searching = '<link rel="search" type="application/opensearchdescription+xml" href="osd.xml"><link rel="search" href="/find.html">'
    write(root, {**GOOD, '404.html': page('Not found — Probe Site', '<main><h1>Not found</h1><p>The notfoundword page'
                                          ' you asked for is not here; try <a href="index.html">the home page</a>.</p></main>'),
                 'guide/three.html': page('Step three — Probe Site', '<main><h1>Step three</h1><p>The third step.</p></main>', searching),
                 'find.html': page('Search — Probe Site', '<main><h1>Search</h1><p>Please turn on searchpageword scripts.</p></main>', searching)})
    rc, out, err = build(indexer, root, db, '--strict')
    check(rc == 0 and re.search(r'not found +1 ', out) and words(query_bin, db, 'notfoundword') == [],
          f'404.html is left out, counted ({one(out + err)})')
    check(re.search(r'search +1 ', out) and words(query_bin, db, 'searchpageword') == [] and '/find.html' not in Index(db).docs,
          f'the rel=search page is left out, counted ({one(out)})')

    # a block of links before the first heading, in a page with no content root marked, is the
    # site's navigation (a sidebar as a div), and so is a panel of rel next/prev/up links anywhere
    # (in a main element too):
    # their words and links left out; a page that is only a list of links, or links amid prose
    # before the heading, keeps them
    side = ''.join(f'<li><a href="{t}.html">{t.title()} sidebarword</a></li>' for t in
                   ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'])
    bare = {f'{t}.html': '<!DOCTYPE html><html><head><title>{0} — Probe Site</title></head><body><div id="side">'
            '<a href="index.html">Home</a><ul>{1}</ul></div><div id="text"><h1>{0}</h1><p>The {2} page tells of'
            ' {2}words and what follows from them.</p></div></body></html>'.format(t.title(), side, t)
            for t in ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta']}
    bare['list.html'] = ('<!DOCTYPE html><html><head><title>List — Probe Site</title></head><body><ul>'
                         + side.replace('sidebarword', 'listword') + '</ul></body></html>')
    bare['prose.html'] = ('<!DOCTYPE html><html><head><title>Prose — Probe Site</title></head><body><div><p>'
                          'A long opening paragraph about prosewords, lemurs and the islands they live on, which'
                          ' names ' + ', '.join(f'<a href="{t}.html">{t}</a>' for t in ['alpha', 'beta', 'gamma',
                          'delta', 'epsilon', 'zeta', 'eta', 'theta']) + ' as it goes, at some length.</p></div>'
                          '<h1>Prose</h1><p>The rest of the page.</p></body></html>')
    bare['panel.html'] = ('<!DOCTYPE html><html><head><title>Panel — Probe Site</title></head><body>'
                          '<h1>Panel</h1><p>The panel page tells of panelwords.</p><div class="header"><p>Next: '
                          '<a href="beta.html" rel="next">Beta page</a>, Previous: <a href="alpha.html" rel="prev">'
                          'Alpha page</a>, Up: <a href="index.html" rel="up">Neighbourword</a></p></div>'
                          '<p>And more on panelwords, with <a href="gamma.html">a link in prose</a>.</p></body></html>')
    bare['paged.html'] = ('<!DOCTYPE html><html><head><title>Paged — Probe Site</title></head><body><main>'
                          '<h1>Paged</h1><p>The paged page tells of pagerwords, with <a href="gamma.html">a link'
                          ' in prose</a>.</p><div class="pager"><a href="alpha.html" rel="prev">Previousword'
                          ' page</a> <a href="beta.html" rel="next">Followingword page</a></div></main></body></html>')
    write(root, {**GOOD, **bare})
    rc, out, err = build(indexer, root, db, '--strict')
    check(rc == 0, f'pages with a sidebar and no content root build under --strict ({one(err)})')
    ix = Index(db)
    check(words(query_bin, db, 'sidebarword') == [] and words(query_bin, db, 'gammawords') == ['/gamma.html'],
          f'the sidebar\'s words are not found, the page\'s are ({words(query_bin, db, "sidebarword")})')
    check(ix.links('/gamma.html') == set(), f'nor are its links edges ({sorted(ix.links("/gamma.html"))})')
    check(words(query_bin, db, 'listword') == ['/list.html'], 'a page that is a list of links and no heading keeps it')
    check(words(query_bin, db, 'neighbourword') == [] and ix.links('/panel.html') == {'/gamma.html'},
          f'a panel of links to the next, previous and upper pages (rel) is navigation wherever it is'
          f' ({words(query_bin, db, "neighbourword")}, {sorted(ix.links("/panel.html"))})')
    check(words(query_bin, db, 'previousword') == [] and words(query_bin, db, 'followingword') == [] and
          ix.links('/paged.html') == {'/gamma.html'} and words(query_bin, db, 'pagerwords') == ['/paged.html'],
          f'and so is a pager in a page\'s main element ({sorted(ix.links("/paged.html"))})')
    check(words(query_bin, db, 'prosewords') == ['/prose.html'] and len(ix.links('/prose.html')) == 8,
          f'links amid prose before the heading are kept, with their edges ({sorted(ix.links("/prose.html"))})')

    # a page made of other pages whole (an all-in-one page beside the pages it joins): left out,
    # counted, each text found once on its own page; a page that shares only part of its text
    # with others is a page. Copies of one page (the same section texts and title): one kept (the
    # one in the sitemap, else the shallower, else the shorter address), the others lead to it as
    # redirects do; a short text under another title (a placeholder) is a page of its own
    animals = ['aardvark', 'bandicoot', 'capybara', 'dugong']
    parts = {f'animals/{a}.html': page(f'{a.title()} — Probe Site',
                                       f'<main><h1>{a.title()}</h1><p>The {a} ({a}word) is described here, its habitat first,'
                                       f' then what the {a} eats and how long it lives.</p><h2>Habits</h2>'
                                       f'<p>Habits of the {a}: when it sleeps, when it feeds, and how far it roams each night.</p></main>')
             for a in animals}
    joined = ''.join(f'<h1>{a.title()}</h1><p>The {a} ({a}word) is described here, its habitat first,'
                     f' then what the {a} eats and how long it lives.</p><h2>Habits</h2>'
                     f'<p>Habits of the {a}: when it sleeps, when it feeds, and how far it roams each night.</p>'
                     for a in animals)
    mixed = ''.join(f'<h1>{a.title()}</h1><p>The {a} ({a}word) is described here, its habitat first,'
                    f' then what the {a} eats and how long it lives.</p>' for a in animals[:2])
    mixed += ('<h2>Own</h2><p>' + 'This page says much of its own about mixedword and marsupials, at length. '
              * 6 + '<a href="../animals/zoo/aardvark.html">the aardvark</a>.</p>')
    aardvark_body = parts['animals/aardvark.html'].split('<body>')[1].split('</body>')[0]
    write(root, {**GOOD, **parts, 'animals/all.html': page('All animals — Probe Site', f'<main>{joined}</main>'),
                 'animals/zoo/aardvark.html': page('Aardvark — Probe Site', aardvark_body),
                 'animals/soon.html': page('Echidna — Probe Site', '<main><p>' + 'This page is coming soon. ' * 8 + '</p></main>'),
                 'animals/later.html': page('Numbat — Probe Site', '<main><p>' + 'This page is coming soon. ' * 8 + '</p></main>'),
                 'animals/mixed.html': page('Mixed — Probe Site', f'<main>{mixed}</main>')})
    rc, out, err = build(indexer, root, db, '--strict')
    line = re.search(r'repeats .*', out)
    check(rc == 0 and line and re.match(r'repeats +1 .*animals/all\.html repeats 5 pages', line.group(0)),
          f'a page made of 5 others (the copy one of them): built under --strict, counted and named'
          f' ({line.group(0) if line else one(out + err)})')
    line = re.search(r'copies .*', out)
    check(line and re.match(r'copies +1 .*animals/zoo/aardvark\.html, the same as animals/aardvark\.html', line.group(0)),
          f'a copy of a page, deeper: counted and named ({line.group(0) if line else one(out)})')
    ix = Index(db)
    check('/animals/all.html' not in ix.docs and '/animals/zoo/aardvark.html' not in ix.docs and
          {'/animals/aardvark.html', '/animals/mixed.html', '/animals/soon.html', '/animals/later.html'} <= set(ix.docs),
          f'both are left out; the page copied, a page with text of its own and placeholders under two'
          f' titles are kept ({sorted(ix.docs)})')
    check(words(query_bin, db, 'capybaraword') == ['/animals/capybara.html'] and
          words(query_bin, db, 'aardvarkword') == ['/animals/aardvark.html', '/animals/mixed.html'],
          f'each text is found once, on its own page ({words(query_bin, db, "aardvarkword")})')
    check(ix.links('/animals/mixed.html') == {'/animals/aardvark.html'}, 'a link to the copy leads to the page kept')
    sitemap = ('<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
               + ''.join(f'<url><loc>https://probe.example.org/{p}</loc></url>\n'
                         for p in ['', 'guide/', 'guide/one.html', 'guide/two.html', 'marked.html', 'legal/terms.html',
                                   'animals/zoo/aardvark.html'])
               + '</urlset>\n')
    write(root, {**GOOD, 'sitemap.xml': sitemap, 'animals/aardvark.html': parts['animals/aardvark.html'],
                 'animals/zoo/aardvark.html': page('Aardvark — Probe Site', aardvark_body)})
    rc, out, err = build(indexer, root, db)
    ix = Index(db)
    check('/animals/zoo/aardvark.html' in ix.docs and '/animals/aardvark.html' not in ix.docs,
          f'the copy the sitemap lists is the one kept ({sorted(ix.docs)})')
    write(root, {**GOOD, **{k: v for k, v in parts.items() if 'dugong' not in k and 'capybara' not in k},
                 'animals/all.html': page('All animals — Probe Site', f'<main>{joined}</main>')})
    rc, out, err = build(indexer, root, db)
    check(rc == 0 and 'repeats' not in out and 'copies' not in out and '/animals/all.html' in Index(db).docs,
          f'a page that joins two pages and has text of its own is a page ({one(out)})')

    # the manual's name in parentheses after every title, as Texinfo writes it
    texi = {rel: text.replace(' — Probe Site</title>', ' (Probe Manual (version 1.0))</title>') for rel, text in GOOD.items()}
    write(root, texi)
    build(indexer, root, db)
    ix = Index(db)
    check(ix.docs['/guide/one.html']['title'] == 'Step one', f'the repeated " (Probe Manual (version 1.0))" is taken off titles ({ix.docs["/guide/one.html"]["title"]})')
    # the project's name and a colon before every title, as Doxygen writes it
    doxy = {rel: re.sub(r'<title>(.*) — Probe Site</title>', r'<title>Probe: \1</title>', text) for rel, text in GOOD.items()}
    write(root, doxy)
    build(indexer, root, db)
    ix = Index(db)
    check(ix.docs['/guide/one.html']['title'] == 'Step one', f'the repeated "Probe: " is taken off titles ({ix.docs["/guide/one.html"]["title"]})')

    # Sphinx's classic "related" bar: its entries of class "right" are the page's relations (the
    # indexes, the next and previous pages), not the pages above it; a trail ending at an index page
    # whose name ends in "index" ("apiindex.html") makes that page's topic, named whole
    def related(here, nxt, prv, parents):
        rights = ''.join(f'<li class="right"><a href="{h}" accesskey="{k}">{t}</a> |</li>'
                         for h, k, t in (('../genindex.html', 'I', 'index'), (nxt, 'N', 'next'), (prv, 'P', 'previous')))
        trail = ''.join(f'<li class="nav-item"><a href="{h}">{t}</a> &#187;</li>' for h, t in parents)
        return (f'<div class="related" role="navigation"><h3>Navigation</h3><ul>{rights}{trail}'
                f'<li class="nav-item nav-item-this"><a href="">{here}</a></li></ul></div>')
    lib = {'index.html': page('Home — Probe Site', '<div role="main"><h1>Home</h1><p>The probe library.</p></div>'),
           'genindex.html': page('Index — Probe Site', '<div role="main"><h1>Index</h1><p>Every name.</p></div>'),
           'lib/index.html': page('Library — Probe Site', related('Library', 'a.html', '../index.html', [('../index.html', 'Home')])
                                  + '<div role="main"><h1>Library</h1><p>Modules for probing.</p></div>'),
           'api/apiindex.html': page('API listing — Probe Site', '<div role="main"><h1>API listing</h1><p>Every call.</p></div>'),
           'api/call.html': page('Call — Probe Site', '<nav aria-label="breadcrumb"><a href="../index.html">Home</a> / '
                                 '<a href="apiindex.html">API listing</a></nav><div role="main"><h1>Call</h1>'
                                 '<p>How a probe is called.</p></div>')}
    for a, b, c in (('a', 'b', 'index'), ('b', 'c', 'a'), ('c', '../genindex', 'b')):
        lib[f'lib/{a}.html'] = page(f'Module {a} — Probe Site',
                                    related(f'Module {a}', f'{b}.html', f'{c}.html', [('../index.html', 'Home'), ('index.html', 'Library')])
                                    + f'<div role="main"><h1>Module {a}</h1><p>What module {a} probes.</p></div>')
    write(root, lib)
    rc, out, err = build(indexer, root, db)
    ix = Index(db)
    topics = ix.topics()
    check(rc == 0 and topics.get('lib') == (None, 'Library', '/lib/index.html') and
          all(json.loads(ix.docs[f'/lib/{a}.html']['topics']) == ['lib'] for a in 'abc'),
          f'a related bar\'s entries of class "right" are not the trail: topic "lib" is "Library" ({topics})')
    check(json.loads(ix.docs['/api/call.html']['topics']) == ['api/apiindex'] and
          topics.get('api/apiindex', ('', '', ''))[1] == 'API listing',
          f'a page named "...index.html" is a topic named whole, not by its name cut at "index" ({topics})')
    r = query(query_bin, db, 'probes')
    facet = {t['path']: (t['title'], t['count']) for t in r['facets']['topic']}
    titled = {h['path']: h['topics_titled'] for h in r['results']}
    check(facet.get('lib') == ('Library', 3) and titled.get('/lib/a.html') == [{'path': 'lib', 'title': 'Library'}],
          f'a built site\'s topics are facets, named by their pages ({facet}, {titled.get("/lib/a.html")})')
    r = query(query_bin, db, 'probes', '--topic', 'lib')
    check(sorted(h['path'] for h in r['results']) == ['/lib/a.html', '/lib/b.html', '/lib/c.html'],
          f'and filters ({[h["path"] for h in r["results"]]})')
    nxt = subprocess.run([query_bin, '--index', db, '--next', '/lib/a.html', '--json'], capture_output=True, text=True)
    reasons = [x for s in json.loads(nxt.stdout or '{}').get('suggestions', []) for x in s.get('reasons', [])]
    check(nxt.returncode == 0 and 'Also in Library' in reasons and not any('lib' in x.split() for x in reasons),
          f'and read next names them so ({reasons})')

    # charsets
    cp = page('Windows', '<main><p>Caf\u00e9 cr\u00e8me \u2014 na\u00efve</p></main>').replace('charset="utf-8"', 'charset="windows-1252"')
    u16 = page('Sixteen', '<main><p>Sixteen-bit text about platypuses</p></main>').replace('<meta charset="utf-8">', '')
    write(root, {**GOOD, 'cp.html': cp.encode('cp1252'), 'u16.html': b'\xff\xfe' + u16.encode('utf-16-le')})
    rc, out, err = build(indexer, root, db, '--strict')
    check(rc == 0, f'windows-1252 and UTF-16 pages build under --strict ({one(err)})')
    check(words(query_bin, db, 'crème') == ['/cp.html'], 'the windows-1252 page is decoded')
    check(words(query_bin, db, 'platypuses') == ['/u16.html'], 'the UTF-16 page is decoded')

    # errors: the previous index untouched
    fails(indexer, root, work, 'unknown charset', {**GOOD, 'x.html': page('X', '<main><p>x</p></main>').replace('utf-8', 'x-no-such-charset')},
          'x.html:1: error: cannot decode: unknown charset "x-no-such-charset"')

    def unreadable(r):
        os.chmod(os.path.join(r, 'locked.html'), 0)

    if os.geteuid() == 0 and shutil.which('setpriv'):
        # root reads any file: the build runs as nobody, on a copy of the site and of the
        # indexer in a folder of its own under the system's temporary directory (the checkout
        # may sit where nobody cannot reach, /root for one)
        nbdir = tempfile.mkdtemp(prefix='atlas-site-nobody-')
        try:
            os.chmod(nbdir, 0o777)
            nroot = os.path.join(nbdir, 'site')
            write(nroot, GOOD)
            for d, dirs, names in os.walk(nroot):
                os.chmod(d, 0o777)
                for n in names:
                    os.chmod(os.path.join(d, n), 0o666)
            nindexer = os.path.join(nbdir, 'atlas-index')
            shutil.copy2(indexer, nindexer)
            os.chmod(nindexer, 0o755)
            nobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']
            ndb = os.path.join(nbdir, 'nobody.db')
            r0 = subprocess.run(nobody + [nindexer, '--site', nroot, '--out', ndb, '--quiet'], capture_output=True, text=True)
            before = sha(ndb) if r0.returncode == 0 else None
            with open(os.path.join(nroot, 'locked.html'), 'w') as f:
                f.write(page('Locked', '<main><p>locked</p></main>'))
            unreadable(nroot)
            r1 = subprocess.run(nobody + [nindexer, '--site', nroot, '--out', ndb], capture_output=True, text=True)
            after = sha(ndb) if os.path.exists(ndb) else None
        finally:
            shutil.rmtree(nbdir, ignore_errors=True)
        check(r1.returncode == 1 and 'locked.html:0: error: cannot read: Permission denied' in r1.stderr,
              f'an unreadable file: an error naming it ({r1.returncode}: {one(r1.stderr)})')
        check(before is not None and after == before, 'an unreadable file: the previous index untouched')
    else:
        fails(indexer, root, work, 'unreadable file', {**GOOD, 'locked.html': page('Locked', '<main><p>locked</p></main>')},
              'locked.html:0: error: cannot read: Permission denied', setup=unreadable)

    fails(indexer, root, work, 'configuration not JSON', GOOD, 'atlas.json:1: error: the configuration is not a JSON object', config=None,
          setup=lambda r: open(os.path.join(r, 'atlas.json'), 'w').write('{"exclude": [}'))
    fails(indexer, root, work, 'bad type rule', GOOD, 'error: type of "legal/**" must be explainer, guide, topic or page',
          config={**CONFIG, 'types': {'legal/**': 'article'}})
    fails(indexer, root, work, 'bad selector', GOOD, 'error: ignore: cannot read the selector',
          config={**CONFIG, 'ignore': ['div > p']})
    rc, out, err = build(indexer, os.path.join(work, 'no-such-site'), db)
    check(rc == 1 and 'site directory not found' in err, f'a missing folder: exit 1 ({rc})')
    r = subprocess.run([indexer, '--site', root, '--corpus', root, '--out', db], capture_output=True, text=True)
    check(r.returncode == 2, '--site with --corpus: a usage error')
    r = subprocess.run([indexer, '--corpus', root, '--config', 'x.json', '--out', db], capture_output=True, text=True)
    check(r.returncode == 2, '--config without --site: a usage error')
    finish()


if __name__ == '__main__':
    main()
