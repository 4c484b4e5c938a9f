/* body_chunks.h - a long section's body stored in chunks cut between tokens, so that a snippet
 * reads and analyzes only the chunk its window is in (common/compress.h, atlas_decompress_units). */
#ifndef ATLAS_BODY_CHUNKS_H
#define ATLAS_BODY_CHUNKS_H

#include <stddef.h>

#include "analyzer.h"
#include "compress.h"
#include "error.h"
#include "spans.h"
#include "strbuf.h"

/* A body of at least BODY_CHUNKED bytes is stored in chunks of about BODY_CHUNK_BYTES. */
#define BODY_CHUNKED 2048
#define BODY_CHUNK_BYTES 1024

/* What body_compress reuses from one body to the next. Initialize with BODY_CHUNKS_INIT; free
 * with body_chunks_free. */
typedef struct body_chunks {
	atlas_span_list spans;
	size_t *ends;
	unsigned *units;
	int cap;
} body_chunks;

#define BODY_CHUNKS_INIT { ATLAS_SPAN_LIST_INIT, NULL, NULL, 0 }

/* Compresses body[0..n), which holds tokens positions (the section's lead and body tokens), into
 * out with z: in chunks whose units are their tokens when it is long, each cut at the start of a
 * token that follows ASCII white space and checked to hold, analyzed alone with a, the tokens the
 * whole body holds there; whole when short, or when the analysis does not find tokens positions
 * or a chunk's count differs. Returns 0, or ATLAS_ENOMEM with err set. */
int body_compress(body_chunks *b, atlas_compressor *z, atlas_analyzer *a, strbuf *out, const char *body,
		  size_t n, int tokens, atlas_error *err);

/* Frees b's arrays. Accepts NULL. */
void body_chunks_free(body_chunks *b);

#endif
