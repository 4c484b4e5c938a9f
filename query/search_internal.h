/* search_internal.h - what the files of one search share: its plan's types and the steps of
 * plan.c, retrieve.c, score.c and snippet.c that search.c runs. Used by those files and by nothing
 * else. */
#ifndef ATLAS_SEARCH_INTERNAL_H
#define ATLAS_SEARCH_INTERNAL_H

#include "engine_internal.h"
#include "parse.h"

#define MAX_TERMS 32
#define MAX_ALTS 12
#define ADMIT_TERMS 8 /* content words a search looks for, at most (rarest first) */
#define ADMIT_ALTS 24 /* their alternatives (stems, synonyms, completions), at most */
#define MAX_PHRASES 63

typedef struct qterm {
	char *word;              /* folded surface text (words of a phrase joined by spaces) */
	char *alts[MAX_ALTS];    /* MATCH fragments: quoted strings */
	double alt_idf[MAX_ALTS]; /* IDF of each alternative, from the vocabulary */
	int prefix_from;         /* alts from this index on are completions of a prefix word */
	bool alt_titled[MAX_ALTS]; /* a completion looked for in titles and keywords only */
	int nalts;
	bool phrase, negated, stop, prefix;
	char *correction;        /* spelling correction applied, or NULL */
	int syn_group;           /* synonym group expanded, or 0 */
	double idf;              /* weight of the term in the coverage of a page */
	char *title_pats[MAX_ALTS]; /* " stem " patterns looked for in a title (" prefix" for a prefix) */
	unsigned long long title_pat_bits[MAX_ALTS]; /* the atlas_word_bit each pattern needs in a field */
	int ntitle_pats;
	int prefix_pat;          /* index of the prefix pattern in title_pats, or -1 */
	/* the alternative of the word typed as a command-line option ("--timeout"), or -1: such a
	 * word is in a title or a path only as that option (read beside prefix_pat) */
	int option_alt;
	/* a prefix word every vocabulary word starting with which is matched by one of its phrases
	 * (itself, a completion taken, or a part of an identifier): its phrases' matches say all */
	bool prefix_covered;
} qterm;

typedef struct plan {
	int nterms;
	int npositive;           /* terms that decide matching (content words and phrases) */
	strbuf strict, relaxed;
	/* the same two over the titles table, without column filters (its one column is the title);
	 * their phrases are numbered alike */
	strbuf titles_strict, titles_relaxed;
	strbuf excluded;         /* the negated terms' groups, any of them, for the fts table */
	int phrase_term[MAX_PHRASES + 1];  /* relaxed expression: phrase index -> term */
	sqlite3_int64 term_phrases[MAX_TERMS]; /* term -> its phrases in the relaxed expression */
	sqlite3_int64 field_phrases[MAX_TERMS]; /* term -> its phrases there that put it in a title or
						 * keywords: all of them, or its option's alone
						 * (option_alt) */
	int est_df;              /* pages the rarest content word's alternatives are on, at most (by
				    stems): the work of step 1, counted as far as it passes
				    RANK_BROAD_DF or not */
	int est_any;             /* at most this many pages hold any content word: the work of step 2 */
	bool partial;            /* retrieval stopped at the titles or the important fields */
	bool kept_to_types;      /* retrieval walked the pages of the types searched alone */
	int kept_to_topic;       /* the topic page whose topic's pages retrieval walked alone, or -1 */
	int kept_pages;          /* the pages it was kept to */
	bool any_pass;           /* retrieval took the any-word pass (not the all-words one alone) */
	bool table_rows;         /* whole-pages rows came from the postings table, without positions */
	atlas_work budget, work; /* the search's work budget, the work done (see engine.h) */
	bool budget_hit;         /* a bound was reached: the results are partial */
	long step_cost;          /* postings a retrieval step may read: the admitted words' */
	char *unquoted[8];       /* phrases of stop words only, searched as separate words */
	int nunquoted;
	int nphrases;
	/* the content terms (neither excluded nor stop words) in query order, and the first of them
	 * being typed with its first phrase in the any-word expression (-1 for none): made by
	 * build_expressions, for the loops each candidate runs */
	int content[MAX_TERMS];
	int ncontent;
	int typed, typed_phrase;
	bool corrected;
	bool replaced;           /* an unknown word was searched as its correction */
	bool no_correct;         /* atlas_search_params.no_correct: words are searched as typed */
	double idf[FTS_MAX_PHRASES]; /* IDF per phrase of the expressions, for atlas_rank */
	int nidf;
	/* the phrases of the word being typed: itself [word_from, complete_from), its completions
	 * [complete_from, complete_to) (match_record's) */
	int word_from, complete_from, complete_to;
	qterm terms[MAX_TERMS];  /* last: plan_init leaves them, new_term clears each one taken */
} plan;


/* plan.c */

/* Starts an empty plan: everything but the terms zeroed (15 KB a search, mostly unused). */
void plan_init(plan *pl);
/* Frees what a plan holds (its terms' strings, its expressions); not pl itself. */
void plan_free(plan *pl);
/* Turns the parsed query q into pl's terms: words and phrases of its clauses, synonyms,
 * corrections (within pl's expansions budget), the completions of the word being typed. A term
 * that cannot be allocated is left out. */
void analyze_query(atlas_engine *e, plan *pl, const parsed_query *q);
/* Writes pl's MATCH expressions (all words, any word, over the fts and the titles tables, and the
 * excluded words' group) from its terms, numbering the any-word expression's phrases, and lists
 * the content terms (pl->content, pl->typed). Writes no expression when no term is a content
 * word; an expression that ran out of memory is marked oom. */
void build_expressions(plan *pl);

/* retrieve.c */

/* Admits the plan's positive terms rarest first (by the postings of their alternatives) while
 * their sum fits half the postings budget, the first one always; the others become stop words and
 * mark the search partial. Sets pl->step_cost to the admitted sum. */
void budget_terms(atlas_engine *e, plan *pl);
/* The pages of alternative alt (an FTS5 string), at most those of its rarest position, from the
 * stems' page counts; 0 when unknown or out of memory. */
int alt_df(atlas_engine *e, const char *alt);
/* The pages estimated to hold any content word of pl and no excluded word, from the stems' page
 * counts. */
int estimate_total(atlas_engine *e, const plan *pl);
/* Estimates the pages holding every content word of the plan and no excluded word, from the page
 * counts of the stems as estimate_total does: N prod(df/N) prod(1 - df_excluded/N). */
int estimate_all(atlas_engine *e, const plan *pl);
/* Whether the search filters by type (type or types). */
bool type_filtered(const atlas_search_params *p, const atlas_search_more *m);
/* Whether the search filters by topic (topic or topics) or by the caller's accept. */
bool topic_filtered(const atlas_search_params *p, const atlas_search_more *m);
/* Whether page d passes the search's type filter: type, or any of types. */
bool type_passes(const atlas_search_params *p, const atlas_search_more *m, const atlas_doc *d);
/* Whether page d passes the search's other filters: topic, any of topics, and accept. */
bool topic_passes(const atlas_search_params *p, const atlas_search_more *m, const atlas_doc *d);
/* Finds the candidates of plan pl into e (e->touched, e->cand; a new generation), at least want
 * pages that pass the search's filters when there are as many, within pl's work budget (pl->work
 * counted, pl->budget_hit and pl->partial set). With trace, appends a line per step taken to it.
 * Returns 0, or ATLAS_ESQL with err set. */
int retrieve(atlas_engine *e, plan *pl, const atlas_search_params *p, const atlas_search_more *m, int want,
	     strbuf *trace, atlas_error *err);

/* A page and its score, as ranked. */
typedef struct ranked {
	int doc;
	double score;
	/* 1 when the page matched the word being typed only by a completion while other pages match
	 * the word itself: ranked below every page of tier 0, whatever the scores */
	int tier;
} ranked;

/* score.c */

/* The weight of page doc by its type (rank.h's RANK_TYPE_*), times RANK_CODE_LISTING for a code
 * listing. */
double type_weight(const atlas_doc *doc);
/* Computes, once per query, the IDF of every content term and alternative (in phrase order, for
 * atlas_rank), pl's estimates of the work (est_df, est_any) and the title patterns of every
 * content term. A pattern that cannot be allocated is left out. */
void term_weights(atlas_engine *e, plan *pl);
/* Share of the content words' IDF candidate c matched, 1 when it matched them all or the query
 * has one; sets c->strict when it matched every content word. */
double coverage_of(const plan *pl, candidate *c);
/* Whether a candidate matched only through the prefix alternative of the prefix word. */
bool prefix_only(const plan *pl, const candidate *c);
/* Whether a candidate matched the word being typed itself (an alternative before its
 * completions); false when the query has no such word. */
bool prefix_exact(const plan *pl, const candidate *c);
/* Whether a candidate defines the word being typed itself (matched it among the names the page
 * defines); false when the query has no such word. */
bool prefix_defined(const plan *pl, const candidate *c);
/* Whether the word being typed is on at least as many pages as each of its completions (by their
 * IDFs): then the reader most likely typed the whole word. */
bool prefix_word_leads(const plan *pl);
/* Best first by tier, then score, then path (qsort_r order over ranked, ctx the engine). */
int cmp_ranked(const void *a, const void *b, void *ctx);
/* Newest first (lastmod), then as cmp_ranked. */
int cmp_lastmod(const void *a, const void *b, void *ctx);
/* Makes sure the matches of page d are in the match record: the candidate pass keeps them unless
 * the record was full, the pass read only some fields or the pages came from the postings table
 * (which holds no positions); then one query on that page alone (snippet.c). */
void ensure_recorded(atlas_engine *e, int d, const plan *pl);
/* Whether the plan's whole-pages expressions are evaluated over the postings table: each phrase a
 * single term (no prefix) and no word being completed, added to the engine's blockmax in the order
 * build_expressions writes them, one group per term (retrieve_blocks.c). */
bool blocks_expression(atlas_engine *e, struct blockmax *q, const plan *pl);
/* Whether page type t (enum atlas_page_type) is one the search filters by: type, or one of types. */
bool type_wanted(const atlas_search_params *p, const atlas_search_more *m, int t);
/* Gives take every row the expression blocks_expression set up in q matches (every group's, when
 * strict) among the pages of allowed (bit d of allowed[d / 64] for row d; NULL: every
 * page), in row order, at most cap, scored and with the match record's row_* set as atlas_rank
 * would, the positions unrecorded. Returns 0 or ATLAS_EINVAL (a malformed block) with err set. */
int blocks_run(atlas_engine *e, struct blockmax *q, bool strict, long cap, const uint64_t *allowed,
	       void (*take)(void *, sqlite3_int64, double), void *ctx, atlas_error *err);
/* Applies the path, proximity and heading boosts to the ranked pages rk[0..n), whose first shown
 * are the best by score, sorted, and to each other page that could pass the shown ones. */
void boost_shown(atlas_engine *e, const plan *pl, ranked *rk, int n, size_t shown);
/* The priority factor of page doc (RANK_PRIORITY_*). */
double priority_weight(const atlas_doc *doc);
/* Scores candidate c of page doc before the boosts of the page shown (qstems: the query's stems,
 * for the exact-title test); sets c's title, keywords, exact, strict and score, clears its boosts.
 * Returns the score. */
double score_candidate(const plan *pl, candidate *c, const atlas_doc *doc, const char *qstems);
/* Sets h->explain (malloc'd, the caller frees it; NULL when out of memory) to the per-field BM25
 * of the hit and the factors of its score. */
void fill_explain(atlas_engine *e, atlas_hit *h, const plan *pl, const candidate *c, double title, bool exact,
		  double cov, double tw, double pw, bool ponly);

/* snippet.c */

/* Where a match at position off of fts column col of page d falls: the section (its index in
 * e->sections), whether in the heading part, and the token index in that part. Returns false for
 * the keywords column and for positions no section holds. */
bool locate_match(const atlas_engine *e, const atlas_doc *d, int col, int off, int *sec, bool *head,
		  int *idx);
/* Fills the snippet, the marked title and the best sections of every hit of res (the page shown),
 * their text in res->text; a hit whose matches show nothing gets its description. Out of memory
 * leaves a hit's snippet or sections out. */
void fill_sections(atlas_engine *e, atlas_results *res, const plan *pl);

#endif
