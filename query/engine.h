/* engine.h - the query engine: opens atlas.db read-only and answers search, suggest and
 * read-next requests. One engine per thread; an engine is not safe for concurrent use. */
#ifndef ATLAS_ENGINE_H
#define ATLAS_ENGINE_H

#include <stdbool.h>

#include "arena.h"
#include "error.h"
#include "schema.h"

typedef struct atlas_engine atlas_engine;

/* Bounds on what a reader may ask for. */
#define ATLAS_QUERY_MAX_BYTES 1024 /* longer queries are cut at a character boundary */
#define ATLAS_LIMIT_MAX 50
#define ATLAS_OFFSET_MAX 1000
#define ATLAS_SEEN_MAX 64

/* Indexes up to this size are read into memory when opened (larger ones are read from the file). */
#define ATLAS_ENGINE_MEMORY_MAX (512LL << 20)

struct atlas_doc;
/* The work one search may do, counted by the engine as it goes (atlas_results.work). Past a
 * bound the engine stops and answers with the best results found so far, marked partial:
 * - postings: entries of the posting lists a retrieval step may read, the page counts (by stems)
 *   of every word of every alternative of the words it looks for, charged per step; words are
 *   admitted rarest first while their sum fits, and a step runs only when its sum still fits;
 * - candidates: rows scored (pages a step returned, each scored by BM25), a row of a query of more
 *   than ATLAS_WORK_ROW_PHRASES phrases (words, their alternatives, quoted phrases) counting one
 *   for each ATLAS_WORK_ROW_PHRASES of them, since scoring it walks every phrase's matches;
 * - expansions: vocabulary words compared for spelling corrections and prefix completions.
 * The postings default is for an index of up to ATLAS_WORK_PAGES pages and grows in proportion
 * to the pages above it, as the posting lists of an ordinary query's words do (the rows a step
 * scores and the vocabulary compared grow far more slowly). The defaults hold every query of the
 * relevance sets whole on 1,000 to 100,000 explainers and bound the hostile shapes of
 * docs/RELIABILITY.md ("Query cost") to about 20 normal queries. */
#define ATLAS_WORK_POSTINGS 400000L
#define ATLAS_WORK_CANDIDATES 20000L
#define ATLAS_WORK_EXPANSIONS 20000L
#define ATLAS_WORK_PAGES 10000
#define ATLAS_WORK_ROW_PHRASES 4

typedef struct atlas_work {
	long postings;
	long candidates;
	long expansions;
} atlas_work;

typedef struct atlas_search_params {
	const char *q;       /* the reader's text, any bytes (NUL-terminated) */
	int limit;           /* 1..ATLAS_LIMIT_MAX */
	int offset;          /* 0..ATLAS_OFFSET_MAX */
	const char *type;    /* NULL or explainer|guide|topic|page */
	const char *topic;   /* NULL or a topic path; matches the topic and everything below it */
	bool explain;        /* fill atlas_hit.explain */
	bool no_correct;     /* search for the words as typed: no spelling correction (did_you_mean
				stays NULL); synonyms, stems and the prefix still apply */
} atlas_search_params;

enum { ATLAS_SORT_RELEVANCE, ATLAS_SORT_LASTMOD };

/* More filters and the order, for atlas_search_with; all optional (zeros: none, by relevance). A
 * page passes when its type is the params' type or one of types, when it has the params' topic or
 * one of topics (each matching itself and every topic below it), and when accept (a filter of the
 * caller's, given accept_ctx, for any mix of types and topics) says yes. */
typedef struct atlas_search_more {
	const char *const *types;
	int ntypes;
	const char *const *topics;
	int ntopics;
	bool (*accept)(const struct atlas_doc *d, void *ctx);
	void *accept_ctx;
	int sort;            /* ATLAS_SORT_RELEVANCE or ATLAS_SORT_LASTMOD (newest first) */
	/* asked before each retrieval step (given stop_ctx): true ends the search there with the
	 * results found so far (none before the first step), marked partial (a deadline passed,
	 * the asker left) */
	bool (*stop)(void *ctx);
	void *stop_ctx;
} atlas_search_more;
/* Sets the work budget of every search of the process from now on: a field above 0 holds as
 * given on every index; a field 0 or less (every field, for NULL) takes its default, scaled to
 * each index (atlas_work_budget_for). Call before any thread searches. */
void atlas_set_work_budget(const atlas_work *budget);

/* Returns the work budget of a search on an index of ndocs pages: the fields atlas_set_work_budget
 * gave, and for the others their ATLAS_WORK_* default, postings scaled to the pages past
 * ATLAS_WORK_PAGES. */
atlas_work atlas_work_budget_for(int ndocs);

/* Parses "POSTINGS[,CANDIDATES[,EXPANSIONS]]" (positive numbers; a field left out or empty keeps
 * its default) into *out, for the --budget flags of atlas-query and atlas-serve. Returns 0, or
 * ATLAS_EINVAL. */
int atlas_parse_work_budget(const char *s, atlas_work *out);

/* The text of hits (headings, anchors, snippets, titles) is owned by their atlas_results. */
typedef struct atlas_section_hit {
	char *heading;       /* HTML-escaped (strbuf_append_html), with <mark> highlights */
	char *anchor;
	char *snippet;       /* HTML-escaped (strbuf_append_html), with <mark> highlights */
} atlas_section_hit;

typedef struct atlas_hit {
	int doc;             /* index into the engine's documents */
	double score;
	char *snippet;       /* HTML-escaped (strbuf_append_html), with <mark> highlights */
	char *title_html;    /* title, HTML-escaped (strbuf_append_html), with <mark> highlights */
	atlas_section_hit sections[3];
	int nsections;
	char *explain;       /* per-field BM25 and boosts, when asked for */
} atlas_hit;

typedef struct atlas_facet {
	const char *value;   /* owned by the engine */
	const char *label;
	int count;
} atlas_facet;

typedef struct atlas_results {
	char *query;         /* the query as understood (sanitized) */
	int total;
	/* false when total is an estimate: words so common that retrieval stopped at the pages
	 * whose important fields hold them, and the rest were not counted (see atlas_search) */
	bool total_exact;
	/* the type facet's counts of the types not searched are estimates from the words' page
	 * counts: the search was kept to a few types' pages (atlas_search); serialized as
	 * facets_exact */
	bool facets_estimated;
	int total_all;       /* of the pages counted in total, those holding every content word
				(of those retrieved, when total is an estimate); not serialized */
	double took_ms;
	int offset, limit;   /* the page of results asked for */
	/* the work budget stopped the search: the results are the best found within it */
	bool partial;
	atlas_work work;     /* the work done, as counted against the budget */
	/* quoted phrases of nothing but stop words, searched as separate words (a phrase of common
	 * words walks position lists as long as the index), with the quotes: "\"the of\"" */
	char *unquoted[8];
	int nunquoted;
	char *did_you_mean;  /* NULL when nothing was corrected */
	bool corrected;      /* the results are those of did_you_mean's words (an unknown word was
				searched as its correction); false when did_you_mean is only offered */
	atlas_hit *hits;
	int nhits;
	atlas_facet types[4];
	int ntypes;
	atlas_facet *topics;
	int ntopics;
	char *explain;       /* the query plan: terms, expansions, corrections, MATCH expressions */
	atlas_arena text;    /* the hits' text, freed whole by atlas_results_free */
} atlas_results;

typedef struct atlas_next_params {
	const char *path;
	const char *guide;   /* NULL, or a guide slug or path */
	const char **seen;   /* paths already read, in the order read (the last read last): the last
			      * ATLAS_SEEN_MAX count; unknown ones are ignored */
	int nseen;
	int limit;
} atlas_next_params;

/* Typeahead: suggestions asked for at most, and the longest completed query kept. */
#define ATLAS_SUGGEST_MAX 20
#define ATLAS_SUGGEST_TEXT_MAX 400

typedef struct atlas_suggestion {
	int doc;             /* a page whose title matches, or -1 for a completed query */
	char text[ATLAS_SUGGEST_TEXT_MAX]; /* for a query: the reader's text, last word completed */
	int pages;           /* for a query: the pages a search for text finds */
	double score;
} atlas_suggestion;

typedef struct atlas_next_item {
	int doc;
	double score;
	char *reasons[4];
	int nreasons;
} atlas_next_item;

typedef struct atlas_next_results {
	int doc;
	atlas_next_item *items;
	int nitems;
} atlas_next_results;

/* A document as the engine keeps it in memory. */
/* Page types are common/schema.h's enum atlas_page_type; ATLAS_TYPE_OTHER, a type the index names
 * but the engine does not know, is ranked as a site page and counted in no facet. */

typedef struct atlas_doc {
	int id;
	char *path, *url, *title, *type, *description;
	char *lastmod, *image; /* "" when the page has none */
	char **topics;       /* topic paths */
	int ntopics;
	int *top_topics;     /* the pages of its distinct top-level topics (at most 8, in order) */
	char *topic_of;      /* the topic whose page this is (its path, "systems/caching"), or NULL */
	int ntop_topics;
	double priority;
	int first_section, last_section;
	int type_id;         /* ATLAS_TYPE_* of type */
	char *title_norm;    /* stems of the title, space-separated, with spaces at both ends */
	char *keywords_norm; /* stems of the keywords, likewise */
	char *keywords_words; /* folded keyword words, likewise */
	char *path_norm;     /* stems of the words of the path ("/t/" of a topic left out), likewise */
	unsigned long long title_sig, keywords_sig, path_sig; /* atlas_word_sig of the three above */
	char *title_words;   /* folded title words, likewise (for typeahead) */
	int title_content;   /* how many of those are not stop words */
	bool json_plain;     /* path, url, title, type and topics hold no byte JSON escapes */
	double listing;      /* 0 to 1: how much the page is a list of links rather than content */
	bool code_listing;   /* a program's source shown whole (docs.code_listing) */
} atlas_doc;

/* Opens the index at path read-only and loads what queries need into memory (the whole file when
 * it is at most ATLAS_ENGINE_MEMORY_MAX, so that nothing done to the file later reaches the engine;
 * its size is checked against its header, so a file cut short is refused). On success *out owns
 * the engine; on failure *out is NULL and err says why (ATLAS_EIO, ATLAS_ESCHEMA, ATLAS_ESQL). */
int atlas_engine_open(atlas_engine **out, const char *path, atlas_error *err);

/* Holds the index's full-text postings in memory when they are small (postings.h: the real
 * corpus's 154,137 positions take about 1.5 MB and under 0.1 s to read), so that searches run no
 * SQLite statement, with the same results. For an engine that answers many searches
 * (atlas-serve's); a no-op for a larger index. Returns 0, or ATLAS_ENOMEM or ATLAS_ESQL with err
 * set (the engine still searches, through FTS5). */
int atlas_engine_hold_postings(atlas_engine *e, atlas_error *err);

/* Makes the engine evaluate the whole-pages expressions it does not hold over the postings table
 * (blockmax.h) when each of their phrases is one term, instead of through FTS5, with the same
 * results: the rows and scores come from the table, and the positions the boosts of the pages
 * that could be shown and their snippets need are then read through FTS5 one page at a time.
 * Not the default: those reads cost more than the walk saves (docs/BENCHMARKS.md). Returns 0, or
 * ATLAS_ENOMEM or ATLAS_ESQL with err set (the engine still searches, through FTS5); a no-op
 * without column sizes. */
int atlas_engine_read_postings_table(atlas_engine *e, atlas_error *err);

/* Checks every page of the index (PRAGMA quick_check; milliseconds for the real corpus). Returns 0
 * or ATLAS_ESCHEMA with the first problem in err. For a server about to switch to a new file. */
int atlas_engine_verify(atlas_engine *e, atlas_error *err);

/* Closes the engine. Accepts NULL. */
void atlas_engine_free(atlas_engine *e);

/* Runs a search. On success fills *res (free with atlas_results_free) and returns 0; returns
 * ATLAS_EINVAL for bad parameters and ATLAS_ESQL for index failures, with err set. */
int atlas_search(atlas_results *res, atlas_engine *e, const atlas_search_params *p, atlas_error *err);
/* atlas_search with the filters and order of more (NULL: none, as atlas_search). With more->accept
 * the facets count the pages that pass every filter; without, each facet counts the pages that
 * pass the other facet's filters. */
int atlas_search_with(atlas_results *res, atlas_engine *e, const atlas_search_params *p,
		      const atlas_search_more *more, atlas_error *err);
void atlas_results_free(atlas_results *res);

/* Typeahead for the text typed so far: up to max (1..ATLAS_SUGGEST_MAX) suggestions into out,
 * first the whole query completed (its words before the last kept as typed, the last completed
 * from the vocabulary, or when nothing starts with it, from the words one or two edits away),
 * ranked by the pages each completed query finds, then pages whose title matches. Returns the
 * count (0 for empty text); out owns its text, nothing to free. */
int atlas_suggest(atlas_suggestion *out, int max, atlas_engine *e, const char *prefix);

/* Splits text, comma-separated paths in the order read, in place (commas become NULs; empty
 * items dropped) into out (room for ATLAS_SEEN_MAX): the last ATLAS_SEEN_MAX, the pages read most
 * recently, in order, pointing into text. Returns how many. */
int atlas_next_seen_split(const char **out, char *text);

/* Read next for a page. Returns 0, ATLAS_ENOTFOUND for an unknown path or guide, or ATLAS_ESQL. */
int atlas_next(atlas_next_results *res, atlas_engine *e, const atlas_next_params *p, atlas_error *err);
void atlas_next_results_free(atlas_next_results *res);

/* Accessors for serializers and front ends. */
const atlas_doc *atlas_engine_doc(const atlas_engine *e, int i);
int atlas_engine_ndocs(const atlas_engine *e);
const char *atlas_engine_meta(const atlas_engine *e, const char *key); /* NULL when absent */
int atlas_engine_vocab_size(const atlas_engine *e);
/* Returns the doc index of path (NULL-safe), or -1 when no page has it: not an error code. */
int atlas_engine_find(const atlas_engine *e, const char *path);
/* Returns the doc index of the page of topic (a topic path: "systems/caching", "library/text"),
 * as the index's topics table names it, or -1 when the topic has no page (NULL-safe). */
int atlas_engine_topic_page(const atlas_engine *e, const char *topic);
/* Returns the path of the page of e that in is, as the sitemap writes it: in itself when e has
 * it, else in with a scheme and host (any case) left out, a leading slash put where none is, a
 * trailing index.html or index.htm and trailing slashes taken off (and then with one slash put
 * back) - whichever e has - or in when none is a page of e (NULL-safe). Written into buf (cap
 * bytes) when rewritten. Never fails. */
const char *atlas_engine_resolve(const atlas_engine *e, const char *in, char *buf, size_t cap);

#endif
