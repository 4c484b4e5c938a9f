/* schema.h - the layout of atlas.db, shared by the indexer (which writes it) and the query side. */
#ifndef ATLAS_SCHEMA_H
#define ATLAS_SCHEMA_H

#include <sqlite3.h>

#include "error.h"

/* Bumped whenever a table or column changes meaning; readers refuse other versions. */
#define ATLAS_SCHEMA_VERSION 17

/* Column order of the documents FTS5 table, and of the bm25() weights that go with it. defs holds
 * the names a page defines (the definition terms and API signatures of a built site's pages,
 * none for the Markdown corpus), last so that the fields table's columns keep the same numbers. */
enum { FTS_TITLE, FTS_KEYWORDS, FTS_HEADINGS, FTS_DESCRIPTION, FTS_BODY, FTS_DEFS, FTS_NCOLS };

/* The SQL that creates every table of a new index (FTS5 tables need the "atlas" tokenizer). */
extern const char atlas_schema_sql[];

/* The SQL that creates the read-next signals' tables (vocab, stems, next_candidates, similar_terms, next_fit) alone, the
 * same as in atlas_schema_sql: the signals are written to a file of their own, then copied. */
extern const char atlas_schema_signals_sql[];

/* The SQL that creates the fields and titles FTS5 tables alone, the same as in atlas_schema_sql
 * (they need the "atlas" tokenizer): they are indexed in the signals' file too, then copied. */
extern const char atlas_schema_fields_sql[];

/* Checks that db is an Atlas index of ATLAS_SCHEMA_VERSION: returns 0, or ATLAS_ESCHEMA with the
 * reason (not an index, another version) in err. */
int atlas_schema_check(sqlite3 *db, atlas_error *err);

#endif
