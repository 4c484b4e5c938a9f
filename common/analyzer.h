/* analyzer.h - the text analyzer shared by the indexer and the query side: Unicode word splitting
 * (FTS5's unicode61 underneath, diacritics folded), identifier awareness and Snowball English
 * stemming, registered with FTS5 as the tokenizer "atlas". */
#ifndef ATLAS_ANALYZER_H
#define ATLAS_ANALYZER_H

#include <sqlite3.h>
#include <stddef.h>

#include "error.h"

#define ATLAS_TOKENIZER_NAME "atlas"

/* Longest run of identifier parts joined into compounds ("jax._src.core" has 3 parts). */
#define ATLAS_MAX_COMPOUND_PARTS 8

/* Flag for atlas_analyze: split with unicode61 even where the built-in ASCII splitter would do
 * (which gives the same tokens faster); for tests that prove the two agree. */
#define ATLAS_ANALYZE_UNICODE61 0x2000

/* Flag for atlas_analyze in document mode: emit each word's folded surface form too, colocated
 * with its stem when the two differ (what the vocabulary counts). FTS5 never asks for it: queries
 * look for stems and identifiers only, so the index holds no surface forms. */
#define ATLAS_ANALYZE_SURFACE 0x4000

/* Flag for atlas_analyze in query mode: an identifier gives its parts, never its compound, as in
 * a query string of several words ("HashMap": "hash", "map"). */
#define ATLAS_ANALYZE_PARTS 0x1000

/* Token callback, with FTS5's xToken signature: tflags is 0 or FTS5_TOKEN_COLOCATED, token is
 * not NUL-terminated, [start, end) are byte offsets into the analyzed text. Return non-zero to stop. */
typedef int (*atlas_token_fn)(void *ctx, int tflags, const char *token, int ntoken, int start,
			      int end);

typedef struct atlas_analyzer atlas_analyzer;

/* Registers the "atlas" tokenizer with FTS5 on db. Must be called on every connection that reads or
 * writes an Atlas FTS5 table. Returns 0 or ATLAS_ESQL with the reason in err. */
int atlas_analyzer_register(sqlite3 *db, atlas_error *err);

/* Creates a standalone analyzer (for work outside FTS5: vocabulary, query words) using the
 * unicode61 tokenizer found on db. On success *out owns a new analyzer (free with
 * atlas_analyzer_free); on failure *out is NULL and err says why. */
int atlas_analyzer_new(atlas_analyzer **out, sqlite3 *db, atlas_error *err);

/* Frees an analyzer. Accepts NULL. */
void atlas_analyzer_free(atlas_analyzer *a);

/* Analyzes text[0..n) in the FTS5 mode given by flags (FTS5_TOKENIZE_DOCUMENT, _QUERY,
 * _QUERY|_PREFIX or _AUX) and calls fn for each token. Document mode emits for every word its stem
 * (and, with ATLAS_ANALYZE_SURFACE, colocated, the folded surface form when it differs), plus
 * colocated compounds for identifiers ("shard_map", "torch.compile", "rlcluster"); query mode
 * emits stems, or the whole compound for an identifier; prefix mode emits the folded surface form;
 * aux mode emits one plain token per position (the token spans that snippets are cut by are
 * found so, common/spans.h). Returns 0 (or fn's non-zero value when it stopped early) or an SQLite
 * error code from unicode61. */
int atlas_analyze(atlas_analyzer *a, int flags, const char *text, int n, atlas_token_fn fn,
		  void *ctx);

/* A tap on the "atlas" tokenizer of one connection: while it is set, each text that FTS5 has the
 * tokenizer analyze in document mode (the columns of a row being inserted) is offered to begin,
 * with its address and length; when begin returns a callback, that callback also gets every
 * position's token (no colocated ones) as the index gets it, so that a caller can learn the
 * positions' byte ranges without analyzing the text a second time. The tap is the caller's and
 * must outlive its use. */
typedef struct atlas_tap {
	atlas_token_fn (*begin)(void *ctx, const char *text, int n);
	void *ctx;
} atlas_tap;

/* Sets (or, with NULL, clears) the tap of the "atlas" tokenizer registered on db. Returns 0, or
 * ATLAS_ESQL when db has no such tokenizer (err says so). */
int atlas_analyzer_set_tap(sqlite3 *db, atlas_tap *tap, atlas_error *err);

/* Sets the slots (rounded up to a power of two) of the stem cache of every analyzer whose cache
 * is made after the call: 4096 (200 KB) by default, enough for queries; a process analyzing a
 * whole corpus wants its vocabulary to fit (32768, 1.6 MB, at the indexer). */
void atlas_analyzer_set_stem_cache(int slots);

/* The dashes (1 or 2) before the word at text[start] when it is written as a command-line option
 * ("-v", "--log-level"): the dashes begin the text or follow a blank or an opening mark, and a
 * letter follows them; the analyzer then also writes the word with its dashes. 0 for any other
 * word ("well-known", "a - b", "-1"). */
int atlas_option_dashes(const char *text, int start);

/* Stems one folded lowercase word with the analyzer's Snowball stemmer. Writes a NUL-terminated
 * stem of at most cap-1 bytes into out and returns its length (the word itself when it has digits
 * or is too long to stem). */
int atlas_stem(atlas_analyzer *a, const char *word, int n, char *out, int cap);

#endif
