// app.js - the InstantSearch page: a search box, hits with the title highlighted, refinement lists
// on type and topic, pagination, against ?host=URL&key=KEY (an atlas-serve's Meilisearch routes).
(function () {
	'use strict';
	const params = new URLSearchParams(location.search);
	const { searchClient } = window.instantMeiliSearch(params.get('host'), params.get('key') || '', {
		finitePagination: true,
	});
	const w = window.instantsearch.widgets;
	const search = window.instantsearch({ indexName: 'pages', searchClient });
	search.addWidgets([
		w.configure({ hitsPerPage: 5 }),
		w.searchBox({ container: '#searchbox', placeholder: 'Search', searchAsYouType: true }),
		w.stats({ container: '#stats' }),
		w.refinementList({ container: '#type', attribute: 'type' }),
		w.refinementList({ container: '#topic', attribute: 'topic', limit: 20 }),
		w.hits({
			container: '#hits',
			templates: {
				item: (hit, { html, components }) => html`<a class="hit" href="${hit.url}" data-path="${hit.path}"
					>${components.Highlight({ hit, attribute: 'title' })}</a>`,
			},
		}),
		w.pagination({ container: '#pagination' }),
	]);
	search.start();
	window.atlasSearch = search;
})();
