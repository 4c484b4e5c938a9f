// docsearch.mjs - a documentation page with meilisearch-docsearch (its browser bundle, served from
// its own origin) against atlas-serve in Debian's headless Chromium, driven by playwright-core: open
// the modal, type a query, read the rendered hits (grouped by their hierarchy_lvl0, titled by
// hierarchy_lvl1, highlighted, with a cropped text) against /api/search for the same query, then
// follow one. Run by run.py, which sets ATLAS_URL, ATLAS_KEY, ATLAS_CHROMIUM, ATLAS_PROFILE,
// ATLAS_NODE_MODULES, ATLAS_PAGE_DIR and ATLAS_OUT_DIR (the screenshot goes there).
// Prints "ok"/"FAIL" lines and "N passed, N failed"; exits 1 on any failure.
import path from 'node:path';

import { api, check, env, finish, launchChromium, MODULES, serveFiles, BASE } from './lib.mjs';

const PAGE_DIR = env('ATLAS_PAGE_DIR');
const WAIT = 10000;
const LIMIT = 8;

// The page's own origin: docsearch.html, and the bundle and stylesheet of node_modules.
const dist = path.join(MODULES, 'meilisearch-docsearch/dist');
const files = {
	'/': [path.join(PAGE_DIR, 'docsearch.html'), 'text/html; charset=utf-8'],
	'/node_modules/meilisearch-docsearch/dist/index.global.js': [path.join(dist, 'index.global.js'), 'text/javascript'],
	'/node_modules/meilisearch-docsearch/dist/index.css': [path.join(dist, 'index.css'), 'text/css'],
};
const site = await serveFiles(files);
const SITE = site.url;
const context = await launchChromium();
// The hits link to the site's own pages, which are not on this machine: the browser is answered
// here for any address but the two loopback servers, and nothing leaves the machine.
const followed = [];
await context.route((url) => !url.href.startsWith(SITE) && !url.href.startsWith(BASE), (route) => {
	followed.push(route.request().url());
	route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>followed</title><p>page</p>' });
});
try {
	const page = context.pages()[0] || await context.newPage();
	page.setDefaultTimeout(WAIT);
	const errors = [];
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	page.on('pageerror', (e) => errors.push(String(e)));
	const searches = [];
	page.on('request', (r) => { if (r.url().startsWith(BASE)) searches.push(r.url()); });

	await page.goto(`${SITE}/?host=${encodeURIComponent(BASE)}&key=${encodeURIComponent(env('ATLAS_KEY'))}`);
	await page.click('.docsearch-btn');
	const input = await page.waitForSelector('.docsearch-modal-search-input');
	check(!!input, 'the button opens the modal with its search box');
	await page.type('.docsearch-modal-search-input', 'consistent hashing', { delay: 20, timeout: 4 * WAIT });
	let rendered = false;
	try {
		await page.waitForSelector('.docsearch-modal-search-hits-item', { timeout: WAIT });
		rendered = true;
	} catch (e) {
		if (e.name !== 'TimeoutError') throw e;
	}
	check(rendered, 'typed "consistent hashing": hits are rendered',
		await page.$eval('.docsearch-modal', (m) => m.innerText).catch(() => null));
	const ref = await api(`q=consistent+hashing&limit=${LIMIT}`);

	// [{category, title, text, href, marked}], in the order shown (grouped by category)
	const shown = await page.$$eval('.docsearch-modal-search-hits-container section', (secs) => secs.flatMap((s) =>
		[...s.querySelectorAll('.docsearch-modal-search-hits-item')].map((li) => ({
			category: s.querySelector('.docsearch-modal-search-hits-category').textContent,
			title: li.querySelector('.docsearch-modal-search-hits-item-title').textContent.trim(),
			text: li.querySelector('.docsearch-modal-search-hits-item-text').textContent.trim(),
			href: li.querySelector('a').getAttribute('href'),
			marked: [...li.querySelectorAll('.docsearch-modal-search-hits-item--highlight')].map((m) => m.textContent),
		}))));
	check(shown.length === ref.results.length, 'as many hits as /api/search gives', { shown: shown.length, want: ref.results.length });
	// docsearch groups the hits by category in the order each first appears: the same hits, the
	// same order within each category
	const category = (r) => (r.topics_titled.length ? r.topics_titled[0].title : r.type);
	const grouped = [];
	for (const r of ref.results)
		if (!grouped.includes(category(r)))
			grouped.push(category(r));
	const want = grouped.flatMap((c) => ref.results.filter((r) => category(r) === c));
	const hrefOf = (r) => (r.sections.length && r.sections[0].anchor ? `${r.url}#${r.sections[0].anchor}` : r.url);
	check(JSON.stringify(shown.map((h) => h.href)) === JSON.stringify(want.map(hrefOf)),
		'the hits link to the pages of /api/search, grouped by category', { shown: shown.map((h) => h.href), want: want.map(hrefOf) });
	check(JSON.stringify(shown.map((h) => h.category)) === JSON.stringify(want.map(category)),
		'each hit is under its first topic\'s title (its type when it has none)', shown.map((h) => h.category));
	check(shown.every((h, i) => want[i] && h.title.startsWith(want[i].title)), 'each hit is titled by its page title',
		shown.map((h) => h.title));
	const top = shown.find((h) => h.href.startsWith(ref.results[0].url));
	check(top && top.marked.map((m) => m.toLowerCase()).join(' ').includes('consistent'),
		'the best hit\'s title is highlighted', top);
	check(shown.some((h) => h.text.length > 0 && h.marked.length > 0), 'hits show a cropped, highlighted text',
		shown.map((h) => h.text));
	check(searches.some((u) => u.endsWith('/indexes/pages/search')), 'docsearch asked /indexes/pages/search', searches.slice(-3));
	await page.screenshot({ path: path.join(env('ATLAS_OUT_DIR'), 'docsearch.png') });

	// follow the second hit with the keyboard, as a reader would
	if (shown.length > 1) {
		await page.keyboard.press('ArrowDown');
		await Promise.all([page.waitForURL((u) => u.href.startsWith(shown[1].href.split('#')[0])), page.keyboard.press('Enter')]);
		check(page.url() === new URL(shown[1].href).href, 'ArrowDown and Enter follow the second hit',
			{ url: page.url(), want: shown[1].href });
	}
	check(followed.every((u) => want.some((r) => u.startsWith(r.url))), 'nothing but a hit was fetched off the machine', followed);
	check(errors.length === 0, 'no console errors', errors);
} finally {
	await context.close();
	site.close();
}
finish();
