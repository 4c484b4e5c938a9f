/* fts_functions.c - the engine's FTS5 auxiliary function: BM25F with the engine's IDFs, recording
 * each row's matches on the way. */
#include "fts_functions.h"
#include "error.h"
#include "grow.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "rank.h"

/**************************************************************************************************
** The match record.
*/

void match_record_free(match_record *r)
{
	if (!r)
		return;
	free(r->inst);
	r->inst = NULL;
	r->ninst = r->cap = 0;
}

/* Appends one match; returns 0, or ATLAS_ENOMEM when the arena is at its limit or cannot grow (the
 * caller then stops recording the row). */
static int record_inst(match_record *r, int phrase, int col, int off)
{
	if (r->ninst == r->cap) {
		if (r->ninst >= r->limit)
			return ATLAS_ENOMEM;
		int cap = r->cap ? r->cap * 2 : 4096;
		if (cap > r->limit)
			cap = r->limit;
		if (atlas_resize(&r->inst, (size_t)cap, sizeof(*r->inst)))
			return ATLAS_ENOMEM;
		r->cap = cap;
	}
	r->inst[r->ninst++] = (fts_inst){ off, (short)phrase, (short)col };
	return 0;
}

/**************************************************************************************************
** Scoring a row.
*/

void rank_row_begin(rank_row *r, match_record *rec, const int *len, const double *avg)
{
	r->rec = rec;
	memcpy(r->len, len, sizeof(r->len));
	r->avg = avg;
	r->score = 0;
	r->recorded = true;
	memset(r->tf, 0, sizeof(r->tf));
	r->any = false;
	r->word_matched = false;
	rec->row_phrases = rec->row_title = rec->row_keywords = rec->row_headings = rec->row_defs = 0;
	rec->row_start = rec->ninst;
}

void rank_row_inst(rank_row *r, int p, int col, int off)
{
	if (col < 0 || col >= FTS_NCOLS)
		return;
	r->tf[col]++;
	r->any = true;
	if (r->recorded && record_inst(r->rec, p, col, off))
		r->recorded = false;
}

void rank_row_phrase_end(rank_row *r, int p)
{
	match_record *rec = r->rec;
	if (!r->any)
		return;
	if (p < 63) {
		sqlite3_int64 bit = (sqlite3_int64)1 << p;
		rec->row_phrases |= bit;
		if (r->tf[FTS_TITLE])
			rec->row_title |= bit;
		if (r->tf[FTS_KEYWORDS])
			rec->row_keywords |= bit;
		if (r->tf[FTS_HEADINGS])
			rec->row_headings |= bit;
		if (r->tf[FTS_DEFS])
			rec->row_defs |= bit;
	}
	if (p >= rec->word_from && p < rec->complete_from)
		r->word_matched = true;
	/* a completion adds nothing to a row holding the word itself: the word typed, not a longer
	 * word that starts with it (the "pathname" inside "GetFullPathName"), is what it matched */
	bool completion = p >= rec->complete_from && p < rec->complete_to;
	double t = completion && r->word_matched ? 0 : rank_bm25f_tf(r->tf, r->len, r->avg);
	double idf = p < rec->nidf ? rec->idf[p] : 1.0;
	r->score += idf * t * (RANK_BM25_K1 + 1.0) / (t + RANK_BM25_K1);
	memset(r->tf, 0, sizeof(r->tf));
	r->any = false;
}

double rank_row_end(rank_row *r)
{
	match_record *rec = r->rec;
	if (r->recorded)
		rec->row_n = rec->ninst - rec->row_start;
	else {
		rec->ninst = rec->row_start; /* what fitted of this row is dropped: all or nothing */
		rec->row_n = -1;
	}
	return r->score;
}

/**************************************************************************************************
** atlas_rank.
*/

/* atlas_rank(fts): BM25F over the weighted columns, with the IDF of each phrase of the MATCH
 * expression set by the engine in the match record (computed from its vocabulary, so that no
 * query scans a phrase's whole list for its document frequency, as FTS5's bm25() does on every
 * query). Column weights and k1, b come from rank.h; average column lengths from the record, or
 * from the table's totals once per statement. */
static void aux_rank(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *out, int argc,
		     sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	match_record *rec = api->xUserData(ctx);
	const double *avg = rec->avg;
	if (!rec->sizes) {
		double *a = api->xGetAuxdata(ctx, 0);
		if (!a) {
			a = sqlite3_malloc(sizeof(double) * FTS_NCOLS);
			if (!a) {
				sqlite3_result_error_nomem(out);
				return;
			}
			sqlite3_int64 rows = 0;
			api->xRowCount(ctx, &rows);
			for (int c = 0; c < FTS_NCOLS; c++) {
				sqlite3_int64 total = 0;
				api->xColumnTotalSize(ctx, c, &total);
				a[c] = rows > 0 && total > 0 ? (double)total / (double)rows : 1.0;
			}
			if (api->xSetAuxdata(ctx, a, sqlite3_free) != SQLITE_OK) {
				sqlite3_result_error_nomem(out);
				return;
			}
		}
		avg = a;
	}
	int len[FTS_NCOLS];
	sqlite3_int64 rowid = api->xRowid(ctx);
	if (rec->sizes && rowid >= 1 && rowid <= rec->nrows)
		memcpy(len, rec->sizes + (rowid - 1) * FTS_NCOLS, sizeof(len));
	else
		for (int c = 0; c < FTS_NCOLS; c++) {
			len[c] = 0;
			api->xColumnSize(ctx, c, &len[c]);
		}
	int nphrase = api->xPhraseCount(ctx);
	rank_row r;
	rank_row_begin(&r, rec, len, avg);
	for (int p = 0; p < nphrase && p < FTS_MAX_PHRASES; p++) {
		Fts5PhraseIter it;
		int col = -1, off = -1;
		rec->phrase_size[p] = api->xPhraseSize(ctx, p);
		for (api->xPhraseFirst(ctx, p, &it, &col, &off); col >= 0; api->xPhraseNext(ctx, &it, &col, &off))
			rank_row_inst(&r, p, col, off);
		rank_row_phrase_end(&r, p);
	}
	sqlite3_result_double(out, rank_row_end(&r));
}

int fts_functions_register(sqlite3 *db, match_record *rec)
{
	fts5_api *api = NULL;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK)
		return ATLAS_ESQL;
	sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
	sqlite3_step(st);
	sqlite3_finalize(st);
	if (!api)
		return ATLAS_ESQL;
	return api->xCreateFunction(api, "atlas_rank", rec, aux_rank, NULL) == SQLITE_OK ? 0 : ATLAS_ESQL;
}
