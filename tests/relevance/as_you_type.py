#!/usr/bin/env python3
"""Relevance as the reader types: for every judged query with a canonical answer (grade 3), each
prefix of its last word, from one letter to one short of the word, is searched the way the search
box sends it; the canonical pages' reciprocal rank in the first ten is averaged over those
prefixes (MRR@10), also by the length typed (1, 2, 3 or more letters). Queries of two or more
words (the last word typed after others) and queries of one word (the first word being typed) are
reported apart; the floor applies to the first.

usage: as_you_type.py --index DB --query-bin ATLAS_QUERY --queries FILE [--floor X]
Exit status: 0, or 1 when --floor is given and the MRR@10 of the queries of several words is
below it."""
import argparse
import json
import subprocess
import sys


def prefixes(path):
    """(words typed, canonical paths, letters of the last word) for each prefix of the last word
    of each judged query."""
    out = []
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        query, _category, judged = line.rstrip("\n").split("\t")[:3]
        canon = {"/" + j.split("=")[0] for j in judged.split() if j.endswith("=3")}
        words = query.split()
        if not canon:
            continue
        for k in range(1, len(words[-1])):
            out.append((words[:-1] + [words[-1][:k]], canon, k))
    return out


def main():
    p = argparse.ArgumentParser(description="MRR@10 of the canonical answers while the last word is typed.")
    p.add_argument("--index", required=True)
    p.add_argument("--query-bin", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--floor", type=float)
    args = p.parse_args()
    cases = prefixes(args.queries)
    groups = {"after other words": [c for c in cases if len(c[0]) > 1],
              "first word": [c for c in cases if len(c[0]) == 1]}
    if not groups["after other words"]:
        print("FAIL: no judged query of two or more words with a grade-3 answer")
        return 1
    result = {}
    for name, group in groups.items():
        if not group:
            continue
        total, by_len = 0.0, {}
        for words, canon, k in group:
            run = subprocess.run([args.query_bin, "--index", args.index, "--json", "--", *words],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"FAIL: atlas-query {' '.join(words)!r}: exit {run.returncode}: {run.stderr.strip()}")
                return 1
            paths = [r["path"] for r in json.loads(run.stdout)["results"]]
            rr = next((1.0 / (i + 1) for i, path in enumerate(paths) if path in canon), 0.0)
            total += rr
            bucket = by_len.setdefault(min(k, 3), [0, 0.0])
            bucket[0] += 1
            bucket[1] += rr
        result[name] = total / len(group)
        parts = [f"{'3+' if k == 3 else k} letter{'s' if k > 1 else ''}: {v[1] / v[0]:.3f} (n={v[0]})"
                 for k, v in sorted(by_len.items())]
        print(f"{name}: {len(group)} prefixes, MRR@10 {result[name]:.3f}; by letters typed: " + ", ".join(parts))
    mrr = result["after other words"]
    if args.floor is not None:
        if mrr < args.floor:
            print(f"FAIL: MRR@10 {mrr:.4f} is below the floor {args.floor:.4f}")
            return 1
        print(f"ok: MRR@10 {mrr:.4f} >= floor {args.floor:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
