/* spans.h - the byte ranges of a text's tokens, one per FTS5 position, as the analyzer's aux mode
 * finds them: what lets the query side highlight a section's matches (positions from the index)
 * in its text. They are found again from the text when needed, not stored. */
#ifndef ATLAS_SPANS_H
#define ATLAS_SPANS_H

#include "analyzer.h"

/* One token: text[start, end) is its source, start <= end. */
typedef struct atlas_span {
	int start;
	int end;
} atlas_span;

/* A growing list of spans. Initialize with ATLAS_SPAN_LIST_INIT; free with atlas_span_list_free. */
typedef struct atlas_span_list {
	atlas_span *sp;
	int count, cap;
} atlas_span_list;

#define ATLAS_SPAN_LIST_INIT                                                                       \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* Appends to l the span of every position of text[0..n) (one per position, as the analyzer's aux
 * mode gives them), each shifted by base, stopping once l holds max spans (max < 0: no limit; the
 * analysis then ends early, when the text is ASCII apart from separators). Returns 0, an SQLite
 * error code from the analyzer, or SQLITE_NOMEM (what was appended before stays). */
int atlas_spans_add(atlas_span_list *l, atlas_analyzer *a, const char *text, int n, int base,
		    int max);

/* The number of positions of text[0..n) into *count. Returns 0 or an SQLite error code. */
int atlas_spans_count(atlas_analyzer *a, const char *text, int n, int *count);

/* Frees the list's array and empties it. Accepts NULL. */
void atlas_span_list_free(atlas_span_list *l);

#endif
