/* spans.c - token byte ranges packed as varints: written by the indexer, read for highlighting. */
#include "spans.h"

#include <limits.h>

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
	int rc;
} add_ctx;

static int add_token(void *ctx, int tflags, const char *tok, int ntok, int start, int end)
{
	add_ctx *c = ctx;
	(void)tok;
	(void)ntok;
	if (tflags & FTS5_TOKEN_COLOCATED)
		return SQLITE_OK;
	atlas_spans_writer *w = c->w;
	int s = c->base + start, e = c->base + end;
	int gap = s - w->prev_end;
	unsigned zz = gap >= 0 ? (unsigned)gap << 1 : ((unsigned)(-gap) << 1) - 1;
	if (put_varint(w->out, zz) || put_varint(w->out, (unsigned)(e - s))) {
		c->rc = SQLITE_NOMEM;
		return SQLITE_NOMEM;
	}
	w->prev_end = e;
	w->count++;
	return SQLITE_OK;
}

int atlas_spans_add(atlas_spans_writer *w, atlas_analyzer *a, const char *text, int n, int base)
{
	add_ctx c = { w, base, SQLITE_OK };
	int rc = atlas_analyze(a, FTS5_TOKENIZE_AUX, text, n, add_token, &c);
	return c.rc ? c.rc : rc;
}

/**************************************************************************************************
** Reading.
*/

int atlas_spans_decode(atlas_span *out, int max, const unsigned char *blob, int n, const int *part_sizes,
		       int nparts)
{
	const unsigned char *p = blob, *end = blob + (n > 0 ? n : 0);
	int got = 0, part = 0, in_part = 0;
	long prev_end = 0;
	while (got < max && p < end) {
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
		out[got].start = (int)s;
		out[got].end = (int)e;
		prev_end = e;
		got++;
		in_part++;
	}
	return got;
}
