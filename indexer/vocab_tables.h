/* vocab_tables.h - the vocab and stems tables: the corpus's words and stems with their counts, kept
 * sorted in memory while the read-next thread works, then written in key order. */
#ifndef ATLAS_VOCAB_TABLES_H
#define ATLAS_VOCAB_TABLES_H

#include <sqlite3.h>

#include "error.h"
#include "strmap.h"

/* One row of vocab (term, df, cf) or of stems (stem, df; cf unused). */
typedef struct vocab_row {
	const char *term; /* the key of the map the row was made from, in that map's arena */
	int df, cf;
} vocab_row;

/* Turns m into the array *rows (*n of them, owned by the caller: vocab_rows_free) of its keys with
 * their counts (df[value], and cf[value] when cf is not NULL), sorted by key: appending to a B-tree
 * in key order costs far less than inserting at random places. The rows are made in m's slots, cut
 * to size (no second array beside the map), and their terms are m's keys, not copies (tens of
 * thousands of small strings, copied, were a tenth of the build's peak memory): m's keys must be in
 * an arena (m->arena), which the rows then need for as long as they are used. m is left empty (its
 * arena as it was). Returns 0, or ATLAS_EINVAL with err naming what (e.g. "the vocabulary") when m
 * has no arena (*rows then NULL, *n 0, m untouched). */
int vocab_rows_take(vocab_row **rows, int *n, strmap *m, const int *df, const int *cf,
		    const char *what, atlas_error *err);

/* Writes vocab[0..nvocab) into the vocab table of db and stems[0..nstems) into its stems table
 * (atlas_schema_signals_sql), within the caller's transaction; path names db in messages. Returns
 * 0, or an ATLAS_E* code with err set (atlas_sql_error). */
int vocab_rows_write(sqlite3 *db, const char *path, const vocab_row *vocab, int nvocab,
		     const vocab_row *stems, int nstems, atlas_error *err);

/* Frees the array of rows (not their terms, which are the arena's). Accepts NULL. */
void vocab_rows_free(vocab_row *rows);

#endif
