/* test_blockmax.c - top-k retrieval over the postings table with dynamic pruning gives the same
 * first ten pages, with the same BM25F scores to the last bit, as scoring every matching page over
 * the postings held in memory (query/postings.h, itself checked against FTS5's atlas_rank by
 * test_postings): for every word of the judged queries as any-word and all-words queries, with
 * and without a type filter and a per-page prior, and for random queries of the index's own
 * terms (rare and common mixed, some negated); exhaustive runs count the matches exactly, pruned
 * runs estimate them and say so, and a filtered common word decodes fewer blocks than it holds.
 *
 * usage: test_blockmax INDEX [QUERIES.tsv ...] [--random N] */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockmax.h"
#include "check.h"
#include "engine.h"
#include "engine_internal.h"
#include "postings.h"

#define MAXW 8

/* A query: words, each its own group (the first negated when neg). */
typedef struct query {
	char word[MAXW][64];
	int n;
	bool neg;
} query;

typedef struct tok {
	char s[128];
	int n, count;
} tok;

static int one_token(void *ctx, int tflags, const char *t, int n, int start, int end)
{
	tok *x = ctx;
	(void)start;
	(void)end;
	if (!(tflags & FTS5_TOKEN_COLOCATED) && x->count++ == 0 && n < (int)sizeof(x->s)) {
		memcpy(x->s, t, (size_t)n);
		x->n = n;
	}
	return SQLITE_OK;
}

typedef struct row {
	int doc;
	double bm25, score;
} row;

typedef struct sink {
	row *rows;
	int n;
	const double *prior;
	const uint64_t *allowed;
} sink;

static void take_row(void *ctx, sqlite3_int64 rowid, double score)
{
	sink *s = ctx;
	int d = (int)rowid;
	if (s->allowed && !(s->allowed[d / 64] >> (d % 64) & 1))
		return;
	s->rows[s->n++] = (row){ d, score, score * (s->prior ? s->prior[d - 1] : 1.0) };
}

static int cmp_rows(const void *a, const void *b)
{
	const row *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->doc - y->doc;
}

static int cmp_doc(const void *a, const void *b)
{
	return ((const row *)a)->doc - ((const row *)b)->doc;
}

/* The reference rows in page order, checked against the pages a walk gives one by one. */
typedef struct each_ctx {
	const row *rows;
	int n, seen;
	bool same;
} each_ctx;

static void each_row(void *ctx, const blockmax_hit *h)
{
	each_ctx *x = ctx;
	if (x->seen >= x->n || x->rows[x->seen].doc != h->doc || x->rows[x->seen].bm25 != h->bm25)
		x->same = false;
	x->seen++;
}

static atlas_engine *E;
static postings_query *PQ;
static blockmax *BM;
static row *ROWS;
static long RUNS, PRUNED;

/* Runs q both ways with the options given and compares the first ten. */
static void compare(const query *q, bool all, const uint64_t *allowed, const double *prior, double pmax)
{
	atlas_error err = { 0, "" };
	postings_reset(PQ);
	blockmax_reset(BM);
	int added = 0;
	for (int i = 0; i < q->n; i++) {
		tok t = { .count = 0 };
		atlas_analyze(E->analyzer, FTS5_TOKENIZE_QUERY, q->word[i], (int)strlen(q->word[i]), one_token, &t);
		if (t.count != 1)
			continue; /* stop words and words of several tokens: phrases, not covered */
		char alt[140];
		snprintf(alt, sizeof(alt), "\"%s\"", q->word[i]);
		bool neg = q->neg && i == 0 && q->n > 1;
		if (postings_add(PQ, E->analyzer, alt, POSTINGS_ALL_COLUMNS, added, neg))
			return;
		/* the IDF of a page count from the postings (any value would do, the same both ways) */
		double idf = 0.5 + (double)((unsigned char)t.s[0] % 7);
		if (!CHECK(blockmax_add(BM, t.s, t.n, POSTINGS_ALL_COLUMNS, added, neg, idf, &err) == 0, "add: %s", err.msg))
			return;
		E->rec.idf[added] = idf;
		added++;
	}
	if (!added)
		return;
	E->rec.nidf = added;
	E->rec.ninst = 0;
	sink s = { ROWS, 0, prior, allowed };
	postings_run(PQ, &E->rec, all, LONG_MAX, take_row, &s);
	qsort(ROWS, (size_t)s.n, sizeof(row), cmp_rows);
	blockmax_hit hits[10], ex[10];
	blockmax_result res, exr;
	blockmax_args a = { 10, all, false, allowed, prior, pmax, 1.0, NULL, NULL, NULL, 0 };
	char label[600];
	int o = snprintf(label, sizeof(label), "%s%s%s%s:", all ? "all" : "any", allowed ? " filtered" : "",
			 prior ? " prior" : "", q->neg ? " neg" : "");
	for (int i = 0; i < q->n && o < 500; i++)
		o += snprintf(label + o, sizeof(label) - (size_t)o, " %s", q->word[i]);
	if (!CHECK(blockmax_run(BM, &a, hits, &res, &err) == 0, "%s: %s", label, err.msg))
		return;
	a.exhaustive = true;
	blockmax_run(BM, &a, ex, &exr, &err);
	RUNS++;
	PRUNED += !res.total_exact;
	int want = s.n < 10 ? s.n : 10;
	CHECK(res.nhits == want && exr.nhits == want, "%s: %d hits (got %d, exhaustive %d)", label, want, res.nhits,
	      exr.nhits);
	for (int i = 0; i < want && i < res.nhits; i++)
		CHECK(hits[i].doc == ROWS[i].doc && hits[i].bm25 == ROWS[i].bm25 && hits[i].score == ROWS[i].score &&
			      ex[i].doc == ROWS[i].doc,
		      "%s: hit %d is page %d of bm25 %.17g (got %d, %.17g)", label, i, ROWS[i].doc, ROWS[i].bm25,
		      hits[i].doc, hits[i].bm25);
	/* every matching page, in page order, with its score, and no more than max_rows */
	qsort(ROWS, (size_t)s.n, sizeof(row), cmp_doc);
	each_ctx ec = { ROWS, s.n, 0, true };
	a.each = each_row;
	a.ctx = &ec;
	blockmax_run(BM, &a, ex, &exr, &err);
	CHECK(ec.seen == s.n && ec.same, "%s: each page matched given once, in order (%d of %d)", label, ec.seen, s.n);
	if (s.n > 3) {
		ec = (each_ctx){ ROWS, s.n, 0, true };
		a.max_rows = 3;
		blockmax_run(BM, &a, ex, &exr, &err);
		CHECK(ec.seen == 3 && ec.same && !exr.total_exact, "%s: max_rows stops the walk", label);
		a.max_rows = 0;
		blockmax_run(BM, &a, ex, &exr, &err);
	}
	CHECK(exr.total_exact && exr.total == s.n, "%s: exhaustive total %d (got %ld)", label, s.n, exr.total);
	CHECK(!res.total_exact || res.total == s.n, "%s: a total said exact is %d (got %ld)", label, s.n, res.total);
	CHECK(res.total >= res.scored, "%s: an estimate is at least the pages scored", label);
}

/* Reads the words of the first column of a judged queries file. */
static int read_queries(const char *path, query *out, int max)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[4096];
	int n = 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		char *tab = strchr(line, '\t');
		if (tab)
			*tab = '\0';
		query *q = &out[n];
		memset(q, 0, sizeof(*q));
		for (char *w = strtok(line, " \"-+?,.()"); w && q->n < MAXW; w = strtok(NULL, " \"-+?,.()"))
			if (strlen(w) < 60)
				strcpy(q->word[q->n++], w);
		n += q->n > 0;
	}
	fclose(f);
	return n;
}

static unsigned long long rng = 88172645463325252ULL;
static unsigned long long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The index's terms that analyze to themselves, with their page counts, most common first. */
typedef struct term_df {
	char s[64];
	int df;
} term_df;

static int read_terms(term_df *out, int max)
{
	sqlite3_stmt *st = NULL;
	int n = 0;
	sqlite3_prepare_v2(E->db, "SELECT term, df FROM postings ORDER BY df DESC, term", -1, &st, NULL);
	while (n < max && sqlite3_step(st) == SQLITE_ROW) {
		const char *s = (const char *)sqlite3_column_text(st, 0);
		tok t = { .count = 0 };
		int len = (int)strlen(s);
		if (len >= 60)
			continue;
		atlas_analyze(E->analyzer, FTS5_TOKENIZE_QUERY, s, len, one_token, &t);
		if (t.count != 1 || t.n != len || memcmp(t.s, s, (size_t)len))
			continue;
		strcpy(out[n].s, s);
		out[n++].df = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	return n;
}

/* A common word filtered to a few pages reads at most the blocks of those pages, not all of its
 * own. */
static void filtered_blocks(const term_df *common, const uint64_t *allowed, int nallowed)
{
	atlas_error err = { 0, "" };
	blockmax_reset(BM);
	blockmax_add(BM, common->s, (int)strlen(common->s), POSTINGS_ALL_COLUMNS, 0, false, 1.0, &err);
	blockmax_hit hits[10];
	blockmax_result res;
	blockmax_args a = { 10, false, false, allowed, NULL, 1.0, 1.0, NULL, NULL, NULL, 0 };
	blockmax_run(BM, &a, hits, &res, &err);
	int blocks = (common->df + 127) / 128;
	CHECK(res.decoded <= nallowed + 1, "'%s' among %d pages: %ld blocks decoded of %d", common->s, nallowed,
	      res.decoded, blocks);
	printf("filtered '%s' (%d blocks) among %d pages: %ld blocks decoded\n", common->s, blocks, nallowed,
	       res.decoded);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_blockmax INDEX [QUERIES.tsv ...] [--random N]\n");
		return 2;
	}
	atlas_error err = { 0, "" };
	if (atlas_engine_open(&E, argv[1], &err) || atlas_engine_hold_postings(E, &err) || !E->postings) {
		printf("FAIL  cannot open %s with its postings held: %s\n", argv[1], err.msg);
		return 1;
	}
	PQ = E->postings;
	if (blockmax_new(&BM, E->db, E->rec.sizes, E->rec.avg, E->ndocs, &err)) {
		printf("FAIL  %s\n", err.msg);
		return 1;
	}
	int nrandom = 0;
	static query qs[4096];
	int nq = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--random") && i + 1 < argc)
			nrandom = atoi(argv[++i]);
		else
			nq += read_queries(argv[i], qs + nq, 4096 - nq);
	}
	ROWS = malloc(((size_t)E->ndocs + 1) * sizeof(row));
	uint64_t *explainers = calloc((size_t)E->ndocs / 64 + 1, sizeof(uint64_t));
	uint64_t *guides = calloc((size_t)E->ndocs / 64 + 1, sizeof(uint64_t));
	double *prior = malloc((size_t)E->ndocs * sizeof(double));
	int nguides = 0;
	for (int d = 1; d <= E->ndocs; d++) {
		if (E->docs[d - 1].type_id == ATLAS_TYPE_EXPLAINER)
			explainers[d / 64] |= 1ULL << (d % 64);
		if (E->docs[d - 1].type_id == ATLAS_TYPE_GUIDE && nguides < 5) {
			guides[d / 64] |= 1ULL << (d % 64);
			nguides++;
		}
		prior[d - 1] = 0.5 + (double)(next_rand() % 1000) / 1000.0;
	}
	for (int i = 0; i < nq; i++)
		for (int all = 0; all < 2; all++) {
			compare(&qs[i], all, NULL, NULL, 1.0);
			compare(&qs[i], all, explainers, NULL, 1.0);
			compare(&qs[i], all, NULL, prior, 1.5);
			qs[i].neg = true;
			compare(&qs[i], all, NULL, NULL, 1.0);
			qs[i].neg = false;
		}
	static term_df terms[200000];
	int nterms = read_terms(terms, 200000);
	for (int r = 0; r < nrandom && nterms > 10; r++) {
		query q = { .n = 1 + (int)(next_rand() % 4), .neg = next_rand() % 5 == 0 };
		for (int i = 0; i < q.n; i++) {
			int top = nterms < 300 ? nterms : 300;
			const term_df *t = next_rand() % 2 ? &terms[next_rand() % (unsigned long long)top]
							   : &terms[next_rand() % (unsigned long long)nterms];
			strcpy(q.word[i], t->s);
		}
		bool all = next_rand() % 2;
		int v = (int)(next_rand() % 3);
		compare(&q, all, v == 1 ? explainers : NULL, v == 2 ? prior : NULL, 1.5);
	}
	if (nterms && nguides)
		filtered_blocks(&terms[0], guides, nguides);
	printf("%ld runs, %ld pruned\n", RUNS, PRUNED);
	CHECK(RUNS > 100 && PRUNED > 0, "queries were run (%ld) and some pruned (%ld)", RUNS, PRUNED);
	blockmax_free(BM);
	atlas_engine_free(E);
	free(ROWS);
	free(explainers);
	free(guides);
	free(prior);
	return check_done("blockmax");
}
