/* next_fit.h - the read-next blend's weights learned from the site's own guides at index time. */
#ifndef ATLAS_NEXT_FIT_H
#define ATLAS_NEXT_FIT_H

#include <sqlite3.h>
#include <stdbool.h>

#include "corpus.h"
#include "error.h"
#include "next_rows.h"

/* The guides' routes and the candidate rows of every page on them, gathered while the signals are
 * made. Each step of a guide is a training case: its next step is the answer, ranked among the
 * step's candidates with that guide's own rows left out (as a guide the reader has not got would
 * be), the pages before it read. A sample of the links between explainers is kept for the
 * figures: each target ranked among its source's candidates without the link itself. */
typedef struct next_fit next_fit;

/* What a fit found: the weights (by signal code, then the context), and the figures behind them.
 * fitted is false when the defaults were kept (too few guides or steps, or nothing better). */
typedef struct next_fit_result {
	double w[NEXT_NWEIGHTS];
	bool fitted;
	int guides, cases, links;
	double mrr_default, hit3_default, mrr_fitted, hit3_fitted; /* the guides' next steps */
	double links_mrr_default, links_mrr_fitted;               /* the links' targets */
} next_fit_result;

/* A new collector for corpus c, whose page i has doc id id_of[i]. Returns it (free with
 * next_fit_free), or NULL when out of memory. */
next_fit *next_fit_new(const corpus *c, const int *id_of);

/* Whether the rows of page id src are wanted (it is a step of some guide). */
bool next_fit_wants(const next_fit *f, int src);

/* Keeps one candidate row of page id src (signal code, weight, and for a guide's rows the guide's
 * doc id, for list_next the listing page's, else 0). Returns 0 or ATLAS_ENOMEM. */
int next_fit_add(next_fit *f, int src, int dst, int signal, double weight, int guide);

/* Fits the weights by coordinate ascent (query/rank.h: NEXT_FIT_*) starting from the defaults,
 * into *out. Returns 0 or ATLAS_ENOMEM (with err set). */
int next_fit_run(next_fit *f, next_fit_result *out, atlas_error *err);

/* Writes r into table next_fit of db (path for messages). Returns 0 or ATLAS_ESQL with err set. */
int next_fit_store(const next_fit_result *r, sqlite3 *db, const char *path, atlas_error *err);

void next_fit_free(next_fit *f);

#endif
