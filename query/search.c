/* search.c - one search, step by step: its checks, its plan (plan.c), its candidates
 * (retrieve.c) scored (score.c), the facets and totals, the page asked for and its snippets
 * (snippet.c); the work budget; the results freed. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rank.h"
#include "search_internal.h"
#include "topk.h"

/* Bytes of a block of the results' text: a page of ten hits mostly fits in one */
#define RESULTS_TEXT_BLOCK (16 * 1024)
#define PREFETCH_AHEAD 8 /* candidates ahead whose page and match data are fetched */

/* qsort order of ints, ascending. */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/**************************************************************************************************
** Search.
*/

/* Sets res->did_you_mean (malloc'd, freed with the results; NULL when out of memory) to the query
 * with each corrected word replaced by its correction. */
static void did_you_mean(atlas_results *res, const plan *pl)
{
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (i)
			strbuf_putc(&sb, ' ');
		if (t->negated)
			strbuf_putc(&sb, '-');
		if (t->phrase)
			strbuf_printf(&sb, "\"%s\"", t->word);
		else
			strbuf_puts(&sb, t->correction ? t->correction : t->word);
	}
	res->did_you_mean = strbuf_detach(&sb);
}

/* Sets res->explain (malloc'd, freed with the results; NULL when out of memory) to the plan: each
 * term with its alternatives, correction and synonym group, then the two expressions. */
static void explain_plan(atlas_results *res, const plan *pl)
{
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		strbuf_printf(&sb, "term '%s'%s%s%s%s:", t->word, t->negated ? " excluded" : "",
			      t->stop ? " (stop word, ranks only)" : "", t->phrase ? " phrase" : "",
			      t->prefix ? " prefix" : "");
		for (int k = 0; k < t->nalts; k++)
			strbuf_printf(&sb, " %s", t->alts[k]);
		if (t->correction)
			strbuf_printf(&sb, " [corrected to '%s']", t->correction);
		if (t->syn_group)
			strbuf_printf(&sb, " [synonym group %d]", t->syn_group);
		strbuf_putc(&sb, '\n');
	}
	strbuf_printf(&sb, "all words: %s\nany word:  %s\n", strbuf_str(&pl->strict), strbuf_str(&pl->relaxed));
	res->explain = strbuf_detach(&sb);
}

/* Milliseconds of the monotonic clock. */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int atlas_parse_work_budget(const char *s, atlas_work *out)
{
	long v[3] = { 0, 0, 0 };
	int k = 0;
	const char *p = s;
	for (; k < 3; k++) {
		char *end = (char *)p;
		if (*p != ',' && *p) {
			if (*p < '0' || *p > '9')
				return ATLAS_EINVAL;
			v[k] = strtol(p, &end, 10);
			if (v[k] <= 0 || v[k] > 1000000000L)
				return ATLAS_EINVAL;
		}
		if (*end == '\0')
			break;
		if (*end != ',')
			return ATLAS_EINVAL;
		p = end + 1;
	}
	if (k == 3 || !*s)
		return ATLAS_EINVAL;
	*out = (atlas_work){ v[0], v[1], v[2] };
	return 0;
}

/* The work budget of every search (atlas_set_work_budget): a field above 0 was given and holds
 * on every index; a field 0 is its default, scaled to the index (atlas_work_budget_for). */
static atlas_work work_budget = { 0, 0, 0 };

void atlas_set_work_budget(const atlas_work *b)
{
	work_budget = (atlas_work){ 0, 0, 0 };
	if (b && b->postings > 0)
		work_budget.postings = b->postings;
	if (b && b->candidates > 0)
		work_budget.candidates = b->candidates;
	if (b && b->expansions > 0)
		work_budget.expansions = b->expansions;
}

/* Returns the default of a work budget field for an index of ndocs pages: base up to
 * ATLAS_WORK_PAGES pages, in proportion to ndocs above, as a word's posting list grows with the
 * pages that hold it. */
static long scaled_default(long base, int ndocs)
{
	if (ndocs <= ATLAS_WORK_PAGES)
		return base;
	return (long)((double)base * ndocs / ATLAS_WORK_PAGES);
}

atlas_work atlas_work_budget_for(int ndocs)
{
	atlas_work w = work_budget;
	if (w.postings <= 0)
		w.postings = scaled_default(ATLAS_WORK_POSTINGS, ndocs);
	if (w.candidates <= 0)
		w.candidates = ATLAS_WORK_CANDIDATES;
	if (w.expansions <= 0)
		w.expansions = ATLAS_WORK_EXPANSIONS;
	return w;
}

int atlas_search(atlas_results *res, atlas_engine *e, const atlas_search_params *p, atlas_error *err)
{
	return atlas_search_with(res, e, p, NULL, err);
}

/* Checks the parameters of a search (limit, the page's limit or the default, offset, type and
 * sort). Returns 0, or ATLAS_EINVAL with err set. */
static int check_params(const atlas_search_params *p, const atlas_search_more *m, int limit, atlas_error *err)
{
	if (limit < 1 || limit > ATLAS_LIMIT_MAX)
		return atlas_error_set(err, ATLAS_EINVAL, "limit must be from 1 to %d", ATLAS_LIMIT_MAX);
	if (p->offset < 0 || p->offset > ATLAS_OFFSET_MAX)
		return atlas_error_set(err, ATLAS_EINVAL, "offset must be from 0 to %d", ATLAS_OFFSET_MAX);
	if (p->type && atlas_page_type_of(p->type) == ATLAS_TYPE_OTHER)
		return atlas_error_set(err, ATLAS_EINVAL, "type must be explainer, guide, topic or page");
	if (m->sort != ATLAS_SORT_RELEVANCE && m->sort != ATLAS_SORT_LASTMOD)
		return atlas_error_set(err, ATLAS_EINVAL, "sort must be relevance or lastmod");
	return 0;
}

/* Plans the search of p->q into pl (initialized by the caller): parsed, analyzed into terms within
 * the work budget, its expressions and weights made; sets res->query (the cleaned text), and, as
 * asked, res->explain and the correction offered. Returns 0, or ATLAS_ENOMEM with err set when the
 * text cannot be parsed. */
static int plan_search(atlas_results *res, atlas_engine *e, const atlas_search_params *p, plan *pl,
		       atlas_error *err)
{
	parsed_query q;
	if (query_parse(&q, p->q, p->q ? strlen(p->q) : 0, ATLAS_QUERY_MAX_BYTES))
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	res->query = strdup(q.clean);
	pl->no_correct = p->no_correct;
	pl->budget = atlas_work_budget_for(atlas_engine_ndocs(e));
	analyze_query(e, pl, &q);
	budget_terms(e, pl);
	build_expressions(pl);
	term_weights(e, pl);
	parsed_query_free(&q);
	if (p->explain)
		explain_plan(res, pl);
	if (pl->corrected) {
		did_you_mean(res, pl);
		res->corrected = pl->replaced && res->did_you_mean;
	}
	return 0;
}

/* Appends more to res->explain (when there is one); out of memory leaves it as it was. */
static void splice_explain(atlas_results *res, const char *more)
{
	if (!res->explain)
		return;
	strbuf all = STRBUF_INIT;
	strbuf_puts(&all, res->explain);
	strbuf_puts(&all, more);
	if (!all.oom) {
		free(res->explain);
		res->explain = strbuf_detach(&all);
	}
	strbuf_free(&all);
}

/* Appends the retrieval's steps (trace) and the work done to res->explain. */
static void explain_work(atlas_results *res, const plan *pl, const strbuf *trace)
{
	splice_explain(res, strbuf_str(trace));
	strbuf w = STRBUF_INIT;
	strbuf_printf(&w, "work: postings %ld of %ld, candidates %ld of %ld, expansions %ld of %ld%s\n",
		      pl->work.postings, pl->budget.postings, pl->work.candidates, pl->budget.candidates,
		      pl->work.expansions, pl->budget.expansions, pl->budget_hit ? ": partial" : "");
	if (!w.oom)
		splice_explain(res, strbuf_str(&w));
	strbuf_free(&w);
}

/* Puts e's candidates (e->touched) in page order (the facets list topics in the order pages show
 * them): the few sorted, the many read off the marks, either way without a walk of every page per
 * step. */
static void order_touched(atlas_engine *e)
{
	if ((size_t)e->ntouched * 8 < (size_t)e->ndocs)
		qsort(e->touched, (size_t)e->ntouched, sizeof(int), cmp_int);
	else
		for (int d = 0, n = 0; d < e->ndocs; d++)
			if (e->mark[d] == e->generation)
				e->touched[n++] = d;
}

/* The facets being counted: pages by type, and the top-level topics met (at most 32, in
 * res->topics) with the page of each. */
typedef struct facet_counts {
	int ntype[ATLAS_TYPE_OTHER];
	int topic_page[32];
} facet_counts;

/* Counts page doc in the facets: its type when it passes the topic filter, its top-level topics
 * when it passes the type filter. The filters: type_ok, topic_ok; each facet counts with the other
 * filter applied, with the caller's accept (any mix of types and topics) with every filter. */
static void count_facets(atlas_results *res, const atlas_engine *e, const atlas_search_more *m,
			 const atlas_doc *doc, bool type_ok, bool topic_ok, facet_counts *fc)
{
	if (m->accept && !type_ok)
		topic_ok = false;
	if (topic_ok && doc->type_id < ATLAS_TYPE_OTHER)
		fc->ntype[doc->type_id]++;
	for (int k = 0; type_ok && (topic_ok || !m->accept) && k < doc->ntop_topics; k++) {
		/* topic facet: the top-level topics of the matching pages */
		int ti = doc->top_topics[k], f;
		for (f = 0; f < res->ntopics && fc->topic_page[f] != ti; f++)
			;
		if (f == res->ntopics && res->ntopics < 32) {
			fc->topic_page[f] = ti;
			res->topics[f] = (atlas_facet){ e->docs[ti].topic_of, e->docs[ti].title, 0 };
			res->ntopics++;
		}
		if (f < res->ntopics)
			res->topics[f].count++;
	}
}

/* Scores every candidate of e that passes the search's filters into rk (room for e->ntouched) and
 * *nrk, counting the facets of all of them into fc and res->topics (room for 32) and res->total_all.
 * A count-only search (typeahead) scores nothing: each candidate's score is 0. */
static void rank_candidates(atlas_results *res, atlas_engine *e, const plan *pl, const atlas_search_params *p,
			    const atlas_search_more *m, ranked *rk, int *nrk, facet_counts *fc)
{
	/* query stems for the exact-title test: every word, stop words included */
	strbuf qs = STRBUF_INIT;
	for (int i = 0; i < pl->nterms && !e->count_only; i++) {
		if (pl->terms[i].negated)
			continue;
		if (qs.len)
			strbuf_putc(&qs, ' ');
		engine_normalize(e, &qs, pl->terms[i].correction ? pl->terms[i].correction : pl->terms[i].word, true);
	}
	order_touched(e);
	/* a page matched by a completion alone ranks below the pages of the word itself, when any
	 * passes the filters, the query has no other content word, and the word is on at least as
	 * many pages as each completion (rank.h: RANK_PREFIX_ONLY) or is a name a page that passes
	 * defines ("mod", a function, before the pages titled "Debug Mode") */
	bool found = false, defined = false;
	bool leads = !e->count_only && pl->npositive == 1 && prefix_word_leads(pl);
	bool tiered = leads || (!e->count_only && pl->npositive == 1 && pl->typed >= 0 && e->has_defs);
	for (int i = 0; i < e->ntouched && tiered && !(found && (leads || defined)); i++) {
		int d = e->touched[i];
		if (!type_passes(p, m, &e->docs[d]) || !topic_passes(p, m, &e->docs[d]))
			continue;
		found |= prefix_exact(pl, &e->cand[d]);
		defined |= !leads && prefix_defined(pl, &e->cand[d]);
	}
	bool exact_found = found && (leads || defined);
	/* with no filter, every candidate counts in both facets: from the packed facets, the pages
	 * themselves read only for a topic met the first time (the facet lists topics in the order
	 * the pages give them) */
	bool packed = e->facet_bits && !m->accept && !type_filtered(p, m) && !topic_filtered(p, m);
	uint32_t met = 0;
	int bit_count[FACET_BITS] = { 0 };
	for (int i = 0; i < e->ntouched; i++) {
		int d = e->touched[i];
		if (i + PREFETCH_AHEAD < e->ntouched) {
			/* thousands of candidates spread over the pages: each page's memory is a miss */
			int ahead = e->touched[i + PREFETCH_AHEAD];
			__builtin_prefetch(&e->cand[ahead]);
			__builtin_prefetch(&e->docs[ahead]);
			/* and the title's and keywords' stems of a page fetched half as far back */
			const atlas_doc *near = &e->docs[e->touched[i + PREFETCH_AHEAD / 2]];
			__builtin_prefetch(near->title_norm);
			__builtin_prefetch(near->keywords_norm);
		}
		candidate *c = &e->cand[d];
		const atlas_doc *doc = &e->docs[d];
		bool type_ok = true, topic_ok = true;
		if (packed) {
			uint32_t bits = e->facet_bits[d];
			if (bits & ~met) {
				count_facets(res, e, m, doc, true, true, fc);
				met |= bits;
			} else {
				if (e->facet_type[d] < ATLAS_TYPE_OTHER)
					fc->ntype[e->facet_type[d]]++;
				for (; bits; bits &= bits - 1)
					bit_count[__builtin_ctz(bits)]++;
			}
		} else {
			type_ok = type_passes(p, m, doc);
			topic_ok = topic_passes(p, m, doc);
			count_facets(res, e, m, doc, type_ok, topic_ok, fc);
		}
		if (!type_ok || !topic_ok)
			continue;
		double score = 0;
		if (e->count_only)
			coverage_of(pl, c); /* typeahead counts alone: whether the page holds every word */
		else
			score = score_candidate(pl, c, doc, strbuf_str(&qs));
		res->total_all += c->strict || pl->npositive <= 1;
		rk[(*nrk)++] = (ranked){ d, score, exact_found && prefix_only(pl, c) };
	}
	for (int f = 0; packed && f < res->ntopics; f++)
		for (int b = 0; b < e->nfacet_topics; b++)
			if (e->facet_topic[b] == fc->topic_page[f])
				res->topics[f].count += bit_count[b];
	strbuf_free(&qs);
}

/* Sorts the page shown (the first offset + limit of rk[0..nrk)), by date or by score; by score,
 * with the boosts of the pages that can be shown. Only those are sorted: a query may match tens of
 * thousands of pages. */
static void sort_shown(atlas_engine *e, const plan *pl, const atlas_search_more *m, ranked *rk, int nrk,
		       size_t shown)
{
	if (m->sort == ATLAS_SORT_LASTMOD) {
		atlas_best_first(rk, (size_t)nrk, shown, sizeof(ranked), cmp_lastmod, e);
	} else {
		atlas_best_first(rk, (size_t)nrk, shown, sizeof(ranked), cmp_ranked, e);
		boost_shown(e, pl, rk, nrk, shown);
		atlas_best_first(rk, (size_t)nrk, shown, sizeof(ranked), cmp_ranked, e);
	}
}

/* Sets ntype[t] of each type t the search was not kept to (retrieval walked the pages of the types
 * searched alone, whose counts ntype holds) to an estimate: the pages estimated to hold a word
 * (estimate_total, or estimate_all when retrieval took the all-words pass alone) less those
 * counted, shared among the other types as their pages are. */
static void estimate_other_types(atlas_engine *e, const plan *pl, const atlas_search_params *p,
				 const atlas_search_more *m, int *ntype)
{
	long counted = 0, others = 0;
	for (int t = 0; t < ATLAS_TYPE_OTHER; t++) {
		if (type_wanted(p, m, t))
			counted += ntype[t];
		else
			others += e->type_count[t];
	}
	long rest = (pl->any_pass ? estimate_total(e, pl) : estimate_all(e, pl)) - counted;
	for (int t = 0; t < ATLAS_TYPE_OTHER; t++)
		if (!type_wanted(p, m, t))
			ntype[t] = rest > 0 && others > 0 ? (int)((double)rest * e->type_count[t] / others + 0.5) : 0;
}

/* With retrieval kept to the pages of one top-level topic (pl->kept_to_topic), of which nrk
 * matched, adds to res's topic facet (its pages fc->topic_page) an estimate of the pages of each
 * other top-level topic: those of the words' estimated pages (as estimate_other_types) not counted,
 * shared as the topic's pages are among the pages outside the one kept to, at most its pages. */
static void estimate_other_topics(atlas_results *res, atlas_engine *e, const plan *pl, int nrk, facet_counts *fc)
{
	long rest = (pl->any_pass ? estimate_total(e, pl) : estimate_all(e, pl)) - nrk;
	long outside = e->ndocs - pl->kept_pages;
	for (int ti = 0; ti < e->ndocs && e->top_count; ti++) {
		if (!e->top_count[ti] || ti == pl->kept_to_topic)
			continue;
		int f;
		for (f = 0; f < res->ntopics && fc->topic_page[f] != ti; f++)
			;
		if (f == res->ntopics) {
			if (res->ntopics == 32)
				continue;
			fc->topic_page[f] = ti;
			res->topics[f] = (atlas_facet){ e->docs[ti].topic_of, e->docs[ti].title, 0 };
			res->ntopics++;
		}
		long more = rest > 0 && outside > 0 ? (long)((double)rest * e->top_count[ti] / outside + 0.5) : 0;
		long count = res->topics[f].count + more;
		res->topics[f].count = (int)(count < e->top_count[ti] ? count : e->top_count[ti]);
	}
	/* a topic of no estimated page is left out, as one of no match is */
	int kept = 0;
	for (int f = 0; f < res->ntopics; f++)
		if (res->topics[f].count > 0) {
			fc->topic_page[kept] = fc->topic_page[f];
			res->topics[kept++] = res->topics[f];
		}
	res->ntopics = kept;
}

/* Sets res's totals and type facets from the nrk pages ranked and the counts fc: the total
 * estimated when retrieval stopped early and no filter applies; with retrieval kept to the types
 * searched, the other types' counts estimated. */
static void set_totals(atlas_results *res, atlas_engine *e, const plan *pl, const atlas_search_params *p,
		       const atlas_search_more *m, int nrk, facet_counts *fc)
{
	res->total = nrk;
	res->total_exact = !pl->partial;
	if (pl->partial && !type_filtered(p, m) && !topic_filtered(p, m)) {
		/* the pages found are those whose important fields hold a word; the rest estimated */
		int estimate = estimate_total(e, pl);
		if (estimate > nrk)
			res->total = estimate;
	}
	int ntype[ATLAS_TYPE_OTHER];
	memcpy(ntype, fc->ntype, sizeof(ntype));
	if (pl->kept_to_types)
		estimate_other_types(e, pl, p, m, ntype);
	if (pl->kept_to_topic >= 0)
		estimate_other_topics(res, e, pl, nrk, fc);
	res->facets_estimated = pl->kept_to_types || pl->kept_to_topic >= 0;
	for (int k = 0; k < ATLAS_TYPE_OTHER; k++)
		if (ntype[k])
			res->types[res->ntypes++] =
				(atlas_facet){ atlas_page_type_names[k], atlas_page_type_names[k], ntype[k] };
}

/* Fills res's hits with the page asked for (offset, limit) of rk[0..nrk): page, score, title, the
 * explanation when asked, then their snippets and sections. Returns 0, or ATLAS_ENOMEM with err
 * set. */
static int fill_page(atlas_results *res, atlas_engine *e, const plan *pl, const atlas_search_params *p,
		     int limit, const ranked *rk, int nrk, atlas_error *err)
{
	int start = p->offset < nrk ? p->offset : nrk;
	int end = start + limit < nrk ? start + limit : nrk;
	res->hits = calloc((size_t)(end - start ? end - start : 1), sizeof(atlas_hit));
	if (!res->hits)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	strbuf tb = STRBUF_INIT;
	for (int i = start; i < end; i++) {
		atlas_hit *h = &res->hits[res->nhits++];
		h->doc = rk[i].doc;
		h->score = rk[i].score;
		strbuf_reset(&tb);
		strbuf_append_html(&tb, e->docs[h->doc].title, strlen(e->docs[h->doc].title));
		h->title_html = tb.oom ? NULL : atlas_arena_strndup(&res->text, strbuf_str(&tb), tb.len);
		if (p->explain) {
			const atlas_doc *doc = &e->docs[h->doc];
			candidate *c = &e->cand[h->doc];
			fill_explain(e, h, pl, c, c->title, c->exact, coverage_of(pl, c), type_weight(doc),
				     priority_weight(doc), prefix_only(pl, c));
		}
	}
	strbuf_free(&tb);
	fill_sections(e, res, pl);
	return 0;
}

/* Finds, ranks and pages what plan pl (with something to look for) matches, into res. Returns 0,
 * or ATLAS_ESQL or ATLAS_ENOMEM with err set. */
static int run_plan(atlas_results *res, atlas_engine *e, plan *pl, const atlas_search_params *p,
		    const atlas_search_more *m, int limit, atlas_error *err)
{
	strbuf trace = STRBUF_INIT; /* the steps taken, for explain */
	int want = p->offset + limit;
	if (want < RANK_MIN_CANDIDATES)
		want = RANK_MIN_CANDIDATES;
	int rc = retrieve(e, pl, p, m, want, p->explain ? &trace : NULL, err);
	if (!rc && p->explain)
		explain_work(res, pl, &trace);
	strbuf_free(&trace);
	if (rc)
		return rc;
	ranked *rk = malloc((size_t)(e->ntouched ? e->ntouched : 1) * sizeof(ranked));
	res->topics = calloc(32, sizeof(atlas_facet));
	if (!rk || !res->topics) {
		free(rk);
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	}
	int nrk = 0;
	facet_counts fc = { { 0 }, { 0 } };
	rank_candidates(res, e, pl, p, m, rk, &nrk, &fc);
	/* typeahead (count_only): the counts only, no page of hits */
	if (!e->count_only)
		sort_shown(e, pl, m, rk, nrk, (size_t)(p->offset + limit));
	set_totals(res, e, pl, p, m, nrk, &fc);
	if (e->count_only)
		res->hits = calloc(1, sizeof(atlas_hit));
	else
		rc = fill_page(res, e, pl, p, limit, rk, nrk, err);
	free(rk);
	return rc;
}

int atlas_search_with(atlas_results *res, atlas_engine *e, const atlas_search_params *p,
		      const atlas_search_more *more, atlas_error *err)
{
	static const atlas_search_more none;
	const atlas_search_more *m = more ? more : &none;
	double t0 = now_ms();
	memset(res, 0, sizeof(*res));
	res->text = (atlas_arena)ATLAS_ARENA_INIT(RESULTS_TEXT_BLOCK);
	res->total_exact = true;
	int limit = p->limit ? p->limit : 10;
	res->offset = p->offset;
	res->limit = limit;
	plan pl;
	int rc = check_params(p, m, limit, err);
	if (rc)
		return rc;
	plan_init(&pl);
	if ((rc = plan_search(res, e, p, &pl, err)))
		return rc;
	if (pl.strict.len == 0)
		res->hits = calloc(1, sizeof(atlas_hit)); /* nothing to look for: an empty result, not an error */
	else
		rc = run_plan(res, e, &pl, p, m, limit, err);
	res->partial = pl.budget_hit;
	res->work = pl.work;
	for (int i = 0; i < pl.nunquoted; i++)
		res->unquoted[res->nunquoted++] = pl.unquoted[i];
	pl.nunquoted = 0;
	plan_free(&pl);
	res->took_ms = now_ms() - t0;
	if (rc)
		atlas_results_free(res);
	return rc;
}

void atlas_results_free(atlas_results *res)
{
	if (!res)
		return;
	for (int i = 0; i < res->nhits; i++)
		free(res->hits[i].explain);
	atlas_arena_free(&res->text);
	free(res->hits);
	free(res->topics);
	free(res->query);
	free(res->did_you_mean);
	free(res->explain);
	for (int i = 0; i < res->nunquoted; i++)
		free(res->unquoted[i]);
	memset(res, 0, sizeof(*res));
}
