#!/usr/bin/env python3
"""Offline evaluation of "read next" against held-out truth, for the engine and five baselines.

1. Leave-one-guide-out: for each guide G, the index is rebuilt without G; for each step i of G,
   next(g_i, seen = g_1..g_i-1) is asked with no guide given, and the rank of g_i+1 is found in
   the full ranking (the engine is asked for its 50 best; a target ranked lower counts as a miss).
2. Held-out links: 15% of body links are removed at random (fixed seed) and the index rebuilt;
   for each removed link, is its target in the top 5 suggestions from its source?

Baselines, computed from the same rebuilt index: random (seeded), same-topic only (shared topics,
ties by path), text similarity only (the indexer's more-like-this candidates), guide-free
link-only (links and backlinks), and tag overlap scored as Hugo's related content does by default
(keywords weight 100, topics 80, threshold 80).

usage: evaluate_next.py --indexer BIN --query BIN --corpus DIR [--markdown] [--cases FILE]
                        [--require-beat-baselines] [--known-routes]
--known-routes first ranks each guide's next step with every guide in the index, asked with the
steps before it read and with nothing read.
Prints hit@1, hit@3, hit@5 and MRR per method; with --require-beat-baselines exits 1 unless the
engine's MRR beats every baseline's in both evaluations.
"""
import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from indexlib import next_rows  # noqa: E402

DEPTH = 50
METHODS = ["engine", "random", "same-topic", "text-similarity", "link-only", "hugo-tags"]


def build(indexer, corpus, out):
    subprocess.run([indexer, "--corpus", corpus, "--out", out, "--quiet"], check=True,
                   stderr=subprocess.DEVNULL)


def guide_steps(path):
    text = open(path, encoding="utf-8").read()
    end = text.index("\n}\n") + 2
    fm = json.loads(text[:end])
    return ["/" + s for sec in fm["sections"] for s in sec["steps"]]


class Baselines:
    """Rankings of every page from one index, for the baseline methods."""

    def __init__(self, db_path, seed):
        db = sqlite3.connect(db_path)
        self.docs = {i: (p, t) for i, p, t in db.execute("SELECT id, path, type FROM docs")}
        self.id_of = {p: i for i, (p, t) in self.docs.items()}
        self.candidates = [i for i, (p, t) in self.docs.items() if t in ("explainer", "guide", "topic")]
        self.topics = {}
        for d, t in db.execute("SELECT doc_id, topic FROM doc_topics"):
            self.topics.setdefault(d, set()).add(t)
        self.keywords = {i: {k.strip().lower() for k in kw.split(";") if k.strip()}
                         for i, kw in db.execute("SELECT id, keywords FROM docs")}
        self.sim, self.links = {}, {}
        for s, _, d, sig, w, _ in next_rows(db):
            if sig == "similar":
                self.sim.setdefault(s, {})[d] = w
            elif sig in ("link_out", "link_in"):
                self.links.setdefault(s, {})[d] = self.links.get(s, {}).get(d, 0) + (1.0 if sig == "link_out" else 0.5)
        self.rng = random.Random(seed)

    def rank(self, method, path, exclude):
        src = self.id_of[path]
        pool = [c for c in self.candidates if c != src and self.docs[c][0] not in exclude]
        if method == "random":
            pool = sorted(pool)
            self.rng.shuffle(pool)
            return [self.docs[c][0] for c in pool]
        if method == "same-topic":
            score = {c: len(self.topics.get(src, set()) & self.topics.get(c, set())) for c in pool}
        elif method == "text-similarity":
            score = {c: self.sim.get(src, {}).get(c, 0.0) for c in pool}
        elif method == "link-only":
            score = {c: self.links.get(src, {}).get(c, 0.0) for c in pool}
        else:  # hugo-tags: keywords 100, topics 80, threshold 80
            score = {}
            for c in pool:
                s = 100 * len(self.keywords.get(src, set()) & self.keywords.get(c, set())) + \
                    80 * len(self.topics.get(src, set()) & self.topics.get(c, set()))
                score[c] = s if s >= 80 else 0
        ranked = sorted((c for c in pool if score[c] > 0), key=lambda c: (-score[c], self.docs[c][0]))
        return [self.docs[c][0] for c in ranked]


def engine_rank(query, db, path, seen):
    args = [query, "--index", db, "--json", "--limit", str(DEPTH), "--next", path]
    if seen:
        args += ["--seen", ",".join(seen)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [s["path"] for s in json.loads(out)["suggestions"]]


def rank_of(ranking, target):
    """The 1-based rank of target in ranking's first DEPTH, or None when it is not there."""
    return ranking.index(target) + 1 if target in ranking[:DEPTH] else None


def write_cases(path, cases):
    """Writes the leave-one-out cases (route, page, next page, rank or None) to path, one a line."""
    with open(path, "w", encoding="utf-8") as out:
        for route, src, target, rank in cases:
            out.write(f"{route}\t{src}\t{target}\t{rank if rank else '-'}\n")


class Score:
    def __init__(self):
        self.n = self.h1 = self.h3 = self.h5 = 0
        self.rr = 0.0

    def add(self, ranking, target):
        self.n += 1
        r = rank_of(ranking, target)
        if r:
            self.h1 += r <= 1
            self.h3 += r <= 3
            self.h5 += r <= 5
            self.rr += 1.0 / r

    def row(self):
        n = self.n or 1
        return (self.h1 / n, self.h3 / n, self.h5 / n, self.rr / n)


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


def known_routes(query, db, routes, markdown):
    """Prints how the engine ranks each route's next step when every route is in the index (db):
    asked with the steps before it read, and with nothing read. routes: [[step paths in order]]."""
    read, fresh = Score(), Score()
    for steps in routes:
        for i in range(len(steps) - 1):
            src, target, seen = steps[i], steps[i + 1], steps[:i]
            if target == src or target in seen:
                continue
            read.add(engine_rank(query, db, src, seen), target)
            fresh.add(engine_rank(query, db, src, []), target)
    print(f"\nEvery route in the index: rank of the next step ({read.n} cases)")
    if markdown:
        print("\n| asked | hit@1 | hit@3 | hit@5 | MRR |\n|---|---|---|---|---|")
    for name, s in (("the steps before read", read), ("nothing read", fresh)):
        h1, h3, h5, mrr = s.row()
        if markdown:
            print(f"| {name} | {h1:.3f} | {h3:.3f} | {h5:.3f} | {mrr:.3f} |")
        else:
            print(f"  {name:22s} hit@1 {h1:.3f}  hit@3 {h3:.3f}  hit@5 {h5:.3f}  MRR {mrr:.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--indexer", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--seed", type=int, default=1729)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--cases", metavar="FILE",
                    help="write each left-out step's engine rank to FILE (tab-separated: route, page, "
                         "next page, rank or - for a miss), to read the failing cases")
    ap.add_argument("--require-beat-baselines", action="store_true")
    ap.add_argument("--known-routes", action="store_true",
                    help="also rank each guide's next step with every guide in the index")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        guides = sorted(f for f in os.listdir(os.path.join(a.corpus, "guides")) if f.endswith(".md"))
        if a.known_routes:
            full = os.path.join(tmp, "full.db")
            build(a.indexer, a.corpus, full)
            known_routes(a.query, full, [guide_steps(os.path.join(a.corpus, "guides", g)) for g in guides],
                         a.markdown)
        # 1. leave one guide out
        lgo = {m: Score() for m in METHODS}
        cases = []  # (route, page, next page, the engine's rank or None)
        for g in guides:
            steps = guide_steps(os.path.join(a.corpus, "guides", g))
            work = os.path.join(tmp, "lgo")
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(a.corpus, work)
            os.remove(os.path.join(work, "guides", g))
            db = os.path.join(tmp, "lgo.db")
            build(a.indexer, work, db)
            base = Baselines(db, a.seed)
            for i in range(len(steps) - 1):
                src, target, seen = steps[i], steps[i + 1], steps[:i]
                if target == src or target in seen:
                    continue
                ranking = engine_rank(a.query, db, src, seen)
                lgo["engine"].add(ranking, target)
                cases.append((g, src, target, rank_of(ranking, target)))
                for m in METHODS[1:]:
                    lgo[m].add(base.rank(m, src, set(seen) | {src}), target)

        # 2. held-out links
        work = os.path.join(tmp, "links")
        shutil.copytree(a.corpus, work)
        rng = random.Random(a.seed)
        link_re = re.compile(r"\[([^\]]+)\]\((/[a-z0-9\-/]+)\)")
        removed = []
        for f in sorted(os.listdir(os.path.join(work, "explainers"))):
            fp = os.path.join(work, "explainers", f)
            text = open(fp, encoding="utf-8").read()
            src = "/" + f[:-3]

            def drop(m):
                if m.group(2) != src and rng.random() < 0.15:
                    removed.append((src, m.group(2)))
                    return m.group(1)
                return m.group(0)
            open(fp, "w", encoding="utf-8").write(link_re.sub(drop, text))
        db = os.path.join(tmp, "links.db")
        build(a.indexer, work, db)
        base = Baselines(db, a.seed)
        held = {m: Score() for m in METHODS}
        ids = sqlite3.connect(db)
        still = {(s, d) for s, d in ids.execute(
            "SELECT a.path, b.path FROM links JOIN docs a ON a.id = links.src JOIN docs b ON b.id = links.dst")}
        pairs = sorted({p for p in removed if p not in still})  # a link written twice may survive once
        for src, dst in pairs:
            held["engine"].add(engine_rank(a.query, db, src, []), dst)
            for m in METHODS[1:]:
                held[m].add(base.rank(m, src, {src}), dst)

    if a.cases:
        write_cases(a.cases, cases)
    table("Leave-one-guide-out: rank of the next step", lgo, a.markdown)
    table(f"Held-out links (15%, seed {a.seed}): rank of the removed link's target", held, a.markdown)
    if a.require_beat_baselines:
        bad = [f"{name}: engine MRR {s['engine'].row()[3]:.3f} <= {m} {s[m].row()[3]:.3f}"
               for name, s in (("leave-one-guide-out", lgo), ("held-out links", held))
               for m in METHODS[1:] if s["engine"].row()[3] <= s[m].row()[3]]
        for b in bad:
            print("FAIL  " + b)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
