/* signals.h - "read next" candidates computed at index time from the guides, the links and
 * prerequisites, the taxonomy, the text (more-like-this) and the graph (personalized PageRank). */
#ifndef ATLAS_SIGNALS_H
#define ATLAS_SIGNALS_H

#include <sqlite3.h>

#include "corpus.h"
#include "error.h"

/* Signal names as stored in next_candidates.signal. */
#define SIG_GUIDE_NEXT "guide_next"     /* detail: guide id, step number, guide title */
#define SIG_GUIDE_PREV "guide_prev"
#define SIG_GUIDE_START "guide_start"   /* from a guide to its first step */
#define SIG_LINK_OUT "link_out"         /* the source page links to the candidate */
#define SIG_LINK_IN "link_in"           /* the candidate links to the source page */
#define SIG_BUILDS_ON "builds_on"       /* the candidate lists the source as a prerequisite */
#define SIG_PREREQ "prereq"             /* the source lists the candidate as a prerequisite */
#define SIG_TOPIC "same_topic"          /* detail: the shared topic path */
#define SIG_TOPIC_START "topic_member"  /* from a topic page to a member explainer */
#define SIG_SIMILAR "similar"           /* weight: cosine; detail: the shared terms */
#define SIG_GRAPH "graph"               /* weight: personalized PageRank, normalized to the best */

typedef struct signals signals;

/* Starts computing, in a thread of its own (beside the full-text indexing), every candidate for
 * every page of c (doc ids from id_of, indexed by page) and the vocabulary (folded surface words
 * and identifiers with document and collection frequencies). The candidates are written to a new
 * file at rows_path (replaced if present) as they are computed, and when done that file holds the
 * index's own tables for them (atlas_schema_signals_sql). c and id_of must stay unchanged until
 * signals_finish, but for the section bodies: each page's are released (corpus_release_bodies)
 * once read. db is used only now, to find the tokenizer. On success *out owns the computation
 * (free with signals_free); returns 0 or a negative ATLAS_E* code with err set. */
int signals_start(signals **out, sqlite3 *db, corpus *c, const int *id_of, const char *rows_path,
		  atlas_error *err);

/* Waits for the computation. On success sets *rows_path to the file holding its tables (owned by
 * s, valid until signals_free), *count to the number of candidates and *terms to the vocabulary
 * size, and returns 0; else a negative ATLAS_E* code with err set. */
int signals_finish(signals *s, const char **rows_path, int *count, int *terms, atlas_error *err);

/* Waits for the computation if still running, removes its file and frees it. Accepts NULL. */
void signals_free(signals *s);

#endif
