/* spans.c - token byte ranges packed as varints: written by the indexer, read for highlighting. */
#include "spans.h"

#include <limits.h>
#include <stdlib.h>

/**************************************************************************************************
** Varints: 7 bits a byte, low bits first, high bit set on every byte but the last.
*/

static int put_varint(strbuf *out, unsigned v)
{
	char b[5];
	int n = 0;
	do {
		b[n] = (char)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] = (char)(b[n] | 0x80);
		n++;
	} while (v);
	return strbuf_append(out, b, (size_t)n);
}

/* Reads one varint at *p (before end); returns 0 and advances *p, or -1 when it runs past end or
 * past 32 bits. */
static int get_varint(const unsigned char **p, const unsigned char *end, unsigned *v)
{
	unsigned r = 0;
	for (int shift = 0; shift < 35; shift += 7) {
		if (*p >= end)
			return -1;
		unsigned char b = *(*p)++;
		r |= (unsigned)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/**************************************************************************************************
** Writing. Each token is the gap from the previous token's end (zigzag, since identifier parts
** may overlap a compound's range) and its length.
*/

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
	if (w->total && w->total % ATLAS_SPANS_EVERY == 0) {
		if (w->nchecks + 2 > w->capchecks) {
			int cap = w->capchecks ? w->capchecks * 2 : 32;
			int *n = realloc(w->checks, (size_t)cap * sizeof(int));
			if (!n)
				return w->rc = SQLITE_NOMEM;
			w->checks = n;
			w->capchecks = cap;
		}
		w->checks[w->nchecks++] = (int)w->stream.len;
		w->checks[w->nchecks++] = w->prev_end;
	}
	int gap = s - w->prev_end;
	unsigned zz = gap >= 0 ? (unsigned)gap << 1 : ((unsigned)(-gap) << 1) - 1;
	unsigned v[2] = { zz, (unsigned)(e - s) };
	/* two varints of at most 5 bytes each, written in place */
	if (strbuf_reserve(&w->stream, 10))
		return w->rc = SQLITE_NOMEM;
	unsigned char *out = (unsigned char *)w->stream.buf + w->stream.len;
	for (int k = 0; k < 2; k++) {
		unsigned x = v[k];
		while (x >= 0x80) {
			*out++ = (unsigned char)(x | 0x80);
			x >>= 7;
		}
		*out++ = (unsigned char)x;
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
	if (!rc && put_varint(out, (unsigned)(w->nchecks / 2)))
		rc = SQLITE_NOMEM;
	for (int i = 0; !rc && i < w->nchecks; i++)
		if (put_varint(out, (unsigned)w->checks[i]))
			rc = SQLITE_NOMEM;
	if (!rc && strbuf_append(out, strbuf_str(&w->stream), w->stream.len))
		rc = SQLITE_NOMEM;
	strbuf_reset(&w->stream);
	w->nchecks = w->total = w->prev_end = w->count = 0;
	w->rc = 0;
	return rc;
}

void atlas_spans_writer_free(atlas_spans_writer *w)
{
	if (!w)
		return;
	strbuf_free(&w->stream);
	free(w->checks);
	w->checks = NULL;
	w->nchecks = w->capchecks = 0;
}

/**************************************************************************************************
** Reading.
*/

int atlas_spans_decode(atlas_span *out, int from, int to, const unsigned char *blob, int n,
		       const int *part_sizes, int nparts)
{
	if (!blob || n <= 0 || from < 0 || to < from)
		return -1; /* every list has at least its checkpoint count */
	const unsigned char *p = blob, *end = blob + n;
	unsigned nchecks;
	if (get_varint(&p, end, &nchecks))
		return -1;
	/* the last checkpoint at or before from: the token it is at, where, and the previous end */
	unsigned c = (unsigned)(from / ATLAS_SPANS_EVERY);
	if (c > nchecks)
		c = nchecks;
	unsigned offset = 0, prev = 0;
	for (unsigned i = 0; i < c; i++)
		if (get_varint(&p, end, &offset) || get_varint(&p, end, &prev))
			return -1;
	/* the later checkpoints skipped unread: a varint ends at its first byte below 0x80 */
	unsigned long left = 2ul * (nchecks - c);
	for (; left && p < end; p++)
		left -= !(*p & 0x80);
	if (left)
		return -1;
	const unsigned char *stream = p;
	if (offset > (unsigned)(end - stream))
		return -1;
	p = stream + offset;
	int tok = (int)c * ATLAS_SPANS_EVERY, part = 0, in_part = tok;
	while (part < nparts && in_part >= part_sizes[part] && part_sizes[part] >= 0) {
		in_part -= part_sizes[part];
		part++;
	}
	long prev_end = (long)prev;
	int got = 0;
	while (tok < to && p < end) {
		while (part < nparts && in_part == part_sizes[part]) {
			part++;
			in_part = 0;
			prev_end = 0;
		}
		unsigned zz, len;
		if (end - p >= 2 && !((p[0] | p[1]) & 0x80)) {
			/* the common case: a gap and a length of one byte each */
			zz = p[0];
			len = p[1];
			p += 2;
		} else if (get_varint(&p, end, &zz) || get_varint(&p, end, &len))
			return -1;
		long gap = (zz & 1) ? -(long)((zz + 1) >> 1) : (long)(zz >> 1);
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
