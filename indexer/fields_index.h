/* fields_index.h - the fields and titles full-text tables (each page's title, keywords, headings
 * and description; its title alone), written into whichever database holds them. */
#ifndef ATLAS_FIELDS_INDEX_H
#define ATLAS_FIELDS_INDEX_H

#include <stdbool.h>
#include <sqlite3.h>

#include "corpus.h"
#include "error.h"

/* Indexes every page of c into the fields and titles tables of db (created with
 * atlas_schema_fields_sql, the "atlas" tokenizer registered on db), in doc id order (id_of: page
 * index -> doc id, 1 to c->npages), within the caller's transaction. FTS5 gathers up to hash_bytes
 * of pending terms per table before writing a segment, and merges nothing until the end; with
 * merge set, each table's segments are then merged into one. file names db in messages. Returns
 * 0, or a negative ATLAS_E* code with err set (naming file and the page). */
int fields_index_write(sqlite3 *db, const char *file, const corpus *c, const int *id_of,
		       long long hash_bytes, bool merge, atlas_error *err);

#endif
