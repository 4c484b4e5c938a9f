/* blockmax.h - top-k retrieval over Atlas's own postings (common/blockpost.h) with dynamic
 * pruning: block-max WAND for the pages holding any word of a query, and for those holding every
 * word a conjunction that skips whole blocks, both scoring BM25F exactly as atlas_rank does
 * (query/fts_functions.c, query/rank.h), so the best k are those an exhaustive scoring gives.
 * Type and topic filters are bitsets of pages the walk seeks through, not pages it scores. */
#ifndef ATLAS_BLOCKMAX_H
#define ATLAS_BLOCKMAX_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "analyzer.h"
#include "error.h"
#include "fts_functions.h"

typedef struct blockmax blockmax;

/* Starts the retrieval state of one engine over the postings table of db, whose rows are
 * 1..ndocs with column sizes sizes[(row - 1) * FTS_NCOLS + c] and averages avg (both must outlive
 * it). Returns 0, or ATLAS_ENOMEM / ATLAS_ESQL with err set (*out NULL). The caller owns *out
 * (blockmax_free). */
int blockmax_new(blockmax **out, sqlite3 *db, const int *sizes, const double *avg, int ndocs,
		 atlas_error *err);

/* Frees q. Accepts NULL. */
void blockmax_free(blockmax *q);

/* Starts a new query, forgetting the last one's phrases and its word being typed. */
void blockmax_reset(blockmax *q);

/* Lets go of what the current query's adds left open (the spill row's blob, whose read
 * transaction would outlive the search); its cursors stay. For the end of every search. */
void blockmax_release(blockmax *q);

/* Marks the word being typed of the query: phrases [word_from, complete_from) are the word itself,
 * [complete_from, complete_to) its completions, which add nothing to a page holding the word itself,
 * as atlas_rank scores them (rank_row_phrase_end); the masks count them still. */
void blockmax_set_typed(blockmax *q, int word_from, int complete_from, int complete_to);

/* Adds the next phrase of the query: the single analyzed term term[0..n), matched in the columns
 * of colmask (bit c: fts column c), as an alternative of group (0..63); a negated group's pages
 * are left out. idf weighs its BM25F score. Phrases are numbered in the order they are added, as
 * the bits of a hit's masks. Returns 0, or with err set ATLAS_EINVAL (the query has FTS_MAX_PHRASES
 * phrases already, group is outside 0..63, or a blob is malformed), ATLAS_ENOMEM or ATLAS_ESQL. */
int blockmax_add(blockmax *q, const char *term, int n, unsigned colmask, int group, bool negated,
		 double idf, atlas_error *err);

/* One page found: its BM25F score, its final score (the caller's, or bm25 x prior), and the
 * phrases it holds: anywhere (in their columns), in the title, in the keywords, in the section
 * headings, in the names the page defines. */
typedef struct blockmax_hit {
	int doc;
	double bm25, score;
	uint64_t phrases, title, keywords, headings, defs;
} blockmax_hit;

/* The caller's final score of a hit (whose bm25 and masks are set): it must never exceed
 * bm25 x prior[doc - 1] x slack (blockmax_args), which is what pruning relies on. */
typedef double (*blockmax_score_fn)(void *ctx, const blockmax_hit *h);

typedef struct blockmax_args {
	int k;                   /* hits wanted, best first */
	bool all_groups;         /* pages holding a phrase of every positive group, else of any */
	bool exhaustive;         /* score every matching page: no pruning (tests, exact counts) */
	const uint64_t *allowed; /* bit d of allowed[d / 64]: page d may be returned; NULL: all */
	const double *prior;     /* per page (doc - 1) factor of the bound, NULL: 1 */
	double prior_max;        /* the largest of prior (1 without one) */
	double slack;            /* the final score's largest factor past bm25 x prior (>= 1) */
	blockmax_score_fn fn;    /* NULL: the final score is bm25 x prior */
	void *ctx;
	/* when set, called for every page matched (in page order; with exhaustive, every matching
	 * page), the walk stopping after max_rows of them (0: no limit) */
	void (*each)(void *ctx, const blockmax_hit *h);
	long max_rows;
} blockmax_args;

/* The results of a run: the best hits, and how many pages match (exact, or estimated from the
 * phrases' page counts when pruning skipped pages unscored). */
typedef struct blockmax_result {
	int nhits;
	long total;
	bool total_exact;
	long scored;  /* pages scored */
	long decoded; /* blocks decoded */
} blockmax_result;

/* Runs the query: the best a->k pages by final score (ties: the lower page first) into
 * hits[0..a->k), best first; a query may be run again. Returns 0, or ATLAS_EINVAL with err set when a block is malformed. */
int blockmax_run(blockmax *q, const blockmax_args *a, blockmax_hit *hits, blockmax_result *res,
		 atlas_error *err);

#endif
