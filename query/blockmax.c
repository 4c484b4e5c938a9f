/* blockmax.c - block-max WAND and block-skipping conjunctions over the postings table, BM25F as
 * atlas_rank scores it. */
#include "blockmax.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "blockpost.h"
#include "rank.h"

#define END INT_MAX
/* Bounds are sums of rounded products: widened by this much so that rounding never prunes a page
 * that would have been kept */
#define BOUND_MARGIN (1.0 + 1e-9)

typedef struct cursor {
	unsigned char *blob; /* owned */
	blockpost bp;
	int blk;     /* the decoded block, -1 before the first */
	int sblk;    /* the block a bound was last asked of (never behind blk) */
	int n, pos;  /* pages of the decoded block, the current one */
	int doc;     /* the current page, END past the last */
	double idf, ub; /* ub: the phrase's largest contribution */
	unsigned colmask;
	int group;
	bool negated;
	int docs[BLOCKPOST_DOCS];
	int tf[BLOCKPOST_DOCS * FTS_NCOLS];
	unsigned char cols[BLOCKPOST_DOCS];
} cursor;

struct blockmax {
	sqlite3 *db;
	sqlite3_stmt *st;      /* a term's row of postings */
	sqlite3_blob *spill;   /* a row of postings_spill, open from a search's first add to its walk, or NULL */
	const int *sizes;
	const double *avg;
	int ndocs;
	cursor *c[FTS_MAX_PHRASES];
	int n;
	int word_from, complete_from, complete_to; /* blockmax_set_typed */
	bool failed; /* a malformed block was met */
	long decoded;
};

/* BM25F's contribution of a phrase of frequency t, as rank_row_phrase_end adds it. */
static double contribution(double idf, double t)
{
	return idf * t * (RANK_BM25_K1 + 1.0) / (t + RANK_BM25_K1);
}

int blockmax_new(blockmax **out, sqlite3 *db, const int *sizes, const double *avg, int ndocs,
		 atlas_error *err)
{
	*out = NULL;
	blockmax *q = calloc(1, sizeof(*q));
	if (!q)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	q->db = db;
	q->sizes = sizes;
	q->avg = avg;
	q->ndocs = ndocs;
	if (sqlite3_prepare_v3(db, "SELECT blocks, spill FROM postings WHERE term = ?1", -1,
			       SQLITE_PREPARE_PERSISTENT, &q->st, NULL) != SQLITE_OK) {
		int rc = atlas_error_set(err, ATLAS_ESQL, "cannot read the postings: %s", sqlite3_errmsg(db));
		free(q);
		return rc;
	}
	*out = q;
	return 0;
}

void blockmax_reset(blockmax *q)
{
	for (int i = 0; i < q->n; i++) {
		blockpost_free(&q->c[i]->bp);
		free(q->c[i]->blob);
		q->c[i]->blob = NULL;
	}
	q->n = 0;
	q->word_from = q->complete_from = q->complete_to = 0;
	q->failed = false;
	q->decoded = 0;
	/* an open blob holds a read transaction: none is kept between searches */
	sqlite3_blob_close(q->spill);
	q->spill = NULL;
}

void blockmax_release(blockmax *q)
{
	sqlite3_blob_close(q->spill);
	q->spill = NULL;
}

void blockmax_set_typed(blockmax *q, int word_from, int complete_from, int complete_to)
{
	q->word_from = word_from;
	q->complete_from = complete_from;
	q->complete_to = complete_to;
}

void blockmax_free(blockmax *q)
{
	if (!q)
		return;
	blockmax_reset(q);
	for (int i = 0; i < FTS_MAX_PHRASES; i++)
		free(q->c[i]);
	sqlite3_finalize(q->st);
	free(q);
}

int blockmax_add(blockmax *q, const char *term, int n, unsigned colmask, int group, bool negated,
		 double idf, atlas_error *err)
{
	if (q->n == FTS_MAX_PHRASES || group < 0 || group > 63)
		return atlas_error_set(err, ATLAS_EINVAL, "more than %d phrases or a group past 63",
				       FTS_MAX_PHRASES);
	if (!q->c[q->n] && !(q->c[q->n] = malloc(sizeof(cursor))))
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	cursor *c = q->c[q->n];
	memset(&c->bp, 0, sizeof(c->bp));
	c->blob = NULL;
	c->blk = c->sblk = -1;
	c->n = c->pos = 0;
	c->doc = END;
	c->idf = idf;
	c->ub = 0;
	c->colmask = colmask;
	c->group = group;
	c->negated = negated;
	sqlite3_bind_text(q->st, 1, term, n, SQLITE_STATIC);
	int step = sqlite3_step(q->st), rc = 0;
	if (step == SQLITE_ROW) {
		sqlite3_int64 spill = sqlite3_column_int64(q->st, 1);
		int len = spill ? 0 : sqlite3_column_bytes(q->st, 0);
		if (spill) {
			/* read straight from the row's pages into the cursor's buffer */
			int brc = q->spill ? sqlite3_blob_reopen(q->spill, spill)
					   : sqlite3_blob_open(q->db, "main", "postings_spill", "blocks", spill, 0,
							       &q->spill);
			if (brc != SQLITE_OK)
				rc = atlas_error_set(err, ATLAS_ESQL, "cannot read the postings of '%.*s': %s", n, term,
						     sqlite3_errmsg(q->db));
			else
				len = sqlite3_blob_bytes(q->spill);
		}
		c->blob = rc ? NULL : malloc(len > 0 ? (size_t)len : 1);
		if (!rc && !c->blob)
			rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		else if (!rc && spill && sqlite3_blob_read(q->spill, c->blob, len, 0) != SQLITE_OK)
			rc = atlas_error_set(err, ATLAS_ESQL, "cannot read the postings of '%.*s': %s", n, term,
					     sqlite3_errmsg(q->db));
		else if (!rc && !spill)
			memcpy(c->blob, sqlite3_column_blob(q->st, 0), (size_t)len);
		if (!rc && (rc = blockpost_open(&c->bp, c->blob, len)))
			rc = atlas_error_set(err, rc, "the postings of '%.*s' are malformed", n, term);
		if (rc && q->spill) {
			sqlite3_blob_close(q->spill); /* a failed reopen leaves it aborted */
			q->spill = NULL;
		}
	} else if (step != SQLITE_DONE)
		rc = atlas_error_set(err, ATLAS_ESQL, "cannot read the postings: %s", sqlite3_errmsg(q->db));
	sqlite3_reset(q->st);
	sqlite3_clear_bindings(q->st);
	if (rc) {
		free(c->blob);
		c->blob = NULL;
		return rc;
	}
	float tmax = 0;
	for (int k = 0; k < c->bp.nblocks; k++)
		if (c->bp.tmax[k] > tmax)
			tmax = c->bp.tmax[k];
	c->ub = contribution(idf, tmax);
	c->doc = c->bp.nblocks ? 0 : END;
	q->n++;
	return 0;
}

/**************************************************************************************************
** Cursors.
*/

/* Moves c to its first page at or after d (END when none), decoding only the block holding it. */
static void seek(blockmax *q, cursor *c, int d)
{
	if (c->doc >= d)
		return;
	int b = c->blk < 0 ? 0 : c->blk;
	while (b < c->bp.nblocks && c->bp.last[b] < d)
		b++;
	if (b == c->bp.nblocks) {
		c->doc = END;
		return;
	}
	if (b != c->blk) {
		c->n = blockpost_block(&c->bp, b, c->docs, c->tf, c->cols);
		q->decoded++;
		if (c->n <= 0) {
			q->failed = true;
			c->doc = END;
			return;
		}
		c->blk = b;
		c->pos = 0;
		if (c->sblk < b)
			c->sblk = b;
	}
	while (c->docs[c->pos] < d)
		c->pos++;
	c->doc = c->docs[c->pos];
}

/* The largest contribution c may give a page at or after d within the block holding d, and that
 * block's last page in *last (0 and END past the last block). Reads the block table only. */
static double block_bound(cursor *c, int d, int *last)
{
	int b = c->sblk < 0 ? 0 : c->sblk;
	while (b < c->bp.nblocks && c->bp.last[b] < d)
		b++;
	c->sblk = b;
	if (b == c->bp.nblocks) {
		*last = END;
		return 0;
	}
	*last = c->bp.last[b];
	return contribution(c->idf, c->bp.tmax[b]);
}

/* The matches of the current page of c in column col, within its columns. */
static int tf_at(const cursor *c, int col)
{
	return c->colmask >> col & 1 ? c->tf[c->pos * FTS_NCOLS + col] : 0;
}

/* The first allowed page at or after d, or END. */
static int next_allowed(const uint64_t *allowed, int ndocs, int d)
{
	if (!allowed)
		return d <= ndocs ? d : END;
	int nwords = ndocs / 64 + 1;
	int w = d / 64;
	if (w >= nwords)
		return END;
	uint64_t x = allowed[w] & (~0ULL << (d % 64));
	while (!x) {
		if (++w >= nwords)
			return END;
		x = allowed[w];
	}
	int r = w * 64 + __builtin_ctzll(x);
	return r <= ndocs ? r : END;
}

/**************************************************************************************************
** Scoring and the best k.
*/

/* Scores page d from the cursors standing on it into h (bm25 and masks). Returns whether it
 * matches: a phrase of every positive group (all) or of any, within their columns, and of no
 * negated group. */
static bool score_page(blockmax *q, int d, uint64_t positive, bool all, blockmax_hit *h)
{
	const int *len = q->sizes + (size_t)(d - 1) * FTS_NCOLS;
	uint64_t groups = 0;
	bool word_matched = false; /* the word being typed itself, before its completions */
	*h = (blockmax_hit){ .doc = d };
	for (int i = 0; i < q->n; i++) {
		cursor *c = q->c[i];
		if (c->negated) {
			seek(q, c, d);
			for (int col = 0; c->doc == d && col < FTS_NCOLS; col++)
				if (tf_at(c, col))
					return false;
			continue;
		}
		if (c->doc != d)
			continue;
		int tf[FTS_NCOLS];
		bool any = false;
		for (int col = 0; col < FTS_NCOLS; col++)
			any |= (tf[col] = tf_at(c, col)) != 0;
		if (!any)
			continue;
		if (i >= q->word_from && i < q->complete_from)
			word_matched = true;
		if (!(word_matched && i >= q->complete_from && i < q->complete_to))
			h->bm25 += contribution(c->idf, rank_bm25f_tf(tf, len, q->avg));
		groups |= 1ULL << c->group;
		if (i < 63) {
			h->phrases |= 1ULL << i;
			if (tf[FTS_TITLE])
				h->title |= 1ULL << i;
			if (tf[FTS_KEYWORDS])
				h->keywords |= 1ULL << i;
			if (tf[FTS_HEADINGS])
				h->headings |= 1ULL << i;
			if (tf[FTS_DEFS])
				h->defs |= 1ULL << i;
		}
	}
	return all ? groups == positive : groups != 0;
}

/* The best k so far: a heap with the worst at the root. */
typedef struct best {
	blockmax_hit *h;
	int n, k;
} best;

/* Whether a ranks below b: a lower score, or the same and a later page. */
static bool worse(const blockmax_hit *a, const blockmax_hit *b)
{
	return a->score < b->score || (a->score == b->score && a->doc > b->doc);
}

static void sift_down(best *b, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < b->n && worse(&b->h[l], &b->h[m]))
			m = l;
		if (r < b->n && worse(&b->h[r], &b->h[m]))
			m = r;
		if (m == i)
			return;
		blockmax_hit t = b->h[i];
		b->h[i] = b->h[m];
		b->h[m] = t;
		i = m;
	}
}

/* Offers h to the best k. */
static void offer(best *b, const blockmax_hit *h)
{
	if (b->n < b->k) {
		int i = b->n++;
		b->h[i] = *h;
		while (i && worse(&b->h[i], &b->h[(i - 1) / 2])) {
			blockmax_hit t = b->h[i];
			b->h[i] = b->h[(i - 1) / 2];
			b->h[(i - 1) / 2] = t;
			i = (i - 1) / 2;
		}
	} else if (b->k && worse(&b->h[0], h)) {
		b->h[0] = *h;
		sift_down(b, 0);
	}
}

/* The score a page must pass to enter the best k (pages of a bound at or below it cannot: they
 * come later than every page kept, so they lose ties too). */
static double threshold(const best *b, const blockmax_args *a)
{
	return a->exhaustive || b->n < b->k ? -1.0 : b->h[0].score;
}

/* One walk of the pages: the state both passes share. */
typedef struct walk {
	blockmax *q;
	const blockmax_args *a;
	best b;
	uint64_t positive;
	long matched;
	bool pruned;
} walk;

/* Scores page d and offers it. */
static void take(walk *w, int d)
{
	blockmax_hit h;
	if (!score_page(w->q, d, w->positive, w->a->all_groups, &h))
		return;
	double prior = w->a->prior ? w->a->prior[d - 1] : 1.0;
	h.score = w->a->fn ? w->a->fn(w->a->ctx, &h) : h.bm25 * prior;
	w->matched++;
	offer(&w->b, &h);
	if (w->a->each)
		w->a->each(w->a->ctx, &h);
}

/* Whether the walk has taken the rows it may. */
static bool full(const walk *w)
{
	return w->a->max_rows > 0 && w->matched >= w->a->max_rows;
}

/* The bound of a page of bound sum bm over the best k (its prior pr, or the largest). */
static bool below(const walk *w, double bm, double pr)
{
	return !w->a->exhaustive && bm * pr * w->a->slack * BOUND_MARGIN <= threshold(&w->b, w->a);
}

/**************************************************************************************************
** The walks.
*/

/* Sorts the cursors a[0..n) by page (few, and mostly in order: by insertion); returns how many
 * are not past their last page. */
static int sort_cursors(cursor **a, int n)
{
	for (int i = 1; i < n; i++) {
		cursor *c = a[i];
		int j = i;
		while (j && a[j - 1]->doc > c->doc) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = c;
	}
	while (n && a[n - 1]->doc == END)
		n--;
	return n;
}

/* The pages holding any positive phrase: block-max WAND. The cursors are ordered by page; the
 * pivot is the first page where the phrases' largest contributions could pass the best k; the
 * blocks holding it are then asked for their own maxima, and skipped whole when those cannot. */
static void any_walk(walk *w)
{
	blockmax *q = w->q;
	const blockmax_args *a = w->a;
	cursor *act[FTS_MAX_PHRASES];
	int na = 0;
	for (int i = 0; i < q->n; i++)
		if (!q->c[i]->negated) {
			seek(q, q->c[i], 1);
			act[na++] = q->c[i];
		}
	while (!full(w) && (na = sort_cursors(act, na)) > 0) {
		double acc = 0;
		int p = -1;
		for (int i = 0; i < na && p < 0; i++)
			if (!below(w, acc += act[i]->ub, a->prior_max))
				p = i;
		if (p < 0) {
			w->pruned = true;
			break;
		}
		int d = act[p]->doc;
		while (p + 1 < na && act[p + 1]->doc == d)
			p++;
		int nd = next_allowed(a->allowed, q->ndocs, d);
		if (nd != d) {
			/* pages before the pivot are skipped too, as below */
			w->pruned |= act[0]->doc < d;
			for (int i = 0; i <= p; i++)
				seek(q, act[i], nd);
			continue;
		}
		double bs = 0;
		if (!a->exhaustive) {
			int minlast = END, l;
			for (int i = 0; i <= p; i++) {
				bs += block_bound(act[i], d, &l);
				minlast = l < minlast ? l : minlast;
			}
			if (below(w, bs, a->prior_max)) {
				int target = minlast == END ? END : minlast + 1;
				if (p + 1 < na && act[p + 1]->doc < target)
					target = act[p + 1]->doc;
				for (int i = 0; i <= p; i++)
					seek(q, act[i], target);
				w->pruned = true;
				continue;
			}
		}
		if (act[0]->doc == d) {
			if (!a->exhaustive && below(w, bs, a->prior ? a->prior[d - 1] : 1.0))
				w->pruned = true;
			else
				take(w, d);
			for (int i = 0; i <= p; i++)
				seek(q, act[i], d + 1);
		} else {
			/* the pages before the pivot hold too few phrases to pass */
			for (int i = 0; i < p; i++)
				seek(q, act[i], d);
			w->pruned = true;
		}
	}
}

/* The pages holding a phrase of every positive group: each group's cursors brought to the
 * latest of the groups' next pages, the blocks there skipped whole when their maxima together
 * cannot pass the best k. */
static void all_walk(walk *w)
{
	blockmax *q = w->q;
	const blockmax_args *a = w->a;
	int gmin[64];
	for (int d = 1; !full(w);) {
		if ((d = next_allowed(a->allowed, q->ndocs, d)) == END)
			break;
		double bs = 0;
		if (!a->exhaustive) {
			int minlast = END, l;
			for (int i = 0; i < q->n; i++)
				if (!q->c[i]->negated) {
					bs += block_bound(q->c[i], d, &l);
					minlast = l < minlast ? l : minlast;
				}
			if (below(w, bs, a->prior_max)) {
				w->pruned = true;
				if (minlast == END)
					break;
				d = minlast + 1;
				continue;
			}
		}
		for (int g = 0; g < 64; g++)
			gmin[g] = END;
		for (int i = 0; i < q->n; i++) {
			cursor *c = q->c[i];
			if (c->negated)
				continue;
			seek(q, c, d);
			if (c->doc < gmin[c->group])
				gmin[c->group] = c->doc;
		}
		int dmax = d;
		for (int g = 0; g < 64; g++)
			if (w->positive >> g & 1 && gmin[g] > dmax)
				dmax = gmin[g];
		if (dmax == END)
			break;
		if (dmax > d) {
			d = dmax;
			continue;
		}
		if (!a->exhaustive && below(w, bs, a->prior ? a->prior[d - 1] : 1.0))
			w->pruned = true;
		else
			take(w, d);
		d++;
	}
}

/* The pages a run would match, estimated from the groups' page counts as if independent. */
static long estimate(const walk *w)
{
	const blockmax *q = w->q;
	double n = q->ndocs;
	if (w->a->allowed) {
		n = 0;
		for (int i = 0; i <= q->ndocs / 64; i++)
			n += __builtin_popcountll(w->a->allowed[i]);
	}
	double share = w->a->all_groups ? 1.0 : 0.0;
	for (int g = 0; g < 64; g++) {
		if (!(w->positive >> g & 1))
			continue;
		double df = 0;
		for (int i = 0; i < q->n; i++)
			if (!q->c[i]->negated && q->c[i]->group == g)
				df += q->c[i]->bp.ndocs;
		double f = df < q->ndocs ? df / q->ndocs : 1.0;
		share = w->a->all_groups ? share * f : 1.0 - (1.0 - share) * (1.0 - f);
	}
	long e = (long)(n * share + 0.5);
	return e > w->matched ? e : w->matched;
}

static int cmp_hits(const void *x, const void *y)
{
	const blockmax_hit *a = x, *b = y;
	return worse(a, b) ? 1 : worse(b, a) ? -1 : 0;
}

int blockmax_run(blockmax *q, const blockmax_args *a, blockmax_hit *hits, blockmax_result *res,
		 atlas_error *err)
{
	walk w = { q, a, { hits, 0, a->k > 0 ? a->k : 0 }, 0, 0, false };
	memset(res, 0, sizeof(*res));
	q->decoded = 0;
	for (int i = 0; i < q->n; i++) {
		cursor *c = q->c[i];
		c->blk = c->sblk = -1;
		c->doc = c->bp.nblocks ? 0 : END;
		if (!c->negated)
			w.positive |= 1ULL << c->group;
	}
	if (w.positive) {
		if (a->all_groups)
			all_walk(&w);
		else
			any_walk(&w);
	}
	if (full(&w))
		w.pruned = true; /* stopped at max_rows */
	qsort(hits, (size_t)w.b.n, sizeof(*hits), cmp_hits);
	res->nhits = w.b.n;
	res->total_exact = !w.pruned;
	res->total = w.pruned ? estimate(&w) : w.matched;
	res->scored = w.matched;
	res->decoded = q->decoded;
	/* the cursors hold their blocks: the spill row's handle, and the read transaction it keeps,
	 * are not kept past the walk (an engine may go on to other searches without the table) */
	blockmax_release(q);
	if (q->failed)
		return atlas_error_set(err, ATLAS_EINVAL, "the postings table holds a malformed block");
	return 0;
}
