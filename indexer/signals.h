/* signals.h - "read next" candidates computed at index time from the guides, the links and
 * prerequisites, the taxonomy, the text (more-like-this) and the graph (personalized PageRank). */
#ifndef ATLAS_SIGNALS_H
#define ATLAS_SIGNALS_H

#include <sqlite3.h>
#include <stdbool.h>

#include "corpus.h"
#include "error.h"
#include "next_rows.h"

typedef struct signals signals;

/* Starts computing, in a thread of its own (beside the full-text indexing), every candidate for
 * every page of c (doc ids from id_of, indexed by page) and the vocabulary (folded surface words
 * and identifiers with document and collection frequencies). The candidates are written to a new
 * file at rows_path (replaced if present) as they are computed, and when done that file holds the
 * index's own tables for them (atlas_schema_signals_sql). Then, its core being free while the
 * full text is still being indexed on the other, the thread indexes the pages' fields and titles
 * into that file's fields and titles tables (fields_index.h: FTS5 gathers fields_hash bytes of
 * pending terms per table before a segment, and with fields_merge merges the segments into one at
 * the end). c and id_of must stay
 * unchanged until signals_finish, but for the section bodies: each page's are released
 * (corpus_release_bodies) once read. db is used only now, to find the tokenizer. On success *out
 * owns the computation (free with signals_free); returns 0 or a negative ATLAS_E* code with err
 * set. */
int signals_start(signals **out, sqlite3 *db, corpus *c, const int *id_of, const char *rows_path,
		  long long fields_hash, bool fields_merge, atlas_error *err);

/* Waits for the computation. On success sets *rows_path to the file holding its tables (owned by
 * s, valid until signals_free), *count to the number of candidates and *terms to the vocabulary
 * size, and returns 0; else a negative ATLAS_E* code with err set. */
int signals_finish(signals *s, const char **rows_path, int *count, int *terms, atlas_error *err);

/* Waits for the computation if still running, removes its file and frees it. Accepts NULL. */
void signals_free(signals *s);

#endif
