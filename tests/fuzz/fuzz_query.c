/* fuzz_query.c - arbitrary bytes as a reader's query.
 *
 * (a) query_parse on the raw bytes (NUL bytes included): the clean text is valid UTF-8 without
 *     control bytes and within ATLAS_QUERY_MAX_BYTES, clauses are non-empty and trimmed, and
 *     fts_quote turns each clause, and an expression of all of them, into FTS5 syntax that an
 *     in-memory FTS5 table accepts (the quote-doubling path is reached here only: the engine
 *     quotes analyzer tokens, which never hold '"').
 * (b) atlas_search over the small fuzzing index (tests/corpora/mini), limit 10, the input's NUL
 *     bytes turned into spaces as the server does: it must never return ATLAS_ESQL (an FTS5
 *     syntax error in an expression the engine built would surface as that) nor any other error
 *     for these valid parameters; hits within the limit, snippets escaped, JSON well formed.
 * (c) atlas_suggest on the same text: a count within bounds, valid documents or terms.
 * (d) the same search through FTS5 (an engine not holding the postings): the same JSON body,
 *     took_ms aside. */
#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz.h"
#include "json.h"
#include "parse.h"
#include "strbuf.h"

static sqlite3 *memdb;
static sqlite3_stmt *memq;

static void close_memdb(void)
{
	sqlite3_finalize(memq);
	sqlite3_close(memdb);
	memdb = NULL;
	memq = NULL;
}

/* An in-memory FTS5 table with a few rows, to check that expressions parse. */
static sqlite3_stmt *memdb_query(void)
{
	if (memq)
		return memq;
	if (sqlite3_open(":memory:", &memdb) != SQLITE_OK ||
	    sqlite3_exec(memdb,
			 "CREATE VIRTUAL TABLE t USING fts5(x);"
			 "INSERT INTO t VALUES ('consistent hashing with a ring'),"
			 " ('the lru cache evicts'), ('write-ahead log \"quoted\" text');",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(memdb, "SELECT count(*) FROM t WHERE t MATCH ?1", -1, &memq, NULL) !=
		    SQLITE_OK) {
		fprintf(stderr, "fuzz: cannot set up the in-memory FTS5 table: %s\n",
			memdb ? sqlite3_errmsg(memdb) : "out of memory");
		abort();
	}
	atexit(close_memdb);
	return memq;
}

/* Runs expr against the in-memory table; returns NULL or SQLite's complaint. */
static const char *fts5_rejects(const char *expr)
{
	sqlite3_stmt *st = memdb_query();
	sqlite3_bind_text(st, 1, expr, -1, SQLITE_TRANSIENT);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? NULL : sqlite3_errmsg(memdb);
}

static void check_parse(const uint8_t *data, size_t size)
{
	parsed_query q;
	if (query_parse(&q, (const char *)data, size, ATLAS_QUERY_MAX_BYTES)) {
		if (q.clean || q.nclauses)
			fuzz_fail(data, size, "query_parse failed but left the query non-empty");
		return; /* out of memory */
	}
	size_t len = strlen(q.clean);
	if (len > ATLAS_QUERY_MAX_BYTES)
		fuzz_fail(data, size, "clean query of %zu bytes, over %d", len, ATLAS_QUERY_MAX_BYTES);
	if (fuzz_utf8_invalid_at(q.clean, len) >= 0)
		fuzz_fail(data, size, "clean query is not valid UTF-8 at byte %ld",
			  fuzz_utf8_invalid_at(q.clean, len));
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)q.clean[i] < 0x20 || q.clean[i] == 0x7F)
			fuzz_fail(data, size, "control byte 0x%02x left in the clean query", (unsigned char)q.clean[i]);
	if (q.nclauses < 0 || q.nclauses > QUERY_MAX_CLAUSES)
		fuzz_fail(data, size, "%d clauses", q.nclauses);
	strbuf expr = STRBUF_INIT;
	int positive = 0;
	for (int i = 0; i < q.nclauses; i++) {
		const query_clause *c = &q.clauses[i];
		size_t n = c->text ? strlen(c->text) : 0;
		if (n == 0)
			fuzz_fail(data, size, "clause %d is empty", i);
		if (c->text[0] == ' ' || c->text[n - 1] == ' ')
			fuzz_fail(data, size, "clause %d '%s' is not trimmed", i, c->text);
		if (strchr(c->text, '"'))
			fuzz_fail(data, size, "clause %d '%s' holds a double quote", i, c->text);
		if (!c->phrase && strpbrk(c->text, " \t"))
			fuzz_fail(data, size, "word clause %d '%s' holds white space", i, c->text);
		if (!strstr(q.clean, c->text))
			fuzz_fail(data, size, "clause %d '%s' is not in the clean query", i, c->text);
		/* fts_quote: one FTS5 string, whatever the text */
		strbuf one = STRBUF_INIT;
		fts_quote(&one, c->text, n);
		const char *why = fts5_rejects(strbuf_str(&one));
		if (why)
			fuzz_fail(data, size, "FTS5 rejects fts_quote of clause %d (%s): %s", i,
				  strbuf_str(&one), why);
		strbuf_free(&one);
		if (c->negated)
			continue;
		if (positive++)
			strbuf_puts(&expr, " AND ");
		fts_quote(&expr, c->text, n);
	}
	if (positive) {
		for (int i = 0; i < q.nclauses; i++)
			if (q.clauses[i].negated) {
				strbuf_puts(&expr, " NOT ");
				fts_quote(&expr, q.clauses[i].text, strlen(q.clauses[i].text));
			}
		const char *why = fts5_rejects(strbuf_str(&expr));
		if (why)
			fuzz_fail(data, size, "FTS5 rejects the expression %s: %s", strbuf_str(&expr), why);
	}
	strbuf_free(&expr);
	parsed_query_free(&q);
}

static void check_html(const uint8_t *data, size_t size, const char *what, const char *html)
{
	if (!html)
		fuzz_fail(data, size, "%s is NULL", what);
	const char *why = fuzz_html_problem(html);
	if (why)
		fuzz_fail(data, size, "%s: %s: %s", what, why, html);
}

static void check_search(atlas_engine *e, const uint8_t *data, size_t size, const char *q)
{
	atlas_search_params p = { q, 10, 0, NULL, NULL, false, false };
	atlas_results r;
	atlas_error err = { 0, "" };
	int rc = atlas_search(&r, e, &p, &err);
	if (rc == ATLAS_ESQL)
		fuzz_fail(data, size, "atlas_search returned ATLAS_ESQL: %s", err.msg);
	if (rc == ATLAS_ENOMEM)
		return;
	if (rc)
		fuzz_fail(data, size, "atlas_search returned %d for valid parameters: %s", rc, err.msg);
	if (r.nhits < 0 || r.nhits > 10 || r.nhits > r.total)
		fuzz_fail(data, size, "%d hits of %d for limit 10", r.nhits, r.total);
	if (!r.query || fuzz_utf8_invalid_at(r.query, strlen(r.query)) >= 0)
		fuzz_fail(data, size, "the query as understood is missing or not valid UTF-8");
	for (int i = 0; i < r.nhits; i++) {
		const atlas_hit *h = &r.hits[i];
		if (!atlas_engine_doc(e, h->doc))
			fuzz_fail(data, size, "hit %d names document %d of %d", i, h->doc, atlas_engine_ndocs(e));
		check_html(data, size, "snippet", h->snippet);
		check_html(data, size, "title", h->title_html);
		if (h->nsections < 0 || h->nsections > 3)
			fuzz_fail(data, size, "hit %d has %d sections", i, h->nsections);
		for (int k = 0; k < h->nsections; k++) {
			check_html(data, size, "section heading", h->sections[k].heading);
			check_html(data, size, "section snippet", h->sections[k].snippet);
			if (!h->sections[k].anchor)
				fuzz_fail(data, size, "section without an anchor");
		}
	}
	char *json = atlas_json_search(e, &r);
	if (json) {
		cJSON *parsed = cJSON_Parse(json);
		if (!parsed || !cJSON_IsArray(cJSON_GetObjectItem(parsed, "results")))
			fuzz_fail(data, size, "search JSON does not parse: %s", json);
		if (fuzz_utf8_invalid_at(json, strlen(json)) >= 0)
			fuzz_fail(data, size, "search JSON is not valid UTF-8");
		cJSON_Delete(parsed);
		free(json);
	}
	atlas_results_free(&r);
}

/* The body of a search without took_ms, or NULL out of memory. */
static char *search_body(atlas_engine *e, const atlas_search_params *p, int *rc)
{
	atlas_results r;
	atlas_error err = { 0, "" };
	*rc = atlas_search(&r, e, p, &err);
	if (*rc)
		return NULL;
	char *json = atlas_json_search(e, &r);
	atlas_results_free(&r);
	cJSON *parsed = json ? cJSON_Parse(json) : NULL;
	free(json);
	if (!parsed)
		return NULL;
	cJSON_DeleteItemFromObject(parsed, "took_ms");
	char *out = cJSON_PrintUnformatted(parsed);
	cJSON_Delete(parsed);
	return out;
}

static void check_same_through_fts5(const uint8_t *data, size_t size, const char *q)
{
	atlas_search_params p = { q, 10, 0, NULL, NULL, false, false };
	int rc_held = 0, rc_fts5 = 0;
	char *held = search_body(fuzz_engine(), &p, &rc_held);
	char *fts5 = search_body(fuzz_engine_fts5(), &p, &rc_fts5);
	if (rc_held != rc_fts5)
		fuzz_fail(data, size, "atlas_search returned %d over the held postings, %d through FTS5",
			  rc_held, rc_fts5);
	if (held && fts5 && strcmp(held, fts5) != 0)
		fuzz_fail(data, size, "the held postings and FTS5 answer differently:\n  held: %s\n  fts5: %s",
			  held, fts5);
	free(held);
	free(fts5);
}

static void check_suggest(atlas_engine *e, const uint8_t *data, size_t size, const char *q)
{
	atlas_suggestion s[10];
	int n = atlas_suggest(s, 10, e, q);
	if (n < 0 || n > 10)
		fuzz_fail(data, size, "atlas_suggest returned %d for max 10", n);
	for (int i = 0; i < n; i++) {
		if (s[i].doc >= 0 ? !atlas_engine_doc(e, s[i].doc) : !s[i].text[0])
			fuzz_fail(data, size, "suggestion %d names neither a document nor a query", i);
	}
	char *json = atlas_json_suggest(e, q, s, n);
	if (json && fuzz_utf8_invalid_at(json, strlen(json)) >= 0)
		fuzz_soft("suggest-json-invalid-utf8", data, size,
			  "the suggest JSON echoes the prefix's invalid UTF-8 (query/json.c atlas_json_suggest)");
	free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_parse(data, size);

	/* a C string as the server hands it over: NUL bytes become spaces */
	char *q = malloc(size + 1);
	if (!q)
		return 0;
	for (size_t i = 0; i < size; i++)
		q[i] = data[i] ? (char)data[i] : ' ';
	q[size] = '\0';
	atlas_engine *e = fuzz_engine();
	check_search(e, data, size, q);
	check_same_through_fts5(data, size, q);
	check_suggest(e, data, size, q);
	free(q);
	return 0;
}
