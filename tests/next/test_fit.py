#!/usr/bin/env python3
"""The read-next weights fitted at index time (table next_fit, indexer/next_fit.c).

1. On the corpus (13 guides) the weights are fitted: every w:<signal> and the figures are stored,
   the fitted MRR on the guides' steps is above the defaults' and each weight is on the grid.
2. With fewer guides than NEXT_FIT_MIN_GUIDES the index keeps the defaults of query/rank.h.
3. The engine uses what the index holds: the same page's suggestions differ between an index
   whose next_fit says "guide_next 0, same_topic 8" and one saying the reverse.

usage: test_fit.py --indexer BIN --query BIN --corpus DIR --rank-h FILE
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

FAILS = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        FAILS.append(what)


def build(indexer, corpus, out):
    subprocess.run([indexer, "--corpus", corpus, "--out", out, "--quiet"], check=True,
                   stderr=subprocess.DEVNULL)


def fit(db):
    return dict(sqlite3.connect(db).execute("SELECT key, value FROM next_fit"))


def suggestions(query, db, path, seen=()):
    args = [query, "--index", db, "--json", "--limit", "10", "--next", path]
    if seen:
        args += ["--seen", ",".join(seen)]
    return [s["path"] for s in json.loads(subprocess.run(args, capture_output=True, text=True,
                                                           check=True).stdout)["suggestions"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--indexer", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--rank-h", required=True)
    a = ap.parse_args()
    rank = open(a.rank_h, encoding="utf-8").read()
    grid = [float(x) for x in re.search(r"#define NEXT_FIT_GRID \{([^}]*)\}", rank).group(1).split(",")]
    names = {"guide_next": "GUIDE_NEXT", "guide_after": "GUIDE_AFTER", "guide_prev": "GUIDE_PREV",
             "list_next": "LIST_NEXT", "link_out": "LINK_OUT", "link_in": "LINK_IN",
             "builds_on": "BUILDS_ON", "prereq": "PREREQ", "same_topic": "TOPIC", "similar": "SIMILAR",
             "graph": "GRAPH", "topic_next": "TOPIC_NEXT", "number_next": "NUMBER_NEXT", "context": "CONTEXT",
             "topic_after": "TOPIC_AFTER"}
    names = {k: "NEXT_W_" + v for k, v in names.items()}
    names.update({"type_topic": "NEXT_TYPE_TOPIC", "type_guide": "NEXT_TYPE_GUIDE"})
    defaults = {k: float(re.search(rf"#define {v} ([0-9.]+)", rank).group(1)) for k, v in names.items()}

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "full.db")
        build(a.indexer, a.corpus, db)
        f = fit(db)
        check(f.get("weights") == "fitted", f"corpus: weights fitted (got {f.get('weights')})")
        check(f.get("guides") == "13" and int(f.get("cases", 0)) >= 200,
              f"corpus: 13 guides and 200 or more cases (got {f.get('guides')}, {f.get('cases')})")
        check(float(f["mrr_fitted"]) > float(f["mrr_default"]),
              f"corpus: fitted MRR {f['mrr_fitted']} above the defaults' {f['mrr_default']}")
        # the ascent starts from the defaults and moves a weight only to a point of the grid, so a
        # weight no step moved keeps its default
        for k in names:
            check(("w:" + k) in f and (float(f["w:" + k]) in grid or abs(float(f["w:" + k]) - defaults[k]) < 1e-9),
                  f"corpus: w:{k} = {f.get('w:' + k)} on the grid or its default")

        few = os.path.join(tmp, "few")
        shutil.copytree(a.corpus, few)
        keep = int(re.search(r"#define NEXT_FIT_MIN_GUIDES (\d+)", rank).group(1)) - 1
        for g in sorted(os.listdir(os.path.join(few, "guides")))[keep:]:
            os.remove(os.path.join(few, "guides", g))
        db3 = os.path.join(tmp, "few.db")
        build(a.indexer, few, db3)
        f3 = fit(db3)
        check(f3.get("weights") == "defaults" and f3.get("guides") == str(keep),
              f"{keep} guides: the defaults kept (got {f3.get('weights')}, {f3.get('guides')} guides)")
        check(all(abs(float(f3["w:" + k]) - v) < 1e-9 for k, v in defaults.items()),
              f"{keep} guides: every weight is query/rank.h's default")

        # the engine reads the index's weights
        con = sqlite3.connect(db)
        con.execute("UPDATE next_fit SET value = '0' WHERE key LIKE 'w:%'")
        con.execute("UPDATE next_fit SET value = '8' WHERE key = 'w:similar'")
        con.commit()
        by_similar = suggestions(a.query, db, "/consistent-hashing")
        con.execute("UPDATE next_fit SET value = '0' WHERE key = 'w:similar'")
        con.execute("UPDATE next_fit SET value = '8' WHERE key = 'w:same_topic'")
        con.commit()
        con.close()
        by_topic = suggestions(a.query, db, "/consistent-hashing")
        check(by_similar != by_topic, "the engine ranks by the weights the index holds")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
