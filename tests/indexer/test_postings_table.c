/* test_postings_table.c - the postings table holds, for every term of the fts table, exactly its
 * pages and their matches per column as FTS5 counts them (fts5vocab 'instance'), and each block's
 * maximum is the largest BM25F frequency of its pages (query/rank.h), never below any of them;
 * malformed blobs are refused, not read past their end. A term's blocks are in its row when they
 * take at most ATLAS_POSTINGS_INLINE_MAX bytes, else in postings_spill (its row's blocks empty).
 *
 * usage: test_postings_table INDEX */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "blockpost.h"
#include "check.h"
#include "schema.h"
#include "../query/rank.h"

static int col_of(const char *s)
{
	static const char *const n[FTS_NCOLS] = { "title", "keywords", "headings", "description", "body", "defs" };
	for (int c = 0; c < FTS_NCOLS; c++)
		if (!strcmp(s, n[c]))
			return c;
	return -1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_postings_table INDEX\n");
		return 2;
	}
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		printf("FAIL  cannot open %s\n", argv[1]);
		return 1;
	}
	atlas_error err = { 0, "" };
	if (atlas_analyzer_register(db, &err)) {
		printf("FAIL  %s\n", err.msg);
		return 1;
	}
	sqlite3_stmt *st = NULL;
	int ndocs = 0;
	sqlite3_prepare_v2(db, "SELECT count(*) FROM docs", -1, &st, NULL);
	if (sqlite3_step(st) == SQLITE_ROW)
		ndocs = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	int *sizes = calloc((size_t)ndocs * FTS_NCOLS, sizeof(int));
	sqlite3_prepare_v2(db, "SELECT id, sz FROM fts_docsize", -1, &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int id = sqlite3_column_int(st, 0);
		CHECK(id >= 1 && id <= ndocs &&
			      !blockpost_docsize(sqlite3_column_blob(st, 1), sqlite3_column_bytes(st, 1),
						 sizes + (size_t)(id - 1) * FTS_NCOLS),
		      "row %d of fts_docsize parses", id);
	}
	sqlite3_finalize(st);
	double avg[FTS_NCOLS];
	for (int c = 0; c < FTS_NCOLS; c++) {
		double t = 0;
		for (int d = 0; d < ndocs; d++)
			t += sizes[d * FTS_NCOLS + c];
		avg[c] = t > 0 ? t / ndocs : 1.0;
	}
	/* every term's matches per row and column, as FTS5 counts them: "term doc col n" lines */
	sqlite3_exec(db, "CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, fts, instance)", NULL, NULL, NULL);
	sqlite3_stmt *want = NULL, *got = NULL;
	CHECK(sqlite3_prepare_v2(db, "SELECT term, doc, col, count(*) FROM temp.v GROUP BY term, doc, col"
				 " ORDER BY term, doc, CASE col WHEN 'title' THEN 0 WHEN 'keywords' THEN 1"
				 " WHEN 'headings' THEN 2 WHEN 'description' THEN 3 WHEN 'body' THEN 4 ELSE 5 END", -1, &want, NULL) == SQLITE_OK, "vocab query");
	CHECK(sqlite3_prepare_v2(db, "SELECT term, df, CASE WHEN spill THEN (SELECT blocks FROM postings_spill"
				 " WHERE id = spill) ELSE blocks END, spill, length(blocks) FROM postings ORDER BY term",
				 -1, &got, NULL) == SQLITE_OK,
	      "postings query");
	int spilled = 0;
	int terms = 0, blocks = 0, docs[BLOCKPOST_DOCS], tf[BLOCKPOST_DOCS * FTS_NCOLS];
	unsigned char cols[BLOCKPOST_DOCS];
	int wrow = sqlite3_step(want);
	while (sqlite3_step(got) == SQLITE_ROW) {
		const char *term = (const char *)sqlite3_column_text(got, 0);
		blockpost b;
		int n = sqlite3_column_bytes(got, 2);
		bool spill = sqlite3_column_int64(got, 3) != 0;
		spilled += spill;
		CHECK(spill ? sqlite3_column_int(got, 4) == 0 && n > ATLAS_POSTINGS_INLINE_MAX
			    : n <= ATLAS_POSTINGS_INLINE_MAX,
		      "'%s': %d bytes of blocks %s", term, n, spill ? "spilled, its row's empty" : "in its row");
		if (!CHECK(!blockpost_open(&b, sqlite3_column_blob(got, 2), n), "'%s': blob opens", term))
			continue;
		CHECK(b.ndocs == sqlite3_column_int(got, 1), "'%s': df", term);
		/* a cut blob is refused */
		blockpost cut;
		CHECK(blockpost_open(&cut, sqlite3_column_blob(got, 2), n - 1) != 0 ||
			      blockpost_block(&cut, cut.nblocks - 1, docs, tf, cols) < 0,
		      "'%s': a blob cut short is refused", term);
		blockpost_free(&cut);
		int seen = 0;
		for (int k = 0; k < b.nblocks; k++, blocks++) {
			int m = blockpost_block(&b, k, docs, tf, cols);
			if (!CHECK(m > 0 && (m == BLOCKPOST_DOCS || k == b.nblocks - 1), "'%s' block %d decodes", term, k))
				break;
			double tmax = 0;
			for (int i = 0; i < m; i++) {
				double t = rank_bm25f_tf(tf + i * FTS_NCOLS, sizes + (size_t)(docs[i] - 1) * FTS_NCOLS, avg);
				if (t > tmax)
					tmax = t;
				CHECK((double)b.tmax[k] >= t, "'%s' block %d: max %g below page %d's %g", term, k,
				      (double)b.tmax[k], docs[i], t);
				for (int c = 0; c < FTS_NCOLS; c++) {
					if (!tf[i * FTS_NCOLS + c])
						continue;
					bool same = wrow == SQLITE_ROW &&
						    !strcmp((const char *)sqlite3_column_text(want, 0), term) &&
						    sqlite3_column_int(want, 1) == docs[i] &&
						    col_of((const char *)sqlite3_column_text(want, 2)) == c &&
						    sqlite3_column_int(want, 3) == tf[i * FTS_NCOLS + c];
					CHECK(same, "'%s' page %d column %d: %d matches as FTS5 counts", term, docs[i], c,
					      tf[i * FTS_NCOLS + c]);
					wrow = sqlite3_step(want);
				}
			}
			seen += m;
			CHECK(fabs((double)b.tmax[k] - tmax) <= tmax * 1e-6, "'%s' block %d: max %g is the largest, %g",
			      term, k, (double)b.tmax[k], tmax);
		}
		CHECK(seen == b.ndocs, "'%s': %d pages in its blocks", term, b.ndocs);
		blockpost_free(&b);
		terms++;
	}
	CHECK(wrow == SQLITE_DONE, "every match FTS5 holds is in the postings");
	CHECK(terms > 1000 && blocks > terms, "the index has terms (%d) and blocks (%d)", terms, blocks);
	CHECK(spilled > 0 && spilled < terms, "some terms' blocks spill (%d of %d)", spilled, terms);
	printf("%d terms, %d blocks, %d spilled\n", terms, blocks, spilled);
	sqlite3_finalize(want);
	sqlite3_finalize(got);
	sqlite3_close(db);
	free(sizes);
	return check_done("postings table");
}
