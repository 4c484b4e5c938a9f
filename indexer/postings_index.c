/* postings_index.c - the postings table, from FTS5's index: each term's pages, matches per column
 * and block maxima of BM25F's frequency (common/blockpost.h, query/rank.h). */
#include "postings_index.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "blockpost.h"
#include "varint.h"
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
	strbuf *out;      /* where the encoded terms go (flush_term) */
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

/* Encodes the gathered term and appends its record to acc->out (varint length, the term, varint
 * page count, varint size, its blocks as common/blockpost.h writes them), then empties acc.
 * Returns 0 or an ATLAS_E* code. */
static int flush_term(term_acc *acc, const int *sizes, const double *avg, atlas_error *err)
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
	atlas_varint_put(acc->out, (unsigned)acc->term_len);
	strbuf_append(acc->out, acc->term, acc->term_len);
	atlas_varint_put(acc->out, (unsigned)acc->n);
	atlas_varint_put(acc->out, (unsigned)acc->blob.len);
	strbuf_append(acc->out, acc->blob.buf, acc->blob.len);
	if (acc->out->oom)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory writing the postings");
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

/**************************************************************************************************
** Walking FTS5's index, in ranges of terms shared by two threads.
**
** Terms are walked in POSTINGS_RANGES ranges, by their first byte (fts5vocab seeks to a range's
** first term); each thread takes the next range not yet taken, on its own connection, and encodes
** its terms into that range's buffer. The buffers are inserted in term order once both are done.
*/

#define POSTINGS_RANGES 256

typedef struct walk_shared {
	const char *file;   /* the index file, committed: the second connection reads it */
	int ndocs;
	const int *sizes;
	const double *avg;
	pthread_mutex_t lock;
	int next;           /* the first range not yet taken */
	strbuf out[POSTINGS_RANGES];
} walk_shared;

/* Takes the next range, or returns -1 when none is left. */
static int take_range(walk_shared *w)
{
	pthread_mutex_lock(&w->lock);
	int r = w->next < POSTINGS_RANGES ? w->next++ : -1;
	pthread_mutex_unlock(&w->lock);
	return r;
}

/* Walks every position of the terms of each range it takes (fts5vocab 'instance' on db: by term,
 * row, column, offset), encoding each term into its range's buffer. Returns 0 or an ATLAS_E* code. */
static int walk_ranges(walk_shared *w, sqlite3 *db, atlas_error *err)
{
	sqlite3_stmt *mid = NULL, *last = NULL;
	term_acc acc = { 0 };
	acc.blob = (strbuf)STRBUF_INIT;
	acc.file = w->file;
	int rc = 0;
	if (sqlite3_exec(db, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.atlas_postings_instance USING"
			     " fts5vocab(main, fts, instance)", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT term, doc, col FROM temp.atlas_postings_instance"
				   " WHERE term >= ?1 AND term < ?2", -1, &mid, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT term, doc, col FROM temp.atlas_postings_instance"
				   " WHERE term >= ?1", -1, &last, NULL) != SQLITE_OK) {
		rc = atlas_sql_error(err, db, w->file, "postings", NULL);
		goto out;
	}
	for (int r; !rc && (r = take_range(w)) >= 0;) {
		char lo = (char)r, hi = (char)(r + 1);
		sqlite3_stmt *st = r == POSTINGS_RANGES - 1 ? last : mid;
		sqlite3_bind_text(st, 1, &lo, r ? 1 : 0, SQLITE_TRANSIENT);
		if (st == mid)
			sqlite3_bind_text(st, 2, &hi, 1, SQLITE_TRANSIENT);
		acc.out = &w->out[r];
		acc.term_len = 0;
		int step;
		while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
			const char *term = (const char *)sqlite3_column_text(st, 0);
			size_t len = (size_t)sqlite3_column_bytes(st, 0);
			sqlite3_int64 doc = sqlite3_column_int64(st, 1);
			const char *cname = (const char *)sqlite3_column_text(st, 2);
			int col = column_of(cname, sqlite3_column_bytes(st, 2));
			if (!term || doc < 1 || doc > w->ndocs || col < 0) {
				rc = atlas_error_set(err, ATLAS_EINVAL,
						     "postings: FTS5 gave row %lld, column '%s' of %d rows",
						     (long long)doc, cname ? cname : "", w->ndocs);
				break;
			}
			if (len != acc.term_len || memcmp(term, acc.term, len)) {
				if ((rc = flush_term(&acc, w->sizes, w->avg, err)))
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
			rc = flush_term(&acc, w->sizes, w->avg, err);
		sqlite3_reset(st);
	}
out:
	if (rc) {
		/* the other thread stops at its next range */
		pthread_mutex_lock(&w->lock);
		w->next = POSTINGS_RANGES;
		pthread_mutex_unlock(&w->lock);
	}
	sqlite3_finalize(mid);
	sqlite3_finalize(last);
	sqlite3_exec(db, "DROP TABLE IF EXISTS temp.atlas_postings_instance", NULL, NULL, NULL);
	free(acc.term);
	free(acc.docs);
	free(acc.tf);
	free(acc.tmax);
	strbuf_free(&acc.blob);
	return rc;
}

typedef struct walker {
	walk_shared *w;
	pthread_t thread;
	int rc;
	atlas_error err;
} walker;

/* The second thread: its own read-only connection to the committed index. */
static void *walker_main(void *arg)
{
	walker *k = arg;
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(k->w->file, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		k->rc = atlas_sql_error(&k->err, db, k->w->file, "postings: cannot open", NULL);
	else if (!(k->rc = atlas_analyzer_register(db, &k->err)))
		k->rc = walk_ranges(k->w, db, &k->err);
	if (k->rc) {
		pthread_mutex_lock(&k->w->lock);
		k->w->next = POSTINGS_RANGES;
		pthread_mutex_unlock(&k->w->lock);
	}
	sqlite3_close(db);
	return NULL;
}

/* Inserts the encoded terms of out[0..POSTINGS_RANGES) in order: the blocks in the term's row, or in
 * postings_spill when they take more than ATLAS_POSTINGS_INLINE_MAX bytes. Returns 0 or an ATLAS_E*
 * code. */
static int insert_terms(sqlite3 *db, const char *file, walk_shared *w, atlas_error *err)
{
	sqlite3_stmt *ins = NULL, *spill = NULL;
	int rc = 0;
	if (sqlite3_prepare_v2(db, "INSERT INTO postings(term, df, blocks, spill) VALUES(?1, ?2, ?3, ?4)", -1,
			       &ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO postings_spill(blocks) VALUES(?1)", -1, &spill, NULL) !=
		    SQLITE_OK)
		rc = atlas_sql_error(err, db, file, "postings", NULL);
	for (int r = 0; !rc && r < POSTINGS_RANGES; r++) {
		const unsigned char *p = (const unsigned char *)w->out[r].buf, *end = p + w->out[r].len;
		while (!rc && p < end) {
			unsigned len = 0, df = 0, size = 0;
			const unsigned char *term = NULL;
			if (!atlas_varint_get(&p, end, &len) && (size_t)(end - p) >= len) {
				term = p;
				p += len;
			}
			if (!term || atlas_varint_get(&p, end, &df) || atlas_varint_get(&p, end, &size) ||
			    (size_t)(end - p) < size) {
				rc = atlas_error_set(err, ATLAS_EINVAL, "%s: postings: a malformed term record", file);
				break;
			}
			const unsigned char *blocks = p;
			p += size;
			sqlite3_int64 at = 0;
			if (size > ATLAS_POSTINGS_INLINE_MAX) {
				sqlite3_bind_blob(spill, 1, blocks, (int)size, SQLITE_STATIC);
				int done = sqlite3_step(spill);
				sqlite3_reset(spill);
				if (done != SQLITE_DONE) {
					rc = atlas_sql_error(err, db, file, "postings: cannot write", NULL);
					break;
				}
				at = sqlite3_last_insert_rowid(db);
			}
			sqlite3_bind_text(ins, 1, (const char *)term, (int)len, SQLITE_STATIC);
			sqlite3_bind_int(ins, 2, (int)df);
			sqlite3_bind_blob(ins, 3, at ? (const void *)"" : blocks, at ? 0 : (int)size, SQLITE_STATIC);
			sqlite3_bind_int64(ins, 4, at);
			int step = sqlite3_step(ins);
			sqlite3_reset(ins);
			if (step != SQLITE_DONE)
				rc = atlas_sql_error(err, db, file, "postings: cannot write", NULL);
		}
		strbuf_free(&w->out[r]);
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(spill);
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
	walk_shared w = { .file = file, .ndocs = ndocs, .sizes = sizes, .avg = avg, .next = 0 };
	for (int r = 0; r < POSTINGS_RANGES; r++)
		w.out[r] = (strbuf)STRBUF_INIT;
	pthread_mutex_init(&w.lock, NULL);
	/* what was written so far is committed, for the second thread's connection to read */
	if (!rc && sqlite3_exec(db, "COMMIT; BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		rc = atlas_sql_error(err, db, file, "postings: cannot commit", NULL);
	walker k = { .w = &w, .rc = 0, .err = { 0, "" } };
	bool started = !rc && pthread_create(&k.thread, NULL, walker_main, &k) == 0;
	if (!rc)
		rc = walk_ranges(&w, db, err);
	if (started)
		pthread_join(k.thread, NULL);
	if (!rc && k.rc) {
		*err = k.err;
		rc = k.rc;
	}
	if (!rc)
		rc = insert_terms(db, file, &w, err);
	for (int r = 0; r < POSTINGS_RANGES; r++)
		strbuf_free(&w.out[r]);
	pthread_mutex_destroy(&w.lock);
	free(sizes);
	return rc;
}
