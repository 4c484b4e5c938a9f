// widget.mjs - the search widget (atlas.js, atlas.css) in a real browser (Debian's headless
// Chromium, driven by playwright-core): the standalone page at "/" of atlas-serve and a fixture
// site of another origin embedding the inline box, the modal and read next, at 1280x800 by
// keyboard and mouse and at 390x844 by touch. Every state is checked with axe-core (no serious
// or critical violation) and photographed. Run by run.py, which sets:
//   ATLAS_URL           the atlas-serve under test (http://127.0.0.1:PORT), --cors for the site
//   ATLAS_SITE_URL      the fixture site (tests/browser/site/)
//   ATLAS_SERVE, ATLAS_INDEX  the server and index, for a second server this script stops
//   ATLAS_CHROMIUM      the browser (/usr/bin/chromium)
//   ATLAS_TMP           a scratch directory
//   ATLAS_NODE_MODULES  where `npm ci` installed playwright-core and axe-core
//   ATLAS_OUT_DIR       where the screenshots go
// Prints "ok"/"FAIL" lines, a "BENCH" line of latencies, and "N passed, N failed"; exits 1 on
// any failure.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const env = (name) => {
	const v = process.env[name];
	if (!v) throw new Error(name + ' is not set (run this through tests/browser/run.py)');
	return v;
};
const BASE = env('ATLAS_URL');
const SITE = env('ATLAS_SITE_URL');
const OUT_DIR = env('ATLAS_OUT_DIR');
const require = createRequire(path.join(env('ATLAS_NODE_MODULES'), 'noop.js'));
const { chromium } = require('playwright-core');
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const PROD = 'https://explainers.rudrite.com';

const WAIT = 10000;
let passed = 0;
let failed = 0;

function check(cond, what, detail) {
	if (cond) {
		passed++;
		console.log('ok   ' + what);
	} else {
		failed++;
		console.log('FAIL ' + what + (detail !== undefined ? ': ' + JSON.stringify(detail).slice(0, 600) : ''));
	}
	return cond;
}

// Waits until fn(arg) is truthy in the page. Returns true, or false after WAIT ms.
async function until(page, fn, arg, timeout) {
	try {
		await page.waitForFunction(fn, arg, { timeout: timeout || WAIT, polling: 30 });
		return true;
	} catch (e) {
		if (e.name !== 'TimeoutError') throw e;
		return false;
	}
}

// Runs axe-core on the page as it is; fails on any violation of impact serious or critical.
let axeRunning = false;
async function axe(page, state) {
	axeRunning = true;
	await page.evaluate(AXE); // through DevTools, so the page's CSP does not apply to it
	const res = await page.evaluate(async () => {
		const n = window.__csp.length;
		const r = await window.axe.run(document, { resultTypes: ['violations'] });
		await new Promise((ok) => setTimeout(ok, 50));
		window.__csp.length = n; // what axe itself does (its own <style>) is not the page's
		return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
	});
	axeRunning = false;
	const bad = res.filter((v) => v.impact === 'serious' || v.impact === 'critical');
	check(bad.length === 0, `axe: no serious or critical violations (${state})`, bad);
}

async function shot(page, name, loading) {
	if (!loading) await until(page, () => !document.querySelector('.atlas-loading'), undefined, 2000);
	await page.screenshot({ path: path.join(OUT_DIR, name + '.png') });
}

// Sets up the page's watch for CSP violations and console errors.
async function watch(page) {
	const errors = [];
	page.on('console', (m) => { if (m.type() === 'error' && !axeRunning) errors.push(m.text()); });
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.addInitScript(() => {
		window.__csp = [];
		document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
		window.__results = [];
		document.addEventListener('atlas:results', (e) => window.__results.push(e.detail), true);
	});
	// the index's pages link to the production site: answered here, never fetched
	await page.route(PROD + '/**', (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>landed</title><h1>landed</h1>' }));
	return errors;
}

const box = (page, sel) => page.locator((sel || '') + ' .atlas-input').first();
const statusText = (page, sel) => page.locator((sel || '') + ' .atlas-status').first().textContent();
// The state of the combobox: its active option, the focused element, the options.
const combo = (page, sel) => page.evaluate((sel) => {
	const input = document.querySelector((sel || '') + ' .atlas-input');
	const id = input.getAttribute('aria-activedescendant');
	const opts = [...document.querySelectorAll((sel || '') + ' [role=option]')];
	return {
		focusIsBox: document.activeElement === input || (document.activeElement && document.activeElement.shadowRoot === undefined && document.activeElement === input),
		active: id ? opts.findIndex((o) => o.id === id) : -1,
		activeSelected: id ? document.getElementById(id).getAttribute('aria-selected') : null,
		expanded: input.getAttribute('aria-expanded'),
		value: input.value,
		options: opts.length,
		hits: document.querySelectorAll((sel || '') + ' .atlas-hit').length,
	};
}, sel);

// Types text into the box of sel and waits for the results of exactly that text.
async function search(page, text, sel) {
	const input = box(page, sel);
	await input.fill('');
	await input.pressSequentially(text, { delay: 15 });
	const ok = await until(page, ([t, sel]) => {
		const s = document.querySelector((sel || '') + ' .atlas-status');
		const h = document.querySelector(sel || '.atlas');
		return s && !h.classList.contains('atlas-loading') && s.textContent.includes('“' + t) ;
	}, [text.trim().slice(0, 30), sel]);
	return ok;
}

// Presses ArrowDown in the box of sel (once the typeahead came) until a hit is the active option.
async function toHit(page, sel) {
	await until(page, (sel) => document.querySelector((sel || '') + ' .atlas-suggestion'), sel, 2000);
	for (let i = 0; i < 6; i++) {
		const href = await page.evaluate((sel) => (document.querySelector((sel || '') + ' [role=option].is-active') || { dataset: {} }).dataset.href, sel);
		if (href) return;
		await box(page, sel).press('ArrowDown');
	}
}

async function desktopPage(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
	const page = await ctx.newPage();
	const errors = await watch(page);
	const sent = [];
	page.on('request', (r) => sent.push(r.url()));
	const res = await page.goto(BASE + '/');
	const csp = res.headers()['content-security-policy'] || '';
	check(/script-src 'self'/.test(csp) && !/unsafe/.test(csp), 'the page ships a strict CSP', csp);
	check(await page.locator('h1').count() === 1, 'the page has one h1');
	await until(page, () => document.querySelector('.atlas-input'));
	await axe(page, 'page, empty');

	// typing: results as you type, grouped by page with their sections, highlighted
	check(await search(page, 'consistent hashing'), 'results as you type');
	const first = await page.evaluate(() => {
		const hit = document.querySelector('.atlas-hit');
		return {
			title: hit && hit.querySelector('.atlas-title').textContent,
			marks: hit ? hit.querySelectorAll('.atlas-title mark').length : 0,
			snippetMarks: hit ? hit.querySelectorAll('.atlas-snippet mark').length : 0,
			sections: hit ? hit.parentElement.querySelectorAll('.atlas-section').length : 0,
			sectionHref: (document.querySelector('.atlas-section') || { dataset: {} }).dataset.href,
			elements: [...document.querySelectorAll('.atlas-list *')].map((e) => e.tagName).filter((t) => !['DIV', 'SPAN', 'MARK'].includes(t)),
		};
	});
	check(first.title === 'Consistent Hashing', 'the first hit is Consistent Hashing', first);
	check(first.marks >= 1 && first.snippetMarks >= 1, 'titles and snippets are highlighted', first);
	check(first.sections >= 1 && /#[a-z0-9-]+$/.test(first.sectionHref || ''), 'matching sections are sub-results with their anchors', first);
	check(first.elements.length === 0, 'only <mark> comes from the server\'s HTML', first.elements);
	check(/^\d+ results for “consistent hashing”$/.test(await statusText(page)), 'the live region announces the count', await statusText(page));
	check(await page.locator('.atlas-facets').isVisible(), 'facets beside the results');
	await shot(page, 'page-desktop');
	await axe(page, 'page, results');

	// the keyboard: arrows move the active option, focus stays in the box, Enter opens
	await box(page).press('ArrowDown');
	await box(page).press('ArrowDown');
	let c = await combo(page);
	check(c.active === 1 && c.focusIsBox && c.activeSelected === 'true' && c.expanded === 'true',
		'ArrowDown moves the active option (aria-activedescendant), focus stays in the box', c);
	await box(page).press('ArrowUp');
	c = await combo(page);
	check(c.active === 0, 'ArrowUp moves it back', c);
	await shot(page, 'page-keyboard');
	await axe(page, 'page, active option');
	// read next beside the results follows the active result
	check(await until(page, () => document.querySelectorAll('.page-next .atlas-next-item').length > 0),
		'read next for the active result shows beside the results');
	// Esc clears, then closes
	await box(page).press('Escape');
	c = await combo(page);
	check(c.value === '' && c.hits === 0, 'Esc clears the box and the results', c);

	// Enter opens the active hit
	await search(page, 'raft');
	await toHit(page);
	const href = await page.evaluate(() => document.querySelector('[role=option].is-active').dataset.href);
	await Promise.all([page.waitForURL((u) => u.href === href, { timeout: WAIT }), box(page).press('Enter')]);
	check(page.url() === href && href.startsWith(PROD + '/'), 'Enter opens the active hit', href);
	await page.goBack();
	await until(page, () => document.querySelector('.atlas-input'));

	// corrections the reader controls
	check(await search(page, 'raft concensus'), 'a misspelt search shows results');
	const corr = await page.locator('.atlas-correction').textContent();
	check(/^Showing results for raft consensus\. Search instead for raft concensus$/.test(corr), 'Showing results for … Search instead for …', corr);
	const said = await statusText(page);
	check(/^\d+ results? for “raft consensus” \(corrected from “raft concensus”\)$/.test(said), 'the correction and count are announced', said);
	await shot(page, 'page-correction');
	await axe(page, 'page, correction');
	const before = sent.length;
	await page.locator('.atlas-correction button').click();
	check(await until(page, () => document.querySelector('.atlas-correction').hidden &&
		!document.querySelector('.atlas').classList.contains('atlas-loading')), 'Search instead: the correction goes');
	check(sent.slice(before).some((u) => u.includes('/api/search?') && u.includes('correct=false') && u.includes('concensus')),
		'Search instead asks the server not to correct');
	// a known but rare word: the results are its own, the correction only offered
	check(await search(page, 'awaits'), 'a rare word shows its own results');
	const offered = await page.locator('.atlas-correction').textContent();
	check(/^Did you mean waits\?$/.test(offered), 'a correction only offered says "Did you mean …?"', offered);
	check(/^\d+ results? for “awaits”\. Did you mean “waits”\?$/.test(await statusText(page)),
		'the offer is announced with the results of the words as typed', await statusText(page));
	await page.locator('.atlas-correction button').click();
	check(await until(page, () => document.querySelector('.atlas-input').value === 'waits' &&
		/for “waits”/.test(document.querySelector('.atlas-status').textContent)), 'Did you mean: its word is searched');

	// typeahead
	await box(page).fill('');
	await box(page).pressSequentially('consistent ha', { delay: 15 });
	check(await until(page, () => [...document.querySelectorAll('.atlas-suggestion')].some((o) => o.dataset.query === 'consistent hash')),
		'the box shows typeahead: the whole query completed');
	await shot(page, 'page-typeahead');
	await page.locator('.atlas-suggestion').first().click();
	check(await until(page, () => document.querySelector('.atlas-input').value.startsWith('consistent ha') &&
		/“consistent ha/.test(document.querySelector('.atlas-status').textContent)), 'a suggestion clicked is searched');

	// loading state, stale answers dropped
	await page.route('**/api/search?*', async (r) => {
		const q = new URL(r.request().url()).searchParams.get('q');
		await new Promise((ok) => setTimeout(ok, q === 'pallas' ? 900 : 300));
		try { await r.continue(); } catch (e) { /* the page aborted it */ }
	});
	await box(page).fill('pallas');
	check(await until(page, () => document.querySelector('.atlas').classList.contains('atlas-loading') &&
		document.querySelector('.atlas-list').getAttribute('aria-busy') === 'true', undefined, 800), 'a pending search shows its loading state');
	await shot(page, 'page-loading', true);
	await box(page).fill('gil');
	check(await until(page, () => /“gil”/.test(document.querySelector('.atlas-status').textContent)), 'the newer search is shown');
	await page.waitForTimeout(1000);
	check(/“gil”/.test(await statusText(page)), 'a stale answer is dropped', await statusText(page));
	await page.unroute('**/api/search?*');

	// recent searches: kept when a search is settled (Enter), shown in an empty box, one click to clear
	await box(page).fill('');
	await box(page).pressSequentially('sharding', { delay: 10 });
	await box(page).press('Enter');
	await until(page, () => /“sharding”/.test(document.querySelector('.atlas-status').textContent));
	await box(page).press('Escape');
	await box(page).click();
	check(await until(page, () => [...document.querySelectorAll('.atlas-recent-item')].some((o) => o.dataset.query === 'sharding')),
		'recent searches show in the empty box');
	const stored = await page.evaluate(() => localStorage.getItem('atlas:recent'));
	check(stored && stored.includes('sharding') && !sent.some((u) => u.includes('recent')), 'recent searches are kept in localStorage, never sent', stored);
	await shot(page, 'page-recent');
	await axe(page, 'page, recent searches');
	await page.locator('.atlas-recent-bar button').click();
	check(await page.evaluate(() => localStorage.getItem('atlas:recent') === null && !document.querySelector('.atlas-recent-item')),
		'one click clears the recent searches');

	// Back and Forward move through settled searches
	await page.goto(BASE + '/');
	await until(page, () => document.querySelector('.atlas-input'));
	await search(page, 'raft');
	await box(page).press('Enter');
	await search(page, 'gil');
	await box(page).press('Enter');
	check(await until(page, () => new URLSearchParams(location.search).get('q') === 'gil'), '?q= follows the settled search', page.url());
	await page.goBack();
	check(await until(page, () => document.querySelector('.atlas-input').value === 'raft' &&
		/“raft”/.test(document.querySelector('.atlas-status').textContent)), 'Back returns to the previous search');
	await page.goForward();
	check(await until(page, () => document.querySelector('.atlas-input').value === 'gil' &&
		/“gil”/.test(document.querySelector('.atlas-status').textContent)), 'Forward to the next one');
	await page.goBack();
	await page.goBack();
	check(await until(page, () => document.querySelector('.atlas-input').value === ''), 'Back to the empty page');

	// bad input in the URL: a message and a way back, never a dead end
	await page.goto(BASE + '/?q=cache&type=bogus');
	check(await until(page, () => /not a type of page/.test(document.querySelector('.atlas-notice').textContent) &&
		document.querySelectorAll('.atlas-hit').length > 0 && !document.querySelector('.atlas-facets').hidden),
		'?type=bogus: a message, results of all types, the facets');
	await shot(page, 'page-bad-type');
	await axe(page, 'page, bad type');
	await page.locator('.atlas-notice button').click();
	check(await until(page, () => document.querySelector('.atlas-input').value === '' && location.search === ''), 'and a way back to a new search');
	await page.goto(BASE + '/?q=cache&topic=no-such-topic');
	check(await until(page, () => /No topic “no-such-topic”/.test(document.querySelector('.atlas-notice').textContent)), '?topic=unknown: a message');
	await page.locator('.atlas-notice button').click();
	check(await until(page, () => document.querySelectorAll('.atlas-hit').length > 0), 'and a way back: all topics');
	const cjk = '分布式系统中的一致性哈希'.repeat(8).slice(0, 90);
	await page.goto(BASE + '/?q=' + encodeURIComponent(cjk));
	check(await until(page, () => /only its first \d+ characters/.test(document.querySelector('.atlas-notice').textContent) &&
		document.querySelector('.atlas-error').hidden && /results for/i.test(document.querySelector('.atlas-status').textContent)),
		'90 CJK characters: searched, cut where the server\'s limit is, said so', await statusText(page));
	await page.goto(BASE + '/?q=' + encodeURIComponent('<img src=x onerror=alert(1)>"\'\u0000%'));
	check(await until(page, () => /results for/i.test(document.querySelector('.atlas-status').textContent)) &&
		await page.locator('.atlas img').count() === 0, 'an odd query is text, never markup');
	await axe(page, 'page, odd query');

	// size
	const js = await (await fetch(BASE + '/atlas.js')).arrayBuffer();
	const css = await (await fetch(BASE + '/atlas.css')).arrayBuffer();
	const gz = zlib.gzipSync(Buffer.from(js), { level: 9 }).length + zlib.gzipSync(Buffer.from(css), { level: 9 }).length;
	check(gz <= 20 * 1024, `atlas.js + atlas.css are ${gz} bytes gzip (at most 20 KB)`);
	console.log(`BENCH widget-size gzip_bytes=${gz} js=${js.byteLength} css=${css.byteLength}`);

	const csps = await page.evaluate(() => window.__csp);
	check(csps.length === 0 && errors.filter((e) => !/favicon|ERR_ABORTED|Failed to load resource/.test(e)).length === 0,
		'no CSP violation, no script error on the page', { csps, errors });
	await ctx.close();
}

// The latency from the last keystroke to the rendered results, on the real corpus.
async function latency(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
	const page = await ctx.newPage();
	await watch(page);
	await page.goto(BASE + '/');
	await until(page, () => document.querySelector('.atlas-input'));
	const queries = ['consistent hashing', 'raft consensus', 'python gil', 'kubernetes', 'pallas kernel',
		'write back cache', 'jax sharding', 'rate limiter', 'bloom filter', 'vector database',
		'leader election', 'load balancing', 'garbage collection', 'event loop', 'transformer attention',
		'b tree index', 'consensus', 'gradient checkpointing', 'message queue', 'tokenizer'];
	const ms = [];
	const fetches = [];
	for (let round = 0; round < 2; round++) {
		for (const q of queries) {
			await box(page).fill('');
			await page.evaluate(() => { window.__results = []; });
			await box(page).pressSequentially(q, { delay: 40 });
			const ok = await until(page, (q) => window.__results.some((r) => r.query === q), q);
			if (!ok) continue;
			const r = await page.evaluate((q) => window.__results.filter((x) => x.query === q).pop(), q);
			ms.push(r.ms);
			fetches.push(r.fetchMs);
		}
	}
	ms.sort((a, b) => a - b);
	fetches.sort((a, b) => a - b);
	const pct = (p, v) => (v || ms)[Math.min((v || ms).length - 1, Math.ceil(p * (v || ms).length) - 1)];
	check(ms.length === 2 * queries.length, 'every measured search rendered', ms.length);
	console.log(`BENCH widget-latency n=${ms.length} p50_ms=${pct(0.5).toFixed(1)} p95_ms=${pct(0.95).toFixed(1)} max_ms=${ms[ms.length - 1].toFixed(1)} fetch_p50_ms=${pct(0.5, fetches).toFixed(1)} fetch_p95_ms=${pct(0.95, fetches).toFixed(1)}`);
	await ctx.close();
}

// Starts a second atlas-serve on port (0: any). Returns {proc, url}.
function startServer(port) {
	return new Promise((resolve, reject) => {
		const proc = spawn(env('ATLAS_SERVE'), ['--index', env('ATLAS_INDEX'), '--bind', '127.0.0.1',
			'--port', String(port), '--threads', '1', '--log', path.join(env('ATLAS_TMP'), 'second.log')],
		{ stdio: ['ignore', 'pipe', 'ignore'] });
		let out = '';
		proc.stdout.on('data', (d) => {
			out += d;
			const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
			if (m) resolve({ proc, url: 'http://127.0.0.1:' + m[1], port: Number(m[1]) });
		});
		proc.on('exit', (code) => reject(new Error('atlas-serve exited ' + code + ': ' + out)));
	});
}

function stopServer(s) {
	return new Promise((resolve) => {
		s.proc.removeAllListeners('exit');
		s.proc.on('exit', resolve);
		s.proc.kill('SIGTERM');
	});
}

// The error state: the server stopped under an open page; the box stays usable.
async function serverStopped(browser) {
	let srv = await startServer(0);
	const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
	const page = await ctx.newPage();
	await watch(page);
	await page.goto(srv.url + '/');
	await until(page, () => document.querySelector('.atlas-input'));
	check(await search(page, 'raft'), 'a second server answers');
	await stopServer(srv);
	await box(page).pressSequentially(' log', { delay: 20 });
	check(await until(page, () => !document.querySelector('.atlas-error').hidden &&
		document.querySelectorAll('.atlas-hit').length === 0), 'server stopped: an error state, no stale results');
	const c = await combo(page);
	check(c.focusIsBox && c.value === 'raft log', 'the box stays usable', c);
	await shot(page, 'page-error');
	await axe(page, 'page, server stopped');
	srv = await startServer(srv.port);
	await page.locator('.atlas-error button').click();
	check(await until(page, () => document.querySelector('.atlas-error').hidden && document.querySelectorAll('.atlas-hit').length > 0),
		'Try again, once the server is back: results');
	await ctx.close();
	await stopServer(srv);
}

// The fixture site (another origin): the inline box, the modal and its shortcuts, read next.
async function site(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
	const page = await ctx.newPage();
	const errors = await watch(page);
	const sent = [];
	page.on('request', (r) => sent.push(r.url()));
	await page.goto(SITE + '/');
	await until(page, () => document.querySelector('#inline .atlas-input') && document.querySelector('#modal .atlas-open'));
	await axe(page, 'site, home');
	check(await until(page, () => document.querySelectorAll('#next .atlas-next-item').length > 0) &&
		sent.some((u) => u.includes('/api/next?') && new URL(u).searchParams.get('path') === '/consistent-hashing'),
		'site: read next for data-path');
	check(/not an http\(s\) address/.test(await page.locator('#odd .atlas-notice').textContent()) &&
		await page.evaluate(() => document.querySelector('#odd').classList.contains('atlas-inline')),
		'site: wrong attributes: a message, an inline box on the default API');
	check(await search(page, 'gil', '#odd'), 'site: and the box still searches');
	check(await search(page, 'consistent hashing', '#inline'), 'site: the inline box searches through CORS');
	const href = await page.evaluate(() => document.querySelector('#inline .atlas-hit').dataset.href);
	check(href === SITE + '/consistent-hashing', 'site: hits link into the site (data-atlas-base)', href);
	check(sent.some((u) => u.startsWith(BASE + '/api/search?')), 'site: the API base is where atlas.js came from');
	await shot(page, 'site-inline');
	await axe(page, 'site, inline results');
	// the dropdown closes when focus leaves, comes back with it
	await page.locator('h1').click();
	check(await page.locator('#inline .atlas-body').isHidden(), 'site: the dropdown hides when focus leaves');
	// the modal: "/", Ctrl-K, Meta-K; Esc clears then closes
	await page.keyboard.press('/');
	check(await until(page, () => document.querySelector('#modal dialog').open &&
		document.activeElement === document.querySelector('#modal .atlas-input')), 'site: "/" opens the modal, focused');
	await axe(page, 'site, modal open');
	await search(page, 'raft', '#modal');
	await shot(page, 'site-modal');
	await page.keyboard.press('Escape');
	let c = await combo(page, '#modal');
	check(c.value === '' && await page.evaluate(() => document.querySelector('#modal dialog').open), 'site: Esc clears the modal first', c);
	await page.keyboard.press('Escape');
	check(await page.evaluate(() => !document.querySelector('#modal dialog').open), 'site: then Esc closes it');
	await page.keyboard.press('Control+k');
	check(await page.evaluate(() => document.querySelector('#modal dialog').open), 'site: Ctrl-K opens the modal');
	await page.keyboard.press('Escape');
	await page.keyboard.press('Meta+k');
	check(await page.evaluate(() => document.querySelector('#modal dialog').open), 'site: ⌘K opens the modal');
	// in the modal, arrows then Enter open a page of the site, whose read next records the view
	await search(page, 'consistent hashing', '#modal');
	await toHit(page, '#modal');
	await Promise.all([page.waitForURL(SITE + '/consistent-hashing', { timeout: WAIT }), page.keyboard.press('Enter')]);
	check(page.url() === SITE + '/consistent-hashing', 'site: Enter in the modal opens the hit');
	check(await until(page, () => document.querySelectorAll('#next .atlas-next-item').length > 0), 'site: read next for the page');
	const items = await page.evaluate(() => [...document.querySelectorAll('#next .atlas-next-item')].map((li) => ({
		href: li.querySelector('a').href, reasons: li.querySelector('.atlas-reasons').textContent })));
	check(items.every((i) => i.reasons && i.href.startsWith(SITE + '/')), 'site: suggestions with their reasons', items);
	await shot(page, 'site-next');
	await axe(page, 'site, read next');
	// what was read is kept locally and left out
	const second = new URL(items[0].href).pathname;
	await page.goto(SITE + second);
	await until(page, () => document.querySelectorAll('#next .atlas-next-item').length > 0 || !document.querySelector('#next .atlas-next-status').hidden);
	const seen = await page.evaluate(() => JSON.parse(localStorage.getItem('atlas:seen') || '[]'));
	check(seen.includes('/consistent-hashing') && seen.includes(second), 'site: page views are recorded in localStorage', seen);
	const nextReq = sent.filter((u) => u.includes('/api/next?')).pop();
	check(nextReq && new URL(nextReq).searchParams.get('seen').split(',').includes('/consistent-hashing'), 'site: read next leaves out what was read', nextReq);
	check(nextReq && new URL(nextReq).searchParams.get('seen').split(',').pop() === '/consistent-hashing', 'site: what was read is sent in reading order, the page read last last', nextReq);
	const after = await page.evaluate(() => [...document.querySelectorAll('#next a')].map((a) => new URL(a.href).pathname));
	check(!after.includes('/consistent-hashing'), 'site: a page read is not suggested again', after);
	// a guide from the URL
	await page.goto(SITE + '/consistent-hashing?guide=general-system-design');
	check(await until(page, () => /^Step \d+/.test((document.querySelector('#next .atlas-reasons') || {}).textContent || '')),
		'site: ?guide= puts the guide\'s next step first');
	const guided = await page.evaluate(() => document.querySelector('#next a').href);
	check(new URL(guided).searchParams.get('guide') === 'general-system-design', 'site: the links keep the guide', guided);
	await shot(page, 'site-next-guide');
	await page.goto(SITE + '/consistent-hashing?guide=no-such-guide');
	check(await until(page, () => /There is no guide “no-such-guide”/.test(document.querySelector('#next .atlas-next-status').textContent) &&
		document.querySelectorAll('#next .atlas-next-item').length > 0), 'site: an unknown guide: a message, suggestions for the page');
	await page.goto(SITE + '/no-such-page-here');
	check(await until(page, () => /not in the search index/.test(document.querySelector('#next .atlas-next-status').textContent)), 'site: a page the index lacks: a message');
	await axe(page, 'site, unknown page');
	const csps = await page.evaluate(() => window.__csp);
	check(csps.length === 0 && errors.filter((e) => !/favicon|ERR_ABORTED|Failed to load resource|404/.test(e)).length === 0,
		'site: the widget satisfies the site\'s strict CSP', { csps, errors });
	await ctx.close();
}

// Dark, with reduced motion: the colours pass axe, the spinner does not spin.
async function dark(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark', reducedMotion: 'reduce' });
	const page = await ctx.newPage();
	await watch(page);
	await page.goto(BASE + '/?q=' + encodeURIComponent('raft concensus'));
	check(await until(page, () => document.querySelectorAll('.atlas-hit').length > 0), 'dark: results');
	const look = await page.evaluate(() => ({
		bg: getComputedStyle(document.querySelector('.atlas')).getPropertyValue('--atlas-bg').trim(),
		spin: getComputedStyle(document.querySelector('.atlas-spinner')).animationName,
	}));
	check(look.bg === '#16181d' && look.spin === 'none', 'dark: dark colours from prefers-color-scheme; no animation with reduced motion', look);
	await shot(page, 'page-dark');
	await axe(page, 'page, dark');
	await ctx.close();
}

// The phone: touch, 390x844.
async function phone(browser) {
	const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
	const page = await ctx.newPage();
	await watch(page);
	await page.goto(BASE + '/?q=' + encodeURIComponent('consistent hashing'));
	check(await until(page, () => document.querySelectorAll('.atlas-hit').length > 0), 'phone: ?q= URLs still work');
	const geo = await page.evaluate(() => {
		const hit = document.querySelector('.atlas-hit').getBoundingClientRect();
		const facets = document.querySelector('.atlas-facets');
		return { top: hit.top, facetsShown: !facets.hidden, facetsOpen: facets.open,
			facetsBelow: facets.getBoundingClientRect().top > hit.top,
			keys: getComputedStyle(document.querySelector('.atlas-keys')).display };
	});
	check(geo.top < 844 && geo.facetsShown && geo.facetsBelow, 'phone: the first result starts within 844 px, facets below it', geo);
	check(!geo.facetsOpen, 'phone: the facets are collapsed', geo);
	check(geo.keys === 'none', 'phone: no keyboard hints on a touch screen', geo);
	await shot(page, 'phone-results');
	await axe(page, 'phone, results');
	await page.locator('.atlas-facets summary').tap();
	check(await page.evaluate(() => document.querySelector('.atlas-facets').open), 'phone: a tap opens the facets');
	await page.mouse.wheel(0, 1500);
	await page.evaluate(() => window.scrollBy(0, 1500));
	const inView = await page.evaluate(() => { const r = document.querySelector('.atlas-input').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; });
	check(inView, 'phone: the box stays in view when scrolling');
	await page.evaluate(() => window.scrollTo(0, 0));
	const href = await page.evaluate(() => document.querySelector('.atlas-hit').dataset.href);
	await Promise.all([page.waitForURL(href, { timeout: WAIT }), page.locator('.atlas-hit').first().tap()]);
	check(page.url() === href, 'phone: a tap opens a result');
	await page.goBack();
	// the modal on the site, by touch
	await page.goto(SITE + '/consistent-hashing');
	await page.locator('#modal .atlas-open').tap();
	check(await until(page, () => document.querySelector('#modal dialog').open), 'phone: a tap opens the modal');
	await search(page, 'gil', '#modal');
	await shot(page, 'phone-modal');
	await axe(page, 'phone, modal');
	await page.locator('#modal .atlas-close').tap();
	check(await page.evaluate(() => !document.querySelector('#modal dialog').open), 'phone: Close closes it');
	check(await until(page, () => document.querySelectorAll('#next .atlas-next-item').length > 0), 'phone: read next on the page');
	await page.locator('#next').scrollIntoViewIfNeeded();
	await shot(page, 'phone-next');
	await axe(page, 'phone, read next');
	await ctx.close();
}

async function main() {
	const browser = await chromium.launch({
		executablePath: env('ATLAS_CHROMIUM'),
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
	try {
		const only = (process.env.ATLAS_ONLY || '').split(',').filter(Boolean);
		for (const part of [desktopPage, site, dark, phone, serverStopped, latency]) {
			if (only.length && !only.includes(part.name)) continue;
			try {
				await part(browser);
			} catch (e) {
				check(false, part.name + ' ran to its end', String(e.stack || e));
			}
		}
	} finally {
		await browser.close();
	}
	console.log(`${passed} passed, ${failed} failed`);
	process.exit(failed ? 1 : 0);
}

main().catch((e) => {
	console.log('FAIL ' + (e.stack || e));
	process.exit(1);
});
