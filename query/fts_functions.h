/* fts_functions.h - FTS5 auxiliary functions registered on the engine's connection:
 *   atlas_phrases(tbl)              bitmask of the MATCH expression's phrases found in the row
 *   atlas_rank(tbl, idfs)           BM25F over the weighted columns with the engine's IDFs
 *   atlas_section_score(tbl, ws)    a cheap section score from per-phrase weights
 *   atlas_snippet(tbl, col, n)      an n-token snippet with \1 \2 around matches
 *   atlas_section(tbl, ws)          score, heading and snippet of a section likely to be shown */
#ifndef ATLAS_FTS_FUNCTIONS_H
#define ATLAS_FTS_FUNCTIONS_H

#include <sqlite3.h>

/* How many sections of a page atlas_section keeps text for. */
#define SECTION_KEEP 4

/* atlas_section's state: the scores kept so far; the engine sets n = 0 before each page. */
typedef struct section_keep {
	int n;
	double score[SECTION_KEEP];
} section_keep;

/* Registers the functions on db (whose FTS5 module must be loaded); atlas_section uses keep,
 * which must outlive the connection. Returns 0 or -1. */
int fts_functions_register(sqlite3 *db, section_keep *keep);

#endif
