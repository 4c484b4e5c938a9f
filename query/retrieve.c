/* retrieve.c - a plan's candidates: its MATCH expressions run over the titles, the important
 * fields and the whole pages, within the work budget; the filters; the estimated total. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockmax.h"
#include "postings.h"
#include "rank.h"
#include "search_internal.h"
/* Where a MATCH expression is looked for, narrowest first: the titles table, the fields table
 * (titles, keywords, headings, descriptions), the fts table (whole pages). */
typedef enum { TIER_TITLES, TIER_FIELDS, TIER_PAGES } match_tier;

static const char *const tier_names[] = { "titles", "important fields", "whole pages" };

/* Takes one row a MATCH expression gave, scored b, with the match record's row_* describing it:
 * the page becomes a candidate of the query, keeping its best score and what it matched. */
typedef struct row_sink {
	atlas_engine *e;
	bool strict;
	match_tier tier;
	int rows;
} row_sink;

/* The candidate of row rowid, made (emptied, marked, touched) when first met this generation;
 * NULL for a row that is no page or one left out. */
static candidate *candidate_of(atlas_engine *e, sqlite3_int64 rowid)
{
	int d = (int)rowid - 1; /* doc ids are 1..ndocs in order */
	if (d < 0 || d >= e->ndocs || e->excluded[d] == e->generation)
		return NULL;
	candidate *c = &e->cand[d];
	if (e->mark[d] != e->generation) {
		e->mark[d] = e->generation;
		e->touched[e->ntouched++] = d;
		memset(c, 0, sizeof(*c));
		c->inst_n = -1;
	}
	return c;
}

static void take_row(void *ctx, sqlite3_int64 rowid, double b)
{
	row_sink *s = ctx;
	atlas_engine *e = s->e;
	s->rows++;
	candidate *c = candidate_of(e, rowid);
	if (!c)
		return;
	/* the all-words and any-word expressions number their phrases alike */
	c->strict |= s->strict;
	c->phrases |= e->rec.row_phrases;
	c->title_phrases |= e->rec.row_title;
	c->keyword_phrases |= e->rec.row_keywords;
	c->heading_phrases |= e->rec.row_headings;
	c->def_phrases |= e->rec.row_defs;
	c->keywords_known |= s->tier != TIER_TITLES;
	c->page_row |= s->tier == TIER_PAGES;
	if (s->tier == TIER_PAGES && e->rec.row_n >= 0) {
		c->inst_start = e->rec.row_start;
		c->inst_n = e->rec.row_n;
	}
	if (b > c->bm25)
		c->bm25 = b;
}

/* Takes one row of typeahead's count (count_only, the all-words pass): the page becomes a candidate
 * holding every word, without the scores and matches no count reads. */
static void take_counted(void *ctx, sqlite3_int64 rowid)
{
	row_sink *s = ctx;
	s->rows++;
	candidate *c = candidate_of(s->e, rowid);
	if (!c)
		return;
	c->strict = true;
	c->keywords_known = true;
	c->page_row = true;
}

/* Whether the plan's expressions are evaluated over the postings the engine holds: its phrases
 * added to them in the order build_expressions writes them (the positive terms' alternatives, then
 * the negated terms'), one group per term, and e->held_plan pl (NULL on failure: ensure_recorded
 * then asks FTS5). False when the engine holds none or a phrase is not one they evaluate as FTS5
 * would. */
static bool held_expression(atlas_engine *e, const plan *pl)
{
	e->held_plan = NULL;
	if (!e->postings)
		return false;
	postings_reset(e->postings);
	for (int neg = 0; neg < 2; neg++)
		for (int i = 0; i < pl->nterms; i++) {
			const qterm *t = &pl->terms[i];
			if (neg ? !t->negated : t->negated || t->stop)
				continue;
			for (int k = 0; k < t->nalts; k++) {
				unsigned cols = t->alt_titled[k] ? (1u << FTS_TITLE) | (1u << FTS_KEYWORDS)
								 : POSTINGS_ALL_COLUMNS;
				if (postings_add(e->postings, e->analyzer, t->alts[k], cols, i, neg))
					return false;
			}
		}
	e->held_plan = pl;
	return true;
}

/* Where a whole-pages expression is evaluated: the postings held in memory (postings.h), the
 * postings table (blockmax.h), or FTS5. */
enum { SOURCE_FTS5, SOURCE_HELD, SOURCE_BLOCKS };

/* Runs one MATCH expression over tier's table: the whole pages (fts), their important fields (the
 * fields table: the fts columns but body, same rowids and column order, so atlas_rank scores them
 * alike) or their titles (the titles table: the title column alone), scoring every row and keeping
 * what it matched; matches kept from a narrower tier are not all of the page's. With held, the
 * expression (whole pages only) is evaluated over the engine's postings instead, to the same rows,
 * scores and matches; from the postings table (source SOURCE_BLOCKS), to the same rows and scores,
 * their matches' positions read later for the pages that need them (ensure_recorded). Takes at
 * most cap rows, the first in rowid order, from whichever source. Adds to *rows the rows seen.
 * Returns 0 or ATLAS_ESQL. */
static int run_match(atlas_engine *e, const char *expr, bool strict, match_tier tier, int source,
		     const uint64_t *allowed, long cap, int *rows, atlas_error *err)
{
	row_sink sink = { e, strict, tier, 0 };
	/* typeahead's count of the pages holding every word needs the rows alone: none is scored */
	bool counted = e->count_only && strict && tier == TIER_PAGES;
	if (source == SOURCE_HELD && tier == TIER_PAGES &&
	    (counted ? postings_count(e->postings, strict, cap, take_counted, &sink)
		     : postings_run(e->postings, &e->rec, strict, cap, take_row, &sink)) >= 0) {
		*rows += sink.rows;
		return 0;
	}
	if (source == SOURCE_BLOCKS && tier == TIER_PAGES) {
		int rc = blocks_run(e, allowed ? e->filter_blocks : e->blockmax, strict, cap, allowed, take_row, &sink,
				    err);
		*rows += sink.rows;
		return rc;
	}
	sqlite3_stmt *st = tier == TIER_TITLES ? e->st_match_titles
			   : tier == TIER_FIELDS ? e->st_match_fields
			   : counted		 ? e->st_match_rows
						 : e->st_match;
	sqlite3_bind_text(st, 1, expr, -1, SQLITE_STATIC);
	int rc = SQLITE_DONE;
	/* at most cap rows: the candidates budget (a step stopped there keeps what it found) */
	while (sink.rows < cap && (rc = sqlite3_step(st)) == SQLITE_ROW)
		if (counted)
			take_counted(&sink, sqlite3_column_int64(st, 0));
		else
			take_row(&sink, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1));
	if (rc == SQLITE_ROW)
		rc = SQLITE_DONE;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	*rows += sink.rows;
	if (rc != SQLITE_DONE)
		return atlas_error_set(err, ATLAS_ESQL, "search failed: %s", sqlite3_errmsg(e->db));
	return 0;
}

/* Marks the pages expr matches over whole pages as excluded for this generation. Returns 0 or
 * ATLAS_ESQL. */
static int exclude_pages(atlas_engine *e, const char *expr, atlas_error *err)
{
	sqlite3_stmt *st = e->st_match_rows;
	sqlite3_bind_text(st, 1, expr, -1, SQLITE_STATIC);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 rowid = sqlite3_column_int64(st, 0);
		if (rowid >= 1 && rowid <= e->ndocs)
			e->excluded[rowid - 1] = e->generation;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return atlas_error_set(err, ATLAS_ESQL, "search failed: %s", sqlite3_errmsg(e->db));
	return 0;
}

/* The pages holding stem s[0..n), from the index's stem table (0 when unknown), remembered in
 * e->stem_dfs (the table does not change while the engine is open). */
static int stem_df(atlas_engine *e, const char *s, int n)
{
	stem_df_slot *slot = NULL;
	if (n > 0 && n <= STEM_DF_KEY) {
		slot = &e->stem_dfs[engine_slot(s, (size_t)n, STEM_DF_SLOTS)];
		if (slot->len == n && memcmp(slot->stem, s, (size_t)n) == 0)
			return slot->df;
	}
	sqlite3_stmt *st = e->st_stem_df;
	sqlite3_bind_text(st, 1, s, n, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	int df = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (slot && (rc == SQLITE_ROW || rc == SQLITE_DONE)) {
		memcpy(slot->stem, s, (size_t)n);
		slot->len = n;
		slot->df = df;
	}
	return df;
}

/* Pages of a phrase, at most those of its rarest position; a position's tokens stand for one
 * another (colocated), so it has the pages of its most common one. */
typedef struct phrase_df {
	atlas_engine *e;
	int df;       /* so far, over the positions closed; -1 before the first */
	int pos_df;   /* the open position's */
	bool open;
} phrase_df;

static void phrase_df_close(phrase_df *x)
{
	if (x->open && (x->df < 0 || x->pos_df < x->df))
		x->df = x->pos_df;
	x->open = false;
}

static int phrase_df_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	phrase_df *x = ctx;
	(void)start;
	(void)end;
	int df = stem_df(x->e, tok, n);
	if (!(tflags & FTS5_TOKEN_COLOCATED)) {
		phrase_df_close(x);
		x->pos_df = 0;
		x->open = true;
	}
	if (df > x->pos_df)
		x->pos_df = df;
	return SQLITE_OK;
}

/* The text of alternative alt (an FTS5 string: quoted, quotes doubled inside, maybe a '*' after),
 * unquoted, with its length in *n. Returns a string the caller frees, or NULL when out of memory. */
static char *alt_text(const char *alt, size_t *n)
{
	size_t len = strlen(alt);
	char *text = malloc(len + 1);
	if (!text)
		return NULL;
	size_t o = 0;
	for (size_t i = 1; i < len; i++) {
		if (alt[i] == '"' && alt[i + 1] == '"')
			text[o++] = alt[i++];
		else if (alt[i] != '"' && alt[i] != '*')
			text[o++] = alt[i];
	}
	text[o] = '\0';
	*n = o;
	return text;
}

/* The pages of alternative alt (an FTS5 string: quoted, quotes doubled inside). */
int alt_df(atlas_engine *e, const char *alt)
{
	size_t o;
	char *text = alt_text(alt, &o);
	if (!text)
		return 0;
	phrase_df x = { e, -1, 0, false };
	atlas_analyze(e->analyzer, FTS5_TOKENIZE_QUERY, text, (int)o, phrase_df_token, &x);
	phrase_df_close(&x);
	free(text);
	return x.df > 0 ? x.df : 0;
}

/* Adds the posting entries of each token (colocated ones included: each has a list of its own) to
 * the sum at ctx. */
static int postings_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	struct { atlas_engine *e; long sum; } *x = ctx;
	(void)tflags;
	(void)start;
	(void)end;
	/* a page's entry holds each position, and every one is scored: a word's occurrences when
	 * the vocabulary knows it, else its stem's pages (stop words have no stem entry) */
	int df = stem_df(x->e, tok, n);
	int cf = vocab_cf(x->e, tok, (size_t)n);
	x->sum += df > cf ? df : cf;
	return SQLITE_OK;
}

/* The posting-list entries a step may read for alternative alt (an FTS5 string): the page count
 * of every token of it, summed. */
static long alt_postings(atlas_engine *e, const char *alt)
{
	/* remembered by the alternative's text, as stem_df's answers are */
	size_t len = strlen(alt);
	alt_cost_slot *slot = NULL;
	if (len <= ALT_COST_KEY) {
		slot = &e->alt_costs[engine_slot(alt, len, ALT_COST_SLOTS)];
		if (slot->len == (int)len && memcmp(slot->alt, alt, len) == 0)
			return slot->sum;
	}
	size_t o;
	char *text = alt_text(alt, &o);
	if (!text)
		return 0;
	struct { atlas_engine *e; long sum; } x = { e, 0 };
	atlas_analyze(e->analyzer, FTS5_TOKENIZE_QUERY, text, (int)o, postings_token, &x);
	free(text);
	if (slot) {
		memcpy(slot->alt, alt, len);
		slot->len = (int)len;
		slot->sum = x.sum;
	}
	return x.sum;
}

/* Admits the plan's positive terms rarest first (by the postings of their alternatives) while
 * their sum fits half the postings budget (two steps, the all-words and any-word passes, fit),
 * and while they are at most ADMIT_TERMS words of ADMIT_ALTS alternatives, the first one always;
 * the others become stop words (left out of the expressions) and mark the search partial. Sets pl->step_cost to the admitted sum. */
void budget_terms(atlas_engine *e, plan *pl)
{
	long cost[MAX_TERMS];
	int order[MAX_TERMS], n = 0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		cost[i] = 0;
		for (int k = 0; k < t->nalts; k++)
			cost[i] += alt_postings(e, t->alts[k]);
		int j = n++;
		while (j > 0 && cost[order[j - 1]] > cost[i]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	long sum = 0;
	int alts = 0, admitted = 0;
	for (int j = 0; j < n; j++) {
		qterm *t = &pl->terms[order[j]];
		long c = cost[order[j]];
		/* a step's cost grows with the words and alternatives scored on every row, as well
		 * as with their postings: at most ADMIT_TERMS words and ADMIT_ALTS alternatives on
		 * any page (a word on none costs nothing) */
		if (j == 0 || c == 0 ||
		    (admitted < ADMIT_TERMS && alts + t->nalts <= ADMIT_ALTS &&
		     sum + c <= pl->budget.postings / 2)) {
			sum += c;
			if (c) {
				alts += t->nalts;
				admitted++;
			}
			continue;
		}
		t->stop = true;
		pl->npositive--;
		pl->budget_hit = true;
	}
	pl->step_cost = sum;
}

/* Estimates the pages holding any content word of the plan and no excluded word, from the page
 * counts of the stems, as if words (and a word's alternatives) fell on pages independently:
 * N (1 - prod(1 - df/N)) prod(1 - df_excluded/N). The few lookups stand in for counting every
 * page of the expression, which for the most common words walks lists as long as the index. */
int estimate_total(atlas_engine *e, const plan *pl)
{
	double n = e->ndocs > 0 ? e->ndocs : 1, none = 1.0, kept = 1.0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated) {
			for (int k = 0; k < t->nalts; k++) {
				double df = alt_df(e, t->alts[k]);
				kept *= 1.0 - (df < n ? df : n) / n;
			}
			continue;
		}
		if (t->stop)
			continue;
		for (int k = 0; k < t->nalts; k++) {
			/* a completion kept to titles and keywords is left out (its pages there are not
			 * counted); the total is never below the pages found */
			if (t->alt_titled[k])
				continue;
			double df = alt_df(e, t->alts[k]);
			none *= 1.0 - (df < n ? df : n) / n;
		}
	}
	return (int)(n * (1.0 - none) * kept + 0.5);
}

int estimate_all(atlas_engine *e, const plan *pl)
{
	double n = e->ndocs > 0 ? e->ndocs : 1, all = 1.0, kept = 1.0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		double share = 0;
		for (int k = 0; k < t->nalts && !t->stop; k++)
			if (!t->alt_titled[k])
				share += alt_df(e, t->alts[k]) / n;
		if (t->negated)
			kept *= 1.0 - (share < 1 ? share : 1);
		else if (!t->stop)
			all *= share < 1 ? share : 1;
	}
	return (int)(n * all * kept + 0.5);
}

static bool has_topic(const atlas_doc *d, const char *topic)
{
	size_t n = strlen(topic);
	for (int k = 0; k < d->ntopics; k++)
		if (strncmp(d->topics[k], topic, n) == 0 && (d->topics[k][n] == '\0' || d->topics[k][n] == '/'))
			return true;
	return false;
}

/* Whether the search filters by type (type or types). */
bool type_filtered(const atlas_search_params *p, const atlas_search_more *m)
{
	return p->type || m->ntypes > 0;
}

/* Whether the search filters by topic (topic or topics) or by the caller's accept. */
bool topic_filtered(const atlas_search_params *p, const atlas_search_more *m)
{
	return p->topic || m->ntopics > 0 || m->accept;
}

/* Whether page d passes the search's type filter: type, or any of types. */
bool type_passes(const atlas_search_params *p, const atlas_search_more *m, const atlas_doc *d)
{
	if (!type_filtered(p, m))
		return true;
	if (p->type && strcmp(d->type, p->type) == 0)
		return true;
	for (int k = 0; k < m->ntypes; k++)
		if (strcmp(d->type, m->types[k]) == 0)
			return true;
	return false;
}

/* Whether page d passes the search's other filters: topic, any of topics, and accept. */
bool topic_passes(const atlas_search_params *p, const atlas_search_more *m, const atlas_doc *d)
{
	if (m->accept && !m->accept(d, m->accept_ctx))
		return false;
	if (!p->topic && m->ntopics == 0)
		return true;
	if (p->topic && has_topic(d, p->topic))
		return true;
	for (int k = 0; k < m->ntopics; k++)
		if (has_topic(d, m->topics[k]))
			return true;
	return false;
}

/* Adds to found the pages touched from *from on that pass the search's type and topic filters, and
 * moves *from past them. Returns the new count. */
static int count_matching(const atlas_engine *e, const atlas_search_params *p, const atlas_search_more *m,
			  int *from, int found)
{
	if (!type_filtered(p, m) && !topic_filtered(p, m)) {
		found += e->ntouched - *from;
		*from = e->ntouched;
		return found;
	}
	for (; *from < e->ntouched; (*from)++) {
		const atlas_doc *doc = &e->docs[e->touched[*from]];
		found += type_passes(p, m, doc) && topic_passes(p, m, doc);
	}
	return found;
}

bool type_wanted(const atlas_search_params *p, const atlas_search_more *m, int t)
{
	if (p->type && (int)atlas_page_type_of(p->type) == t)
		return true;
	for (int k = 0; k < m->ntypes; k++)
		if ((int)atlas_page_type_of(m->types[k]) == t)
			return true;
	return false;
}

/* Whether keeping retrieval to count pages pays: they are at most a quarter of the rows the words
 * would give, and the rows among them (RANK_KEPT_ROWS) few enough to walk every one. */
static bool kept_pays(const atlas_engine *e, const plan *pl, int count)
{
	return (long)count * 4 <= pl->est_any &&
	       (double)pl->est_any * count / (e->ndocs > 0 ? e->ndocs : 1) <= RANK_KEPT_ROWS;
}

/* Makes e's bitsets of the pages of each type and its reader of the postings table, once. Returns
 * whether they are there (not when out of memory, or without the column sizes the table's scores
 * need). */
static bool type_sets(atlas_engine *e)
{
	if (e->filter_blocks)
		return true;
	if (!e->rec.sizes)
		return false;
	size_t words = (size_t)e->ndocs / 64 + 1;
	for (int t = 0; t < ATLAS_TYPE_COUNT; t++)
		if (!e->type_pages[t] && !(e->type_pages[t] = calloc(words, sizeof(uint64_t))))
			return false;
	if (!e->allowed && !(e->allowed = calloc(words, sizeof(uint64_t))))
		return false;
	for (int d = 0; d < e->ndocs && !e->type_sets_made; d++) {
		int t = e->docs[d].type_id;
		if (t >= 0 && t < ATLAS_TYPE_COUNT) {
			/* the table's rows are the pages' ids, 1..ndocs */
			e->type_pages[t][(d + 1) / 64] |= 1ULL << ((d + 1) % 64);
			e->type_count[t]++;
		}
	}
	e->type_sets_made = true;
	atlas_error err = { 0, "" };
	return blockmax_new(&e->filter_blocks, e->db, e->rec.sizes, e->rec.avg, e->ndocs, &err) == 0;
}

/* The pages of a search kept to a few types, when retrieval is better kept to them: the words are
 * so common that the search would otherwise stop at the titles and fields (RANK_BROAD_DF), it
 * filters by type alone (no topic, no filter of the caller's), every type named is one
 * the engine knows, and the pages of those types are at most a quarter of the rows the words would
 * give. Engines holding the postings or reading the table for every search do this too: their
 * answers are those of an engine reading FTS5. Returns the bitset
 * (e->allowed, valid until the next search) with *n its pages, or NULL. */
static const uint64_t *type_allowed(atlas_engine *e, const plan *pl, const atlas_search_params *p,
				    const atlas_search_more *m, int *n)
{
	*n = 0;
	/* only where the search would not walk every page the words give (whatever the budget: a
	 * search it does not stop is the one without a budget) */
	if (pl->est_df <= RANK_BROAD_DF || !type_filtered(p, m) || topic_filtered(p, m))
		return NULL;
	if (p->type && atlas_page_type_of(p->type) == ATLAS_TYPE_OTHER)
		return NULL;
	for (int k = 0; k < m->ntypes; k++)
		if (atlas_page_type_of(m->types[k]) == ATLAS_TYPE_OTHER)
			return NULL;
	if (!type_sets(e))
		return NULL;
	int count = 0;
	for (int t = 0; t < ATLAS_TYPE_COUNT; t++)
		if (type_wanted(p, m, t))
			count += e->type_count[t];
	if (!kept_pays(e, pl, count) || !blocks_expression(e, e->filter_blocks, pl))
		return NULL;
	size_t words = (size_t)e->ndocs / 64 + 1;
	memset(e->allowed, 0, words * sizeof(uint64_t));
	for (int t = 0; t < ATLAS_TYPE_COUNT; t++)
		if (type_wanted(p, m, t))
			for (size_t w = 0; w < words; w++)
				e->allowed[w] |= e->type_pages[t][w];
	*n = count;
	return e->allowed;
}

/* The pages holding topic (or a topic below it) as a bitset (bit d + 1 for page d) with *n their
 * count, made at the first search kept to it (of at most 16 topics; NULL past them, or when out
 * of memory). The topic pages' top-level counts (e->top_count) are made with the first. */
static const uint64_t *topic_pages(atlas_engine *e, const char *topic, int *n)
{
	for (int t = 0; t < e->ntopic_sets; t++)
		if (strcmp(e->topic_sets[t].topic, topic) == 0) {
			*n = e->topic_sets[t].count;
			return e->topic_sets[t].pages;
		}
	size_t words = (size_t)e->ndocs / 64 + 1;
	if (!e->top_count) {
		if (!(e->top_count = calloc((size_t)e->ndocs + 1, sizeof(int))))
			return NULL;
		for (int d = 0; d < e->ndocs; d++)
			for (int k = 0; k < e->docs[d].ntop_topics; k++)
				e->top_count[e->docs[d].top_topics[k]]++;
	}
	if (e->ntopic_sets == (int)(sizeof(e->topic_sets) / sizeof(e->topic_sets[0])))
		return NULL;
	uint64_t *pages = calloc(words, sizeof(uint64_t));
	char *copy = strdup(topic);
	if (!pages || !copy) {
		free(pages);
		free(copy);
		return NULL;
	}
	int count = 0;
	for (int d = 0; d < e->ndocs; d++)
		if (has_topic(&e->docs[d], topic)) {
			pages[(d + 1) / 64] |= 1ULL << ((d + 1) % 64);
			count++;
		}
	e->topic_sets[e->ntopic_sets].topic = copy;
	e->topic_sets[e->ntopic_sets].pages = pages;
	e->topic_sets[e->ntopic_sets++].count = count;
	*n = count;
	return pages;
}

/* The pages of a search kept to one top-level topic, when retrieval is better kept to them, as
 * type_allowed decides for types: the words so common, the search filtered by that topic alone
 * (no type, no filter of the caller's), the topic one with a page (whose index *topic is set to),
 * its pages at most a quarter of the rows the words would give. Returns the bitset (valid while
 * the engine is) with *n its pages, or NULL. */
static const uint64_t *topic_allowed(atlas_engine *e, const plan *pl, const atlas_search_params *p,
				     const atlas_search_more *m, int *n, int *topic)
{
	*n = 0;
	*topic = -1;
	const char *t = p->topic ? p->topic : m->ntopics == 1 ? m->topics[0] : NULL;
	if (pl->est_df <= RANK_BROAD_DF || !t || (p->topic && m->ntopics) || type_filtered(p, m) || m->accept ||
	    !t[0] || strchr(t, '/') || strlen(t) > 200)
		return NULL;
	int ti = atlas_engine_topic_page(e, t);
	if (ti < 0 || !type_sets(e))
		return NULL;
	int count = 0;
	const uint64_t *pages = topic_pages(e, t, &count);
	if (!pages || !kept_pays(e, pl, count) || !blocks_expression(e, e->filter_blocks, pl))
		return NULL;
	*n = count;
	*topic = ti;
	return pages;
}

/* The steps of retrieve (below), which lets go of the postings table after them. */
static int retrieve_steps(atlas_engine *e, plan *pl, const atlas_search_params *p, const atlas_search_more *m,
			  int want, strbuf *trace, atlas_error *err)
{
	if (++e->generation == 0)
		e->generation = 1, memset(e->mark, 0, (size_t)e->ndocs * sizeof(*e->mark)),
		memset(e->excluded, 0, (size_t)e->ndocs * sizeof(*e->excluded));
	e->ntouched = 0;
	/* Retrieval, with the work bounded however common the words are:
	 * 1. with several content words, the pages holding all of them (FTS5 walks the rarest list);
	 * 2. when those are fewer than the page of results needs, the pages holding any of them,
	 *    ranked by coverage;
	 * 3. when the words are so common that scoring every page holding one would cost too much,
	 *    the titles first, then the fields that matter most (title, keywords, headings,
	 *    description), the body only when those give too few: each a list far shorter than the
	 *    next, walked only when the one before gave too few; the total is then estimated from the
	 *    words' page counts (counting the pages of such words walked lists as long as the index,
	 *    half the work).
	 * Pages met in an earlier step keep what they matched there; a step is enough when it has
	 * found enough pages of the type and topic asked for. */
	int rc;
	int found = 0, counted = 0, nrows = 0; /* found: pages that pass the filters */
	bool broad = pl->est_df > RANK_BROAD_DF;
	const char *passes[2] = { strbuf_str(&pl->strict), strbuf_str(&pl->relaxed) };
	/* the all-words pass only when the any-word pass alone could be large */
	bool all_first = pl->npositive > 1 && pl->est_any > RANK_SINGLE_PASS_ROWS;
	/* typeahead's count (count_only: total_all alone) is of the pages holding every content word:
	 * the all-words pass's rows, exactly, when whole pages are walked and every phrase is recorded
	 * (coverage_of sees them); the any-word pass would add only pages it does not count */
	bool count_all = e->count_only && !broad && pl->nphrases <= MAX_PHRASES;
	e->rec.ninst = 0;
	memcpy(e->rec.idf, pl->idf, sizeof(pl->idf));
	e->rec.nidf = pl->nidf;
	e->rec.word_from = pl->word_from;
	e->rec.complete_from = pl->complete_from;
	e->rec.complete_to = pl->complete_to;
	int source = held_expression(e, pl)		    ? SOURCE_HELD
		     : blocks_expression(e, e->blockmax, pl) ? SOURCE_BLOCKS
							    : SOURCE_FTS5;
	/* a search kept to types of few pages walks the postings table through those pages alone,
	 * every one of them, instead of the titles and fields of every page */
	int nallowed = 0;
	const uint64_t *allowed = type_allowed(e, pl, p, m, &nallowed);
	pl->kept_to_types = allowed != NULL;
	pl->kept_to_topic = -1;
	if (!allowed)
		allowed = topic_allowed(e, pl, p, m, &nallowed, &pl->kept_to_topic);
	if (allowed) {
		source = SOURCE_BLOCKS;
		broad = false;
		pl->kept_pages = nallowed;
	}
	pl->table_rows = source == SOURCE_BLOCKS;
	const char *titled[2] = { strbuf_str(&pl->titles_strict), strbuf_str(&pl->titles_relaxed) };
	/* a narrower table's NOT leaves out only the pages whose titles or fields hold the word: the
	 * pages holding it anywhere are found first and left out of every step */
	if (broad && pl->excluded.len && (rc = exclude_pages(e, strbuf_str(&pl->excluded), err)))
		return rc;
	int steps = 0;
	/* a row's scoring walks each phrase's matches: a row of many phrases costs more than one */
	long row_cost = pl->nphrases > ATLAS_WORK_ROW_PHRASES
				? (pl->nphrases + ATLAS_WORK_ROW_PHRASES - 1) / ATLAS_WORK_ROW_PHRASES
				: 1;
	/* kept to a few pages: at most their entries of each phrase are read a step */
	long step_cost = allowed && (long)nallowed * pl->nphrases < pl->step_cost ? (long)nallowed * pl->nphrases
										  : pl->step_cost;
	for (int pass = all_first || count_all ? 0 : 1; pass < (count_all ? 1 : 2) && found < want; pass++) {
		for (int tier = broad ? TIER_TITLES : TIER_PAGES; tier <= TIER_PAGES && found < want; tier++) {
			/* the work budget: a step after the first only when its postings and a row
			 * still fit; any step only when the caller's stop hook does not end the search */
			if ((m->stop && m->stop(m->stop_ctx)) ||
			    (steps && (pl->work.postings + step_cost > pl->budget.postings ||
				       pl->work.candidates >= pl->budget.candidates))) {
				pl->budget_hit = true;
				pass = 2;
				break;
			}
			steps++;
			pl->work.postings += step_cost;
			nrows = 0;
			pl->any_pass |= pass == 1;
			long cap = (pl->budget.candidates - pl->work.candidates) / row_cost;
			if (cap < 1)
				cap = 1;
			rc = run_match(e, tier == TIER_TITLES ? titled[pass] : passes[pass], pass == 0, tier, source,
				       allowed, cap, &nrows, err);
			pl->work.candidates += nrows * row_cost;
			if (nrows >= cap)
				pl->budget_hit = true;
			if (rc)
				return rc;
			found = count_matching(e, p, m, &counted, found);
			if (tier != TIER_PAGES && found >= want)
				pl->partial = true;
			if (trace)
				strbuf_printf(trace, "retrieval: %s, %s: %d rows, %d pages so far\n",
					      pass == 0 ? "all words" : "any word", tier_names[tier], nrows, found);
		}
	}
	return 0;
}

/* Finds the candidates of plan pl into e (e->touched, e->cand; a new generation), at least want
 * pages that pass the search's filters when there are as many, within pl's work budget (pl->work
 * counted, pl->budget_hit and pl->partial set). With trace, appends a line per step taken to it.
 * Returns 0, or ATLAS_ESQL with err set. */
int retrieve(atlas_engine *e, plan *pl, const atlas_search_params *p, const atlas_search_more *m, int want,
	     strbuf *trace, atlas_error *err)
{
	int rc = retrieve_steps(e, pl, p, m, want, trace, err);
	/* a postings table set up for the search (a walk that did not come, an expression it could
	 * not take) keeps nothing open past it */
	if (e->blockmax)
		blockmax_release(e->blockmax);
	if (e->filter_blocks)
		blockmax_release(e->filter_blocks);
	return rc;
}
