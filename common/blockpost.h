/* blockpost.h - Atlas's own postings of a term, as stored in the postings table: its pages in
 * order, cut in blocks of BLOCKPOST_DOCS, each page with its matches per fts column, and each
 * block with its last page and the largest BM25F frequency (rank.h: rank_bm25f_tf) of the term in
 * it, so that a search skips the blocks that cannot reach its results without decoding them.
 *
 * A blob: varint pages, varint blocks; per block a header: varint last page (the delta from the
 * block before's last, from 0 for the first), varint bytes of its data, 4 bytes of the largest
 * frequency (an IEEE float, little-endian, rounded up); then the blocks' data, one after another:
 * per page a varint delta from the page before (the block before's last for the first), one byte
 * of column bits (bit c: column c holds the term), and a varint of matches per column set. */
#ifndef ATLAS_BLOCKPOST_H
#define ATLAS_BLOCKPOST_H

#include <sqlite3.h>
#include <stdint.h>

#include "schema.h"
#include "strbuf.h"

#define BLOCKPOST_DOCS 128

/* Appends to out the postings of n pages docs[0..n) (ascending, from 1), tf[i * FTS_NCOLS + c]
 * the matches of page i in column c, with block b's largest frequency tmax[b] (one per block of
 * BLOCKPOST_DOCS). Returns 0, ATLAS_ENOMEM, or ATLAS_EINVAL when the pages are not ascending. */
int blockpost_encode(strbuf *out, const int *docs, const int *tf, int n, const double *tmax);

/* A decoded blob's block table; the blocks themselves are decoded one at a time. */
typedef struct blockpost {
	const unsigned char *data; /* the blob, not owned */
	int ndocs, nblocks;
	int *last;      /* last page of each block */
	uint32_t *at;   /* where each block's data starts in data; at[nblocks] the end */
	float *tmax;    /* largest frequency of each block */
} blockpost;

/* Reads the block table of blob[0..n), which must outlive b. Returns 0, ATLAS_ENOMEM, or
 * ATLAS_EINVAL when the blob is malformed. The caller frees b with blockpost_free. */
int blockpost_open(blockpost *b, const unsigned char *blob, int n);

/* Frees what blockpost_open allocated. Accepts a zeroed b. */
void blockpost_free(blockpost *b);

/* Decodes block k of b: its pages into docs[0..BLOCKPOST_DOCS), their matches into
 * tf[i * FTS_NCOLS + c] and column bits into cols[i]. Returns the pages, or ATLAS_EINVAL when
 * malformed. */
int blockpost_block(const blockpost *b, int k, int *docs, int *tf, unsigned char *cols);

/* Parses the token counts of one row of FTS5's docsize table (one SQLite varint per column) into
 * v[FTS_NCOLS]. Returns 0, or -1 when the blob holds fewer columns. */
int blockpost_docsize(const unsigned char *p, int n, int *v);

#endif
