#!/usr/bin/env python3
"""Offline evaluation of "read next" on a built HTML site whose chapters are ordered routes (the
PostgreSQL manual, Sphinx's and MkDocs' manuals: each chapter's pages chained by rel=next), for the
engine and the baselines. The site's pages may sit in folders; links are resolved as a browser does.

1. Leave one chapter's route out: for each of --chapters routes (the guides atlas-index --site
   makes from rel=next chains, 4 steps or more, drawn with a fixed seed), the site is copied with
   that route's order removed from what Atlas sees (rel=next and rel=prev dropped from the
   chapter's pages, and from the other pages those that lead into the chapter, with the marks a
   generator gives such links without rel: accesskey n and p, classes like pagination-nav__link--next;
   and the entries of
   every table of contents listing the chapter's pages shuffled, not the breadcrumb trails, the
   pages above, which stay), and indexed again; for each step
   i, next(g_i, seen = g_1..g_i-1) is asked with no guide given, and the rank of g_i+1 is found in
   the engine's 50 best.
2. Held-out links: 15% of the links in the pages' paragraphs (not their navigation, tables of
   contents or headings) are removed at random (fixed seed) and the site indexed again; for each
   removed link that the full index holds and the rebuilt one does not, the rank of its target
   among the suggestions from its source.

Baselines on the same rebuilt indexes: those of evaluate_next.py (random, same-topic, text
similarity, link-only, Hugo's tag overlap) and two of reading order: next by URL order within the
same folder, and next by the site's table-of-contents order (the page after the source in a list
of links, as the index stores it).

With --site-order, first: the site's own order, every route in the index: for each page that names
another as its next (its first link or anchor with rel=next), the rank of that page with the (up
to) four pages before it in that order read; the chain crosses chapters and parts, which no route
does.

usage: evaluate_site.py --indexer BIN --query BIN --site DIR [--chapters N] [--markdown] [--cases FILE]
                        [--require-beat-baselines routes|all] [--require-ratio R] [--known-routes]
                        [--site-order]
Prints hit@1, hit@3, hit@5 and MRR per method; exits 77 (skipped) when DIR does not exist.
"""
import argparse
import os
import posixpath
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from evaluate_next import Baselines, Score, engine_rank, known_routes, rank_of, write_cases  # noqa: E402
from indexlib import next_rows  # noqa: E402

METHODS = ["engine", "random", "same-topic", "text-similarity", "link-only", "hugo-tags",
           "url-order", "toc-order"]

REL_LINK_RE = re.compile(r'<link\s+rel="(?:next|prev)"[^>]*>', re.I)
REL_A_RE = re.compile(r'<a\b[^>]*\srel="(?:next|prev)"[^>]*>', re.I)
A_REL_RE = re.compile(r'\srel="(?:next|prev)"', re.I)
# the marks a generator gives its next and previous page's links without rel (accesskey n and p,
# classes "next", "...-next", "..._next" and the same of "prev"), which atlas-index also reads
ANCHOR_RE = re.compile(r'<a\b[^>]*>', re.I)
ACCESSKEY_RE = re.compile(r'\saccesskey="[np]"', re.I)
CLASS_RE = re.compile(r'(\sclass=")([^"]*)(")', re.I)
ORDER_TOKEN_RE = re.compile(r'^(?:next|prev|previous|.*[-_](?:next|prev|previous))$')


def unmark(tag):
    """An anchor's tag without its accesskey n or p and its next- or previous-page classes."""
    tag = ACCESSKEY_RE.sub("", tag)
    return CLASS_RE.sub(lambda m: m.group(1) + " ".join(t for t in m.group(2).split()
                                                         if not ORDER_TOKEN_RE.match(t)) + m.group(3), tag)


def build(indexer, site, out):
    subprocess.run([indexer, "--site", site, "--out", out, "--quiet"], check=True,
                   stderr=subprocess.DEVNULL)


def routes(db_path):
    """The site's guides as {guide path: [step paths in order]}."""
    db = sqlite3.connect(db_path)
    out = {}
    for g, d in db.execute("SELECT gd.path, sd.path FROM guide_steps s JOIN docs gd ON gd.id = s.guide_id"
                           " JOIN docs sd ON sd.id = s.doc_id ORDER BY s.guide_id, s.step"):
        out.setdefault(g, []).append(d)
    return out


LIST_TAG_RE = re.compile(r'<(/?)(ul|ol|dl|li|dt)\b[^>]*>', re.I)
LIST_RE = re.compile(r'<(?:ul|ol|dl)\b', re.I)
HREF_RE = re.compile(r'href="([^"]*)"')
EXTERNAL_RE = re.compile(r'(?:[a-z][a-z0-9+.-]*:|//|#)', re.I)


def resolve(page, href):
    """The site file (a path relative to the site's root) that href on page leads to, as a browser
    resolves it ("../usage/", "x.html#frag", "/root.html"); None for another site, an anchor of the
    page itself or a file that is not a page."""
    href = href.split("#")[0].split("?")[0]
    if not href or EXTERNAL_RE.match(href):
        return None
    base = "" if href.startswith("/") else posixpath.dirname(page)
    path = posixpath.normpath(posixpath.join(base, href.lstrip("/")))
    if href.endswith("/") or path == ".":
        path = posixpath.join("" if path == "." else path, "index.html")
    if path.startswith("..") or not path.endswith(".html"):
        return None
    return path


def list_items(html, at):
    """The top-level entries (an li, or a dt with its dd) of the list (ul, ol or dl) opening at
    html[at:], as (start, end) spans, and where the list's closing tag starts; (None, None) when it
    does not close."""
    depth, items, cur = 0, [], None
    for t in LIST_TAG_RE.finditer(html, html.index('>', at) + 1):
        closing, name = t.group(1) == '/', t.group(2).lower()
        if name in ('ul', 'ol', 'dl'):
            if closing and depth == 0:
                if cur is not None:
                    items.append((cur, t.start()))
                return items, t.start()
            depth += -1 if closing else 1
        elif depth == 0 and not closing:
            if cur is not None:
                items.append((cur, t.start()))
            cur = t.start()
    return None, None


# a breadcrumb trail's box (the pages above a page, which stay): a class or label naming
# breadcrumbs, or Sphinx's "related" bar
CRUMB_BOX_RE = re.compile(r'<(div|nav|ol|ul)\b[^>]*(?:class="[^"]*\b(?:related|breadcrumbs?)\b[^"]*"'
                          r'|aria-label="[^"]*breadcrumb[^"]*")[^>]*>', re.I)


def in_crumb_box(html, at):
    """Whether the list opening at html[at:] is a breadcrumb trail or inside one's box."""
    if CRUMB_BOX_RE.match(html, at):
        return True
    box = None
    for b in CRUMB_BOX_RE.finditer(html, 0, at):
        box = b
    return box is not None and f"</{box.group(1).lower()}" not in html[box.end():at].lower()


def shuffle_lists(html, page, files, rng):
    """html (of the site file page) with the entries of every list of links whose entries lead to
    the pages of files in a random order: the route's order removed from every table of contents.
    A breadcrumb trail is not shuffled: it is the chain of pages above, which stays."""
    pos = 0
    while True:
        m = LIST_RE.search(html, pos)
        if not m:
            return html
        pos = m.end()
        if in_crumb_box(html, m.start()):
            continue
        items, end = list_items(html, m.start())
        if not items or len(items) < 2:
            continue
        parts = [html[a:b] for a, b in items]
        heads = [HREF_RE.search(x) for x in parts]
        if sum(1 for h in heads if h and resolve(page, h.group(1)) in files) < max(2, len(parts) // 2):
            continue
        rng.shuffle(parts)
        html = html[:items[0][0]] + ''.join(parts) + html[end:]


def site_files(site):
    """Every .html file under site, as paths relative to it, sorted."""
    out = []
    for d, _, names in os.walk(site):
        out += [os.path.relpath(os.path.join(d, n), site) for n in names if n.endswith(".html")]
    return sorted(out)


def sources(db_path, site):
    """{doc path: its file relative to site} of the index at db_path."""
    db = sqlite3.connect(db_path)
    root = os.path.realpath(site)
    return {p: os.path.relpath(os.path.realpath(s), root) for p, s in db.execute("SELECT path, source FROM docs")
            if s}


def strip_order(html, page, files):
    """html of the site file page without the rel=next and rel=prev that lead into files (all of
    them when page is one of files): a link element loses the whole element, an anchor only its rel;
    the anchors that lead there lose the marks of a next or previous page (accesskey, classes) too."""
    def cut(m, keep):
        h = HREF_RE.search(m.group(0))
        return keep(m) if page in files or (h and resolve(page, h.group(1)) in files) else m.group(0)
    html = REL_LINK_RE.sub(lambda m: cut(m, lambda _: ""), html)
    html = REL_A_RE.sub(lambda m: cut(m, lambda m: A_REL_RE.sub("", m.group(0))), html)
    return ANCHOR_RE.sub(lambda m: cut(m, lambda m: unmark(m.group(0))), html)


NEXT_LINK_RE = re.compile(r'<(?:link|a)\b[^>]*\srel="next"[^>]*>', re.I)


def site_order(query, db_path, site, markdown):
    """Prints how the engine ranks each page's rel=next page (one it may suggest) with the pages
    before it in the site's order read (up to four), on the index at db_path."""
    file_of = sources(db_path, site)
    path_of = {f: p for p, f in file_of.items()}
    types = dict(sqlite3.connect(db_path).execute("SELECT path, type FROM docs"))
    after = {}
    for f in site_files(site):
        p = path_of.get(f)
        m = NEXT_LINK_RE.search(open(os.path.join(site, f), encoding="utf-8", errors="replace").read()) if p else None
        h = HREF_RE.search(m.group(0)) if m else None
        d = path_of.get(resolve(f, h.group(1))) if h else None
        if d and d != p:
            after[p] = d
    before = {d: p for p, d in after.items()}
    s = Score()
    for p, d in sorted(after.items()):
        if types.get(d) == "page":
            continue  # a site page (the top page, a book index) is never suggested
        seen, at = [], p
        while at in before and len(seen) < 4:
            at = before[at]
            seen.insert(0, at)
        s.add(engine_rank(query, db_path, p, seen), d)
    print(f"\nThe site's own order (rel=next), every route in the index: rank of the next page ({s.n} pages)")
    h1, h3, h5, mrr = s.row()
    if markdown:
        print("\n| hit@1 | hit@3 | hit@5 | MRR |\n|---|---|---|---|")
        print(f"| {h1:.3f} | {h3:.3f} | {h5:.3f} | {mrr:.3f} |")
    else:
        print(f"  hit@1 {h1:.3f}  hit@3 {h3:.3f}  hit@5 {h5:.3f}  MRR {mrr:.3f}")


def copy_site(src, dst):
    """dst: a copy of src made of hard links (files to change are written anew, not in place)."""
    shutil.copytree(src, dst, copy_function=os.link)


def rewrite(path, fn):
    text = open(path, encoding="utf-8", errors="surrogateescape").read()
    new = fn(text)
    if new != text:
        os.unlink(path)
        open(path, "w", encoding="utf-8", errors="surrogateescape").write(new)


class SiteBaselines(Baselines):
    """Baselines plus reading order: URL order in the folder, the tables of contents' order."""

    def __init__(self, db_path, seed):
        super().__init__(db_path, seed)
        db = sqlite3.connect(db_path)
        self.list_next = {}
        for s, _, d, sig, w, _ in next_rows(db):
            if sig == "list_next":
                self.list_next.setdefault(s, {})[d] = self.list_next.get(s, {}).get(d, 0) + 1

    def rank(self, method, path, exclude):
        if method not in ("url-order", "toc-order"):
            return super().rank(method, path, exclude)
        src = self.id_of[path]
        folder = os.path.dirname(path)
        pool = [c for c in self.candidates if c != src and self.docs[c][0] not in exclude
                and os.path.dirname(self.docs[c][0]) == folder]
        if method == "url-order":
            after = sorted(p for p in (self.docs[c][0] for c in pool) if p > path)
            return after
        score = self.list_next.get(src, {})
        ranked = sorted((c for c in pool if score.get(c, 0) > 0), key=lambda c: (-score[c], self.docs[c][0]))
        return [self.docs[c][0] for c in ranked]


def table(title, scores, markdown):
    print(f"\n{title} ({next(iter(scores.values())).n} cases)")
    if markdown:
        print("\n| method | hit@1 | hit@3 | hit@5 | MRR |\n|---|---|---|---|---|")
    for m in METHODS:
        h1, h3, h5, mrr = scores[m].row()
        if markdown:
            print(f"| {m} | {h1:.3f} | {h3:.3f} | {h5:.3f} | {mrr:.3f} |")
        else:
            print(f"  {m:16s} hit@1 {h1:.3f}  hit@3 {h3:.3f}  hit@5 {h5:.3f}  MRR {mrr:.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--indexer", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--site", required=True)
    ap.add_argument("--chapters", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1729)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--cases", metavar="FILE",
                    help="write each left-out step's engine rank to FILE (tab-separated: route, page, "
                         "next page, rank or - for a miss), to read the failing cases")
    ap.add_argument("--require-beat-baselines", choices=["routes", "all"],
                    help="fail unless the engine's MRR beats every baseline's: in the routes left out, "
                         "or in both evaluations")
    ap.add_argument("--known-routes", action="store_true",
                    help="also rank each route's next step with every route in the index")
    ap.add_argument("--site-order", action="store_true",
                    help="also rank each page's rel=next page with the pages before it in that order read")
    ap.add_argument("--require-ratio", type=float, default=0.0,
                    help="fail unless the engine's leave-one-out MRR is this many times the best baseline's")
    a = ap.parse_args()
    if not os.path.isdir(a.site):
        print(f"{a.site}: no such site; skipped")
        return 77

    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "full.db")
        build(a.indexer, a.site, full)
        all_routes = routes(full)
        if a.known_routes:
            known_routes(a.query, full, [all_routes[g] for g in sorted(all_routes)], a.markdown)
        if a.site_order:
            site_order(a.query, full, a.site, a.markdown)
        file_of = sources(full, a.site)
        pages = site_files(a.site)
        rng = random.Random(a.seed)
        eligible = sorted(g for g, st in all_routes.items() if len(st) >= 4)
        chosen = sorted(rng.sample(eligible, min(a.chapters, len(eligible))))

        # 1. leave one chapter's route out
        lgo = {m: Score() for m in METHODS}
        cases = []  # (route, page, next page, the engine's rank or None)
        for g in chosen:
            steps = all_routes[g]
            work = os.path.join(tmp, "lgo")
            shutil.rmtree(work, ignore_errors=True)
            copy_site(a.site, work)
            files = {file_of[p] for p in [g] + steps}
            toc_rng = random.Random(f"{a.seed}/{g}")
            for f in pages:
                fp = os.path.join(work, f)
                text = open(fp, encoding="utf-8", errors="surrogateescape").read()
                # the chapter's pages lose rel=next and rel=prev, and the other pages those that
                # lead into the chapter; every table of contents listing the chapter's pages, its order
                if f in files or any(resolve(f, h) in files for h in HREF_RE.findall(text)):
                    rewrite(fp, lambda t: shuffle_lists(strip_order(t, f, files), f, files, toc_rng))
            db = os.path.join(tmp, "lgo.db")
            build(a.indexer, work, db)
            base = SiteBaselines(db, a.seed)
            for i in range(len(steps) - 1):
                src, target, seen = steps[i], steps[i + 1], steps[:i]
                if target == src or target in seen:
                    continue
                ranking = engine_rank(a.query, db, src, seen)
                lgo["engine"].add(ranking, target)
                cases.append((g, src, target, rank_of(ranking, target)))
                for m in METHODS[1:]:
                    lgo[m].add(base.rank(m, src, set(seen) | {src}), target)

        # 2. held-out links: of the links in the pages' paragraphs, those that lead to another page
        # (not a heading's own anchor, not rel=next or rel=prev)
        work = os.path.join(tmp, "links")
        copy_site(a.site, work)
        rng = random.Random(a.seed)
        para_re = re.compile(r'(<p\b[^>]*>)(.*?)(</p>)', re.S | re.I)
        anchor_re = re.compile(r'<a\b([^>]*)>(.*?)</a>', re.S | re.I)
        path_of = {f: p for p, f in file_of.items()}
        removed = []
        for f in pages:
            fp = os.path.join(work, f)
            src = path_of.get(f)

            def drop(m):
                attrs = m.group(1)
                h = HREF_RE.search(attrs)
                dst = path_of.get(resolve(f, h.group(1))) if h else None
                if (dst and dst != src and not re.search(r'\brel=|headerlink', attrs)
                        and rng.random() < 0.15):
                    removed.append((src, dst))
                    return m.group(2)
                return m.group(0)
            if src:
                rewrite(fp, lambda t: para_re.sub(
                    lambda p: p.group(1) + anchor_re.sub(drop, p.group(2)) + p.group(3), t))
        db = os.path.join(tmp, "links.db")
        build(a.indexer, work, db)
        base = SiteBaselines(db, a.seed)
        held = {m: Score() for m in METHODS}
        linked = lambda path: {(s, d) for s, d in sqlite3.connect(path).execute(  # noqa: E731
            "SELECT a.path, b.path FROM links JOIN docs a ON a.id = links.src JOIN docs b ON b.id = links.dst")}
        ids = sqlite3.connect(db)
        docs = {p for (p,) in ids.execute("SELECT path FROM docs WHERE type IN ('explainer','guide','topic')")}
        before, still = linked(full), linked(db)
        pairs = sorted({p for p in removed if p in before and p not in still and p[0] in docs and p[1] in docs})
        pairs = sorted(random.Random(a.seed).sample(pairs, min(len(pairs), 300)))
        for src, dst in pairs:
            held["engine"].add(engine_rank(a.query, db, src, []), dst)
            for m in METHODS[1:]:
                held[m].add(base.rank(m, src, {src}), dst)

    if a.cases:
        write_cases(a.cases, cases)
    table(f"Leave one chapter's route out ({len(chosen)} chapters, seed {a.seed}): rank of the next page",
          lgo, a.markdown)
    table(f"Held-out links (15%, seed {a.seed}): rank of the removed link's target", held, a.markdown)
    bad = []
    if a.require_beat_baselines:
        bad += [f"{name}: engine MRR {s['engine'].row()[3]:.3f} <= {m} {s[m].row()[3]:.3f}"
                for name, s in (("leave-one-route-out", lgo), ("held-out links", held))
                if name != "held-out links" or a.require_beat_baselines == "all"
                for m in METHODS[1:] if s["engine"].row()[3] <= s[m].row()[3]]
    if a.require_ratio:
        best = max(lgo[m].row()[3] for m in METHODS[1:])
        if lgo["engine"].row()[3] < a.require_ratio * best:
            bad.append(f"leave-one-route-out: engine MRR {lgo['engine'].row()[3]:.3f} < "
                       f"{a.require_ratio} x best baseline {best:.3f}")
    for b in bad:
        print("FAIL  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
