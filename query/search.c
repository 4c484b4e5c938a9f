/* search.c - one search: the plan's expressions (plan.c) into candidates, and those into a
 * ranked, filtered, faceted page of hits with snippets and best-matching sections. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "postings.h"
#include "rank.h"
#include "spans.h"
#include "search_internal.h"
#include "topk.h"

/* Bytes of a block of the results' text: a page of ten hits mostly fits in one */
#define RESULTS_TEXT_BLOCK (16 * 1024)

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/**************************************************************************************************
** Search.
*/

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

/* The work budget of every search (atlas_set_work_budget). */
static atlas_work work_budget = { ATLAS_WORK_POSTINGS, ATLAS_WORK_CANDIDATES, ATLAS_WORK_EXPANSIONS };

void atlas_set_work_budget(const atlas_work *b)
{
	work_budget = (atlas_work){ ATLAS_WORK_POSTINGS, ATLAS_WORK_CANDIDATES, ATLAS_WORK_EXPANSIONS };
	if (b && b->postings > 0)
		work_budget.postings = b->postings;
	if (b && b->candidates > 0)
		work_budget.candidates = b->candidates;
	if (b && b->expansions > 0)
		work_budget.expansions = b->expansions;
}

int atlas_search(atlas_results *res, atlas_engine *e, const atlas_search_params *p, atlas_error *err)
{
	return atlas_search_with(res, e, p, NULL, err);
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
	if (limit < 1 || limit > ATLAS_LIMIT_MAX)
		return atlas_error_set(err, ATLAS_EINVAL, "limit must be from 1 to %d", ATLAS_LIMIT_MAX);
	if (p->offset < 0 || p->offset > ATLAS_OFFSET_MAX)
		return atlas_error_set(err, ATLAS_EINVAL, "offset must be from 0 to %d", ATLAS_OFFSET_MAX);
	if (p->type && strcmp(p->type, "explainer") && strcmp(p->type, "guide") &&
	    strcmp(p->type, "topic") && strcmp(p->type, "page"))
		return atlas_error_set(err, ATLAS_EINVAL, "type must be explainer, guide, topic or page");
	if (m->sort != ATLAS_SORT_RELEVANCE && m->sort != ATLAS_SORT_LASTMOD)
		return atlas_error_set(err, ATLAS_EINVAL, "sort must be relevance or lastmod");
	parsed_query q;
	if (query_parse(&q, p->q, p->q ? strlen(p->q) : 0, ATLAS_QUERY_MAX_BYTES))
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	res->query = strdup(q.clean);
	plan pl;
	plan_init(&pl);
	pl.no_correct = p->no_correct;
	pl.budget = work_budget;
	analyze_query(e, &pl, &q);
	budget_terms(e, &pl);
	build_expressions(&pl);
	term_weights(e, &pl);
	parsed_query_free(&q);
	if (p->explain)
		explain_plan(res, &pl);
	if (pl.corrected) {
		did_you_mean(res, &pl);
		res->corrected = pl.replaced && res->did_you_mean;
	}

	int rc = 0;
	ranked *rk = NULL;
	int nrk = 0;
	if (pl.strict.len == 0)
		goto facets; /* nothing to look for: an empty result, not an error */
	strbuf trace = STRBUF_INIT; /* the steps taken, for explain */
	int want = p->offset + limit;
	if (want < RANK_MIN_CANDIDATES)
		want = RANK_MIN_CANDIDATES;
	if ((rc = retrieve(e, &pl, p, m, want, p->explain ? &trace : NULL, err))) {
		strbuf_free(&trace);
		goto out;
	}
	if (p->explain && res->explain) {
		strbuf all = STRBUF_INIT;
		strbuf_puts(&all, res->explain);
		strbuf_puts(&all, strbuf_str(&trace));
		if (!all.oom) {
			free(res->explain);
			res->explain = strbuf_detach(&all);
		}
		strbuf_free(&all);
	}
	if (p->explain && res->explain) {
		strbuf w = STRBUF_INIT;
		strbuf_printf(&w, "%swork: postings %ld of %ld, candidates %ld of %ld, expansions %ld of %ld%s\n",
			      res->explain, pl.work.postings, pl.budget.postings, pl.work.candidates,
			      pl.budget.candidates, pl.work.expansions, pl.budget.expansions,
			      pl.budget_hit ? ": partial" : "");
		if (!w.oom) {
			free(res->explain);
			res->explain = strbuf_detach(&w);
		}
		strbuf_free(&w);
	}
	strbuf_free(&trace);

	/* query stems for the exact-title test: every word, stop words included */
	strbuf qs = STRBUF_INIT;
	for (int i = 0; i < pl.nterms; i++) {
		if (pl.terms[i].negated)
			continue;
		if (qs.len)
			strbuf_putc(&qs, ' ');
		engine_normalize(e, &qs, pl.terms[i].correction ? pl.terms[i].correction : pl.terms[i].word, true);
	}
	rk = malloc((size_t)(e->ntouched ? e->ntouched : 1) * sizeof(ranked));
	res->topics = calloc(32, sizeof(atlas_facet));
	if (!rk || !res->topics) {
		strbuf_free(&qs);
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		goto out;
	}
	/* the pages found, in page order (the facets list topics in the order pages show them): the
	 * few sorted, the many read off the marks, either way without a walk of every page per step */
	if ((size_t)e->ntouched * 8 < (size_t)e->ndocs)
		qsort(e->touched, (size_t)e->ntouched, sizeof(int), cmp_int);
	else
		for (int d = 0, n = 0; d < e->ndocs; d++)
			if (e->mark[d] == e->generation)
				e->touched[n++] = d;
	int ntype[ATLAS_TYPE_OTHER] = { 0 };
	int topic_page[32];
	for (int i = 0; i < e->ntouched; i++) {
		int d = e->touched[i];
		candidate *c = &e->cand[d];
		const atlas_doc *doc = &e->docs[d];
		bool type_ok = type_passes(p, m, doc);
		bool topic_ok = topic_passes(p, m, doc);
		/* facets count with the other filter applied; with the caller's accept (any mix of
		 * types and topics), with every filter applied */
		if (m->accept && !type_ok)
			topic_ok = false;
		if (topic_ok && doc->type_id < ATLAS_TYPE_OTHER)
			ntype[doc->type_id]++;
		for (int k = 0; type_ok && (topic_ok || !m->accept) && k < doc->ntop_topics; k++) {
			/* topic facet: the top-level topics of the matching pages */
			int ti = doc->top_topics[k], f;
			for (f = 0; f < res->ntopics && topic_page[f] != ti; f++)
				;
			if (f == res->ntopics && res->ntopics < 32) {
				topic_page[f] = ti;
				res->topics[f] = (atlas_facet){ e->docs[ti].path + 3, e->docs[ti].title, 0 };
				res->ntopics++;
			}
			if (f < res->ntopics)
				res->topics[f].count++;
		}
		if (!type_ok || !topic_ok)
			continue;
		bool exact = false;
		double title = title_match(&pl, c->title_phrases, true, doc->title_norm, doc->title_sig, &exact,
					   strbuf_str(&qs));
		double kw = title_match(&pl, c->keyword_phrases, c->keywords_known, doc->keywords_norm,
					doc->keywords_sig, NULL, NULL);
		double cov = coverage_of(&pl, c);
		res->total_all += c->strict || pl.npositive <= 1;
		double tw = type_weight(doc->type_id);
		double pw = RANK_PRIORITY_BASE + RANK_PRIORITY_SCALE * doc->priority;
		bool ponly = prefix_only(&pl, c);
		if (doc->listing > 0 && title < 1.0)
			tw *= 1 - (1 - RANK_LISTING_PRIOR) * doc->listing;
		c->title = title;
		c->keywords = kw;
		c->exact = exact;
		c->path = c->proximity = c->heading = 0;
		c->score = c->bm25 * (RANK_COVERAGE_FLOOR + (1 - RANK_COVERAGE_FLOOR) * cov * sqrt(cov)) *
			   (1 + RANK_TITLE_WORDS * title) * (exact ? RANK_TITLE_EXACT : 1.0) *
			   (1 + RANK_KEYWORD_WORDS * kw) * tw * pw * (ponly ? RANK_PREFIX_ONLY : 1.0);
		rk[nrk++] = (ranked){ d, c->score };
	}
	strbuf_free(&qs);
	if (e->count_only)
		goto counted; /* typeahead: the counts only, no page of hits */
	/* only the page shown is sorted: a query may match tens of thousands of pages */
	size_t shown = (size_t)(p->offset + limit);
	if (m->sort == ATLAS_SORT_LASTMOD) {
		atlas_best_first(rk, (size_t)nrk, shown, sizeof(ranked), cmp_lastmod, e);
	} else {
		atlas_best_first(rk, (size_t)nrk, shown, sizeof(ranked), cmp_ranked, e);
		boost_shown(e, &pl, rk, nrk, shown);
		atlas_best_first(rk, (size_t)nrk, shown, sizeof(ranked), cmp_ranked, e);
	}
counted:
	res->total = nrk;
	res->total_exact = !pl.partial;
	if (pl.partial && !type_filtered(p, m) && !topic_filtered(p, m)) {
		/* the pages found are those whose important fields hold a word; the rest estimated */
		int estimate = estimate_total(e, &pl);
		if (estimate > nrk)
			res->total = estimate;
	}
	for (int k = 0; k < ATLAS_TYPE_OTHER; k++)
		if (ntype[k])
			res->types[res->ntypes++] = (atlas_facet){ atlas_type_names[k], atlas_type_names[k], ntype[k] };

	if (e->count_only)
		goto facets;
	int start = p->offset < nrk ? p->offset : nrk;
	int end = start + limit < nrk ? start + limit : nrk;
	res->hits = calloc((size_t)(end - start ? end - start : 1), sizeof(atlas_hit));
	if (!res->hits) {
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		goto out;
	}
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
			fill_explain(e, h, &pl, c, c->title, c->exact, coverage_of(&pl, c), type_weight(doc->type_id),
				     RANK_PRIORITY_BASE + RANK_PRIORITY_SCALE * doc->priority, prefix_only(&pl, c));
		}
	}
	strbuf_free(&tb);
	fill_sections(e, res, &pl);
	goto out;
facets:
	res->hits = calloc(1, sizeof(atlas_hit));
out:
	free(rk);
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
