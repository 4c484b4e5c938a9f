/* test_packing.c - what the index stores packed comes back as it went in: section texts compressed
 * with and without a trained dictionary (common/compress.h), read-next candidates packed by page
 * (common/next_rows.h); damaged input is
 * refused, never read past. usage: test_packing */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compress.h"
#include "next_rows.h"

/* One check, what saying what is expected. */
#define check(ok, what) CHECK(ok, "%s", what)

/* A pseudo-random sentence of words from a small vocabulary, as section text is: n bytes or so. */
static void sentence(strbuf *out, unsigned *seed, size_t n)
{
	static const char *const words[] = { "the", "leader", "replicates", "each", "log", "entry",
					     "to", "a", "majority", "before", "it", "commits", "shard_map",
					     "consistent", "hashing", "ring", "of", "virtual", "nodes" };
	strbuf_reset(out);
	while (out->len < n) {
		*seed = *seed * 1103515245u + 12345u;
		strbuf_puts(out, words[(*seed >> 16) % (sizeof(words) / sizeof(words[0]))]);
		strbuf_putc(out, (*seed >> 8) % 11 ? ' ' : '\n');
	}
}

/* Compresses text with c and decompresses it with d: the same bytes back, stored in at most
 * max_stored bytes. */
static void expect_round_trip(atlas_compressor *c, atlas_decompressor *d, const char *text, size_t n,
			      size_t max_stored, const char *what)
{
	strbuf z = STRBUF_INIT, back = STRBUF_INIT;
	atlas_error err = { 0, "" };
	char msg[160];
	int rc = atlas_compress(c, &z, text, n, &err);
	snprintf(msg, sizeof(msg), "%s: compresses (%s)", what, err.msg);
	check(rc == 0, msg);
	rc = atlas_decompress(d, &back, z.buf, z.len, &err);
	snprintf(msg, sizeof(msg), "%s: %zu bytes back as they went in (%s)", what, n, err.msg);
	check(rc == 0 && back.len == n && (n == 0 || memcmp(back.buf, text, n) == 0) && back.buf &&
		      back.buf[n] == '\0',
	      msg);
	snprintf(msg, sizeof(msg), "%s: %zu bytes stored in %zu, at most %zu", what, n, z.len, max_stored);
	check(z.len <= max_stored, msg);
	strbuf_free(&z);
	strbuf_free(&back);
}

static void test_compress(void)
{
	unsigned seed = 7;
	strbuf samples = STRBUF_INIT, one = STRBUF_INIT;
	size_t sizes[400];
	for (int i = 0; i < 400; i++) {
		sentence(&one, &seed, 200 + (size_t)(i % 7) * 150);
		strbuf_append(&samples, one.buf, one.len);
		sizes[i] = one.len;
	}
	atlas_error err = { 0, "" };
	atlas_compressor *trained = NULL, *plain = NULL;
	atlas_decompressor *dtrained = NULL, *dplain = NULL;
	check(atlas_compressor_new(&trained, samples.buf, sizes, 400, &err) == 0, "a compressor trains");
	check(atlas_compressor_new(&plain, samples.buf, sizes, 3, &err) == 0,
	      "a compressor on three samples is made");
	if (!trained || !plain)
		goto out;
	size_t ndict = 0, nplain = 1;
	const void *dict = atlas_compressor_dict(trained, &ndict);
	check(dict && ndict > 0 && ndict <= samples.len / ATLAS_DICT_SHARE, "400 samples give a dictionary");
	check(!atlas_compressor_dict(plain, &nplain) && nplain == 0, "three samples give none");
	check(atlas_decompressor_new(&dtrained, dict, ndict, &err) == 0, "its decompressor is made");
	check(atlas_decompressor_new(&dplain, NULL, 0, &err) == 0, "one without a dictionary is made");
	if (!dtrained || !dplain)
		goto out;

	expect_round_trip(trained, dtrained, "", 0, 0, "empty text");
	expect_round_trip(trained, dtrained, "Raft", 4, 5, "a short text, kept as it is");
	sentence(&one, &seed, 3000);
	/* the vocabulary is small: a quarter with the dictionary, a third without */
	expect_round_trip(trained, dtrained, one.buf, one.len, one.len / 4, "a section");
	expect_round_trip(plain, dplain, one.buf, one.len, one.len / 3, "a section, no dictionary");
	char noise[700];
	for (size_t i = 0; i < sizeof(noise); i++) {
		seed = seed * 1103515245u + 12345u;
		noise[i] = (char)(seed >> 16);
	}
	expect_round_trip(trained, dtrained, noise, sizeof(noise), sizeof(noise) + 1,
			  "bytes that do not shrink, kept as they are");

	/* damage: each refused with a message, none read past its end */
	strbuf z = STRBUF_INIT, back = STRBUF_INIT;
	atlas_compress(trained, &z, one.buf, one.len, &err);
	check(z.len > 8, "the section compressed");
	for (size_t cut = 1; cut + 1 < z.len; cut += z.len / 9 + 1) {
		unsigned char *part = malloc(cut); /* exact size, so that ASan sees a read past it */
		memcpy(part, z.buf, cut);
		err.msg[0] = '\0';
		check(atlas_decompress(dtrained, &back, part, cut, &err) == ATLAS_EINVAL && err.msg[0],
		      "a frame cut short is refused");
		free(part);
	}
	unsigned char bad = 9;
	check(atlas_decompress(dtrained, &back, &bad, 1, &err) == ATLAS_EINVAL, "an unknown marker is refused");
	check(atlas_decompress(dplain, &back, z.buf, z.len, &err) == ATLAS_EINVAL,
	      "a frame read without its dictionary is refused");
	z.buf[z.len / 2] ^= 0x5a;
	int rc = atlas_decompress(dtrained, &back, z.buf, z.len, &err);
	check(rc == ATLAS_EINVAL || (rc == 0 && back.len == one.len), "a damaged frame is refused or same-sized");
	check(atlas_decompress(dtrained, &back, one.buf, one.len, &err) != 0 || one.buf[0] < 2,
	      "text that was never compressed is refused");
	strbuf_free(&z);
	strbuf_free(&back);
out:
	atlas_compressor_free(trained);
	atlas_compressor_free(plain);
	atlas_decompressor_free(dtrained);
	atlas_decompressor_free(dplain);
	atlas_compressor_free(NULL);
	atlas_decompressor_free(NULL);
	strbuf_free(&samples);
	strbuf_free(&one);
}

static void test_next_rows(void)
{
	static const next_row rows[] = {
		{ 3, NEXT_LINK_OUT, 1.0, "the library", 11 },
		{ 70000, NEXT_SIMILAR, 0.2210832387, "cpython, mock, infra", 20 },
		{ 12, NEXT_GRAPH, 0.0, "", 0 },
		{ 1, NEXT_TOPIC_START, 1.0 / 3, "ai-ml/agents", 12 },
		{ 2147483647, NEXT_GUIDE_NEXT, 1.0, "4|1|Guide — a route", 22 },
		{ 9, 40, -1.5, "", 0 }, /* a code this build does not know is carried as it is */
	};
	int n = (int)(sizeof(rows) / sizeof(rows[0]));
	strbuf blob = STRBUF_INIT;
	for (int i = 0; i < n; i++)
		check(next_rows_put(&blob, &rows[i]) == 0, "a row is packed");
	next_row bad = { -1, NEXT_GRAPH, 1.0, "", 0 };
	check(next_rows_put(&blob, &bad) == ATLAS_EINVAL, "a negative doc id is refused");
	bad = (next_row){ 1, 64, 1.0, "", 0 };
	check(next_rows_put(&blob, &bad) == ATLAS_EINVAL, "a code past six bits is refused");
	const unsigned char *p = (const unsigned char *)blob.buf, *end = p + blob.len;
	next_row r;
	int i = 0, got;
	while ((got = next_rows_get(&p, end, &r)) == 1 && i < n) {
		char msg[120];
		snprintf(msg, sizeof(msg), "row %d back as packed", i);
		check(r.dst == rows[i].dst && r.signal == rows[i].signal && r.weight == rows[i].weight &&
			      r.ndetail == rows[i].ndetail && memcmp(r.detail, rows[i].detail, (size_t)r.ndetail) == 0,
		      msg);
		i++;
	}
	check(got == 0 && i == n, "every row read, then the end");
	check(strcmp(next_signal_name(NEXT_SIMILAR), "similar") == 0 && next_signal_code("graph") == NEXT_GRAPH &&
		      next_signal_code("none") == -1 && !next_signal_name(NEXT_NSIGNALS),
	      "signal names and codes");
	/* every cut: whole rows, then a refusal or the end, never a read past it */
	for (size_t cut = 0; cut < blob.len; cut++) {
		unsigned char *part = malloc(cut ? cut : 1);
		memcpy(part, blob.buf, cut);
		const unsigned char *q = part, *qend = part + cut;
		int rows_read = 0;
		while ((got = next_rows_get(&q, qend, &r)) == 1)
			rows_read++;
		check(q <= qend && rows_read < n, "a cut list reads no row past its end");
		free(part);
	}
	strbuf_free(&blob);
}

int main(void)
{
	test_compress();
	test_next_rows();
	return check_done("test_packing");
}
