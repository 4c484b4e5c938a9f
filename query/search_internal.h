/* search_internal.h - the types one search shares across the files of query/ (plan.c, search.c). */
#ifndef ATLAS_SEARCH_INTERNAL_H
#define ATLAS_SEARCH_INTERNAL_H

#include "engine_internal.h"
#include "parse.h"

#define MAX_TERMS 32
#define MAX_ALTS 12
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
	int est_df;              /* pages the rarest content word's alternatives are on, at most (by
				    stems): the work of step 1, counted as far as it passes
				    RANK_BROAD_DF or not */
	int est_any;             /* at most this many pages hold any content word: the work of step 2 */
	bool partial;            /* retrieval stopped at the titles or the important fields */
	atlas_work budget, work; /* the search's work budget, the work done (see engine.h) */
	bool budget_hit;         /* a bound was reached: the results are partial */
	long step_cost;          /* postings a retrieval step may read: the admitted words' */
	char *unquoted[8];       /* phrases of stop words only, searched as separate words */
	int nunquoted;
	int nphrases;
	bool corrected;
	bool replaced;           /* an unknown word was searched as its correction */
	bool no_correct;         /* atlas_search_params.no_correct: words are searched as typed */
	double idf[FTS_MAX_PHRASES]; /* IDF per phrase of the expressions, for atlas_rank */
	int nidf;
	qterm terms[MAX_TERMS];  /* last: plan_init leaves them, new_term clears each one taken */
} plan;


/* Starts an empty plan: everything but the terms zeroed (15 KB a search, mostly unused). */
void plan_init(plan *pl);
/* Frees what a plan holds (its terms' strings, its expressions); not pl itself. */
void plan_free(plan *pl);
/* Turns the parsed query q into pl's terms: words and phrases of its clauses, synonyms,
 * corrections (within pl's expansions budget), the completions of the word being typed. A term
 * that cannot be allocated is left out. */
void analyze_query(atlas_engine *e, plan *pl, const parsed_query *q);
/* Writes pl's MATCH expressions (all words, any word, over the fts and the titles tables, and the
 * excluded words' group) from its terms, numbering the any-word expression's phrases. Writes
 * nothing when no term is a content word; an expression that ran out of memory is marked oom. */
void build_expressions(plan *pl);

#endif
