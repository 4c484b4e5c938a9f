#!/usr/bin/env python3
"""Relevance on documentation no one here wrote, judged by its own authors: Atlas beside FTS5
(porter) and Xapian (BM25, English stemmer) on the same pages and queries.

The judged set comes from the manual itself:
  index terms   its general index (PostgreSQL's bookindex.html, dl/dt entries; Sphinx's
                genindex.html, li entries; a Texinfo manual's printed indexes, the rows of
                every table of class index-* or *-entries-printindex) maps each term to the
                pages it sends the reader to;
                the top-level terms that point to exactly one page are kept, and a sample of
                --terms of them is drawn with a fixed seed (--seed);
  headings      the section headings of every page (h1 to h3, numbering and permalink marks
                dropped) that no other page has, a sample of --headings of them, each judged to
                its page.
Every judgment is grade 3 (the page the manual itself gives). Query kinds: identifier (a term
with _ . :: () or a hump: pg_stat_activity, add_config_value), word (one other word), words
(several), heading.

The pages: every .html file of the manual (not under directories starting with '_', not the
search page), indexed by `atlas-index --site DIR` when the indexer has it, else converted first
into a corpus directory (tests/relevance/external.py's own converter: title, h2/h3 sections,
paragraphs, code as fenced blocks, navigation left out) and indexed with --corpus. The peers
index exactly the text of the Atlas index (title, description, keywords, section headings and
bodies from atlas.db), one column, as tests/relevance/evaluate.py's baselines do; Xapian through
its QueryParser (default OR, stemming STEM_SOME, English), FTS5 with all words required and any
word when nothing matches.

Metrics (tests/relevance/evaluate.py): nDCG@10, MRR, success@1, zero-result rate, per kind.

Usage:
  external.py --manual DIR --kind bookindex|genindex|texinfo --indexer ATLAS_INDEX --query-bin ATLAS_QUERY
              [--work DIR] [--terms N] [--headings N] [--seed S] [--markdown] [--worst N]
              [--margin M] [--dump FILE] [--reuse] [--no-gate]
Exit status: 0 all gates passed; 1 a gate failed (Atlas overall nDCG@10 below the best peer's
plus --margin, or its zero-result rate above the best peer's); 2 usage or input error; 77 (a
skip, for meson) when the manual is not installed.
"""
import argparse
import html
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evaluate  # noqa: E402

K = 10
KINDS = ["identifier", "word", "words", "heading"]
METRICS = ["ndcg", "mrr", "s1", "zero"]
LABELS = {"ndcg": "nDCG@10", "mrr": "MRR", "s1": "S@1", "zero": "zero"}


# --------------------------------------------------------------------------- HTML

class Node:
    __slots__ = ("tag", "attrs", "children", "parent")

    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.children, self.parent = tag, dict(attrs), [], parent

    def text(self):
        out = []
        for c in self.children:
            out.append(c if isinstance(c, str) else c.text())
        return "".join(out)

    def iter(self, tag=None):
        for c in self.children:
            if isinstance(c, Node):
                if tag is None or c.tag == tag:
                    yield c
                yield from c.iter(tag)

    def classes(self):
        return set(self.attrs.get("class", "").split())


VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "wbr"}
# an element closes these open ones when it starts (what browsers do for p, li, dt, dd)
AUTOCLOSE = {"p": {"p"}, "li": {"li", "p"}, "dt": {"dt", "dd", "p"}, "dd": {"dt", "dd", "p"},
             "tr": {"tr", "td", "th"}, "td": {"td", "th"}, "th": {"td", "th"}}
BLOCKS = {"div", "ul", "ol", "dl", "table", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "section",
          "blockquote"}


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        closes = AUTOCLOSE.get(tag, set()) | ({"p"} if tag in BLOCKS else set())
        while self.cur.tag in closes:
            self.cur = self.cur.parent
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse_html(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        b = TreeBuilder()
        b.feed(f.read())
        b.close()
    return b.root


def clean(s):
    return re.sub(r"\s+", " ", s.replace("\u00b6", "").replace("\u00a0", " ")).strip()


def page_of(href, base):
    """The page (a path relative to the manual's root) that href, found in file base, names."""
    href = href.split("#", 1)[0].split("?", 1)[0]
    if not href or "://" in href or not href.endswith(".html"):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(base), href))


# --------------------------------------------------------------------------- the judged set

def index_terms(manual, kind):
    """[(term, {pages})] of the manual's general index, top-level entries only."""
    if kind == "bookindex":
        root = parse_html(os.path.join(manual, "bookindex.html"))
        out = []
        for dt in root.iter("dt"):
            # a top-level entry: its dl is not inside a dd
            p = dt.parent
            while p is not None and p.tag not in ("dd", "#root"):
                p = p.parent
            if p is not None and p.tag == "dd":
                continue
            head = []
            for c in dt.children:
                if isinstance(c, Node) and c.tag == "a":
                    break
                head.append(c if isinstance(c, str) else c.text())
            term = clean("".join(head)).rstrip(",").strip()
            pages = {page_of(a.attrs.get("href", ""), "bookindex.html") for a in dt.iter("a")}
            pages.discard(None)
            if term and pages:
                out.append((term, pages))
        return out
    if kind == "texinfo":
        return texinfo_terms(manual)
    root = parse_html(os.path.join(manual, "genindex.html"))
    out = []
    for table in root.iter("table"):
        if "genindextable" not in table.classes():
            continue
        for li in table.iter("li"):
            if li.parent is None or li.parent.parent is None or li.parent.parent.tag == "li":
                continue  # a nested entry: its parent's context
            direct = [c for c in li.children if isinstance(c, Node) and c.tag == "a"]
            own = "".join(c for c in li.children if isinstance(c, str))
            term = clean(own) or (clean(direct[0].text()) if direct else "")
            term = re.sub(r"\s*\([^)]*\)\s*$", "", term)   # "(sphinx.application.Sphinx method)"
            term = re.sub(r"\(\)$", "", term).strip()
            pages = {page_of(a.attrs.get("href", ""), "genindex.html") for a in li.iter("a")}
            pages.discard(None)
            if term and pages:
                out.append((term, pages))
    return out


def texinfo_pages_with_index(manual):
    """The pages of a Texinfo manual that print an index (@printindex: a table whose class is
    index-cp, index-fn, ... in Texinfo 6, or cp-entries-printindex, ... in Texinfo 7)."""
    out = []
    for f in sorted(os.listdir(manual)):
        if f.endswith(".html"):
            with open(os.path.join(manual, f), encoding="utf-8", errors="replace") as h:
                if re.search(r'<table class="(index-\w+|\w+-entries-printindex)"', h.read()):
                    out.append(f)
    return out


def texinfo_terms(manual):
    """[(term, {pages})] of every index a Texinfo manual prints: each row's entry (its first
    link's text) and the page that link leads to, gathered over the rows of one term."""
    found = {}
    for f in texinfo_pages_with_index(manual):
        root = parse_html(os.path.join(manual, f))
        for table in root.iter("table"):
            cls = table.attrs.get("class", "")
            if not (cls.startswith("index-") or cls.endswith("-entries-printindex")):
                continue
            for tr in table.iter("tr"):
                links = [a for a in tr.iter("a") if "summary-letter" not in a.classes()]
                if not links:
                    continue
                term = clean(links[0].text())
                page = page_of(links[0].attrs.get("href", ""), f)
                if term and page:
                    found.setdefault(term, set()).add(page)
    return sorted(found.items())


def manual_pages(manual):
    """Every page of the manual: paths relative to its root, sorted."""
    out = []
    for dirpath, dirnames, files in os.walk(manual):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("_"))
        for f in sorted(files):
            if f.endswith(".html") and f != "search.html":
                out.append(os.path.relpath(os.path.join(dirpath, f), manual))
    return sorted(out)


def heading_text(n):
    t = clean(n.text())
    t = re.sub(r"^(Chapter|Part|Appendix)\s+[\dIVXLC]+[.:]?\s*", "", t)
    t = re.sub(r"^([\dA-Z]+\.)+(\d+\.?)*\s+", "", t)   # "9.9.4. ", "F.3. "
    t = re.sub(r"^\d+\s+(?=[A-Z])", "", t)                 # Texinfo's chapters: "12 Statistics"
    return t.strip()


def judged_set(manual, kind, pages, nterms, nheadings, seed):
    """[{query, category, judgments: {page: 3}}] (pages relative to the manual)."""
    known = set(pages)
    rng = random.Random(seed)
    terms = [(t, next(iter(p))) for t, p in index_terms(manual, kind) if len(p) == 1 and next(iter(p)) in known]
    seen, unique = set(), []
    for t, p in terms:
        if t.lower() not in seen:
            seen.add(t.lower())
            unique.append((t, p))
    unique = [(t, p) for t, p in unique if re.search(r"[^\W_]", t)]   # a letter or digit: not ", , ," or "_"
    picked = rng.sample(unique, min(nterms, len(unique)))
    heads = {}
    for p in pages:
        root = parse_html(os.path.join(manual, p))
        for tag in ("h1", "h2", "h3"):
            for h in root.iter(tag):
                t = heading_text(h)
                if len(t) >= 3 and len(t.split()) <= 12:
                    heads.setdefault(t.lower(), (t, set()))[1].add(p)
    single = sorted((t, next(iter(ps))) for t, ps in heads.values() if len(ps) == 1)
    picked_h = rng.sample(single, min(nheadings, len(single)))
    queries = []
    for t, p in picked:
        queries.append({"query": t, "category": query_kind(t), "judgments": {p: 3}})
    for t, p in picked_h:
        queries.append({"query": t, "category": "heading", "judgments": {p: 3}})
    return queries


def query_kind(q):
    if re.search(r"[_.:]|\(\)|[a-z][A-Z]", q) and len(q.split()) <= 2:
        return "identifier"
    return "word" if len(q.split()) == 1 else "words"


# --------------------------------------------------------------------------- conversion

SKIP_CLASSES = {"navheader", "navfooter", "sphinxsidebar", "related", "footer", "headerlink",
                "toc-backref", "navigation"}
MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&#|~!{}])")


def md_escape(s):
    return MD_SPECIAL.sub(r"\\\1", s)


def convert_page(root, page, slugs):
    """(title, markdown body) of one page (its path page): its visible text without navigation,
    its links to the manual's pages (slugs: page -> slug) as Markdown links."""
    title_node = next(root.iter("title"), None)
    title = clean(title_node.text()) if title_node else ""
    title = re.split(r"\s+[—|–-]\s+Sphinx documentation$", title)[0]
    title = re.sub(r"^PostgreSQL: Documentation: \d+: ", "", title)
    body = next(root.iter("body"), root)
    out, para = [], []

    def flush():
        t = clean("".join(para))
        para.clear()
        if t:
            out.append(t)

    def walk(n):
        for c in n.children:
            if isinstance(c, str):
                para.append(md_escape(c))
                continue
            target = page_of(c.attrs.get("href", ""), page) if c.tag == "a" else None
            if target in slugs and target != page and clean(c.text()):
                para.append("[" + md_escape(clean(c.text())) + "](/" + slugs[target] + ")")
                continue
            if c.tag in ("script", "style", "nav", "header", "footer") or c.classes() & SKIP_CLASSES:
                continue
            if c.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                flush()
                t = heading_text(c)
                if c.tag != "h1" and t:
                    out.append(("## " if c.tag in ("h2",) else "### ") + md_escape(t))
                elif c.tag == "h1" and t and not title:
                    out.append(md_escape(t))
                continue
            if c.tag == "pre":
                flush()
                code = c.text().strip("\n")
                if code.strip():
                    fence = "~~~~" if "```" in code else "```"
                    out.append(fence + "\n" + code.replace("~~~~", "~ ~ ~ ~") + "\n" + fence)
                continue
            block = c.tag in BLOCKS or c.tag in ("p", "li", "dt", "dd", "tr", "br")
            if block:
                flush()
            walk(c)
            if block:
                flush()
            elif c.tag in ("td", "th"):
                para.append(" ")

    walk(body)
    flush()
    return title, "\n\n".join(out)


def slug_of(page):
    s = re.sub(r"\.html$", "", page).lower()
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s or "index"


def convert(manual, pages, out):
    """Writes the corpus directory out from the manual's pages; returns {page: slug}."""
    os.makedirs(os.path.join(out, "explainers"))
    os.makedirs(os.path.join(out, "guides"))
    os.makedirs(os.path.join(out, "pages"))
    with open(os.path.join(out, "topics.json"), "w") as f:
        f.write('{"topics": [{"path": "manual", "title": "Manual", "description": "The manual.", '
                '"children": [{"path": "manual/pages", "title": "Pages", "description": "Its pages."}]}]}\n')
    with open(os.path.join(out, "synonyms.json"), "w") as f:
        f.write('{"groups": []}\n')
    slugs, used = {}, set()
    import json
    for p in pages:
        slug = slug_of(p)
        while slug in used:
            slug += "-x"
        used.add(slug)
        slugs[p] = slug
    for p in pages:
        slug = slugs[p]
        title, body = convert_page(parse_html(os.path.join(manual, p)), p, slugs)
        text = re.sub(r"\s+", " ", re.sub(r"[\\#`]|\]\(/[^)]*\)|\[", "", body))[:300].strip()
        desc = text if len(text) >= 20 else (title + " " + text + " " * 20)[:40].strip() + " page"
        fm = {"title": title or slug, "description": desc, "lastmod": "2026-01-01", "priority": 0.5,
              "image": "https://example.test/og.png", "topics": ["manual/pages"], "keywords": []}
        if not body.startswith("## "):
            body = "## " + md_escape(title or slug) + "\n\n" + body
        with open(os.path.join(out, "explainers", slug + ".md"), "w") as f:
            f.write(json.dumps(fm, indent=2, ensure_ascii=False) + "\n\n" + body + "\n")
    return slugs


def has_site_flag(indexer):
    p = subprocess.run([indexer, "--help"], capture_output=True, text=True)
    return "--site" in (p.stdout + p.stderr)


def build_index(manual, pages, indexer, work, reuse=False):
    """Indexes the manual into work/atlas.db (or, with reuse, takes the one there); returns (db
    path, {page: index path}, how)."""
    db = os.path.join(work, "atlas.db")
    if reuse and os.path.exists(db):
        import json
        with open(os.path.join(work, "pages.json")) as f:
            by_page, how = json.load(f)
        return db, by_page, how + ", reused"
    db, by_page, how = build_index_new(manual, pages, indexer, work, db)
    import json
    with open(os.path.join(work, "pages.json"), "w") as f:
        json.dump([by_page, how], f)
    return db, by_page, how


def build_index_new(manual, pages, indexer, work, db):
    if has_site_flag(indexer):
        subprocess.run([indexer, "--site", manual, "--out", db, "--quiet"], check=True)
        how = "atlas-index --site"
        import sqlite3
        paths = [r[0] for r in sqlite3.connect(db).execute("SELECT path FROM docs")]
        # a site served under a path (its canonical links or sitemap say so) has its pages'
        # paths below that folder: /en/master/usage/quickstart.html
        common = os.path.commonprefix(paths)
        base = common[:common.rfind("/")] if "/" in common else ""
        by_page = {}
        for p in pages:
            for cand in ("/" + p, "/" + re.sub(r"\.html$", "", p), "/" + re.sub(r"(^|/)index\.html$", r"\1", p)):
                found = next((c for c in (cand, base + cand) if c in paths), None)
                if found:
                    by_page[p] = found
                    break
        return db, by_page, how
    corpus = os.path.join(work, "corpus")
    slugs = convert(manual, pages, corpus)
    subprocess.run([indexer, "--corpus", corpus, "--out", db, "--quiet"], check=True,
                   stderr=subprocess.DEVNULL)
    return db, {p: "/" + s for p, s in slugs.items()}, "converted corpus, atlas-index --corpus"


# --------------------------------------------------------------------------- systems

class Xapian:
    """Xapian over the same one-column text as the FTS5 baseline: BM25, English stemmer."""

    def __init__(self, index_db, work):
        import xapian
        self.xapian = xapian
        path = os.path.join(work, "xapian")
        self.db = xapian.WritableDatabase(path, xapian.DB_CREATE_OR_OVERWRITE)
        tg = xapian.TermGenerator()
        tg.set_stemmer(xapian.Stem("english"))
        bodies = evaluate.Bodies(index_db)
        sections = {}
        for doc_id, heading, body in index_db.execute(
                "SELECT doc_id, heading, body FROM sections ORDER BY doc_id, ord, id"):
            sections.setdefault(doc_id, []).extend((heading, bodies.text(body)))
        for doc_id, path, title, description, keywords in index_db.execute(
                "SELECT id, path, title, description, keywords FROM docs ORDER BY id"):
            doc = xapian.Document()
            tg.set_document(doc)
            tg.index_text("\n".join([title, keywords, description] + sections.get(doc_id, [])))
            doc.set_data(path.lstrip("/"))
            self.db.add_document(doc)
        self.db.commit()
        self.qp = xapian.QueryParser()
        self.qp.set_stemmer(xapian.Stem("english"))
        self.qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
        self.qp.set_database(self.db)
        self.enquire = xapian.Enquire(self.db)
        self.enquire.set_weighting_scheme(xapian.BM25Weight())

    def search(self, query):
        try:
            q = self.qp.parse_query(query, 0)
        except self.xapian.QueryParserError:
            q = self.qp.parse_query(re.sub(r"[^\w\s]", " ", query), 0)
        self.enquire.set_query(q)
        return [m.document.get_data().decode() for m in self.enquire.get_mset(0, K)]


def run_atlas(query_bin, index, query):
    return evaluate.run_engine(query_bin, index, query)


# --------------------------------------------------------------------------- report

def aggregate(scores, queries):
    groups = {k: [] for k in KINDS}
    for q, s in zip(queries, scores):
        groups[q["category"]].append(s)
    groups["overall"] = scores
    return {k: ({m: sum(r[m] for r in v) / len(v) for m in METRICS} | {"n": len(v)}) for k, v in groups.items() if v}


def report(aggs, markdown):
    systems = list(aggs)
    header = ["kind", "n"] + [f"{LABELS[m]} {s}" for m in METRICS for s in systems]
    rows = []
    for kind in aggs[systems[0]]:
        row = [kind, str(aggs[systems[0]][kind]["n"])]
        for m in METRICS:
            row += [f"{aggs[s][kind][m]:.3f}" for s in systems]
        rows.append(row)
    return evaluate.table(header, rows, markdown)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--manual", required=True)
    ap.add_argument("--kind", choices=["bookindex", "genindex", "texinfo"], required=True)
    ap.add_argument("--indexer", required=True)
    ap.add_argument("--query-bin", required=True)
    ap.add_argument("--work")
    ap.add_argument("--terms", type=int, default=300)
    ap.add_argument("--headings", type=int, default=100)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--margin", type=float, default=0.05)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--worst", type=int, default=0)
    ap.add_argument("--dump", help="write every query's results of every system to this JSON file")
    ap.add_argument("--reuse", action="store_true", help="take the index already in --work")
    ap.add_argument("--no-gate", action="store_true", help="report only")
    a = ap.parse_args(argv)
    index_file = os.path.join(a.manual, {"bookindex": "bookindex.html", "genindex": "genindex.html",
                                         "texinfo": "index.html"}[a.kind])
    if not os.path.exists(index_file):
        print(f"skip: {index_file} is not installed")
        return 77
    work = a.work or tempfile.mkdtemp(prefix="atlas-external-")
    if a.work and not a.reuse:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    try:
        pages = manual_pages(a.manual)
        queries = judged_set(a.manual, a.kind, pages, a.terms, a.headings, a.seed)
        db_path, by_page, how = build_index(a.manual, pages, a.indexer, work, a.reuse)
        for q in queries:
            q["judgments"] = {by_page[p].lstrip("/"): g for p, g in q["judgments"].items() if p in by_page}
        queries = [q for q in queries if q["judgments"]]
        db = evaluate.open_index(db_path)
        peers = {"fts5-porter": evaluate.Baseline(db, "porter"), "xapian": Xapian(db, work)}
        results = {"atlas": []}
        times = []
        for q in queries:
            t0 = time.perf_counter()
            results["atlas"].append(run_atlas(a.query_bin, db_path, q["query"]))
            times.append(time.perf_counter() - t0)
        for name, peer in peers.items():
            results[name] = [peer.search(q["query"]) for q in queries]
        scores = {s: [evaluate.score(r, q["judgments"]) for r, q in zip(rs, queries)] for s, rs in results.items()}
        aggs = {s: aggregate(sc, queries) for s, sc in scores.items()}
    except (evaluate.EvalError, OSError, subprocess.CalledProcessError) as e:
        print(f"external.py: {e}", file=sys.stderr)
        return 2
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    kinds = {k: sum(q["category"] == k for q in queries) for k in KINDS}
    print(f"{a.manual}: {len(pages)} pages ({how}), {len(queries)} queries "
          f"(seed {a.seed}; " + ", ".join(f"{v} {k}" for k, v in kinds.items()) + ")\n")
    print(report(aggs, a.markdown))
    if a.dump:
        import json
        with open(a.dump, "w") as f:
            json.dump([{"query": q["query"], "kind": q["category"], "judged": list(q["judgments"]),
                        **{s: results[s][i] for s in results}} for i, q in enumerate(queries)], f, indent=1)
    if a.worst:
        print()
        qs = [dict(q, line=i) for i, q in enumerate(queries)]
        print(evaluate.worst_table(qs, results["atlas"], scores["atlas"], a.worst, a.markdown))
    best = max(peers, key=lambda s: aggs[s]["overall"]["ndcg"])
    best_zero = min(aggs[s]["overall"]["zero"] for s in peers)
    atlas = aggs["atlas"]["overall"]
    ok = True
    if atlas["ndcg"] < aggs[best]["overall"]["ndcg"] + a.margin:
        print(f"\nGATE: Atlas nDCG@10 {atlas['ndcg']:.3f} is not {a.margin:.2f} above {best}'s "
              f"{aggs[best]['overall']['ndcg']:.3f}")
        ok = False
    if atlas["zero"] > best_zero:
        print(f"\nGATE: Atlas zero-result rate {atlas['zero']:.3f} is above the best peer's {best_zero:.3f}")
        ok = False
    print("\n" + ("ok: " if ok else "failed: ") + f"Atlas {atlas['ndcg']:.3f} against {best} "
          f"{aggs[best]['overall']['ndcg']:.3f}; zero {atlas['zero']:.3f} against {best_zero:.3f}")
    return 0 if ok or a.no_gate else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
