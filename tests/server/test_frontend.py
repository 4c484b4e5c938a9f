#!/usr/bin/env python3
"""test_frontend.py - the conventions front-end clients rely on, over HTTP on 127.0.0.1.

1. /api/search: page/hitsPerPage against offset/limit, totalPages, multi-value type and topic
   filters (lists and repeats, a topic matching its sub-topics), sort=lastmod, the richer hits;
   every 400 (unknown parameters, undecodable bytes, conflicting or out-of-range paging, unknown
   types and sorts) naming what was wrong; /api/next with a path written with a host, a trailing
   slash or index.html.
2. gzip and br: the body decodes to the plain body byte for byte, Vary: Accept-Encoding, one
   ETag in every encoding (a 304 for If-None-Match across encodings), q=0 and identity
   respected, the compressed answer served from the cache the second time.
3. POST /api/batch: items answered in order with their own statuses and the bodies of the GET
   routes; the limits (16 items, 64 KB bodies, malformed bodies, GET refused).
4. The Meilisearch-compatible routes: the answers against /api/search for the same request,
   filters (and a 400 in Meilisearch's shape for the rest), 405 on write routes, --index-uid,
   and the --api-key-file key: missing (401), wrong (403), right (200), /health open.

Usage: test_frontend.py (environment: ATLAS_SERVE, ATLAS_REAL_INDEX)
"""
import ctypes
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from serverlib import Server  # noqa: E402

REAL_INDEX = os.environ['ATLAS_REAL_INDEX']
failures = []
# br is decoded by libbrotlidec (installed with libbrotli-dev, which atlas-serve builds with)
BROTLI = ctypes.CDLL('libbrotlidec.so.1')


def br_decompress(data, cap=1 << 22):
    """Returns the bytes of the brotli stream data (BrotliDecoderDecompress; at most cap bytes)."""
    out = ctypes.create_string_buffer(cap)
    size = ctypes.c_size_t(cap)
    ok = BROTLI.BrotliDecoderDecompress(ctypes.c_size_t(len(data)), data, ctypes.byref(size), out)
    if ok != 1:
        raise ValueError('not a brotli stream')
    return out.raw[:size.value]


def check(cond, what):
    """Records a failed expectation; the run goes on."""
    if not cond:
        failures.append(what)
        print('FAIL: ' + what, flush=True)
    return cond


def get(srv, path, headers=None):
    """GETs path. Returns (status, headers, body parsed as JSON or None)."""
    status, h, body = srv.request(path, headers=headers)
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return status, h, data


def post(srv, path, doc, headers=None, raw=None):
    """POSTs doc as JSON (or the bytes raw). Returns (status, headers, body parsed or None)."""
    hdrs = {'Content-Type': 'application/json'}
    hdrs.update(headers or {})
    body = raw if raw is not None else json.dumps(doc).encode()
    status, h, data = srv.request(path, method='POST', headers=hdrs, body=body)
    try:
        return status, h, json.loads(data)
    except ValueError:
        return status, h, None


def expect_400(srv, query, code, names):
    """Checks that /api/search?query is a 400 with code whose message names every word of names."""
    status, _, data = get(srv, '/api/search?' + query)
    err = (data or {}).get('error', {})
    check(status == 400 and err.get('code') == code and all(n in err.get('message', '') for n in names),
          '%s: 400 %s naming %s (got %d %r)' % (query, code, names, status, err))


def paths(data):
    return [r['path'] for r in data['results']]


def test_search(srv):
    status, _, base = get(srv, '/api/search?q=cache&limit=30')
    check(status == 200 and base['total'] > 12, 'q=cache finds more than 12 pages')
    _, _, p2 = get(srv, '/api/search?q=cache&page=2&hitsPerPage=5')
    check(paths(p2) == paths(base)[5:10], 'page=2&hitsPerPage=5 is offset=5&limit=5')
    check(p2['page'] == 2 and p2['hitsPerPage'] == 5 and
          p2['totalPages'] == (base['total'] + 4) // 5, 'page, hitsPerPage and totalPages of page 2')
    _, _, o = get(srv, '/api/search?q=cache&offset=5&limit=5')
    check(paths(o) == paths(p2) and o['page'] == 2, 'offset=5&limit=5: page 2 too')
    _, _, last = get(srv, '/api/search?q=cache&hitsPerPage=1')
    check(last['totalPages'] == min(base['total'], 1001), 'totalPages with one hit a page')
    # several types: a list, repeats, and each alone
    _, _, both = get(srv, '/api/search?q=system+design&type=guide,explainer&limit=50')
    _, _, rep = get(srv, '/api/search?q=system+design&type=guide&type=explainer&limit=50')
    _, _, g = get(srv, '/api/search?q=system+design&type=guide&limit=50')
    _, _, e = get(srv, '/api/search?q=system+design&type=explainer&limit=50')
    check(both['total'] == g['total'] + e['total'] and g['total'] > 0 and e['total'] > 0,
          'type=guide,explainer counts the guides and the explainers (%d = %d + %d)'
          % (both['total'], g['total'], e['total']))
    check(paths(both) == paths(rep), 'type repeated is the same as the list')
    check({r['type'] for r in both['results']} <= {'guide', 'explainer'}, 'only guides and explainers')
    # several topics, and a topic matching its sub-topics
    _, _, sysall = get(srv, '/api/search?q=cache&topic=systems&limit=50')
    _, _, sub = get(srv, '/api/search?q=cache&topic=systems/caching&limit=50')
    check(sub['total'] > 0 and set(paths(sub)) <= set(paths(sysall)), 'systems holds systems/caching')
    check(all(any(t == 'systems' or t.startswith('systems/') for t in r['topics'])
              for r in sysall['results']), 'topic=systems: every hit is under systems')
    _, _, two = get(srv, '/api/search?q=cache&topic=systems,foundations&limit=50')
    _, _, fnd = get(srv, '/api/search?q=cache&topic=foundations&limit=50')
    check(two['total'] >= max(sysall['total'], fnd['total']) and
          two['total'] <= sysall['total'] + fnd['total'], 'topic=systems,foundations: either')
    _, _, tpage = get(srv, '/api/search?q=cache&topic=/t/systems&limit=50')
    check(paths(tpage) == paths(sysall), 'topic=/t/systems names the topic systems')
    # sort by lastmod
    _, _, new = get(srv, '/api/search?q=cache&sort=lastmod&limit=50')
    dates = [r['lastmod'] for r in new['results']]
    check(dates == sorted(dates, reverse=True) and new['total'] == base['total'],
          'sort=lastmod: newest first, the same pages')
    _, _, rel = get(srv, '/api/search?q=cache&sort=relevance&limit=30')
    check(paths(rel) == paths(base), 'sort=relevance is the default order')
    # richer hits
    _, _, ch = get(srv, '/api/search?q=consistent+hashing&limit=1')
    hit = ch['results'][0]
    check(hit['title_highlighted'] == '<mark>Consistent</mark> <mark>Hashing</mark>',
          'title_highlighted marks the matched words (%r)' % hit['title_highlighted'])
    check(hit['description'] and len(hit['lastmod']) == 10 and hit['image'].startswith('http'),
          'description, lastmod and image')
    check([t['path'] for t in hit['topics_titled']] == hit['topics'] and
          all(t['title'] for t in hit['topics_titled']), 'topics_titled: the topics with titles')
    check(all(isinstance(t, str) for t in hit['topics']), 'topics stays a list of paths')
    # every 400
    expect_400(srv, 'q=cache&hitsPerPag=5', 'unknown_parameter', ['hitsPerPag', 'hitsPerPage'])
    expect_400(srv, 'q=cache&explain=1', 'unknown_parameter', ['explain'])
    expect_400(srv, 'q=%ff', 'bad_encoding', ['q'])
    expect_400(srv, 'q=cache&topic=%C3', 'bad_encoding', ['topic'])
    expect_400(srv, 'q=cache&type=%ED%A0%80', 'bad_encoding', ['type'])
    expect_400(srv, 'q=cache&page=0', 'bad_parameter', ['page'])
    expect_400(srv, 'q=cache&page=2&offset=10', 'bad_parameter', ['page', 'offset'])
    expect_400(srv, 'q=cache&limit=5&hitsPerPage=6', 'bad_parameter', ['limit', 'hitsPerPage'])
    expect_400(srv, 'q=cache&hitsPerPage=51', 'bad_parameter', ['hitsPerPage'])
    expect_400(srv, 'q=cache&page=102', 'bad_parameter', ['page'])
    check(get(srv, '/api/search?q=cache&page=101')[0] == 200, 'page=101 (offset 1000) is accepted')
    expect_400(srv, 'q=cache&type=guide,bogus', 'bad_parameter', ['type'])
    expect_400(srv, 'q=cache&sort=date', 'bad_parameter', ['sort'])
    expect_400(srv, 'q=cache&topic=' + ','.join('t%d' % i for i in range(17)), 'bad_parameter', ['topics'])
    expect_400(srv, '&'.join('q=%d' % i for i in range(70)), 'bad_parameter', ['parameters'])
    for route in ['/api/suggest?q=ca&offset=3', '/api/next?path=/raft&x=1']:
        status, _, data = get(srv, route)
        check(status == 400 and data['error']['code'] == 'unknown_parameter', '%s: unknown_parameter' % route)
    # paths as a site writes them
    _, _, want = get(srv, '/api/next?path=/consistent-hashing')
    for p in ['/consistent-hashing/', '/consistent-hashing/index.html', 'consistent-hashing',
              'HTTPS://Explainers.Example.ORG/consistent-hashing/', 'http://x/consistent-hashing?a=1']:
        status, _, data = get(srv, '/api/next?path=' + urllib.parse.quote(p, safe=''))
        check(status == 200 and data['path'] == '/consistent-hashing' and
              data['suggestions'] == want['suggestions'], 'next path %r: the page /consistent-hashing' % p)
    status, _, data = get(srv, '/api/next?path=/&limit=1')
    check(status == 200 and data['path'] == '/', 'next path / stays /')


def test_compression(srv):
    path = '/api/search?q=cache&limit=50'
    status, h0, plain = srv.request(path)
    check(status == 200 and h0.get('vary') == 'Accept-Encoding' and 'content-encoding' not in h0,
          'plain: Vary: Accept-Encoding, no Content-Encoding')
    for _ in range(2):  # the second time from the cache
        status, h, body = srv.request(path, headers={'Accept-Encoding': 'gzip'})
        check(status == 200 and h.get('content-encoding') == 'gzip' and h.get('vary') == 'Accept-Encoding',
              'gzip: Content-Encoding gzip, Vary')
        check(gzip.decompress(body) == plain, 'gzip: decodes to the plain body')
        check(len(body) * 3 < len(plain), 'gzip: under a third of %d bytes (%d)' % (len(plain), len(body)))
        check(h.get('etag') == h0.get('etag'), 'gzip: the same ETag as the plain body')
    status, h, body = srv.request(path, headers={'Accept-Encoding': 'gzip, deflate, br'})
    check(status == 200 and h.get('content-encoding') == 'br', 'gzip, deflate, br: br')
    check(br_decompress(body) == plain, 'br: decodes to the plain body')
    status, h, body = srv.request(path, headers={'Accept-Encoding': 'br;q=0, gzip;q=0.5'})
    check(h.get('content-encoding') == 'gzip', 'br;q=0: gzip')
    status, h, body = srv.request(path, headers={'Accept-Encoding': 'identity'})
    check('content-encoding' not in h and body == plain, 'identity: plain')
    status, h, body = srv.request(path, headers={'Accept-Encoding': '*;q=0'})
    check('content-encoding' not in h and body == plain, '*;q=0: plain')
    status, h, body = srv.request(path, headers={'Accept-Encoding': 'gzip', 'If-None-Match': h0['etag']})
    check(status == 304 and body == b'', 'If-None-Match of the plain ETag: 304 in gzip too')
    status, h, body = srv.request('/api/search?q=zzzzqqq', headers={'Accept-Encoding': 'gzip'})
    check(status == 200 and 'content-encoding' not in h, 'a short body is sent as it is')
    status, h, body = srv.request('/api/search?q=cache&limit=50', method='HEAD',
                                  headers={'Accept-Encoding': 'gzip'})
    check(status == 200 and body == b'' and h.get('content-encoding') == 'gzip', 'HEAD: the headers of gzip')


def test_batch(srv):
    items = [{'endpoint': 'search', 'params': {'q': 'raft', 'type': ['guide', 'explainer'], 'hitsPerPage': 3}},
             {'endpoint': 'next', 'params': {'path': '/consistent-hashing/'}},
             {'endpoint': 'next', 'params': {'path': '/no-such-page'}},
             {'endpoint': 'search', 'params': {'q': 'x', 'bogus': 1}}]
    status, h, data = post(srv, '/api/batch', items)
    check(status == 200 and isinstance(data, list) and len(data) == 4, 'batch: 4 answers')
    _, _, s0 = get(srv, '/api/search?q=raft&type=guide,explainer&hitsPerPage=3')
    _, _, n0 = get(srv, '/api/next?path=/consistent-hashing')
    if data and len(data) == 4:
        a = dict(data[0]['body'], took_ms=0)
        check(data[0]['status'] == 200 and a == dict(s0, took_ms=0), 'batch search: the GET answer')
        check(data[1]['status'] == 200 and data[1]['body'] == n0, 'batch next: the GET answer')
        check(data[2]['status'] == 404 and data[2]['body']['error']['code'] == 'not_found', 'batch: a 404 item')
        check(data[3]['status'] == 400 and data[3]['body']['error']['code'] == 'unknown_parameter' and
              'bogus' in data[3]['body']['error']['message'], 'batch: a 400 item naming bogus')
    status, _, data = post(srv, '/api/batch', {'requests': items[:1]})
    check(status == 200 and len(data) == 1, 'batch: {"requests": [...]} too')
    status, _, data = post(srv, '/api/batch', [items[1]] * 16)
    check(status == 200 and len(data) == 16, 'batch: 16 items')
    status, _, data = post(srv, '/api/batch', [items[1]] * 17)
    check(status == 400 and data['error']['code'] == 'bad_body' and '16' in data['error']['message'],
          'batch: 17 items is a 400 bad_body')
    status, _, data = post(srv, '/api/batch', [])
    check(status == 400 and data['error']['code'] == 'bad_body', 'batch: no items is a 400')
    status, _, data = post(srv, '/api/batch', None, raw=b'[{"endpoint": "search"')
    check(status == 400 and data['error']['code'] == 'bad_body', 'batch: malformed JSON is a 400')
    status, _, data = post(srv, '/api/batch', None, raw=b'[' + b' ' * 70000 + b']')
    check(status == 413 and data['error']['code'] == 'body_too_large', 'batch: 70 KB is a 413')
    status, _, data = post(srv, '/api/batch', [{'endpoint': 'suggest', 'params': {'q': 'a'}}])
    check(status == 200 and data[0]['status'] == 400, 'batch: an unknown endpoint is a 400 item')
    status, _, data = post(srv, '/api/batch', [{'endpoint': 'search', 'params': {'q': {'a': 1}}}])
    check(status == 200 and data[0]['status'] == 400, 'batch: an object value is a 400 item')
    status, h, data = get(srv, '/api/batch')
    check(status == 405 and 'POST' in h.get('allow', ''), 'GET /api/batch: 405, Allow: POST')
    status, h, body = srv.request('/api/batch', method='POST', body=json.dumps([items[0]] * 8).encode(),
                                  headers={'Accept-Encoding': 'gzip', 'Content-Type': 'application/json'})
    check(status == 200 and h.get('content-encoding') == 'gzip' and len(json.loads(gzip.decompress(body))) == 8,
          'batch: gzip')


def meili_error(data, code, status, want_status):
    return (status == want_status and isinstance(data, dict) and data.get('code') == code and
            set(data) == {'message', 'code', 'type', 'link'} and data['link'].endswith(code))


def test_meili(srv):
    status, _, data = post(srv, '/indexes/pages/search',
                           {'q': 'consistent hashing', 'limit': 5, 'facets': ['type', 'topic']})
    _, _, ref = get(srv, '/api/search?q=consistent+hashing&limit=5')
    check(status == 200 and [h['path'] for h in data['hits']] == paths(ref), 'meili search: the /api/search hits')
    check(data['estimatedTotalHits'] == ref['total'] and data['limit'] == 5 and data['offset'] == 0 and
          data['query'] == 'consistent hashing', 'meili: estimatedTotalHits, limit, offset, query')
    check(data['facetDistribution']['type'] == ref['facets']['type'] and
          data['facetDistribution']['topic'] == {t['path']: t['count'] for t in ref['facets']['topic']},
          'meili: facetDistribution is the facets of /api/search')
    status, _, data = post(srv, '/indexes/pages/search', {'q': 'cache', 'hitsPerPage': 4, 'page': 3})
    _, _, ref = get(srv, '/api/search?q=cache&hitsPerPage=4&page=3')
    check(status == 200 and [h['path'] for h in data['hits']] == paths(ref) and data['totalHits'] == ref['total'] and
          data['totalPages'] == (ref['total'] + 3) // 4 and data['page'] == 3, 'meili: page and hitsPerPage')
    status, _, data = post(srv, '/indexes/pages/search',
                           {'q': 'cache', 'limit': 50, 'filter': [['type = guide', 'type = "explainer"'], 'topic = systems']})
    _, _, ref = get(srv, '/api/search?q=cache&limit=50&type=guide,explainer&topic=systems')
    check(status == 200 and [h['path'] for h in data['hits']] == paths(ref), 'meili: filter arrays, AND of ORs')
    status, _, data2 = post(srv, '/indexes/pages/search',
                            {'q': 'cache', 'limit': 50, 'filter': '(type = guide OR type IN [explainer]) AND topic = systems'})
    check(status == 200 and data2['hits'] == data['hits'], 'meili: the same filter as a string')
    status, _, data = post(srv, '/indexes/pages/search', {'q': 'cache', 'limit': 50, 'filter': 'NOT type = explainer'})
    check(status == 200 and data['hits'] and all(h['type'] != 'explainer' for h in data['hits']), 'meili: NOT')
    for bad in ['lastmod > 2020', 'type = guide AND', 'type = "guide', '(type = guide', 'type guide', 'title = x',
                '(' * 30000, '(' * 17 + 'type = guide' + ')' * 17, 'NOT ' * 100 + 'type = guide',
                ' OR '.join(['type = guide'] * 40)]:
        status, _, data = post(srv, '/indexes/pages/search', {'q': 'cache', 'filter': bad})
        check(meili_error(data, 'invalid_search_filter', status, 400), 'meili filter %r: 400 invalid_search_filter' % bad)
    status, _, data = post(srv, '/indexes/pages/search',
                           {'q': 'cache', 'filter': '(' * 16 + 'type = guide' + ')' * 16})
    check(status == 200, 'meili: parentheses 16 deep')
    status, _, data = post(srv, '/indexes/pages/search', {'q': 'cache', 'filter': [[[['type = guide']]]]})
    check(meili_error(data, 'invalid_search_filter', status, 400), 'meili: arrays three deep are a 400')
    status, _, data = post(srv, '/indexes/pages/search', {'q': 'cache', 'bogus': 1})
    check(meili_error(data, 'bad_request', status, 400) and 'bogus' in data['message'], 'meili: unknown field')
    status, _, data = post(srv, '/indexes/pages/search', None, raw=b'{')
    check(meili_error(data, 'malformed_payload', status, 400), 'meili: malformed JSON')
    status, _, data = post(srv, '/indexes/other/search', {'q': 'x'})
    check(meili_error(data, 'index_not_found', status, 404), 'meili: another index is not found')
    for method, path in [('POST', '/indexes/pages/documents'), ('PUT', '/indexes/pages/documents'),
                         ('DELETE', '/indexes/pages'), ('PATCH', '/indexes/pages/settings'), ('POST', '/indexes'),
                         ('DELETE', '/indexes/pages/documents')]:
        status, _, body = srv.request(path, method=method, body=b'[]', headers={'Content-Type': 'application/json'})
        check(meili_error(json.loads(body), 'method_not_allowed', status, 405), '%s %s: 405' % (method, path))
    status, _, data = get(srv, '/indexes/pages')
    check(status == 200 and data['uid'] == 'pages' and data['primaryKey'] == 'id', 'GET /indexes/pages')
    check(get(srv, '/health')[2] == {'status': 'available'}, 'GET /health')
    check('pkgVersion' in get(srv, '/version')[2], 'GET /version')
    # the DocSearch attributes: category, title, best section, anchor
    status, _, data = post(srv, '/indexes/pages/search', {'q': 'consistent hashing', 'limit': 3,
                                                          'attributesToHighlight': ['hierarchy_lvl1']})
    ref = get(srv, '/api/search?q=consistent+hashing&limit=3')[2]['results']
    hit, r = data['hits'][0], ref[0]
    check(status == 200 and hit['hierarchy_lvl0'] == (r['topics_titled'][0]['title'] if r['topics_titled'] else r['type'])
          and hit['hierarchy_lvl1'] == r['title'], 'meili: hierarchy_lvl0 is the first topic\'s title, lvl1 the title')
    sec = r['sections'][0] if r['sections'] else None
    check(hit['anchor'] == (sec['anchor'] if sec else None) and (hit['hierarchy_lvl2'] is None) == (sec is None),
          'meili: hierarchy_lvl2 and anchor are the best section\'s (null without one)')
    check('<em>' in hit['_formatted']['hierarchy_lvl1'], 'meili: hierarchy_lvl1 is highlighted')
    # each query of a multi-search is answered from the response cache on its own
    def hits_total():
        return int(re.search(r'^atlas_cache_hits_total (\d+)', srv.request('/metrics')[2].decode(), re.M).group(1))
    one = {'indexUid': 'pages', 'q': 'raft leader election', 'limit': 4}
    other = {'indexUid': 'pages', 'q': 'bloom filter', 'limit': 4}
    status, _, first = post(srv, '/multi-search', {'queries': [one]})
    h0 = hits_total()
    status2, _, both = post(srv, '/multi-search', {'queries': [one, other]})
    check(status == 200 and status2 == 200 and hits_total() == h0 + 1, 'multi-search: a query answered before comes from the cache')
    check(both['results'][0] == first['results'][0] and both['results'][1]['indexUid'] == 'pages' and
          both['results'][1]['query'] == 'bloom filter', 'multi-search: the cached answer is the computed one')
    single = post(srv, '/indexes/pages/search', {'q': 'bloom filter', 'limit': 4})[2]
    check('indexUid' not in single and single['hits'] == both['results'][1]['hits'], 'search: no indexUid, the same hits')


def test_key_and_uid(workdir):
    key_file = os.path.join(workdir, 'key')
    with open(key_file, 'w') as f:
        f.write('  s3cret-key\n')
    srv = Server(REAL_INDEX, workdir, '--api-key-file', key_file, '--index-uid', 'docs')
    try:
        q = {'q': 'raft'}
        status, h, data = post(srv, '/indexes/docs/search', q)
        check(meili_error(data, 'missing_authorization_header', status, 401) and h.get('www-authenticate') == 'Bearer',
              'key: missing is a 401')
        status, _, data = post(srv, '/indexes/docs/search', q, headers={'Authorization': 'Bearer s3cret-kez'})
        check(meili_error(data, 'invalid_api_key', status, 403), 'key: wrong is a 403')
        status, _, data = post(srv, '/indexes/docs/search', q, headers={'Authorization': 'Bearer s3cret-key-longer'})
        check(meili_error(data, 'invalid_api_key', status, 403), 'key: longer is a 403')
        status, _, data = post(srv, '/indexes/docs/search', q, headers={'Authorization': 'Basic s3cret-key'})
        check(status == 401, 'key: not Bearer is a 401')
        status, _, data = post(srv, '/indexes/docs/search', q, headers={'Authorization': 'Bearer s3cret-key'})
        check(status == 200 and data['hits'], 'key: right is a 200')
        status, _, data = post(srv, '/indexes/pages/search', q, headers={'Authorization': 'Bearer s3cret-key'})
        check(meili_error(data, 'index_not_found', status, 404), '--index-uid docs: pages is not found')
        check(get(srv, '/health')[0] == 200, 'key: /health needs none')
        check(get(srv, '/api/search?q=raft')[0] == 200, 'key: /api/search needs none')
    finally:
        srv.stop()
    empty = os.path.join(workdir, 'empty')
    open(empty, 'w').close()
    for args in [['--api-key-file', empty], ['--api-key-file', os.path.join(workdir, 'absent')],
                 ['--index-uid', 'a/b']]:
        try:
            Server(REAL_INDEX, workdir, *args).stop()
            check(False, '%s: refused at start' % args)
        except RuntimeError:
            pass


def main():
    workdir = tempfile.mkdtemp(prefix='atlas-frontend-')
    try:
        srv = Server(REAL_INDEX, workdir)
        try:
            test_search(srv)
            test_compression(srv)
            test_batch(srv)
            test_meili(srv)
        finally:
            srv.stop()
        test_key_and_uid(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print('frontend: %s' % ('FAILED (%d)' % len(failures) if failures else 'passed'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
