/* compress.c - zstd frames against a trained dictionary, for the texts the index keeps. */
#include "compress.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "varint.h"
/* for ZDICT_trainFromBuffer_fastCover: ZDICT_trainFromBuffer searches its parameters, 7 to 10
 * times as long for no better dictionary on these texts */
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>
#include <zstd.h>

/* A stored text is empty, or a marker byte and then the text as it is (STORED_RAW) or one zstd
 * frame holding it (STORED_ZSTD): short texts and those that would not shrink stay as they are.
 * A text in chunks (STORED_CHUNKS) is the marker, the number of chunks, for each its units, its
 * text's length and its stored length (varints), then the chunks' stored texts back to back, each
 * a text as above that is not empty. */
enum { STORED_RAW = 0, STORED_ZSTD = 1, STORED_CHUNKS = 2 };

/* More chunks than this are taken for damage. */
#define CHUNKS_MAX (1 << 20)

/* A frame claiming more than this is taken for damage rather than allocated. */
#define TEXT_MAX ((size_t)1 << 30)

/* Fewer samples than this give no dictionary worth its bytes. */
#define SAMPLES_MIN 16

/* fastCover's segment and d-mer sizes and log2 of its frequency table (6 * 2^f bytes while it
 * trains): a middle choice among the parameters ZDICT_trainFromBuffer tries. */
#define TRAIN_K 200
#define TRAIN_D 8
#define TRAIN_F 18

/**************************************************************************************************
** Writing.
*/

struct atlas_compressor {
	ZSTD_CCtx *cctx;
	ZSTD_CDict *cdict; /* NULL: no dictionary */
	void *dict;
	size_t ndict;
};

/* Trains a dictionary on the samples into c->dict. Leaves c without one when there are too few
 * samples or zstd cannot train on them. Returns 0 or ATLAS_ENOMEM. */
static int train(atlas_compressor *c, const void *samples, const size_t *sizes, size_t n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += sizes[i];
	size_t cap = total / ATLAS_DICT_SHARE;
	if (cap > ATLAS_DICT_MAX)
		cap = ATLAS_DICT_MAX;
	if (n < SAMPLES_MIN || n > 0xffffffffu || cap < 1024)
		return 0;
	c->dict = malloc(cap);
	if (!c->dict)
		return ATLAS_ENOMEM;
	ZDICT_fastCover_params_t params;
	memset(&params, 0, sizeof(params));
	params.k = TRAIN_K;
	params.d = TRAIN_D;
	params.f = TRAIN_F;
	params.accel = 1;
	params.zParams.compressionLevel = ATLAS_COMPRESS_LEVEL;
	size_t got = ZDICT_trainFromBuffer_fastCover(c->dict, cap, samples, sizes, (unsigned)n, params);
	if (ZDICT_isError(got)) {
		free(c->dict);
		c->dict = NULL;
		return 0;
	}
	c->ndict = got;
	c->cdict = ZSTD_createCDict(c->dict, c->ndict, ATLAS_COMPRESS_LEVEL);
	return c->cdict ? 0 : ATLAS_ENOMEM;
}

int atlas_compressor_new(atlas_compressor **out, const void *samples, const size_t *sizes, size_t n,
			 atlas_error *err)
{
	*out = NULL;
	atlas_compressor *c = calloc(1, sizeof(*c));
	if (!c)
		goto fail_nomem;
	c->cctx = ZSTD_createCCtx();
	if (!c->cctx || train(c, samples, sizes, n))
		goto fail_free;
	/* the frame needs neither a checksum (SQLite checks its pages) nor the dictionary's id (an
	 * index has one per kind of text) */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_dictIDFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, ATLAS_COMPRESS_LEVEL)) ||
	    (c->cdict && ZSTD_isError(ZSTD_CCtx_refCDict(c->cctx, c->cdict))))
		goto fail_free;
	*out = c;
	return 0;

fail_free:
	atlas_compressor_free(c);
fail_nomem:
	return atlas_error_set(err, ATLAS_ENOMEM, "out of memory making the text compressor");
}

const void *atlas_compressor_dict(const atlas_compressor *c, size_t *size)
{
	*size = c->cdict ? c->ndict : 0;
	return c->cdict ? c->dict : NULL;
}

/* Writes src[0..n) into out as it is, behind its marker. Returns 0 or ATLAS_ENOMEM. */
static int store_raw(strbuf *out, const void *src, size_t n)
{
	strbuf_reset(out);
	if (strbuf_putc(out, STORED_RAW) || strbuf_append(out, src, n))
		return ATLAS_ENOMEM;
	return 0;
}

int atlas_compress(atlas_compressor *c, strbuf *out, const void *src, size_t n, atlas_error *err)
{
	strbuf_reset(out);
	if (n == 0)
		return 0;
	if (n < ATLAS_COMPRESS_MIN)
		goto raw;
	size_t bound = ZSTD_compressBound(n);
	if (strbuf_reserve(out, bound + 1))
		goto fail_nomem;
	out->buf[0] = STORED_ZSTD;
	size_t got = ZSTD_compress2(c->cctx, out->buf + 1, bound, src, n);
	/* a failure here is zstd's memory; compressing never fails on its input */
	if (ZSTD_isError(got)) {
		ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
		goto fail_nomem;
	}
	if (got >= n)
		goto raw;
	out->len = got + 1;
	out->buf[out->len] = '\0';
	return 0;

raw:
	if (!store_raw(out, src, n))
		return 0;
fail_nomem:
	return atlas_error_set(err, ATLAS_ENOMEM, "out of memory compressing a text");
}

int atlas_compress_chunks(atlas_compressor *c, strbuf *out, const char *src, const size_t *ends,
			  const unsigned *units, int nchunks, atlas_error *err)
{
	strbuf_reset(out);
	size_t n = nchunks > 0 ? ends[nchunks - 1] : 0;
	if (nchunks < 2 || nchunks > CHUNKS_MAX)
		return atlas_compress(c, out, src, n, err);
	strbuf head = STRBUF_INIT, body = STRBUF_INIT, one = STRBUF_INIT;
	int rc = 0;
	if (strbuf_putc(&head, STORED_CHUNKS) || atlas_varint_put(&head, (unsigned)nchunks))
		rc = ATLAS_ENOMEM;
	for (int i = 0; !rc && i < nchunks; i++) {
		size_t at = i ? ends[i - 1] : 0;
		if (ends[i] <= at || ends[i] - at > 0xffffffffu) {
			rc = atlas_error_set(err, ATLAS_EINVAL, "chunk %d of a text is empty or too long", i);
			break;
		}
		if ((rc = atlas_compress(c, &one, src + at, ends[i] - at, err)))
			break;
		if (atlas_varint_put(&head, units[i]) || atlas_varint_put(&head, (unsigned)(ends[i] - at)) ||
		    atlas_varint_put(&head, (unsigned)one.len) || strbuf_append(&body, one.buf, one.len))
			rc = ATLAS_ENOMEM;
	}
	if (!rc && (strbuf_append(out, head.buf, head.len) || strbuf_append(out, body.buf, body.len)))
		rc = ATLAS_ENOMEM;
	if (rc == ATLAS_ENOMEM)
		atlas_error_set(err, rc, "out of memory compressing a text");
	strbuf_free(&head);
	strbuf_free(&body);
	strbuf_free(&one);
	return rc;
}

void atlas_compressor_free(atlas_compressor *c)
{
	if (!c)
		return;
	ZSTD_freeCDict(c->cdict);
	ZSTD_freeCCtx(c->cctx);
	free(c->dict);
	free(c);
}

/**************************************************************************************************
** Reading.
*/

struct atlas_decompressor {
	ZSTD_DCtx *dctx;
	ZSTD_DDict *ddict; /* NULL: no dictionary */
};

int atlas_decompressor_new(atlas_decompressor **out, const void *dict, size_t size, atlas_error *err)
{
	*out = NULL;
	atlas_decompressor *d = calloc(1, sizeof(*d));
	if (!d)
		goto fail_nomem;
	d->dctx = ZSTD_createDCtx();
	if (!d->dctx)
		goto fail_free;
	if (size) {
		d->ddict = ZSTD_createDDict(dict, size);
		if (!d->ddict)
			goto fail_free;
		if (ZSTD_isError(ZSTD_DCtx_refDDict(d->dctx, d->ddict))) {
			atlas_decompressor_free(d);
			return atlas_error_set(err, ATLAS_EINVAL, "the text dictionary is not a zstd dictionary");
		}
	}
	*out = d;
	return 0;

fail_free:
	atlas_decompressor_free(d);
fail_nomem:
	return atlas_error_set(err, ATLAS_ENOMEM, "out of memory making the text decompressor");
}

/* Appends the stored text src[0..n) (not chunked, not empty) to out. Returns 0, ATLAS_ENOMEM, or
 * ATLAS_EINVAL; err set either way. */
static int append_text(atlas_decompressor *d, strbuf *out, const unsigned char *p, size_t n, atlas_error *err)
{
	if (p[0] == STORED_RAW)
		return strbuf_append(out, (const char *)p + 1, n - 1)
			       ? atlas_error_set(err, ATLAS_ENOMEM, "out of memory reading a text")
			       : 0;
	if (p[0] != STORED_ZSTD)
		return atlas_error_set(err, ATLAS_EINVAL, "stored text has unknown marker %u", p[0]);
	unsigned long long size = ZSTD_getFrameContentSize(p + 1, n - 1);
	if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > TEXT_MAX)
		return atlas_error_set(err, ATLAS_EINVAL, "stored text is not a whole zstd frame");
	if (strbuf_reserve(out, out->len + (size_t)size + 1))
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory reading a text");
	size_t got = ZSTD_decompressDCtx(d->dctx, out->buf + out->len, (size_t)size + 1, p + 1, n - 1);
	if (ZSTD_isError(got) || got != size) {
		ZSTD_DCtx_reset(d->dctx, ZSTD_reset_session_only);
		out->buf[out->len] = '\0';
		return atlas_error_set(err, ATLAS_EINVAL, "stored text does not decompress: %s",
				       ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong length");
	}
	out->len += got;
	out->buf[out->len] = '\0';
	return 0;
}

int atlas_decompress_units(atlas_decompressor *d, strbuf *out, const void *src, size_t n, unsigned from,
			   unsigned to, unsigned *first, atlas_error *err)
{
	const unsigned char *p = src, *end = p + n;
	strbuf_reset(out);
	*first = 0;
	if (n == 0)
		return strbuf_append(out, "", 0) ? atlas_error_set(err, ATLAS_ENOMEM, "out of memory") : 0;
	if (p[0] != STORED_CHUNKS) {
		int rc = append_text(d, out, p, n, err);
		if (rc)
			strbuf_reset(out);
		return rc;
	}
	const unsigned char *h = p + 1;
	unsigned nchunks;
	if (atlas_varint_get(&h, end, &nchunks) || nchunks < 2 || nchunks > CHUNKS_MAX)
		return atlas_error_set(err, ATLAS_EINVAL, "stored text has a damaged chunk list");
	/* the chunks' texts start after the list: found by reading it once */
	const unsigned char *list = h;
	size_t data = 0;
	for (unsigned i = 0; i < nchunks; i++) {
		unsigned u, len, stored;
		if (atlas_varint_get(&h, end, &u) || atlas_varint_get(&h, end, &len) ||
		    atlas_varint_get(&h, end, &stored) || stored < 2 || stored > (size_t)(end - h))
			return atlas_error_set(err, ATLAS_EINVAL, "stored text has a damaged chunk list");
		data += stored;
	}
	if (data != (size_t)(end - h))
		return atlas_error_set(err, ATLAS_EINVAL, "stored text's chunks do not fill it");
	const unsigned char *at = h;
	unsigned before = 0; /* the units of the chunks before chunk i */
	bool started = false;
	for (unsigned i = 0; i < nchunks; i++) {
		unsigned u = 0, len = 0, stored = 0; /* read once above: they parse */
		atlas_varint_get(&list, h, &u);
		atlas_varint_get(&list, h, &len);
		atlas_varint_get(&list, h, &stored);
		/* chunk i holds units [before, before + u): taken from the one holding from (the
		 * first when from is 0, the last when from is past them all) to the one holding
		 * to - 1 */
		if (!started && (from == 0 || from < before + u || i + 1 == nchunks)) {
			started = true;
			*first = before;
		} else if (!started) {
			before += u;
			at += stored;
			continue;
		} else if (before >= to) {
			break;
		}
		size_t was = out->len;
		int rc = append_text(d, out, at, stored, err);
		if (!rc && out->len - was != len)
			rc = atlas_error_set(err, ATLAS_EINVAL, "stored text's chunk %u has the wrong length", i);
		if (rc) {
			strbuf_reset(out);
			*first = 0;
			return rc;
		}
		before += u;
		at += stored;
	}
	return 0;
}

int atlas_decompress(atlas_decompressor *d, strbuf *out, const void *src, size_t n, atlas_error *err)
{
	unsigned first;
	return atlas_decompress_units(d, out, src, n, 0, UINT_MAX, &first, err);
}

void atlas_decompressor_free(atlas_decompressor *d)
{
	if (!d)
		return;
	ZSTD_freeDDict(d->ddict);
	ZSTD_freeDCtx(d->dctx);
	free(d);
}
