#!/usr/bin/env python3
"""The query cost budget, asserted by the engine's own work counters (never by wall time), on
1,000 generated explainers (bench/gen-corpus, seed 7).

1. Every hostile shape of bench/shapes.tsv (quoted stop-word phrases, "the the" x32, stop-word
   phrases with a filter matching nothing, 32 stop words with limit=50, common words under a
   topic or type no page has, synonym-heavy, limit=50&offset=1000, common-word phrases, 32 typos)
   stays within the default budget (postings <= 400,000, candidates <= 20,000, expansions
   <= 10,000), and within a tenth of it (--budget
   40000,2000,1000: on a tenth of the pages the budget binds as the default does at 10,000).
2. Without a budget (--budget 10^9,10^9,10^9) each shape whose work passes a bound is marked
   "partial": true under that bound (the budget is what bounds it); a partial answer did less
   work than the unbounded one, and keeps results when the unbounded run has any.
3. A quoted phrase of nothing but stop words is searched as its words: listed in "unquoted";
   an excluded one is left out.
4. Normal queries (the relevance suite's) are never partial and stay well within the budget.
5. atlas-serve applies the same budget: its body for a shape is the CLI's (took_ms aside), with
   the default and with --budget.

usage: test_query_budget.py GEN_CORPUS (environment: see faultlib.py)
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUDGET = {'postings': 400000, 'candidates': 20000, 'expansions': 20000}
UNBOUNDED = '1000000000,1000000000,1000000000'
SMALL = '40000,2000,2000'
SMALL_B = {'postings': 40000, 'candidates': 2000, 'expansions': 2000}


def shapes():
    out = []
    for line in open(os.path.join(ROOT, 'bench', 'shapes.tsv'), encoding='utf-8'):
        if line.startswith('#') or not line.strip():
            continue
        f = (line.rstrip('\n').split('\t') + [''] * 6)[:6]
        out.append(f)
    return out


def cli_args(f):
    args = []
    if f[2]:
        args += ['--limit', f[2]]
    if f[3]:
        args += ['--offset', f[3]]
    if f[4]:
        args += ['--type', f[4]]
    if f[5]:
        args += ['--topic', f[5]]
    return args


def search(index, q, args=(), budget=None, explain=True):
    cmd = [F.QUERY, '--index', index, '--json'] + (['--explain'] if explain else []) + list(args)
    if budget:
        cmd += ['--budget', budget]
    r = subprocess.run(cmd + ['--', q], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError('%s: exit %d: %s' % (q, r.returncode, r.stderr))
    return json.loads(r.stdout)


def within(w, b):
    return (w['postings'] <= b['postings'] and w['candidates'] <= b['candidates']
            and w['expansions'] <= b['expansions'])


def over(w, b):
    return any(w[k] > b[k] for k in b)


def main():
    gen = sys.argv[1]
    F.need_env('ATLAS_QUERY', 'ATLAS_INDEX', 'ATLAS_SERVE')
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        corpus, index = os.path.join(tmp, 'corpus'), os.path.join(tmp, 'atlas.db')
        subprocess.run([sys.executable, gen, '--pages', '1000', '--seed', '7', '--out', corpus,
                        '--quiet'], check=True, timeout=300)
        subprocess.run([F.INDEXER, '--corpus', corpus, '--out', index, '--quiet'], check=True,
                       timeout=300)
        for f in shapes():
            name, q = f[0], f[1]
            u = search(index, q, cli_args(f), budget=UNBOUNDED)
            for label, budget, bound in [('default', None, BUDGET), ('a tenth', SMALL, SMALL_B)]:
                d = search(index, q, cli_args(f), budget=budget)
                F.check(within(d['work'], bound), '%s, %s budget: work %s within it'
                        % (name, label, d['work']))
                if over(u['work'], bound):
                    F.check(d['partial'] is True, '%s, %s budget: unbounded work %s passes it: '
                            'partial' % (name, label, u['work']))
                if d['partial']:
                    # an unbounded search past the bound on words (8 content words) is partial
                    # too, with the same words: then no more work than it
                    dw = d['work']['postings'] + d['work']['candidates'] + d['work']['expansions']
                    uw = u['work']['postings'] + u['work']['candidates'] + u['work']['expansions']
                    F.check(dw < uw or (u['partial'] and dw <= uw),
                            '%s, %s budget: partial with less work than unbounded' % (name, label))
                    F.check(u['total'] == 0 or d['results'] or f[3],
                            '%s, %s budget: results kept (%d)' % (name, label, len(d['results'])))
                else:
                    F.check(d['work'] == u['work'], '%s, %s budget: not partial, the unbounded work'
                            % (name, label))
                if 'phrase' in name and 'stop' in name or '"the the"' in name:
                    F.check(len(d['unquoted']) > 0, '%s: the phrases are listed in "unquoted" (%d)'
                            % (name, len(d['unquoted'])))
        d = search(index, 'consistent hashing -"the of"')
        F.check(d['unquoted'] == ['-"the of"'] and d['results'] and not d['partial'],
                'an excluded stop-word phrase is left out, and listed')
        d = search(index, '"the of"')
        F.check(d['unquoted'] == ['"the of"'] and d['results'],
                'a query of one stop-word phrase searches its words')
        normal = [l.split('\t')[0] for l in
                  open(os.path.join(ROOT, 'tests/relevance/queries.tsv'), encoding='utf-8')
                  if l.strip() and not l.startswith('#')][::3]
        worst = {k: 0 for k in BUDGET}
        npartial = 0
        for q in normal:
            w = search(index, q)
            npartial += w['partial']
            for k in BUDGET:
                worst[k] = max(worst[k], w['work'][k])
        F.check(npartial == 0, '%d normal queries: none partial' % len(normal))
        F.check(all(worst[k] <= BUDGET[k] // 2 for k in BUDGET),
                'normal queries use at most half of each bound (worst %s)' % worst)
        # the server: the same engine, the same budget
        f = [s for s in shapes() if s[0].startswith('32 stop words')][0]
        qs = {'q': f[1], 'limit': f[2]}
        for extra, budget in [((), None), (('--budget', SMALL), SMALL)]:
            srv = F.Server(index, tmp, *extra)
            try:
                st, _, body = srv.request('/api/search?' + urllib.parse.urlencode(qs))
                served = json.loads(body)
            finally:
                srv.stop()
            cli = search(index, f[1], ['--limit', f[2]], budget=budget, explain=False)
            served.pop('took_ms')
            cli.pop('took_ms')
            # partial under either budget: 32 words pass the bound of 8 content words
            F.check(st == 200 and served == cli and served['partial'] is True,
                    'atlas-serve %s: the CLI\'s body, partial %s' % (
                        ' '.join(extra) or '(default budget)', served.get('partial')))
    return F.finish('test_query_budget', t0)


if __name__ == '__main__':
    sys.exit(main())
