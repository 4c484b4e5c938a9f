/* schema.h - the contract of atlas.db, shared by the indexer (which writes it) and the query side:
 * its tables and their SQL, the page types and their names, the meta keys, SQLite errors as Atlas codes. */
#ifndef ATLAS_SCHEMA_H
#define ATLAS_SCHEMA_H

#include <sqlite3.h>

#include "error.h"

/* Bumped whenever a table or column changes meaning; readers refuse other versions. */
#define ATLAS_SCHEMA_VERSION 20

/* The most bytes of a term's postings kept in its row of table postings; more go to postings_spill. */
#define ATLAS_POSTINGS_INLINE_MAX 800

/* Meta keys of the kept pages (atlas-index --keep-going): how many pages are their previous
 * index's version or left out; the table kept_pages says which and why. */
#define ATLAS_META_KEPT_PAGES "kept_pages"

/* Column order of the documents FTS5 table, and of the bm25() weights that go with it. defs holds
 * the names a page defines (the definition terms and API signatures of a built site's pages,
 * none for the Markdown corpus), last so that the fields table's columns keep the same numbers. */
enum { FTS_TITLE, FTS_KEYWORDS, FTS_HEADINGS, FTS_DESCRIPTION, FTS_BODY, FTS_DEFS, FTS_NCOLS };

/* The SQL that creates every table of a new index (FTS5 tables need the "atlas" tokenizer). */
extern const char atlas_schema_sql[];

/* The SQL that creates the read-next signals' tables (vocab, stems, next_candidates, similar_terms, next_fit) alone, the
 * same as in atlas_schema_sql: the signals are written to a file of their own, then copied. */
extern const char atlas_schema_signals_sql[];

/* The SQL that creates the fields and titles FTS5 tables alone, the same as in atlas_schema_sql
 * (they need the "atlas" tokenizer): they are indexed in the signals' file too, then copied. */
extern const char atlas_schema_fields_sql[];

/* The SQL that creates the page sources' tables (page_sources, source_blocks, kept_pages, and
 * dictionaries for theirs) and meta alone, the same as in atlas_schema_sql: the page sources are written to a file
 * of their own, then copied. */
extern const char atlas_schema_sources_sql[];

/* The type of a page, docs.type's name for it in atlas_page_type_names. In the order of the
 * search's type facet; ATLAS_TYPE_OTHER stands for a name an index holds that this build does not
 * know (none it writes). ATLAS_TYPE_PAGE is a site page: the corpus's pages/, a site's other pages. */
enum atlas_page_type { ATLAS_TYPE_EXPLAINER, ATLAS_TYPE_GUIDE, ATLAS_TYPE_TOPIC, ATLAS_TYPE_PAGE, ATLAS_TYPE_OTHER };
#define ATLAS_TYPE_COUNT ATLAS_TYPE_OTHER /* the known types */

/* docs.type's names of the known types, as constants (for static initializers) and in
 * atlas_page_type_names, indexed by enum atlas_page_type. */
#define ATLAS_TYPE_NAME_EXPLAINER "explainer"
#define ATLAS_TYPE_NAME_GUIDE "guide"
#define ATLAS_TYPE_NAME_TOPIC "topic"
#define ATLAS_TYPE_NAME_PAGE "page"
extern const char *const atlas_page_type_names[ATLAS_TYPE_COUNT];

/* Returns the type whose name is name, or ATLAS_TYPE_OTHER when there is none (and for NULL). */
enum atlas_page_type atlas_page_type_of(const char *name);

/* The keys of the meta table (key/value facts about the build), as atlas-index writes them. */
#define ATLAS_META_SCHEMA_VERSION "schema_version"         /* ATLAS_SCHEMA_VERSION, decimal */
#define ATLAS_META_BUILD_ID "build_id"                     /* 16 hex digits of the corpus and the build */
#define ATLAS_META_BUILT_AT "built_at"                     /* UTC, ISO 8601 to the second */
#define ATLAS_META_BUILT_AT_UNIX "built_at_unix"           /* the same, seconds since the epoch */
#define ATLAS_META_CORPUS_DIGEST "corpus_digest"           /* "fnv1a64:" and 16 hex digits */
#define ATLAS_META_CORPUS_BYTES "corpus_bytes"             /* the bytes of the files read */
#define ATLAS_META_SITE_URL "site_url"                     /* what a page's path is appended to */
#define ATLAS_META_PAGES "pages"                           /* pages of every type */
#define ATLAS_META_SECTIONS "sections"                     /* rows of sections */
#define ATLAS_META_SECTION_TEXT_BYTES "section_text_bytes" /* their texts' bytes, uncompressed */
#define ATLAS_META_LINKS "links"                           /* rows of links */
#define ATLAS_META_GUIDE_STEPS "guide_steps"               /* rows of guide_steps */
#define ATLAS_META_TERMS "terms"                           /* rows of vocab */

/* The meta keys of the number of pages of each type ("pages_explainer", ...), indexed by enum
 * atlas_page_type. */
extern const char *const atlas_meta_pages_of_type[ATLAS_TYPE_COUNT];

/* The table the build's facts are kept in. */
#define ATLAS_META_TABLE "meta"

/* The tables created by atlas_schema_signals_sql, NULL-terminated: the read-next thread writes
 * them into a file of its own, from which they are copied whole. */
extern const char *const atlas_signals_tables[];

/* The tables created by atlas_schema_sources_sql, NULL-terminated: their rows are copied into the
 * index from the page sources' file. */
extern const char *const atlas_sources_tables[];

/* The shadow tables of the FTS5 tables created by atlas_schema_fields_sql, NULL-terminated: they
 * are indexed in the signals' file, and copied over the empty ones of the index. */
extern const char *const atlas_fields_shadow_tables[];

/* Sets err from db's last error, while doing what to file: "FILE: WHAT: WHY". SQLite's disk full
 * (SQLITE_FULL) is ATLAS_EIO with WHY "disk full"; any other error ATLAS_ESQL with WHY why, or
 * SQLite's message when why is NULL. Returns the code set. */
int atlas_sql_error(atlas_error *err, sqlite3 *db, const char *file, const char *what, const char *why);
/* The SQL that creates the tables of an analytics file (atlas-serve --analytics): searches,
 * clicks, the corrections of query ids, and meta (retention_days). */
extern const char atlas_analytics_sql[];

/* Checks that db is an Atlas index of ATLAS_SCHEMA_VERSION: returns 0, or ATLAS_ESCHEMA with the
 * reason (not an index, another version) in err. */
int atlas_schema_check(sqlite3 *db, atlas_error *err);

#endif
