/* same_tokens.c - the built-in ASCII splitter and unicode61 give identical tokens (text, flags,
 * offsets) in every mode, over every section and title of an index. usage: same_tokens INDEX */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "compress.h"
#include "strbuf.h"

static int record(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	strbuf_printf((strbuf *)ctx, "%d:%.*s:%d:%d|", tflags, n, tok, start, end);
	return 0;
}

int main(int argc, char **argv)
{
	sqlite3 *db = NULL;
	atlas_analyzer *a = NULL;
	atlas_error err = { 0, "" };
	if (argc != 2 || sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    atlas_analyzer_new(&a, db, &err)) {
		fprintf(stderr, "usage: same_tokens INDEX (%s)\n", err.msg);
		return 2;
	}
	sqlite3_stmt *st = NULL, *dict = NULL;
	sqlite3_prepare_v2(db, "SELECT heading, body FROM sections UNION ALL SELECT title, NULL FROM docs", -1,
			   &st, NULL);
	/* the bodies are stored compressed against the index's dictionary */
	sqlite3_prepare_v2(db, "SELECT dict FROM dictionaries WHERE name = 'section_body'", -1, &dict, NULL);
	bool has_dict = dict && sqlite3_step(dict) == SQLITE_ROW;
	atlas_decompressor *z = NULL;
	if (!st || atlas_decompressor_new(&z, has_dict ? sqlite3_column_blob(dict, 0) : NULL,
					  has_dict ? (size_t)sqlite3_column_bytes(dict, 0) : 0, &err)) {
		fprintf(stderr, "same_tokens: %s: %s\n", argv[1], st ? err.msg : sqlite3_errmsg(db));
		return 2;
	}
	sqlite3_finalize(dict);
	static const int modes[] = { FTS5_TOKENIZE_DOCUMENT, FTS5_TOKENIZE_DOCUMENT | ATLAS_ANALYZE_SURFACE,
				     FTS5_TOKENIZE_QUERY,
				     FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX, FTS5_TOKENIZE_AUX };
	int texts = 0, differ = 0;
	strbuf x = STRBUF_INIT, y = STRBUF_INIT, body = STRBUF_INIT, text = STRBUF_INIT;
	while (sqlite3_step(st) == SQLITE_ROW) {
		strbuf_reset(&text);
		strbuf_puts(&text, (const char *)sqlite3_column_text(st, 0));
		if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
			if (atlas_decompress(z, &body, sqlite3_column_blob(st, 1),
					     (size_t)sqlite3_column_bytes(st, 1), &err)) {
				printf("FAIL  a section body: %s\n", err.msg);
				differ++;
				continue;
			}
			strbuf_putc(&text, '\n');
			strbuf_append(&text, body.buf, body.len);
		}
		if (text.oom) {
			fprintf(stderr, "same_tokens: out of memory\n");
			return 2;
		}
		const char *t = strbuf_str(&text);
		int n = (int)text.len;
		texts++;
		for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			strbuf_reset(&x);
			strbuf_reset(&y);
			atlas_analyze(a, modes[m], t, n, record, &x);
			atlas_analyze(a, modes[m] | ATLAS_ANALYZE_UNICODE61, t, n, record, &y);
			if (x.len != y.len || memcmp(strbuf_str(&x), strbuf_str(&y), x.len) != 0) {
				if (differ++ < 5)
					printf("FAIL  mode %d differs on: %.80s\n", modes[m], t);
			}
		}
	}
	sqlite3_finalize(st);
	atlas_decompressor_free(z);
	strbuf_free(&body);
	strbuf_free(&text);
	strbuf_free(&x);
	strbuf_free(&y);
	atlas_analyzer_free(a);
	sqlite3_close(db);
	printf("%d texts, %d differ\n", texts, differ);
	return differ || texts < 100 ? 1 : 0;
}
