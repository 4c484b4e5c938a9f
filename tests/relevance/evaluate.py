#!/usr/bin/env python3
"""Relevance evaluation for the Atlas search engine.

Runs every judged query of a queries file (tests/relevance/queries.tsv) through
`atlas-query --json --limit 10` and scores the ranked paths against the judgments.
Optionally scores two plain-FTS5 baselines built from the same index, so that the
engine's ranking work (field weights, boosts, stemming, synonyms, typo correction,
prefix matching) is measured against what SQLite gives for free.

Usage:
  evaluate.py --index DB --query-bin PATH/atlas-query --queries TSV
              [--floor FILE] [--baselines [--require-beat-baselines]]
              [--markdown] [--worst N]

Queries file: '#' lines and blank lines are ignored; every other line is
  query<TAB>category<TAB>path=grade path=grade ...
with paths written without the leading '/' and grades 3 (canonical), 2 (strongly
relevant), 1 (related); an unjudged page has grade 0.

Metrics, each averaged over the queries of a category and over all queries:
  nDCG@10   gain 2^grade - 1, discount 1/log2(rank + 1); the ideal DCG comes from the
            judgments themselves (best 10 grades in order), so it is 1.0 only if the
            best judged pages fill the top ranks in grade order.
  MRR       1/rank of the first result (within the top 10) that is "relevant", else 0.
            Relevant means grade >= 2 when the query has any judgment of grade >= 2,
            otherwise grade >= 1 (queries whose best answers are only "related").
  S@1, S@3  1 if a result within the top 1 / top 3 has grade >= min(2, the query's
            highest judged grade), else 0 (same threshold as MRR).
  zero      1 if the system returned no result at all (zero-result rate).

Engine: the query is split on whitespace and passed after `--` as separate
arguments (atlas-query joins them back with single spaces), so a query cannot end
in a space; the last word is always eligible for prefix matching.

Baselines (--baselines): per document, the index's title, keywords, description
and every section heading and body (tables docs and sections of atlas.db) are
concatenated into one column of an in-memory FTS5 table, once with
tokenize='unicode61' and once with tokenize='porter'. A query becomes each
whitespace word quoted as an FTS5 string ("word", inner quotes doubled) joined by
spaces, i.e. an implicit AND; if that matches nothing, the same words joined by OR.
Results are ordered by FTS5's default bm25 (ORDER BY rank, rowid as tie-break).

Exit status: 0 all gates passed; 1 a gate failed (--floor: overall engine nDCG@10
below the floor; --require-beat-baselines: the engine's nDCG@10 is not strictly
above both baselines in every category); 2 usage, input or engine error.

Python 3 standard library only; the output is deterministic for a given index,
engine and queries file.
"""

import argparse
import json
import math
import os
import sqlite3
import subprocess
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from indexlib import Bodies  # noqa: E402

K = 10                       # evaluation depth, and the --limit given to atlas-query
SYSTEMS = ("engine", "unicode61", "porter")
METRICS = ("ndcg", "mrr", "s1", "s3", "zero")
METRIC_LABELS = {"ndcg": "nDCG@10", "mrr": "MRR", "s1": "S@1", "s3": "S@3", "zero": "zero"}
SHORT = {"engine": "eng", "unicode61": "u61", "porter": "por"}


class EvalError(Exception):
    """An input, index or engine problem that prevents a meaningful evaluation."""


# --------------------------------------------------------------------------- input

def load_queries(path):
    """Returns a list of dicts {query, category, judgments: {path: grade}, line}."""
    queries = []
    seen = set()
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        raise EvalError(f"{path}: {e.strerror}")
    for lineno, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise EvalError(f"{path}:{lineno}: expected query<TAB>category<TAB>judgments")
        query, category, judged = (f.strip() for f in fields)
        if not query or not category:
            raise EvalError(f"{path}:{lineno}: empty query or category")
        if query in seen:
            raise EvalError(f"{path}:{lineno}: duplicate query {query!r}")
        seen.add(query)
        judgments = {}
        for item in judged.split():
            page, sep, grade = item.rpartition("=")
            if not sep or not page or grade not in ("1", "2", "3"):
                raise EvalError(f"{path}:{lineno}: bad judgment {item!r} (want path=1|2|3)")
            if page.startswith("/"):
                raise EvalError(f"{path}:{lineno}: judged path {page!r} must not start with '/'")
            judgments[page] = int(grade)
        if not judgments:
            raise EvalError(f"{path}:{lineno}: query {query!r} has no judgments")
        queries.append({"query": query, "category": category,
                        "judgments": judgments, "line": lineno})
    if not queries:
        raise EvalError(f"{path}: no queries")
    return queries


def open_index(path):
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.execute("SELECT count(*) FROM docs").fetchone()
    except sqlite3.Error as e:
        raise EvalError(f"{path}: cannot read index: {e}")
    return db


def check_judged_paths(db, queries, queries_path):
    """Every judged path must be a page of the index (catches typos in the TSV)."""
    known = {row[0] for row in db.execute("SELECT path FROM docs")}
    for q in queries:
        for page in q["judgments"]:
            if "/" + page not in known:
                raise EvalError(f"{queries_path}:{q['line']}: judged path {page!r} "
                                f"is not a page of the index")


# --------------------------------------------------------------------------- systems

def run_engine(query_bin, index, query):
    """Top-K paths (without the leading '/') returned by atlas-query for query."""
    cmd = [query_bin, "--index", index, "--json", "--limit", str(K), "--"] + query.split()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EvalError(f"cannot run {query_bin}: {e}")
    if proc.returncode != 0:
        raise EvalError(f"atlas-query exited {proc.returncode} for {query!r}: "
                        f"{proc.stderr.decode('utf-8', 'replace').strip()}")
    try:
        body = json.loads(proc.stdout)
        return [r["path"].lstrip("/") for r in body["results"]][:K]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise EvalError(f"atlas-query printed unexpected JSON for {query!r}: {e}")


class Baseline:
    """Plain FTS5 over one concatenated text column per document, default bm25."""

    def __init__(self, index_db, tokenizer):
        self.name = tokenizer
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize='{tokenizer}')")
        self.paths = {}
        sections = {}
        bodies = Bodies(index_db)
        for doc_id, heading, body in index_db.execute(
                "SELECT doc_id, heading, body FROM sections ORDER BY doc_id, ord, id"):
            sections.setdefault(doc_id, []).extend((heading, bodies.text(body)))
        for doc_id, path, title, description, keywords in index_db.execute(
                "SELECT id, path, title, description, keywords FROM docs ORDER BY id"):
            text = "\n".join([title, keywords, description] + sections.get(doc_id, []))
            self.db.execute("INSERT INTO t(rowid, text) VALUES (?, ?)", (doc_id, text))
            self.paths[doc_id] = path.lstrip("/")

    @staticmethod
    def expressions(query):
        """The AND expression, then the OR fallback, for the words of query."""
        # A word without letters or digits tokenizes to nothing; FTS5 has no use for it.
        words = [w for w in query.split() if any(c.isalnum() for c in w)]
        if not words:
            return []
        quoted = ['"' + w.replace('"', '""') + '"' for w in words]
        exprs = [" ".join(quoted)]
        if len(quoted) > 1:
            exprs.append(" OR ".join(quoted))
        return exprs

    def search(self, query):
        for expr in self.expressions(query):
            rows = self.db.execute(
                "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank, rowid LIMIT ?",
                (expr, K)).fetchall()
            if rows:
                return [self.paths[r[0]] for r in rows]
        return []


# --------------------------------------------------------------------------- metrics

def threshold(judgments):
    """The grade a result needs to count for MRR and success@k."""
    return min(2, max(judgments.values()))


def score(results, judgments):
    """Metrics of one ranked list (paths without '/') against one query's judgments."""
    grades = [judgments.get(p, 0) for p in results[:K]]
    dcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(grades))
    ideal = sorted(judgments.values(), reverse=True)[:K]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    need = threshold(judgments)
    first = next((i for i, g in enumerate(grades) if g >= need), None)
    return {
        "ndcg": dcg / idcg,
        "mrr": 0.0 if first is None else 1.0 / (first + 1),
        "s1": 1.0 if first is not None and first < 1 else 0.0,
        "s3": 1.0 if first is not None and first < 3 else 0.0,
        "zero": 1.0 if not results else 0.0,
    }


def aggregate(per_query, queries):
    """{category or 'overall': {'n': count, metric: mean}} in first-seen category order."""
    groups = OrderedDict()
    for q, m in zip(queries, per_query):
        groups.setdefault(q["category"], []).append(m)
    groups["overall"] = per_query
    out = OrderedDict()
    for name, rows in groups.items():
        out[name] = {"n": len(rows)}
        for metric in METRICS:
            out[name][metric] = sum(r[metric] for r in rows) / len(rows)
    return out


# --------------------------------------------------------------------------- output

def table(header, rows, markdown, left=1):
    """A plain-text or Markdown table; the first `left` columns are left-aligned
    (text), the others right-aligned (numbers)."""
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---" if i < left else "---:"
                                for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    def fmt(r):
        return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths))).rstrip()
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])


def heading(text, markdown):
    return f"### {text}\n" if markdown else f"{text}\n{'=' * len(text)}"


def summary_table(agg, markdown):
    header = ["category", "n"] + [METRIC_LABELS[m] for m in METRICS]
    rows = [[name, str(a["n"])] + [f"{a[m]:.3f}" for m in METRICS] for name, a in agg.items()]
    return table(header, rows, markdown)


def comparison_table(aggs, markdown):
    """Rows: categories; columns: each metric for engine / unicode61 / porter."""
    header = ["category", "n"]
    for m in METRICS:
        header += [f"{METRIC_LABELS[m]} {SHORT[s]}" for s in SYSTEMS]
    rows = []
    for name, a in aggs["engine"].items():
        row = [name, str(a["n"])]
        for m in METRICS:
            row += [f"{aggs[s][name][m]:.3f}" for s in SYSTEMS]
        rows.append(row)
    return table(header, rows, markdown)


def worst_table(queries, results, scores, n, markdown):
    order = sorted(range(len(queries)),
                   key=lambda i: (scores[i]["ndcg"], queries[i]["line"]))[:n]
    header = ["query", "category", "nDCG@10", "top 3 returned", "judged"]
    rows = []
    for i in order:
        q = queries[i]
        top = ", ".join(f"{p}({q['judgments'].get(p, 0)})" for p in results[i][:3]) or "(none)"
        judged = ", ".join(f"{p}={g}" for p, g in
                           sorted(q["judgments"].items(), key=lambda kv: (-kv[1], kv[0])))
        rows.append([q["query"], q["category"], f"{scores[i]['ndcg']:.3f}", top, judged])
    return table(header, rows, markdown, left=len(header))


# --------------------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(description="Score Atlas search against judged queries.")
    p.add_argument("--index", required=True, help="atlas.db built by atlas-index")
    p.add_argument("--query-bin", required=True, help="path to the atlas-query binary")
    p.add_argument("--queries", required=True, help="judged queries (TSV)")
    p.add_argument("--floor", metavar="FILE",
                   help="file holding the minimum overall engine nDCG@10; exit 1 below it")
    p.add_argument("--baselines", action="store_true",
                   help="also score plain FTS5 unicode61 and porter baselines")
    p.add_argument("--require-beat-baselines", action="store_true",
                   help="with --baselines: exit 1 unless the engine's nDCG@10 beats both "
                        "baselines in every category")
    p.add_argument("--markdown", action="store_true", help="print Markdown tables")
    p.add_argument("--worst", type=int, default=10, metavar="N",
                   help="list the N lowest-nDCG engine queries (default 10, 0 for none)")
    args = p.parse_args(argv)
    if args.require_beat_baselines and not args.baselines:
        p.error("--require-beat-baselines needs --baselines")
    if args.worst < 0:
        p.error("--worst must be >= 0")
    return args


def read_floor(path):
    try:
        text = open(path, encoding="utf-8").read().strip()
        return float(text)
    except OSError as e:
        raise EvalError(f"{path}: {e.strerror}")
    except ValueError:
        raise EvalError(f"{path}: expected one number, got {text[:40]!r}")


def main(argv):
    args = parse_args(argv)
    try:
        floor = read_floor(args.floor) if args.floor else None
        queries = load_queries(args.queries)
        index_db = open_index(args.index)
        check_judged_paths(index_db, queries, args.queries)

        results = {"engine": [run_engine(args.query_bin, args.index, q["query"])
                              for q in queries]}
        if args.baselines:
            for tokenizer in ("unicode61", "porter"):
                base = Baseline(index_db, tokenizer)
                results[tokenizer] = [base.search(q["query"]) for q in queries]
    except (EvalError, sqlite3.Error) as e:
        print(f"evaluate.py: {e}", file=sys.stderr)
        return 2

    scores = {s: [score(r, q["judgments"]) for r, q in zip(res, queries)]
              for s, res in results.items()}
    aggs = {s: aggregate(sc, queries) for s, sc in scores.items()}
    md = args.markdown

    print(heading(f"Engine ({len(queries)} queries, metrics @{K})", md))
    print(summary_table(aggs["engine"], md))
    if args.baselines:
        print()
        print(heading("Engine vs FTS5 baselines (eng = atlas-query, u61 = unicode61, "
                      "por = porter)", md))
        print(comparison_table(aggs, md))
    if args.worst:
        print()
        print(heading(f"Worst {min(args.worst, len(queries))} engine queries by nDCG@10 "
                      f"(top 3 shown as path(grade))", md))
        print(worst_table(queries, results["engine"], scores["engine"], args.worst, md))

    status = 0
    overall = aggs["engine"]["overall"]["ndcg"]
    if floor is not None:
        print()
        if overall < floor:
            print(f"FAIL: overall nDCG@10 {overall:.4f} is below the floor {floor:.4f} "
                  f"(gap {floor - overall:.4f})")
            status = 1
        else:
            print(f"ok: overall nDCG@10 {overall:.4f} >= floor {floor:.4f}")
    if args.require_beat_baselines:
        losses = [(name, a["ndcg"], aggs["unicode61"][name]["ndcg"], aggs["porter"][name]["ndcg"])
                  for name, a in aggs["engine"].items()
                  if not (a["ndcg"] > aggs["unicode61"][name]["ndcg"]
                          and a["ndcg"] > aggs["porter"][name]["ndcg"])]
        print()
        if losses:
            for name, e, u, p in losses:
                print(f"FAIL: {name}: engine nDCG@10 {e:.4f} does not beat both "
                      f"baselines (unicode61 {u:.4f}, porter {p:.4f})")
            status = 1
        else:
            print("ok: engine nDCG@10 beats both baselines in every category")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
