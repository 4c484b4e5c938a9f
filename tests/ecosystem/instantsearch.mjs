// instantsearch.mjs - a page built with InstantSearch.js and @meilisearch/instant-meilisearch (both
// from node_modules, served from their own origin) against atlas-serve in Debian's headless
// Chromium, driven by playwright-core: type a query, read the rendered hits and their highlights,
// refine by type and by topic, go to page 2, each state checked against /api/search for the same
// request. Run by run.py, which sets ATLAS_URL, ATLAS_KEY, ATLAS_CHROMIUM, ATLAS_PROFILE,
// ATLAS_NODE_MODULES, ATLAS_PAGE_DIR and ATLAS_OUT_DIR (the screenshot goes there).
// Prints "ok"/"FAIL" lines and "N passed, N failed"; exits 1 on any failure.
import path from 'node:path';

import { api, check, env, finish, launchChromium, MODULES, serveFiles, BASE } from './lib.mjs';

const PAGE_DIR = env('ATLAS_PAGE_DIR');
const WAIT = 10000;

// The page's own origin: index.html and app.js of PAGE_DIR, and the two bundles of node_modules.
const files = {
	'/': [path.join(PAGE_DIR, 'index.html'), 'text/html; charset=utf-8'],
	'/app.js': [path.join(PAGE_DIR, 'app.js'), 'text/javascript; charset=utf-8'],
	'/node_modules/instantsearch.js/dist/instantsearch.production.min.js':
		[path.join(MODULES, 'instantsearch.js/dist/instantsearch.production.min.js'), 'text/javascript'],
	'/node_modules/@meilisearch/instant-meilisearch/dist/instant-meilisearch.umd.min.js':
		[path.join(MODULES, '@meilisearch/instant-meilisearch/dist/instant-meilisearch.umd.min.js'), 'text/javascript'],
};
const site = await serveFiles(files);
const SITE = site.url;
const context = await launchChromium();
try {
	const page = context.pages()[0] || await context.newPage();
	page.setDefaultTimeout(WAIT);
	const errors = [];
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	page.on('pageerror', (e) => errors.push(String(e)));
	const searches = [];
	page.on('request', (r) => { if (r.url().startsWith(BASE)) searches.push(r.url()); });

	// Returns the rendered hits: [{path, title, marked (the highlighted words)}].
	const hits = () => page.$$eval('#hits a.hit', (as) => as.map((a) => ({
		path: a.dataset.path,
		title: a.textContent.trim().replace(/\s+/g, ' '),
		marked: [...a.querySelectorAll('mark, .ais-Highlight-highlighted')].map((m) => m.textContent),
	})));
	// Waits until the rendered hits are those of want (paths). Returns whether they became so.
	async function hitsBecome(want) {
		try {
			await page.waitForFunction((w) => {
				const got = [...document.querySelectorAll('#hits a.hit')].map((a) => a.dataset.path);
				return JSON.stringify(got) === JSON.stringify(w);
			}, want, { timeout: WAIT, polling: 50 });
			return true;
		} catch (e) {
			if (e.name !== 'TimeoutError') throw e;
			return false;
		}
	}
	const want = (r) => r.results.map((x) => x.path);

	await page.goto(`${SITE}/?host=${encodeURIComponent(BASE)}&key=${encodeURIComponent(env('ATLAS_KEY'))}`);
	await page.waitForSelector('#searchbox input');
	await page.fill('#searchbox input', '');
	await page.type('#searchbox input', 'consistent hashing', { delay: 20 });
	const ref = await api('q=consistent+hashing&hitsPerPage=5');
	check(await hitsBecome(want(ref)), 'typed "consistent hashing": the hits of /api/search', await hits());
	const first = (await hits())[0];
	check(first && first.title === 'Consistent Hashing' && first.marked.join(' ') === 'Consistent Hashing',
		'the first hit\'s title is highlighted', first);
	check(searches.some((u) => u.endsWith('/multi-search')), 'InstantSearch asked /multi-search', searches.slice(-3));

	// the type refinement list shows the facet counts, and refining filters
	const typeCounts = await page.$$eval('#type .ais-RefinementList-item', (li) => Object.fromEntries(li.map((x) => [
		x.querySelector('.ais-RefinementList-labelText').textContent,
		Number(x.querySelector('.ais-RefinementList-count').textContent)])));
	check(JSON.stringify(typeCounts) === JSON.stringify(Object.fromEntries(
		Object.entries(ref.facets.type).sort((a, b) => b[1] - a[1]))), 'the type list: the type facet', typeCounts);
	await page.click('#type .ais-RefinementList-item:has-text("topic") input');
	const refTopic = await api('q=consistent+hashing&hitsPerPage=5&type=topic');
	check(await hitsBecome(want(refTopic)), 'refined to type topic: the hits of type=topic', await hits());
	await page.click('#type .ais-RefinementList-item:has-text("explainer") input');
	const refTwo = await api('q=consistent+hashing&hitsPerPage=5&type=topic,explainer');
	check(await hitsBecome(want(refTwo)), 'refined to topic or explainer: the hits of type=topic,explainer',
		await hits());
	await page.click('#type .ais-RefinementList-item:has-text("topic") input');
	await page.click('#type .ais-RefinementList-item:has-text("explainer") input');
	check(await hitsBecome(want(ref)), 'refinements cleared: the first hits again');

	// the topic list and a refinement on it
	const topicLabels = await page.$$eval('#topic .ais-RefinementList-labelText', (s) => s.map((x) => x.textContent));
	check(topicLabels.includes('foundations'), 'the topic list holds foundations', topicLabels);
	await page.click('#topic .ais-RefinementList-item:has-text("foundations") input');
	const refFound = await api('q=consistent+hashing&hitsPerPage=5&topic=foundations');
	check(await hitsBecome(want(refFound)), 'refined to topic foundations: the hits of topic=foundations',
		await hits());
	await page.click('#topic .ais-RefinementList-item:has-text("foundations") input');
	check(await hitsBecome(want(ref)), 'topic refinement cleared');

	// pages
	await page.click('#pagination .ais-Pagination-item--page:has-text("2") a');
	const ref2 = await api('q=consistent+hashing&hitsPerPage=5&page=2');
	check(await hitsBecome(want(ref2)), 'page 2: the hits of page=2', await hits());
	const pages = await page.$$eval('#pagination .ais-Pagination-item--page', (li) => li.length);
	check(pages === Math.min(ref.totalPages, 7), 'the pagination shows the pages', { pages, total: ref.totalPages });
	await page.screenshot({ path: path.join(env('ATLAS_OUT_DIR'), 'instantsearch.png') });
	check(errors.length === 0, 'no console errors', errors);
} finally {
	await context.close();
	site.close();
}
finish();
