/* fuzz_packed.c - arbitrary bytes as the index's stored columns, which a damaged index file hands
 * to the query side: a stored section body (common/compress.h), a section's text whose token spans
 * the engine finds (common/spans.h) and a page's read-next rows (common/next_rows.h). The first
 * byte picks the reader; the rest is the column, in a buffer of exactly its size.
 *
 * Properties: atlas_decompress returns 0 with a NUL-terminated text or ATLAS_EINVAL with a message,
 * with a trained dictionary and without; atlas_compress then atlas_decompress gives the input back;
 * aux mode gives the same tokens through its built-in splitter as through unicode61, and
 * atlas_spans_add as many spans as atlas_spans_count counts, each inside the text, starting at or
 * after the previous one's start and ending at or after its own start; next_rows_get returns
 * 1, 0 or -1, never moves past the end, and gives details inside the blob. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "compress.h"
#include "error.h"
#include "fuzz.h"
#include "next_rows.h"
#include "spans.h"

/* A compressor and decompressors made once (the dictionary trained on fixed sentences), and an
 * analyzer on an in-memory database. */
static struct {
	atlas_compressor *z;
	atlas_decompressor *with_dict, *plain;
	sqlite3 *db;
	atlas_analyzer *analyzer;
} packers;

static void free_packers(void)
{
	atlas_compressor_free(packers.z);
	atlas_decompressor_free(packers.with_dict);
	atlas_decompressor_free(packers.plain);
	atlas_analyzer_free(packers.analyzer);
	sqlite3_close(packers.db);
}

static void make_packers(void)
{
	static const char *const words[] = { "the", "leader", "replicates", "log", "entries", "to", "a",
					     "majority", "shard_map", "consistent", "hashing", "ring" };
	strbuf samples = STRBUF_INIT;
	size_t sizes[256];
	unsigned seed = 1;
	for (int i = 0; i < 256; i++) {
		size_t at = samples.len;
		for (int w = 0; w < 40 + i % 60; w++) {
			seed = seed * 1103515245u + 12345u;
			strbuf_puts(&samples, words[(seed >> 16) % 12]);
			strbuf_putc(&samples, ' ');
		}
		sizes[i] = samples.len - at;
	}
	atlas_error err;
	size_t n = 0;
	const void *dict = NULL;
	if (atlas_compressor_new(&packers.z, samples.buf, sizes, 256, &err) ||
	    !(dict = atlas_compressor_dict(packers.z, &n)) ||
	    atlas_decompressor_new(&packers.with_dict, dict, n, &err) ||
	    atlas_decompressor_new(&packers.plain, NULL, 0, &err) ||
	    sqlite3_open(":memory:", &packers.db) != SQLITE_OK ||
	    atlas_analyzer_new(&packers.analyzer, packers.db, &err)) {
		fprintf(stderr, "fuzz_packed: cannot make the packers\n");
		abort();
	}
	strbuf_free(&samples);
	atexit(free_packers);
}

static void check_decompress(const uint8_t *data, size_t size, atlas_decompressor *d, const uint8_t *col,
			     size_t n)
{
	strbuf out = STRBUF_INIT;
	atlas_error err = { 0, "" };
	int rc = atlas_decompress(d, &out, col, n, &err);
	if (rc == 0 && (!out.buf || out.buf[out.len] != '\0'))
		fuzz_fail(data, size, "decompressed text not NUL-terminated");
	if (rc != 0 && (rc != ATLAS_EINVAL || !err.msg[0]))
		fuzz_fail(data, size, "atlas_decompress returned %d (%s)", rc, err.msg);
	strbuf_free(&out);
}

static void check_round_trip(const uint8_t *data, size_t size, const uint8_t *col, size_t n)
{
	strbuf z = STRBUF_INIT, back = STRBUF_INIT;
	atlas_error err = { 0, "" };
	if (atlas_compress(packers.z, &z, col, n, &err) ||
	    atlas_decompress(packers.with_dict, &back, z.buf, z.len, &err) || back.len != n ||
	    (n && memcmp(back.buf, col, n) != 0))
		fuzz_fail(data, size, "%zu bytes did not come back through compression (%s)", n, err.msg);
	strbuf_free(&z);
	strbuf_free(&back);
}

static int record_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	strbuf_printf((strbuf *)ctx, "%d:%.*s:%d:%d|", tflags, n, tok, start, end);
	return 0;
}

static void check_spans(const uint8_t *data, size_t size, const uint8_t *col, size_t n)
{
	/* the built-in splitter gives what unicode61 gives */
	strbuf fast = STRBUF_INIT, slow = STRBUF_INIT;
	int rc_fast = atlas_analyze(packers.analyzer, FTS5_TOKENIZE_AUX, (const char *)col, (int)n, record_token,
				    &fast);
	int rc_slow = atlas_analyze(packers.analyzer, FTS5_TOKENIZE_AUX | ATLAS_ANALYZE_UNICODE61, (const char *)col,
				    (int)n, record_token, &slow);
	if (!fast.oom && !slow.oom && rc_fast != SQLITE_NOMEM && rc_slow != SQLITE_NOMEM &&
	    (rc_fast != rc_slow || fast.len != slow.len || (fast.len && memcmp(fast.buf, slow.buf, fast.len))))
		fuzz_fail(data, size, "aux tokens differ from unicode61's:\n  fast: %.300s\n  u61:  %.300s",
			  fast.len ? fast.buf : "", slow.len ? slow.buf : "");
	strbuf_free(&fast);
	strbuf_free(&slow);

	atlas_span_list l = ATLAS_SPAN_LIST_INIT;
	int count = -1;
	int rc = atlas_spans_add(&l, packers.analyzer, (const char *)col, (int)n, 0, -1);
	if (rc == SQLITE_NOMEM)
		goto free_list;
	if (rc != SQLITE_OK || atlas_spans_count(packers.analyzer, (const char *)col, (int)n, &count) != SQLITE_OK)
		fuzz_fail(data, size, "the analyzer failed on %zu bytes", n);
	if (count != l.count)
		fuzz_fail(data, size, "%d spans found, %d counted", l.count, count);
	for (int i = 0; i < l.count; i++)
		if (l.sp[i].start < 0 || l.sp[i].end < l.sp[i].start || l.sp[i].end > (int)n ||
		    (i && l.sp[i].start < l.sp[i - 1].start))
			fuzz_fail(data, size, "span %d is [%d, %d) in %zu bytes", i, l.sp[i].start, l.sp[i].end, n);
free_list:
	atlas_span_list_free(&l);
}

static void check_next_rows(const uint8_t *data, size_t size, const uint8_t *col, size_t n)
{
	const unsigned char *p = col, *end = col + n;
	next_row r;
	int got;
	while ((got = next_rows_get(&p, end, &r)) == 1) {
		if (p > end || r.dst < 0 || r.ndetail < 0 ||
		    (r.ndetail && ((const uint8_t *)r.detail < col || (const uint8_t *)r.detail + r.ndetail > end)))
			fuzz_fail(data, size, "a row read past its blob or out of range");
		(void)next_signal_name(r.signal);
	}
	if (got != 0 && got != ATLAS_EINVAL)
		fuzz_fail(data, size, "next_rows_get returned %d", got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!packers.z)
		make_packers();
	if (size == 0)
		return 0;
	size_t n = size - 1;
	/* the column alone in a buffer of its size, so that a read past it is seen */
	uint8_t *col = malloc(n ? n : 1);
	if (!col)
		return 0;
	memcpy(col, data + 1, n);
	switch (data[0] % 4) {
	case 0:
		check_decompress(data, size, packers.with_dict, col, n);
		check_decompress(data, size, packers.plain, col, n);
		break;
	case 1:
		check_round_trip(data, size, col, n);
		break;
	case 2:
		check_spans(data, size, col, n);
		break;
	default:
		check_next_rows(data, size, col, n);
		break;
	}
	free(col);
	return 0;
}
