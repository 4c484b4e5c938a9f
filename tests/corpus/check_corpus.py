#!/usr/bin/env python3
"""Content checks over corpus/: coverage against the sitemap, front matter, body shape, links,
topics and copied text. Prints one line per problem as `file:line: message` and exits 1 if any.

usage: check_corpus.py CORPUS_DIR [SITEMAP_TSV] [--partial]
  --partial  check only the files present (no coverage or leaf-topic checks); for authors mid-way.
"""
import csv
import json
import os
import re
import sys

REQUIRED = {
    "explainer": ["title", "description", "lastmod", "priority", "image", "topics", "keywords"],
    "guide": ["title", "description", "lastmod", "priority", "image", "sections"],
    "page": ["title", "description", "lastmod", "priority", "image", "path"],
}
SHINGLE = 25
SITE = "https://explainers.rudrite.com"
SUFFIXES = [" — interactive visual explainer | Rudrite Explainers", " | Rudrite Explainers"]

problems = []


def report(path, line, msg):
    problems.append(f"{path}:{line}: {msg}")


def split_front_matter(path, text):
    """Returns (front_matter_dict, body, body_first_line) or None after reporting."""
    if not text.startswith("{"):
        report(path, 1, "front matter must start with '{' on the first line")
        return None
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.rstrip() == "}":
            raw = "\n".join(lines[: i + 1])
            try:
                fm = json.loads(raw)
            except json.JSONDecodeError as e:
                report(path, e.lineno, f"invalid JSON front matter: {e.msg} (column {e.colno})")
                return None
            if not isinstance(fm, dict):
                report(path, 1, "front matter is not an object")
                return None
            return fm, "\n".join(lines[i + 1:]), i + 2
    report(path, 1, "front matter object never ends with a line holding only '}'")
    return None


def body_words(body):
    text = re.sub(r"\]\([^)]*\)", "]", body)
    text = re.sub(r"^#+\s*", "", text, flags=re.M)
    return re.findall(r"[\w’'][\w’'.\-/+]*", text)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    partial = "--partial" in sys.argv
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    corpus = args[0]
    seed = args[1] if len(args) > 1 else os.path.join(os.path.dirname(__file__), "../../../shared/seed/sitemap.tsv")
    sitemap = {}
    with open(seed, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            path = row["loc"][len(SITE):] or "/"
            sitemap[path] = row

    topics = {}
    tpath = os.path.join(corpus, "topics.json")
    if os.path.exists(tpath):
        try:
            tree = json.load(open(tpath, encoding="utf-8"))["topics"]
        except (ValueError, KeyError) as e:
            report(tpath, 1, f"cannot read topics: {e}")
            tree = []

        def walk(nodes, parent):
            for n in nodes:
                topics[n["path"]] = {"node": n, "parent": parent, "leaf": not n.get("children")}
                walk(n.get("children", []), n["path"])
        walk(tree, None)
    elif not partial:
        report(tpath, 1, "missing")

    pages = {}  # path -> (file, fm, body, body_line, type)
    for kind, sub in (("explainer", "explainers"), ("guide", "guides"), ("page", "pages")):
        d = os.path.join(corpus, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".md"):
                continue
            fp = os.path.join(d, name)
            try:
                text = open(fp, encoding="utf-8").read()
            except UnicodeDecodeError as e:
                report(fp, 1, f"invalid UTF-8 at byte {e.start}")
                continue
            parsed = split_front_matter(fp, text)
            if not parsed:
                continue
            fm, body, bl = parsed
            for field in REQUIRED[kind]:
                if field not in fm:
                    report(fp, 1, f"missing required field '{field}'")
            path = fm.get("path") if kind == "page" else "/" + name[:-3]
            if not isinstance(path, str):
                report(fp, 1, "field 'path' must be a string")
                continue
            if path in pages:
                report(fp, 1, f"duplicate path {path} (also {pages[path][0]})")
            pages[path] = (fp, fm, body, bl, kind)

    for path, row in sitemap.items():
        if path.startswith("/t/"):
            if topics and path[3:] not in topics:
                report(tpath, 1, f"sitemap topic {path} has no entry in topics.json")
            elif topics:
                want = row["title"]
                for s in SUFFIXES:
                    want = want.replace(s, "")
                want = want.replace(" — visual explainers", "").split(" ▸ ")[-1]
                if topics[path[3:]]["node"].get("title") != want:
                    report(tpath, 1, f"topic {path[3:]} title should be '{want}'")
            continue
        if path not in pages:
            if not partial:
                report(corpus, 0, f"sitemap page {path} has no corpus file")
            continue
        fp, fm, body, bl, kind = pages[path]
        if fm.get("lastmod") != row["lastmod"]:
            report(fp, 1, f"lastmod {fm.get('lastmod')!r} differs from sitemap {row['lastmod']}")
        if not isinstance(fm.get("priority"), (int, float)) or abs(fm["priority"] - float(row["priority"])) > 1e-9:
            report(fp, 1, f"priority {fm.get('priority')!r} differs from sitemap {row['priority']}")
        if fm.get("image") != row["image"]:
            report(fp, 1, f"image {fm.get('image')!r} differs from sitemap {row['image']}")
        if kind == "explainer":
            want = row["title"].replace(SUFFIXES[0], "")
            if fm.get("title") != want:
                report(fp, 1, f"title {fm.get('title')!r} should be {want!r}")
    for path in pages:
        if path not in sitemap:
            report(pages[path][0], 1, f"page {path} is not in the sitemap")
    for path in topics:
        if "/t/" + path not in sitemap:
            report(tpath, 1, f"topic {path} is not in the sitemap")

    leaf_count = {t: 0 for t, v in topics.items() if v["leaf"]}
    shingles = {}
    for path, (fp, fm, body, bl, kind) in sorted(pages.items()):
        for ln, line in enumerate(body.split("\n"), bl):
            for m in re.finditer(r"\]\((/[^)\s#]*)(#[^)]*)?\)", line):
                target = m.group(1).rstrip("/") or "/"
                if target not in pages and target not in sitemap:
                    report(fp, ln, f"link to missing page {target}")
        if kind == "explainer":
            words = body_words(body)
            if not 400 <= len(words) <= 900:
                report(fp, bl, f"body has {len(words)} words (want 400-900)")
            h2 = len(re.findall(r"^## ", body, flags=re.M))
            if not 3 <= h2 <= 6:
                report(fp, bl, f"body has {h2} '##' sections (want 3-6)")
            links = {m for m in re.findall(r"\]\((/[^)\s#]+)", body) if not m.startswith("/t/")}
            links.discard(path)
            if len(links) < 3:
                report(fp, bl, f"links to {len(links)} other pages (want at least 3)")
            tl = fm.get("topics")
            if not isinstance(tl, list) or not 1 <= len(tl) <= 3:
                report(fp, 1, "topics must be a list of 1-3 topic paths")
                tl = []
            for t in tl:
                if topics and t not in topics:
                    report(fp, 1, f"unknown topic {t}")
                elif topics and topics[t]["parent"] is None:
                    report(fp, 1, f"topic {t} is a top-level section; use a topic below it")
                elif t in leaf_count:
                    leaf_count[t] += 1
            kw = fm.get("keywords")
            if not isinstance(kw, list) or not 5 <= len(kw) <= 12 or not all(isinstance(k, str) for k in kw):
                report(fp, 1, "keywords must be a list of 5-12 strings")
            desc = fm.get("description")
            if not isinstance(desc, str) or not 20 <= len(desc) <= 400:
                report(fp, 1, "description must be one or two sentences")
        for p in fm.get("prerequisites", []) or []:
            if "/" + p not in pages and not partial:
                report(fp, 1, f"prerequisite {p} is not a page")
        if kind == "guide":
            steps = [s for sec in fm.get("sections", []) for s in sec.get("steps", [])]
            if len(steps) < 5:
                report(fp, 1, f"guide has {len(steps)} steps (want at least 5)")
            for s in steps:
                if "/" + s not in pages and not partial:
                    report(fp, 1, f"guide step {s} is not a page")
        words = [w.lower() for w in body_words(body)]
        for i in range(len(words) - SHINGLE + 1):
            key = " ".join(words[i:i + SHINGLE])
            other = shingles.setdefault(key, fp)
            if other != fp:
                report(fp, bl, f"shares a run of {SHINGLE} words with {other}: '{key[:60]}...'")
                break
    if not partial:
        for t, n in sorted(leaf_count.items()):
            if n == 0:
                report(tpath, 1, f"leaf topic {t} holds no explainer")

    for p in problems:
        print(p)
    print(f"{len(pages)} pages checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
