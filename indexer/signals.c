/* signals.c - "read next" candidates: guide order, links and prerequisites, shared topics,
 * more-like-this over tf-idf vectors, and personalized PageRank over the page graph. */
#include "signals.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer.h"
#include "fields_index.h"
#include "next_fit.h"
#include "schema.h"
#include "stopwords.h"
#include "strbuf.h"
#include "strmap.h"
#include "topk.h"
#include "varint.h"
#include "../query/rank.h"

/* Candidates kept per page for the signals that could otherwise grow with the corpus. */
#define TOPIC_MATES_MAX 12
#define TOPIC_ALL_MAX 40      /* a topic this small: every member is a mate of every other */
#define SIMILAR_MAX 12
#define GRAPH_MAX 10
#define MLT_TERMS 30          /* terms of each page's vector used to find similar pages */
#define MLT_LIST 256          /* pages kept per term, strongest first, for finding them */
#define PPR_ALPHA 0.15        /* restart probability */
#define PPR_EPSILON 1e-4      /* push threshold, relative to out-degree */

/**************************************************************************************************
** Output rows.
*/

typedef struct vocab_row {
	char *term;
	int df, cf;
} vocab_row;

/* Everything computed. The candidate rows, millions at 100,000 pages, are not kept: each goes into
 * the rows file as it is made, in the order made (signal after signal, each over every page), and
 * is put in key order there at the end. */
typedef struct out_ctx {
	atlas_error *err;
	const char *path;         /* the rows file, for messages */
	sqlite3 *db;              /* the rows file, open while computing */
	sqlite3_stmt *row;        /* appends a row to its table "computed" */
	sqlite3_stmt *term;       /* appends a row to similar_terms */
	int nrows;
	vocab_row *vocab;         /* sorted by term */
	int nvocab;
	vocab_row *stems;         /* every stem with its document frequency (cf unused), sorted */
	int nstems;
	next_fit *fit;            /* keeps the rows of the guides' steps, to fit the weights on */
	int rc;
} out_ctx;

/* Sets o->rc from the rows file's last error, with what was being done. Returns o->rc. */
static int rows_failed(out_ctx *o, const char *what)
{
	int code = sqlite3_errcode(o->db);
	o->rc = atlas_error_set(o->err, code == SQLITE_FULL ? ATLAS_EIO : ATLAS_ESQL, "%s: %s: %s", o->path,
				what, code == SQLITE_FULL ? "disk full" : sqlite3_errmsg(o->db));
	return o->rc;
}

/* Runs sql on the rows file; returns 0 or o->rc, set. */
static int rows_exec(out_ctx *o, const char *sql)
{
	return sqlite3_exec(o->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : rows_failed(o, "write");
}

/* Records one candidate (self and unknown pages dropped) with a detail of n bytes; signal is a
 * NEXT_* code. On failure sets o->rc. */
static void emit_bytes(out_ctx *o, int src, int dst, int signal, double weight, const void *detail, int n)
{
	if (o->rc || src == dst || !src || !dst)
		return;
	sqlite3_bind_int(o->row, 1, src);
	sqlite3_bind_int(o->row, 2, dst);
	sqlite3_bind_int(o->row, 3, signal);
	sqlite3_bind_double(o->row, 4, weight);
	sqlite3_bind_blob(o->row, 5, n > 0 ? detail : "", n > 0 ? n : 0, SQLITE_STATIC);
	if (sqlite3_step(o->row) != SQLITE_DONE)
		rows_failed(o, "insert read-next candidate");
	sqlite3_reset(o->row);
	o->nrows++;
	if (!o->rc && next_fit_wants(o->fit, src)) {
		/* a guide's rows name the guide by its doc id, first in their detail */
		int guide = 0;
		bool by_guide = signal == NEXT_GUIDE_NEXT || signal == NEXT_GUIDE_PREV ||
				signal == NEXT_GUIDE_START || signal == NEXT_GUIDE_AFTER ||
				signal == NEXT_LIST_NEXT;
		for (int k = 0; by_guide && k < n && ((const char *)detail)[k] >= '0' &&
				((const char *)detail)[k] <= '9' && guide < 100000000; k++)
			guide = guide * 10 + (((const char *)detail)[k] - '0');
		if (next_fit_add(o->fit, src, dst, signal, weight, guide))
			o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory keeping the guides' candidates");
	}
}

/* Writes similar_terms row id: name. Returns 0 or o->rc, set. */
static int put_similar_term(out_ctx *o, int id, const char *name)
{
	sqlite3_bind_int(o->term, 1, id);
	sqlite3_bind_text(o->term, 2, name ? name : "", -1, SQLITE_STATIC);
	if (sqlite3_step(o->term) != SQLITE_DONE)
		rows_failed(o, "insert similar term");
	sqlite3_reset(o->term);
	return o->rc;
}

/* emit_bytes with a NUL-terminated detail (NULL: none). */
static void emit(out_ctx *o, int src, int dst, int signal, double weight, const char *detail)
{
	emit_bytes(o, src, dst, signal, weight, detail, detail ? (int)strlen(detail) : 0);
}

static int page_of(const corpus *c, const char *path)
{
	int *i = strmap_get(&c->page_index, path);
	return i ? *i : -1;
}

/**************************************************************************************************
** Guides, links, prerequisites, topics.
*/

/* Whether the links of page p count as an author's: explainers' and guides' (a topic page's are
 * its generated member list, a site page's its navigation). */
static bool authored_links(const page *p)
{
	return p->type == PAGE_EXPLAINER || p->type == PAGE_GUIDE;
}

/* How informative links into and out of each page of c are (into in[], out[], by page index):
 * log((N + 1) / (1 + degree)) / log(N + 1), N the pages whose links count, each link counted once
 * per page, at least NEXT_LINK_FLOOR: a link into a page most pages link to (a glossary, the
 * built-ins) says little about where this page leads, as a word on most pages says little about
 * what a page is about. Returns 0 or ATLAS_ENOMEM. */
static int link_weights(const corpus *c, float *in, float *out)
{
	int n = c->npages;
	int *indeg = calloc((size_t)n + 1, sizeof(int)), *outdeg = calloc((size_t)n + 1, sizeof(int));
	int *seen = calloc((size_t)n + 1, sizeof(int));
	if (!indeg || !outdeg || !seen) {
		free(indeg);
		free(outdeg);
		free(seen);
		return ATLAS_ENOMEM;
	}
	int sources = 0;
	for (int pi = 0; pi < n; pi++) {
		const page *p = &c->pages[pi];
		if (!authored_links(p))
			continue;
		sources++;
		for (int k = 0; k < p->nlinks; k++) {
			int t = page_of(c, p->links[k].target);
			if (t < 0 || t == pi || seen[t] == pi + 1)
				continue;
			seen[t] = pi + 1;
			indeg[t]++;
			outdeg[pi]++;
		}
	}
	double norm = log((double)sources + 1);
	for (int pi = 0; pi < n; pi++) {
		double wi = norm > 0 ? log((sources + 1.0) / (1.0 + indeg[pi])) / norm : 1.0;
		double wo = norm > 0 ? log((sources + 1.0) / (1.0 + outdeg[pi])) / norm : 1.0;
		in[pi] = (float)(wi > NEXT_LINK_FLOOR ? wi : NEXT_LINK_FLOOR);
		out[pi] = (float)(wo > NEXT_LINK_FLOOR ? wo : NEXT_LINK_FLOOR);
	}
	free(indeg);
	free(outdeg);
	free(seen);
	return 0;
}

/* Guide order (next, previous, later steps), links and backlinks (weighted by link_in[] and
 * link_out[], link_weights), prerequisites. On failure sets o->rc. */
static void graph_signals(out_ctx *o, const corpus *c, const int *id_of, const float *link_in,
			  const float *link_out)
{
	char path[1100], detail[32];
	int *seen = calloc((size_t)c->npages + 1, sizeof(int)); /* target -> 1 + last page linking it */
	int *route = calloc((size_t)c->npages + 1, sizeof(int)); /* a guide's steps so far */
	if (!seen || !route) {
		free(seen);
		free(route);
		o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory for read-next candidates");
		return;
	}
	for (int gi = 0; gi < c->npages; gi++) {
		const page *g = &c->pages[gi];
		if (g->type != PAGE_GUIDE)
			continue;
		int prev = -1, step = 0;
		for (int s = 0; s < g->ngsecs; s++)
			for (int k = 0; k < g->gsecs[s].nsteps; k++) {
				snprintf(path, sizeof(path), "/%s", g->gsecs[s].steps[k]);
				int cur = page_of(c, path);
				if (cur < 0)
					continue;
				step++;
				/* the steps NEXT_AFTER_SPAN or fewer back, but the one just before: this
				 * page comes after them */
				for (int back = 2; back <= NEXT_AFTER_SPAN && step - back >= 1 &&
						   step - back <= c->npages; back++) {
					snprintf(detail, sizeof(detail), "%d|%d", id_of[gi], step);
					emit(o, id_of[route[step - back - 1]], id_of[cur], NEXT_GUIDE_AFTER,
					     1.0 / back, detail);
				}
				if (step <= c->npages)
					route[step - 1] = cur;
				if (step == 1) {
					snprintf(detail, sizeof(detail), "%d|1", id_of[gi]);
					emit(o, id_of[gi], id_of[cur], NEXT_GUIDE_START, 1.0, detail);
				}
				if (prev >= 0) {
					snprintf(detail, sizeof(detail), "%d|%d", id_of[gi], step);
					emit(o, id_of[prev], id_of[cur], NEXT_GUIDE_NEXT, 1.0, detail);
					snprintf(detail, sizeof(detail), "%d|%d", id_of[gi], step - 1);
					emit(o, id_of[cur], id_of[prev], NEXT_GUIDE_PREV, 1.0, detail);
				}
				prev = cur;
			}
	}
	for (int pi = 0; pi < c->npages; pi++) {
		const page *p = &c->pages[pi];
		/* a topic page's links are its generated member list: those are topic_member
		 * candidates (topic_signals), not links an author wrote */
		for (int k = 0; p->type != PAGE_TOPIC && k < p->nlinks; k++) {
			int t = page_of(c, p->links[k].target);
			if (t < 0 || t == pi || seen[t] == pi + 1)
				continue;
			seen[t] = pi + 1; /* once per target */
			/* no reason shows its text */
			emit(o, id_of[pi], id_of[t], NEXT_LINK_OUT, link_in[t], "");
			if (p->type != PAGE_SITE)
				emit(o, id_of[t], id_of[pi], NEXT_LINK_IN, link_out[pi], "");
		}
		/* the order of a page's links: a table of contents, a topic's list, a guide's
		 * introduction, the pages a text names one after another */
		int last = -1, pos = 0;
		for (int k = 0; p->type != PAGE_SITE && k < p->nlinks; k++) {
			int t = page_of(c, p->links[k].target);
			if (t < 0 || t == pi || t == last || c->pages[t].type == PAGE_SITE ||
			    c->pages[t].type == PAGE_TOPIC)
				continue;
			pos++;
			if (last >= 0) {
				snprintf(detail, sizeof(detail), "%d|%d", id_of[pi], pos);
				emit(o, id_of[last], id_of[t], NEXT_LIST_NEXT, 1.0, detail);
			}
			last = t;
		}
		for (int k = 0; k < p->nprereqs; k++) {
			snprintf(path, sizeof(path), "/%s", p->prereqs[k]);
			int t = page_of(c, path);
			if (t < 0)
				continue;
			emit(o, id_of[pi], id_of[t], NEXT_PREREQ, 1.0, "");
			emit(o, id_of[t], id_of[pi], NEXT_BUILDS_ON, 1.0, "");
		}
	}
	free(seen);
	free(route);
}

/* Topic mates: explainers sharing a topic, all of a small topic, else at most TOPIC_MATES_MAX per
 * page and topic, preferring pages with higher priority, then by path, so that the choice is
 * deterministic. */
static const corpus *g_c;
static int cmp_priority_path(const void *a, const void *b)
{
	const page *x = &g_c->pages[*(const int *)a], *y = &g_c->pages[*(const int *)b];
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return strcmp(x->path, y->path);
}

static void topic_signals(out_ctx *o, const corpus *c, const int *id_of)
{
	int *members = malloc((size_t)(c->npages + 1) * sizeof(int));
	if (!members)
		return;
	for (int ti = 0; ti < c->ntopics && !o->rc; ti++) {
		const char *tp = c->topics[ti].path;
		int n = 0;
		for (int pi = 0; pi < c->npages; pi++) {
			const page *p = &c->pages[pi];
			if (p->type != PAGE_EXPLAINER)
				continue;
			for (int k = 0; k < p->ntopics; k++)
				if (strcmp(p->topics[k], tp) == 0)
					members[n++] = pi;
		}
		g_c = c;
		qsort(members, (size_t)n, sizeof(int), cmp_priority_path);
		char path[1100];
		snprintf(path, sizeof(path), "/t/%s", tp);
		int tpage = page_of(c, path);
		/* the topic named by its page's id when it has one (a few bytes a row, not its path) */
		char named[1100];
		if (tpage >= 0)
			snprintf(named, sizeof(named), "#%d", id_of[tpage]);
		else
			snprintf(named, sizeof(named), "%s", tp);
		for (int i = 0; i < n && tpage >= 0; i++)
			emit(o, id_of[tpage], id_of[members[i]], NEXT_TOPIC_START, 1.0 / (1 + i), named);
		for (int i = 0; i < n; i++) {
			/* every member of a topic of at most TOPIC_ALL_MAX, else the pages nearest in
			 * the ordered list: a window around each member */
			int lo = i - TOPIC_MATES_MAX / 2, hi = i + TOPIC_MATES_MAX / 2;
			if (n <= TOPIC_ALL_MAX) {
				lo = 0;
				hi = n - 1;
			}
			if (lo < 0) {
				hi -= lo;
				lo = 0;
			}
			if (hi >= n) {
				lo -= hi - n + 1;
				hi = n - 1;
			}
			if (lo < 0)
				lo = 0;
			for (int j = lo; j <= hi; j++)
				emit(o, id_of[members[i]], id_of[members[j]], NEXT_TOPIC, 1.0, named);
			/* the two mates next to it in the topic's order: a site's reading order when its
			 * file names follow it, either way; the fit weighs it on the site's guides */
			for (int j = i - 1; j <= i + 1; j += 2)
				if (j >= 0 && j < n)
					emit(o, id_of[members[i]], id_of[members[j]], NEXT_TOPIC_NEXT, 1.0, named);
		}
	}
	free(members);
}

/**************************************************************************************************
** Text: tf-idf vectors and more-like-this.
*/

typedef struct term_w {
	int term;
	float w;
} term_w;

typedef struct vec_ctx {
	strmap terms;       /* stem -> term id */
	int *df;
	int *best_surface;  /* term id -> vocabulary index of its most frequent surface form, or -1 */
	int nterms, capterms;
	float *acc;         /* per-term weight of the page being read */
	int *touched;
	int ntouched, captouched;
	float field_weight;
	int last_stem;      /* term id of the last stem seen, -1 when none */
	int last_start, last_end;
	char pending[128];  /* the last stem's text, until its surface form is known */
	int npending;       /* its length; 0 when its surface form was seen */
	/* the vocabulary: folded surface words and identifiers with document/collection counts */
	strmap vocab;
	int *vdf, *vcf, *vlast;
	int nvocab, capvocab;
	int doc;
	int oom;
} vec_ctx;

/* Counts one surface word or identifier of page v->doc. Returns its vocabulary index or -1. */
static int vocab_add(vec_ctx *v, const char *tok, int n)
{
	if (n < 2 || n > 40)
		return -1;
	int added = 0;
	int *idx = strmap_put(&v->vocab, tok, (size_t)n, v->nvocab, &added);
	if (!idx) {
		v->oom = 1;
		return -1;
	}
	if (added) {
		if (v->nvocab == v->capvocab) {
			int cap = v->capvocab ? v->capvocab * 2 : 8192;
			int *df = realloc(v->vdf, (size_t)cap * sizeof(int));
			if (df)
				v->vdf = df;
			int *cf = realloc(v->vcf, (size_t)cap * sizeof(int));
			if (cf)
				v->vcf = cf;
			int *last = realloc(v->vlast, (size_t)cap * sizeof(int));
			if (last)
				v->vlast = last;
			if (!df || !cf || !last) {
				v->oom = 1;
				return -1;
			}
			v->capvocab = cap;
		}
		v->vdf[v->nvocab] = v->vcf[v->nvocab] = 0;
		v->vlast[v->nvocab] = -1;
		v->nvocab++;
	}
	int i = *idx;
	v->vcf[i]++;
	if (v->vlast[i] != v->doc) {
		v->vlast[i] = v->doc;
		v->vdf[i]++;
	}
	return i;
}

/* The surface form of the last stem is known: record it, and keep the most frequent per stem. */
static void surface_seen(vec_ctx *v, const char *tok, int n)
{
	int vi = vocab_add(v, tok, n);
	v->npending = 0;
	if (vi >= 0 && v->last_stem >= 0) {
		int *best = &v->best_surface[v->last_stem];
		if (*best < 0 || v->vcf[vi] > v->vcf[*best])
			*best = vi;
	}
}

/* Ends the last stem: with no colocated surface form it was its own surface form. */
static void flush_pending(vec_ctx *v)
{
	if (v->npending)
		surface_seen(v, v->pending, v->npending);
}

static int vec_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	vec_ctx *v = ctx;
	if (tflags & FTS5_TOKEN_COLOCATED) {
		if (start == v->last_start && end == v->last_end && v->npending)
			surface_seen(v, tok, n); /* the folded surface form of the last stem */
		else
			vocab_add(v, tok, n);    /* an identifier */
		return 0;
	}
	flush_pending(v);
	v->last_stem = -1;
	v->last_start = start;
	v->last_end = end;
	v->npending = n < (int)sizeof(v->pending) ? n : 0;
	memcpy(v->pending, tok, (size_t)v->npending);
	if (n < 2 || n >= 100 || atlas_is_stopword(tok, (size_t)n))
		return 0;
	int all_digits = 1;
	for (int i = 0; i < n; i++)
		all_digits &= tok[i] >= '0' && tok[i] <= '9';
	if (all_digits)
		return 0;
	int added = 0;
	int *id = strmap_put(&v->terms, tok, (size_t)n, v->nterms, &added);
	if (!id) {
		v->oom = 1;
		return 1;
	}
	if (added) {
		if (v->nterms == v->capterms) {
			int cap = v->capterms ? v->capterms * 2 : 8192;
			int *df = realloc(v->df, (size_t)cap * sizeof(int));
			if (df)
				v->df = df;
			float *acc = df ? realloc(v->acc, (size_t)cap * sizeof(float)) : NULL;
			if (acc)
				v->acc = acc;
			int *bs = acc ? realloc(v->best_surface, (size_t)cap * sizeof(int)) : NULL;
			if (bs)
				v->best_surface = bs;
			if (!df || !acc || !bs) {
				v->oom = 1;
				return 1;
			}
			v->capterms = cap;
		}
		v->df[v->nterms] = 0;
		v->acc[v->nterms] = 0;
		v->best_surface[v->nterms] = -1;
		v->nterms++;
	}
	if (v->acc[*id] == 0) {
		if (v->ntouched == v->captouched) {
			int cap = v->captouched ? v->captouched * 2 : 1024;
			int *t = realloc(v->touched, (size_t)cap * sizeof(int));
			if (!t) {
				v->oom = 1;
				return 1;
			}
			v->touched = t;
			v->captouched = cap;
		}
		v->touched[v->ntouched++] = *id;
	}
	v->acc[*id] += v->field_weight;
	v->last_stem = *id;
	return 0;
}

/* Analyzes text in document mode into v: term weights and vocabulary counts. */
static void vec_text(vec_ctx *v, atlas_analyzer *a, const char *text, int n)
{
	atlas_analyze(a, FTS5_TOKENIZE_DOCUMENT | ATLAS_ANALYZE_SURFACE, text, n, vec_token, v);
	flush_pending(v);
	v->last_stem = -1;
}

static int cmp_term_w_desc(const void *a, const void *b)
{
	float x = ((const term_w *)a)->w, y = ((const term_w *)b)->w;
	return x > y ? -1 : x < y ? 1 : ((const term_w *)a)->term - ((const term_w *)b)->term;
}

/* A page's raw vector as pass 1 keeps it, until the last page gives the document frequencies:
 * each term id and weighted count (a sum of field weights, every one a multiple of 0.5) packed in
 * 32 bits, half a term_w, for the vectors of every page are held at once (about 440 terms a page,
 * 175 MB of them at 100,000 pages). A page with a term id or count too large to pack keeps its
 * entries as term_w (wide). */
#define PACK_TF_BITS 10
#define PACK_TERM_LIMIT (1u << (32 - PACK_TF_BITS))
#define PACK_TF2_LIMIT (1u << PACK_TF_BITS)

typedef struct raw_vec {
	void *entries; /* uint32_t (term << PACK_TF_BITS | 2 x count) or, when wide, term_w */
	int n;
	bool wide;
} raw_vec;

/* Copies the page's weights from v->acc (terms v->touched) into r, packed when every entry fits,
 * and clears them in v->acc, counting each term's document frequency. Returns 0, or -1 when out
 * of memory (r then empty). */
static int raw_vec_keep(raw_vec *r, vec_ctx *v)
{
	bool wide = false;
	for (int k = 0; k < v->ntouched && !wide; k++) {
		float tf2 = v->acc[v->touched[k]] * 2.0f;
		wide = (unsigned)v->touched[k] >= PACK_TERM_LIMIT || tf2 >= (float)PACK_TF2_LIMIT ||
		       tf2 != (float)(unsigned)tf2;
	}
	size_t size = wide ? sizeof(term_w) : sizeof(uint32_t);
	r->entries = malloc((v->ntouched > 0 ? (size_t)v->ntouched : 1) * size);
	r->n = 0;
	r->wide = wide;
	if (!r->entries)
		return -1;
	for (int k = 0; k < v->ntouched; k++) {
		int t = v->touched[k];
		if (wide)
			((term_w *)r->entries)[k] = (term_w){ t, v->acc[t] };
		else
			((uint32_t *)r->entries)[k] =
			    (uint32_t)t << PACK_TF_BITS | (uint32_t)(v->acc[t] * 2.0f);
		v->acc[t] = 0;
		v->df[t]++;
	}
	r->n = v->ntouched;
	return 0;
}

/* Entry k of r as a term and its weighted count. */
static term_w raw_vec_get(const raw_vec *r, int k)
{
	if (r->wide)
		return ((const term_w *)r->entries)[k];
	uint32_t e = ((const uint32_t *)r->entries)[k];
	return (term_w){ (int)(e >> PACK_TF_BITS), (float)(e & (PACK_TF2_LIMIT - 1)) * 0.5f };
}

typedef struct posting {
	int doc;
	float w;
} posting;

static int cmp_posting_desc(const void *a, const void *b)
{
	const posting *x = a, *y = b;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return x->doc - y->doc;
}

/* Whether the posting (doc, w) is in a list truncated after cut (doc -1: a whole list), whose
 * order is cmp_posting_desc's. */
static bool kept_in_list(const posting *cut, int doc, float w)
{
	return cut->doc < 0 || w > cut->w || (w == cut->w && doc <= cut->doc);
}

typedef struct scored {
	int doc;
	float score;
	int t[3];     /* best contributing terms */
	float tw[3];
} scored;

static int cmp_scored_desc(const void *a, const void *b)
{
	const scored *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->doc - y->doc;
}

/* cmp_scored_desc in atlas_best_first's form. */
static int cmp_scored_ctx(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	return cmp_scored_desc(a, b);
}

/* Readable form of a term: its most frequent surface form. Fills names[term] (caller frees the
 * array, not the strings, which the vocabulary map owns). */
static const char **surface_names(vec_ctx *v)
{
	const char **names = calloc((size_t)v->nterms + 1, sizeof(char *));
	const char **by_index = calloc((size_t)v->nvocab + 1, sizeof(char *));
	if (!names || !by_index) {
		free(names);
		free(by_index);
		return NULL;
	}
	for (size_t i = 0; i < v->vocab.cap; i++)
		if (v->vocab.slots[i].key)
			by_index[v->vocab.slots[i].value] = v->vocab.slots[i].key;
	for (size_t i = 0; i < v->terms.cap; i++) {
		const strmap_entry *e = &v->terms.slots[i];
		if (e->key) {
			int b = v->best_surface[e->value];
			names[e->value] = b >= 0 ? by_index[b] : e->key;
		}
	}
	free(by_index);
	return names;
}

static int cmp_entry_key(const void *a, const void *b)
{
	return strcmp((*(const strmap_entry *const *)a)->key, (*(const strmap_entry *const *)b)->key);
}

/* Copies the keys of m with their counts (df[value], and cf[value] when cf is not NULL) into
 * *rows (*n of them), sorted by key: appending to a B-tree in key order costs far less than
 * inserting at random places. The rows are written once the database is free. On failure sets
 * o->rc, naming what (e.g. "the vocabulary"); the rows kept so far stay for the caller to free. */
static void keep_sorted(out_ctx *o, vocab_row **rows, int *n, const strmap *m, const int *df, const int *cf,
			const char *what)
{
	const strmap_entry **sorted = malloc((m->count ? m->count : 1) * sizeof(*sorted));
	*rows = calloc(m->count ? m->count : 1, sizeof(vocab_row));
	if (!sorted || !*rows) {
		free(sorted);
		o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory keeping %s", what);
		return;
	}
	size_t ns = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			sorted[ns++] = &m->slots[i];
	qsort(sorted, ns, sizeof(*sorted), cmp_entry_key);
	for (size_t i = 0; i < ns; i++) {
		vocab_row *r = &(*rows)[*n];
		r->term = strdup(sorted[i]->key);
		if (!r->term) {
			o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory keeping %s", what);
			break;
		}
		r->df = df[sorted[i]->value];
		r->cf = cf ? cf[sorted[i]->value] : 0;
		++*n;
	}
	free(sorted);
}

typedef struct ppr_job ppr_job;
static void ppr_start(ppr_job *j);

/* The more-like-this candidates; once every page is read (its text no longer needed), starts the
 * graph candidates of job on a thread of their own. */
static void text_signals(out_ctx *o, corpus *c, const int *id_of, atlas_analyzer *a, ppr_job *job)
{
	int n = c->npages;
	vec_ctx v;
	memset(&v, 0, sizeof(v));
	raw_vec *raw = calloc((size_t)n, sizeof(raw_vec));
	term_w **vecs = calloc((size_t)n, sizeof(term_w *));
	int *nvec = calloc((size_t)n, sizeof(int));
	term_w *scratch = NULL;
	int capscratch = 0;
	if (!raw || !vecs || !nvec)
		goto out;
	/* pass 1: raw weighted term frequencies per page, and document frequencies */
	for (int pi = 0; pi < n && !v.oom; pi++) {
		const page *p = &c->pages[pi];
		v.ntouched = 0;
		v.doc = pi;
		v.field_weight = 3.0f;
		vec_text(&v, a, p->title, (int)strlen(p->title));
		for (int k = 0; k < p->nkeywords; k++)
			vec_text(&v, a, p->keywords[k], (int)strlen(p->keywords[k]));
		for (int s = 0; s < p->nsecs; s++) {
			v.field_weight = 2.0f;
			if (s)
				vec_text(&v, a, p->secs[s].heading, (int)strlen(p->secs[s].heading));
			v.field_weight = s == 0 ? 1.5f : 1.0f;
			vec_text(&v, a, p->secs[s].body, (int)p->secs[s].body_len);
		}
		corpus_release_bodies(c, pi);
		if (raw_vec_keep(&raw[pi], &v)) {
			v.oom = 1;
			break;
		}
	}
	if (v.oom)
		goto out;
	ppr_start(job);
	keep_sorted(o, &o->vocab, &o->nvocab, &v.vocab, v.vdf, v.vcf, "the vocabulary");
	keep_sorted(o, &o->stems, &o->nstems, &v.terms, v.df, NULL, "the stems");
	/* pass 2: tf-idf, normalized, truncated to the strongest MLT_TERMS terms, each page's raw
	 * vector freed as soon as its truncated one is made */
	for (int pi = 0; pi < n; pi++) {
		int nr = raw[pi].n;
		if (nr > capscratch) {
			term_w *t = realloc(scratch, (size_t)nr * sizeof(term_w));
			if (!t) {
				v.oom = 1;
				goto out;
			}
			scratch = t;
			capscratch = nr;
		}
		double norm = 0;
		for (int k = 0; k < nr; k++) {
			term_w *tw = &scratch[k];
			*tw = raw_vec_get(&raw[pi], k);
			double idf = log((double)n / v.df[tw->term]);
			tw->w = (float)((1.0 + log(tw->w)) * idf);
			norm += (double)tw->w * tw->w;
		}
		norm = norm > 0 ? sqrt(norm) : 1;
		for (int k = 0; k < nr; k++)
			scratch[k].w = (float)(scratch[k].w / norm);
		qsort(scratch, (size_t)nr, sizeof(term_w), cmp_term_w_desc);
		nvec[pi] = nr < MLT_TERMS ? nr : MLT_TERMS;
		vecs[pi] = malloc((size_t)(nvec[pi] ? nvec[pi] : 1) * sizeof(term_w));
		if (!vecs[pi]) {
			v.oom = 1;
			goto out;
		}
		memcpy(vecs[pi], scratch, (size_t)nvec[pi] * sizeof(term_w));
		free(raw[pi].entries);
		raw[pi].entries = NULL;
	}
	/* inverted lists over the truncated vectors */
	int *plen = calloc((size_t)v.nterms + 1, sizeof(int));
	posting **plist = calloc((size_t)v.nterms + 1, sizeof(posting *));
	posting *cut = malloc(((size_t)v.nterms + 1) * sizeof(posting));
	int *at = calloc((size_t)v.nterms + 1, sizeof(int));
	float *score = calloc((size_t)n, sizeof(float));
	unsigned char *seen = calloc((size_t)n, 1);
	int *hit = malloc((size_t)n * sizeof(int));
	scored *top = malloc((size_t)n * sizeof(scored));
	const char **names = surface_names(&v);
	int *name_id = malloc(((size_t)v.nterms + 1) * sizeof(int)); /* term -> similar_terms id */
	int names_used = 0;
	strbuf detail = STRBUF_INIT;
	if (!plen || !plist || !cut || !at || !score || !seen || !hit || !top || !names || !name_id) {
		v.oom = 1;
		goto out_lists;
	}
	for (int t = 0; t < v.nterms; t++)
		name_id[t] = -1;
	/* site pages are never suggested: left out of the lists, so that walking them reads nothing
	 * but the lists and the accumulators (a page's record, looked up for every posting, was a
	 * cache miss each time and most of this step at 100,000 pages) */
	for (int pi = 0; pi < n; pi++)
		for (int k = 0; k < nvec[pi] && c->pages[pi].type != PAGE_SITE; k++)
			plen[vecs[pi][k].term]++;
	for (int t = 0; t < v.nterms; t++) {
		plist[t] = malloc((size_t)(plen[t] ? plen[t] : 1) * sizeof(posting));
		if (!plist[t])
			goto out_lists;
		plen[t] = 0;
	}
	for (int pi = 0; pi < n; pi++)
		for (int k = 0; k < nvec[pi] && c->pages[pi].type != PAGE_SITE; k++) {
			int t = vecs[pi][k].term;
			plist[t][plen[t]++] = (posting){ pi, vecs[pi][k].w };
		}
	/* impact-ordered, truncated lists: a term's strongest pages only, so the work per page is
	 * bounded (MLT_TERMS x MLT_LIST) however large the corpus grows; cut[t] is the last posting
	 * a truncated list keeps (doc -1 for a whole list) */
	for (int t = 0; t < v.nterms; t++) {
		cut[t] = (posting){ -1, 0 };
		if (plen[t] > MLT_LIST) {
			qsort(plist[t], (size_t)plen[t], sizeof(posting), cmp_posting_desc);
			plen[t] = MLT_LIST;
			cut[t] = plist[t][MLT_LIST - 1];
		}
	}
	/* For each page, every candidate's score first, a float a page (400 KB at 100,000 pages:
	 * it stays in cache), then the strongest shared terms of the dozen best only (kept for every
	 * candidate as it was scored, 36 bytes a page and a cache miss a posting, they were most of
	 * this step at 100,000 pages). Contributions are added, and the terms ranked, in the order of
	 * the page's vector. */
	for (int pi = 0; pi < n && !o->rc; pi++) {
		if (c->pages[pi].type == PAGE_SITE)
			continue;
		int nhit = 0;
		for (int k = 0; k < nvec[pi]; k++) {
			const posting *list = plist[vecs[pi][k].term];
			int nl = plen[vecs[pi][k].term];
			for (int j = 0; j < nl; j++) {
				int d = list[j].doc;
				if (d == pi)
					continue;
				if (!seen[d]) {
					seen[d] = 1;
					hit[nhit++] = d;
				}
				float contrib = vecs[pi][k].w * list[j].w;
				score[d] += contrib;
			}
		}
		int ntop = 0;
		for (int h = 0; h < nhit; h++) {
			int d = hit[h];
			if (score[d] > 0)
				top[ntop++] = (scored){ d, score[d], { -1, -1, -1 }, { 0, 0, 0 } };
			score[d] = 0;
			seen[d] = 0;
		}
		/* only the dozen best of a page's candidates, which run to thousands, are sorted */
		atlas_best_first(top, (size_t)ntop, SIMILAR_MAX, sizeof(scored), cmp_scored_ctx, NULL);
		for (int k = 0; k < nvec[pi]; k++)
			at[vecs[pi][k].term] = k + 1;
		for (int w = 0; w < ntop && w < SIMILAR_MAX; w++) {
			scored *s = &top[w];
			float contrib[MLT_TERMS];
			bool shared[MLT_TERMS] = { false };
			/* a term both pages weigh, whose list holds the candidate */
			for (int e = 0; e < nvec[s->doc]; e++) {
				term_w tw = vecs[s->doc][e];
				int k = at[tw.term] - 1;
				if (k < 0 || !kept_in_list(&cut[tw.term], s->doc, tw.w))
					continue;
				contrib[k] = vecs[pi][k].w * tw.w;
				shared[k] = true;
			}
			for (int k = 0; k < nvec[pi]; k++) {
				if (!shared[k])
					continue;
				for (int r = 0; r < 3; r++)
					if (s->t[r] < 0 || contrib[k] > s->tw[r]) {
						for (int q = 2; q > r; q--) {
							s->t[q] = s->t[q - 1];
							s->tw[q] = s->tw[q - 1];
						}
						s->t[r] = vecs[pi][k].term;
						s->tw[r] = contrib[k];
						break;
					}
			}
			/* the shared terms by the ids of their similar_terms rows, each written once */
			strbuf_reset(&detail);
			for (int r = 0; r < 3 && s->t[r] >= 0 && !o->rc; r++) {
				int t = s->t[r];
				if (name_id[t] < 0 && put_similar_term(o, names_used, names[t]) == 0)
					name_id[t] = names_used++;
				if (name_id[t] >= 0 && atlas_varint_put(&detail, (unsigned)name_id[t]))
					o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory for read-next candidates");
			}
			emit_bytes(o, id_of[pi], id_of[s->doc], NEXT_SIMILAR, s->score, detail.buf, (int)detail.len);
		}
		for (int k = 0; k < nvec[pi]; k++)
			at[vecs[pi][k].term] = 0;
	}
out_lists:
	for (int t = 0; plist && t < v.nterms; t++)
		free(plist[t]);
	free(plist);
	free(plen);
	free(cut);
	free(at);
	free(score);
	free(seen);
	free(hit);
	free(top);
	free(names);
	free(name_id);
	strbuf_free(&detail);
out:
	for (int pi = 0; vecs && pi < n; pi++)
		free(vecs[pi]);
	for (int pi = 0; raw && pi < n; pi++)
		free(raw[pi].entries);
	free(raw);
	free(scratch);
	free(vecs);
	free(nvec);
	strmap_free(&v.terms);
	strmap_free(&v.vocab);
	free(v.vdf);
	free(v.vcf);
	free(v.vlast);
	free(v.best_surface);
	free(v.df);
	free(v.acc);
	free(v.touched);
	if (v.oom && !o->rc)
		o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory computing similar pages");
}

/**************************************************************************************************
** Graph: personalized PageRank by forward push (Andersen, Chung, Lang 2006).
*/

typedef struct edge {
	int to;
	float w;
} edge;

/* A page's state during the pushes from one source, with what the push reads of its edges, in
 * one place: a push visits a page's neighbours in a graph larger than the cache, and state kept in
 * separate arrays cost a cache miss per array per visit (most of this step at 100,000 pages). */
typedef struct ppr_node {
	double p, r;        /* estimate and residual */
	float wsum;         /* total weight of its edges */
	int deg;            /* its edges: edges[off .. off + deg) */
	int off;
	unsigned char inq;  /* in the queue */
	unsigned char was;  /* touched by this source's pushes */
} ppr_node;

/* The page graph in flat form, made in two walks of the corpus's edges: the first counts each
 * page's edges (room[a]), the second writes them, in the order met, into the room so made, an
 * edge met again adding its weight to the first. Nothing per page is allocated. */
typedef struct graph {
	ppr_node *nodes;
	edge *edges;
	size_t *room;   /* first walk: edges met from each page; NULL in the second */
} graph;

static void add_edge(graph *g, int a, int b, float w)
{
	if (a == b || a < 0 || b < 0)
		return;
	if (g->room) {
		g->room[a]++;
		return;
	}
	ppr_node *x = &g->nodes[a];
	edge *adj = g->edges + x->off;
	x->wsum += w;
	for (int k = 0; k < x->deg; k++)
		if (adj[k].to == b) {
			adj[k].w += w;
			return;
		}
	adj[x->deg++] = (edge){ b, w };
}

/* Adds every edge of c's page graph to g: a link both ways (forward as informative as a link
 * into its target is, link_in[], back half as much as one out of its source, link_out[]), a
 * prerequisite both ways (0.5 to it, 1 from it). A topic page's and a site page's links are
 * lists every page could be reached from, not an author's; guides are their own signals
 * (guide_next, guide_after), so that the weights fitted on them see no route through this one. */
static void walk_edges(graph *g, const corpus *c, const float *link_in, const float *link_out)
{
	char path[1100];
	for (int pi = 0; pi < c->npages; pi++) {
		const page *pg = &c->pages[pi];
		for (int k = 0; authored_links(pg) && k < pg->nlinks; k++) {
			int t = page_of(c, pg->links[k].target);
			if (t < 0)
				continue;
			add_edge(g, pi, t, link_in[t]);
			add_edge(g, t, pi, 0.5f * link_out[pi]);
		}
		for (int k = 0; k < pg->nprereqs; k++) {
			snprintf(path, sizeof(path), "/%s", pg->prereqs[k]);
			int t = page_of(c, path);
			add_edge(g, pi, t, 0.5f);
			add_edge(g, t, pi, 1.0f);
		}
	}
}

/* Makes c's page graph into g (nodes and edges owned by the caller). Returns 0 or ATLAS_ENOMEM
 * (nothing left allocated). */
static int make_graph(graph *g, const corpus *c, const float *link_in, const float *link_out)
{
	size_t n = c->npages > 0 ? (size_t)c->npages : 1, total = 0;
	g->room = calloc(n, sizeof(size_t));
	g->nodes = calloc(n, sizeof(ppr_node));
	g->edges = NULL;
	if (g->room && g->nodes) {
		walk_edges(g, c, link_in, link_out);
		for (int i = 0; i < c->npages; i++) {
			g->nodes[i].off = (int)total;
			total += g->room[i];
			if (total > INT32_MAX)
				break;
		}
		if (total <= INT32_MAX)
			g->edges = malloc((total ? total : 1) * sizeof(edge));
	}
	free(g->room);
	g->room = NULL;
	if (!g->edges) {
		free(g->nodes);
		g->nodes = NULL;
		return ATLAS_ENOMEM;
	}
	walk_edges(g, c, link_in, link_out);
	return 0;
}

/* The graph candidates, computed apart from the other signals (on a thread of their own: they read
 * only the links, prerequisites and guides) and written with them afterwards, in the same order. */
struct ppr_job {
	const corpus *c;
	const float *link_in, *link_out; /* link_weights */
	pthread_t thread;
	bool running;
	int *src, *dst;  /* rows, as page indexes, in the order made */
	float *w;
	int n, cap;
	int rc;          /* ATLAS_ENOMEM when memory ran out */
};

/* Appends one row; on failure sets j->rc. */
static void ppr_row(ppr_job *j, int src, int dst, float w)
{
	if (j->rc)
		return;
	if (j->n == j->cap) {
		int cap = j->cap ? j->cap * 2 : 65536;
		int *s = realloc(j->src, (size_t)cap * sizeof(int));
		if (s)
			j->src = s;
		int *d = s ? realloc(j->dst, (size_t)cap * sizeof(int)) : NULL;
		if (d)
			j->dst = d;
		float *w2 = d ? realloc(j->w, (size_t)cap * sizeof(float)) : NULL;
		if (w2)
			j->w = w2;
		if (!w2) {
			j->rc = ATLAS_ENOMEM;
			return;
		}
		j->cap = cap;
	}
	j->src[j->n] = src;
	j->dst[j->n] = dst;
	j->w[j->n] = w;
	j->n++;
}

static void ppr_compute(ppr_job *j)
{
	const corpus *c = j->c;
	int n = c->npages;
	int *queue = malloc((size_t)n * sizeof(int)), *touched = malloc((size_t)n * sizeof(int));
	scored *top = malloc((size_t)n * sizeof(scored));
	graph g = { NULL, NULL, NULL };
	if (n == 0)
		goto out;
	if (!queue || !touched || !top || make_graph(&g, c, j->link_in, j->link_out))
		goto out_of_memory;
	ppr_node *nodes = g.nodes;
	const edge *edges = g.edges;
	for (int src = 0; src < n && !j->rc; src++) {
		if (c->pages[src].type == PAGE_SITE || nodes[src].deg == 0)
			continue;
		int head = 0, tail = 0, nt = 0;
		nodes[src].r = 1.0;
		queue[tail++] = src;
		nodes[src].inq = 1;
		touched[nt++] = src;
		nodes[src].was = 1;
		while (head != tail) {
			int u = queue[head];
			head = (head + 1) % n;
			ppr_node *x = &nodes[u];
			x->inq = 0;
			double ru = x->r;
			if (x->deg == 0 || ru < PPR_EPSILON * x->deg)
				continue;
			x->p += PPR_ALPHA * ru;
			x->r = 0;
			double spread = (1 - PPR_ALPHA) * ru / x->wsum;
			const edge *adj = edges + x->off;
			for (int k = 0; k < x->deg; k++) {
				int w = adj[k].to;
				ppr_node *y = &nodes[w];
				y->r += spread * adj[k].w;
				if (!y->was) {
					y->was = 1;
					touched[nt++] = w;
				}
				if (!y->inq && y->deg && y->r >= PPR_EPSILON * y->deg) {
					y->inq = 1;
					queue[tail] = w;
					tail = (tail + 1) % n;
				}
			}
		}
		int nk = 0;
		for (int k = 0; k < nt; k++) {
			int d = touched[k];
			if (d != src && nodes[d].p > 0 && c->pages[d].type != PAGE_SITE)
				top[nk++] = (scored){ d, (float)nodes[d].p, { -1, -1, -1 },
						      { 0, 0, 0 } };
		}
		atlas_best_first(top, (size_t)nk, GRAPH_MAX, sizeof(scored), cmp_scored_ctx, NULL);
		for (int k = 0; k < nk && k < GRAPH_MAX; k++)
			ppr_row(j, src, top[k].doc, top[k].score / top[0].score);
		for (int k = 0; k < nt; k++) {
			ppr_node *y = &nodes[touched[k]];
			y->p = y->r = 0;
			y->was = y->inq = 0;
		}
	}
	goto out;
out_of_memory:
	j->rc = ATLAS_ENOMEM;
out:
	free(g.nodes);
	free(g.edges);
	free(queue);
	free(touched);
	free(top);
}

static void *ppr_run(void *arg)
{
	ppr_compute(arg);
	return NULL;
}

/* Starts the graph candidates on a thread of their own, or, when no thread can be started, leaves
 * them to ppr_finish. */
static void ppr_start(ppr_job *j)
{
	if (!j->running && !j->n && !j->rc)
		j->running = pthread_create(&j->thread, NULL, ppr_run, j) == 0;
}

/* Waits for the thread computing the graph candidates, if one was started. */
static void ppr_join(ppr_job *j)
{
	if (j->running) {
		pthread_join(j->thread, NULL);
		j->running = false;
	}
}

/* The graph candidates, computed (here when no thread did) and written. Sets o->rc on failure. */
static void ppr_signals(out_ctx *o, ppr_job *j, const int *id_of)
{
	bool started = j->running;
	ppr_join(j);
	if (!started && !j->rc)
		ppr_compute(j);
	if (j->rc) {
		o->rc = atlas_error_set(o->err, ATLAS_ENOMEM,
					"out of memory computing the page graph");
		return;
	}
	for (int k = 0; k < j->n && !o->rc; k++)
		emit(o, id_of[j->src[k]], id_of[j->dst[k]], NEXT_GRAPH, j->w[k], "");
}

static void ppr_free(ppr_job *j)
{
	ppr_join(j);
	free(j->src);
	free(j->dst);
	free(j->w);
	j->src = j->dst = NULL;
	j->w = NULL;
	j->n = j->cap = 0;
}

/**************************************************************************************************
** Running beside the full-text indexing, then writing.
*/

struct signals {
	pthread_t thread;
	bool joined;
	corpus *c;
	const int *id_of;
	atlas_analyzer *a;
	char *rows_path;          /* the file the rows are written to */
	long long fields_hash;    /* FTS5's pending-terms memory per table, fields and titles */
	bool fields_merge;        /* merge their segments into one at the end */
	atlas_error err;
	out_ctx o;
	ppr_job ppr;
};

/* Creates the rows file: the index's tables for the signals (atlas_schema_signals_sql) and
 * "computed", where emit appends. Returns 0 or o->rc, set. */
static int rows_open(out_ctx *o)
{
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(o->path, &o->db, flags, NULL) != SQLITE_OK) {
		o->rc = atlas_error_set(o->err, ATLAS_EIO, "%s: cannot create: %s", o->path,
					o->db ? sqlite3_errmsg(o->db) : "out of memory");
		return o->rc;
	}
	/* appends only: a small cache, no journal (the file is thrown away on failure) */
	if (atlas_analyzer_register(o->db, o->err)) {
		o->rc = o->err->code;
		return o->rc;
	}
	if (rows_exec(o, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096;"
			 " PRAGMA cache_size=-2048; BEGIN") ||
	    rows_exec(o, atlas_schema_signals_sql) || rows_exec(o, atlas_schema_fields_sql) ||
	    rows_exec(o, "CREATE TABLE computed(src INTEGER, dst INTEGER, signal INTEGER, weight REAL, detail BLOB)"))
		return o->rc;
	if (sqlite3_prepare_v2(o->db, "INSERT INTO computed VALUES(?,?,?,?,?)", -1, &o->row, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(o->db, "INSERT INTO similar_terms VALUES(?,?)", -1, &o->term, NULL) != SQLITE_OK)
		return rows_failed(o, "prepare");
	return 0;
}

/* Writes the packed rows of page src (blob) as its next_candidates row. Returns 0 or o->rc, set. */
static int put_candidates(out_ctx *o, sqlite3_stmt *ins, int src, const strbuf *blob)
{
	sqlite3_bind_int(ins, 1, src);
	sqlite3_bind_blob(ins, 2, blob->buf ? blob->buf : "", (int)blob->len, SQLITE_STATIC);
	if (sqlite3_step(ins) != SQLITE_DONE)
		rows_failed(o, "insert read-next candidates");
	sqlite3_reset(ins);
	return o->rc;
}

/* Completes the rows file: each page's rows, in the order they were made, packed into its
 * next_candidates row; "computed" dropped; the vocabulary and the stems written. Returns 0 or
 * o->rc, set. */
static int rows_finish(out_ctx *o)
{
	sqlite3_stmt *voc = NULL, *stem = NULL, *sel = NULL, *ins = NULL;
	strbuf blob = STRBUF_INIT;
	sqlite3_finalize(o->row);
	sqlite3_finalize(o->term);
	o->row = o->term = NULL;
	if (sqlite3_prepare_v2(o->db, "SELECT src, dst, signal, weight, detail FROM computed ORDER BY src, rowid",
			       -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(o->db, "INSERT INTO next_candidates VALUES(?,?)", -1, &ins, NULL) != SQLITE_OK) {
		rows_failed(o, "prepare");
		goto out;
	}
	int cur = -1, step = SQLITE_DONE;
	while (!o->rc && (step = sqlite3_step(sel)) == SQLITE_ROW) {
		int src = sqlite3_column_int(sel, 0);
		if (src != cur && cur >= 0 && put_candidates(o, ins, cur, &blob))
			break;
		if (src != cur)
			strbuf_reset(&blob);
		cur = src;
		next_row r = { sqlite3_column_int(sel, 1), sqlite3_column_int(sel, 2), sqlite3_column_double(sel, 3),
			       (const char *)sqlite3_column_blob(sel, 4), sqlite3_column_bytes(sel, 4) };
		int rc = next_rows_put(&blob, &r);
		if (rc)
			o->rc = atlas_error_set(o->err, rc, "%s: %s read-next candidate of page %d", o->path,
						rc == ATLAS_ENOMEM ? "out of memory packing a" : "cannot pack a",
						src);
	}
	if (!o->rc && step != SQLITE_DONE)
		rows_failed(o, "read read-next candidates");
	if (!o->rc && cur >= 0)
		put_candidates(o, ins, cur, &blob);
	sqlite3_finalize(sel);
	sel = NULL;
	if (o->rc || rows_exec(o, "DROP TABLE computed"))
		goto out;
	if (sqlite3_prepare_v2(o->db, "INSERT INTO vocab VALUES(?,?,?)", -1, &voc, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(o->db, "INSERT INTO stems VALUES(?,?)", -1, &stem, NULL) != SQLITE_OK) {
		rows_failed(o, "prepare");
		goto out;
	}
	for (int i = 0; !o->rc && i < o->nvocab; i++) {
		sqlite3_bind_text(voc, 1, o->vocab[i].term, -1, SQLITE_STATIC);
		sqlite3_bind_int(voc, 2, o->vocab[i].df);
		sqlite3_bind_int(voc, 3, o->vocab[i].cf);
		if (sqlite3_step(voc) != SQLITE_DONE)
			rows_failed(o, "insert vocabulary");
		sqlite3_reset(voc);
	}
	for (int i = 0; !o->rc && i < o->nstems; i++) {
		sqlite3_bind_text(stem, 1, o->stems[i].term, -1, SQLITE_STATIC);
		sqlite3_bind_int(stem, 2, o->stems[i].df);
		if (sqlite3_step(stem) != SQLITE_DONE)
			rows_failed(o, "insert stem");
		sqlite3_reset(stem);
	}
	if (!o->rc)
		rows_exec(o, "COMMIT");
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	sqlite3_finalize(voc);
	sqlite3_finalize(stem);
	strbuf_free(&blob);
	return o->rc;
}

/* Closes the rows file and frees the vocabulary and the stems (kept: their counts). On a close
 * that fails sets o->rc unless already set. */
static void rows_close(out_ctx *o)
{
	sqlite3_finalize(o->row);
	sqlite3_finalize(o->term);
	o->row = o->term = NULL;
	if (o->db && sqlite3_close(o->db) != SQLITE_OK && !o->rc)
		o->rc = atlas_error_set(o->err, ATLAS_EIO, "%s: cannot close", o->path);
	o->db = NULL;
	for (int i = 0; i < o->nvocab; i++)
		free(o->vocab[i].term);
	free(o->vocab);
	o->vocab = NULL;
	for (int i = 0; i < o->nstems; i++)
		free(o->stems[i].term);
	free(o->stems);
	o->stems = NULL;
}

static void *run(void *arg)
{
	signals *s = arg;
	out_ctx *o = &s->o;
	size_t n = (size_t)s->c->npages + 1;
	float *link_in = malloc(n * sizeof(float)), *link_out = malloc(n * sizeof(float));
	o->fit = next_fit_new(s->c, s->id_of);
	if (!link_in || !link_out || !o->fit || link_weights(s->c, link_in, link_out))
		o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory for read-next candidates");
	s->ppr.link_in = link_in;
	s->ppr.link_out = link_out;
	if (!o->rc && !rows_open(o))
		graph_signals(o, s->c, s->id_of, link_in, link_out);
	if (!o->rc)
		topic_signals(o, s->c, s->id_of);
	if (!o->rc)
		text_signals(o, s->c, s->id_of, s->a, &s->ppr);
	if (!o->rc)
		ppr_signals(o, &s->ppr, s->id_of);
	ppr_free(&s->ppr);
	free(link_in);
	free(link_out);
	/* the blend's weights, learned from the guides' rows now all made */
	next_fit_result fit;
	if (!o->rc)
		o->rc = next_fit_run(o->fit, &fit, o->err);
	if (!o->rc)
		o->rc = next_fit_store(&fit, o->db, o->path, o->err);
	next_fit_free(o->fit);
	o->fit = NULL;
	/* last, when the other core is still indexing the pages' full text and this one is free */
	if (!o->rc)
		o->rc = fields_index_write(o->db, o->path, s->c, s->id_of, s->fields_hash, s->fields_merge,
					   o->err);
	if (!o->rc)
		rows_finish(o);
	rows_close(o);
	return NULL;
}

int signals_start(signals **out, sqlite3 *db, corpus *c, const int *id_of, const char *rows_path,
		  long long fields_hash, bool fields_merge, atlas_error *err)
{
	*out = NULL;
	signals *s = calloc(1, sizeof(*s));
	if (!s)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	if (!(s->rows_path = strdup(rows_path))) {
		free(s);
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	}
	unlink(rows_path);
	s->c = c;
	s->id_of = id_of;
	s->fields_hash = fields_hash;
	s->fields_merge = fields_merge;
	s->o.err = &s->err;
	s->o.path = s->rows_path;
	s->ppr.c = c;
	int rc = atlas_analyzer_new(&s->a, db, err);
	if (rc)
		goto fail_free;
	if (pthread_create(&s->thread, NULL, run, s)) {
		rc = atlas_error_set(err, ATLAS_ENOMEM, "cannot start the read-next computation");
		goto fail_analyzer;
	}
	*out = s;
	return 0;
fail_analyzer:
	atlas_analyzer_free(s->a);
fail_free:
	free(s->rows_path);
	free(s);
	return rc;
}

int signals_finish(signals *s, const char **rows_path, int *count, int *terms, atlas_error *err)
{
	*rows_path = NULL;
	*count = *terms = 0;
	if (!s->joined) {
		pthread_join(s->thread, NULL);
		s->joined = true;
	}
	if (s->o.rc)
		return atlas_error_set(err, s->o.rc, "%s", s->err.msg);
	*rows_path = s->rows_path;
	*count = s->o.nrows;
	*terms = s->o.nvocab;
	return 0;
}

void signals_free(signals *s)
{
	if (!s)
		return;
	if (!s->joined)
		pthread_join(s->thread, NULL);
	unlink(s->rows_path);
	free(s->rows_path);
	atlas_analyzer_free(s->a);
	free(s);
}
