// client.mjs - the official meilisearch JS client against atlas-serve: index('pages').search with
// paging, facets, filters, highlight and crop, multiSearch, the index, health and version, and the
// errors the client raises (a bad filter, a wrong key, a write route); every answer checked against
// /api/search for the same request. Run by run.py, which sets ATLAS_URL, ATLAS_KEY and
// ATLAS_NODE_MODULES. Prints "ok"/"FAIL" lines and "N passed, N failed"; exits 1 on any failure.
import { api, BASE, check, env, finish, require } from './lib.mjs';

const KEY = env('ATLAS_KEY');
const { MeiliSearch } = require('meilisearch');

// Returns the error that fn's promise rejects with, or null.
async function rejection(fn) {
	try {
		await fn();
		return null;
	} catch (e) {
		return e;
	}
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const paths = (hits) => hits.map((h) => h.path);
const words = (s) => s.split(/\s+/).filter((w) => w && w !== '…').length;

const client = new MeiliSearch({ host: BASE, apiKey: KEY });
const index = client.index('pages');

// a plain search, offset and limit
{
	const r = await index.search('consistent hashing', { limit: 5 });
	const ref = await api('q=consistent+hashing&limit=5');
	check(same(paths(r.hits), ref.results.map((x) => x.path)), 'search: the hits of /api/search', paths(r.hits));
	check(r.estimatedTotalHits === ref.total && r.limit === 5 && r.offset === 0 && r.query === 'consistent hashing',
		'search: estimatedTotalHits, limit, offset, query', { e: r.estimatedTotalHits, t: ref.total });
	check(typeof r.processingTimeMs === 'number', 'search: processingTimeMs');
	const h = r.hits[0];
	check(h.title === ref.results[0].title && h.url === ref.results[0].url && h.type === ref.results[0].type &&
		h.description === ref.results[0].description && same(h.topics, ref.results[0].topics),
		'search: a hit carries the page\'s fields');
	const o = await index.search('consistent hashing', { limit: 3, offset: 2 });
	check(same(paths(o.hits), paths(r.hits).slice(2, 5)), 'search: offset 2');
}

// pages
{
	const r = await index.search('cache', { hitsPerPage: 4, page: 3 });
	const ref = await api('q=cache&hitsPerPage=4&page=3');
	check(same(paths(r.hits), ref.results.map((x) => x.path)), 'page 3 of 4: the hits of /api/search');
	check(r.totalHits === ref.total && r.totalPages === Math.ceil(ref.total / 4) && r.page === 3 && r.hitsPerPage === 4,
		'page 3 of 4: totalHits, totalPages, page, hitsPerPage', r);
}

// facets and filters
{
	const r = await index.search('cache', { facets: ['type', 'topic'], limit: 1 });
	const ref = await api('q=cache&limit=1');
	const topics = Object.fromEntries(ref.facets.topic.map((t) => [t.path, t.count]));
	check(same(r.facetDistribution.type, ref.facets.type), 'facets: type', r.facetDistribution);
	check(same(r.facetDistribution.topic, topics), 'facets: topic', r.facetDistribution);

	const f = await index.search('cache', { filter: [['type = guide', 'type = explainer'], 'topic = systems'], limit: 50 });
	const fref = await api('q=cache&type=guide,explainer&topic=systems&limit=50');
	check(f.hits.length > 0 && same(paths(f.hits), fref.results.map((x) => x.path)),
		'filter [[type = guide, type = explainer], topic = systems]: the hits of type=guide,explainer&topic=systems');
	const s = await index.search('cache', { filter: '(type = "guide" OR type = explainer) AND topic = systems', limit: 50 });
	check(same(paths(s.hits), paths(f.hits)), 'the same filter as a string');
	const t = await index.search('cache', { filter: 'topic = systems/caching', facets: ['topic'], limit: 50 });
	check(t.hits.length > 0 && t.hits.every((h) => h.topic.includes('systems/caching')),
		'filter topic = systems/caching: every hit is in it');
	check(t.facetDistribution.topic.systems === t.estimatedTotalHits &&
		Object.values(t.facetDistribution.topic).every((n) => n <= t.estimatedTotalHits),
		'facets count the filtered pages (every one under systems)', t.facetDistribution);
	const e = await rejection(() => index.search('cache', { filter: 'lastmod > 2020' }));
	check(e && e.cause && e.cause.code === 'invalid_search_filter' && /lastmod/.test(e.message),
		'filter lastmod > 2020: invalid_search_filter', e && e.message);
}

// highlight and crop
{
	const r = await index.search('consistent hashing', {
		limit: 3, attributesToHighlight: ['title', 'content'], highlightPreTag: '<b>', highlightPostTag: '</b>',
	});
	const ref = await api('q=consistent+hashing&limit=3');
	check(r.hits[0]._formatted.title === '<b>Consistent</b> <b>Hashing</b>', 'highlight: the title',
		r.hits[0]._formatted.title);
	const unmark = (s) => s.replaceAll('<mark>', '<b>').replaceAll('</mark>', '</b>').replaceAll('&amp;', '&');
	check(r.hits.every((h, i) => h._formatted.title === unmark(ref.results[i].title_highlighted)),
		'highlight: title_highlighted of /api/search with the tags asked for');
	check(r.hits.every((h, i) => h._formatted.content === unmark(ref.results[i].snippet)),
		'highlight: content is the snippet of /api/search');
	check(r.hits.every((h) => h.title === h._formatted.title.replaceAll('<b>', '').replaceAll('</b>', '')),
		'highlight: the plain title beside it');
	const c = await index.search('consistent hashing', {
		limit: 3, attributesToCrop: ['content'], cropLength: 5, cropMarker: '[…]', attributesToHighlight: ['content'],
	});
	check(c.hits.every((h) => words(h._formatted.content.replaceAll('[…]', ' ')) <= 5), 'crop: at most 5 words',
		c.hits.map((h) => h._formatted.content));
	check(c.hits.some((h) => h._formatted.content.includes('<em>')), 'crop: the match kept, with the default tags');
	check(c.hits.some((h) => h._formatted.content.includes('[…]')), 'crop: the marker asked for');
	const a = await index.search('raft', { attributesToRetrieve: ['title', 'path'], limit: 2 });
	check(a.hits.every((h) => same(Object.keys(h).sort(), ['path', 'title'])), 'attributesToRetrieve', a.hits);
}

// multiSearch
{
	const m = await client.multiSearch({
		queries: [
			{ indexUid: 'pages', q: 'raft', limit: 3 },
			{ indexUid: 'pages', q: 'cache', hitsPerPage: 3, page: 2, filter: 'type = explainer' },
		],
	});
	const r0 = await api('q=raft&limit=3');
	const r1 = await api('q=cache&hitsPerPage=3&page=2&type=explainer');
	check(m.results.length === 2 && m.results.every((r) => r.indexUid === 'pages'), 'multiSearch: two results');
	check(same(paths(m.results[0].hits), r0.results.map((x) => x.path)), 'multiSearch: the first query');
	check(same(paths(m.results[1].hits), r1.results.map((x) => x.path)) && m.results[1].totalHits === r1.total,
		'multiSearch: the second query, paged and filtered');
	const e = await rejection(() => client.multiSearch({ queries: [{ indexUid: 'nope', q: 'x' }] }));
	check(e && e.cause && e.cause.code === 'index_not_found', 'multiSearch: an unknown index', e && e.message);
}

// the index, health, version, keys and write routes
{
	const info = await index.getRawInfo();
	check(info.uid === 'pages' && info.primaryKey === 'id', 'getRawInfo', info);
	check((await client.health()).status === 'available', 'health');
	check(typeof (await client.getVersion()).pkgVersion === 'string', 'getVersion');
	const wrong = new MeiliSearch({ host: BASE, apiKey: KEY + 'x' });
	let e = await rejection(() => wrong.index('pages').search('raft'));
	check(e && e.cause && e.cause.code === 'invalid_api_key', 'a wrong key: invalid_api_key', e && e.message);
	const none = new MeiliSearch({ host: BASE });
	e = await rejection(() => none.index('pages').search('raft'));
	check(e && e.cause && e.cause.code === 'missing_authorization_header', 'no key: missing_authorization_header',
		e && e.message);
	e = await rejection(() => index.addDocuments([{ id: 1, title: 'x' }]));
	check(e && e.cause && e.cause.code === 'method_not_allowed', 'addDocuments: refused, read-only', e && e.message);
	e = await rejection(() => index.deleteAllDocuments());
	check(e && e.cause && e.cause.code === 'method_not_allowed', 'deleteAllDocuments: refused', e && e.message);
}

finish();
