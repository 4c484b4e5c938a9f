/* engine.c - opening an index and answering searches: query analysis (synonyms, typos, prefix),
 * candidate retrieval through FTS5, ranking, snippets, sections and facets. */
#include "engine.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "analyzer.h"
#include "engine_internal.h"
#include "parse.h"
#include "rank.h"
#include "schema.h"
#include "stopwords.h"
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

static void aux_snippet(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *out, int argc,
			sqlite3_value **argv)
{
	if (argc != 2) {
		sqlite3_result_error(out, "atlas_snippet(col, ntokens)", -1);
		return;
	}
	int col = sqlite3_value_int(argv[0]);
	int width = sqlite3_value_int(argv[1]);
	if (width < 1 || width > 64)
		width = 16;
	int ninst = 0;
	api->xInstCount(ctx, &ninst);
	/* the window start: try each match, keep the one covering most distinct phrases */
	int best_from = 0, best_score = -1;
	for (int i = 0; i < ninst; i++) {
		int ph, c, off;
		if (api->xInst(ctx, i, &ph, &c, &off) != SQLITE_OK || c != col)
			continue;
		int from = off > 2 ? off - 2 : 0;
		sqlite3_int64 seen = 0;
		int score = 0;
		for (int k = 0; k < ninst; k++) {
			int ph2, c2, off2;
			if (api->xInst(ctx, k, &ph2, &c2, &off2) == SQLITE_OK && c2 == col && off2 >= from &&
			    off2 < from + width && !(seen & ((sqlite3_int64)1 << (ph2 & 63)))) {
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
	if (api->xColumnText(ctx, col, &text, &ntext) != SQLITE_OK || !text) {
		sqlite3_result_text(out, "", 0, SQLITE_STATIC);
		return;
	}
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
	int rc = api->xTokenize(ctx, text, ntext, &c, snip_token);
	if (rc != SQLITE_OK && rc != SQLITE_DONE) {
		sqlite3_result_error_code(out, rc);
		return;
	}
	if (c.first_byte < 0) {
		sqlite3_result_text(out, "", 0, SQLITE_STATIC);
		return;
	}
	int got = (c.pos < c.to ? c.pos : c.to) - c.from;
	strbuf sb = STRBUF_INIT;
	if (c.from > 0)
		strbuf_puts(&sb, "…");
	int cursor = c.first_byte;
	for (int k = 0; k < got; k++) {
		if (hit[k] == 1 || (hit[k] == 2 && (k == 0 || !hit[k - 1]))) {
			strbuf_append(&sb, text + cursor, (size_t)(starts[k] - cursor));
			strbuf_putc(&sb, '\1');
			cursor = starts[k];
		}
		if (hit[k] && (k + 1 == got || hit[k + 1] != 2)) {
			strbuf_append(&sb, text + cursor, (size_t)(ends[k] - cursor));
			strbuf_putc(&sb, '\2');
			cursor = ends[k];
		}
	}
	strbuf_append(&sb, text + cursor, (size_t)(c.last_byte - cursor));
	if (c.more)
		strbuf_puts(&sb, "…");
	if (sb.oom)
		sqlite3_result_error_nomem(out);
	else
		sqlite3_result_text(out, strbuf_str(&sb), (int)sb.len, SQLITE_TRANSIENT);
	strbuf_free(&sb);
}

/* atlas_section_score(tbl, weights): how well a section matches, cheaper than bm25 (which scans
 * every phrase's whole list for its IDF on each query): the sum over matched phrases of the phrase's
 * weight (weights: comma-separated, one per phrase, from the query's term IDFs), tripled for a match
 * in the heading (column 0), plus a little for repeats in the body. */
static void aux_section_score(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *out,
			      int argc, sqlite3_value **argv)
{
	double w[64];
	int nw = 0;
	const char *ws = argc > 0 ? (const char *)sqlite3_value_text(argv[0]) : NULL;
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
			score += wp * (head ? 3.0 : 1.0) + wp * 0.25 * (body > 4 ? 4 : body);
	}
	sqlite3_result_double(out, score);
}

static int register_aux(sqlite3 *db)
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
	return api->xCreateFunction(api, "atlas_snippet", NULL, aux_snippet, NULL) == SQLITE_OK ? 0 : -1;
}

/**************************************************************************************************
** Opening.
*/

static char *dup_col(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);
	return strdup(s ? s : "");
}

static int cmp_vocab(const void *a, const void *b)
{
	return strcmp(((const vocab_entry *)a)->term, ((const vocab_entry *)b)->term);
}

/* Folded words of text, analyzed in prefix mode (surface forms), into a NUL-separated list. */
typedef struct words_ctx {
	strbuf *out;
	atlas_analyzer *a;
	bool stem;
	int n;
} words_ctx;

static int words_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	words_ctx *w = ctx;
	(void)tflags;
	(void)start;
	(void)end;
	char stem[256];
	if (w->stem) {
		int sl = atlas_stem(w->a, tok, n, stem, sizeof(stem));
		tok = stem;
		n = sl;
	}
	if (w->n++)
		strbuf_putc(w->out, ' ');
	strbuf_append(w->out, tok, (size_t)n);
	return 0;
}

/* Writes the folded surface words (or their stems) of text into out, space-separated. */
void engine_normalize(atlas_engine *e, strbuf *out, const char *text, bool stem)
{
	words_ctx w = { out, e->analyzer, stem, 0 };
	atlas_analyze(e->analyzer, FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX, text, (int)strlen(text),
		      words_token, &w);
}

static int load_docs(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db,
			       "SELECT id, path, url, title, type, description, topics, priority,"
			       " first_section, last_section, keywords FROM docs ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read documents: %s", sqlite3_errmsg(e->db));
	int cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (e->ndocs == cap) {
			cap = cap ? cap * 2 : 256;
			atlas_doc *d = realloc(e->docs, (size_t)cap * sizeof(*d));
			if (!d)
				goto oom;
			e->docs = d;
		}
		atlas_doc *d = &e->docs[e->ndocs];
		memset(d, 0, sizeof(*d));
		d->id = sqlite3_column_int(st, 0);
		d->path = dup_col(st, 1);
		d->url = dup_col(st, 2);
		d->title = dup_col(st, 3);
		d->type = dup_col(st, 4);
		d->description = dup_col(st, 5);
		d->priority = sqlite3_column_double(st, 7);
		d->first_section = sqlite3_column_int(st, 8);
		d->last_section = sqlite3_column_int(st, 9);
		cJSON *tj = cJSON_Parse((const char *)sqlite3_column_text(st, 6));
		int nt = cJSON_IsArray(tj) ? cJSON_GetArraySize(tj) : 0;
		d->topics = calloc((size_t)nt + 1, sizeof(char *));
		cJSON *it;
		cJSON_ArrayForEach(it, tj) {
			if (cJSON_IsString(it) && d->topics)
				d->topics[d->ntopics++] = strdup(it->valuestring);
		}
		cJSON_Delete(tj);
		strbuf tn = STRBUF_INIT;
		strbuf_putc(&tn, ' ');
		engine_normalize(e, &tn, d->title, true);
		strbuf_putc(&tn, ' ');
		d->title_norm = strbuf_detach(&tn);
		strbuf tw = STRBUF_INIT;
		strbuf_putc(&tw, ' ');
		engine_normalize(e, &tw, d->title, false);
		strbuf_putc(&tw, ' ');
		d->title_words = strbuf_detach(&tw);
		strbuf kn = STRBUF_INIT;
		strbuf_putc(&kn, ' ');
		engine_normalize(e, &kn, (const char *)sqlite3_column_text(st, 10), true);
		strbuf_putc(&kn, ' ');
		d->keywords_norm = strbuf_detach(&kn);
		if (!strmap_put(&e->path_index, d->path, strlen(d->path), e->ndocs, NULL))
			goto oom;
		e->ndocs++;
	}
	sqlite3_finalize(st);
	return 0;
oom:
	sqlite3_finalize(st);
	return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading documents");
}

static int load_vocab(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db, "SELECT term, df FROM vocab", -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read vocabulary: %s", sqlite3_errmsg(e->db));
	int cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (e->nvocab == cap) {
			cap = cap ? cap * 2 : 4096;
			vocab_entry *v = realloc(e->vocab, (size_t)cap * sizeof(*v));
			if (!v) {
				sqlite3_finalize(st);
				return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading vocabulary");
			}
			e->vocab = v;
		}
		vocab_entry *v = &e->vocab[e->nvocab++];
		v->term = dup_col(st, 0);
		v->len = (int)strlen(v->term);
		v->df = sqlite3_column_int(st, 1);
		v->alpha = 1;
		for (int i = 0; i < v->len; i++)
			if (!islower((unsigned char)v->term[i]))
				v->alpha = 0;
	}
	sqlite3_finalize(st);
	qsort(e->vocab, (size_t)e->nvocab, sizeof(vocab_entry), cmp_vocab);
	for (int i = 0; i < e->nvocab; i++)
		strmap_put(&e->vocab_index, e->vocab[i].term, (size_t)e->vocab[i].len, i, NULL);
	return 0;
}

static int load_synonyms(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db, "SELECT grp, term FROM synonyms ORDER BY grp, rowid", -1, &st,
			       NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read synonyms: %s", sqlite3_errmsg(e->db));
	int cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (e->nsyn == cap) {
			cap = cap ? cap * 2 : 256;
			syn_term *s = realloc(e->syn, (size_t)cap * sizeof(*s));
			if (!s) {
				sqlite3_finalize(st);
				return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading synonyms");
			}
			e->syn = s;
		}
		syn_term *s = &e->syn[e->nsyn];
		s->group = sqlite3_column_int(st, 0);
		s->text = dup_col(st, 1);
		/* keyed by its folded words, by those words with joiners as spaces, and by stems */
		strbuf k = STRBUF_INIT;
		engine_normalize(e, &k, s->text, false);
		strmap_put(&e->syn_index, strbuf_str(&k), k.len, e->nsyn, NULL);
		s->words = 1;
		for (size_t i = 0; i < k.len; i++)
			s->words += k.buf[i] == ' ';
		char *spaced = strdup(s->text);
		for (char *c = spaced; c && *c; c++)
			if (strchr("-_./:", *c))
				*c = ' ';
		strbuf_reset(&k);
		if (spaced)
			engine_normalize(e, &k, spaced, false);
		strmap_put(&e->syn_index, strbuf_str(&k), k.len, e->nsyn, NULL);
		strbuf_reset(&k);
		if (spaced)
			engine_normalize(e, &k, spaced, true);
		strmap_put(&e->syn_stem_index, strbuf_str(&k), k.len, e->nsyn, NULL);
		free(spaced);
		strbuf_free(&k);
		e->nsyn++;
	}
	sqlite3_finalize(st);
	return 0;
}

static int load_meta(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db, "SELECT key, value FROM meta", -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read meta: %s", sqlite3_errmsg(e->db));
	while (sqlite3_step(st) == SQLITE_ROW && e->nmeta < (int)(sizeof(e->meta) / sizeof(e->meta[0]))) {
		e->meta[e->nmeta].key = dup_col(st, 0);
		e->meta[e->nmeta].value = dup_col(st, 1);
		e->nmeta++;
	}
	sqlite3_finalize(st);
	return 0;
}

static int prepare_all(atlas_engine *e, atlas_error *err)
{
	char sql[1024];
	snprintf(sql, sizeof(sql),
		 "SELECT rowid, -bm25(fts, %g, %g, %g, %g, %g), atlas_phrases(fts) FROM fts"
		 " WHERE fts MATCH ?1 ORDER BY 2 DESC LIMIT %d",
		 RANK_W_TITLE, RANK_W_KEYWORDS, RANK_W_HEADINGS, RANK_W_DESCRIPTION, RANK_W_BODY,
		 RANK_CANDIDATES);
	struct {
		sqlite3_stmt **st;
		const char *sql;
	} all[] = {
		{ &e->st_match, sql },
		{ &e->st_explain,
		  "SELECT -bm25(fts, 1, 0, 0, 0, 0), -bm25(fts, 0, 1, 0, 0, 0), -bm25(fts, 0, 0, 1, 0, 0),"
		  " -bm25(fts, 0, 0, 0, 1, 0), -bm25(fts, 0, 0, 0, 0, 1) FROM fts"
		  " WHERE fts MATCH ?1 AND rowid = ?2" },
		{ &e->st_sections,
		  "SELECT rowid, -atlas_section_score(sec_fts, ?2) FROM sec_fts WHERE sec_fts MATCH ?1" },
		/* one pass over the matching sections: text work only for the chosen ones (an IN list
		 * on rowid would restart the MATCH for every id) */
		{ &e->st_snippet,
		  "SELECT rowid, CASE WHEN rowid IN (SELECT value FROM json_each(?2)) THEN"
		  " highlight(sec_fts, 0, char(1), char(2)) END, CASE WHEN rowid IN"
		  " (SELECT value FROM json_each(?2)) THEN atlas_snippet(sec_fts, 1, 16) END"
		  " FROM sec_fts WHERE sec_fts MATCH ?1" },
		{ &e->st_section_meta, "SELECT level, anchor FROM sections WHERE id = ?1" },
		{ &e->st_next, "SELECT dst, signal, weight, detail FROM next_candidates WHERE src = ?1" },
		{ &e->st_guide_steps, "SELECT step, doc_id FROM guide_steps WHERE guide_id = ?1 ORDER BY step" },
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (sqlite3_prepare_v3(e->db, all[i].sql, -1, SQLITE_PREPARE_PERSISTENT, all[i].st, NULL) !=
		    SQLITE_OK)
			return atlas_error_set(err, ATLAS_ESQL, "prepare: %s", sqlite3_errmsg(e->db));
	return 0;
}

int atlas_engine_open(atlas_engine **out, const char *path, atlas_error *err)
{
	*out = NULL;
	atlas_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	/* a URI with immutable=1: the index never changes in place (it is replaced by rename) */
	strbuf uri = STRBUF_INIT;
	strbuf_puts(&uri, "file:");
	for (const char *c = path; *c; c++) {
		if (*c == '?' || *c == '#' || *c == '%')
			strbuf_printf(&uri, "%%%02X", (unsigned char)*c);
		else
			strbuf_putc(&uri, *c);
	}
	strbuf_puts(&uri, "?immutable=1");
	FILE *probe = fopen(path, "rb");
	int rc = 0;
	if (!probe) {
		rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot open index: no such file or not readable", path);
		goto fail;
	}
	fclose(probe);
	if (sqlite3_open_v2(strbuf_str(&uri), &e->db,
			    SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot open index: %s", path,
				     e->db ? sqlite3_errmsg(e->db) : "out of memory");
		goto fail;
	}
	sqlite3_exec(e->db, "PRAGMA mmap_size=268435456", NULL, NULL, NULL);
	rc = atlas_schema_check(e->db, err);
	if (rc) {
		char why[sizeof(err->msg)];
		snprintf(why, sizeof(why), "%s", err ? err->msg : "");
		atlas_error_set(err, rc, "%s: %s", path, why);
		goto fail;
	}
	if ((rc = atlas_analyzer_register(e->db, err)) || (rc = atlas_analyzer_new(&e->analyzer, e->db, err)))
		goto fail;
	if (register_aux(e->db)) {
		rc = atlas_error_set(err, ATLAS_ESQL, "cannot register the ranking function");
		goto fail;
	}
	if ((rc = load_meta(e, err)) || (rc = load_docs(e, err)) || (rc = load_vocab(e, err)) ||
	    (rc = load_synonyms(e, err)) || (rc = prepare_all(e, err)))
		goto fail;
	e->mark = calloc((size_t)e->ndocs + 1, sizeof(*e->mark));
	e->cand = calloc((size_t)e->ndocs + 1, sizeof(*e->cand));
	if (!e->mark || !e->cand) {
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		goto fail;
	}
	strbuf_free(&uri);
	*out = e;
	return 0;
fail:
	strbuf_free(&uri);
	atlas_engine_free(e);
	return rc ? rc : ATLAS_ESQL;
}

void atlas_engine_free(atlas_engine *e)
{
	if (!e)
		return;
	sqlite3_finalize(e->st_match);
	sqlite3_finalize(e->st_explain);
	sqlite3_finalize(e->st_sections);
	sqlite3_finalize(e->st_snippet);
	sqlite3_finalize(e->st_section_meta);
	sqlite3_finalize(e->st_next);
	sqlite3_finalize(e->st_guide_steps);
	atlas_analyzer_free(e->analyzer);
	if (e->db)
		sqlite3_close(e->db);
	for (int i = 0; i < e->ndocs; i++) {
		atlas_doc *d = &e->docs[i];
		free(d->path);
		free(d->url);
		free(d->title);
		free(d->type);
		free(d->description);
		for (int k = 0; k < d->ntopics; k++)
			free(d->topics[k]);
		free(d->topics);
		free(d->title_norm);
		free(d->keywords_norm);
		free(d->title_words);
	}
	free(e->docs);
	for (int i = 0; i < e->nvocab; i++)
		free(e->vocab[i].term);
	free(e->vocab);
	for (int i = 0; i < e->nsyn; i++)
		free(e->syn[i].text);
	free(e->syn);
	for (int i = 0; i < e->nmeta; i++) {
		free(e->meta[i].key);
		free(e->meta[i].value);
	}
	strmap_free(&e->path_index);
	strmap_free(&e->vocab_index);
	strmap_free(&e->syn_index);
	strmap_free(&e->syn_stem_index);
	free(e->mark);
	free(e->cand);
	free(e);
}

const atlas_doc *atlas_engine_doc(const atlas_engine *e, int i)
{
	return i >= 0 && i < e->ndocs ? &e->docs[i] : NULL;
}

int atlas_engine_ndocs(const atlas_engine *e)
{
	return e->ndocs;
}

int atlas_engine_vocab_size(const atlas_engine *e)
{
	return e->nvocab;
}

const char *atlas_engine_meta(const atlas_engine *e, const char *key)
{
	for (int i = 0; i < e->nmeta; i++)
		if (strcmp(e->meta[i].key, key) == 0)
			return e->meta[i].value;
	return NULL;
}

int atlas_engine_find(const atlas_engine *e, const char *path)
{
	if (!path)
		return -1;
	int *i = strmap_get(&e->path_index, path);
	return i ? *i : -1;
}

int vocab_df(const atlas_engine *e, const char *w, size_t n)
{
	int *i = strmap_getn(&e->vocab_index, w, n);
	return i ? e->vocab[*i].df : 0;
}
