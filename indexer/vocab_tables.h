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

/* Lists the keys of m with their counts (df[value], and cf[value] when cf is not NULL) in a new
 * array *rows (*n of them, owned by the caller: vocab_rows_free), sorted by key: appending to a
 * B-tree in key order costs far less than inserting at random places. The rows' terms are m's
 * keys, not copies (tens of thousands of small strings, copied, were a tenth of the build's peak
 * memory): m's keys must be in an arena (m->arena), which the rows then need for as long as they
 * are used, after m itself is freed. Returns 0, or ATLAS_ENOMEM with err naming what (e.g. "the
 * vocabulary"), or ATLAS_EINVAL when m has no arena; *rows is then NULL and *n 0. */
int vocab_rows_sorted(vocab_row **rows, int *n, const strmap *m, const int *df, const int *cf,
		      const char *what, atlas_error *err);

/* Writes vocab[0..nvocab) into the vocab table of db and stems[0..nstems) into its stems table
 * (atlas_schema_signals_sql), within the caller's transaction; path names db in messages. Returns
 * 0, or an ATLAS_E* code with err set (atlas_sql_error). */
int vocab_rows_write(sqlite3 *db, const char *path, const vocab_row *vocab, int nvocab,
		     const vocab_row *stems, int nstems, atlas_error *err);

/* Frees the array of rows (not their terms, which are the arena's). Accepts NULL. */
void vocab_rows_free(vocab_row *rows);

#endif
