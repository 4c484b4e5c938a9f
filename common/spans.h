/* spans.h - the byte ranges of a text's tokens, one per FTS5 position, packed about a byte each:
 * what lets the query side highlight a section's matches without tokenizing its text again. */
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
 * part's offsets relative to its own text plus a base. Initialize with ATLAS_SPANS_WRITER_INIT;
 * free with atlas_spans_writer_free. */
typedef struct atlas_spans_writer {
	strbuf stream;   /* the tokens: gap from the previous end and length (see spans.c) */
	int total;       /* tokens written */
	int prev_end;    /* the previous token's end in the current part */
	int count;       /* tokens written to the current part */
	int rc;          /* first error, kept */
} atlas_spans_writer;

#define ATLAS_SPANS_WRITER_INIT { STRBUF_INIT, 0, 0, 0, 0 }

/* Starts a new part: offsets of the tokens that follow are encoded relative to the part. */
void atlas_spans_part(atlas_spans_writer *w);

/* Appends the spans of every position of text[0..n), as the analyzer's aux mode (one token per
 * FTS5 position) gives them, each shifted by base. Returns 0, or an SQLite error code from the
 * analyzer, or SQLITE_NOMEM when memory ran out. */
int atlas_spans_add(atlas_spans_writer *w, atlas_analyzer *a, const char *text, int n, int base);

/* Appends count spans already known (what the analyzer's document mode gave for the positions of
 * the text, as atlas_spans_add would find them), each shifted by base. Returns 0 or
 * SQLITE_NOMEM. */
int atlas_spans_add_known(atlas_spans_writer *w, const atlas_span *sp, int count, int base);

/* Writes the packed list into out (reset first): its tokens in order, empty when there are none.
 * Returns 0 or SQLITE_NOMEM. The writer is ready for a new list afterwards. */
int atlas_spans_finish(atlas_spans_writer *w, strbuf *out);

/* Frees the writer's buffers. Accepts NULL. */
void atlas_spans_writer_free(atlas_spans_writer *w);

/* Decodes tokens [from, to) of blob[0..n) into out[0 .. to - from); the tokens before from are
 * read, not stored (about a byte each). part_sizes[0..nparts) are the token counts of the parts
 * (the first span of a part is relative to 0). blob may be NULL when n is 0. Returns the number of
 * spans decoded (fewer when the blob ends early), or -1 when the blob is malformed (a varint
 * running past its end, an offset out of int range). */
int atlas_spans_decode(atlas_span *out, int from, int to, const unsigned char *blob, int n,
		       const int *part_sizes, int nparts);

#endif
