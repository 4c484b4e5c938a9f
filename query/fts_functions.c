/* fts_functions.c - the engine's FTS5 auxiliary functions: which phrases matched, BM25F with
 * the engine's IDFs, section scores, and snippets that stop tokenizing at the window's end. */
#include "fts_functions.h"

#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "schema.h"
#include "strbuf.h"

/**************************************************************************************************
** The matchinfo auxiliary function: which phrases of the MATCH expression hit the current row.
*/

static void aux_phrases(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *out,
			int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	sqlite3_int64 mask = 0;
	int n = api->xPhraseCount(ctx);
	for (int i = 0; i < n && i < 63; i++) {
		Fts5PhraseIter it;
		int col = -1, off = -1;
		if (api->xPhraseFirst(ctx, i, &it, &col, &off) == SQLITE_OK && col >= 0)
			mask |= (sqlite3_int64)1 << i;
	}
	sqlite3_result_int64(out, mask);
}

/* atlas_snippet(tbl, col, ntokens): like FTS5's snippet() with \1 \2 around matches and "…"
 * where text is cut, but it tokenizes the column only up to the end of the chosen window instead
 * of the whole text. The window is the ntokens-long run holding the most distinct phrases. */
typedef struct snip_ctx {
	int pos;          /* position of the next token */
	int from, to;     /* the window [from, to) */
	int first_byte, last_byte;
	unsigned char *hit; /* hit[pos - from]: 1 starts a match, 2 inside one */
	int *starts, *ends;
	int more;         /* the text goes on after the window */
} snip_ctx;

static int snip_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	snip_ctx *c = ctx;
	(void)tok;
	(void)n;
	if (tflags & FTS5_TOKEN_COLOCATED)
		return SQLITE_OK;
	int pos = c->pos++;
	if (pos >= c->to) {
		c->more = 1;
		return SQLITE_DONE; /* stop: the rest of the text is not needed */
	}
	if (pos >= c->from) {
		c->starts[pos - c->from] = start;
		c->ends[pos - c->from] = end;
		if (c->first_byte < 0)
			c->first_byte = start;
		c->last_byte = end;
	}
	return SQLITE_OK;
}

/* Appends to sb the text of column col around its best window of width tokens (from the first
 * token when whole), with \1 \2 around matched phrases and "…" where text is cut. Returns an
 * SQLite code. */
static int make_snippet(const Fts5ExtensionApi *api, Fts5Context *ctx, int col, int width, int whole,
			strbuf *sb)
{
	if (width < 1 || width > 64)
		width = 16;
	int ninst = 0;
	api->xInstCount(ctx, &ninst);
	int best_from = 0, best_score = -1;
	/* the window start: try each match, keep the one covering most distinct phrases (instances
	 * come sorted by column and offset, so a window's matches are the next few) */
	for (int i = 0; i < ninst && !whole; i++) {
		int ph, c, off;
		if (api->xInst(ctx, i, &ph, &c, &off) != SQLITE_OK || c != col)
			continue;
		int from = off > 2 ? off - 2 : 0;
		sqlite3_int64 seen = 0;
		int score = 0;
		for (int k = i; k < ninst; k++) {
			int ph2, c2, off2;
			if (api->xInst(ctx, k, &ph2, &c2, &off2) != SQLITE_OK || c2 != col || off2 >= from + width)
				break;
			if (!(seen & ((sqlite3_int64)1 << (ph2 & 63)))) {
				seen |= (sqlite3_int64)1 << (ph2 & 63);
				score++;
			}
		}
		if (score > best_score) {
			best_score = score;
			best_from = from;
		}
	}
	const char *text = NULL;
	int ntext = 0;
	int rc = api->xColumnText(ctx, col, &text, &ntext);
	if (rc != SQLITE_OK || !text)
		return rc;
	int starts[64], ends[64];
	unsigned char hit[64] = { 0 };
	snip_ctx c = { 0, best_from, best_from + width, -1, -1, hit, starts, ends, 0 };
	for (int i = 0; i < ninst; i++) {
		int ph, ic, off;
		if (api->xInst(ctx, i, &ph, &ic, &off) != SQLITE_OK || ic != col)
			continue;
		int len = api->xPhraseSize(ctx, ph);
		for (int k = 0; k < len; k++)
			if (off + k >= c.from && off + k < c.to)
				hit[off + k - c.from] = k == 0 ? 1 : 2;
	}
	rc = api->xTokenize(ctx, text, ntext, &c, snip_token);
	if (rc != SQLITE_OK && rc != SQLITE_DONE)
		return rc;
	if (c.first_byte < 0)
		return SQLITE_OK;
	int got = (c.pos < c.to ? c.pos : c.to) - c.from;
	if (c.from > 0)
		strbuf_puts(sb, "…");
	int cursor = c.first_byte;
	for (int k = 0; k < got; k++) {
		if (hit[k] == 1 || (hit[k] == 2 && (k == 0 || !hit[k - 1]))) {
			strbuf_append(sb, text + cursor, (size_t)(starts[k] - cursor));
			strbuf_putc(sb, '\1');
			cursor = starts[k];
		}
		if (hit[k] && (k + 1 == got || hit[k + 1] != 2)) {
			strbuf_append(sb, text + cursor, (size_t)(ends[k] - cursor));
			strbuf_putc(sb, '\2');
			cursor = ends[k];
		}
	}
	strbuf_append(sb, text + cursor, (size_t)(c.last_byte - cursor));
	if (c.more)
		strbuf_puts(sb, "…");
	return sb->oom ? SQLITE_NOMEM : SQLITE_OK;
}

static void aux_snippet(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *out, int argc,
			sqlite3_value **argv)
{
	if (argc != 2) {
		sqlite3_result_error(out, "atlas_snippet(col, ntokens)", -1);
		return;
	}
	strbuf sb = STRBUF_INIT;
	int rc = make_snippet(api, ctx, sqlite3_value_int(argv[0]), sqlite3_value_int(argv[1]), 0, &sb);
	if (rc != SQLITE_OK)
		sqlite3_result_error_code(out, rc);
	else
		sqlite3_result_text(out, strbuf_str(&sb), (int)sb.len, SQLITE_TRANSIENT);
	strbuf_free(&sb);
}

/* atlas_section_score(tbl, weights): how well a section matches, cheaper than bm25 (which scans
 * every phrase's whole list for its IDF on each query): the sum over matched phrases of the phrase's
 * weight (weights: comma-separated, one per phrase, from the query's term IDFs), tripled for a match
 * in the heading (column 0), plus a little for repeats in the body. */
static double section_score(const Fts5ExtensionApi *api, Fts5Context *ctx, const char *ws)
{
	double w[64];
	int nw = 0;
	while (ws && *ws && nw < 64) {
		char *end;
		w[nw++] = strtod(ws, &end);
		if (end == ws)
			break;
		ws = *end == ',' ? end + 1 : end;
	}
	int nphrase = api->xPhraseCount(ctx);
	double score = 0;
	for (int p = 0; p < nphrase && p < 64; p++) {
		Fts5PhraseIter it;
		int col = -1, off = -1, head = 0, body = 0;
		for (api->xPhraseFirst(ctx, p, &it, &col, &off); col >= 0; api->xPhraseNext(ctx, &it, &col, &off)) {
			if (col == 0)
				head = 1;
			else
				body++;
		}
		double wp = p < nw ? w[p] : 1.0;
		if (head || body)
			score += wp * (head ? RANK_SEC_HEADING : 1.0) +
				 wp * RANK_SEC_REPEAT * (body > RANK_SEC_REPEATS ? RANK_SEC_REPEATS : body);
	}
	return score;
}

static void aux_section_score(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *out,
			      int argc, sqlite3_value **argv)
{
	sqlite3_result_double(out, section_score(api, ctx, argc > 0 ? (const char *)sqlite3_value_text(argv[0]) : NULL));
}

/* atlas_section(tbl, weights): for the sections of one page, in one pass. Scores the row; when the
 * score is among the best SECTION_KEEP seen since the keep state was reset, returns
 * "score \x1f highlighted heading \x1f snippet", else NULL, so that text work is done only for
 * sections that may be shown. The keep state is the function's user data, reset by the engine. */
static void aux_section(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *out, int argc,
			sqlite3_value **argv)
{
	section_keep *keep = api->xUserData(ctx);
	double score = section_score(api, ctx, argc > 0 ? (const char *)sqlite3_value_text(argv[0]) : NULL);
	int slot = -1;
	if (keep->n < SECTION_KEEP)
		slot = keep->n++;
	else {
		int worst = 0;
		for (int k = 1; k < SECTION_KEEP; k++)
			if (keep->score[k] < keep->score[worst])
				worst = k;
		if (score > keep->score[worst])
			slot = worst;
	}
	if (slot < 0) {
		sqlite3_result_null(out);
		return;
	}
	keep->score[slot] = score;
	strbuf sb = STRBUF_INIT;
	strbuf_printf(&sb, "%.6f\x1f", score);
	int rc = make_snippet(api, ctx, 0, 64, 1, &sb);
	strbuf_putc(&sb, '\x1f');
	if (rc == SQLITE_OK)
		rc = make_snippet(api, ctx, 1, 16, 0, &sb);
	if (rc != SQLITE_OK)
		sqlite3_result_error_code(out, rc);
	else
		sqlite3_result_text(out, strbuf_str(&sb), (int)sb.len, SQLITE_TRANSIENT);
	strbuf_free(&sb);
}

/* atlas_rank(fts, idfs): BM25F over the weighted columns. idfs is a comma-separated IDF per phrase
 * of the MATCH expression, computed by the engine from its vocabulary, so that no query scans a
 * phrase's whole list for its document frequency (FTS5's bm25() does, on every query). Column
 * weights and k1, b come from rank.h; average column lengths from the table's totals. */
typedef struct rank_aux {
	int nphrase;
	double idf[64];
	double avg[FTS_NCOLS];
} rank_aux;

static void aux_rank(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *out, int argc,
		     sqlite3_value **argv)
{
	static const double weight[FTS_NCOLS] = { RANK_W_TITLE, RANK_W_KEYWORDS, RANK_W_HEADINGS,
						  RANK_W_DESCRIPTION, RANK_W_BODY };
	rank_aux *ra = api->xGetAuxdata(ctx, 0);
	if (!ra) {
		ra = sqlite3_malloc(sizeof(*ra));
		if (!ra) {
			sqlite3_result_error_nomem(out);
			return;
		}
		memset(ra, 0, sizeof(*ra));
		const char *s = argc > 0 ? (const char *)sqlite3_value_text(argv[0]) : NULL;
		while (s && *s && ra->nphrase < 64) {
			char *end;
			ra->idf[ra->nphrase++] = strtod(s, &end);
			if (end == s)
				break;
			s = *end == ',' ? end + 1 : end;
		}
		sqlite3_int64 rows = 0;
		api->xRowCount(ctx, &rows);
		for (int c = 0; c < FTS_NCOLS; c++) {
			sqlite3_int64 total = 0;
			api->xColumnTotalSize(ctx, c, &total);
			ra->avg[c] = rows > 0 && total > 0 ? (double)total / (double)rows : 1.0;
		}
		if (api->xSetAuxdata(ctx, ra, sqlite3_free) != SQLITE_OK) {
			sqlite3_result_error_nomem(out);
			return;
		}
	}
	int len[FTS_NCOLS];
	for (int c = 0; c < FTS_NCOLS; c++) {
		len[c] = 0;
		api->xColumnSize(ctx, c, &len[c]);
	}
	int nphrase = api->xPhraseCount(ctx);
	double score = 0;
	for (int p = 0; p < nphrase && p < 64; p++) {
		Fts5PhraseIter it;
		int col = -1, off = -1;
		int tf[FTS_NCOLS] = { 0 };
		int any = 0;
		for (api->xPhraseFirst(ctx, p, &it, &col, &off); col >= 0; api->xPhraseNext(ctx, &it, &col, &off))
			if (col < FTS_NCOLS) {
				tf[col]++;
				any = 1;
			}
		if (!any)
			continue;
		double t = 0;
		for (int c = 0; c < FTS_NCOLS; c++)
			if (tf[c])
				t += weight[c] * tf[c] / (1.0 - RANK_BM25_B + RANK_BM25_B * len[c] / ra->avg[c]);
		double idf = p < ra->nphrase ? ra->idf[p] : 1.0;
		score += idf * t * (RANK_BM25_K1 + 1.0) / (t + RANK_BM25_K1);
	}
	sqlite3_result_double(out, score);
}

int fts_functions_register(sqlite3 *db, section_keep *keep)
{
	fts5_api *api = NULL;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
	sqlite3_step(st);
	sqlite3_finalize(st);
	if (!api)
		return -1;
	if (api->xCreateFunction(api, "atlas_phrases", NULL, aux_phrases, NULL) != SQLITE_OK)
		return -1;
	if (api->xCreateFunction(api, "atlas_section_score", NULL, aux_section_score, NULL) != SQLITE_OK)
		return -1;
	if (api->xCreateFunction(api, "atlas_rank", NULL, aux_rank, NULL) != SQLITE_OK)
		return -1;
	if (api->xCreateFunction(api, "atlas_section", keep, aux_section, NULL) != SQLITE_OK)
		return -1;
	return api->xCreateFunction(api, "atlas_snippet", NULL, aux_snippet, NULL) == SQLITE_OK ? 0 : -1;
}

