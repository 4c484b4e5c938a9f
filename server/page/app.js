// app.js - the search page: results as you type, facets, "did you mean", keyboard, read next.
// Only the fields the API documents as HTML (snippets and section headings, escaped by the server
// except for <mark>) are inserted with innerHTML; everything else goes through textContent.
'use strict';

(function () {
	const DEBOUNCE_MS = 120;
	const NEXT_DELAY_MS = 80;
	const PAGE_SIZE = 10;
	const OFFSET_MAX = 1000;
	const TYPE_LABELS = {
		explainer: 'Explainers',
		guide: 'Guides',
		topic: 'Topics',
		page: 'Site pages',
	};

	const $ = (id) => document.getElementById(id);
	const form = $('search-form');
	const input = $('q');
	const statusEl = $('status');
	const resultsEl = $('results');
	const moreEl = $('more');
	const dymEl = $('did-you-mean');
	const dymLink = $('did-you-mean-link');
	const facetsEl = $('facets');
	const typeList = $('facet-type');
	const topicList = $('facet-topic');
	const nextEl = $('next');
	const nextFor = $('next-for');
	const nextList = $('next-list');

	const state = { type: '', topic: '', hits: [], total: 0, focused: -1, seq: 0 };
	const nextCache = new Map();
	let typingTimer = 0;
	let nextTimer = 0;
	let inflight = null;

	// Returns an element of tag with an optional class and text content.
	function el(tag, cls, text) {
		const node = document.createElement(tag);
		if (cls) node.className = cls;
		if (text !== undefined) node.textContent = text;
		return node;
	}

	// Returns u as an absolute http(s) URL, or null for anything else (javascript:, data:...).
	function safeUrl(u) {
		try {
			const url = new URL(u, window.location.href);
			const web = url.protocol === 'http:' || url.protocol === 'https:';
			return web ? url.href : null;
		} catch (e) {
			return null;
		}
	}

	// Returns whether keys typed at target are text (so "/" must not be taken over).
	function isTyping(target) {
		return target instanceof HTMLInputElement ||
			target instanceof HTMLTextAreaElement ||
			target instanceof HTMLSelectElement ||
			Boolean(target && target.isContentEditable);
	}

	// Tells screen readers (and everyone else) what happened, through the aria-live region.
	function announce(text) {
		statusEl.textContent = text;
	}

	// Keeps the address bar in step with the search, so a search can be shared and reloaded.
	function syncUrl() {
		const p = new URLSearchParams();
		if (input.value) p.set('q', input.value);
		if (state.type) p.set('type', state.type);
		if (state.topic) p.set('topic', state.topic);
		const qs = p.toString();
		window.history.replaceState(null, '', qs ? '?' + qs : window.location.pathname);
	}

	// Empties the results, facets, "did you mean" and read next.
	function clearAll() {
		state.hits = [];
		state.total = 0;
		state.focused = -1;
		resultsEl.textContent = '';
		moreEl.hidden = true;
		dymEl.hidden = true;
		facetsEl.hidden = true;
		nextEl.hidden = true;
		announce('');
	}

	// Runs the search now; with append, fetches the next page of the same search.
	async function search(append) {
		clearTimeout(typingTimer);
		syncUrl();
		const q = input.value;
		if (!q.trim()) {
			if (inflight) inflight.abort();
			state.seq++;
			clearAll();
			return;
		}
		const offset = append ? state.hits.length : 0;
		const p = new URLSearchParams({ q: q, limit: String(PAGE_SIZE) });
		p.set('offset', String(offset));
		if (state.type) p.set('type', state.type);
		if (state.topic) p.set('topic', state.topic);
		if (inflight) inflight.abort();
		inflight = new AbortController();
		const seq = ++state.seq;
		let res;
		let body;
		try {
			res = await fetch('/api/search?' + p.toString(), {
				signal: inflight.signal,
				headers: { Accept: 'application/json' },
			});
			body = await res.json();
		} catch (e) {
			if (e.name !== 'AbortError' && seq === state.seq)
				announce('Search is not available right now.');
			return;
		}
		if (seq !== state.seq) return;
		if (!res.ok) {
			clearAll();
			announce(body && body.error ? body.error.message : 'The search failed.');
			return;
		}
		render(body, append);
	}

	// Schedules a search once typing pauses.
	function searchSoon() {
		clearTimeout(typingTimer);
		typingTimer = setTimeout(() => search(false), DEBOUNCE_MS);
	}

	// Returns the sentence that announces a result count.
	// An estimated total (total_exact false: very common words) reads "About N results".
	function countText(total, query, exact) {
		let n = (exact === false ? 'About ' : '') + total.toLocaleString('en-US') + ' results';
		if (total === 0) n = 'No results';
		else if (total === 1) n = '1 result';
		let text = n + ' for “' + query + '”';
		if (state.type) text += ' in ' + (TYPE_LABELS[state.type] || state.type);
		if (state.topic) text += ' under ' + state.topic;
		return text + '.';
	}

	// Shows a search response: results, facets, "did you mean", the count.
	function render(data, append) {
		if (!append) {
			resultsEl.textContent = '';
			state.hits = [];
			state.focused = -1;
			nextEl.hidden = true;
		}
		for (const hit of data.results) {
			resultsEl.appendChild(renderHit(hit, state.hits.length));
			state.hits.push(hit);
		}
		state.total = data.total;
		moreEl.hidden = state.hits.length >= data.total || state.hits.length > OFFSET_MAX;
		renderFacets(data.facets || { type: {}, topic: [] });
		if (data.did_you_mean) {
			dymLink.textContent = data.did_you_mean;
			dymEl.hidden = false;
		} else {
			dymEl.hidden = true;
		}
		announce(countText(data.total, data.query, data.total_exact));
	}

	// Returns the list item of one result: title (text), type, path, snippet and sections
	// (HTML, escaped by the server but for its <mark> highlights).
	function renderHit(hit, index) {
		const li = el('li', 'result');
		li.dataset.index = String(index);
		const h3 = el('h3');
		const link = el('a', 'title', hit.title);
		const href = safeUrl(hit.url);
		if (href) link.href = href;
		link.addEventListener('focus', () => setFocused(index));
		h3.appendChild(link);
		li.appendChild(h3);
		const meta = el('p', 'meta');
		meta.appendChild(el('span', 'type', hit.type));
		meta.appendChild(document.createTextNode(hit.path));
		li.appendChild(meta);
		if (hit.snippet) {
			const snippet = el('p', 'snippet');
			snippet.innerHTML = hit.snippet; // server-escaped HTML with <mark>
			li.appendChild(snippet);
		}
		if (hit.sections && hit.sections.length) {
			const list = el('ul', 'sections');
			list.setAttribute('aria-label', 'Sections');
			for (const s of hit.sections) {
				const item = el('li');
				const a = el('a');
				a.innerHTML = s.heading; // server-escaped HTML with <mark>
				const page = href ? href.split('#')[0] : null;
				if (page) a.href = page + '#' + encodeURIComponent(s.anchor);
				a.addEventListener('focus', () => setFocused(index));
				item.appendChild(a);
				// the result's own snippet is one of its sections': not shown twice
				if (s.snippet && s.snippet !== hit.snippet) {
					const span = el('span', 'section-snippet');
					// server-escaped HTML with <mark>
					span.innerHTML = s.snippet;
					item.appendChild(span);
				}
				list.appendChild(item);
			}
			li.appendChild(list);
		}
		return li;
	}

	// Returns a facet button that toggles a filter, pressed when the filter is on; key
	// ("type:guide") names it across re-renders.
	function facetButton(key, label, count, pressed, onClick) {
		const li = el('li');
		const b = el('button', '', label + ' ');
		b.type = 'button';
		b.dataset.facet = key;
		b.setAttribute('aria-pressed', pressed ? 'true' : 'false');
		if (count !== null) b.appendChild(el('span', 'count', '(' + count + ')'));
		b.addEventListener('click', onClick);
		li.appendChild(b);
		return li;
	}

	// Shows the type and topic facets as clickable filters. The buttons are made anew, so a
	// facet that had the keyboard focus (it was just pressed) gets it back on its new button.
	function renderFacets(facets) {
		const active = document.activeElement;
		const inFacets = active && facetsEl.contains(active);
		const refocus = inFacets ? active.dataset.facet || null : null;
		typeList.textContent = '';
		topicList.textContent = '';
		const types = Object.entries(facets.type || {});
		if (state.type && !types.some(([value]) => value === state.type))
			types.unshift([state.type, null]);
		for (const [value, count] of types) {
			const on = state.type === value;
			const label = TYPE_LABELS[value] || value;
			typeList.appendChild(facetButton('type:' + value, label, count, on, () => {
				state.type = on ? '' : value;
				search(false);
			}));
		}
		const topics = (facets.topic || []).slice();
		if (state.topic && !topics.some((t) => t.path === state.topic))
			topics.unshift({ path: state.topic, title: state.topic, count: null });
		for (const t of topics) {
			const on = state.topic === t.path;
			const label = t.title || t.path;
			const key = 'topic:' + t.path;
			topicList.appendChild(facetButton(key, label, t.count, on, () => {
				state.topic = on ? '' : t.path;
				search(false);
			}));
		}
		facetsEl.hidden = types.length === 0 && topics.length === 0;
		if (refocus !== null) {
			const again = Array.from(facetsEl.querySelectorAll('button'))
				.find((b) => b.dataset.facet === refocus);
			(again || input).focus();
		}
	}

	// Marks result index as the focused one and shows its read-next list.
	function setFocused(index) {
		if (state.focused === index) return;
		const old = resultsEl.querySelector('.result.focused');
		if (old) old.classList.remove('focused');
		state.focused = index;
		const li = resultsEl.children[index];
		if (!li) {
			nextEl.hidden = true;
			return;
		}
		li.classList.add('focused');
		clearTimeout(nextTimer);
		const hit = state.hits[index];
		nextTimer = setTimeout(() => showNext(hit), NEXT_DELAY_MS);
	}

	// Moves keyboard focus to result index (its title link).
	function focusResult(index) {
		const li = resultsEl.children[index];
		if (!li) return;
		const link = li.querySelector('a.title');
		if (link) link.focus();
		setFocused(index);
		li.scrollIntoView({ block: 'nearest' });
	}

	// Fetches (once per page) and shows what to read after hit.
	async function showNext(hit) {
		let data = nextCache.get(hit.path);
		if (!data) {
			try {
				const p = new URLSearchParams({ path: hit.path });
				const res = await fetch('/api/next?' + p.toString(), {
					headers: { Accept: 'application/json' },
				});
				if (!res.ok) return;
				data = await res.json();
			} catch (e) {
				return;
			}
			nextCache.set(hit.path, data);
		}
		if (state.hits[state.focused] !== hit) return;
		nextList.textContent = '';
		for (const s of data.suggestions || []) {
			const li = el('li');
			const a = el('a', '', s.title);
			const href = safeUrl(s.url);
			if (href) a.href = href;
			li.appendChild(a);
			for (const r of s.reasons || []) li.appendChild(el('span', 'reason', r));
			nextList.appendChild(li);
		}
		nextFor.textContent = 'After “' + hit.title + '”';
		nextEl.hidden = !(data.suggestions && data.suggestions.length);
	}

	form.addEventListener('submit', (e) => {
		e.preventDefault();
		search(false);
	});
	input.addEventListener('input', searchSoon);
	moreEl.addEventListener('click', () => search(true));
	dymLink.addEventListener('click', () => {
		input.value = dymLink.textContent;
		input.focus();
		search(false);
	});

	document.addEventListener('keydown', (e) => {
		if (e.altKey || e.ctrlKey || e.metaKey) return;
		if (e.key === '/' && !isTyping(e.target)) {
			e.preventDefault();
			input.focus();
			input.select();
			return;
		}
		const inResults = resultsEl.contains(e.target);
		if (e.target !== input && !inResults) return;
		if (e.key === 'ArrowDown' && state.hits.length) {
			e.preventDefault();
			const last = state.hits.length - 1;
			focusResult(e.target === input ? 0 : Math.min(state.focused + 1, last));
		} else if (e.key === 'ArrowUp' && inResults) {
			e.preventDefault();
			if (state.focused <= 0) {
				input.focus();
			} else {
				focusResult(state.focused - 1);
			}
		} else if (e.key === 'Enter' && inResults &&
			   !(e.target instanceof HTMLAnchorElement)) {
			const link = resultsEl.children[state.focused] &&
				resultsEl.children[state.focused].querySelector('a.title');
			if (link && link.href) window.location.href = link.href;
		} else if (e.key === 'Escape' && inResults) {
			input.focus();
		}
	});

	// A search in the address bar (?q=&type=&topic=) runs on load.
	const initial = new URLSearchParams(window.location.search);
	input.value = initial.get('q') || '';
	state.type = initial.get('type') || '';
	state.topic = initial.get('topic') || '';
	if (input.value) search(false);
})();
