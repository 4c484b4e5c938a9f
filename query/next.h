/* next.h - what the engine (engine.c) and read next (next.c) hand each other: the index read next
 * reads, and read next's state the engine holds. Neither sees more of the other. */
#ifndef ATLAS_NEXT_H
#define ATLAS_NEXT_H

#include <sqlite3.h>
#include <stdbool.h>

#include "engine.h"
#include "error.h"

/* What read next reads of an open index: its connection and its pages (both the engine's, valid
 * while it is open), and whether the index was read into memory (its candidates are then held
 * when few enough). */
typedef struct next_index {
	sqlite3 *db;
	const atlas_doc *docs;
	int ndocs;
	bool in_memory;
} next_index;

/* Read next's state over one open index: its statements, weights, similar terms, held candidates. */
typedef struct next_state next_state;

/* Opens read next over ix: its statements prepared, the read-next weights (table next_fit, rank.h's
 * defaults for those it lacks) and similar_terms' names loaded, a small index's candidates held.
 * Sets *out (the caller frees it with next_state_free, before closing ix->db). Returns 0, or
 * ATLAS_ESQL or ATLAS_ENOMEM with err set and *out NULL. */
int next_state_open(next_state **out, const next_index *ix, atlas_error *err);
/* Frees a state and its statements. Accepts NULL. */
void next_state_free(next_state *ns);

/* The read-next state of engine e (engine.c), opened with it. */
next_state *engine_next(const atlas_engine *e);

#endif
