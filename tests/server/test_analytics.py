#!/usr/bin/env python3
"""test_analytics.py - atlas-serve --analytics and atlas-query --analytics, over HTTP on 127.0.0.1.

1. report: a fixed run of searches (repeats served from the cache, a second page, a corrected
   word, zero-result queries, a reader typing "rep", "repl", "replication") and clicks through
   POST /api/click; the report's figures checked exactly, and the rows themselves (page, filters,
   correction); the 400s of /api/click; /metrics' zero-result and superseded counters.
2. privacy: the client's address, user agent and cookie appear nowhere in the analytics file
   or its WAL (`strings` over them).
3. locked: while another process holds the file's write lock, searches still answer 200 and the
   rows are dropped and counted; once released, rows are written again.
4. full: once no file of the server may grow (RLIMIT_FSIZE, what ulimit -f sets, lowered on the
   running server to the files' sizes), searches answer 200 and the rows are dropped and counted.
5. prune: rows older than the retention are deleted by atlas-query --analytics FILE --prune.

Usage: test_analytics.py CASE (environment: ATLAS_SERVE, ATLAS_QUERY, ATLAS_REAL_INDEX)
"""
import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from serverlib import Server  # noqa: E402

INDEX = os.environ['ATLAS_REAL_INDEX']
QUERY = os.environ['ATLAS_QUERY']
AGENT = 'AtlasPrivacyProbe/7.7'
COOKIE = 'session=cookievalue4242'
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print('FAIL', msg)


def search(srv, q, **params):
    """GETs /api/search for q; returns the parsed answer."""
    params['q'] = q
    st, _, body = srv.get_json('/api/search?' + urllib.parse.urlencode(params),
                               headers={'User-Agent': AGENT, 'Cookie': COOKIE})
    check(st == 200, 'search %r answered %d' % (q, st))
    return body


def click(srv, qid, path, rank):
    """POSTs one click; returns the status."""
    body = json.dumps({'query_id': qid, 'path': path, 'rank': rank})
    st, _, _ = srv.request('/api/click', method='POST', body=body,
                           headers={'Content-Type': 'text/plain;charset=UTF-8', 'User-Agent': AGENT,
                                    'Cookie': COOKIE})
    return st


def metric(srv, name):
    """Returns the value of the metric line starting with name, or None."""
    _, _, text = srv.request('/metrics')
    for line in text.decode().splitlines():
        if line.startswith(name + ' '):
            return float(line.split()[-1])
    return None


def report(db, *extra):
    out = subprocess.run([QUERY, '--analytics', db, '--index', INDEX, '--json'] + list(extra),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def case_report(tmp):
    db = os.path.join(tmp, 'analytics.db')
    srv = Server(INDEX, tmp, '--analytics', db)
    try:
        a = [search(srv, 'consistent hashing', limit=5) for _ in range(3)]
        qid = a[0]['query_id']
        check(all(x['query_id'] == qid for x in a), 'one query id for one request')
        check(re.fullmatch(r'[0-9a-f]{16}', qid or ''), 'query id is 16 hex digits: %r' % qid)
        b = search(srv, 'consistent hashing', limit=5, offset=5)
        check(b['query_id'] != qid, 'the second page has its own query id')
        for _ in range(2):
            check(search(srv, 'zzqxv')['total'] == 0, 'zzqxv finds nothing')
        h = search(srv, 'hashng')
        check(h['corrected'] and h['did_you_mean'] == 'hashing', 'hashng is corrected: %r' % h.get('did_you_mean'))
        for q in ('rep', 'repl'):
            search(srv, q, type='explainer')
        r = search(srv, 'replication', type='explainer')
        search(srv, 'write ahead log')
        check(click(srv, qid, a[0]['results'][0]['path'], 1) == 204, 'click 1 accepted')
        check(click(srv, qid, a[0]['results'][1]['path'], 2) == 204, 'click 2 accepted')
        check(click(srv, r['query_id'], r['results'][2]['path'], 3) == 204, 'click 3 accepted')
        for bad in ('not json', '{"query_id":"xyz","path":"/a"}', '{"query_id":"%s","path":"a"}' % qid,
                    '{"query_id":"%s","path":"/a","rank":0}' % qid, '[]'):
            st, _, _ = srv.request('/api/click', method='POST', body=bad)
            check(st == 400, 'bad click %r answered %d' % (bad, st))
        st, _, _ = srv.request('/api/click')
        check(st == 405, 'GET /api/click answered %d' % st)
        check(metric(srv, 'atlas_search_zero_results_total') == 2, 'zero-result counter is 2')
        time.sleep(3)
        check(metric(srv, 'atlas_analytics_searches_superseded_total') == 2, 'rep and repl superseded')
    finally:
        check(srv.stop() == 0, 'server exits 0')
    rep = report(db)
    check(rep['searches'] == 9, 'searches %r' % rep['searches'])
    check(rep['zero_result_searches'] == 2, 'zero-result searches %r' % rep['zero_result_searches'])
    check(rep['clicks'] == 3, 'clicks %r' % rep['clicks'])
    check(abs(rep['click_through'] - 3 / 7) < 1e-9, 'click-through %r' % rep['click_through'])
    top = [(x['query'], x['searches'], x['clicks']) for x in rep['top_queries']]
    check(top == [('consistent hashing', 4, 2), ('zzqxv', 2, 0), ('hashng', 1, 0), ('replication', 1, 1),
                  ('write ahead log', 1, 0)], 'top queries %r' % top)
    zero = rep['zero_results']
    check([(x['query'], x['searches']) for x in zero] == [('zzqxv', 2)], 'zero results %r' % zero)
    nc = [(x['query'], x['corrected']) for x in rep['no_clicks']]
    check(nc == [('hashng', 'hashing'), ('write ahead log', None)], 'no clicks %r' % nc)
    ranks = [(x['rank'], x['clicks'], round(x['rate'], 6)) for x in rep['click_through_by_rank']]
    check(ranks == [(1, 1, round(1 / 7, 6)), (2, 1, round(1 / 7, 6)), (3, 1, round(1 / 7, 6))],
          'by rank %r' % ranks)
    con = sqlite3.connect(db)
    check(con.execute('PRAGMA journal_mode').fetchone()[0] == 'wal', 'the file is in WAL mode')
    rows = con.execute("SELECT page, filters FROM searches WHERE query = 'consistent hashing' ORDER BY page").fetchall()
    check(rows == [(1, ''), (1, ''), (1, ''), (2, '')], 'pages %r' % rows)
    f = con.execute("SELECT filters, results, took_ms > 0 FROM searches WHERE query = 'replication'").fetchall()
    check(f == [('type=explainer', r['total'], 1)], 'replication row %r' % f)
    con.close()
    text = subprocess.run([QUERY, '--analytics', db, '--index', INDEX], capture_output=True, text=True).stdout
    check('9 searches (2 with no results), 3 clicks' in text, 'text report totals: %s' % text[:200])
    # the pages Atlas would suggest for a zero-result query that has some near its words
    srv = Server(INDEX, tmp, '--analytics', db)
    try:
        search(srv, 'consistent xqzzv')
        search(srv, 'consistent -hashing -consistent')
    finally:
        srv.stop()
    rep = report(db)
    z = {x['query']: x for x in rep['zero_results']}
    sugg = z.get('consistent -hashing -consistent', {}).get('suggestions', [])
    check(sugg and sugg[0]['path'].startswith('/'), 'a zero-result query gets suggestions: %r' % z)


def strings(path):
    return subprocess.run(['strings', '-n', '4', path], capture_output=True, text=True).stdout


def case_privacy(tmp):
    db = os.path.join(tmp, 'analytics.db')
    srv = Server(INDEX, tmp, '--analytics', db)
    try:
        a = search(srv, 'consistent hashing')
        click(srv, a['query_id'], a['results'][0]['path'], 1)
        time.sleep(3)
        text = ''.join(strings(p) for p in (db, db + '-wal') if os.path.exists(p))
        check('consistent hashing' in text, 'the query is in the file (the probe can see rows)')
        for secret in ('127.0.0.1', AGENT, 'cookievalue4242', 'AtlasPrivacyProbe'):
            check(secret not in text, '%r found in the analytics file' % secret)
    finally:
        srv.stop()
    text = strings(db)
    check('127.0.0.1' not in text and AGENT not in text and 'cookievalue' not in text, 'nothing personal after close')


def case_locked(tmp):
    db = os.path.join(tmp, 'analytics.db')
    srv = Server(INDEX, tmp, '--analytics', db)
    try:
        lock = sqlite3.connect(db, isolation_level=None)
        lock.execute('BEGIN IMMEDIATE')
        t0 = time.monotonic()
        for i in range(20):
            search(srv, 'locked query %d x' % i)
        check(time.monotonic() - t0 < 5, 'searches answer while the file is locked')
        time.sleep(3.5)
        dropped = metric(srv, 'atlas_analytics_rows_dropped_total')
        check(dropped == 20, 'rows dropped while locked: %r' % dropped)
        lock.execute('ROLLBACK')
        lock.close()
        search(srv, 'after the lock')
        time.sleep(3.5)
        check(metric(srv, 'atlas_analytics_rows_written_total{kind="search"}') == 1, 'written after the lock')
    finally:
        check(srv.stop() == 0, 'server exits 0 after a locked file')
    n = sqlite3.connect(db).execute('SELECT COUNT(*) FROM searches').fetchone()[0]
    check(n == 1, 'one row in the file: %d' % n)


def case_full(tmp):
    db = os.path.join(tmp, 'analytics.db')
    srv = Server(INDEX, tmp, '--analytics', db)
    try:
        search(srv, 'before the disk fills')
        time.sleep(3)
        check(metric(srv, 'atlas_analytics_rows_written_total{kind="search"}') == 1, 'written before')
        # the disk is full from now on: no file of the server may grow past its size now
        # (prlimit, as ulimit -f would have set at start)
        size = max(os.path.getsize(db), os.path.getsize(db + '-wal'))
        resource.prlimit(srv.pid, resource.RLIMIT_FSIZE, (size, size))
        for i in range(30):
            search(srv, 'full disk query %d x' % i)
        time.sleep(3.5)
        st, _, _ = srv.request('/api/search?q=still+answering')
        check(st == 200, 'a search answers on a full disk: %d' % st)
        dropped = metric(srv, 'atlas_analytics_rows_dropped_total')
        check(dropped == 30, 'rows dropped on a full disk: %r' % dropped)
        check(metric(srv, 'atlas_analytics_rows_written_total{kind="search"}') == 1, 'nothing more written')
    finally:
        check(srv.stop() == 0, 'server exits 0 after a full disk')


def case_prune(tmp):
    db = os.path.join(tmp, 'analytics.db')
    srv = Server(INDEX, tmp, '--analytics', db, '--analytics-days', '7')
    try:
        search(srv, 'fresh query')
    finally:
        srv.stop()
    con = sqlite3.connect(db)
    old = int(time.time()) - 8 * 86400
    con.execute("INSERT INTO searches(at, qid, query, filters, results, took_ms, page) "
                "VALUES(?, '0123456789abcdef', 'old query', '', 3, 1.0, 1)", (old,))
    con.execute("INSERT INTO clicks(at, qid, path, rank) VALUES(?, '0123456789abcdef', '/x', 1)", (old,))
    con.commit()
    con.close()
    check(report(db, '--since', '30')['searches'] == 2, 'both rows before pruning')
    subprocess.run([QUERY, '--analytics', db, '--prune'], check=True, capture_output=True)
    con = sqlite3.connect(db)
    left = [r[0] for r in con.execute('SELECT query FROM searches')]
    clicks = con.execute('SELECT COUNT(*) FROM clicks').fetchone()[0]
    check(left == ['fresh query'] and clicks == 0, 'pruned to the retention of 7 days: %r %d' % (left, clicks))


def main():
    case = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        globals()['case_' + case](tmp)
    print('%s: %s' % (case, 'FAILED %d' % len(failures) if failures else 'ok'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
