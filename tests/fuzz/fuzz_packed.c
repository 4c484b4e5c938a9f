/* fuzz_packed.c - arbitrary bytes as the index's packed columns, which a damaged index file hands
 * to the query side: a stored section body (common/compress.h), a section's token spans
 * (common/spans.h) and a page's read-next rows (common/next_rows.h). The first byte picks the
 * reader; the rest is the column, in a buffer of exactly its size.
 *
 * Properties: atlas_decompress returns 0 with a NUL-terminated text or ATLAS_EINVAL with a message,
 * with a trained dictionary and without; atlas_compress then atlas_decompress gives the input back;
 * atlas_spans_decode returns -1 or at most the spans asked for, each starting at 0 or after and
 * ending at or after its start; next_rows_get returns 1, 0 or -1, never moves past the end, and
 * gives details inside the blob. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compress.h"
#include "fuzz.h"
#include "next_rows.h"
#include "spans.h"

/* A compressor and decompressors made once: the dictionary trained on fixed sentences. */
static struct {
	atlas_compressor *z;
	atlas_decompressor *with_dict, *plain;
} packers;

static void free_packers(void)
{
	atlas_compressor_free(packers.z);
	atlas_decompressor_free(packers.with_dict);
	atlas_decompressor_free(packers.plain);
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
	    atlas_decompressor_new(&packers.plain, NULL, 0, &err)) {
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

static void check_spans(const uint8_t *data, size_t size, const uint8_t *col, size_t n)
{
	atlas_span out[256];
	/* the part sizes and the window from the column's first bytes, as a section row gives them */
	int parts[2] = { n > 0 ? col[0] % 32 : 0, n > 1 ? col[1] : 0 };
	int from = n > 2 ? col[2] % 128 : 0, to = from + (n > 3 ? col[3] % 128 : 64);
	const uint8_t *blob = n > 4 ? col + 4 : NULL;
	int got = atlas_spans_decode(out, from, to, blob, n > 4 ? (int)(n - 4) : 0, parts, 2);
	if (got < -1 || got > to - from)
		fuzz_fail(data, size, "atlas_spans_decode returned %d for tokens [%d, %d)", got, from, to);
	for (int i = 0; i < got; i++)
		if (out[i].start < 0 || out[i].end < out[i].start)
			fuzz_fail(data, size, "span %d is [%d, %d)", i, out[i].start, out[i].end);
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
	if (got != 0 && got != -1)
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
