/* body_chunks.c - long section bodies stored in chunks cut between tokens (body_chunks.h). */
#include "body_chunks.h"

#include <sqlite3.h>
#include <stdlib.h>

#include "grow.h"

/* True when c is ASCII white space: a cut after it splits no token and no identifier. */
static bool white(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* Makes room for n chunks in b. Returns 0 or ATLAS_ENOMEM. */
static int reserve(body_chunks *b, int n)
{
	if (n <= b->cap)
		return 0;
	int cap = n * 2;
	if (atlas_resize(&b->ends, (size_t)cap, sizeof(*b->ends)) ||
	    atlas_resize(&b->units, (size_t)cap, sizeof(*b->units)))
		return ATLAS_ENOMEM;
	b->cap = cap;
	return 0;
}

/* The chunks of body[0..n) into b (ends, units): cut at the first token at least BODY_CHUNK_BYTES
 * past the chunk's start that follows white space. Returns their number (1: no cut found), or -1
 * out of memory. */
static int cut(body_chunks *b, const char *body, size_t n)
{
	const atlas_span *sp = b->spans.sp;
	int count = b->spans.count, nchunks = 0, first = 0;
	size_t start = 0;
	for (int k = 1; k < count; k++) {
		size_t at = (size_t)sp[k].start;
		if (at < start + BODY_CHUNK_BYTES || at >= n || !white(body[at - 1]))
			continue;
		if (reserve(b, nchunks + 2))
			return -1;
		b->ends[nchunks] = at;
		b->units[nchunks++] = (unsigned)(k - first);
		start = at;
		first = k;
	}
	if (reserve(b, nchunks + 1))
		return -1;
	b->ends[nchunks] = n;
	b->units[nchunks++] = (unsigned)(count - first);
	return nchunks;
}

int body_compress(body_chunks *b, atlas_compressor *z, atlas_analyzer *a, strbuf *out, const char *body,
		  size_t n, int tokens, atlas_error *err)
{
	if (n < BODY_CHUNKED || n > (size_t)0x7fffffff)
		return atlas_compress(z, out, body, n, err);
	b->spans.count = 0;
	int rc = atlas_spans_add(&b->spans, a, body, (int)n, 0, -1);
	if (rc == SQLITE_NOMEM)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory cutting a section into chunks");
	if (rc || b->spans.count != tokens)
		return atlas_compress(z, out, body, n, err);
	int nchunks = cut(b, body, n);
	if (nchunks < 0)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory cutting a section into chunks");
	/* each chunk analyzed alone holds the tokens counted for it, or the body stays whole */
	for (int i = 0; i < nchunks && nchunks > 1; i++) {
		size_t at = i ? b->ends[i - 1] : 0;
		int got = -1;
		rc = atlas_spans_count(a, body + at, (int)(b->ends[i] - at), &got);
		if (rc == SQLITE_NOMEM)
			return atlas_error_set(err, ATLAS_ENOMEM, "out of memory cutting a section into chunks");
		if (rc || got != (int)b->units[i])
			nchunks = 1;
	}
	if (nchunks < 2)
		return atlas_compress(z, out, body, n, err);
	return atlas_compress_chunks(z, out, body, b->ends, b->units, nchunks, err);
}

void body_chunks_free(body_chunks *b)
{
	if (!b)
		return;
	atlas_span_list_free(&b->spans);
	free(b->ends);
	free(b->units);
	b->ends = NULL;
	b->units = NULL;
	b->cap = 0;
}
