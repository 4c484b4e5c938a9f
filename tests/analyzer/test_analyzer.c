/* test_analyzer.c - the "atlas" tokenizer through real FTS5 queries: stems (and no surface forms
 * in the index), prefixes, identifiers by their whole and their parts, diacritics, phrases. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "analyzer.h"
#include "check.h"
#include "stopwords.h"

/* The count sql (one text parameter, arg) returns, or -1 when it cannot run. */
static int count_of(sqlite3 *db, const char *sql, const char *arg)
{
	sqlite3_stmt *st = NULL;
	int n = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	return n;
}

static int count(sqlite3 *db, const char *match)
{
	return count_of(db, "SELECT count(*) FROM t WHERE t MATCH ?1", match);
}

static void expect(sqlite3 *db, const char *match, int want)
{
	int got = count(db, match);
	if (CHECK(got == want, "MATCH %-28s -> %d rows, want %d", match, got, want))
		printf("ok    MATCH %-28s -> %d\n", match, got);
}

/* Checks that term is (want 1) or is not (want 0) a term of the index of table t. */
static void expect_terms(sqlite3 *db, const char *term, int want)
{
	int got = count_of(db, "SELECT count(*) FROM v WHERE term = ?1", term);
	if (CHECK(got == want, "term %-29s -> %d, want %d", term, got, want))
		printf("ok    term %-29s -> %d\n", term, got);
}

/* Appends each token to the strbuf-like buffer ctx as "token" or "+token" (colocated), space-separated. */
static int record(void *ctx, int tflags, const char *token, int ntoken, int start, int end)
{
	char *out = ctx;
	size_t len = strlen(out);
	(void)start;
	(void)end;
	snprintf(out + len, 256 - len, "%s%s%.*s", len ? " " : "", (tflags & FTS5_TOKEN_COLOCATED) ? "+" : "",
		 ntoken, token);
	return 0;
}

/* Checks the tokens of text analyzed with flags, as record writes them. */
static void expect_tokens(atlas_analyzer *a, int flags, const char *text, const char *want)
{
	char out[256] = "";
	atlas_analyze(a, flags, text, (int)strlen(text), record, out);
	if (CHECK(strcmp(out, want) == 0, "tokens(%s, %#x) = %s, want %s", text, flags, out, want))
		printf("ok    tokens(%s, %#x) = %s\n", text, flags, out);
}

/* Token ranges as "start-end", space-separated (colocated ones skipped), into a 1024-byte
 * buffer. */
static int ranges(void *ctx, int tflags, const char *token, int ntoken, int start, int end)
{
	char *out = ctx;
	size_t len = strlen(out);
	(void)token;
	(void)ntoken;
	if (!(tflags & FTS5_TOKEN_COLOCATED))
		snprintf(out + len, 1024 - len, "%s%d-%d", len ? " " : "", start, end);
	return 0;
}

/* A tap that records the ranges of the one text it is given, and counts the texts offered. */
typedef struct test_tap {
	atlas_tap tap;
	const char *want;   /* the text to record */
	int offered;
	char got[1024];
} test_tap;

static int test_tap_token(void *ctx, int tflags, const char *token, int ntoken, int start, int end)
{
	return ranges(((test_tap *)ctx)->got, tflags, token, ntoken, start, end);
}

static atlas_token_fn test_tap_begin(void *ctx, const char *text, int n)
{
	test_tap *t = ctx;
	t->offered++;
	return text == t->want && n == (int)strlen(t->want) ? test_tap_token : NULL;
}

/* Inserts text into table t with a tap set: the tap must see, for that text, every position's
 * range exactly as aux mode (what snippets are cut by) gives them alone. */
static void expect_tap(sqlite3 *db, atlas_analyzer *a, const char *text)
{
	test_tap t = { { test_tap_begin, NULL }, text, 0, "" };
	t.tap.ctx = &t;
	char want[1024] = "";
	atlas_analyze(a, FTS5_TOKENIZE_AUX, text, (int)strlen(text), ranges, want);
	atlas_error err = { 0, "" };
	sqlite3_stmt *st = NULL;
	int rc = atlas_analyzer_set_tap(db, &t.tap, &err);
	if (!rc &&
	    sqlite3_prepare_v2(db, "INSERT INTO t(body) VALUES(?1)", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	atlas_analyzer_set_tap(db, NULL, NULL);
	int before = t.offered;
	count(db, "\"tap\""); /* queries are never offered, nor anything once the tap is cleared */
	if (CHECK(!rc && t.offered == 1 && before == 1 && strcmp(t.got, want) == 0,
		  "tap(%s): offered %d, ranges %s, want %s (%s)", text, t.offered, t.got, want, err.msg))
		printf("ok    tap(%s) = %s\n", text, t.got);
}

static void expect_stem(atlas_analyzer *a, const char *word, const char *want)
{
	char out[128];
	atlas_stem(a, word, (int)strlen(word), out, sizeof(out));
	CHECK(strcmp(out, want) == 0, "stem(%s) = %s, want %s", word, out, want);
}

static void expect_stopword(const char *w, size_t n, bool want)
{
	CHECK(atlas_is_stopword(w, n) == want, "stop word \"%.*s\" (%zu bytes): %s, want %s", (int)n, w,
	      n, want ? "no" : "yes", want ? "yes" : "no");
}

int main(void)
{
	sqlite3 *db = NULL;
	atlas_error err = { 0, "" };
	static const char *docs[] = {
		/* 1 */ "Running the consistent hashing ring; nodes join and leave.",
		/* 2 */ "Call shard_map with a mesh, then torch.compile the model.",
		/* 3 */ "The PJRT plugin: pjrt_api.cc defines PJRT_Client_Create.",
		/* 4 */ "RLCluster owns five roles; the rl_cluster.py file builds it.",
		/* 5 */ "A café near the naïve résumé of a shard map in prose.",
		/* 6 */ "Sanitized inputs and sanitizers; jax.jit traces functions.",
	};
	if (sqlite3_open(":memory:", &db) != SQLITE_OK || atlas_analyzer_register(db, &err)) {
		printf("FAIL  setup: %s\n", err.msg);
		return 1;
	}
	if (sqlite3_exec(db,
			 "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='atlas');"
			 "CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row');",
			 NULL, NULL, NULL)) {
		printf("FAIL  create: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		sqlite3_stmt *st = NULL;
		sqlite3_prepare_v2(db, "INSERT INTO t(body) VALUES(?1)", -1, &st, NULL);
		sqlite3_bind_text(st, 1, docs[i], -1, SQLITE_STATIC);
		sqlite3_step(st);
		sqlite3_finalize(st);
	}
	/* stems match every inflection; the surface form is indexed too */
	expect(db, "\"runs\"", 1);
	expect(db, "\"running\"", 1);
	expect(db, "\"hash\"", 1);
	expect(db, "\"consistent hashing\"", 1);
	/* the index holds stems, not surface forms: no query looks for those */
	expect_terms(db, "run", 1);
	expect_terms(db, "running", 0);
	expect_terms(db, "sanit", 1);
	expect_terms(db, "sanitizers", 0);
	expect(db, "\"consis\"*", 1);
	/* identifiers: whole, parts, sub-compounds */
	expect(db, "\"shard_map\"", 1);
	expect(db, "\"shard\"", 2);
	expect(db, "\"map\"", 2);
	expect(db, "\"torch.compile\"", 1);
	expect(db, "\"compile\"", 1);
	expect(db, "\"pjrt_api.cc\"", 1);
	expect(db, "\"pjrt_api\"", 1);
	expect(db, "\"api\"", 1);
	expect(db, "\"PJRT_Client_Create\"", 1);
	expect(db, "\"RLCluster\"", 1);
	expect(db, "\"rlcluster\"", 1);
	expect(db, "\"cluster\"", 1);
	expect(db, "\"rl_cluster.py\"", 1);
	expect(db, "\"rl_cluster\"", 1);
	expect(db, "\"jax.jit\"", 1);
	expect(db, "\"torch.comp\"*", 1);
	/* a phrase of several words containing an identifier lines up with the document */
	expect(db, "\"call shard_map with\"", 1);
	expect(db, "\"shard map\"", 2);
	/* diacritics are folded both ways */
	expect(db, "\"cafe\"", 1);
	expect(db, "\"café\"", 1);
	expect(db, "\"naive resume\"", 1);
	/* nothing matches what is not there */
	expect(db, "\"kubernetes\"", 0);

	atlas_analyzer *a = NULL;
	if (atlas_analyzer_new(&a, db, &err)) {
		printf("FAIL  analyzer: %s\n", err.msg);
		return 1;
	}
	/* document mode: stems and identifiers; the vocabulary asks for surface forms too */
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "Running shard_map", "run shard +shard_map map");
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT | ATLAS_ANALYZE_SURFACE, "Running shard_map",
		      "run +running shard +shard_map map");
	expect_tokens(a, FTS5_TOKENIZE_QUERY, "Running", "run");
	/* a compound of one word's humps is stemmed as one word on both sides, so that a query typed
	 * in any case meets it; the vocabulary and the query's words keep it as written */
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "EventListeners", "event +eventlisten listen");
	expect_tokens(a, FTS5_TOKENIZE_QUERY, "EventListeners", "eventlisten");
	expect_tokens(a, FTS5_TOKENIZE_QUERY, "eventlisteners", "eventlisten");
	expect_tokens(a, FTS5_TOKENIZE_QUERY, "EVENTLISTENERS", "eventlisten");
	expect_tokens(a, FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX, "EventListeners", "eventlisteners");
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT | ATLAS_ANALYZE_SURFACE, "EventListeners",
		      "event +eventlisteners listen +listeners");
	expect_tokens(a, FTS5_TOKENIZE_QUERY | ATLAS_ANALYZE_PARTS, "XMLHttpRequest", "xml http request");
	/* one with joiners is no word: kept as written on both sides */
	expect_tokens(a, FTS5_TOKENIZE_QUERY, "max_wal_senders", "max_wal_senders");
	/* an acronym's plural is its singular, in a page and in a query; its s is no hump */
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "GPUs and LLMs", "gpu and llm");
	expect_tokens(a, FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX, "TPUs", "tpu");
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "getTPUs", "get +gettpu tpu");
	/* compounds that stem alike ("abcdil", "abcdill") are one form at their position: a term
	 * written twice at a position would count twice, and the engine holds no such index */
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "abcDilL", "abc +abcdil dil +dill l");
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "Status", "status");
	/* an option is written with its dashes too, and a query phrase of it alone asks for that;
	 * a word joined by a dash, a dash between blanks or before a digit makes none */
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "celery call --expires <expires>",
		      "celeri call expir +--expires expir");
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "use -v or (-Wall)", "use v +-v or wall +-wall");
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "--log-level=DEBUG",
		      "log +--log-level +log-level level debug");
	expect_tokens(a, FTS5_TOKENIZE_QUERY, "--expires", "--expires");
	expect_tokens(a, FTS5_TOKENIZE_QUERY, "\"--log-level\"", "--log-level");
	expect_tokens(a, FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX, "--expires", "expires");
	expect_tokens(a, FTS5_TOKENIZE_QUERY, "call --expires", "call expir");
	expect_tokens(a, FTS5_TOKENIZE_DOCUMENT, "well-known a - b x-1 -1 ---x",
		      "well +well-known known a b x +x-1 1 1 x");
	/* a tap on the index's analysis sees every position's range as aux mode finds them: ASCII
	 * (the fast splitters), identifiers and humps, and text only unicode61 splits */
	expect_tap(db, a,
		   "Call shard_map, then torch.compile the RLCluster's PJRT_Client_Create (v2).");
	expect_tap(db, a, "A café near the naïve résumé — ▸ x² 東京 ok");
	expect_tap(db, a, "");
	expect_stem(a, "running", "run");
	expect_stem(a, "consistency", "consist");
	expect_stem(a, "caching", "cach");
	expect_stem(a, "h100", "h100");
	/* stop words: the first, the last, the longest; not their prefixes, extensions or others */
	static const char *const stop[] = { "a", "your", "between", "whether", "the", "explain", "how" };
	static const char *const not_stop[] = { "th", "thee", "betweens", "cache", "yours", "zz", "ab" };
	for (size_t i = 0; i < sizeof(stop) / sizeof(stop[0]); i++)
		expect_stopword(stop[i], strlen(stop[i]), true);
	for (size_t i = 0; i < sizeof(not_stop) / sizeof(not_stop[0]); i++)
		expect_stopword(not_stop[i], strlen(not_stop[i]), false);
	expect_stopword("the", 2, false);     /* "th": the length counts, not the NUL */
	expect_stopword("a\0", 2, false);    /* a NUL inside is no stop word */
	expect_stopword("", 0, false);
	atlas_analyzer_free(a);
	sqlite3_close(db);
	return check_done("test_analyzer");
}
