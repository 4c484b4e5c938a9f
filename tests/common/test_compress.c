/* test_compress.c - common/compress.h: texts come back as they went in, with a trained dictionary
 * and without, whole or in chunks read by units; short and incompressible texts are stored as
 * they are; damaged stored bytes are refused with ATLAS_EINVAL and leave the decompressor usable.
 * usage: test_compress */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compress.h"

/* Sample i of a set of section-like texts: sentences from a few fixed paragraphs, rotated and
 * numbered so that no two samples are the same. Appends to out (reset first). */
static void sample_text(strbuf *out, int i)
{
	static const char *const para[] = {
	    "A consistent hashing ring maps each key to the first virtual node clockwise from its "
	    "hash, so adding a node moves only the keys between it and its predecessor. ",
	    "The leader appends the entry to its log, replicates it to a majority of followers and "
	    "only then commits it; a follower that falls behind is sent the missing entries. ",
	    "An LRU cache keeps a doubly linked list in recency order beside a hash map from key "
	    "to "
	    "node, so that a lookup, an insert and an eviction each take constant time. ",
	    "shard_map splits the arrays along the mesh axes named in its partition specs, and "
	    "jax.jit compiles the function once for each shape and sharding it is called with. ",
	};
	strbuf_reset(out);
	for (int k = 0; k < 4; k++)
		strbuf_puts(out, para[(i + k) % 4]);
	strbuf_printf(out, "Section %d ends here.", i);
}

/* Compresses text[0..n) with c and decompresses it with d; checks the bytes come back exactly and
 * NUL-terminated. Returns the stored size (0 on failure). */
static size_t round_trip(atlas_compressor *c, atlas_decompressor *d, const char *text, size_t n,
			 const char *what)
{
	strbuf z = STRBUF_INIT, back = STRBUF_INIT;
	atlas_error err = {0, ""};
	size_t stored = 0;
	if (CHECK(atlas_compress(c, &z, text, n, &err) == 0, "%s: compresses (%s)", what,
		  err.msg)) {
		stored = z.len;
		int rc = atlas_decompress(d, &back, z.buf, z.len, &err);
		CHECK(rc == 0, "%s: decompresses (%s)", what, err.msg);
		CHECK_INT(back.len, n, what);
		CHECK(rc == 0 && back.len == n && (n == 0 || memcmp(back.buf, text, n) == 0),
		      "%s: the same bytes back", what);
		CHECK(back.buf && back.buf[back.len] == '\0', "%s: the text is NUL-terminated",
		      what);
	}
	strbuf_free(&z);
	strbuf_free(&back);
	return stored;
}

/* Decompresses src[0..n) with d and checks it is refused with ATLAS_EINVAL and a message. */
static void expect_refused(atlas_decompressor *d, const void *src, size_t n, const char *what)
{
	strbuf back = STRBUF_INIT;
	atlas_error err = {0, ""};
	int rc = atlas_decompress(d, &back, src, n, &err);
	CHECK_INT(rc, ATLAS_EINVAL, what);
	CHECK(err.code == ATLAS_EINVAL && err.msg[0], "%s: the error says why", what);
	strbuf_free(&back);
}

int main(void)
{
	atlas_error err = {0, ""};

	/* samples laid end to end, as the indexer gives them */
	enum { NSAMPLES = 200 };
	strbuf all = STRBUF_INIT, one = STRBUF_INIT;
	size_t sizes[NSAMPLES];
	for (int i = 0; i < NSAMPLES; i++) {
		sample_text(&one, i);
		sizes[i] = one.len;
		strbuf_append(&all, one.buf, one.len);
	}

	atlas_compressor *plain = NULL, *trained = NULL, *few = NULL;
	CHECK(atlas_compressor_new(&plain, NULL, NULL, 0, &err) == 0, "compressor without samples");
	CHECK(atlas_compressor_new(&trained, all.buf, sizes, NSAMPLES, &err) == 0,
	      "compressor trained on %d samples (%s)", NSAMPLES, err.msg);
	CHECK(atlas_compressor_new(&few, all.buf, sizes, 10, &err) == 0,
	      "compressor of 10 samples");
	if (!plain || !trained || !few)
		return check_done("test_compress");

	size_t ndict = 1, nfew = 1;
	CHECK(atlas_compressor_dict(plain, &ndict) == NULL && ndict == 0,
	      "no samples: no dictionary");
	CHECK(atlas_compressor_dict(few, &nfew) == NULL && nfew == 0,
	      "too few samples to train on: no dictionary");
	const void *dict = atlas_compressor_dict(trained, &ndict);
	CHECK(dict != NULL && ndict > 0, "trained: a dictionary (%zu bytes)", ndict);
	CHECK(ndict <= ATLAS_DICT_MAX && ndict <= all.len / ATLAS_DICT_SHARE,
	      "the dictionary within its share of the samples: %zu of %zu bytes", ndict, all.len);

	atlas_decompressor *dplain = NULL, *dtrained = NULL;
	CHECK(atlas_decompressor_new(&dplain, NULL, 0, &err) == 0,
	      "decompressor without dictionary");
	CHECK(atlas_decompressor_new(&dtrained, dict, ndict, &err) == 0,
	      "decompressor with the dictionary");
	if (!dplain || !dtrained)
		return check_done("test_compress");

	/* what is stored: nothing for an empty text, the text behind its marker when short */
	strbuf z = STRBUF_INIT;
	CHECK(atlas_compress(plain, &z, "", 0, &err) == 0 && z.len == 0,
	      "an empty text stores nothing");
	round_trip(plain, dplain, "", 0, "empty text");
	const char *brief = "Short: kept as it is.";
	size_t nbrief = strlen(brief);
	CHECK(nbrief < ATLAS_COMPRESS_MIN, "the short text is under ATLAS_COMPRESS_MIN");
	atlas_compress(trained, &z, brief, nbrief, &err);
	CHECK(z.len == nbrief + 1 && z.buf[0] == 0 && memcmp(z.buf + 1, brief, nbrief) == 0,
	      "a short text is stored raw behind a zero byte (%zu bytes stored)", z.len);
	round_trip(trained, dtrained, brief, nbrief, "short text, dictionary");
	round_trip(plain, dplain, brief, nbrief, "short text, no dictionary");

	/* bytes that do not compress are stored as they are too */
	char noise[512];
	unsigned seed = 12345;
	for (size_t i = 0; i < sizeof(noise); i++) {
		seed = seed * 1103515245u + 12345u;
		noise[i] = (char)(seed >> 16);
	}
	atlas_compress(plain, &z, noise, sizeof(noise), &err);
	CHECK(z.len == sizeof(noise) + 1 && z.buf[0] == 0, "random bytes stored raw: %zu bytes",
	      z.len);
	round_trip(plain, dplain, noise, sizeof(noise), "random bytes");

	/* a text of the samples' kind, and one much longer: smaller stored, and smaller still with
	 * the dictionary */
	sample_text(&one, NSAMPLES + 7);
	size_t with = round_trip(trained, dtrained, one.buf, one.len, "a section, dictionary");
	size_t without = round_trip(plain, dplain, one.buf, one.len, "a section, no dictionary");
	CHECK(without > 0 && without < one.len, "no dictionary: compressed (%zu of %zu bytes)",
	      without, one.len);
	CHECK(with > 0 && with < without, "the dictionary makes it smaller: %zu against %zu bytes",
	      with, without);
	atlas_compress(trained, &z, one.buf, one.len, &err);
	CHECK(z.len > 0 && z.buf[0] == 1, "a compressed text is marked 1");
	round_trip(trained, dtrained, all.buf, all.len, "every sample at once");
	round_trip(plain, dplain, all.buf, all.len, "every sample at once, no dictionary");

	/* damage: an unknown marker, a frame cut short, a marker alone, a frame without its
	 * dictionary; each refused, and the decompressor still works afterwards */
	atlas_compress(trained, &z, one.buf, one.len, &err);
	char *frame = malloc(z.len);
	memcpy(frame, z.buf, z.len);
	size_t nframe = z.len;
	frame[0] = 3;
	expect_refused(dtrained, frame, nframe, "unknown marker 3");
	frame[0] = 2;
	expect_refused(dtrained, frame, nframe, "a frame taken for a chunk list");
	frame[0] = (char)0xff;
	expect_refused(dtrained, frame, nframe, "unknown marker 255");
	frame[0] = 1;
	expect_refused(dtrained, frame, 1, "a marker without its frame");
	expect_refused(dtrained, frame, nframe / 2, "a frame cut in half");
	expect_refused(dtrained, frame, nframe - 1, "a frame missing its last byte");
	expect_refused(dtrained, frame, 5, "a frame cut inside its header");
	strbuf back = STRBUF_INIT;
	int rc = atlas_decompress(dplain, &back, frame, nframe, &err);
	CHECK(rc != 0 || back.len != one.len || memcmp(back.buf, one.buf, one.len) != 0,
	      "a frame made with the dictionary does not read back without it");
	round_trip(trained, dtrained, one.buf, one.len, "after the refusals, dictionary");
	round_trip(plain, dplain, one.buf, one.len, "after the refusals, no dictionary");
	memcpy(frame, z.buf, z.len);
	rc = atlas_decompress(dtrained, &back, frame, nframe, &err);
	CHECK(rc == 0 && back.len == one.len && memcmp(back.buf, one.buf, one.len) == 0,
	      "the undamaged frame still reads back");

	/* a text in chunks: whole, it reads back as it went in; by units, only the chunks holding
	 * them are read, and the units before them are said */
	size_t ends[3] = { sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2] };
	unsigned units[3] = { 10, 20, 30 };
	strbuf zc = STRBUF_INIT, part = STRBUF_INIT;
	CHECK(atlas_compress_chunks(trained, &zc, all.buf, ends, units, 3, &err) == 0 && zc.len > 0 && zc.buf[0] == 2,
	      "three chunks are stored marked 2 (%s)", err.msg);
	rc = atlas_decompress(dtrained, &back, zc.buf, zc.len, &err);
	CHECK(rc == 0 && back.len == ends[2] && memcmp(back.buf, all.buf, ends[2]) == 0, "chunks read back whole");
	const struct {
		unsigned from, to, first;
		size_t at, n;
	} win[] = {
		{ 0, 5, 0, 0, sizes[0] },		       /* inside the first */
		{ 10, 11, 10, ends[0], sizes[1] },	       /* the second's first unit */
		{ 29, 31, 10, ends[0], sizes[1] + sizes[2] }, /* across two */
		{ 5, 15, 0, 0, ends[1] },		       /* across the first two */
		{ 100, 101, 30, ends[1], sizes[2] },	       /* past every unit: the last */
		{ 0, 0, 0, 0, sizes[0] },		       /* no unit: the first alone */
	};
	for (size_t i = 0; i < sizeof(win) / sizeof(win[0]); i++) {
		unsigned first = 99;
		rc = atlas_decompress_units(dtrained, &part, zc.buf, zc.len, win[i].from, win[i].to, &first, &err);
		CHECK(rc == 0 && first == win[i].first && part.len == win[i].n &&
			      memcmp(part.buf, all.buf + win[i].at, win[i].n) == 0 && part.buf[part.len] == '\0',
		      "units [%u, %u): the chunks from unit %u read (got %u, %zu bytes)", win[i].from, win[i].to,
		      win[i].first, first, part.len);
	}
	unsigned first = 99;
	rc = atlas_decompress_units(dtrained, &part, z.buf, z.len, 5, 6, &first, &err);
	CHECK(rc == 0 && first == 0 && part.len == one.len, "a text not in chunks is read whole by units");
	CHECK(atlas_compress_chunks(trained, &z, all.buf, ends, units, 1, &err) == 0 && z.len > 0 && z.buf[0] == 1,
	      "one chunk is stored as a text alone");
	size_t bad_ends[2] = { 10, 10 };
	CHECK(atlas_compress_chunks(trained, &z, all.buf, bad_ends, units, 2, &err) == ATLAS_EINVAL && err.msg[0],
	      "an empty chunk is refused: %s", err.msg);
	expect_refused(dtrained, zc.buf, 3, "a chunk list cut short");
	expect_refused(dtrained, zc.buf, zc.len - 1, "chunks missing their last byte");
	char *grown = malloc(zc.len + 1);
	memcpy(grown, zc.buf, zc.len);
	grown[zc.len] = 'x';
	expect_refused(dtrained, grown, zc.len + 1, "chunks followed by a stray byte");
	memcpy(grown, zc.buf, zc.len);
	grown[1] = 1;
	expect_refused(dtrained, grown, zc.len, "a chunk list of one chunk");
	free(grown);
	round_trip(trained, dtrained, one.buf, one.len, "after the damaged chunks");
	strbuf_free(&zc);
	strbuf_free(&part);

	free(frame);
	strbuf_free(&back);
	strbuf_free(&z);
	strbuf_free(&one);
	strbuf_free(&all);
	atlas_decompressor_free(dplain);
	atlas_decompressor_free(dtrained);
	atlas_compressor_free(plain);
	atlas_compressor_free(trained);
	atlas_compressor_free(few);
	atlas_compressor_free(NULL);
	atlas_decompressor_free(NULL);
	return check_done("test_compress");
}
