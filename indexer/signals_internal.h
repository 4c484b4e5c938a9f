/* signals_internal.h - what signals.c (the candidates' rows, the graph signals, the thread) and
 * similar.c (the text's signals) share; nothing else includes it. */
#ifndef ATLAS_SIGNALS_INTERNAL_H
#define ATLAS_SIGNALS_INTERNAL_H

#include <sqlite3.h>

#include "analyzer.h"
#include "corpus.h"
#include "error.h"
#include "next_fit.h"
#include "vocab_tables.h"

/* Everything computed. The candidate rows, millions at 100,000 pages, are not kept: each goes into
 * the rows file as it is made, in the order made (signal after signal, each over every page), and
 * is put in key order there at the end. */
typedef struct out_ctx {
	atlas_error *err;
	const char *path;         /* the rows file, for messages */
	sqlite3 *db;              /* the rows file, open while computing */
	sqlite3_stmt *row;        /* appends a row to its table "computed" */
	sqlite3_stmt *term;       /* appends a row to similar_terms */
	int nrows;
	vocab_row *vocab;         /* sorted by term */
	int nvocab;
	vocab_row *stems;         /* every stem with its document frequency (cf unused), sorted */
	int nstems;
	atlas_arena words;        /* the vocabulary's words and the stems (vocab's and stems' terms) */
	next_fit *fit;            /* keeps the rows of the guides' steps, to fit the weights on */
	int rc;
} out_ctx;

/* A candidate page with its score and (for similar pages) its strongest shared terms. */
typedef struct scored {
	int doc;
	float score;
	int t[3];     /* best contributing terms */
	float tw[3];
} scored;

/* Orders scored candidates the best first, then by doc: atlas_best_first's comparison (ctx
 * unused). Returns <0, 0 or >0 as qsort's. */
int cmp_scored_ctx(const void *a, const void *b, void *ctx);

/* Records one candidate (self and unknown pages dropped) with a detail of n bytes; signal is a
 * NEXT_* code. On failure sets o->rc. */
void emit_bytes(out_ctx *o, int src, int dst, int signal, double weight, const void *detail, int n);

/* Writes similar_terms row id: name. Returns 0 or o->rc, set. */
int put_similar_term(out_ctx *o, int id, const char *name);

/* The graph candidates, computed on a thread of their own (signals.c). */
typedef struct ppr_job ppr_job;

/* Starts the graph candidates on a thread of their own, or, when no thread can be started, leaves
 * them to be computed when they are written. */
void ppr_start(ppr_job *j);

/* The more-like-this candidates of every page of c (doc ids from id_of), with the vocabulary and
 * stems kept in o; once every page is read (its text no longer needed, and released), starts the
 * graph candidates of job on a thread of their own. On failure sets o->rc. */
void text_signals(out_ctx *o, corpus *c, const int *id_of, atlas_analyzer *a, ppr_job *job);

/* The numbering's candidates (numbering.c): from each page whose title begins with a section
 * number to the pages numbered after it. On failure sets o->rc. */
void numbering_signals(out_ctx *o, const corpus *c, const int *id_of);

#endif
