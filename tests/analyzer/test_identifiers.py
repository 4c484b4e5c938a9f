#!/usr/bin/env python3
"""Identifiers and acronyms analyzed alike on both sides: each name is written once in a page of
its own (in prose, a heading or code), the mini corpus indexed with those pages, and the name
searched typed four ways (as written, lowercase, capitals, with a typo); the page holding it must
come first every time. Also: a plural acronym finds the pages of its singular, the singular those
of its plural, and a compound is found by its parts written as prose. And the word being typed
is completed below the word itself: with one page using a word, one using it only inside a
compound identifier and one only a longer word that starts with it, the word typed four ways finds
the page of the word itself first, the page of the longer word last.
usage: test_identifiers.py ATLAS_INDEX ATLAS_QUERY MINI_CORPUS"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

INDEXER, QUERY, MINI = sys.argv[1:4]
failures = 0

# slug (no word of the name in it), the name as a page writes it, a typo of it, where the page writes it
NAMES = [
    ("probe-1", "HashMap", "HashMpa", "prose"),
    ("probe-2", "ThreadPoolExecutor", "ThreadPoolExecuter", "code"),
    ("probe-3", "getElementById", "getElementByld", "code"),
    ("probe-4", "XMLHttpRequest", "XMLHttpReqest", "heading"),
    ("probe-5", "HTTPServer", "HTTPSevrer", "prose"),
    ("probe-6", "getElementsByClassName", "getElementsByClasName", "code"),
    ("probe-7", "max_wal_senders", "max_wal_sendres", "code"),
    ("probe-8", "os.path.join", "os.path.jion", "prose"),
    ("probe-9", "EventListeners", "EventListners", "prose"),
]


def page(corpus, slug, title, body):
    with open(os.path.join(corpus, "explainers", slug + ".md"), "w") as f:
        f.write('{\n  "title": "%s",\n  "description": "A probe page about one name.",\n'
                '  "lastmod": "2026-07-10",\n  "priority": 0.8,\n  "image": "https://example.test/og/x.png",\n'
                '  "topics": ["systems/caching"],\n  "keywords": ["probe"]\n}\n\n%s\n' % (title, body))


def search(db, *words):
    p = subprocess.run([QUERY, "--index", db, "--json", "--", *words], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"atlas-query {' '.join(words)}: exit {p.returncode}: {p.stderr}")
    return [r["path"] for r in json.loads(p.stdout)["results"]]


def check(name, cond, detail=""):
    global failures
    print(("ok    " if cond else "FAIL  ") + name + ("" if cond else f"  ({detail})"))
    failures += not cond


def main():
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus")
        shutil.copytree(MINI, corpus)
        for slug, name, _, where in NAMES:
            title = "Notes on page %s" % slug.split("-")[1]
            if where == "prose":
                body = "## Overview\n\nThis page explains how %s behaves when it is used.\n" % name
            elif where == "heading":
                body = "## The %s object\n\nIt sends a request and reads the answer.\n" % name
            else:
                body = "## Usage\n\nThe call looks like this:\n\n```\nx = %s(a, b)\n```\n" % name
            page(corpus, slug, title, body)
        # plural acronyms: one page says GPUs, one says GPU; LLMs and TPUs likewise
        page(corpus, "accelerators-plural", "Accelerator notes one",
             "## Fleet\n\nThe fleet runs GPUs and TPUs for LLMs all day.\n")
        page(corpus, "accelerators-singular", "Accelerator notes two",
             "## Fleet\n\nEach GPU and each TPU serves one LLM at a time.\n")
        # the word typed (completed as a prefix) against a compound holding it and a longer word
        for slug, body in (("completion-c", "A call takes the path of the file and opens it."),
                           ("completion-a", "A call takes GetFullPathName of the file and opens it."),
                           ("completion-b", "A call takes the pathname of the file and opens it.")):
            page(corpus, slug, "Notes on a file call", "## Overview\n\n%s\n" % body)
        db = os.path.join(tmp, "x.db")
        subprocess.run([INDEXER, "--corpus", corpus, "--out", db, "--quiet"], check=True)

        for slug, name, typo, _ in NAMES:
            want = "/" + slug
            for typed in (name, name.lower(), name.upper(), typo):
                got = search(db, typed)
                check(f"{name} typed {typed!r} finds {want} first", got[:1] == [want], got[:3])
        # a compound of humps is found by its parts in prose, and in a phrase
        got = search(db, "hash", "map")
        check("'hash map' finds the HashMap page", "/probe-1" in got, got)
        got = search(db, "thread", "pool", "executor")
        check("'thread pool executor' finds the ThreadPoolExecutor page first", got[:1] == ["/probe-2"],
              got[:3])
        # the parts alone still find the compound
        got = search(db, "executor")
        check("'executor' finds the ThreadPoolExecutor page", "/probe-2" in got, got)
        for typed in ("path", "Path", "PATH", "pathh"):
            got = search(db, typed)
            mine = [g for g in got if g.startswith("/completion-")]
            # the word itself, then the compound holding it, then the longer word (a correction
            # is no prefix: it need not be completed)
            want = ["/completion-c", "/completion-a", "/completion-b"]
            check(f"{typed!r} finds the page of the word first, the longer word's last",
                  mine == want if typed != "pathh" else mine in (want, want[:2]), mine)
        both = ["/accelerators-plural", "/accelerators-singular"]
        for typed in ("GPUs", "gpus", "GPUS", "GPU", "gpu", "TPUs", "tpus", "LLMs", "llms", "llm"):
            got = search(db, typed)
            check(f"{typed!r} finds both the plural and the singular page", sorted(got[:2]) == both, got[:3])
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
