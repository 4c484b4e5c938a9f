/* engine.h - the query engine: opens atlas.db read-only and answers search, suggest and
 * read-next requests. One engine per thread; an engine is not safe for concurrent use. */
#ifndef ATLAS_ENGINE_H
#define ATLAS_ENGINE_H

#include <stdbool.h>

#include "arena.h"
#include "error.h"

typedef struct atlas_engine atlas_engine;

/* Bounds on what a reader may ask for. */
#define ATLAS_QUERY_MAX_BYTES 1024 /* longer queries are cut at a character boundary */
#define ATLAS_LIMIT_MAX 50
#define ATLAS_OFFSET_MAX 1000
#define ATLAS_SEEN_MAX 64

/* Indexes up to this size are read into memory when opened (larger ones are read from the file). */
#define ATLAS_ENGINE_MEMORY_MAX (512LL << 20)

typedef struct atlas_search_params {
	const char *q;       /* the reader's text, any bytes (NUL-terminated) */
	int limit;           /* 1..ATLAS_LIMIT_MAX */
	int offset;          /* 0..ATLAS_OFFSET_MAX */
	const char *type;    /* NULL or explainer|guide|topic|page */
	const char *topic;   /* NULL or a topic path; matches the topic and everything below it */
	bool explain;        /* fill atlas_hit.explain */
} atlas_search_params;

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
	char *title_html;    /* title, HTML-escaped */
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
	double took_ms;
	char *did_you_mean;  /* NULL when nothing was corrected */
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
	const char **seen;   /* paths already read; unknown ones are ignored */
	int nseen;
	int limit;
} atlas_next_params;

typedef struct atlas_suggestion {
	int doc;             /* -1 for a term */
	const char *term;    /* owned by the engine, for a term */
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
/* Page types, in the order of the type facet; ATLAS_TYPE_OTHER for a type the index names but the
 * engine does not know (ranked as a site page, counted in no facet). */
enum { ATLAS_TYPE_EXPLAINER, ATLAS_TYPE_GUIDE, ATLAS_TYPE_TOPIC, ATLAS_TYPE_PAGE, ATLAS_TYPE_OTHER };

/* The names of the known types, indexed by ATLAS_TYPE_*. */
extern const char *const atlas_type_names[ATLAS_TYPE_OTHER];

typedef struct atlas_doc {
	int id;
	char *path, *url, *title, *type, *description;
	char **topics;       /* topic paths */
	int ntopics;
	int *top_topics;     /* the pages of its distinct top-level topics (at most 8, in order) */
	int ntop_topics;
	double priority;
	int first_section, last_section;
	int type_id;         /* ATLAS_TYPE_* of type */
	char *title_norm;    /* stems of the title, space-separated, with spaces at both ends */
	char *keywords_norm; /* stems of the keywords, likewise */
	char *path_norm;     /* stems of the words of the path ("/t/" of a topic left out), likewise */
	unsigned long long title_sig, keywords_sig, path_sig; /* atlas_word_sig of the three above */
	char *title_words;   /* folded title words, likewise (for typeahead) */
	bool json_plain;     /* path, url, title, type and topics hold no byte JSON escapes */
	double listing;      /* 0 to 1: how much the page is a list of links rather than content */
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

/* Checks every page of the index (PRAGMA quick_check; milliseconds for the real corpus). Returns 0
 * or ATLAS_ESCHEMA with the first problem in err. For a server about to switch to a new file. */
int atlas_engine_verify(atlas_engine *e, atlas_error *err);

/* Closes the engine. Accepts NULL. */
void atlas_engine_free(atlas_engine *e);

/* Runs a search. On success fills *res (free with atlas_results_free) and returns 0; returns
 * ATLAS_EINVAL for bad parameters and ATLAS_ESQL for index failures, with err set. */
int atlas_search(atlas_results *res, atlas_engine *e, const atlas_search_params *p, atlas_error *err);
void atlas_results_free(atlas_results *res);

/* Typeahead: up to max titles and terms for prefix, best first, into out. Returns the count. */
int atlas_suggest(atlas_suggestion *out, int max, atlas_engine *e, const char *prefix);

/* Read next for a page. Returns 0, ATLAS_ENOTFOUND for an unknown path or guide, or ATLAS_ESQL. */
int atlas_next(atlas_next_results *res, atlas_engine *e, const atlas_next_params *p, atlas_error *err);
void atlas_next_results_free(atlas_next_results *res);

/* Accessors for serializers and front ends. */
const atlas_doc *atlas_engine_doc(const atlas_engine *e, int i);
int atlas_engine_ndocs(const atlas_engine *e);
const char *atlas_engine_meta(const atlas_engine *e, const char *key); /* NULL when absent */
int atlas_engine_vocab_size(const atlas_engine *e);
/* Returns the doc index of path (NULL-safe), or -1. */
int atlas_engine_find(const atlas_engine *e, const char *path);

#endif
