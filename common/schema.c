/* schema.c - the tables of atlas.db, the names of its page types and meta keys, SQLite errors as
 * Atlas codes, and the check that a file is an index this build can read. */
#include "schema.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The tables the read-next signals fill. vocab: folded surface words with document and collection
 * frequency, for spelling and typeahead. stems: every indexed stem with the number of pages
 * holding it, for estimates of a total that is not counted. next_candidates: precomputed read-next
 * candidates, every (target, signal, weight, detail) of a source page packed in one blob, in the
 * order they were made (common/next_rows.h), so that a page's candidates are one read.
 * similar_terms: the words a "similar" candidate's detail names by id (the readable form of a
 * term the two pages share). next_fit: the read-next blend's weights fitted on the site's guides
 * ("w:<signal>" and "w:context", indexer/next_fit.h) and the figures behind them (guides, cases,
 * mrr_default, mrr_fitted, hit3_default, hit3_fitted, weights: "fitted" or "defaults"). */
#define ATLAS_SCHEMA_SIGNALS_SQL                                                                   \
	"CREATE TABLE vocab(term TEXT PRIMARY KEY, df INTEGER NOT NULL, cf INTEGER NOT NULL)"      \
	" WITHOUT ROWID;\n"                                                                        \
	"CREATE TABLE stems(stem TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;\n"          \
	"CREATE TABLE next_candidates(src INTEGER PRIMARY KEY, rows BLOB NOT NULL);\n"              \
	"CREATE TABLE similar_terms(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n"              \
	"CREATE TABLE next_fit(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;\n"

/* The same pages' important fields alone (the fts columns but body, same rowids): where the most
 * common words are looked for, without walking their entries in every body; and their titles
 * alone (titles), where such words are looked for first: a word on most pages is in the titles of
 * far fewer, and those are the pages a reader typing it wants. */
#define ATLAS_SCHEMA_FIELDS_SQL                                                                    \
	"CREATE VIRTUAL TABLE fields USING fts5(title, keywords, headings, description,"           \
	" content='', tokenize='atlas');\n"                                                          \
	"CREATE VIRTUAL TABLE titles USING fts5(title, content='', tokenize='atlas');\n"

/* key/value facts about the build: schema_version, build_id, built_at, corpus_digest, counts */
#define ATLAS_SCHEMA_META_SQL "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"

/* zstd dictionaries of the compressed texts, by name (section_body: the sections' bodies;
 * page_source: the page sources'); an empty dict: none (the texts compressed alone) */
#define ATLAS_SCHEMA_DICTIONARIES_SQL "CREATE TABLE dictionaries(name TEXT PRIMARY KEY, dict BLOB NOT NULL);\n"

/* page_sources: each page file as read, by its name under the corpus or site directory: the last
 * good version that atlas-index --keep-going keeps when the file has become invalid; its bytes are
 * [at, at + len) of source block block. source_blocks: the files one after another, in blocks of
 * about 256 KiB compressed whole (common/compress.h) against the dictionary page_source: a file's
 * row alone, a few KiB, would fill a page of the b-tree by half. (An index of an earlier build
 * holds page_sources(file, data) instead, each file one zstd frame.)
 * kept_pages: the page files this index holds at their previous version (kept = 1) or left out
 * (kept = 0) because the corpus's were invalid, with the first error (atlas-index --keep-going) */
#define ATLAS_SCHEMA_SOURCES_SQL                                                                   \
	"CREATE TABLE page_sources(file TEXT PRIMARY KEY, block INTEGER NOT NULL, at INTEGER NOT NULL," \
	" len INTEGER NOT NULL) WITHOUT ROWID;\n"                                                    \
	"CREATE TABLE source_blocks(id INTEGER PRIMARY KEY, data BLOB NOT NULL);\n"                 \
	"CREATE TABLE kept_pages(file TEXT PRIMARY KEY, kept INTEGER NOT NULL, error TEXT NOT NULL)" \
	" WITHOUT ROWID;\n"

const char atlas_schema_sql[] =
	ATLAS_SCHEMA_META_SQL
	ATLAS_SCHEMA_DICTIONARIES_SQL
	ATLAS_SCHEMA_SOURCES_SQL
	/* one row per page; type is explainer|guide|topic|page; topics is a JSON array of paths; a
	 * page's URL is meta's site_url followed by its path; source is the file it was read from;
	 * code_listing is 1 for a program's source shown whole (a built site's code listing, such as
	 * Sphinx's viewcode pages), which ranks below the pages that explain it */
	"CREATE TABLE docs(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, type TEXT NOT NULL,"
	" title TEXT NOT NULL, description TEXT NOT NULL, keywords TEXT NOT NULL,"
	" topics TEXT NOT NULL, priority REAL NOT NULL, lastmod TEXT NOT NULL, image TEXT NOT NULL,"
	" words INTEGER NOT NULL, first_section INTEGER NOT NULL, last_section INTEGER NOT NULL,"
	" source TEXT NOT NULL, code_listing INTEGER NOT NULL);\n"
	/* sections of a page in order; ord 0 is the lead (heading: the title; body: the description, a
	 * newline and the text before the first heading). Their tokens are positions of the fts
	 * columns: heading_tokens of the headings column (of the title for ord 0), lead_tokens of the
	 * description (ord 0 only), body_tokens of the body column, in section order: the positions
	 * the analyzer's aux mode finds in heading, then in body (common/spans.h). body is stored
	 * compressed (common/compress.h) against the dictionary section_body, a long one in chunks
	 * of about 1 KiB cut between tokens, each chunk's units its tokens. anchor is empty when
	 * it is the heading's own (common/anchor.h: the engine makes it again), and for ord 0 */
	"CREATE TABLE sections(id INTEGER PRIMARY KEY, doc_id INTEGER NOT NULL, ord INTEGER NOT NULL,"
	" level INTEGER NOT NULL, heading TEXT NOT NULL, anchor TEXT NOT NULL, body BLOB NOT NULL,"
	" heading_tokens INTEGER NOT NULL, lead_tokens INTEGER NOT NULL, body_tokens INTEGER NOT NULL);\n"
	/* ranking index over whole pages; contentless, since the text lives in sections; defs: the
	 * names the page defines, one a line */
	"CREATE VIRTUAL TABLE fts USING fts5(title, keywords, headings, description, body, defs,"
	" content='', tokenize='atlas');\n"
	ATLAS_SCHEMA_FIELDS_SQL
	/* Atlas's own postings of each term of fts: its page count and its pages with their matches
	 * per column, by blocks with each block's largest BM25F frequency (common/blockpost.h). The
	 * blocks of a term are in its row when they take at most ATLAS_POSTINGS_INLINE_MAX bytes
	 * (spill 0), else in postings_spill's row spill (blocks then empty): the rows stay small
	 * enough for the b-tree's pages, and a term is kept once */
	"CREATE TABLE postings(term TEXT PRIMARY KEY, df INTEGER NOT NULL, blocks BLOB NOT NULL,"
	" spill INTEGER NOT NULL) WITHOUT ROWID;\n"
	"CREATE TABLE postings_spill(id INTEGER PRIMARY KEY, blocks BLOB NOT NULL);\n"
	/* the taxonomy: one row per topic path, parent NULL at the top */
	"CREATE TABLE topics(path TEXT PRIMARY KEY, parent TEXT, title TEXT NOT NULL,"
	" description TEXT NOT NULL, ord INTEGER NOT NULL, doc_id INTEGER);\n"
	"CREATE TABLE doc_topics(doc_id INTEGER NOT NULL, topic TEXT NOT NULL,"
	" PRIMARY KEY(doc_id, topic)) WITHOUT ROWID;\n"
	/* guide routes: step is 1-based across the whole guide */
	"CREATE TABLE guide_steps(guide_id INTEGER NOT NULL, step INTEGER NOT NULL,"
	" section TEXT NOT NULL, doc_id INTEGER NOT NULL, PRIMARY KEY(guide_id, step)) WITHOUT ROWID;\n"
	"CREATE INDEX guide_steps_doc ON guide_steps(doc_id);\n"
	/* each page's links to other pages (their text is not kept: no answer shows it); anchor is
	 * the #fragment of the page's first link to dst, '' when it names none */
	"CREATE TABLE links(src INTEGER NOT NULL, dst INTEGER NOT NULL, anchor TEXT NOT NULL DEFAULT '',"
	" PRIMARY KEY(src, dst))"
	" WITHOUT ROWID;\n"
	"CREATE TABLE prerequisites(doc_id INTEGER NOT NULL, prereq INTEGER NOT NULL,"
	" PRIMARY KEY(doc_id, prereq)) WITHOUT ROWID;\n"
	/* query-time equivalents: every term of a group stands for every other */
	"CREATE TABLE synonyms(grp INTEGER NOT NULL, term TEXT NOT NULL);\n"
	ATLAS_SCHEMA_SIGNALS_SQL;

/* The read-next signals' tables, also created alone in the file the signals are written to
 * beside the index, from which they are copied whole. */
const char atlas_schema_signals_sql[] = ATLAS_SCHEMA_SIGNALS_SQL;

/* The fields table, also created alone in that file: it is indexed there, then copied. */
const char atlas_schema_fields_sql[] = ATLAS_SCHEMA_FIELDS_SQL;

/* The page sources' tables and meta, also created alone in the file the page sources are written
 * to beside the index, from which their rows are copied. */
const char atlas_schema_sources_sql[] = ATLAS_SCHEMA_META_SQL ATLAS_SCHEMA_DICTIONARIES_SQL ATLAS_SCHEMA_SOURCES_SQL;

const char *const atlas_page_type_names[ATLAS_TYPE_COUNT] = { ATLAS_TYPE_NAME_EXPLAINER, ATLAS_TYPE_NAME_GUIDE,
								 ATLAS_TYPE_NAME_TOPIC, ATLAS_TYPE_NAME_PAGE };

const char *const atlas_meta_pages_of_type[ATLAS_TYPE_COUNT] = {
	ATLAS_META_PAGES "_" ATLAS_TYPE_NAME_EXPLAINER, ATLAS_META_PAGES "_" ATLAS_TYPE_NAME_GUIDE,
	ATLAS_META_PAGES "_" ATLAS_TYPE_NAME_TOPIC, ATLAS_META_PAGES "_" ATLAS_TYPE_NAME_PAGE
};

const char *const atlas_signals_tables[] = { "next_candidates", "similar_terms", "next_fit", "vocab", "stems",
					     NULL };

const char *const atlas_sources_tables[] = { "page_sources", "source_blocks", "kept_pages", "dictionaries",
					     ATLAS_META_TABLE, NULL };

const char *const atlas_fields_shadow_tables[] = { "fields_data",   "fields_idx",    "fields_docsize",
						   "fields_config", "titles_data",   "titles_idx",
						   "titles_docsize", "titles_config", NULL };

enum atlas_page_type atlas_page_type_of(const char *name)
{
	for (int k = 0; name && k < ATLAS_TYPE_COUNT; k++)
		if (strcmp(name, atlas_page_type_names[k]) == 0)
			return (enum atlas_page_type)k;
	return ATLAS_TYPE_OTHER;
}

int atlas_sql_error(atlas_error *err, sqlite3 *db, const char *file, const char *what, const char *why)
{
	bool full = sqlite3_errcode(db) == SQLITE_FULL;
	return atlas_error_set(err, full ? ATLAS_EIO : ATLAS_ESQL, "%s: %s: %s", file, what,
			       full ? "disk full" : why ? why : sqlite3_errmsg(db));
}

int atlas_schema_check(sqlite3 *db, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM " ATLAS_META_TABLE " WHERE key='" ATLAS_META_SCHEMA_VERSION "'", -1, &st,
			       NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESCHEMA, "not an Atlas index (%s)", sqlite3_errmsg(db));
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return atlas_error_set(err, ATLAS_ESCHEMA, "not an Atlas index (no schema_version)");
	}
	int v = atoi((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (v != ATLAS_SCHEMA_VERSION)
		return atlas_error_set(err, ATLAS_ESCHEMA,
				       "index has schema version %d, this build reads version %d", v,
				       ATLAS_SCHEMA_VERSION);
	return 0;
}

const char atlas_analytics_sql[] =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
	"CREATE TABLE IF NOT EXISTS searches(id INTEGER PRIMARY KEY, at INTEGER NOT NULL,\n"
	"  qid TEXT NOT NULL, query TEXT NOT NULL, corrected TEXT, filters TEXT NOT NULL,\n"
	"  results INTEGER NOT NULL, took_ms REAL NOT NULL, page INTEGER NOT NULL);\n"
	"CREATE INDEX IF NOT EXISTS searches_at ON searches(at);\n"
	"CREATE INDEX IF NOT EXISTS searches_qid ON searches(qid);\n"
	"CREATE TABLE IF NOT EXISTS clicks(id INTEGER PRIMARY KEY, at INTEGER NOT NULL,\n"
	"  qid TEXT NOT NULL, path TEXT NOT NULL, rank INTEGER NOT NULL);\n"
	"CREATE INDEX IF NOT EXISTS clicks_qid ON clicks(qid);\n"
	"CREATE TABLE IF NOT EXISTS corrections(qid TEXT PRIMARY KEY, at INTEGER NOT NULL,\n"
	"  corrected TEXT NOT NULL);\n";
