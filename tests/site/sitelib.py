"""Helpers of the site suite: checks, building an index with atlas-index --site, reading it back.

Every test of tests/site prints one "ok"/"FAIL" line a check and exits 1 when any check failed.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

failures = []


def check(ok, what):
    print(f'{"ok  " if ok else "FAIL"} {what}')
    if not ok:
        failures.append(what)
    return ok


def finish():
    print(f'{len(failures)} failed' if failures else 'all passed')
    sys.exit(1 if failures else 0)


def index_site(indexer, work, name, pages):
    """Writes pages ({relative path: HTML}) as a new site WORK/NAME-site and indexes it into
    WORK/NAME.db (--quiet), checking that it indexes; returns the index's path."""
    site = os.path.join(work, f'{name}-site')
    shutil.rmtree(site, ignore_errors=True)
    for rel, html in pages.items():
        os.makedirs(os.path.dirname(os.path.join(site, rel)), exist_ok=True)
        with open(os.path.join(site, rel), 'w', encoding='utf-8') as f:
            f.write(html)
    db = os.path.join(work, f'{name}.db')
    rc, _, err = build(indexer, site, db, '--quiet')
    check(rc == 0, f'the site indexes (exit {rc}: {err.strip()[:200]})')
    return db


def build(indexer, site, out, *extra):
    """Runs atlas-index --site SITE --out OUT EXTRA...; returns (exit status, stdout, stderr)."""
    r = subprocess.run([indexer, '--site', site, '--out', out, *extra], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def query(query_bin, db, *args):
    """atlas-query --json: the parsed answer."""
    r = subprocess.run([query_bin, '--index', db, '--json', *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f'atlas-query {args} failed: {r.stderr}')
    return json.loads(r.stdout)


class Index:
    """An index read back with sqlite3: pages, sections, links, guides and topics by path."""

    def __init__(self, path):
        self.db = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
        self.meta = dict(self.db.execute('SELECT key, value FROM meta'))
        self.docs = {}
        for row in self.db.execute('SELECT id, path, type, title, description, keywords, topics,'
                                   ' lastmod, image FROM docs'):
            self.docs[row[1]] = dict(zip(['id', 'path', 'type', 'title', 'description', 'keywords',
                                          'topics', 'lastmod', 'image'], row))
        self.path_of = {d['id']: p for p, d in self.docs.items()}

    def sections(self, path):
        """[(ord, level, heading, anchor as stored)] of the page."""
        return self.db.execute('SELECT ord, level, heading, anchor FROM sections WHERE doc_id = ?'
                               ' ORDER BY ord', (self.docs[path]['id'],)).fetchall()

    def links(self, path):
        return {self.path_of[d] for (d,) in self.db.execute('SELECT dst FROM links WHERE src = ?',
                                                             (self.docs[path]['id'],))}

    def anchors(self, path):
        """The #fragment each link edge of the page at path keeps, by the target's path."""
        return {self.path_of[d]: a for d, a in self.db.execute('SELECT dst, anchor FROM links WHERE src = ?',
                                                                (self.docs[path]['id'],))}

    def all_links(self):
        out = {}
        for s, d in self.db.execute('SELECT src, dst FROM links'):
            out.setdefault(self.path_of[s], set()).add(self.path_of[d])
        return out

    def guide(self, path):
        """[(section title, step path)] of the guide page, in step order."""
        return [(sec, self.path_of[d]) for sec, d in self.db.execute(
            'SELECT section, doc_id FROM guide_steps WHERE guide_id = ? ORDER BY step',
            (self.docs[path]['id'],))]

    def guides(self):
        out = {}
        for g, sec, d in self.db.execute('SELECT guide_id, section, doc_id FROM guide_steps ORDER BY guide_id, step'):
            out.setdefault(self.path_of[g], []).append((sec, self.path_of[d]))
        return out

    def topics(self):
        """{path: (parent, title, page path or None)}."""
        return {p: (par, t, self.path_of.get(d)) for p, par, t, d in
                self.db.execute('SELECT path, parent, title, doc_id FROM topics')}
