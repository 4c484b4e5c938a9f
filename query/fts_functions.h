/* fts_functions.h - the FTS5 auxiliary function registered on the engine's connection:
 *   atlas_rank(tbl)         BM25F over the weighted columns with the engine's IDFs; it also leaves,
 *                           in the engine's match record, which phrases matched the row and where,
 *                           so that sections and snippets need no second look at the index. */
#ifndef ATLAS_FTS_FUNCTIONS_H
#define ATLAS_FTS_FUNCTIONS_H

#include <sqlite3.h>
#include <stdbool.h>

#include "schema.h"

/* Phrases of a MATCH expression scored one by one (with a mask bit each for the first 63). */
#define FTS_MAX_PHRASES 64

/* One match of a phrase in a row: the phrase's index in the MATCH expression, the column, and
 * the token position in that column. */
typedef struct fts_inst {
	int off;
	short phrase;
	short col;
} fts_inst;

/* What atlas_rank leaves for the engine. The arena holds the matches of every row scored since
 * the engine reset it (ninst = 0, once per query); row_* describe the row scored last, read by
 * the engine right after each step (the statement has no ORDER BY, so rows are scored one by one
 * as they are returned). */
typedef struct match_record {
	fts_inst *inst;
	int ninst, cap;
	int limit;                 /* matches kept in all: past it a row is left unrecorded */
	sqlite3_int64 row_phrases; /* bit p: phrase p (< 63) matched the row */
	sqlite3_int64 row_title, row_keywords; /* likewise, in the title, in the keywords */
	sqlite3_int64 row_headings; /* likewise, in the section headings */
	sqlite3_int64 row_defs;    /* likewise, in the names the page defines */
	int row_start, row_n;      /* the row's matches: inst[row_start .. + row_n), row_n -1 if unrecorded */
	int phrase_size[FTS_MAX_PHRASES]; /* tokens of each phrase, from the last row scored */
	/* the tokens of each column of every row, sizes[(rowid - 1) * FTS_NCOLS + col], read once by
	 * the engine (NULL, or a row past nrows: asked of FTS5) */
	const int *sizes;
	int nrows;
	double avg[FTS_NCOLS];     /* average tokens per column, with sizes */
	/* set by the engine before each query: the IDF of each phrase of the expression */
	double idf[FTS_MAX_PHRASES];
	int nidf;
	/* phrases [word_from, complete_from) are the word being typed itself, [complete_from,
	 * complete_to) its completions: a row that matches the word itself gets nothing for its
	 * completions (all 0: no such word) */
	int word_from, complete_from, complete_to;
} match_record;

/* One row being scored (BM25F over the weighted columns, rank.h's constants, the record's IDFs)
 * and recorded: rank_row_begin, then for each phrase of the expression in order, each of its
 * matches in the row with rank_row_inst (column, then position, ascending) and
 * rank_row_phrase_end; rank_row_end gives the score. atlas_rank scores FTS5's rows so, and the
 * engine its own (postings.h), so the two score alike. The record's row_* describe the row once
 * it ends. */
typedef struct rank_row {
	match_record *rec;
	int len[FTS_NCOLS];        /* tokens of each column of the row */
	const double *avg;         /* average tokens per column */
	double score;
	int tf[FTS_NCOLS];         /* the current phrase's matches per column */
	bool any, recorded;
	bool word_matched;         /* a phrase of the word being typed itself matched the row */
} rank_row;

void rank_row_begin(rank_row *r, match_record *rec, const int *len, const double *avg);
void rank_row_inst(rank_row *r, int p, int col, int off);
void rank_row_phrase_end(rank_row *r, int p);
double rank_row_end(rank_row *r);

/* Frees the record's arena. Accepts NULL. */
void match_record_free(match_record *r);

/* Registers atlas_rank on db (whose FTS5 module must be loaded); rec must outlive the connection.
 * Returns 0, or ATLAS_ESQL when FTS5 cannot be reached or refuses the function (the caller writes
 * the message). */
int fts_functions_register(sqlite3 *db, match_record *rec);

#endif
