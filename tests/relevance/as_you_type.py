#!/usr/bin/env python3
"""Relevance as the reader types: for every judged query of two or more words with a canonical
answer (grade 3), each prefix of its last word, from one letter to one short of the word, is
searched the way the search box sends it; the canonical pages' reciprocal rank in the first ten
is averaged over all those prefixes (MRR@10), also by the length typed (1, 2, 3 or more letters).

usage: as_you_type.py --index DB --query-bin ATLAS_QUERY --queries FILE [--floor X]
Exit status: 0, or 1 when --floor is given and the overall MRR@10 is below it."""
import argparse
import json
import subprocess
import sys


def prefixes(path):
    """(text typed, canonical paths) for each prefix of the last word of each judged query."""
    out = []
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        query, _category, judged = line.rstrip("\n").split("\t")[:3]
        canon = {"/" + j.split("=")[0] for j in judged.split() if j.endswith("=3")}
        words = query.split()
        if len(words) < 2 or not canon:
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
    if not cases:
        print("FAIL: no judged query of two or more words with a grade-3 answer")
        return 1
    total, by_len = 0.0, {}
    for words, canon, k in cases:
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
    mrr = total / len(cases)
    parts = [f"{'3+' if k == 3 else k} letter{'s' if k > 1 else ''}: {v[1] / v[0]:.3f} (n={v[0]})"
             for k, v in sorted(by_len.items())]
    print(f"{len(cases)} prefixes, MRR@10 {mrr:.3f}; by letters typed: " + ", ".join(parts))
    if args.floor is not None:
        if mrr < args.floor:
            print(f"FAIL: MRR@10 {mrr:.4f} is below the floor {args.floor:.4f}")
            return 1
        print(f"ok: MRR@10 {mrr:.4f} >= floor {args.floor:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
