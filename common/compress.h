/* compress.h - texts kept compressed in the index: one zstd frame each, or long texts in chunks
 * read one by one, made against a dictionary trained on the index's own texts and stored beside
 * them (the dictionaries table). */
#ifndef ATLAS_COMPRESS_H
#define ATLAS_COMPRESS_H

#include <stddef.h>

#include "error.h"
#include "strbuf.h"

/* The zstd level texts are compressed at. */
#define ATLAS_COMPRESS_LEVEL 3

/* The largest dictionary trained, and the share of the samples' bytes it may take at most
 * (samples / ATLAS_DICT_SHARE): a small corpus gets a small dictionary. */
#define ATLAS_DICT_MAX (112 * 1024)
#define ATLAS_DICT_SHARE 16

/* Texts shorter than this are stored as they are, behind a one-byte marker (see compress.c). */
#define ATLAS_COMPRESS_MIN 24

/**************************************************************************************************
** Writing (the indexer).
*/

typedef struct atlas_compressor atlas_compressor;

/* Makes a compressor into *out, its dictionary trained on n samples laid end to end in samples
 * (the i-th sizes[i] bytes long). When there are too few samples to train on, or training fails,
 * the compressor has no dictionary and compresses each text on its own. Returns 0 or ATLAS_ENOMEM
 * (err set, *out NULL). Free with atlas_compressor_free. */
int atlas_compressor_new(atlas_compressor **out, const void *samples, const size_t *sizes, size_t n,
			 atlas_error *err);

/* The compressor's dictionary, *size bytes (0 and NULL when it has none). Owned by c. */
const void *atlas_compressor_dict(const atlas_compressor *c, size_t *size);

/* Compresses src[0..n) into out (reset first). Returns 0, or ATLAS_ENOMEM with err set. */
int atlas_compress(atlas_compressor *c, strbuf *out, const void *src, size_t n, atlas_error *err);

/* Compresses src[0..ends[nchunks - 1]) into out (reset first) in nchunks chunks, chunk i being
 * src[ends[i - 1]..ends[i]) (from 0 for the first) and holding units[i] units of the caller's
 * (a section's tokens), each chunk read without the others by atlas_decompress_units. Fewer than
 * two chunks are stored as atlas_compress stores the text. Returns 0, ATLAS_ENOMEM, or
 * ATLAS_EINVAL for an empty chunk; err set either way. */
int atlas_compress_chunks(atlas_compressor *c, strbuf *out, const char *src, const size_t *ends,
			  const unsigned *units, int nchunks, atlas_error *err);

/* Frees c. Accepts NULL. */
void atlas_compressor_free(atlas_compressor *c);

/**************************************************************************************************
** Reading (the query side).
*/

typedef struct atlas_decompressor atlas_decompressor;

/* Makes a decompressor into *out for texts compressed against dict[0..size) (size 0: no
 * dictionary; bytes without zstd's dictionary header are taken as raw content, as zstd does); it
 * copies what it needs of dict. Returns 0, or ATLAS_ENOMEM or ATLAS_EINVAL with err set. Free with atlas_decompressor_free. One decompressor serves one thread
 * at a time. */
int atlas_decompressor_new(atlas_decompressor **out, const void *dict, size_t size, atlas_error *err);

/* Decompresses src[0..n) into out (reset first; NUL-terminated, out->len the text's length).
 * Returns 0, ATLAS_ENOMEM, or ATLAS_EINVAL when src is not what atlas_compress writes with this
 * dictionary; err set either way. */
int atlas_decompress(atlas_decompressor *d, strbuf *out, const void *src, size_t n, atlas_error *err);

/* Decompresses of src[0..n) only the chunks that hold units [from, to) into out (reset first;
 * NUL-terminated): from the chunk holding unit from (the first when from is 0, the last when from
 * is past every unit) to the one holding unit to - 1, at least one; *first is the number of units
 * before them. A text not in chunks is decompressed whole, *first 0. Returns 0, ATLAS_ENOMEM, or
 * ATLAS_EINVAL when src is not what the compressor writes with this dictionary; err set either
 * way. */
int atlas_decompress_units(atlas_decompressor *d, strbuf *out, const void *src, size_t n, unsigned from,
			   unsigned to, unsigned *first, atlas_error *err);

/* Frees d. Accepts NULL. */
void atlas_decompressor_free(atlas_decompressor *d);

#endif
