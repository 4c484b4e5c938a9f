#!/usr/bin/env python3
"""Behaviour of search, suggest and read next through atlas-query: the documented contracts
(prefix, typos, synonyms, filters, facets, escaping, exit codes), each asserted.
usage: test_query.py ATLAS_QUERY ATLAS_INDEX REAL_INDEX MINI_CORPUS"""
import json
import re
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402

QUERY, INDEXER, INDEX, MINI = sys.argv[1:5]


def q(*args, index=None, expect_rc=0):
    p = subprocess.run([QUERY, "--index", index or INDEX, *args], capture_output=True, text=True)
    if p.returncode != expect_rc:
        raise AssertionError(f"atlas-query {' '.join(args)}: exit {p.returncode}, want {expect_rc}: {p.stderr}")
    return json.loads(p.stdout) if "--json" in args and p.returncode == 0 else p


def check(name, cond, detail=""):
    """checklib's check, with the name first as this file's calls give it."""
    return checklib.check(cond, name, detail)


def paths(res):
    return [r["path"] for r in res["results"]]


def probe_index(tmp, slug, text):
    """Indexes the mini corpus with one more explainer, slug.md holding text; returns the index."""
    corpus = os.path.join(tmp, "corpus")
    shutil.copytree(MINI, corpus)
    with open(os.path.join(corpus, "explainers", slug + ".md"), "w") as f:
        f.write(text)
    db = os.path.join(tmp, "x.db")
    subprocess.run([INDEXER, "--corpus", corpus, "--out", db, "--quiet"], check=True)
    return db


def main():
    r = q("--json", "consis")
    check("prefix: 'consis' finds consistent hashing or consistency", any(
        p in paths(r)[:3] for p in ("/consistent-hashing", "/consistency-quorums-cap")), paths(r)[:3])
    # the word being typed after others is completed from the titles holding those others first,
    # a single letter too: results as you type lead to the page being typed
    r = q("--json", "consistent", "h")
    check("'consistent h' completes to the title's 'hashing'", paths(r)[:1] == ["/consistent-hashing"], paths(r)[:3])
    r = q("--json", "rate", "l")
    check("'rate l' completes to 'limiting'", paths(r)[:1] == ["/rate-limiting-algorithms"], paths(r)[:3])
    r, full = q("--json", "exactly", "o"), q("--json", "exactly", "once")
    check("a letter completed from titles is not looked for alone", paths(r)[:2] == paths(full)[:2],
          (paths(r)[:3], paths(full)[:3]))
    p = q("--explain", "--", "design", "a", "ch")
    check("a title's completion joins the most frequent ones", '"chat"' in p.stdout.split("\n", 3)[2], p.stdout[:400])
    r = q("--json", "distribted", "training")
    check("typo corrected with did_you_mean", r["did_you_mean"] == "distributed training", r["did_you_mean"])
    check("typo: corrected results", paths(r)[:1] == ["/distributed-training-parallelisms"], paths(r)[:3])
    # another form of a known word is no typo: "decorators" (not in the text) has the stem of
    # "decorator" and matches the same pages, so nothing is offered; a misspelling with the same
    # stem as its correction ("limitting", "limiting") still is
    r = q("--json", "python", "decorators")
    check("a plural is not corrected to its singular", r["did_you_mean"] is None and r["results"],
          (r["did_you_mean"], paths(r)[:3]))
    r = q("--json", "rate", "limitting")
    check("a misspelling with its correction's stem is corrected", r["did_you_mean"] == "rate limiting",
          r["did_you_mean"])
    r = q("--json", "gil")
    check("synonym/acronym: gil", paths(r)[:1] == ["/python-gil-honestly"], paths(r)[:3])
    r = q("--json", "global", "interpreter", "lock")
    check("synonym expansion both ways", "/python-gil-honestly" in paths(r)[:2], paths(r)[:3])
    r = q("--json", "caching")
    check("topic page ranks for its topic", "/t/systems/caching" in paths(r)[:5], paths(r)[:5])
    r = q("--json", "python", "source")
    check("guide ranks for its title", "/python-from-the-source" in paths(r)[:3], paths(r)[:3])
    r = q("--json", "--type", "guide", "jax")
    check("type filter", r["results"] and all(x["type"] == "guide" for x in r["results"]), paths(r))
    check("type facet counts with filter", r["facets"]["type"].get("explainer", 0) > 0, r["facets"])
    r = q("--json", "--topic", "systems/caching", "cache")
    check("topic filter", r["results"] and all(any(t.startswith("systems/caching") for t in x["topics"])
                                               for x in r["results"]), paths(r))
    r = q("--json", "--limit", "3", "--offset", "2", "cache")
    full = q("--json", "--limit", "5", "cache")
    check("limit and offset page through the same ranking", paths(r) == paths(full)[2:5], (paths(r), paths(full)))
    # broad queries: the pages of 10 (the best of many, picked without sorting them all) are the
    # slices of one long ranking
    for word in ("design", "python", "memory"):
        full = q("--json", "--limit", "40", word)
        pages = sum((paths(q("--json", "--limit", "10", "--offset", str(o), word)) for o in (0, 10, 20, 30)), [])
        check(f"pages of 10 are slices of the whole ranking ({word}, {full['total']} matches)",
              pages == paths(full) and full["total"] > 40, (pages[:12], paths(full)[:12]))
    a, b = q("--json", "cache"), q("--json", "cache")
    check("deterministic", paths(a) == paths(b))
    r = q("--json", "shard_map")
    check("identifier: shard_map", paths(r)[:1] == ["/shard-map-internals"], paths(r)[:3])
    r = q("--json", "torch.compile")
    check("identifier: torch.compile", "/torch-xla-dynamo-bridge" in paths(r)[:3], paths(r)[:3])
    r = q("--json", "--", "cache", "-redis")
    check("excluded word", r["total"] < q("--json", "cache")["total"], r["total"])
    r = q("--json", "\"consistent hashing\"")
    check("quoted phrase", paths(r)[:1] == ["/consistent-hashing"], paths(r)[:3])
    r = q("--json", "how", "does", "a", "matching", "engine", "keep", "order", "fairness")
    check("question finds its explainer", paths(r)[:1] == ["/design-a-matching-engine"], paths(r)[:3])
    # the page answering a question may lack one of its words ("possible"): it still comes first
    r = q("--json", "is", "exactly", "once", "delivery", "possible")
    check("a question's answer lacking one of its words ranks first", paths(r)[:1] == ["/idempotency-exactly-once"],
          paths(r)[:3])
    r = q("--json", "raft")
    hit = r["results"][0]
    check("sections carry heading and anchor", all(s["anchor"] and s["heading"] for s in hit["sections"]), hit["sections"])
    check("snippet has a highlight", "<mark>" in hit["snippet"] or "<mark>" in json.dumps(hit["sections"]), hit["snippet"])
    r = q("--json", "--suggest", "consis")
    check("suggest returns completed queries and titles", any(s["kind"] == "page" for s in r["suggestions"]) and
          any(s["kind"] == "query" for s in r["suggestions"]), r["suggestions"])
    r = q("--json", "--suggest", "consistent ha")
    qs = [s for s in r["suggestions"] if s["kind"] == "query"]
    check("suggest completes the whole query, the words before the last kept",
          qs and all(s["text"].startswith("consistent ha") for s in qs) and
          "consistent hash" in [s["text"] for s in qs][:2], qs)
    check("suggest ranks completions by the pages they find",
          [s["pages"] for s in qs] == sorted((s["pages"] for s in qs), reverse=True) and all(s["pages"] > 0 for s in qs), qs)
    texts = [s["text"] for s in qs]
    check("suggest keeps one form of a word", not ("consistent hash" in texts and "consistent hashes" in texts), texts)
    r = q("--json", "--suggest", "kuberntes")
    check("suggest tolerates a typo in the last word",
          any(s["kind"] == "query" and s["text"] == "kubernetes" for s in r["suggestions"]), r["suggestions"])
    r = q("--json", "--suggest", "raft concensus")
    check("suggest corrects the last word after others kept",
          any(s["kind"] == "query" and s["text"] == "raft consensus" for s in r["suggestions"]), r["suggestions"])
    # an identifier being typed is completed whole from the identifiers the pages write, the
    # titles still found by its last part
    for typed, want in [("lru_", "lru_cache"), ("functools.lr", "functools.lru_cache"), ("tpu_lo", "tpu_lowering_rule")]:
        r = q("--json", "--suggest", typed)
        texts = [s["text"] for s in r["suggestions"] if s["kind"] == "query"]
        check(f"suggest completes the identifier {typed!r} whole", want in texts and
              all(t.startswith(typed) and not t.endswith("_") for t in texts), texts)
    r = q("--json", "--suggest", "functools.lr")
    check("... its titles still found", any(s["kind"] == "page" for s in r["suggestions"]), r["suggestions"])
    r = q("--json", "--limit", "3", "--suggest", "c")
    check("suggest honours the limit", len(r["suggestions"]) == 3, r["suggestions"])
    r = q("--json", "--suggest", "zzzqqqxx")
    check("suggest: nothing for a word nothing is near", r["suggestions"] == [], r["suggestions"])
    r = q("--json", "--next", "/jax-sharding")
    check("next: five suggestions with reasons", len(r["suggestions"]) == 5 and all(s["reasons"] for s in r["suggestions"]), r)
    check("next: excludes the page itself", "/jax-sharding" not in [s["path"] for s in r["suggestions"]])
    same = [q("--json", "--next", p, "--seen", seen)["suggestions"] for p, seen in
            [("/jax-sharding", "/jax-tracing-jaxpr"), ("jax-sharding", "jax-tracing-jaxpr"),
             ("https://example.org/jax-sharding/", "/jax-tracing-jaxpr/index.html")]]
    check("next: a path without its leading slash, or as a URL, is the page's", same[0] == same[1] == same[2],
          [[s["path"] for s in x] for x in same])
    r = q("--json", "--next", "/jax-sharding", "--guide", "jax-stack")
    check("next: guide's next step first", r["suggestions"][0]["reasons"][0].startswith("Step "), r["suggestions"][0])
    # no guide named, the page read just before tells the route: every step of every guide after
    # its first, with the steps before it read, has the route's next step first, "Step N of" it
    db = sqlite3.connect(INDEX)
    routes = {}
    for g, title, step in db.execute("SELECT g.path, g.title, s.path FROM guide_steps gs JOIN docs g ON g.id = gs.guide_id"
                                     " JOIN docs s ON s.id = gs.doc_id ORDER BY gs.guide_id, gs.step"):
        routes.setdefault((g, title), []).append(step)
    db.close()
    wrong = []
    for (g, title), steps in routes.items():
        for i in range(1, len(steps) - 1):
            if steps[i + 1] in steps[:i + 1]:
                continue
            first = q("--json", "--next", steps[i], "--seen", ",".join(steps[:i]))["suggestions"][0]
            if first["path"] != steps[i + 1] or f"Step {i + 2} of {title}" not in first["reasons"]:
                wrong.append((g, steps[i], first["path"], first["reasons"]))
    check(f"next: the route read so far gives its next step first ({sum(len(s) - 2 for s in routes.values())} steps)",
          routes and not wrong, wrong[:3])
    # nothing read: a page that is a step of one guide alone has that guide's next step first
    guides_of = {}
    for (g, title), steps in routes.items():
        for i, p in enumerate(steps):
            guides_of.setdefault(p, []).append((title, i, steps))
    alone = [(p, t, i, st) for p, gs in guides_of.items() if len(gs) == 1 for t, i, st in gs
             if i + 1 < len(st) and st.count(p) == 1 and st[i + 1] != p]
    wrong = []
    for p, title, i, steps in alone:
        first = q("--json", "--next", p)["suggestions"][0]
        if first["path"] != steps[i + 1] or f"Step {i + 2} of {title}" not in first["reasons"]:
            wrong.append((p, first["path"], first["reasons"]))
    check(f"next: a step of one guide alone, nothing read, has its next step first ({len(alone)} pages)",
          len(alone) >= 20 and not wrong, wrong[:3])
    seen = ",".join(s["path"] for s in q("--json", "--next", "/jax-sharding")["suggestions"][:2])
    r = q("--json", "--next", "/jax-sharding", "--seen", seen + ",/no-such-page")
    check("next: seen pages left out, unknown ones ignored",
          not set(seen.split(",")) & {s["path"] for s in r["suggestions"]}, r)
    # a long history: the pages read last count (the last 64 listed), not the first 64
    top = q("--json", "--next", "/jax-sharding")["suggestions"][0]["path"]
    r = q("--json", "--next", "/jax-sharding", "--seen", ",".join(["/no-such-page"] * 70 + [top]))
    check("next: of more than 64 seen, the last listed count", top not in {s["path"] for s in r["suggestions"]}, r)
    r = q("--json", "--next", "/jax-sharding", "--seen", ",".join([top] + ["/no-such-page"] * 64))
    check("next: of more than 64 seen, the first listed past the last 64 do not",
          top in {s["path"] for s in r["suggestions"]}, r)
    r = q("--json", "--next", "/guides")
    check("next: works from site pages", isinstance(r["suggestions"], list))
    q("--next", "/no-such-page", expect_rc=1)
    q("--json", "--limit", "0", "raft", expect_rc=2)
    q(expect_rc=2)
    q("raft", index="/nonexistent/atlas.db", expect_rc=1)
    r = q("--json", "zzzzqqqq")
    check("no results is success", r["total"] == 0 and r["results"] == [])
    p = q("--stats")
    check("stats shows the build", "build_id" in p.stdout and "corpus_digest" in p.stdout, p.stdout)
    p = q("--explain", "raft", "leader")
    check("explain shows fields and boosts", "title" in p.stdout and "coverage" in p.stdout, p.stdout[:300])

    # escaping: a page whose text holds markup comes back escaped, only <mark> is HTML
    with tempfile.TemporaryDirectory() as tmp:
        db = probe_index(tmp, "markup-probe", '{\n  "title": "Markup <b>probe</b> \\"quoted\\" C:\\\\temp",\n  "description": "Probe page.",\n'
                    '  "lastmod": "2026-07-10",\n  "priority": 0.8,\n  "image": "https://example.test/og/x.png",\n'
                    '  "topics": ["systems/caching"],\n  "keywords": ["probe"]\n}\n\n## Zebra <img src=x onerror=alert(1)>\n\n'
                    'The zebra text has <script>alert("x")</script> and "quotes" & ampersands.\n')
        r = q("--json", "zebra", index=db)
        hit = r["results"][0]
        blob = hit["snippet"] + json.dumps(hit["sections"])
        check("markup escaped in snippets", "<script" not in blob and "&lt;script&gt;" in blob and "<img" not in blob, blob)
        check("highlights are the only tags", blob.replace("<mark>", "").replace("</mark>", "").count("<") == 0, blob)
        check("title served as text", hit["title"] == 'Markup <b>probe</b> "quoted" C:\\temp', hit["title"])

    # a compound matched whole is marked whole ("hashmap" over "HashMap", "shard_map" over its
    # parts); a match of one part marks that part; a word that stems as the compound does too
    with tempfile.TemporaryDirectory() as tmp:
        db = probe_index(tmp, "compound-probe", '{\n  "title": "Compound probe",\n  "description": "Probe page.",\n'
                    '  "lastmod": "2026-07-10",\n  "priority": 0.8,\n  "image": "https://example.test/og/x.png",\n'
                    '  "topics": ["systems/caching"],\n  "keywords": ["probe"]\n}\n\n## Maps\n\n'
                    'A QuokkaMap holds entries; each quokka_store keeps QuokkaMaps by key.\n')

        def marks(query):
            r = q("--json", query, index=db)
            hit = r["results"][0] if r["results"] else {"snippet": "", "sections": []}
            return re.findall(r"<mark>(.*?)</mark>", hit["snippet"] + json.dumps(hit["sections"]))

        m = marks('"quokkamap"')
        check("a compound matched whole is marked whole", m and set(m) == {"QuokkaMap", "QuokkaMaps"}, m)
        m = marks('"quokka_store"')
        check("an identifier with joiners is marked whole", m and set(m) == {"quokka_store"}, m)
        m = marks('"quokka"')
        check("a match of one part marks the part", m and set(m) == {"Quokka", "quokka"}, m)

    # anchors: a heading's own anchor is made again by the engine; a page's second heading of the
    # same words is numbered, and that one is stored
    with tempfile.TemporaryDirectory() as tmp:
        db = probe_index(tmp, "anchor-probe", '{\n  "title": "Anchor probe",\n  "description": "Probe page.",\n'
                    '  "lastmod": "2026-07-10",\n  "priority": 0.8,\n  "image": "https://example.test/og/x.png",\n'
                    '  "topics": ["systems/caching"],\n  "keywords": ["probe"]\n}\n\n'
                    '## Set-up & Tear_down: Über 2x\n\nThe quagga starts here.\n\n'
                    '## Set-up & Tear_down: Über 2x\n\nThe quagga starts again here.\n')
        r = q("--json", "quagga", index=db)
        anchors = sorted(s["anchor"] for s in r["results"][0]["sections"]) if r["results"] else []
        check("anchors made from headings, the repeated one numbered",
              anchors == ["set-up--tear_down-Über-2x", "set-up--tear_down-Über-2x-1"], anchors)

    # ranking signals outside the fields: the words of a page's path, and query words side by side
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus")
        shutil.copytree(MINI, corpus)

        def page(slug, title, body):
            with open(os.path.join(corpus, "explainers", slug + ".md"), "w") as f:
                f.write('{\n  "title": "%s",\n  "description": "A probe page.",\n  "lastmod": "2026-07-10",\n'
                        '  "priority": 0.8,\n  "image": "https://example.test/og/x.png",\n'
                        '  "topics": ["systems/caching"],\n  "keywords": ["probe"]\n}\n\n## Notes\n\n%s\n'
                        % (title, body))
        # same words, same counts; only the path tells the pages apart (by path order alone,
        # /aardvark-notes would come first)
        page("quokka-pipeline", "Pipeline walkthrough", "Here the quokka stage runs once per batch.")
        page("aardvark-notes", "Notebook walkthrough", "Here the quokka stage runs once per batch.")
        # same words, same counts; only their order differs (/pair-apart first by path order)
        page("pair-near", "Pair one", "Alpha zorbit flange beta gamma delta epsilon.")
        page("pair-apart", "Pair two", "Alpha zorbit beta flange gamma delta epsilon.")
        # a title that is the query but for an article: "The while Loop" for "while loop" (its
        # words are stop words but "loop"; "Loops", shorter, would lead on the fields alone)
        page("page-x", "Loops", "Each wumpus loop repeats its body; loops nest.")
        page("page-y", "The while Loop", "Each wumpus loop repeats its body; loops nest.")
        # a title holding the word typed above one holding another form of its stem ("Timing
        # wheels" first by path order alone)
        page("page-m", "Timing wheels", "The zorgon clock ticks the time away.")
        page("page-n", "Time wheels", "The zorgon clock ticks the time away.")
        db = os.path.join(tmp, "x.db")
        subprocess.run([INDEXER, "--corpus", corpus, "--out", db, "--quiet"], check=True)
        r = q("--json", "zorgon", "time", index=db)
        check("a title holding the word as typed leads one holding its stem alone",
              paths(r)[:2] == ["/page-n", "/page-m"], paths(r))
        r = q("--json", "zorgon", "timing", index=db)
        check("and the other way round", paths(r)[:2] == ["/page-m", "/page-n"], paths(r))
        r = q("--json", "while", "loop", index=db)
        check("a title that is the query but for its stop words leads", paths(r)[:2] == ["/page-y", "/page-x"],
              paths(r))
        r = q("--json", "loops", index=db)
        check("and only for the query it is", paths(r)[:2] == ["/page-x", "/page-y"], paths(r))
        r = q("--json", "quokka", index=db)
        check("a word of the path lifts its page", paths(r)[:2] == ["/quokka-pipeline", "/aardvark-notes"],
              paths(r))
        r = q("--json", "zorbit", "flange", index=db)
        check("query words side by side lift the page", paths(r)[:2] == ["/pair-near", "/pair-apart"], paths(r))
        r = q("--json", "flange", "zorbit", index=db)
        check("side by side counts in the query's order", paths(r)[:2] == ["/pair-apart", "/pair-near"],
              paths(r))
        p = q("--explain", "zorbit", "the", "flange", index=db)
        check("a stop word between query words lets one word between them",
              p.stdout.count("words side by side 1.00") == 2, p.stdout[:600])
        p = q("--explain", "zorbit", "flange", index=db)
        check("explain shows both signals", "path words" in p.stdout and "words side by side 1.00" in p.stdout,
              p.stdout[:600])

    return checklib.finish(os.path.basename(__file__))


if __name__ == "__main__":
    sys.exit(main())
