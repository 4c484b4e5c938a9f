// lib.mjs - what the node scripts of tests/ecosystem share: the environment run.py sets, the
// ok/FAIL checks and their closing line, the reference answers of /api/search, and for the
// browser scripts a static origin for the page and Debian's headless Chromium (playwright-core).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

// Returns environment variable name; throws when run.py did not set it.
export function env(name) {
	const v = process.env[name];
	if (!v) throw new Error(name + ' is not set (run this through tests/ecosystem/run.py)');
	return v;
}

export const BASE = env('ATLAS_URL');
export const MODULES = env('ATLAS_NODE_MODULES');
// require() from the installed node_modules
export const require = createRequire(path.join(MODULES, 'noop.js'));

let passed = 0;
let failed = 0;

// Counts and prints one check ("ok" or "FAIL" with detail as JSON). Returns cond.
export function check(cond, what, detail) {
	if (cond) {
		passed++;
		console.log('ok   ' + what);
	} else {
		failed++;
		console.log('FAIL ' + what + (detail !== undefined ? ': ' + JSON.stringify(detail) : ''));
	}
	return cond;
}

// Prints "N passed, N failed" and exits, 1 on any failure.
export function finish() {
	console.log(`${passed} passed, ${failed} failed`);
	process.exit(failed ? 1 : 0);
}

// Returns the JSON of GET /api/search?query (the reference answers); throws on an HTTP error.
export async function api(query) {
	const res = await fetch(BASE + '/api/search?' + query);
	if (!res.ok) throw new Error(query + ': HTTP ' + res.status);
	return res.json();
}

// Serves files ({urlPath: [file, contentType]}) on a loopback port: the page's own origin.
// Returns {url, close}; anything else is a 404 (a 204 for the favicon).
export async function serveFiles(files) {
	const site = http.createServer((req, res) => {
		const name = new URL(req.url, 'http://x').pathname;
		const f = files[name];
		if (name === '/favicon.ico') {
			res.writeHead(204).end();
			return;
		}
		if (!f) {
			res.writeHead(404).end();
			return;
		}
		res.writeHead(200, { 'Content-Type': f[1] }).end(fs.readFileSync(f[0]));
	});
	await new Promise((ok) => site.listen(0, '127.0.0.1', ok));
	return { url: `http://127.0.0.1:${site.address().port}`, close: () => site.close() };
}

// Starts Debian's Chromium headless with a fresh profile (ATLAS_CHROMIUM, ATLAS_PROFILE).
// Returns the playwright-core persistent context (the caller closes it).
export async function launchChromium() {
	const { chromium } = require('playwright-core');
	return chromium.launchPersistentContext(env('ATLAS_PROFILE'), {
		executablePath: env('ATLAS_CHROMIUM'),
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
		viewport: { width: 1280, height: 900 },
	});
}
