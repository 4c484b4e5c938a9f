// atlas.js - the Atlas search box and read-next list a site embeds: <div data-atlas-search>
// (inline), data-atlas-search="modal" (a button opening a dialog; also "/" and Ctrl-K/⌘K),
// data-atlas-search="page" (the standalone page: URL, history, facets) and <div data-atlas-next>.
// Every string from the server is inserted as text; of the snippets' HTML only <mark> survives.
const API_DEFAULT = new URL('./', import.meta.url).href;
const DEBOUNCE_MS = 25;
const SETTLE_MS = 700;
const Q_MAX_BYTES = 256;
const RECENT_KEY = 'atlas:recent';
const SEEN_KEY = 'atlas:seen';
const TYPES = { explainer: 'Explainers', guide: 'Guides', topic: 'Topics', page: 'Site pages' };
let uid = 0;

// Returns a new element of tag with class cls and, when given, text as its text.
function el(tag, cls, text) {
	const n = document.createElement(tag);
	if (cls) n.className = cls;
	if (text !== undefined) n.textContent = text;
	return n;
}

// Returns the text of HTML-escaped s with its entities decoded.
function unescape(s) {
	return s.replace(/&(#x?[0-9a-f]+|amp|lt|gt|quot|apos);/gi, (m, e) => {
		const named = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e.toLowerCase()];
		if (named) return named;
		const cp = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
		return cp > 0 && cp < 0x110000 ? String.fromCodePoint(cp) : m;
	});
}

// Returns a fragment of the server's HTML html: text, with <mark> as the only element kept.
function marked(html) {
	const f = document.createDocumentFragment();
	let inMark = false;
	for (const part of String(html || '').split(/(<\/?mark>)/)) {
		if (part === '<mark>') inMark = true;
		else if (part === '</mark>') inMark = false;
		else if (part) {
			const t = unescape(part.replace(/<[^>]*>/g, ''));
			f.append(inMark ? el('mark', '', t) : document.createTextNode(t));
		}
	}
	return f;
}

// Returns a fragment of plain text with the words of the set words (lowercase) in <mark>.
function highlight(text, words) {
	const f = document.createDocumentFragment();
	const re = /[\p{L}\p{N}_]+/gu;
	let at = 0;
	for (const m of text.matchAll(re)) {
		const w = m[0].toLowerCase();
		const hit = [...words].some((x) => x.length > 1 && (w === x || (w.startsWith(x) && x.length >= 3)));
		if (!hit) continue;
		f.append(text.slice(at, m.index), el('mark', '', m[0]));
		at = m.index + m[0].length;
	}
	f.append(text.slice(at));
	return f;
}

// Returns the lowercase words the server marked in a hit, and those of the query.
function markedWords(hit, q) {
	const words = new Set((q.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || []));
	const all = [hit.snippet].concat((hit.sections || []).flatMap((s) => [s.heading, s.snippet])).join(' ');
	for (const m of all.matchAll(/<mark>(.*?)<\/mark>/g)) words.add(unescape(m[1]).toLowerCase());
	return words;
}

// Returns u as an absolute http(s) URL, or null for anything else (javascript:, data:, junk).
function safeUrl(u, base) {
	try {
		const url = new URL(u, base || location.href);
		return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
	} catch (e) {
		return null;
	}
}

// Returns q cut to Q_MAX_BYTES of UTF-8 at a character boundary.
function cutQuery(q) {
	const enc = new TextEncoder();
	if (enc.encode(q).length <= Q_MAX_BYTES) return q;
	let out = '';
	let n = 0;
	for (const ch of q) {
		n += enc.encode(ch).length;
		if (n > Q_MAX_BYTES) break;
		out += ch;
	}
	return out;
}

// Returns the JSON list stored under key ([] when absent, unreadable or storage is off).
function loadList(key) {
	try {
		const v = JSON.parse(localStorage.getItem(key) || '[]');
		return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
	} catch (e) {
		return [];
	}
}

// Stores list under key; storage that is full or off is ignored.
function saveList(key, list) {
	try {
		if (list.length) localStorage.setItem(key, JSON.stringify(list));
		else localStorage.removeItem(key);
	} catch (e) { /* private mode: nothing is kept */ }
}

// Puts item first in the list under key, at most max kept.
function remember(key, item, max) {
	saveList(key, [item].concat(loadList(key).filter((x) => x !== item)).slice(0, max));
}

// Returns whether keys typed at target belong to it (so "/" is not taken over).
function isTyping(t) {
	return t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement ||
		t instanceof HTMLSelectElement || Boolean(t && t.isContentEditable);
}

// Returns the API base of element host: data-atlas-api, else the script's own directory.
function apiBase(host) {
	const v = host.getAttribute('data-atlas-api');
	if (v === null || v === '') return { base: API_DEFAULT };
	const u = safeUrl(v.endsWith('/') ? v : v + '/');
	return u ? { base: u } : { base: API_DEFAULT, problem: `data-atlas-api="${v}" is not an http(s) address; using ${API_DEFAULT}` };
}

// Returns the absolute base that hits link to (data-atlas-base, relative to the page), or ''.
function linkBase(host) {
	const v = host.getAttribute('data-atlas-base');
	return v ? safeUrl(v) || '' : '';
}

// Marks option o with what a click on it reports: the answer's query id and the hit's rank.
function clickData(o, hit) {
	if (typeof hit.queryId !== 'string') return;
	o.dataset.queryId = hit.queryId;
	o.dataset.rank = String(hit.rank);
}

// Tells the server (POST /api/click, with sendBeacon so that leaving the page does not cancel
// it) which result of which search was chosen; nothing when the server records no analytics.
function reportClick(base, o) {
	if (!o.dataset.queryId || !navigator.sendBeacon) return;
	const body = JSON.stringify({ query_id: o.dataset.queryId, path: o.dataset.path, rank: Number(o.dataset.rank) });
	try {
		navigator.sendBeacon(new URL('api/click', base), body);
	} catch (e) { /* a refused beacon only loses the click */ }
}

// Fetches the JSON of path (with params) from base. Returns {status, body}; throws when the
// server cannot be reached or the request was aborted.
async function getJson(base, path, params, signal) {
	const res = await fetch(new URL(path + '?' + new URLSearchParams(params), base), {
		signal, headers: { Accept: 'application/json' }, credentials: 'omit',
	});
	let body = null;
	try {
		body = await res.json();
	} catch (e) { body = null; }
	return { status: res.status, body };
}

// The search box: a combobox whose listbox holds suggestions, recent searches and results.
class SearchBox {
	constructor(host, mode) {
		this.host = host;
		this.mode = mode;
		const api = apiBase(host);
		this.base = api.base;
		this.linkBase = linkBase(host);
		this.filters = { type: '', topic: '' };
		this.seq = 0;
		this.active = -1;
		this.options = [];
		this.hits = [];
		this.total = 0;
		this.query = '';
		this.timer = 0;
		this.settleTimer = 0;
		this.pushed = null;
		this.build();
		if (api.problem) this.notice(api.problem);
	}

	// Creates the box's elements inside the host.
	build() {
		const id = 'atlas-' + ++uid;
		const h = this.host;
		h.classList.add('atlas', 'atlas-' + this.mode);
		const form = el('form', 'atlas-form');
		form.setAttribute('role', 'search');
		form.addEventListener('submit', (e) => { e.preventDefault(); this.enter(); });
		const label = el('label', 'atlas-label', h.getAttribute('data-atlas-label') || 'Search');
		label.htmlFor = id + '-q';
		const row = el('div', 'atlas-row');
		const input = el('input', 'atlas-input');
		Object.assign(input, { id: id + '-q', type: 'search', autocomplete: 'off', spellcheck: false,
			maxLength: Q_MAX_BYTES, enterKeyHint: 'search' });
		input.setAttribute('autocapitalize', 'off');
		input.placeholder = h.getAttribute('data-atlas-placeholder') || 'Search the site…';
		input.setAttribute('role', 'combobox');
		input.setAttribute('aria-autocomplete', 'list');
		input.setAttribute('aria-expanded', 'false');
		input.setAttribute('aria-controls', id + '-list');
		input.setAttribute('aria-describedby', id + '-status');
		const spin = el('span', 'atlas-spinner');
		spin.setAttribute('aria-hidden', 'true');
		const clear = el('button', 'atlas-clear', '×');
		clear.type = 'button';
		clear.setAttribute('aria-label', 'Clear the search');
		clear.hidden = true;
		clear.addEventListener('click', () => { this.clear(); input.focus(); });
		row.append(input, spin, clear);
		const keys = el('p', 'atlas-keys');
		keys.append(el('kbd', '', '↑'), ' ', el('kbd', '', '↓'), ' move · ', el('kbd', '', 'Enter'),
			' open · ', el('kbd', '', 'Esc'), ' clear');
		form.append(label, row, keys);
		this.statusEl = el('p', 'atlas-status');
		this.statusEl.id = id + '-status';
		this.statusEl.setAttribute('role', 'status');
		this.statusEl.setAttribute('aria-live', 'polite');
		this.statusEl.setAttribute('aria-atomic', 'true');
		this.noticeEl = el('div', 'atlas-notice');
		this.noticeEl.hidden = true;
		this.correctionEl = el('p', 'atlas-correction');
		this.correctionEl.hidden = true;
		this.errorEl = el('div', 'atlas-error');
		this.errorEl.hidden = true;
		this.recentBar = el('div', 'atlas-recent-bar');
		this.recentBar.hidden = true;
		const recentClear = el('button', 'atlas-link', 'Clear recent searches');
		recentClear.type = 'button';
		recentClear.addEventListener('click', () => { saveList(RECENT_KEY, []); this.showRecent(); this.input.focus(); });
		this.recentBar.append(el('span', '', 'Recent searches (kept in this browser only)'), recentClear);
		this.list = el('div', 'atlas-list');
		this.list.id = id + '-list';
		this.list.setAttribute('role', 'listbox');
		this.list.setAttribute('aria-label', 'Search results');
		this.list.hidden = true;
		this.list.addEventListener('mousedown', (e) => e.preventDefault()); // keep focus in the box
		this.list.addEventListener('click', (e) => {
			const o = e.target.closest('[role=option]');
			if (o) this.choose(this.options.indexOf(o), e);
		});
		this.list.addEventListener('mousemove', (e) => {
			const o = e.target.closest('[role=option]');
			const i = o ? this.options.indexOf(o) : -1;
			if (i >= 0 && i !== this.active) this.activate(i, false);
		});
		this.more = el('button', 'atlas-more', 'More results');
		this.more.type = 'button';
		this.more.hidden = true;
		this.more.addEventListener('click', () => this.search(true));
		const results = el('div', 'atlas-results');
		results.append(this.statusEl, this.noticeEl, this.correctionEl, this.errorEl, this.recentBar, this.list, this.more);
		this.facets = el('details', 'atlas-facets');
		this.facets.hidden = true;
		this.facets.open = !matchMedia('(max-width: 40rem)').matches;
		this.facets.append(el('summary', '', 'Filters'));
		this.facetBody = el('div', 'atlas-facet-body');
		this.facets.append(this.facetBody);
		this.body = el('div', 'atlas-body');
		if (this.mode === 'inline') {
			// the dropdown scrolls: reachable by keyboard as a region of its own
			this.body.tabIndex = 0;
			this.body.setAttribute('role', 'region');
			this.body.setAttribute('aria-label', 'Search results');
		}
		this.body.append(results);
		if (this.mode === 'page') this.body.append(this.facets);
		if (this.mode === 'inline') {
			// a dropdown: shown while the box has focus
			h.addEventListener('focusout', (e) => {
				if (!h.contains(e.relatedTarget)) this.expand(false);
			});
			h.addEventListener('focusin', () => this.expand(true));
		}
		this.input = input;
		this.clearBtn = clear;
		input.addEventListener('input', () => this.typed());
		input.addEventListener('keydown', (e) => this.key(e));
		input.addEventListener('focus', () => { if (!input.value) this.showRecent(); });
		if (this.mode === 'modal') {
			const open = el('button', 'atlas-open');
			open.type = 'button';
			open.append(el('span', 'atlas-open-label', h.getAttribute('data-atlas-label') || 'Search'),
				el('kbd', 'atlas-keys-hint', '/'));
			open.setAttribute('aria-haspopup', 'dialog');
			open.addEventListener('click', () => this.open());
			const dlg = el('dialog', 'atlas-dialog');
			dlg.setAttribute('aria-label', h.getAttribute('data-atlas-label') || 'Search');
			const close = el('button', 'atlas-close', 'Close');
			close.type = 'button';
			close.addEventListener('click', () => dlg.close());
			dlg.append(form, close, this.body);
			dlg.addEventListener('cancel', (e) => {
				if (this.input.value) { e.preventDefault(); this.clear(); }
			});
			dlg.addEventListener('click', (e) => { if (e.target === dlg) dlg.close(); });
			this.dialog = dlg;
			h.append(open, dlg);
		} else {
			h.append(form, this.body);
		}
	}

	// Shows or hides an inline box's dropdown (its options are kept).
	expand(on) {
		this.host.classList.toggle('atlas-expanded', on);
		this.input.setAttribute('aria-expanded', String(on && this.options.length > 0));
	}

	// Opens the modal's dialog with the box focused.
	open() {
		if (!this.dialog) { this.input.focus(); return; }
		if (!this.dialog.open) this.dialog.showModal();
		this.input.focus();
		this.input.select();
		if (!this.input.value) this.showRecent();
	}

	// Shows (or with text '' hides) a message above the results; action {label, run} adds a button.
	notice(text, action) {
		this.noticeEl.textContent = '';
		this.noticeEl.hidden = !text;
		if (!text) return;
		this.noticeEl.append(el('span', '', text));
		if (action) {
			const b = el('button', 'atlas-link', action.label);
			b.type = 'button';
			b.addEventListener('click', action.run);
			this.noticeEl.append(' ', b);
		}
	}

	// Sets the listbox's options (array of elements) and shows it when there are any.
	setOptions(groups) {
		this.list.textContent = '';
		this.options = [];
		for (const g of groups) {
			if (!g.items.length) continue;
			const grp = el('div', 'atlas-group ' + (g.cls || ''));
			grp.setAttribute('role', 'group');
			const gid = 'atlas-' + ++uid;
			if (g.label) {
				const lab = el('div', 'atlas-group-label', g.label);
				lab.id = gid;
				lab.setAttribute('role', 'presentation');
				grp.setAttribute('aria-labelledby', gid);
				grp.append(lab);
			}
			for (const o of g.items) {
				o.id = 'atlas-' + ++uid;
				o.setAttribute('role', 'option');
				o.setAttribute('aria-selected', 'false');
				grp.append(o);
				this.options.push(o);
			}
			this.list.append(grp);
		}
		this.active = -1;
		this.input.removeAttribute('aria-activedescendant');
		const shown = this.options.length > 0;
		this.list.hidden = !shown;
		const open = this.mode !== 'inline' || this.host.classList.contains('atlas-expanded');
		this.input.setAttribute('aria-expanded', String(shown && open));
	}

	// Makes option i the active one (aria-activedescendant); focus stays in the box.
	activate(i, scroll) {
		if (this.active >= 0 && this.options[this.active]) {
			this.options[this.active].classList.remove('is-active');
			this.options[this.active].setAttribute('aria-selected', 'false');
		}
		this.active = i;
		const o = this.options[i];
		if (!o) {
			this.input.removeAttribute('aria-activedescendant');
			return;
		}
		o.classList.add('is-active');
		o.setAttribute('aria-selected', 'true');
		this.input.setAttribute('aria-activedescendant', o.id);
		if (scroll) o.scrollIntoView({ block: 'nearest' });
		this.host.dispatchEvent(new CustomEvent('atlas:active', { detail: { path: o.dataset.path || '' } }));
	}

	// Carries out option i: opens a hit, or searches for a suggestion or a recent search.
	choose(i, ev) {
		const o = this.options[i];
		if (!o) return;
		if (o.dataset.query !== undefined) {
			this.input.value = o.dataset.query;
			this.typed(true);
			return;
		}
		if (o.dataset.href) {
			if (this.query) remember(RECENT_KEY, this.query, 8);
			reportClick(this.base, o);
			if (ev && (ev.ctrlKey || ev.metaKey)) window.open(o.dataset.href, '_blank', 'noopener');
			else location.assign(o.dataset.href);
		}
	}

	// Handles the keys of the combobox.
	key(e) {
		const n = this.options.length;
		if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
			if (!n) return;
			e.preventDefault();
			const d = e.key === 'ArrowDown' ? 1 : -1;
			this.activate(this.active < 0 ? (d > 0 ? 0 : n - 1) : (this.active + d + n) % n, true);
		} else if (e.key === 'Home' && e.ctrlKey && n) {
			e.preventDefault();
			this.activate(0, true);
		} else if (e.key === 'End' && e.ctrlKey && n) {
			e.preventDefault();
			this.activate(n - 1, true);
		} else if (e.key === 'Enter') {
			e.preventDefault();
			this.enter(e);
		} else if (e.key === 'Escape') {
			e.preventDefault();
			if (this.input.value) this.clear();
			else if (this.dialog && this.dialog.open) this.dialog.close();
			else { this.setOptions([]); this.recentBar.hidden = true; }
		}
	}

	// Enter: opens the active option, else searches now and settles the query.
	enter(e) {
		if (this.active >= 0) { this.choose(this.active, e); return; }
		this.search(false, true);
	}

	// Empties the box and everything shown under it.
	clear() {
		this.input.value = '';
		this.typed();
	}

	// Reacts to what was typed: a search soon, stale results marked as such meanwhile.
	typed(now) {
		clearTimeout(this.timer);
		clearTimeout(this.settleTimer);
		this.clearBtn.hidden = !this.input.value;
		this.t0 = performance.now();
		if (!this.input.value.trim()) {
			this.seq++;
			if (this.ctrl) this.ctrl.abort();
			this.query = '';
			this.reset();
			if (this.mode === 'page') this.settleTimer = setTimeout(() => this.pushUrl(), SETTLE_MS);
			if (document.activeElement === this.input) this.showRecent();
			return;
		}
		this.host.classList.add('atlas-loading');
		this.list.setAttribute('aria-busy', 'true');
		// the first key after a pause is searched at once, the ones typed quickly after it debounced
		const idle = !this.inflight && performance.now() - (this.fired || 0) > DEBOUNCE_MS;
		if (now === true || idle) this.search(false, now === true);
		else this.timer = setTimeout(() => this.search(false), DEBOUNCE_MS);
	}

	// Hides results, messages and facets.
	reset() {
		this.host.classList.remove('atlas-loading');
		this.list.removeAttribute('aria-busy');
		this.hits = [];
		this.suggestions = [];
		this.setOptions([]);
		this.more.hidden = true;
		this.correctionEl.hidden = true;
		this.errorEl.hidden = true;
		this.recentBar.hidden = true;
		this.facets.hidden = true;
		this.statusEl.textContent = '';
		this.notice('');
	}

	// Shows the recent searches (the box is empty and focused).
	showRecent() {
		if (this.input.value) return;
		const recent = loadList(RECENT_KEY);
		this.recentBar.hidden = !recent.length;
		this.setOptions([{ label: '', cls: 'atlas-recent', items: recent.map((q) => {
			const o = el('div', 'atlas-option atlas-recent-item', q);
			o.dataset.query = q;
			return o;
		}) }]);
	}

	// Runs the search for the box's text; append fetches the next page; settle pushes history.
	async search(append, settle, fromHistory) {
		clearTimeout(this.timer);
		let q = this.input.value;
		if (!q.trim()) return;
		const cut = cutQuery(q);
		const seq = ++this.seq;
		if (this.ctrl) this.ctrl.abort();
		const ctrl = this.ctrl = new AbortController();
		const params = { q: cut, limit: '10', offset: String(append ? this.hits.length : 0) };
		if (this.filters.type) params.type = this.filters.type;
		if (this.filters.topic) params.topic = this.filters.topic;
		if (this.noCorrect === q) params.correct = 'false';
		this.fired = performance.now();
		this.inflight = true;
		if (settle && this.mode === 'page' && !fromHistory && !append) this.pushUrl();
		this.host.classList.add('atlas-loading');
		this.list.setAttribute('aria-busy', 'true');
		if (!append) this.statusEl.textContent = 'Searching…';
		let r;
		const tf = performance.now();
		try {
			r = await getJson(this.base, 'api/search', params, ctrl.signal);
			this.fetchMs = performance.now() - tf;
		} catch (e) {
			if (seq !== this.seq) return; // aborted for a newer search
			this.inflight = false;
			this.failed('Search is not available right now (the server did not answer).');
			return;
		}
		if (seq !== this.seq) return; // a newer search was started: this answer is stale
		this.inflight = false;
		this.host.classList.remove('atlas-loading');
		this.list.removeAttribute('aria-busy');
		this.errorEl.hidden = true;
		if (r.status !== 200 || !r.body || !Array.isArray(r.body.results)) {
			const msg = r.body && r.body.error ? r.body.error.message : 'unexpected answer ' + r.status;
			this.failed('The search could not be run: ' + msg + '.');
			return;
		}
		this.query = q;
		if (!append) this.suggestions = (this.suggestions || []).filter((x) => x.text.startsWith(q));
		this.render(r.body, append, q !== cut ? cut : '');
		// the typeahead after the results, so that it never delays them
		if (!append) this.suggest(cut, seq, ctrl.signal);
		if (this.mode === 'page' && !fromHistory && !settle && !append)
			this.settleTimer = setTimeout(() => this.pushUrl(), SETTLE_MS);
		if (settle) remember(RECENT_KEY, q, 8);
	}

	// Fetches the typeahead for q and shows it above the results.
	async suggest(q, seq, signal) {
		let r;
		try {
			r = await getJson(this.base, 'api/suggest', { q, limit: '4' }, signal);
		} catch (e) { return; }
		if (seq !== this.seq || r.status !== 200 || !r.body) return;
		this.suggestions = (r.body.suggestions || []).filter((s) => s.kind === 'query' &&
			s.text.toLowerCase() !== q.trim().toLowerCase()).slice(0, 3);
		if (this.lastBody) this.draw();
	}

	// Shows the error state: the message and a retry, the box still usable.
	failed(msg) {
		this.host.classList.remove('atlas-loading');
		this.list.removeAttribute('aria-busy');
		this.hits = [];
		this.lastBody = null;
		this.setOptions([]);
		this.more.hidden = true;
		this.correctionEl.hidden = true;
		this.facets.hidden = true;
		this.errorEl.textContent = '';
		const retry = el('button', 'atlas-link', 'Try again');
		retry.type = 'button';
		retry.addEventListener('click', () => { this.search(false); this.input.focus(); });
		this.errorEl.append(el('span', '', msg + ' '), retry);
		this.errorEl.hidden = false;
		this.statusEl.textContent = msg;
		this.host.dispatchEvent(new CustomEvent('atlas:error'));
	}

	// Renders a search answer (appended to the hits shown when append); cut is the text searched
	// when the query was cut to the byte limit.
	render(body, append, cut) {
		const first = append ? this.hits.length : 0;
		body.results.forEach((hit, i) => { hit.queryId = body.query_id; hit.rank = first + i + 1; });
		this.hits = append ? this.hits.concat(body.results) : body.results;
		this.total = body.total;
		this.lastBody = body;
		const q = this.query;
		if (!append) {
			this.notice(cut ? `Your search is long: only its first ${[...cut].length} characters were searched.` : '');
			this.checkFilters(body);
		}
		const total = body.total_exact ? String(body.total) : 'about ' + body.total;
		const noun = body.total === 1 ? 'result' : 'results';
		let say = body.total ? `${total} ${noun} for “${q}”` : `No results for “${q}”`;
		this.correctionEl.textContent = '';
		this.correctionEl.hidden = !body.did_you_mean;
		if (body.did_you_mean && body.corrected !== false) {
			// the results are those of the corrected words: the words as typed one click away
			this.correctionEl.append('Showing results for ', el('strong', '', body.did_you_mean), '. Search instead for ');
			const b = el('button', 'atlas-link', q);
			b.type = 'button';
			b.addEventListener('click', () => { this.noCorrect = q; this.search(false, true); this.input.focus(); });
			this.correctionEl.append(b);
			say = `${total} ${noun} for “${body.did_you_mean}” (corrected from “${q}”)`;
		} else if (body.did_you_mean) {
			// the results are those of the words as typed; the correction is only offered
			const fix = body.did_you_mean;
			this.correctionEl.append('Did you mean ');
			const b = el('button', 'atlas-link', fix);
			b.type = 'button';
			b.addEventListener('click', () => { this.input.value = fix; this.search(false, true); this.input.focus(); });
			this.correctionEl.append(b, '?');
			say += `. Did you mean “${fix}”?`;
		}
		this.statusEl.textContent = say;
		this.draw();
		this.more.hidden = this.mode !== 'page' || this.hits.length >= body.total || this.hits.length >= 1000;
		this.drawFacets(body.facets);
		this.host.dispatchEvent(new CustomEvent('atlas:results', {
			detail: { query: q, total: body.total, ms: performance.now() - (this.t0 || 0), fetchMs: this.fetchMs },
		}));
	}

	// Draws the listbox: suggestions, then the hits grouped by page with their sections.
	draw() {
		const q = this.query;
		const dym = this.lastBody && this.lastBody.did_you_mean;
		const sugg = (this.suggestions || []).filter((s) => s.text !== dym).map((s) => {
			const o = el('div', 'atlas-option atlas-suggestion');
			o.append(el('span', 'atlas-icon', '⌕'), highlight(s.text, new Set()));
			o.dataset.query = s.text;
			o.setAttribute('aria-label', 'Search for ' + s.text);
			return o;
		});
		const groups = [{ label: sugg.length ? 'Suggestions' : '', cls: 'atlas-suggestions', items: sugg }];
		for (const hit of this.hits) {
			const href = this.href(hit.url, hit.path);
			const words = markedWords(hit, q);
			const o = el('div', 'atlas-option atlas-hit');
			o.dataset.href = href || '';
			o.dataset.path = hit.path || '';
			clickData(o, hit);
			const t = el('span', 'atlas-title');
			t.append(highlight(String(hit.title || hit.path || ''), words));
			const meta = el('span', 'atlas-type', TYPES[hit.type] ? TYPES[hit.type].replace(/s$/, '') : String(hit.type || ''));
			const snip = el('span', 'atlas-snippet');
			snip.append(marked(hit.snippet));
			o.append(t, meta, snip);
			const items = [o];
			for (const s of hit.sections || []) {
				const so = el('div', 'atlas-option atlas-section');
				so.dataset.href = this.href(hit.url + '#' + encodeURIComponent(s.anchor || ''), hit.path + '#' + encodeURIComponent(s.anchor || '')) || '';
				so.dataset.path = hit.path || '';
				clickData(so, hit);
				const sh = el('span', 'atlas-section-title');
				sh.append(marked(s.heading));
				const ss = el('span', 'atlas-snippet');
				ss.append(marked(s.snippet));
				so.append(sh, ss);
				items.push(so);
			}
			groups.push({ label: '', cls: 'atlas-page', items, title: hit.title });
		}
		const active = this.options[this.active] ? this.options[this.active].dataset.href : null;
		this.setOptions(groups);
		this.list.querySelectorAll('.atlas-page').forEach((g, i) => g.setAttribute('aria-label', String(this.hits[i].title || '')));
		if (active) {
			const i = this.options.findIndex((o) => o.dataset.href === active);
			if (i >= 0) this.activate(i, false);
		}
		this.recentBar.hidden = true;
	}

	// Returns where a hit links: data-atlas-base + path when the site set one, else the page's URL.
	href(url, path) {
		return this.linkBase ? safeUrl(path, this.linkBase) : safeUrl(url);
	}

	// Draws the type and topic filters of the answer (inline and page boxes).
	drawFacets(f) {
		if (this.mode !== 'page' || !f) return;
		this.facetBody.textContent = '';
		const group = (name, label, entries, current) => {
			const box = el('div', 'atlas-facet');
			const hid = 'atlas-' + ++uid;
			const h = el('h2', 'atlas-facet-title', label);
			h.id = hid;
			const ul = el('ul');
			ul.setAttribute('aria-labelledby', hid);
			const add = (value, text, count) => {
				const li = el('li');
				const b = el('button', 'atlas-facet-button');
				b.type = 'button';
				b.setAttribute('aria-pressed', String(current === value));
				b.append(el('span', '', text), el('span', 'atlas-count', count === null ? '' : String(count)));
				b.addEventListener('click', () => {
					this.filters[name] = current === value ? '' : value;
					this.search(false, true);
				});
				li.append(b);
				ul.append(li);
			};
			for (const [v, t, c] of entries) add(v, t, c);
			if (current && !entries.some((e) => e[0] === current)) add(current, current, 0);
			box.append(h, ul);
			return box;
		};
		const types = Object.keys(TYPES).filter((t) => f.type && f.type[t]).map((t) => [t, TYPES[t], f.type[t]]);
		const topics = (f.topic || []).map((t) => [String(t.path), String(t.title), t.count]);
		this.facetBody.append(group('type', 'Type', types, this.filters.type),
			group('topic', 'Topic', topics, this.filters.topic));
		this.facets.hidden = !types.length && !topics.length && !this.filters.type && !this.filters.topic;
	}

	// Says so when the topic filter (from the URL or a click) names no topic of the answer.
	checkFilters(body) {
		const t = this.filters.topic;
		if (!t || body.total) return;
		const top = t.split('/')[0];
		const known = (body.facets && body.facets.topic || []).some((x) => x.path === top);
		if (!known) {
			this.notice(`No topic “${t}” holds results for this search.`, { label: 'Search all topics', run: () => {
				this.filters.topic = '';
				this.search(false, true);
			} });
		}
	}

	// Records the search in the address bar and the history (pushState: Back returns to it).
	pushUrl() {
		clearTimeout(this.settleTimer);
		const p = new URLSearchParams();
		if (this.input.value) p.set('q', this.input.value);
		if (this.filters.type) p.set('type', this.filters.type);
		if (this.filters.topic) p.set('topic', this.filters.topic);
		const url = (p.toString() ? '?' + p : location.pathname);
		const key = p.toString();
		if (this.pushed === key) return;
		const state = { atlas: key };
		if (this.pushed === null) history.replaceState(state, '', url);
		else history.pushState(state, '', url);
		this.pushed = key;
	}

	// Reads q, type and topic from the address bar (the page's first load, Back and Forward).
	fromUrl(fromHistory) {
		const p = new URLSearchParams(location.search);
		const type = p.get('type') || '';
		const topic = p.get('topic') || '';
		let q = p.get('q') || '';
		this.filters.type = Object.prototype.hasOwnProperty.call(TYPES, type) ? type : '';
		this.filters.topic = topic.length <= 200 && /^[\p{L}\p{N}_./-]*$/u.test(topic) ? topic : '';
		this.input.value = q;
		this.clearBtn.hidden = !q;
		this.pushed = p.toString();
		const problems = [];
		if (type && !this.filters.type) problems.push(`“${type.slice(0, 40)}” is not a type of page (types: ${Object.keys(TYPES).join(', ')})`);
		if (topic && !this.filters.topic) problems.push(`“${topic.slice(0, 40)}” is not a topic`);
		if (q.trim()) this.search(false, false, true).then(() => {
			if (problems.length) this.badUrl(problems);
		});
		else {
			this.reset();
			if (problems.length) this.badUrl(problems);
		}
	}

	// Explains what in the address was not understood, with a way back to a plain search.
	badUrl(problems) {
		this.notice(problems.join('; ') + ': showing everything instead.', { label: 'Start a new search', run: () => {
			this.filters = { type: '', topic: '' };
			this.clear();
			this.pushUrl();
			this.input.focus();
		} });
	}
}

// The read-next list of a page: suggestions with their reasons, for the page being read.
class NextList {
	constructor(host) {
		this.host = host;
		this.base = apiBase(host).base;
		this.linkBase = linkBase(host);
		host.classList.add('atlas', 'atlas-next');
		const hid = 'atlas-' + ++uid;
		this.heading = el('h2', 'atlas-next-title', host.getAttribute('data-atlas-label') || 'Read next');
		this.heading.id = hid;
		this.nav = el('nav');
		this.nav.setAttribute('aria-labelledby', hid);
		this.status = el('p', 'atlas-next-status');
		this.listEl = el('ol', 'atlas-next-list');
		this.nav.append(this.heading, this.status, this.listEl);
		host.append(this.nav);
		const own = host.hasAttribute('data-path') ? host.getAttribute('data-path') : location.pathname;
		if (host.getAttribute('data-atlas-next') !== 'manual') this.load(own);
		else this.say('Move to a result to see what to read after it.');
	}

	// Loads and shows what to read after the page at path.
	async load(path) {
		const seq = this.seq = (this.seq || 0) + 1;
		const guide = new URLSearchParams(location.search).get('guide') || this.host.getAttribute('data-guide') || '';
		if (!path || path.length > 1024 || guide.length > 1024) {
			this.say('This page has no read-next list: its path is not one the index knows.');
			return;
		}
		// kept newest first; the API takes the last listed as the page read last
		const seen = loadList(SEEN_KEY).filter((p) => p !== path).slice(0, 64).reverse();
		const params = { path, limit: this.host.getAttribute('data-limit') || '5' };
		if (!/^[0-9]{1,2}$/.test(params.limit)) params.limit = '5';
		if (guide) params.guide = guide;
		if (seen.length) params.seen = seen.join(',');
		this.host.setAttribute('aria-busy', 'true');
		let r;
		try {
			r = await getJson(this.base, 'api/next', params);
		} catch (e) {
			if (seq === this.seq) this.say('Suggestions are not available right now.');
			return;
		}
		if (seq !== this.seq) return;
		this.host.removeAttribute('aria-busy');
		if (r.status === 404 && guide) {
			this.say(`There is no guide “${guide.slice(0, 60)}”; suggestions for this page instead.`);
			this.host.setAttribute('data-guide', '');
			const u = new URL(location.href);
			u.searchParams.delete('guide');
			history.replaceState(history.state, '', u);
			return this.load(path).then(() => this.say(`There is no guide “${guide.slice(0, 60)}”; these are suggestions for this page.`));
		}
		if (r.status !== 200 || !r.body) {
			this.say(r.status === 404 ? 'No suggestions: this page is not in the search index.' : 'Suggestions are not available right now.');
			return;
		}
		this.say('');
		this.listEl.textContent = '';
		for (const s of r.body.suggestions || []) {
			const href = this.linkBase ? safeUrl(s.path, this.linkBase) : safeUrl(s.url);
			if (!href) continue;
			const u = new URL(href);
			if (guide) u.searchParams.set('guide', guide);
			const li = el('li', 'atlas-next-item');
			const a = el('a', 'atlas-next-link', String(s.title || s.path));
			a.href = u.href;
			const why = el('span', 'atlas-reasons', (s.reasons || []).map(String).join(' · '));
			li.append(a, why);
			this.listEl.append(li);
		}
		if (!this.listEl.children.length) this.say('Nothing more to suggest: you have read the pages near this one.');
		this.host.dispatchEvent(new CustomEvent('atlas:next', { detail: { path, count: this.listEl.children.length } }));
	}

	// Shows text in place of (or above) the list.
	say(text) {
		this.host.removeAttribute('aria-busy');
		this.status.textContent = text;
		this.status.hidden = !text;
	}
}

// Sets up every component of the page, the shortcuts, and records this page as read.
function init() {
	const boxes = [];
	for (const host of document.querySelectorAll('[data-atlas-search]')) {
		if (host.atlas) continue;
		let mode = host.getAttribute('data-atlas-search') || 'inline';
		if (!['inline', 'modal', 'page'].includes(mode)) {
			console.warn(`atlas: data-atlas-search="${mode}" is not inline, modal or page; shown inline`);
			mode = 'inline';
		}
		host.atlas = new SearchBox(host, mode);
		boxes.push(host.atlas);
	}
	for (const host of document.querySelectorAll('[data-atlas-next]')) {
		if (!host.atlas) host.atlas = new NextList(host);
	}
	const page = boxes.find((b) => b.mode === 'page');
	if (page) {
		page.fromUrl(false);
		addEventListener('popstate', () => page.fromUrl(true));
		const side = document.querySelector('[data-atlas-next="manual"]');
		if (side && side.atlas) {
			let t = 0;
			page.host.addEventListener('atlas:active', (e) => {
				clearTimeout(t);
				if (e.detail.path) t = setTimeout(() => side.atlas.load(e.detail.path), 120);
			});
		}
	}
	const target = boxes.find((b) => b.mode === 'modal') || page || boxes[0];
	if (target) {
		addEventListener('keydown', (e) => {
			const k = (e.key === 'k' || e.key === 'K') && (e.ctrlKey || e.metaKey) && !e.altKey;
			if (k || (e.key === '/' && !isTyping(e.target) && !e.ctrlKey && !e.metaKey && !e.altKey)) {
				e.preventDefault();
				target.open();
			}
		});
	}
	if (!page && !document.querySelector('[data-atlas-nolog]')) remember(SEEN_KEY, location.pathname, 64);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();

export { init };
