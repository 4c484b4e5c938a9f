/* test_analyzer.c - the "atlas" tokenizer through real FTS5 queries: stems, colocated surface
 * forms, prefixes, identifiers by their whole and their parts, diacritics, phrases. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "analyzer.h"

static int failures, checks;

static int count(sqlite3 *db, const char *match)
{
	sqlite3_stmt *st = NULL;
	int n = -1;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM t WHERE t MATCH ?1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	return n;
}

static void expect(sqlite3 *db, const char *match, int want)
{
	int got = count(db, match);
	checks++;
	if (got != want) {
		failures++;
		printf("FAIL  MATCH %-28s -> %d rows, want %d\n", match, got, want);
	} else
		printf("ok    MATCH %-28s -> %d\n", match, got);
}

static void expect_stem(atlas_analyzer *a, const char *word, const char *want)
{
	char out[128];
	atlas_stem(a, word, (int)strlen(word), out, sizeof(out));
	checks++;
	if (strcmp(out, want) != 0) {
		failures++;
		printf("FAIL  stem(%s) = %s, want %s\n", word, out, want);
	}
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
	if (sqlite3_exec(db, "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='atlas')", NULL, NULL, NULL)) {
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
	/* prefix queries see surface forms */
	expect(db, "\"runn\"*", 1);
	expect(db, "\"sanitiz\"*", 1);
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
	expect_stem(a, "running", "run");
	expect_stem(a, "consistency", "consist");
	expect_stem(a, "caching", "cach");
	expect_stem(a, "h100", "h100");
	atlas_analyzer_free(a);
	sqlite3_close(db);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
