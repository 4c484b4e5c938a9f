/* spans.c - token byte ranges packed a byte each: written by the indexer, read for highlighting. */
#include "spans.h"

#include <limits.h>
#include <stdlib.h>

#include "varint.h"

/**************************************************************************************************
** Writing. Each token is the gap from the previous token's end and its length: one byte (the
** gap in the top two bits, the length in the low SPAN_LEN_BITS) when the gap is 0 to 3 and the
** length below 63,
** as nearly every word's is; otherwise SPAN_ESCAPE, then the gap (zigzag, since identifier parts
** may overlap a compound's range) and the length as varints.
*/

#define SPAN_LEN_BITS 6
#define SPAN_LEN_MASK ((1u << SPAN_LEN_BITS) - 1)
#define SPAN_ESCAPE 0xffu

void atlas_spans_part(atlas_spans_writer *w)
{
	w->prev_end = 0;
	w->count = 0;
}

typedef struct add_ctx {
	atlas_spans_writer *w;
	int base;
} add_ctx;

/* Appends the token at [s, e) of the current part. Returns 0 or SQLITE_NOMEM (kept in w->rc). */
static int put_span(atlas_spans_writer *w, int s, int e)
{
	int gap = s - w->prev_end;
	unsigned len = (unsigned)(e - s);
	/* an escape and two varints of at most 5 bytes each, written in place */
	if (strbuf_reserve(&w->stream, 11))
		return w->rc = SQLITE_NOMEM;
	unsigned char *out = (unsigned char *)w->stream.buf + w->stream.len;
	unsigned code = (unsigned)gap << SPAN_LEN_BITS | len;
	if (gap >= 0 && gap <= 3 && len < SPAN_LEN_MASK && code != SPAN_ESCAPE) {
		*out++ = (unsigned char)code;
	} else {
		*out++ = SPAN_ESCAPE;
		unsigned zz = gap >= 0 ? (unsigned)gap << 1 : ((unsigned)(-gap) << 1) - 1;
		unsigned v[2] = { zz, len };
		for (int k = 0; k < 2; k++) {
			unsigned x = v[k];
			while (x >= 0x80) {
				*out++ = (unsigned char)(x | 0x80);
				x >>= 7;
			}
			*out++ = (unsigned char)x;
		}
	}
	w->stream.len = (size_t)((char *)out - w->stream.buf);
	w->stream.buf[w->stream.len] = '\0';
	w->prev_end = e;
	w->count++;
	w->total++;
	return SQLITE_OK;
}

static int add_token(void *ctx, int tflags, const char *tok, int ntok, int start, int end)
{
	add_ctx *c = ctx;
	(void)tok;
	(void)ntok;
	if (tflags & FTS5_TOKEN_COLOCATED)
		return SQLITE_OK;
	return put_span(c->w, c->base + start, c->base + end);
}

int atlas_spans_add(atlas_spans_writer *w, atlas_analyzer *a, const char *text, int n, int base)
{
	add_ctx c = { w, base };
	int rc = atlas_analyze(a, FTS5_TOKENIZE_AUX, text, n, add_token, &c);
	return w->rc ? w->rc : rc;
}

int atlas_spans_add_known(atlas_spans_writer *w, const atlas_span *sp, int count, int base)
{
	for (int i = 0; i < count && !w->rc; i++)
		put_span(w, base + sp[i].start, base + sp[i].end);
	return w->rc;
}

int atlas_spans_finish(atlas_spans_writer *w, strbuf *out)
{
	strbuf_reset(out);
	int rc = w->rc;
	if (!rc && strbuf_append(out, w->stream.buf ? w->stream.buf : "", w->stream.len))
		rc = SQLITE_NOMEM;
	strbuf_reset(&w->stream);
	w->total = w->prev_end = w->count = 0;
	w->rc = 0;
	return rc;
}

void atlas_spans_writer_free(atlas_spans_writer *w)
{
	if (!w)
		return;
	strbuf_free(&w->stream);
}

/**************************************************************************************************
** Reading.
*/

int atlas_spans_decode(atlas_span *out, int from, int to, const unsigned char *blob, int n,
		       const int *part_sizes, int nparts)
{
	if (n < 0 || (!blob && n) || from < 0 || to < from)
		return -1;
	const unsigned char *p = blob, *end = blob + n;
	int tok = 0, part = 0, in_part = 0, got = 0;
	long prev_end = 0;
	while (tok < to && p < end) {
		while (part < nparts && in_part == part_sizes[part]) {
			part++;
			in_part = 0;
			prev_end = 0;
		}
		long gap;
		unsigned len;
		if (*p != SPAN_ESCAPE) {
			gap = *p >> SPAN_LEN_BITS;
			len = *p & SPAN_LEN_MASK;
			p++;
		} else {
			unsigned zz;
			p++;
			if (atlas_varint_get(&p, end, &zz) || atlas_varint_get(&p, end, &len))
				return -1;
			gap = (zz & 1) ? -(long)((zz + 1) >> 1) : (long)(zz >> 1);
		}
		long s = prev_end + gap, e = s + (long)len;
		if (s < 0 || e > INT_MAX)
			return -1;
		if (tok >= from) {
			out[got].start = (int)s;
			out[got].end = (int)e;
			got++;
		}
		prev_end = e;
		tok++;
		in_part++;
	}
	return got;
}
