/* postings_index.h - writes the postings table: every term of the fts table with its pages and
 * their matches per column, compressed by blocks with each block's largest BM25F frequency
 * (common/blockpost.h), read from FTS5's index once it is complete. */
#ifndef ATLAS_POSTINGS_INDEX_H
#define ATLAS_POSTINGS_INDEX_H

#include <sqlite3.h>

#include "error.h"

/* Fills the postings table of db (the index file file, named in messages; empty, created by
 * atlas_schema_sql) from its fts table, whose rows are 1..ndocs, in the open transaction. What was
 * written so far is committed first: a second thread reads FTS5's index through a connection of its
 * own, the two walking ranges of terms in turn, and the terms are inserted in order once both are
 * done. Returns 0, ATLAS_ENOMEM, ATLAS_ESQL, or ATLAS_EINVAL when FTS5's index holds a row or
 * column the table cannot (err says which). */
int postings_index_write(sqlite3 *db, const char *file, int ndocs, atlas_error *err);

#endif
