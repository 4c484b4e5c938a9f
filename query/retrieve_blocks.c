/* retrieve_blocks.c - a plan's whole-pages expressions evaluated over the postings table
 * (blockmax.h) when each of its phrases is a single term: the rows FTS5 would give, in the same
 * order, with the same atlas_rank scores and the same phrase masks; their matches' positions are
 * read for the pages shown only (ensure_recorded). */
#include "blockmax.h"
#include "postings.h"
#include "search_internal.h"

bool blocks_expression(atlas_engine *e, blockmax *q, const plan *pl)
{
	if (!q)
		return false;
	blockmax_reset(q);
	/* a word being typed: its completions count only where the word itself is absent */
	blockmax_set_typed(q, pl->word_from, pl->complete_from, pl->complete_to);
	int p = 0;
	atlas_error err = { 0, "" };
	for (int neg = 0; neg < 2; neg++)
		for (int i = 0; i < pl->nterms; i++) {
			const qterm *t = &pl->terms[i];
			if (neg ? !t->negated : t->negated || t->stop)
				continue;
			for (int k = 0; k < t->nalts; k++) {
				char term[256];
				int n = postings_alt_term(e->analyzer, t->alts[k], term, (int)sizeof(term));
				unsigned cols = t->alt_titled[k] ? (1u << FTS_TITLE) | (1u << FTS_KEYWORDS)
								 : (1u << FTS_NCOLS) - 1;
				double idf = p < pl->nidf ? pl->idf[p] : 1.0;
				if (n < 0 || i > 63 || blockmax_add(q, term, n, cols, i, neg, idf, &err))
					return false;
				e->rec.phrase_size[p++] = 1;
			}
		}
	return true;
}

/* Where the pages of a walk go: the caller's row function, with the match record describing
 * each row as atlas_rank would, its positions unrecorded. */
typedef struct each_sink {
	atlas_engine *e;
	void (*take)(void *, sqlite3_int64, double);
	void *ctx;
} each_sink;

static void each_page(void *ctx, const blockmax_hit *h)
{
	each_sink *s = ctx;
	match_record *rec = &s->e->rec;
	rec->row_phrases = (sqlite3_int64)h->phrases;
	rec->row_title = (sqlite3_int64)h->title;
	rec->row_keywords = (sqlite3_int64)h->keywords;
	rec->row_headings = (sqlite3_int64)h->headings;
	rec->row_defs = (sqlite3_int64)h->defs;
	rec->row_start = rec->ninst;
	rec->row_n = -1;
	s->take(s->ctx, h->doc, h->bm25);
}

int blocks_run(atlas_engine *e, blockmax *q, bool strict, long cap, const uint64_t *allowed,
	       void (*take)(void *, sqlite3_int64, double), void *ctx, atlas_error *err)
{
	each_sink s = { e, take, ctx };
	blockmax_args a = { .k = 0, .all_groups = strict, .exhaustive = true, .allowed = allowed, .prior_max = 1.0,
			    .slack = 1.0, .ctx = &s, .each = each_page, .max_rows = cap };
	blockmax_hit none[1];
	blockmax_result r;
	return blockmax_run(q, &a, none, &r, err);
}
