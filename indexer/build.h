/* build.h - writing a validated corpus into a new atlas.db, atomically replacing the old one. */
#ifndef ATLAS_BUILD_H
#define ATLAS_BUILD_H

#include <stddef.h>

#include <sqlite3.h>

#include "corpus.h"
#include "error.h"

typedef struct build_stats {
	int pages[ATLAS_TYPE_COUNT]; /* by enum atlas_page_type */
	int sections;
	int links;
	int guide_steps;
	int terms;        /* distinct surface terms in the vocabulary */
	int candidates;   /* read-next candidate rows */
	long long index_bytes;
	/* the sections' headings, anchors and bodies, uncompressed, and a span (8 bytes) a token */
	long long section_text_bytes;
	char build_id[40];
#define BUILD_MAX_PHASES 12
	const char *phase_name[BUILD_MAX_PHASES]; /* static strings */
	double phase_ms[BUILD_MAX_PHASES];
	int nphases;
} build_stats;

/* Most and bounds of the memory FTS5 gathers pending terms in before it writes them out as a
 * segment (atlas-index --fts-memory; by default an eighth of the corpus, at most this). A corpus larger than half of it is written in several
 * segments, merged into one at the end. */
#define BUILD_FTS_MEMORY_MIB 64
#define BUILD_FTS_MEMORY_MIB_MAX 4096

/* Builds the index of c into a temporary file beside out_path, checks it, and renames it over
 * out_path; fts_memory_mib is the FTS5 pending-terms memory (1 to BUILD_FTS_MEMORY_MIB_MAX; 0 for
 * an eighth of the corpus's bytes, from 1 MiB to BUILD_FTS_MEMORY_MIB). The
 * section bodies of c are freed as they are indexed: afterwards c can only be freed. On failure
 * the temporary file is removed, out_path is untouched, and err says what went wrong (naming the
 * file). Returns 0 or a negative ATLAS_E* code. Longer than 120 lines: its steps run in one order
 * on one connection with one rc and two cleanup labels, and read as that order. */
int index_build(build_stats *stats, corpus *c, const char *out_path, int fts_memory_mib,
		atlas_error *err);

/* What a caller adds to the index: fn is called by index_build with the new index open in its
 * transaction, after the documents are written and before the index is checked. Set once before
 * index_build (NULL: nothing). fn returns 0 or an ATLAS_E* code with err set, failing the build. */
typedef int (*build_extra_fn)(sqlite3 *db, const corpus *c, void *ctx, atlas_error *err);
void index_build_set_extra(build_extra_fn fn, void *ctx);

/* Removes temporary files left beside out_path by builds that were killed. Returns how many. */
int index_remove_stale_temps(const char *out_path);

#endif
