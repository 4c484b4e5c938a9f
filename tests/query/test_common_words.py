#!/usr/bin/env python3
"""Very common words on 2,000 generated explainers. A word on nearly every page is retrieved from
the important fields only and its total estimated from the stems' page counts (total_exact false,
"about" in the CLI), close to the pages that really hold it; a rare word's total stays exact. Such
a word is looked for in the titles first, and in the other important fields only when too few
titles hold it (too few of the type asked for, when filtered), an excluded word leaving out every
page that holds it; how common a word is comes from its stems (a word being typed, "cach", is no
word of the text but the stem of pages that are). A word being typed whose completion is that
common ("desig", "design" on most pages) finds the completion in titles and keywords only, while
a rare completion is looked for everywhere. A search filtered to a type of few pages (guides,
topics) walks those pages alone and finds every one holding the word, its total exact and the other
types' counts estimated; likewise for a top-level topic of few pages.
usage: test_common_words.py GEN_CORPUS ATLAS_INDEX ATLAS_QUERY"""
import glob
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402

GEN, INDEXER, QUERY = sys.argv[1:4]


def check(name, cond, detail=""):
    """checklib's check, with the name first as this file's calls give it."""
    return checklib.check(cond, name, detail)


def pages_holding(corpus, word):
    """Pages whose text holds word or a plain inflection of it (what its stem matches)."""
    pat = re.compile(r"\b" + word + r"(s|ed|ing|er|ers)?\b", re.I)
    return sum(1 for f in glob.glob(f"{corpus}/**/*.md", recursive=True)
               if pat.search(open(f, encoding="utf-8").read()))


def guide_text(path):
    """The text a guide's file gives its page: the front matter's title, description, keywords and
    section titles (not the steps' paths), then the body."""
    text = open(path, encoding="utf-8").read()
    end = text.index("\n}\n") + 2
    fm = json.loads(text[:end])
    return " ".join([fm.get("title", ""), fm.get("description", ""), " ".join(fm.get("keywords", [])),
                     *(s.get("title", "") for s in fm.get("sections", [])), text[end:]])


def db_type(index, path):
    """The type docs holds for the page at path."""
    return sqlite3.connect(index).execute("SELECT type FROM docs WHERE path = ?", (path,)).fetchone()[0]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        corpus, index = f"{tmp}/corpus", f"{tmp}/atlas.db"
        subprocess.run([sys.executable, GEN, "--pages", "2000", "--seed", "7", "--out", corpus, "--quiet"],
                       check=True)
        subprocess.run([INDEXER, "--corpus", corpus, "--out", index, "--quiet"], check=True)

        def search(*args):
            p = subprocess.run([QUERY, "--index", index, *args], capture_output=True, text=True, check=True)
            return json.loads(p.stdout) if "--json" in args else p.stdout

        for word in ("design", "model"):
            r = search("--json", word)
            truth = pages_holding(corpus, word)
            check(f"'{word}': total marked as estimated", r["total_exact"] is False, r["total_exact"])
            check(f"'{word}': a full page of results", len(r["results"]) == 10, len(r["results"]))
            check(f"'{word}': estimate {r['total']} within 10% of the {truth} pages holding it",
                  abs(r["total"] - truth) <= 0.10 * truth, (r["total"], truth))
        r = search("--json", "--type", "explainer", "design")
        check("filtered: total marked as estimated", r["total_exact"] is False, r["total_exact"])
        check("filtered: total at least the results shown", r["total"] >= len(r["results"]) == 10, r["total"])
        # filters: the steps go on until enough pages of the type asked for are found
        r = search("--json", "--type", "guide", "model")
        check("'model' in guides: a full page of results", len(r["results"]) == 10, len(r["results"]))
        r = search("--json", "--type", "page", "design")
        truth = sum(1 for f in glob.glob(f"{corpus}/pages/*.md")
                    if re.search(r"\bdesign", open(f, encoding="utf-8").read(), re.I))
        check(f"'design' in site pages: all {truth} of them", len(r["results"]) == r["total"] == truth,
              (len(r["results"]), r["total"], truth))
        # a type of few pages: every page of it holding the word is retrieved and counted, the
        # other types' counts estimated
        for typ in ("guide", "topic"):
            r = search("--json", "--type", typ, "design")
            if typ == "guide":
                truth = sum(1 for f in glob.glob(f"{corpus}/guides/*.md")
                            if re.search(r"\bdesign", guide_text(f), re.I))
                check(f"'design' in guides: the total exact, within 2% of the {truth} holding it",
                      r["total_exact"] is True and abs(r["total"] - truth) <= 0.02 * truth and truth > 20,
                      (r["total"], r["total_exact"], truth))
            else:
                check("'design' in topics: the total exact", r["total_exact"] is True and r["total"] >= 10,
                      (r["total"], r["total_exact"]))
            check(f"'design' in {typ}s: the type's facet is the total, the others estimated",
                  r["facets"]["type"].get(typ) == r["total"] and r["facets_exact"] is False
                  and r["facets"]["type"].get("explainer", 0) > 10 * r["total"], (r["facets"], r["facets_exact"]))
            check(f"'design' in {typ}s: every result one", len(r["results"]) == 10 and all(
                db_type(index, h["path"]) == typ for h in r["results"]), [h["path"] for h in r["results"]][:3])
            out = search("--explain", "--type", typ, "design")
            steps = re.findall(r"^retrieval: (.*?): \d+ rows", out, re.M)
            check(f"'design' in {typ}s: their whole pages walked alone", steps == ["any word, whole pages"], steps)
        # a top-level topic of few pages: the same, the other topics' counts estimated
        db = sqlite3.connect(index)
        under = {p for (p,) in db.execute("SELECT d.path FROM docs d JOIN doc_topics t ON t.doc_id = d.id"
                                          " WHERE t.topic = 'web' OR t.topic LIKE 'web/%'")}
        truth = sum(1 for f in glob.glob(f"{corpus}/explainers/*.md")
                    if "/" + os.path.basename(f)[:-3] in under
                    and re.search(r"\bdesign", open(f, encoding="utf-8").read(), re.I))
        r = search("--json", "--topic", "web", "design")
        web = [t["count"] for t in r["facets"]["topic"] if t["path"] == "web"]
        check(f"'design' in topic web: the total exact, within 2% of the {truth} explainers holding it",
              r["total_exact"] is True and r["facets_exact"] is False and 20 < truth
              and abs(r["total"] - truth) <= 0.02 * truth + 1 and web == [r["total"]],
              (r["total"], r["total_exact"], r["facets_exact"], truth, web))
        check("'design' in topic web: every result under it", len(r["results"]) == 10 and all(
            any(t == "web" or t.startswith("web/") for t in h["topics"]) for h in r["results"]),
              [h["topics"] for h in r["results"]][:3])
        check("'design' in topic web: other topics estimated",
              len(r["facets"]["topic"]) > 1 and sum(r["facets"]["type"].values()) == r["total"],
              (r["facets"]["topic"], r["facets"]["type"]))
        # kept to a type's pages, the page shown still gets the boosts its positions give
        out = search("--explain", "--type", "guide", "model design")
        steps = re.findall(r"^retrieval: (.*?): \d+ rows", out, re.M)
        check("'model design' in guides: whole pages walked alone, words side by side boosted",
              steps == ["all words, whole pages"] and re.search(r"words side by side (?!0\.00)", out),
              (steps, re.findall(r"words side by side [\d.]+", out)[:10]))
        r = search("--json", "design")
        check("unfiltered: the facets exact", r["facets_exact"] is True, r["facets_exact"])
        r = search("--json", "raft")
        check("rare word: total exact", r["total_exact"] is True and 0 < r["total"] < 1000, (r["total"], r["total_exact"]))
        out = search("design")
        check("CLI says 'about' for an estimate", re.search(r"^about [\d,]+ results", out, re.M) is not None,
              out.splitlines()[:1])
        out = search("raft")
        check("CLI gives an exact count plainly", re.search(r"^\d+ results", out, re.M) is not None,
              out.splitlines()[:1])

        db = sqlite3.connect(index)
        check("the titles table has a row per page",
              db.execute("SELECT count(*) FROM titles_docsize").fetchone() == db.execute(
                  "SELECT count(*) FROM docs").fetchone())
        out = search("--explain", "design")
        steps = re.findall(r"^retrieval: (.*?): \d+ rows", out, re.M)
        check("'design' (in hundreds of titles) looked for in the titles alone",
              steps == ["any word, titles"], steps)
        r = search("--json", "design")
        untitled = [h["path"] for h in r["results"] if not re.search(r"\bdesign", db.execute(
            "SELECT title FROM docs WHERE path = ?", (h["path"],)).fetchone()[0], re.I)]
        check("'design': every result has it in its title", len(r["results"]) == 10 and not untitled,
              untitled[:3])
        out = search("--explain", "same")
        steps = re.findall(r"^retrieval: (.*?): \d+ rows", out, re.M)
        check("'same' (on most pages, in no title) looked for in the titles, then the important fields",
              steps == ["any word, titles", "any word, important fields"], steps)
        r = search("--json", "same")
        check("'same': a full page of results from the important fields", len(r["results"]) == 10,
              len(r["results"]))
        # an excluded word leaves out every page holding it, not only those whose titles do
        r = search("--json", "design -model")
        holding = [h["path"] for h in r["results"]
                   if re.search(r"\bmodel", open(glob.glob(f"{corpus}/*{h['path']}.md")[0],
                                                   encoding="utf-8").read(), re.I)]
        truth = sum(1 for f in glob.glob(f"{corpus}/**/*.md", recursive=True)
                    if re.search(r"\bdesign", t := open(f, encoding="utf-8").read(), re.I)
                    and not re.search(r"\bmodel", t, re.I))
        check("'design -model': no result holds 'model'", len(r["results"]) == 10 and not holding,
              (len(r["results"]), holding[:3]))
        check(f"'design -model': estimate {r['total']} within 25% of the {truth} pages",
              abs(r["total"] - truth) <= 0.25 * truth, (r["total"], truth))
        out = search("--explain", "cach")
        steps = re.findall(r"^retrieval: (.*?): \d+ rows", out, re.M)
        check("'cach' (no word, but the stem of cache's pages, most of them) looked for in the titles",
              steps[:1] == ["any word, titles"], steps)
        out = search("--explain", "raft")
        check("rare word: looked for in whole pages alone",
              re.findall(r"^retrieval: (.*?): \d+ rows", out, re.M) == ["any word, whole pages"],
              out.splitlines()[-3:])

        out = search("--explain", "desig")
        check("common completion kept to titles and keywords", '{title keywords} : "design"' in out,
              out.splitlines()[:3])
        r = search("--json", "desig")
        outside = [h["path"] for h in r["results"]
                   if not re.search(r"\bdesig", " ".join(db.execute(
                       "SELECT title, keywords FROM docs WHERE path = ?", (h["path"],)).fetchone()), re.I)
                   and "<mark>desig</mark>" not in json.dumps(h).lower()]
        check("common completion: every result has it in its title or keywords, or the word itself",
              len(r["results"]) == 10 and not outside, (len(r["results"]), outside[:3]))
        full = search("--json", "design")
        check("common completion: fewer pages than the word typed in full", r["total"] < full["total"],
              (r["total"], full["total"]))
        out = search("--explain", "raf")
        check("rare completion looked for everywhere", '"raft"' in out and "{title keywords}" not in out,
              out.splitlines()[:3])
    return checklib.finish(os.path.basename(__file__))


if __name__ == "__main__":
    sys.exit(main())
