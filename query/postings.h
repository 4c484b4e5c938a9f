/* postings.h - the full-text index of a small index held in memory: every position of every term
 * of the fts table, read once from FTS5's own index, and a search's MATCH expressions evaluated
 * over them, rows scored and recorded exactly as atlas_rank scores FTS5's, so that a search runs no
 * SQLite statement. Engines on the same index file share one, read when the first of them is asked
 * to hold it (atlas_engine_hold_postings). */
#ifndef ATLAS_POSTINGS_H
#define ATLAS_POSTINGS_H

#include <sqlite3.h>
#include <stdbool.h>

#include "analyzer.h"
#include "error.h"
#include "fts_functions.h"

/* Positions held at most: 8 bytes each (the real corpus has 154,137). */
#define POSTINGS_MAX (2 << 20)

typedef struct atlas_postings atlas_postings;

/* Reads every position of table fts of db, whose rows are 1..ndocs, into *out. Sets *out to NULL
 * and returns 0 when the index holds more than POSTINGS_MAX positions or a row or position that
 * the held form cannot represent: the engine then searches through FTS5. Returns ATLAS_ENOMEM or
 * ATLAS_ESQL with err set on failure. The caller owns *out (postings_free). */
int postings_load(atlas_postings **out, sqlite3 *db, int ndocs, atlas_error *err);

/* Frees p. Accepts NULL. */
void postings_free(atlas_postings *p);

/* An expression being evaluated over a postings: the state of one engine's searches (the postings
 * are shared by the engines of an index and never change). */
typedef struct postings_query postings_query;

/* Starts the state of searches over p, which must outlive it. Returns 0, or ATLAS_ENOMEM out of
 * memory (*out NULL). The caller owns *out (postings_query_free). */
int postings_query_new(postings_query **out, const atlas_postings *p);

/* Frees q. Accepts NULL. */
void postings_query_free(postings_query *q);

/* Column sets of a phrase: bit c for fts column c. */
#define POSTINGS_ALL_COLUMNS ((1u << FTS_NCOLS) - 1)

/* Starts a new expression, forgetting the last one. */
void postings_reset(postings_query *q);

/* Adds the next phrase of the expression: alt, an FTS5 string (quoted, quotes doubled inside, a
 * '*' after it for a prefix), analyzed by a as FTS5 analyzes a query's strings, matched in the
 * columns of colmask, as one alternative of group (groups 0..31, numbered in the expression's
 * order; a negated group's pages are left out). Phrases are numbered in the order they are added,
 * as FTS5 numbers the phrases of the expression written in that order. Returns 0, or -1 when the
 * phrase is one the held form does not evaluate as FTS5 would (no token, too many phrases or
 * tokens, out of memory): the caller then asks FTS5. -1 is not an error code: it means "not here",
 * and the answer is the same from FTS5; the expression stays failed until postings_reset. */
int postings_add(postings_query *q, atlas_analyzer *a, const char *alt, unsigned colmask, int group,
		 bool negated);

/* The one term alt (an FTS5 string, as postings_add takes it) stands for: its single token as a
 * analyzes a query's string, copied to term[0..cap) NUL-terminated. Returns its length, or -1
 * when alt is a prefix, not one quoted string, or not exactly one token that fits. */
int postings_alt_term(atlas_analyzer *a, const char *alt, char *term, int cap);

/* Called for each row the expression matches, in rowid order, with the record's row_* set and
 * the row's score. */
typedef void (*postings_row_fn)(void *ctx, sqlite3_int64 rowid, double score);

/* Evaluates the expression: the rows holding a phrase of every positive group (all_groups) or of
 * any, and of no negated group, each scored and recorded in rec (whose sizes must be set) as
 * atlas_rank would, the first cap of them in rowid order (the rows FTS5 would give first). Returns the number of rows, or -1 when the expression is one the held form
 * does not evaluate (a postings_add refused a phrase) or rec is not ready for it: not an error
 * code, a count the caller does not have (it then asks FTS5). */
int postings_run(postings_query *q, match_record *rec, bool all_groups, long cap, postings_row_fn fn,
		 void *ctx);

/* Called for each row postings_count finds, in rowid order. */
typedef void (*postings_doc_fn)(void *ctx, sqlite3_int64 rowid);

/* The rows postings_run would give, neither scored nor recorded: fn called for each of the first
 * cap. Returns their number, or -1 when the expression is one the held form does not evaluate. */
int postings_count(postings_query *q, bool all_groups, long cap, postings_doc_fn fn, void *ctx);

/* Records in rec the matches of row doc (1..ndocs) as postings_run records a row the expression
 * (any group) gives, rec's row_* set: row_n -1 when the row holds a negated phrase (FTS5 gives no
 * such row), its instances otherwise (none when it holds no phrase). Returns 0, or -1 as
 * postings_run does (the caller then asks FTS5). */
int postings_record(postings_query *q, match_record *rec, int doc);

#endif
