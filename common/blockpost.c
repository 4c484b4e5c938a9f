/* blockpost.c - encoding and decoding the block postings of a term (blockpost.h). */
#include "blockpost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "varint.h"

/* The float nearest above or at x: an upper bound kept in 4 bytes. */
static float round_up(double x)
{
	float f = (float)x;
	if ((double)f < x)
		f = nextafterf(f, INFINITY);
	return f;
}

int blockpost_encode(strbuf *out, const int *docs, const int *tf, int n, const double *tmax)
{
	int nblocks = (n + BLOCKPOST_DOCS - 1) / BLOCKPOST_DOCS;
	strbuf data = STRBUF_INIT;
	int rc = 0;
	if (atlas_varint_put(out, (unsigned)n) || atlas_varint_put(out, (unsigned)nblocks))
		return ATLAS_ENOMEM;
	int prev = 0;
	for (int b = 0; b < nblocks && !rc; b++) {
		size_t from = data.len;
		int block_prev = prev;
		int end = (b + 1) * BLOCKPOST_DOCS < n ? (b + 1) * BLOCKPOST_DOCS : n;
		for (int i = b * BLOCKPOST_DOCS; i < end && !rc; i++) {
			if (docs[i] <= prev) {
				rc = ATLAS_EINVAL;
				break;
			}
			unsigned char cols = 0;
			for (int c = 0; c < FTS_NCOLS; c++)
				if (tf[(size_t)i * FTS_NCOLS + c] > 0)
					cols |= (unsigned char)(1u << c);
			if (atlas_varint_put(&data, (unsigned)(docs[i] - prev)) ||
			    strbuf_putc(&data, (char)cols))
				rc = ATLAS_ENOMEM;
			for (int c = 0; c < FTS_NCOLS && !rc; c++)
				if (cols >> c & 1)
					rc = atlas_varint_put(&data, (unsigned)tf[(size_t)i * FTS_NCOLS + c])
						 ? ATLAS_ENOMEM
						 : 0;
			prev = docs[i];
		}
		if (rc)
			break;
		float f = round_up(tmax[b]);
		unsigned char le[4];
		uint32_t u;
		memcpy(&u, &f, 4);
		for (int k = 0; k < 4; k++)
			le[k] = (unsigned char)(u >> (8 * k));
		if (atlas_varint_put(out, (unsigned)(prev - block_prev)) ||
		    atlas_varint_put(out, (unsigned)(data.len - from)) ||
		    strbuf_append(out, (const char *)le, 4))
			rc = ATLAS_ENOMEM;
	}
	if (!rc && data.len && strbuf_append(out, data.buf, data.len))
		rc = ATLAS_ENOMEM;
	if (!rc && out->oom)
		rc = ATLAS_ENOMEM;
	strbuf_free(&data);
	return rc;
}

void blockpost_free(blockpost *b)
{
	free(b->last);
	free(b->at);
	free(b->tmax);
	memset(b, 0, sizeof(*b));
}

int blockpost_open(blockpost *b, const unsigned char *blob, int n)
{
	memset(b, 0, sizeof(*b));
	const unsigned char *p = blob, *end = blob + n;
	unsigned ndocs, nblocks;
	if (!blob || atlas_varint_get(&p, end, &ndocs) || atlas_varint_get(&p, end, &nblocks) ||
	    nblocks > ndocs || nblocks < (ndocs + BLOCKPOST_DOCS - 1) / BLOCKPOST_DOCS ||
	    (size_t)nblocks * 6 > (size_t)(end - p))
		return ATLAS_EINVAL;
	b->data = blob;
	b->ndocs = (int)ndocs;
	b->nblocks = (int)nblocks;
	b->last = malloc(((size_t)nblocks + 1) * sizeof(*b->last));
	b->at = malloc(((size_t)nblocks + 1) * sizeof(*b->at));
	b->tmax = malloc(((size_t)nblocks + 1) * sizeof(*b->tmax));
	if (!b->last || !b->at || !b->tmax) {
		blockpost_free(b);
		return ATLAS_ENOMEM;
	}
	unsigned last = 0;
	uint32_t *len = b->at; /* the lengths first, made offsets below */
	for (unsigned k = 0; k < nblocks; k++) {
		unsigned d, l;
		if (atlas_varint_get(&p, end, &d) || atlas_varint_get(&p, end, &l) || end - p < 4 ||
		    d == 0 || last + d > (unsigned)INT32_MAX) {
			blockpost_free(b);
			return ATLAS_EINVAL;
		}
		last += d;
		b->last[k] = (int)last;
		len[k] = l;
		uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		memcpy(&b->tmax[k], &u, 4);
		p += 4;
	}
	uint32_t at = (uint32_t)(p - blob);
	for (unsigned k = 0; k < nblocks; k++) {
		uint32_t l = len[k];
		len[k] = at;
		if (l > (uint32_t)n - at) {
			blockpost_free(b);
			return ATLAS_EINVAL;
		}
		at += l;
	}
	b->at[nblocks] = at;
	return 0;
}

int blockpost_block(const blockpost *b, int k, int *docs, int *tf, unsigned char *cols)
{
	if (k < 0 || k >= b->nblocks)
		return ATLAS_EINVAL;
	const unsigned char *p = b->data + b->at[k], *end = b->data + b->at[k + 1];
	unsigned prev = k ? (unsigned)b->last[k - 1] : 0;
	int n = 0;
	while (p < end) {
		unsigned d;
		if (n == BLOCKPOST_DOCS || atlas_varint_get(&p, end, &d) || p >= end || d == 0)
			return ATLAS_EINVAL;
		prev += d;
		docs[n] = (int)prev;
		cols[n] = *p++;
		for (int c = 0; c < FTS_NCOLS; c++) {
			unsigned v = 0;
			if (cols[n] >> c & 1 && atlas_varint_get(&p, end, &v))
				return ATLAS_EINVAL;
			tf[n * FTS_NCOLS + c] = (int)v;
		}
		n++;
	}
	if (!n || docs[n - 1] != b->last[k])
		return ATLAS_EINVAL;
	return n;
}

int blockpost_docsize(const unsigned char *p, int n, int *v)
{
	const unsigned char *end = p + n;
	int c = 0;
	while (c < FTS_NCOLS && p < end) {
		unsigned x = 0;
		int k = 0;
		do
			x = (x << 7) | (*p & 0x7f);
		while ((*p++ & 0x80) && p < end && ++k < 4);
		v[c++] = (int)(x & 0x7fffffff);
	}
	return c == FTS_NCOLS ? 0 : -1;
}
