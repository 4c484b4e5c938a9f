// search_page.mjs - the search page in a real browser (Debian's headless Chromium, driven by
// playwright-core): loading without console errors or CSP violations, "/" to search, results as
// you type with highlights and section links, the announced count, "did you mean", the type and
// topic facets, the arrow keys and Enter, and the read-next list. Run by run.py, which sets:
//   ATLAS_URL           the atlas-serve under test (http://127.0.0.1:PORT)
//   ATLAS_CHROMIUM      the browser (/usr/bin/chromium)
//   ATLAS_PROFILE       a new, empty directory for --user-data-dir
//   ATLAS_NODE_MODULES  where `npm ci` installed playwright-core
//   ATLAS_OUT_DIR       where the screenshots go
// Prints "ok"/"FAIL" lines and a closing "N passed, N failed"; exits 1 on any failure.
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (name) => {
	const v = process.env[name];
	if (!v) throw new Error(name + ' is not set (run this through tests/browser/run.py)');
	return v;
};
const BASE = env('ATLAS_URL');
const OUT_DIR = env('ATLAS_OUT_DIR');
const require = createRequire(path.join(env('ATLAS_NODE_MODULES'), 'noop.js'));
const { chromium } = require('playwright-core');

const WAIT = 10000; // ms for anything the page should do by itself
let passed = 0;
let failed = 0;

function check(cond, what, detail) {
	if (cond) {
		passed++;
		console.log('ok   ' + what);
	} else {
		failed++;
		console.log('FAIL ' + what + (detail !== undefined ? ': ' + JSON.stringify(detail) : ''));
	}
	return cond;
}

// Waits until fn(arg) is truthy in the page. Returns true, or false after WAIT ms.
async function until(page, fn, arg) {
	try {
		await page.waitForFunction(fn, arg, { timeout: WAIT, polling: 50 });
		return true;
	} catch (e) {
		if (e.name !== 'TimeoutError') throw e;
		return false;
	}
}

// Returns the JSON of an API call, asked from Node (the expectations the page must show).
async function api(pathAndQuery) {
	const res = await fetch(BASE + pathAndQuery);
	if (!res.ok) throw new Error(pathAndQuery + ': HTTP ' + res.status);
	return res.json();
}

const status = (page) => page.locator('#status').textContent();
const activeDesc = (page) => page.evaluate(() => {
	const a = document.activeElement;
	if (!a || a === document.body) return 'body';
	const li = a.closest('#results > li');
	return a.tagName.toLowerCase() + (a.id ? '#' + a.id : '') +
		(li ? ' in result ' + li.dataset.index : '') + (a.className ? '.' + a.className : '');
});
// The number in the live region's "N results for …" sentence, or null.
const announced = (text) => {
	const m = /^(\d+) results? for|^(No) results for/.exec(text || '');
	return m ? (m[2] ? 0 : Number(m[1])) : null;
};

async function main() {
	const launchArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
		'--no-first-run', '--disable-background-networking', '--disable-component-update',
		'--disable-sync'];
	// launchPersistentContext is how Playwright takes --user-data-dir (a new, empty one).
	const context = await chromium.launchPersistentContext(env('ATLAS_PROFILE'), {
		executablePath: env('ATLAS_CHROMIUM'),
		headless: true,
		args: launchArgs,
		viewport: { width: 1280, height: 900 },
		colorScheme: 'light',
		reducedMotion: 'reduce',
	});
	try {
		await run(context);
	} finally {
		await context.close();
	}
}

async function run(context) {
	const page = context.pages()[0] || await context.newPage();
	page.setDefaultTimeout(WAIT);
	const consoleErrors = [];
	const cspViolations = [];
	const apiRequests = [];
	const badResponses = [];
	page.on('console', (m) => {
		if (m.type() === 'error' || m.type() === 'warning')
			consoleErrors.push(m.type() + ': ' + m.text() + ' @ ' + (m.location().url || ''));
	});
	page.on('pageerror', (e) => consoleErrors.push('uncaught: ' + e.message));
	page.on('request', (r) => {
		if (r.url().startsWith(BASE + '/api/')) apiRequests.push(new URL(r.url()));
	});
	page.on('response', (r) => {
		if (r.url().startsWith(BASE) && r.status() >= 400) badResponses.push(r.status() + ' ' + r.url());
	});
	// CSP violations are seen by the page's own securitypolicyviolation event, reported through a
	// binding (not subject to the CSP), on every document the page loads.
	await context.exposeBinding('__atlasCsp', (_src, v) => cspViolations.push(v));
	await context.addInitScript(() => {
		document.addEventListener('securitypolicyviolation', (e) => {
			window.__atlasCsp(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') +
				' (' + (e.sourceFile || '') + ':' + e.lineNumber + ')');
		});
	});

	// The results link to the public site: no request may leave the machine, so its pages are
	// answered here with a stub, which also records that the browser went there.
	const expected = await api('/api/search?q=' + encodeURIComponent('consistent hashing') + '&limit=10');
	const site = new URL(expected.results[0].url).origin;
	const siteVisits = [];
	await context.route(site + '/**', (route) => {
		siteVisits.push(route.request().url());
		return route.fulfill({
			status: 200,
			contentType: 'text/html; charset=utf-8',
			body: '<!doctype html><title>stub of the site</title><p>stub',
		});
	});

	// --- The page loads.
	const resp = await page.goto(BASE + '/', { waitUntil: 'load' });
	check(resp && resp.status() === 200, 'GET / answers 200', resp && resp.status());
	const csp = resp ? (await resp.allHeaders())['content-security-policy'] || '' : '';
	check(/script-src 'self'/.test(csp) && /style-src 'self'/.test(csp),
		'the page is served with its Content-Security-Policy', csp);
	check(/Search/.test(await page.title()), 'the page has its title', await page.title());
	const box = page.getByLabel('Search the explainers');
	check(await box.count() === 1 && await box.evaluate((n) => n.id) === 'q',
		'the search box is the input labelled "Search the explainers"');
	check(await page.locator('link[rel=stylesheet]').evaluate((l) => Boolean(l.sheet)) &&
		await page.evaluate(() => getComputedStyle(document.querySelector('.layout')).display) === 'grid',
		'style.css is applied (the layout is a grid)');
	check(await page.locator('#status').getAttribute('aria-live') === 'polite' &&
		await page.locator('#status').getAttribute('role') === 'status',
		'the count is announced in an aria-live="polite" role="status" region');

	// --- "/" focuses the search box from anywhere on the page.
	await page.locator('.keys').click(); // somewhere that is not the box
	check(await activeDesc(page) !== 'input#q', 'the box is not focused before "/"', await activeDesc(page));
	await page.keyboard.press('/');
	check(await activeDesc(page) === 'input#q', '"/" focuses the search box', await activeDesc(page));
	check(await box.inputValue() === '', '"/" is not typed into the box', await box.inputValue());

	// --- Results as you type (debounced), without Enter.
	apiRequests.length = 0;
	await page.keyboard.type('consistent', { delay: 25 });
	let ok = await until(page, () => /results? for “consistent”/.test(document.getElementById('status').textContent));
	check(ok, 'results for "consistent" show while typing, without Enter', await status(page));
	const searchesWhileTyping = apiRequests.filter((u) => u.pathname === '/api/search');
	check(searchesWhileTyping.length >= 1 && searchesWhileTyping.length <= 5,
		'typing 10 letters is debounced into a few searches, not one per key',
		searchesWhileTyping.map((u) => u.searchParams.get('q')));
	await page.keyboard.type(' hashing', { delay: 25 });
	ok = await until(page, () => /results? for “consistent hashing”/.test(document.getElementById('status').textContent));
	const countText = await status(page);
	check(ok, 'the results update as the query grows ("consistent hashing")', countText);
	check(announced(countText) === expected.total,
		'the live region announces the count (' + expected.total + ' results)', countText);
	check(new URL(page.url()).searchParams.get('q') === 'consistent hashing',
		'the address bar carries the query', page.url());

	const hits = page.locator('#results > li.result');
	const shown = await hits.count();
	check(shown === expected.results.length, 'the first page of results is shown',
		{ shown, expected: expected.results.length });
	const titles = await page.locator('#results > li a.title').allTextContents();
	check(titles[0] === expected.results[0].title, 'the best result comes first', titles.slice(0, 3));
	const hrefs = await page.locator('#results > li a.title').evaluateAll((as) => as.map((a) => a.href));
	check(hrefs.every((h, i) => h === expected.results[i].url), 'each title links to its page', hrefs.slice(0, 3));
	const marks = await page.locator('#results .snippet mark').allTextContents();
	check(marks.length > 0 && marks.every((m) => /consist|hash/i.test(m)),
		'snippets highlight the query words with <mark>', marks.slice(0, 6));
	check(await page.locator('#results .snippet').evaluateAll((ps) =>
		ps.every((p) => [...p.querySelectorAll('*')].every((n) => n.tagName === 'MARK'))),
	'snippets hold no markup but <mark>');
	const sectionHrefs = await page.locator('#results > li').first().locator('.sections a')
		.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
	const wantSections = (expected.results[0].sections || []).map((s) => expected.results[0].url + '#' + s.anchor);
	check(sectionHrefs.length > 0 && JSON.stringify(sectionHrefs) === JSON.stringify(wantSections) &&
		sectionHrefs.every((h) => /#[a-z0-9-]+$/.test(h)),
	'the first result links to its sections (href ending in #anchor)', { sectionHrefs, wantSections });
	check(await page.locator('#results .sections mark').count() > 0, 'section headings or snippets are highlighted too');
	check(await page.locator('#results > li.result').evaluateAll((lis) => lis.every((li) => {
		const own = li.querySelector('.snippet');
		return ![...li.querySelectorAll('.section-snippet')].some((s) => own && s.innerHTML === own.innerHTML);
	})), 'no result shows its snippet twice (again under the section it comes from)');
	check(await page.locator('#did-you-mean').isHidden(), 'no "did you mean" for a query spelled right');

	// --- Facets: type.
	check(await page.locator('#facets').isVisible(), 'the facets are shown');
	const typeButtons = await page.locator('#facet-type button').allTextContents();
	check(typeButtons.some((t) => /^Guides \(\d+\)$/.test(t.trim())), 'the type facet lists Guides with a count', typeButtons);
	const guides = expected.facets.type.guide;
	await page.locator('#facet-type button', { hasText: 'Guides' }).click();
	ok = await until(page, (n) => /in Guides\.$/.test(document.getElementById('status').textContent) &&
		document.querySelectorAll('#results > li').length === n, guides);
	check(ok, 'clicking Guides filters the results to ' + guides + ' guides', await status(page));
	const types = await page.locator('#results .meta .type').allTextContents();
	check(types.length === guides && types.every((t) => t === 'guide'), 'every result shown is a guide', types);
	check(await page.locator('#facet-type button', { hasText: 'Guides' }).getAttribute('aria-pressed') === 'true',
		'the Guides filter shows as pressed');
	check(new URL(page.url()).searchParams.get('type') === 'guide', 'the address bar carries type=guide', page.url());
	// The facets are drawn anew with the results: the pressed one keeps the keyboard focus.
	check(await page.evaluate(() => document.activeElement.dataset.facet) === 'type:guide',
		'the Guides button keeps the focus after the results change', await activeDesc(page));
	await page.keyboard.press('Enter');
	ok = await until(page, (n) => document.getElementById('status').textContent.startsWith(n + ' results for'), expected.total);
	check(ok, 'Enter on Guides (still focused) removes the filter', await status(page));
	check(await page.locator('#facet-type button', { hasText: 'Guides' }).getAttribute('aria-pressed') === 'false' &&
		await page.evaluate(() => document.activeElement.dataset.facet) === 'type:guide',
	'Guides shows as not pressed, and keeps the focus', await activeDesc(page));

	// --- Facets: topic (from the unfiltered results, whatever happened above).
	if (announced(await status(page)) !== expected.total || new URL(page.url()).searchParams.has('type')) {
		await page.goto(BASE + '/?q=consistent+hashing', { waitUntil: 'load' });
		await until(page, (n) => document.getElementById('status').textContent.startsWith(n + ' results for'), expected.total);
	}
	const topic = expected.facets.topic.find((t) => t.path === 'foundations') || expected.facets.topic[0];
	const topicRe = new RegExp('^' + topic.path + '(/|$)');
	const [topicResponse] = await Promise.all([
		page.waitForResponse((r) => r.url().includes('/api/search') &&
			new URL(r.url()).searchParams.get('topic') === topic.path),
		page.locator('#facet-topic button', { hasText: topic.title }).click(),
	]);
	const topicBody = await topicResponse.json();
	ok = await until(page, (n) => document.getElementById('status').textContent.startsWith(n + ' result'), topicBody.total);
	check(ok && topicBody.total === topic.count && topicBody.total < expected.total,
		'clicking topic ' + topic.title + ' narrows ' + expected.total + ' results to ' + topic.count,
		{ status: await status(page), total: topicBody.total, facet: topic.count });
	check(topicBody.results.length > 0 && topicBody.results.every((r) => r.topics.some((t) => topicRe.test(t))),
		'every result of the topic filter is under ' + topic.path, topicBody.results.map((r) => r.topics));
	const topicTitles = await page.locator('#results > li a.title').allTextContents();
	check(JSON.stringify(topicTitles) === JSON.stringify(topicBody.results.map((r) => r.title)),
		'the page shows the filtered results', topicTitles);
	check(await page.locator('#facet-topic button', { hasText: topic.title }).getAttribute('aria-pressed') === 'true',
		'the topic filter shows as pressed');
	await page.locator('#facet-topic button', { hasText: topic.title }).click();
	ok = await until(page, (n) => document.getElementById('status').textContent.startsWith(n + ' results for'), expected.total);
	check(ok, 'clicking the topic again removes the filter', await status(page));
	check(new URL(page.url()).search === '?q=consistent+hashing', 'the address bar drops the filters', page.url());

	// --- Keyboard: ArrowDown / ArrowUp move the focused result; it shows its read-next list.
	await page.keyboard.press('/');
	check(await activeDesc(page) === 'input#q', '"/" brings focus back to the box', await activeDesc(page));
	const nextRequests = () => apiRequests.filter((u) => u.pathname === '/api/next').map((u) => u.searchParams.get('path'));
	await page.keyboard.press('ArrowDown');
	check(await activeDesc(page) === 'a in result 0.title', 'ArrowDown from the box focuses the first result', await activeDesc(page));
	await page.keyboard.press('ArrowDown');
	check(await activeDesc(page) === 'a in result 1.title', 'ArrowDown focuses the second result', await activeDesc(page));
	check(await page.locator('#results > li.focused').count() === 1 &&
		await page.locator('#results > li.focused').getAttribute('data-index') === '1',
	'only the focused result is marked focused');
	const next1 = await api('/api/next?path=' + encodeURIComponent(expected.results[1].path));
	ok = await until(page, (t) => !document.getElementById('next').hidden &&
		document.getElementById('next-for').textContent.includes(t), expected.results[1].title);
	check(ok, 'the read-next list is shown for the focused result', await page.locator('#next-for').textContent());
	check(nextRequests().includes(expected.results[1].path), 'read next comes from /api/next?path=' +
		expected.results[1].path, nextRequests());
	const nextTitles = await page.locator('#next-list > li > a').allTextContents();
	check(nextTitles.length > 0 && JSON.stringify(nextTitles) === JSON.stringify(next1.suggestions.map((s) => s.title)),
		'read next lists the suggestions of /api/next', { nextTitles });
	await page.keyboard.press('ArrowUp');
	check(await activeDesc(page) === 'a in result 0.title', 'ArrowUp moves back to the first result', await activeDesc(page));
	ok = await until(page, (t) => !document.getElementById('next').hidden &&
		document.getElementById('next-for').textContent.includes(t), expected.results[0].title);
	check(ok, 'read next follows the focused result', await page.locator('#next-for').textContent());
	await page.keyboard.press('ArrowUp');
	check(await activeDesc(page) === 'input#q', 'ArrowUp from the first result goes back to the box', await activeDesc(page));
	await page.keyboard.press('ArrowDown');
	await page.keyboard.press('ArrowDown');
	ok = await until(page, (t) => !document.getElementById('next').hidden &&
		document.getElementById('next-for').textContent.includes(t), expected.results[1].title);
	check(ok && await activeDesc(page) === 'a in result 1.title', 'back down on the second result, with its read next');
	await page.waitForTimeout(200); // the read-next delay and the focus ring settle
	const shot = path.join(OUT_DIR, 'search-page.png');
	await page.screenshot({ path: shot, fullPage: true });
	console.log('screenshot: ' + shot);

	// --- Enter opens the focused result (the site is stubbed by the route above).
	const target = expected.results[1].url;
	await page.keyboard.press('Enter');
	let navigated = true;
	try {
		await page.waitForURL(target, { timeout: WAIT });
	} catch (e) {
		navigated = false;
	}
	check(navigated && siteVisits.includes(target), 'Enter opens the focused result (' + target + ')',
		{ url: page.url(), siteVisits });

	// --- "Did you mean": a typo offers the correction; clicking it runs the corrected search.
	await page.goto(BASE + '/', { waitUntil: 'load' });
	const typo = await api('/api/search?q=' + encodeURIComponent('proximty search') + '&limit=10');
	const fixed = await api('/api/search?q=' + encodeURIComponent(typo.did_you_mean || '') + '&limit=10');
	check(typo.did_you_mean === 'proximity search', 'the API corrects "proximty search"', typo.did_you_mean);
	await page.keyboard.press('/');
	await page.keyboard.type('proximty search', { delay: 25 });
	ok = await until(page, () => !document.getElementById('did-you-mean').hidden);
	const dym = page.getByRole('button', { name: 'proximity search' });
	check(ok && await dym.isVisible(), '"Did you mean proximity search?" is shown for "proximty search"',
		await page.locator('#did-you-mean').textContent());
	check(/Did you mean\s+proximity search\s*\?/.test((await page.locator('#did-you-mean').textContent()).replace(/\s+/g, ' ')),
		'the suggestion reads "Did you mean proximity search?"');
	const shotDym = path.join(OUT_DIR, 'search-page-did-you-mean.png');
	await page.screenshot({ path: shotDym, fullPage: false });
	console.log('screenshot: ' + shotDym);
	await dym.click();
	ok = await until(page, (n) => document.getElementById('status').textContent === n + ' results for “proximity search”.',
		fixed.total);
	check(ok, 'clicking it runs the corrected search', await status(page));
	check(await box.inputValue() === 'proximity search', 'the box holds the corrected query', await box.inputValue());
	check(await page.locator('#did-you-mean').isHidden(), '"did you mean" goes away for the corrected query');
	check(await page.locator('#results > li a.title').first().textContent() === fixed.results[0].title,
		'the corrected search shows its results', await page.locator('#results > li a.title').first().textContent());
	check(await activeDesc(page) === 'input#q', 'focus goes back to the box after the correction', await activeDesc(page));

	// --- No console errors, no CSP violations, no failed requests over the whole run.
	check(consoleErrors.length === 0, 'no console errors or warnings', consoleErrors);
	check(cspViolations.length === 0, 'no CSP violations', cspViolations);
	check(badResponses.length === 0, 'no request to the server failed', badResponses);
	// The CSP watch itself works: an inline script is refused and reported.
	await page.evaluate(() => {
		const s = document.createElement('script');
		s.textContent = 'window.__inlineRan = true';
		document.body.appendChild(s);
	});
	await page.waitForTimeout(200);
	check(cspViolations.length === 1 && /script-src/.test(cspViolations[0]) &&
		!(await page.evaluate(() => window.__inlineRan)),
	'self-check: the CSP refuses an inline script and the watch reports it', cspViolations);
}

main().catch((e) => {
	failed++;
	console.log('FAIL ' + (e && e.stack ? e.stack : e));
}).finally(() => {
	console.log(passed + ' passed, ' + failed + ' failed');
	process.exitCode = failed ? 1 : 0;
});
