/* token_counts.h - how many positions of the fts columns each section's parts hold, counted from
 * the spans the tokenizer found while FTS5 indexed the page's row. */
#ifndef ATLAS_TOKEN_COUNTS_H
#define ATLAS_TOKEN_COUNTS_H

#include <stdbool.h>

#include "analyzer.h"
#include "corpus.h"
#include "error.h"
#include "spans.h"
#include "strbuf.h"

/**************************************************************************************************
** Token counts, as the full-text index saw them.
**
** A section's parts (heading, lead, body) hold so many positions of the fts columns. The tokenizer
** finds the positions' spans (byte ranges) while FTS5 indexes the page's columns: a tap
** (atlas_tap) keeps those of the title, headings, description and body columns, and each
** section's parts are counted from them, so that a page is analyzed once, not once more for its
** counts. A part whose column was not seen, or whose text is not the column's, is analyzed on its
** own; either way the counts are the same.
*/

/* How many positions of the fts columns a section holds (see the sections table in schema.c). */
typedef struct section_tokens {
	int heading, lead, body;
} section_tokens;

enum { COL_TITLE, COL_HEADINGS, COL_DESCRIPTION, COL_BODY, NCOLS };

/* One column of the row being inserted: the text bound to it and the spans the tokenizer found. */
typedef struct column_spans {
	const char *text;
	int n;
	bool seen;      /* analyzed since the row's insert began, every span kept */
	atlas_span *sp;
	int count, cap;
	int next;       /* the first span not yet given to a section */
} column_spans;

typedef struct row_tap {
	atlas_tap tap;
	bool armed;     /* the fts row's insert is running */
	column_spans col[NCOLS];
	column_spans *cur;
} row_tap;

/* Arms t for the analyzer (atlas_analyzer_set_tap(db, &t->tap, ...)); free with tap_free. */
void tap_init(row_tap *t);

/* Starts a row: the texts its columns will be given. */
void tap_row(row_tap *t, const char *title, const char *headings, const char *description,
	     const char *body, size_t nbody, size_t nheadings);
void tap_free(row_tap *t);

/* Where a page's sections are in its fts columns: section s's heading at heads_at[s] of the
 * headings column (s > 0) and the body after its lead at body_at[s] of the body column, with its
 * length body_n[s] there. */
typedef struct section_places {
	int *heads_at, *body_at, *body_n;
	int cap;
} section_places;

/* Makes room in places for the sections of a page of nsecs. Returns 0, or ATLAS_ENOMEM when out of
 * memory (places then as it was, but for the arrays grown). */
int places_reserve(section_places *places, int nsecs);

/* Appends page p's headings (but the lead's) to heads and its bodies (the lead's without the
 * description) to body, one a line, and where each section's are into places (room made by
 * places_reserve). Cannot fail (a buffer out of memory is marked so). */
void join_sections(const page *p, strbuf *heads, strbuf *body, section_places *places);

/* Counts the positions of section s of p in each of its parts (see section_tokens): its heading
 * (the title for the lead section), its lead (the description, lead section only) and its body.
 * Returns 0 or an error code with err set, naming file. */
int count_section_tokens(atlas_error *err, const char *file, atlas_analyzer *a, section_tokens *tk,
			 const page *p, int s, row_tap *t, const section_places *pl);

#endif
