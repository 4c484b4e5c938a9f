/* postings.c - the full-text index of a small index held in memory, and MATCH expressions of
 * alternatives, groups and negated groups evaluated over it as FTS5 evaluates them. */
#include "postings.h"
#include "error.h"
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A position: the row in the top 32 bits, the column in the next 8, the token offset in the low
 * 24, so that the keys of one row and column sort by offset and the next token of a phrase is
 * key + 1. */
#define KEY(doc, col, off) (((uint64_t)(doc) << 32) | ((uint64_t)(col) << 24) | (uint64_t)(off))
#define KEY_DOC(k) ((int)((k) >> 32))
#define KEY_COL(k) ((int)(((k) >> 24) & 0xff))
#define KEY_OFF(k) ((int)((k)&0xffffff))
/* Offsets held at most: a phrase's later tokens must not carry into the column bits */
#define OFFSET_MAX ((1 << 24) - 256)
/* Tokens of a phrase evaluated at most */
#define PHRASE_TOKENS_MAX 16
/* Groups of an expression */
#define GROUPS_MAX 32

/* A set of positions: a run of the postings' keys (a term's own) or of the query's scratch. */
typedef struct keyset {
	bool scratch;
	size_t off, n;
} keyset;

typedef struct phrase {
	keyset matches; /* where the phrase starts */
	unsigned colmask;
	int group;
	bool negated;
	int size;      /* tokens */
	size_t cursor; /* the next match not yet given to a row */
} phrase;

struct atlas_postings {
	int ndocs;
	int nterms;
	char **term; /* sorted as FTS5 sorts them (bytes), each NUL-terminated, in term_buf */
	int *term_len;
	size_t *start; /* term t's keys: keys[start[t] .. start[t + 1]) */
	uint64_t *keys;
	char *term_buf;
};

struct postings_query {
	const atlas_postings *p;
	phrase ph[FTS_MAX_PHRASES];
	int nphrases;
	unsigned long long positive; /* groups with a positive phrase */
	bool failed; /* a phrase could not be added: the expression is not evaluated */
	uint64_t *scratch;
	size_t nscratch, cap;
	/* per row: the groups matched, valid for rows whose gen is the current one */
	unsigned long long *docmask;
	unsigned *docgen;
	unsigned char *docneg;
	unsigned gen;
};

/**************************************************************************************************
** Loading.
*/

void postings_free(atlas_postings *p)
{
	if (!p)
		return;
	free(p->term);
	free(p->term_len);
	free(p->start);
	free(p->keys);
	free(p->term_buf);
	free(p);
}

/* The fts column named name, or -1 when none is (NULL included): a lookup, not an error code. */
static int column_of(const unsigned char *name)
{
	static const char *const names[FTS_NCOLS] = {"title", "keywords", "headings", "description",
						     "body", "defs"};
	for (int c = 0; name && c < FTS_NCOLS; c++)
		if (strcmp((const char *)name, names[c]) == 0)
			return c;
	return -1;
}

/* Grows a malloc'd array to hold at least n elements of sz bytes; returns 0 or ATLAS_ENOMEM. */
static int reserve(void **a, size_t *cap, size_t n, size_t sz)
{
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 1024;
	while (c < n)
		c *= 2;
	if (atlas_resize(a, c, sz))
		return ATLAS_ENOMEM;
	*cap = c;
	return 0;
}

/* Counts the positions first (fts5vocab 'row' totals), so that an index too large is not read:
 * *n positions of *nterms terms. Returns 0, or ATLAS_ESQL (the caller writes the message, from
 * sqlite3_errmsg). */
static int count_positions(sqlite3 *db, sqlite3_int64 *n, int *nterms)
{
	sqlite3_stmt *st = NULL;
	*n = 0;
	*nterms = 0;
	if (sqlite3_prepare_v2(db, "SELECT count(*), total(cnt) FROM temp.atlas_postings_row", -1,
			       &st, NULL) != SQLITE_OK)
		return ATLAS_ESQL;
	int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : ATLAS_ESQL;
	if (!rc) {
		*nterms = sqlite3_column_int(st, 0);
		*n = (sqlite3_int64)sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	return rc;
}

int postings_load(atlas_postings **out, sqlite3 *db, int ndocs, atlas_error *err)
{
	*out = NULL;
	int rc = 0;
	sqlite3_stmt *st = NULL;
	size_t buf_cap = 0, nbuf = 0, nkeys = 0;
	size_t *term_at = NULL; /* where each term starts in term_buf, which moves as it grows */
	sqlite3_int64 total = 0;
	int nterms = 0;
	atlas_postings *p = calloc(1, sizeof(*p));
	if (!p)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory holding the postings");
	p->ndocs = ndocs;
	if (sqlite3_exec(
		db,
		"CREATE VIRTUAL TABLE temp.atlas_postings_row USING fts5vocab(main, fts, row);"
		"CREATE VIRTUAL TABLE temp.atlas_postings USING fts5vocab(main, fts, instance)",
		NULL, NULL, NULL) != SQLITE_OK) {
		rc = atlas_error_set(err, ATLAS_ESQL, "cannot read the full-text index: %s",
				     sqlite3_errmsg(db));
		goto drop_tables;
	}
	if (count_positions(db, &total, &nterms)) {
		rc = atlas_error_set(err, ATLAS_ESQL, "cannot count the full-text index: %s",
				     sqlite3_errmsg(db));
		goto drop_tables;
	}
	if (total > POSTINGS_MAX || ndocs < 1)
		goto drop_tables; /* too large to hold: not an error */
	p->keys = malloc(((size_t)total + 1) * sizeof(*p->keys));
	p->term = malloc(((size_t)nterms + 1) * sizeof(*p->term));
	p->term_len = malloc(((size_t)nterms + 1) * sizeof(*p->term_len));
	p->start = malloc(((size_t)nterms + 2) * sizeof(*p->start));
	term_at = malloc(((size_t)nterms + 1) * sizeof(*term_at));
	if (!term_at || !p->keys || !p->term || !p->term_len || !p->start) {
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory holding the postings");
		goto drop_tables;
	}
	if (sqlite3_prepare_v2(db, "SELECT term, doc, col, offset FROM temp.atlas_postings", -1,
			       &st, NULL) != SQLITE_OK) {
		rc = atlas_error_set(err, ATLAS_ESQL, "cannot read the full-text index: %s",
				     sqlite3_errmsg(db));
		goto drop_tables;
	}
	int step = SQLITE_DONE;
	bool usable = true;
	while (usable && (step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *term = (const char *)sqlite3_column_text(st, 0);
		int len = sqlite3_column_bytes(st, 0);
		sqlite3_int64 doc = sqlite3_column_int64(st, 1);
		int col = column_of(sqlite3_column_text(st, 2));
		sqlite3_int64 off = sqlite3_column_int64(st, 3);
		if (!term || doc < 1 || doc > ndocs || col < 0 || off < 0 || off > OFFSET_MAX ||
		    nkeys >= (size_t)total) {
			usable = false;
			break;
		}
		if (!p->nterms || len != p->term_len[p->nterms - 1] ||
		    memcmp(term, p->term_buf + term_at[p->nterms - 1], (size_t)len)) {
			if (p->nterms >= nterms) {
				usable = false;
				break;
			}
			if (reserve((void **)&p->term_buf, &buf_cap, nbuf + (size_t)len + 1, 1)) {
				rc = atlas_error_set(err, ATLAS_ENOMEM,
						     "out of memory holding the postings");
				goto finalize;
			}
			memcpy(p->term_buf + nbuf, term, (size_t)len);
			p->term_buf[nbuf + (size_t)len] = '\0';
			term_at[p->nterms] = nbuf;
			p->term_len[p->nterms] = len;
			p->start[p->nterms] = nkeys;
			p->nterms++;
			nbuf += (size_t)len + 1;
		}
		p->keys[nkeys++] = KEY(doc, col, off);
	}
	if (usable && step != SQLITE_DONE) {
		rc = atlas_error_set(err, ATLAS_ESQL, "cannot read the full-text index: %s",
				     sqlite3_errmsg(db));
		goto finalize;
	}
	if (!usable)
		goto finalize;
	p->start[p->nterms] = nkeys;
	for (int t = 0; t < p->nterms; t++)
		p->term[t] = p->term_buf + term_at[t];
	/* FTS5 gives terms in byte order and each term's positions in key order; checked, not
	 * assumed */
	for (int t = 0; usable && t < p->nterms; t++) {
		if (t && strcmp(p->term[t - 1], p->term[t]) >= 0)
			usable = false;
		for (size_t k = p->start[t] + 1; usable && k < p->start[t + 1]; k++)
			if (p->keys[k - 1] >= p->keys[k])
				usable = false;
	}
	if (usable) {
		*out = p;
		p = NULL;
	}
finalize:
	sqlite3_finalize(st);
drop_tables:
	sqlite3_exec(db,
		     "DROP TABLE IF EXISTS temp.atlas_postings; DROP TABLE IF EXISTS "
		     "temp.atlas_postings_row",
		     NULL, NULL, NULL);
	free(term_at);
	postings_free(p);
	return rc;
}

/**************************************************************************************************
** Phrases.
*/

static const uint64_t *keyset_at(const postings_query *q, keyset s)
{
	return (s.scratch ? q->scratch : q->p->keys) + s.off;
}

/* The first term not before s[0..n) in byte order (nterms when none). */
static int term_from(const postings_query *q, const char *s, int n)
{
	int lo = 0, hi = q->p->nterms;
	while (lo < hi) {
		int mid = (lo + hi) / 2, m = q->p->term_len[mid];
		int c = memcmp(q->p->term[mid], s, (size_t)(m < n ? m : n));
		if (c < 0 || (c == 0 && m < n))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Appends n keys to the scratch; returns their offset there, or (size_t)-1 out of memory. */
static size_t scratch_take(postings_query *q, size_t n)
{
	if (reserve((void **)&q->scratch, &q->cap, q->nscratch + n, sizeof(*q->scratch)))
		return (size_t)-1;
	size_t at = q->nscratch;
	q->nscratch += n;
	return at;
}

/* The positions of token tok[0..n): its term's own, or for a prefix those of every term starting
 * with it, merged. Returns 0, or ATLAS_ENOMEM when out of memory. */
static int token_positions(postings_query *q, keyset *out, const char *tok, int n, bool prefix)
{
	int t = term_from(q, tok, n);
	int end = t;
	if (!prefix)
		end = t < q->p->nterms && q->p->term_len[t] == n &&
			      memcmp(q->p->term[t], tok, (size_t)n) == 0
			  ? t + 1
			  : t;
	else
		while (end < q->p->nterms && q->p->term_len[end] >= n &&
		       memcmp(q->p->term[end], tok, (size_t)n) == 0)
			end++;
	if (end - t <= 1) {
		*out = (keyset){false, end > t ? q->p->start[t] : 0,
				end > t ? q->p->start[t + 1] - q->p->start[t] : 0};
		return 0;
	}
	/* each term's keys are sorted: merged in passes of pairs of runs, each pass's runs twice
	 * as many terms as the last's, between the two halves of a scratch of twice their number */
	const size_t *start = q->p->start + t, n_all = start[end - t] - start[0];
	int runs = end - t;
	size_t at = scratch_take(q, 2 * n_all);
	if (at == (size_t)-1)
		return ATLAS_ENOMEM;
	uint64_t *from = q->scratch + at, *to = from + n_all;
	memcpy(from, q->p->keys + start[0], n_all * sizeof(*from));
	for (int width = 1; width < runs; width *= 2) {
		for (int r = 0; r < runs; r += 2 * width) {
			size_t i = start[r] - start[0];
			size_t mid = start[r + width < runs ? r + width : runs] - start[0];
			size_t stop = start[r + 2 * width < runs ? r + 2 * width : runs] - start[0];
			size_t j = mid, o = i;
			while (i < mid && j < stop)
				to[o++] = from[i] <= from[j] ? from[i++] : from[j++];
			while (i < mid)
				to[o++] = from[i++];
			while (j < stop)
				to[o++] = from[j++];
		}
		uint64_t *swap = from;
		from = to;
		to = swap;
	}
	/* a colocated form (an option's "--word" beside "word") may share a position */
	size_t m = 0;
	for (size_t i = 0; i < n_all; i++)
		if (!m || from[m - 1] != from[i])
			from[m++] = from[i];
	size_t off = (size_t)(from - q->scratch);
	q->nscratch = off + m;
	*out = (keyset){true, off, m};
	return 0;
}

/* Moves *cur forward over the keys k[*cur..n) below key, galloping (steps doubling, then halving
 * back): cheap when the keys sought are far apart in a long list. Returns whether k[*cur] is key. */
static bool seek_key(const uint64_t *k, size_t n, size_t *cur, uint64_t key)
{
	size_t lo = *cur, step = 1;
	if (lo >= n || k[lo] >= key)
		return lo < n && k[lo] == key;
	/* k[lo] < key: find hi with k[hi] >= key (or n) */
	size_t hi = lo + 1;
	while (hi < n && k[hi] < key) {
		lo = hi;
		step *= 2;
		hi = lo + step;
	}
	if (hi > n)
		hi = n;
	/* k[lo] < key, and k[hi] >= key or hi == n: the first not below key in (lo, hi] */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (k[mid] < key)
			lo = mid;
		else
			hi = mid;
	}
	*cur = hi;
	return hi < n && k[hi] == key;
}

typedef struct phrase_tokens {
	char *text; /* the tokens, each NUL-terminated, one after another */
	size_t len, cap;
	int off[PHRASE_TOKENS_MAX], n[PHRASE_TOKENS_MAX];
	int ntok;
	bool bad; /* a colocated token, or too many */
} phrase_tokens;

static int phrase_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	phrase_tokens *x = ctx;
	(void)start;
	(void)end;
	if ((tflags & FTS5_TOKEN_COLOCATED) || x->ntok == PHRASE_TOKENS_MAX || n <= 0) {
		x->bad = true;
		return SQLITE_OK;
	}
	if (reserve((void **)&x->text, &x->cap, x->len + (size_t)n + 1, 1)) {
		x->bad = true;
		return SQLITE_NOMEM;
	}
	memcpy(x->text + x->len, tok, (size_t)n);
	x->text[x->len + (size_t)n] = '\0';
	x->off[x->ntok] = (int)x->len;
	x->n[x->ntok++] = n;
	x->len += (size_t)n + 1;
	return SQLITE_OK;
}

/* Unquotes an FTS5 string: the text between the quotes with doubled quotes made single, and
 * whether a '*' follows. Returns a malloc'd string, or NULL when alt is not one quoted string. */
static char *unquote(const char *alt, size_t *n, bool *prefix)
{
	size_t len = strlen(alt);
	if (len < 2 || alt[0] != '"')
		return NULL;
	char *s = malloc(len);
	if (!s)
		return NULL;
	size_t o = 0, i = 1;
	for (; i < len; i++) {
		if (alt[i] == '"') {
			if (alt[i + 1] == '"') {
				s[o++] = '"';
				i++;
				continue;
			}
			break;
		}
		s[o++] = alt[i];
	}
	/* the closing quote, then nothing or one '*' */
	if (i >= len || !(i + 1 == len || (i + 2 == len && alt[i + 1] == '*'))) {
		free(s);
		return NULL;
	}
	*prefix = i + 2 == len;
	s[o] = '\0';
	*n = o;
	return s;
}

int postings_alt_term(atlas_analyzer *a, const char *alt, char *term, int cap)
{
	size_t n = 0;
	bool prefix = false;
	phrase_tokens x = {0};
	char *text = unquote(alt, &n, &prefix);
	int len = -1;
	if (text && !prefix &&
	    atlas_analyze(a, FTS5_TOKENIZE_QUERY, text, (int)n, phrase_token, &x) == SQLITE_OK &&
	    !x.bad && x.ntok == 1 && x.n[0] < cap) {
		memcpy(term, x.text, (size_t)x.n[0]);
		term[x.n[0]] = '\0';
		len = x.n[0];
	}
	free(x.text);
	free(text);
	return len;
}

int postings_query_new(postings_query **out, const atlas_postings *p)
{
	*out = NULL;
	postings_query *q = calloc(1, sizeof(*q));
	if (!q)
		return ATLAS_ENOMEM;
	q->p = p;
	q->docmask = calloc((size_t)p->ndocs + 1, sizeof(*q->docmask));
	q->docgen = calloc((size_t)p->ndocs + 1, sizeof(*q->docgen));
	q->docneg = calloc((size_t)p->ndocs + 1, sizeof(*q->docneg));
	if (!q->docmask || !q->docgen || !q->docneg) {
		postings_query_free(q);
		return ATLAS_ENOMEM;
	}
	*out = q;
	return 0;
}

void postings_query_free(postings_query *q)
{
	if (!q)
		return;
	free(q->scratch);
	free(q->docmask);
	free(q->docgen);
	free(q->docneg);
	free(q);
}

void postings_reset(postings_query *q)
{
	q->nphrases = 0;
	q->positive = 0;
	q->failed = false;
	q->nscratch = 0;
}

int postings_add(postings_query *q, atlas_analyzer *a, const char *alt, unsigned colmask, int group,
		 bool negated)
{
	size_t n = 0;
	bool prefix = false;
	phrase_tokens x = {0};
	char *text = NULL;
	if (q->failed || q->nphrases == FTS_MAX_PHRASES || group < 0 || group >= GROUPS_MAX)
		goto fail;
	if (!(text = unquote(alt, &n, &prefix)))
		goto fail;
	int flags = FTS5_TOKENIZE_QUERY | (prefix ? FTS5_TOKENIZE_PREFIX : 0);
	if (atlas_analyze(a, flags, text, (int)n, phrase_token, &x) != SQLITE_OK || x.bad ||
	    x.ntok == 0)
		goto free_text;
	keyset pos[PHRASE_TOKENS_MAX];
	for (int j = 0; j < x.ntok; j++)
		if (token_positions(q, &pos[j], x.text + x.off[j], x.n[j],
				    prefix && j == x.ntok - 1))
			goto free_text;
	phrase *ph = &q->ph[q->nphrases];
	*ph = (phrase){pos[0], colmask, group, negated, x.ntok, 0};
	if (x.ntok > 1) {
		/* the starts of the phrase: walked from its rarest token's positions, each other
		 * token sought at its place in the same column */
		int r = 0;
		for (int j = 1; j < x.ntok; j++)
			if (pos[j].n < pos[r].n)
				r = j;
		size_t at = scratch_take(q, pos[r].n);
		if (at == (size_t)-1)
			goto free_text;
		size_t m = 0, cur[PHRASE_TOKENS_MAX] = {0};
		for (size_t i = 0; i < pos[r].n; i++) {
			uint64_t kr = keyset_at(q, pos[r])[i];
			if (KEY_OFF(kr) < r)
				continue; /* no room for the tokens before it in its column */
			uint64_t k = kr - (uint64_t)r;
			bool all = true;
			for (int j = 0; j < x.ntok && all; j++)
				if (j != r)
					all = seek_key(keyset_at(q, pos[j]), pos[j].n, &cur[j], k + (uint64_t)j);
			if (all)
				q->scratch[at + m++] = k;
		}
		q->nscratch = at + m;
		ph->matches = (keyset){true, at, m};
	}
	if (!negated)
		q->positive |= 1ULL << group;
	q->nphrases++;
	free(x.text);
	free(text);
	return 0;
free_text:
	free(x.text);
	free(text);
fail:
	q->failed = true;
	return -1;
}

/**************************************************************************************************
** Rows.
*/

/* Marks in q->docmask the groups each row holds a phrase of (in the phrase's columns) and in
 * q->docneg the rows holding a negated one, for the rows of this generation (q->docgen). */
static void mark_rows(postings_query *q)
{
	if (++q->gen == 0) {
		memset(q->docgen, 0, ((size_t)q->p->ndocs + 1) * sizeof(*q->docgen));
		q->gen = 1;
	}
	/* the groups each row holds a phrase of, in the phrase's columns */
	for (int i = 0; i < q->nphrases; i++) {
		phrase *ph = &q->ph[i];
		const uint64_t *k = keyset_at(q, ph->matches);
		for (size_t j = 0; j < ph->matches.n; j++) {
			if (!(ph->colmask >> KEY_COL(k[j]) & 1))
				continue;
			int d = KEY_DOC(k[j]);
			if (q->docgen[d] != q->gen) {
				q->docgen[d] = q->gen;
				q->docmask[d] = 0;
				q->docneg[d] = 0;
			}
			if (ph->negated)
				q->docneg[d] = 1;
			else
				q->docmask[d] |= 1ULL << ph->group;
		}
		ph->cursor = 0;
	}
}

/* The first row after d that mark_rows found holding a phrase of every positive group (all_groups)
 * or of any, and of no negated group; 0 when none is. */
static int next_row(const postings_query *q, int d, bool all_groups)
{
	while (++d <= q->p->ndocs)
		if (q->docgen[d] == q->gen && !q->docneg[d] && q->docmask[d] &&
		    (!all_groups || q->docmask[d] == q->positive))
			return d;
	return 0;
}

/* Scores and records row d in rec, each phrase's matches read from its cursor on (moved to the
 * row's first): the cursors must not be past the row. Returns the row's score. */
static double record_row(postings_query *q, match_record *rec, int d)
{
	rank_row r;
	rank_row_begin(&r, rec, rec->sizes + (size_t)(d - 1) * FTS_NCOLS, rec->avg);
	uint64_t lo = KEY(d, 0, 0), hi = KEY(d + 1, 0, 0);
	for (int i = 0; i < q->nphrases; i++) {
		phrase *ph = &q->ph[i];
		const uint64_t *k = keyset_at(q, ph->matches);
		rec->phrase_size[i] = ph->size;
		while (ph->cursor < ph->matches.n && k[ph->cursor] < lo)
			ph->cursor++;
		for (size_t j = ph->cursor; j < ph->matches.n && k[j] < hi; j++)
			if (ph->colmask >> KEY_COL(k[j]) & 1)
				rank_row_inst(&r, i, KEY_COL(k[j]), KEY_OFF(k[j]));
		rank_row_phrase_end(&r, i);
	}
	return rank_row_end(&r);
}

int postings_run(postings_query *q, match_record *rec, bool all_groups, long cap, postings_row_fn fn,
		 void *ctx)
{
	if (q->failed || !rec->sizes || rec->nrows < q->p->ndocs)
		return -1;
	mark_rows(q);
	int rows = 0;
	for (int d = next_row(q, 0, all_groups); d && rows < cap; d = next_row(q, d, all_groups), rows++)
		fn(ctx, d, record_row(q, rec, d));
	return rows;
}

int postings_count(postings_query *q, bool all_groups, long cap, postings_doc_fn fn, void *ctx)
{
	if (q->failed)
		return -1;
	mark_rows(q);
	int rows = 0;
	for (int d = next_row(q, 0, all_groups); d && rows < cap; d = next_row(q, d, all_groups), rows++)
		fn(ctx, d);
	return rows;
}

/* The first of the n keys at k not below key (n when none is). */
static size_t lower_bound(const uint64_t *k, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int postings_record(postings_query *q, match_record *rec, int doc)
{
	if (q->failed || !rec->sizes || rec->nrows < q->p->ndocs || doc < 1 || doc > q->p->ndocs)
		return -1;
	uint64_t lo = KEY(doc, 0, 0), hi = KEY(doc + 1, 0, 0);
	for (int i = 0; i < q->nphrases; i++) {
		phrase *ph = &q->ph[i];
		const uint64_t *k = keyset_at(q, ph->matches);
		ph->cursor = lower_bound(k, ph->matches.n, lo);
		if (!ph->negated)
			continue;
		for (size_t j = ph->cursor; j < ph->matches.n && k[j] < hi; j++)
			if (ph->colmask >> KEY_COL(k[j]) & 1) {
				rec->row_n = -1;
				return 0;
			}
	}
	record_row(q, rec, doc);
	return 0;
}
