/* spans.h - the byte ranges of a text's tokens, one per FTS5 position, packed as varints: what
 * lets the query side highlight a section's matches without tokenizing its text again. */
#ifndef ATLAS_SPANS_H
#define ATLAS_SPANS_H

#include "analyzer.h"
#include "strbuf.h"

/* One token: text[start, end) is its source, start <= end. */
typedef struct atlas_span {
	int start;
	int end;
} atlas_span;

/* A span list being written: tokens are appended part by part (a heading, then a body), each
 * part's offsets relative to its own text plus a base. */
typedef struct atlas_spans_writer {
	strbuf *out;     /* the packed bytes, appended to */
	int prev_end;    /* the previous token's end in the current part */
	int count;       /* tokens written to the current part */
} atlas_spans_writer;

/* Starts a new part: offsets of the tokens that follow are encoded relative to the part. */
void atlas_spans_part(atlas_spans_writer *w);

/* Appends the spans of every position of text[0..n), as the analyzer's aux mode (one token per
 * FTS5 position) gives them, each shifted by base. Returns 0, or an SQLite error code from the
 * analyzer, or SQLITE_NOMEM when out could not grow. */
int atlas_spans_add(atlas_spans_writer *w, atlas_analyzer *a, const char *text, int n, int base);

/* Decodes the first max spans of blob[0..n) into out (which holds max). Returns the number of
 * spans decoded (fewer than max when the blob ends), or -1 when the blob is malformed (a varint
 * running past its end, or an offset out of int range). Parts are told apart by the caller, who
 * knows their token counts: the first span of a part is relative to 0. */
int atlas_spans_decode(atlas_span *out, int max, const unsigned char *blob, int n, const int *part_sizes,
		       int nparts);

#endif
