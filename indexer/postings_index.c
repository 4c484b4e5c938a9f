/* postings_index.c - the postings table, from FTS5's index: each term's pages, matches per column
 * and block maxima of BM25F's frequency (common/blockpost.h, query/rank.h). */
#include "postings_index.h"

#include <stdlib.h>
#include <string.h>

#include "blockpost.h"
#include "schema.h"
#include "strbuf.h"
#include "../query/rank.h"

/* The fts column named name (n bytes), or -1 when none is: a lookup, not an error code. */
static int column_of(const char *name, int n)
{
	static const char *const names[FTS_NCOLS] = { "title", "keywords", "headings", "description",
						      "body", "defs" };
	for (int c = 0; name && c < FTS_NCOLS; c++)
		if ((int)strlen(names[c]) == n && memcmp(names[c], name, (size_t)n) == 0)
			return c;
	return -1;
}

/* One term being gathered: its pages and their matches per column. */
typedef struct term_acc {
	char *term;
	size_t term_len, term_cap;
	int *docs, *tf;
	int n, cap;
	double *tmax;
	int tmax_cap;
	strbuf blob;
	sqlite3_stmt *spill; /* inserts a term's blocks into postings_spill */
	const char *file; /* the index file, for messages */
} term_acc;

/* Reads the column sizes of every row (fts_docsize) into sizes[(row - 1) * FTS_NCOLS + c] and
 * their averages into avg, as the engine does. Returns 0 or ATLAS_ESQL / ATLAS_EINVAL. */
static int read_sizes(sqlite3 *db, const char *file, int ndocs, int *sizes, double *avg, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT id, sz FROM fts_docsize", -1, &st, NULL) != SQLITE_OK)
		return atlas_sql_error(err, db, file, "postings: cannot read fts_docsize", NULL);
	int rc = 0;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const unsigned char *p = sqlite3_column_blob(st, 1);
		if (id < 1 || id > ndocs || !p ||
		    blockpost_docsize(p, sqlite3_column_bytes(st, 1), sizes + (id - 1) * FTS_NCOLS))
			rc = atlas_error_set(err, ATLAS_EINVAL, "postings: row %lld of fts_docsize is malformed",
					     (long long)id);
	}
	sqlite3_finalize(st);
	for (int c = 0; !rc && c < FTS_NCOLS; c++) {
		double total = 0;
		for (int d = 0; d < ndocs; d++)
			total += sizes[d * FTS_NCOLS + c];
		avg[c] = total > 0 ? total / ndocs : 1.0;
	}
	return rc;
}

/* Encodes and inserts the gathered term, then empties acc. Returns 0 or an ATLAS_E* code. */
static int flush_term(term_acc *acc, sqlite3_stmt *ins, const int *sizes, const double *avg,
		      atlas_error *err)
{
	if (!acc->n)
		return 0;
	int nblocks = (acc->n + BLOCKPOST_DOCS - 1) / BLOCKPOST_DOCS;
	if (nblocks > acc->tmax_cap) {
		double *t = realloc(acc->tmax, (size_t)nblocks * 2 * sizeof(*t));
		if (!t)
			return atlas_error_set(err, ATLAS_ENOMEM, "out of memory writing the postings");
		acc->tmax = t;
		acc->tmax_cap = nblocks * 2;
	}
	for (int b = 0; b < nblocks; b++)
		acc->tmax[b] = 0;
	for (int i = 0; i < acc->n; i++) {
		double t = rank_bm25f_tf(acc->tf + (size_t)i * FTS_NCOLS,
					 sizes + (size_t)(acc->docs[i] - 1) * FTS_NCOLS, avg);
		if (t > acc->tmax[i / BLOCKPOST_DOCS])
			acc->tmax[i / BLOCKPOST_DOCS] = t;
	}
	strbuf_reset(&acc->blob);
	int rc = blockpost_encode(&acc->blob, acc->docs, acc->tf, acc->n, acc->tmax);
	if (rc)
		return atlas_error_set(err, rc, "postings: cannot encode the term '%.*s'",
				       (int)acc->term_len, acc->term);
	sqlite3_int64 spill = 0;
	if (acc->blob.len > ATLAS_POSTINGS_INLINE_MAX) {
		sqlite3_bind_blob(acc->spill, 1, acc->blob.buf, (int)acc->blob.len, SQLITE_STATIC);
		int done = sqlite3_step(acc->spill);
		sqlite3_reset(acc->spill);
		sqlite3_clear_bindings(acc->spill);
		if (done != SQLITE_DONE)
			return atlas_sql_error(err, sqlite3_db_handle(ins), acc->file, "postings: cannot write", NULL);
		spill = sqlite3_last_insert_rowid(sqlite3_db_handle(ins));
	}
	sqlite3_bind_text(ins, 1, acc->term, (int)acc->term_len, SQLITE_STATIC);
	sqlite3_bind_int(ins, 2, acc->n);
	sqlite3_bind_blob(ins, 3, spill ? "" : acc->blob.buf, spill ? 0 : (int)acc->blob.len, SQLITE_STATIC);
	sqlite3_bind_int64(ins, 4, spill);
	int step = sqlite3_step(ins);
	sqlite3_reset(ins);
	sqlite3_clear_bindings(ins);
	if (step != SQLITE_DONE)
		return atlas_sql_error(err, sqlite3_db_handle(ins), acc->file, "postings: cannot write", NULL);
	acc->n = 0;
	return 0;
}

/* Counts one match of the gathered term in row doc, column col. Returns 0 or ATLAS_ENOMEM. */
static int add_match(term_acc *acc, int doc, int col)
{
	if (!acc->n || acc->docs[acc->n - 1] != doc) {
		if (acc->n == acc->cap) {
			int cap = acc->cap ? acc->cap * 2 : 1024;
			int *d = realloc(acc->docs, (size_t)cap * sizeof(*d));
			if (d)
				acc->docs = d;
			int *t = d ? realloc(acc->tf, (size_t)cap * FTS_NCOLS * sizeof(*t)) : NULL;
			if (!t)
				return ATLAS_ENOMEM;
			acc->tf = t;
			acc->cap = cap;
		}
		acc->docs[acc->n] = doc;
		memset(acc->tf + (size_t)acc->n * FTS_NCOLS, 0, FTS_NCOLS * sizeof(int));
		acc->n++;
	}
	acc->tf[(size_t)(acc->n - 1) * FTS_NCOLS + col]++;
	return 0;
}

/* Walks every position of the fts table, term by term (fts5vocab 'instance': by term, row,
 * column, offset), writing each term's postings. Returns 0 or an ATLAS_E* code. */
static int walk_terms(sqlite3 *db, const char *file, int ndocs, const int *sizes, const double *avg,
		      atlas_error *err)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	term_acc acc = { 0 };
	acc.blob = (strbuf)STRBUF_INIT;
	acc.file = file;
	int rc = 0;
	if (sqlite3_prepare_v2(db, "SELECT term, doc, col FROM temp.atlas_postings_instance", -1, &st,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO postings(term, df, blocks, spill) VALUES(?1, ?2, ?3, ?4)", -1,
			       &ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO postings_spill(blocks) VALUES(?1)", -1, &acc.spill, NULL) !=
		    SQLITE_OK) {
		rc = atlas_sql_error(err, db, acc.file, "postings", NULL);
		goto out;
	}
	int step;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *term = (const char *)sqlite3_column_text(st, 0);
		size_t len = (size_t)sqlite3_column_bytes(st, 0);
		sqlite3_int64 doc = sqlite3_column_int64(st, 1);
		const char *cname = (const char *)sqlite3_column_text(st, 2);
		int col = column_of(cname, sqlite3_column_bytes(st, 2));
		if (!term || doc < 1 || doc > ndocs || col < 0) {
			rc = atlas_error_set(err, ATLAS_EINVAL,
					     "postings: FTS5 gave row %lld, column '%s' of %d rows",
					     (long long)doc, cname ? cname : "", ndocs);
			break;
		}
		if (len != acc.term_len || memcmp(term, acc.term, len)) {
			if ((rc = flush_term(&acc, ins, sizes, avg, err)))
				break;
			if (len + 1 > acc.term_cap) {
				char *t = realloc(acc.term, len * 2 + 1);
				if (!t) {
					rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory writing the postings");
					break;
				}
				acc.term = t;
				acc.term_cap = len * 2 + 1;
			}
			memcpy(acc.term, term, len);
			acc.term_len = len;
		}
		if (add_match(&acc, (int)doc, col))
			rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory writing the postings");
	}
	if (!rc && step != SQLITE_DONE)
		rc = atlas_sql_error(err, db, acc.file, "postings", NULL);
	if (!rc)
		rc = flush_term(&acc, ins, sizes, avg, err);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	sqlite3_finalize(acc.spill);
	free(acc.term);
	free(acc.docs);
	free(acc.tf);
	free(acc.tmax);
	strbuf_free(&acc.blob);
	return rc;
}

int postings_index_write(sqlite3 *db, const char *file, int ndocs, atlas_error *err)
{
	if (ndocs < 1)
		return 0;
	int *sizes = calloc((size_t)ndocs * FTS_NCOLS, sizeof(int));
	double avg[FTS_NCOLS];
	if (!sizes)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory writing the postings");
	int rc = read_sizes(db, file, ndocs, sizes, avg, err);
	if (!rc && sqlite3_exec(db,
				"CREATE VIRTUAL TABLE temp.atlas_postings_instance USING"
				" fts5vocab(main, fts, instance)",
				NULL, NULL, NULL) != SQLITE_OK)
		rc = atlas_sql_error(err, db, file, "postings", NULL);
	if (!rc)
		rc = walk_terms(db, file, ndocs, sizes, avg, err);
	sqlite3_exec(db, "DROP TABLE IF EXISTS temp.atlas_postings_instance", NULL, NULL, NULL);
	free(sizes);
	return rc;
}
