#!/usr/bin/env python3
"""test_http.py - HTTP integration tests of atlas-serve, on 127.0.0.1 only.

Usage: test_http.py http | swap-load
  http       every endpoint and error code, headers, ETag/304, CORS, HEAD, keep-alive, the page,
             the access log, equality with atlas-query --json, hot swap and a refused swap
  swap-load  continuous requests from 2 threads while the index is replaced 10 times
Environment: ATLAS_SERVE, ATLAS_QUERY, ATLAS_INDEX (the three binaries), ATLAS_REAL_INDEX (the
index of the real corpus; only copies are served), ATLAS_CORPUS (the corpus, for rebuilds).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import checklib  # noqa: E402
from checklib import check, failures  # noqa: E402
from serverlib import Server  # noqa: E402

SERVE = os.environ['ATLAS_SERVE']
QUERY = os.environ['ATLAS_QUERY']
INDEXER = os.environ['ATLAS_INDEX']
REAL_INDEX = os.environ['ATLAS_REAL_INDEX']
CORPUS = os.environ['ATLAS_CORPUS']
ORIGIN = 'https://explainers.example.org'
JSON_TYPE = 'application/json; charset=utf-8'
TIMEOUT = 10

checklib.quiet = True  # failed checks only


def strip_took(body):
    """Returns body with the took_ms value (a timing, different on every run) zeroed."""
    return re.sub(rb'"took_ms":[-+0-9.eE]+', b'"took_ms":0', body)


def cli(index, *args):
    """Runs atlas-query --json on index. Returns its stdout (bytes)."""
    res = subprocess.run([QUERY, '--index', index, '--json'] + list(args), capture_output=True,
                         timeout=TIMEOUT)
    return res.stdout


def stats(index):
    """Returns atlas-query --stats --json of index."""
    return json.loads(cli(index, '--stats'))


def build_index(out):
    """Builds a copy of the real corpus with one sentence added to its first explainer into out
    with atlas-index: another index, with its own build id (the build id is the content's, so
    a rebuild of the unchanged corpus would have the same). Returns out."""
    corpus = out + '.corpus'
    shutil.rmtree(corpus, ignore_errors=True)
    shutil.copytree(CORPUS, corpus)
    page = os.path.join(corpus, 'explainers', sorted(os.listdir(os.path.join(corpus, 'explainers')))[0])
    with open(page, 'a', encoding='utf-8') as f:
        f.write('\nThis copy was rebuilt for a test.\n')
    subprocess.run([INDEXER, '--corpus', corpus, '--out', out, '--quiet'], check=True,
                   timeout=60)
    shutil.rmtree(corpus)
    return out


def replace(path, source, workdir):
    """Copies source beside path and renames the copy over path: an atomic replace, a new
    inode."""
    tmp = os.path.join(workdir, 'staging.db')
    shutil.copyfile(source, tmp)
    os.rename(tmp, path)


def wait_for(pred, seconds):
    """Polls pred every 50 ms for up to seconds. Returns its last value."""
    until = time.monotonic() + seconds
    value = pred()
    while not value and time.monotonic() < until:
        time.sleep(0.05)
        value = pred()
    return value


def q(params):
    """Returns params as a query string (spaces as %20)."""
    return urllib.parse.urlencode(params, quote_via=urllib.parse.quote)


def metric(srv, name):
    """Returns the value of an unlabelled metric from /metrics (None when absent)."""
    text = srv.request('/metrics')[2].decode()
    m = re.search(r'^%s (\S+)$' % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def test_cli_equality(srv, index):
    """/api/search, /api/suggest and /api/next bodies equal atlas-query --json output byte for
    byte (took_ms, a timing, aside)."""
    searches = [
        ({'q': 'consistent hashing'}, []),
        ({'q': 'consis'}, []),
        ({'q': 'gil'}, []),
        ({'q': 'how does the gil work'}, []),
        ({'q': 'consistnt hashng'}, []),
        ({'q': 'cache -redis'}, []),
        ({'q': '"consistent hashing"'}, []),
        ({'q': 'shard_map'}, []),
        ({'q': 'cache', 'limit': '3', 'offset': '2'}, ['--limit', '3', '--offset', '2']),
        ({'q': 'cache', 'type': 'guide'}, ['--type', 'guide']),
        ({'q': 'cache', 'topic': 'systems'}, ['--topic', 'systems']),
        ({'q': '<script>alert(1)</script> & hashing'}, []),
        ({'q': 'jax '}, []),
    ]
    for params, args in searches:
        status, headers, body = srv.request('/api/search?' + q(params))
        want = cli(index, *(args + ['--', params['q']]))
        check(status == 200, 'search %r: status %d' % (params, status))
        check(strip_took(body) == strip_took(want),
              'search %r: body differs from atlas-query --json:\n  %r\n  %r'
              % (params, body[:300], want[:300]))
    status, _, body = srv.request('/api/suggest?' + q({'q': 'consis'}))
    check(status == 200 and body == cli(index, '--suggest', 'consis'),
          '/api/suggest equals atlas-query --suggest')
    status, _, body = srv.request('/api/suggest?' + q({'q': 'consistent ha', 'limit': '3'}))
    check(status == 200 and body == cli(index, '--limit', '3', '--suggest', 'consistent ha'),
          '/api/suggest with a limit equals atlas-query --limit --suggest')
    # correct=false: the words as typed, no did_you_mean
    _, _, fixed = srv.get_json('/api/search?' + q({'q': 'raft concensus'}))
    _, _, typed = srv.get_json('/api/search?' + q({'q': 'raft concensus', 'correct': 'false'}))
    check(fixed['did_you_mean'] == 'raft consensus' and typed['did_you_mean'] is None and
          fixed['results'] and typed['results'] and
          fixed['results'][0]['score'] != typed['results'][0]['score'],
          'correct=false searches for the words as typed: %r / %r'
          % (fixed['did_you_mean'], typed['did_you_mean']))
    for params, args in [({'path': '/consistent-hashing'}, ['--next', '/consistent-hashing']),
                         ({'path': '/consistent-hashing', 'seen': '/,/library'},
                          ['--next', '/consistent-hashing', '--seen', '/,/library'])]:
        status, _, body = srv.request('/api/next?' + q(params))
        check(status == 200 and body == cli(index, *args),
              '/api/next %r equals atlas-query --next' % params)
    # a guide: the first guide found, and the first page it suggests
    _, _, data = srv.get_json('/api/search?' + q({'q': 'guide', 'type': 'guide', 'limit': '1'}))
    if check(data['results'], 'a guide is found'):
        guide = data['results'][0]['path'].lstrip('/')
        status, _, nxt = srv.get_json('/api/next?' + q({'path': '/' + guide}))
        check(status == 200, '/api/next of guide %s' % guide)
        if nxt.get('suggestions'):
            step = nxt['suggestions'][0]['path']
            status, _, body = srv.request('/api/next?' + q({'path': step, 'guide': guide}))
            check(status == 200 and body == cli(index, '--next', step, '--guide', guide),
                  '/api/next with a guide equals atlas-query --next --guide')


def expect_error(srv, path, status, code, method='GET', **kw):
    """Checks that path answers status with the JSON error code. Returns the headers."""
    got, headers, body = srv.request(path, method=method, **kw)
    what = '%s %s' % (method, path[:80])
    check(got == status, '%s: status %d, want %d' % (what, got, status))
    check(headers.get('content-type') == JSON_TYPE, '%s: JSON content type' % what)
    check(headers.get('x-content-type-options') == 'nosniff', '%s: nosniff' % what)
    try:
        err = json.loads(body)['error']
        check(err['code'] == code and err['message'],
              '%s: error code %r, want %r' % (what, err['code'], code))
    except (ValueError, KeyError, TypeError):
        check(False, '%s: body is not a JSON error: %r' % (what, body[:200]))
    return headers


def test_errors(srv):
    """Limits and error answers; reader input is never a 5xx."""
    expect_error(srv, '/api/search?q=' + 'a' * 257, 400, 'query_too_long')
    expect_error(srv, '/api/search?q=' + '%C3%A9' * 129, 400, 'query_too_long')
    check(srv.request('/api/search?q=' + 'a' * 256)[0] == 200, 'a q of 256 bytes is accepted')
    for bad in ['limit=0', 'limit=51', 'limit=abc', 'limit=-1', 'limit=1e3', 'limit=10x',
                'offset=1001', 'offset=abc', 'offset=-1', 'type=bogus', 'type=Explainer',
                'topic=' + 'x' * 300]:
        expect_error(srv, '/api/search?q=cache&' + bad, 400, 'bad_parameter')
    for good in ['limit=1', 'limit=50', 'offset=0', 'offset=1000', 'type=explainer', 'type=guide',
                 'type=topic', 'type=page', 'topic=systems/caching', 'topic=nonexistent']:
        check(srv.request('/api/search?q=cache&' + good)[0] == 200, '%s is accepted' % good)
    status, _, data = srv.get_json('/api/search')
    check(status == 200 and data['total'] == 0 and data['results'] == [],
          'search without q: 200, no results')
    status, _, data = srv.get_json('/api/search?q=')
    check(status == 200 and data['total'] == 0, 'search with an empty q: 200, no results')
    # NUL bytes, invalid UTF-8, control characters, lone escapes, FTS5 syntax
    # bytes that are not UTF-8 once percent-decoded: a 400 naming the parameter
    for raw in ['%ff%fe%fd', 'caf%C3', '%ED%A0%80', '%C0%80']:
        for route in ['/api/search?q=', '/api/suggest?q=']:
            expect_error(srv, route + raw, 400, 'bad_encoding')
    hostile = ['a%00b', '%00', '%C3%A9t%C3%A9', '%01%02%1b[31m', '%',
               '%zz', 'a+b', '%EF%BF%BF', '*', '"', '"unclosed', '-', '--',
               'NEAR(a%20b)', 'a%20OR%20b%20AND%20c', '^x', '(((', ':', 'title:x', '%F0%9F%98%80']
    for raw in hostile:
        for route in ['/api/search?q=', '/api/suggest?q=']:
            status, headers, body = srv.request(route + raw)
            try:
                json.loads(body)
                valid = True
            except ValueError:
                valid = False
            check(status == 200 and valid, '%s%s: status %d, JSON %s' % (route, raw, status, valid))
    expect_error(srv, '/api/suggest?q=' + 'a' * 257, 400, 'query_too_long')
    for bad in ['limit=0', 'limit=21', 'limit=x']:
        expect_error(srv, '/api/suggest?q=cache&' + bad, 400, 'bad_parameter')
    for bad in ['correct=maybe', 'correct=0', 'correct=FALSE']:
        expect_error(srv, '/api/search?q=cache&' + bad, 400, 'bad_parameter')
    for good in ['correct=true', 'correct=false', 'correct=']:
        check(srv.request('/api/search?q=cache&' + good)[0] == 200, '%s is accepted' % good)
    expect_error(srv, '/api/next', 400, 'bad_parameter')
    expect_error(srv, '/api/next?path=', 400, 'bad_parameter')
    expect_error(srv, '/api/next?path=/no-such-page', 404, 'not_found')
    expect_error(srv, '/api/next?path=%ff%00', 400, 'bad_encoding')
    expect_error(srv, '/api/next?path=%00', 404, 'not_found')
    expect_error(srv, '/api/next?path=/consistent-hashing&guide=no-such-guide', 404, 'not_found')
    expect_error(srv, '/api/next?path=/consistent-hashing&limit=0', 400, 'bad_parameter')
    check(srv.request('/api/next?path=/consistent-hashing&seen=,,,/x/x/x')[0] == 200,
          'next ignores empty and unknown seen paths')
    # of a long history, the pages read last (the last 64 listed) count
    top = json.loads(srv.request('/api/next?path=/consistent-hashing')[2])['suggestions'][0]['path']
    late = json.loads(srv.request('/api/next?path=/consistent-hashing&seen=' + '/x,' * 70 + top)[2])
    early = json.loads(srv.request('/api/next?path=/consistent-hashing&seen=' + top + ',/x' * 64)[2])
    check(top not in [s['path'] for s in late['suggestions']] and
          top in [s['path'] for s in early['suggestions']],
          'next: of more than 64 seen paths, the last 64 listed count', (top, late, early))
    for path in ['/nope', '/api', '/api/', '/api/search/', '/healthz/x', '/index.html.bak',
                 '/../etc/passwd']:
        expect_error(srv, path, 404, 'not_found')
    for method in ['POST', 'PUT', 'DELETE', 'PATCH', 'TRACE']:
        headers = expect_error(srv, '/api/search?q=x', 405, 'method_not_allowed', method=method)
        check(headers.get('allow') == 'GET, HEAD, OPTIONS', '%s: Allow header' % method)
    expect_error(srv, '/api/search', 405, 'method_not_allowed', method='POST', body=b'q=x' * 1000,
                 headers={'Content-Type': 'application/x-www-form-urlencoded'})


def test_headers_and_caching(srv):
    """Content types, nosniff, ETag and 304, Cache-Control, the response cache, HEAD,
    keep-alive."""
    path = '/api/search?q=consistent%20hashing'
    status, headers, body = srv.request(path)
    check(status == 200, 'search: 200')
    check(headers.get('content-type') == JSON_TYPE, 'search: JSON content type')
    check(headers.get('x-content-type-options') == 'nosniff', 'search: nosniff')
    check(headers.get('cache-control') == 'public, max-age=60', 'search: Cache-Control')
    etag = headers.get('etag', '')
    build = srv.health()['build_id']
    check(re.fullmatch(r'W/"%s-[0-9a-f]{16}"' % re.escape(build), etag) is not None,
          'search: ETag %r' % etag)
    check(srv.request('/api/search?q=consistent+hashing')[1].get('etag') == etag,
          'the same request, spelled differently, has the same ETag')
    check(srv.request(path + '&limit=10&offset=0')[1].get('etag') == etag,
          'explicit default parameters give the same ETag')
    check(srv.request(path + '&limit=9')[1].get('etag') != etag,
          'another request has another ETag')
    for inm in [etag, etag[2:], 'W/"x", ' + etag, '*']:
        status, headers, body = srv.request(path, headers={'If-None-Match': inm})
        check(status == 304 and body == b'',
              'If-None-Match %r: 304 without a body (got %d)' % (inm, status))
        check(headers.get('etag') == etag and headers.get('cache-control') == 'public, max-age=60',
              '304 carries ETag and Cache-Control')
    status, _, _ = srv.request(path, headers={'If-None-Match': 'W/"other-0000000000000000"'})
    check(status == 200, 'a stale If-None-Match gets a 200')
    # the response cache: a repeated request is a hit
    before = metric(srv, 'atlas_cache_hits_total')
    srv.request('/api/search?q=raft%20leader')
    srv.request('/api/search?q=raft%20leader')
    check(metric(srv, 'atlas_cache_hits_total') >= before + 1, 'a repeated request is a cache hit')
    # HEAD: the headers of GET, no body
    _, gh, gb = srv.request(path)
    status, hh, hb = srv.request(path, method='HEAD')
    check(status == 200 and hb == b'', 'HEAD: 200 without a body')
    check(hh.get('content-length') == str(len(gb)) and hh.get('etag') == gh.get('etag'),
          'HEAD: the headers of GET')
    status, _, hb = srv.request('/', method='HEAD')
    check(status == 200 and hb == b'', 'HEAD /: 200 without a body')
    # keep-alive: requests on one connection use one socket
    conn = srv.connect()
    try:
        s1, h1, _ = srv.request('/api/search?q=cache', conn=conn)
        sock1 = conn.sock
        port1 = sock1.getsockname()[1] if sock1 else None
        s2, h2, _ = srv.request('/api/suggest?q=cach', conn=conn)
        check(s1 == 200 and s2 == 200, 'keep-alive: both requests answered')
        check(sock1 is not None and conn.sock is sock1 and sock1.getsockname()[1] == port1,
              'keep-alive: the second request reused the connection')
        check(h1.get('connection', '').lower() != 'close', 'keep-alive: no Connection: close')
        s3, _, _ = srv.request('/api/next?path=/consistent-hashing', conn=conn)
        check(s3 == 200 and conn.sock is sock1, 'keep-alive: a third request, same connection')
    finally:
        conn.close()


def test_cors(srv):
    """CORS for the --cors origin: echo + Vary on requests, 204 preflights."""
    _, h, _ = srv.request('/api/search?q=x', headers={'Origin': ORIGIN})
    check(h.get('access-control-allow-origin') == ORIGIN, 'CORS: the allowed origin is echoed')
    check('origin' in h.get('vary', '').lower(), 'CORS: Vary: Origin')
    _, h, _ = srv.request('/api/search?q=x', headers={'Origin': 'https://evil.example'})
    check('access-control-allow-origin' not in h, 'CORS: other origins get no Allow-Origin')
    check('origin' in h.get('vary', '').lower(), 'CORS: Vary: Origin for other origins too')
    _, h, _ = srv.request('/api/search?q=x')
    check('access-control-allow-origin' not in h, 'CORS: no Origin, no Allow-Origin')
    preflight = {'Origin': ORIGIN, 'Access-Control-Request-Method': 'GET',
                 'Access-Control-Request-Headers': 'if-none-match'}
    status, h, body = srv.request('/api/search', method='OPTIONS', headers=preflight)
    check(status == 204 and body == b'', 'preflight: 204 without a body (got %d)' % status)
    check(h.get('access-control-allow-origin') == ORIGIN, 'preflight: Allow-Origin')
    methods = [m.strip() for m in h.get('access-control-allow-methods', '').split(',')]
    check(sorted(methods) == ['GET', 'HEAD', 'OPTIONS'], 'preflight: Allow-Methods %r' % methods)
    check('if-none-match' in h.get('access-control-allow-headers', '').lower(),
          'preflight: Allow-Headers')
    check(h.get('allow') == 'GET, HEAD, OPTIONS', 'OPTIONS: Allow')
    preflight['Origin'] = 'https://evil.example'
    status, h, _ = srv.request('/api/search', method='OPTIONS', headers=preflight)
    check(status == 204 and 'access-control-allow-origin' not in h,
          'preflight from another origin: no Allow-Origin')


def test_health_metrics_page(srv, index):
    """/healthz, /metrics, the page and its files, the access log."""
    status, h, data = srv.get_json('/healthz')
    st = stats(index)
    check(status == 200 and h.get('content-type') == JSON_TYPE, '/healthz: 200 JSON')
    for key in ['status', 'pages', 'build_id', 'built_at', 'schema_version', 'index_age_s',
                'uptime_s', 'last_swap_error']:
        check(key in data, '/healthz has %s' % key)
    check(data.get('status') == 'ok', '/healthz: status ok')
    check(data.get('pages') == int(st['pages']) == 216, '/healthz: pages')
    check(data.get('build_id') == st['build_id'], '/healthz: build_id of the served index')
    check(data.get('built_at') == st['built_at'], '/healthz: built_at')
    check(data.get('schema_version') == int(st['schema_version']), '/healthz: schema_version')
    for key in ['index_age_s', 'uptime_s']:
        check(isinstance(data.get(key), (int, float)) and data[key] >= 0, '/healthz: %s' % key)
    check(data.get('last_swap_error') is None, '/healthz: no swap error')
    check(h.get('cache-control') == 'no-store', '/healthz: not cacheable')

    status, h, body = srv.request('/metrics')
    text = body.decode()
    check(status == 200 and h.get('content-type', '').startswith('text/plain'), '/metrics: text')
    for pattern, what in [
            (r'atlas_requests_total\{route="/api/search",status="200"\} \d+', 'requests by status'),
            (r'atlas_requests_total\{route="/api/search",status="400"\} \d+', '400s counted'),
            (r'atlas_requests_total\{route="/api/next",status="404"\} \d+', 'next 404s counted'),
            (r'atlas_request_duration_seconds_bucket\{route="/api/search",le="0.005"\} \d+',
             'latency buckets'),
            (r'atlas_request_duration_seconds_bucket\{route="/api/search",le="\+Inf"\} \d+',
             'the +Inf bucket'),
            (r'atlas_request_duration_seconds_count\{route="/api/search"\} \d+', 'the count'),
            (r'atlas_index_generation \d+', 'atlas_index_generation'),
            (r'atlas_index_swaps_total \d+', 'atlas_index_swaps_total'),
            (r'atlas_index_swaps_refused_total \d+', 'atlas_index_swaps_refused_total')]:
        check(re.search('^' + pattern + '$', text, re.M) is not None, '/metrics: ' + what)
    check('# TYPE atlas_request_duration_seconds histogram' in text, '/metrics: histogram type')

    status, h, body = srv.request('/')
    page = body.decode()
    check(status == 200 and h.get('content-type') == 'text/html; charset=utf-8', '/: HTML')
    csp = h.get('content-security-policy', '')
    check("default-src 'self'" in csp and 'unsafe-inline' not in csp, '/: CSP %r' % csp)
    check(h.get('x-content-type-options') == 'nosniff', '/: nosniff')
    check(re.search(r'<script(?![^>]*\bsrc=)', page) is None, '/: no inline script')
    check(re.search(r'<style|\sstyle=|\son[a-z]+=', page) is None, '/: no inline style, handlers')
    check('data-atlas-search="page"' in page and '<h1' in page, '/: the search widget, under a heading')
    check('type="module" src="/atlas.js"' in page and 'href="/atlas.css"' in page, '/: atlas.js and atlas.css')
    status, h, body = srv.request('/atlas.js')
    check(status == 200 and h.get('content-type') == 'text/javascript; charset=utf-8',
          '/atlas.js: JavaScript')
    js = body.decode()
    check("'api/search'" in js and "'api/next'" in js and "'api/suggest'" in js and 'import.meta.url' in js,
          '/atlas.js: the widget, its API base from where it was loaded')
    check('innerHTML' not in js and 'insertAdjacentHTML' not in js and 'eval(' not in js,
          '/atlas.js: server strings are inserted as text')
    etag = h.get('etag')
    check(etag and srv.request('/atlas.js', headers={'If-None-Match': etag})[0] == 304,
          '/atlas.js: 304 on its ETag')
    for css in ['/atlas.css', '/page.css']:
        status, h, _ = srv.request(css)
        check(status == 200 and h.get('content-type') == 'text/css; charset=utf-8', '%s: CSS' % css)

    # the access log: one line per request (flushed within a second); a unique path marks the end
    srv.request('/api/search?q=access%20log%20probe')
    probe = '/log-probe-%d' % time.monotonic_ns()
    srv.request(probe)

    def logged():
        try:
            with open(srv.log) as f:
                return (' GET %s 404 ' % probe) in f.read()
        except OSError:
            return False
    check(wait_for(logged, 3), 'access log: the probe request is logged within 3 s')
    with open(srv.log) as f:
        text = f.read()
    line = (r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z GET /api/search 200 [0-9.]+ms'
            r'(?: queued=[0-9.]+ms)?(?: work=\d+,\d+,\d+)? results=\d+$')
    check(re.search(line, text, re.M) is not None,
          'access log: ISO time, method, route, status, latency, queue wait, work, result count')
    check(re.search(r' POST /api/search 405 [0-9.]+ms$', text, re.M) is not None,
          'access log: a 405 line')
    check('access%20log%20probe' not in text and 'access log probe' not in text,
          'access log: queries are not logged')


def test_hot_swap(srv, served, workdir):
    """A new index renamed over the served one is swapped in; a corrupt one is refused."""
    old = srv.health()
    new = build_index(os.path.join(workdir, 'rebuilt.db'))
    new_build = stats(new)['build_id']
    check(new_build != old['build_id'], 'a rebuild has a new build id')
    os.rename(new, served)
    t0 = time.monotonic()
    check(wait_for(lambda: srv.health()['build_id'] == new_build, 3),
          'hot swap: /healthz shows the new build within 3 s')
    print('swap noticed after %.2f s' % (time.monotonic() - t0), flush=True)
    h = srv.health()
    check(h['generation'] == old['generation'] + 1 and h['last_swap_error'] is None,
          'hot swap: generation +1')
    status, headers, body = srv.request('/api/search?q=consistent%20hashing')
    check(status == 200 and new_build in headers.get('etag', ''),
          'after the swap, ETags carry the new build id')
    check(strip_took(body) == strip_took(cli(served, '--', 'consistent hashing')),
          'after the swap, search equals atlas-query on the new file')
    check(metric(srv, 'atlas_index_generation') == h['generation'], '/metrics: new generation')
    check(metric(srv, 'atlas_index_swaps_total') >= 1, '/metrics: the swap is counted')

    bad = os.path.join(workdir, 'corrupt.db')
    with open(bad, 'wb') as f:
        f.write(os.urandom(64 * 1024))
    refused_before = h['swaps_refused']
    os.rename(bad, served)
    check(wait_for(lambda: srv.health()['swaps_refused'] > refused_before, 3),
          'corrupt index: the refused swap is reported within 3 s')
    h = srv.health()
    check(h['build_id'] == new_build, 'corrupt index: /healthz still serves the previous build')
    check(isinstance(h.get('last_swap_error'), str) and h['last_swap_error'],
          'corrupt index: last_swap_error %r' % h.get('last_swap_error'))
    check(metric(srv, 'atlas_index_swaps_refused_total') >= 1, '/metrics: the refusal counted')
    for i in range(6):  # every worker thread keeps answering from the previous index
        status, headers, _ = srv.request('/api/search?q=hashing%%20%d' % i)
        check(status == 200 and new_build in headers.get('etag', ''),
              'corrupt index: searches are still answered')
    check('refused' in srv.stderr_text(), 'corrupt index: the refusal is logged')
    # a good file after the corrupt one is taken again
    replace(served, REAL_INDEX, workdir)
    check(wait_for(lambda: srv.health()['build_id'] != new_build, 3)
          and srv.health()['last_swap_error'] is None,
          'a valid index after a refused one is swapped in')


def test_startup_and_flags(workdir):
    """Usage errors exit 2, a missing or corrupt index exits 1, --help and --version exit 0."""
    def run(*args):
        return subprocess.run([SERVE] + list(args), capture_output=True, text=True,
                              timeout=TIMEOUT)
    r = run('--help')
    check(r.returncode == 0 and 'usage: atlas-serve' in r.stdout, '--help')
    r = run('--version')
    check(r.returncode == 0 and r.stdout.startswith('atlas-serve '), '--version')
    for args in [[], ['--port', '70000', '--index', 'x'], ['--port', 'abc', '--index', 'x'],
                 ['--threads', '0', '--index', 'x'], ['--cache-size', '-1', '--index', 'x'],
                 ['--bogus'], ['--index', 'x', 'extra'], ['--index', 'x', '--bind', 'nowhere'],
                 ['--index', 'x', '--max-index-age', 'soon']]:
        r = run(*args)
        check(r.returncode == 2 and r.stderr,
              'usage error %r exits 2 (got %d)' % (args, r.returncode))
    r = run('--index', os.path.join(workdir, 'missing.db'), '--port', '0')
    check(r.returncode == 1 and 'missing.db' in r.stderr,
          'a missing index exits 1 with a message: %r' % r.stderr)
    junk = os.path.join(workdir, 'junk.db')
    with open(junk, 'wb') as f:
        f.write(b'not an index' * 100)
    r = run('--index', junk, '--port', '0')
    check(r.returncode == 1 and 'junk.db' in r.stderr, 'a corrupt index exits 1 with a message')


def test_stale_and_options(workdir):
    """--max-index-age (stale), --cors '*', --cache-size 0."""
    index = os.path.join(workdir, 'stale.db')
    shutil.copyfile(REAL_INDEX, index)
    srv = Server(index, workdir, '--max-index-age', '1', '--cors', '*', '--cache-size', '0')
    try:
        check(wait_for(lambda: srv.health()['status'] == 'stale', 3),
              '--max-index-age: "stale" once the index is older')
        _, h, _ = srv.request('/api/search?q=x', headers={'Origin': 'https://anyone.example'})
        check(h.get('access-control-allow-origin') == '*', "--cors '*': Allow-Origin *")
        for _ in range(2):
            check(srv.request('/api/search?q=cache')[0] == 200, 'no cache: still answered')
        check(metric(srv, 'atlas_cache_entries') == 0
              and metric(srv, 'atlas_cache_hits_total') == 0, '--cache-size 0 disables the cache')
    finally:
        check(srv.stop() == 0, 'SIGTERM: exit 0')


def test_http():
    """The endpoint, error, header, CORS, page and hot swap tests on one server."""
    with tempfile.TemporaryDirectory(prefix='atlas-serve-test-') as workdir:
        test_startup_and_flags(workdir)
        served = os.path.join(workdir, 'atlas.db')
        shutil.copyfile(REAL_INDEX, served)
        srv = Server(served, workdir, '--cors', ORIGIN, '--cache-size', '64')
        try:
            test_cli_equality(srv, served)
            test_errors(srv)
            test_headers_and_caching(srv)
            test_cors(srv)
            test_health_metrics_page(srv, served)
            test_hot_swap(srv, served, workdir)
            check(srv.proc.poll() is None, 'the server is still running')
        finally:
            status = srv.stop()
            check(status == 0, 'SIGTERM: a clean exit 0 (got %r)' % status)
            if failures:
                sys.stdout.write('--- server stderr ---\n' + srv.stderr_text()[-3000:])
        test_stale_and_options(workdir)


def test_swap_load():
    """Continuous requests from 2 threads while the index is replaced 10 times: none fails."""
    with tempfile.TemporaryDirectory(prefix='atlas-serve-load-') as workdir:
        served = os.path.join(workdir, 'atlas.db')
        a = os.path.join(workdir, 'a.db')
        shutil.copyfile(REAL_INDEX, a)
        b = build_index(os.path.join(workdir, 'b.db'))
        builds = {a: stats(a)['build_id'], b: stats(b)['build_id']}
        shutil.copyfile(a, served)
        srv = Server(served, workdir, '--cache-size', '256')
        stop = threading.Event()
        counts = {'ok': 0, 'failed': 0}
        errors = []
        lock = threading.Lock()
        words = ['consistent hashing', 'gil', 'consis', 'raft', 'cache', 'pallas kernel',
                 'shard_map', 'tpu']

        def path_of(i):
            word = urllib.parse.quote(words[i % len(words)])
            return ['/api/search?q=%s&limit=%d' % (word, 1 + i % 10),
                    '/api/suggest?q=' + word[:3],
                    '/api/next?path=/consistent-hashing', '/healthz'][i % 4]

        def load():
            conn = srv.connect()
            i = 0
            while not stop.is_set():
                i += 1
                path = path_of(i)
                try:
                    status, _, body = srv.request(path, conn=conn)
                    json.loads(body)
                    err = None if status == 200 else '%s: %d %r' % (path, status, body[:200])
                except Exception as e:  # any failure counts: reset, timeout, bad JSON
                    err = '%s: %r' % (path, e)
                    conn.close()
                    conn = srv.connect()
                with lock:
                    counts['failed' if err else 'ok'] += 1
                    if err and len(errors) < 10:
                        errors.append(err)
            conn.close()

        threads = [threading.Thread(target=load) for _ in range(2)]
        for t in threads:
            t.start()
        try:
            start = srv.health()
            for i in range(10):
                src = b if i % 2 == 0 else a
                replace(served, src, workdir)
                if i % 2:
                    srv.proc.send_signal(signal.SIGHUP)  # SIGHUP: checked at once
                check(wait_for(lambda: srv.health()['build_id'] == builds[src], 3),
                      'swap %d: the new build is served within 3 s' % (i + 1))
                time.sleep(0.15)
            time.sleep(0.3)
        finally:
            stop.set()
            for t in threads:
                t.join(TIMEOUT)
        end = srv.health()
        print('requests: %d ok, %d failed; swaps %d -> %d'
              % (counts['ok'], counts['failed'], start['swaps'], end['swaps']), flush=True)
        check(counts['failed'] == 0,
              'swap under load: %d failed requests: %s' % (counts['failed'], errors))
        check(counts['ok'] > 100, 'swap under load: requests were made (%d)' % counts['ok'])
        check(end['swaps'] - start['swaps'] == 10 and end['swaps_refused'] == 0,
              'swap under load: 10 swaps, none refused')
        status = srv.stop()
        check(status == 0, 'SIGTERM: exit 0 (got %r)' % status)
        if failures:
            sys.stdout.write('--- server stderr ---\n' + srv.stderr_text()[-3000:])


def main(argv):
    """Runs the named test group. Returns the exit status: 0 when every check passed."""
    mode = argv[1] if len(argv) > 1 else 'http'
    t0 = time.monotonic()
    {'http': test_http, 'swap-load': test_swap_load}[mode]()
    return checklib.finish(mode, t0)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
