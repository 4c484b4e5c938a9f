/* similar.c - the text's read-next signals: tf-idf vectors of every page (and, on the way, the
 * vocabulary and stems), and more-like-this candidates over truncated, impact-ordered lists. */
#include "signals_internal.h"
#include "error.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "stopwords.h"
#include "strbuf.h"
#include "strmap.h"
#include "topk.h"
#include "varint.h"
#include "grow.h"

#define SIMILAR_MAX 12        /* similar pages kept per page */
#define MLT_TERMS 30          /* terms of each page's vector used to find similar pages */
#define MLT_LIST 256          /* pages kept per term, strongest first, for finding them */

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

/* Counts one surface word or identifier of page v->doc. Returns its vocabulary index, or -1 when
 * it is not counted (shorter than 2 or longer than 40 bytes, or out of memory: v->oom set): an
 * index, not an error code. */
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
			int cap = atlas_grown_cap(v->capvocab, 8192);
			if (cap < 0 || atlas_resize(&v->vdf, (size_t)cap, sizeof(*v->vdf)) ||
			    atlas_resize(&v->vcf, (size_t)cap, sizeof(*v->vcf)) ||
			    atlas_resize(&v->vlast, (size_t)cap, sizeof(*v->vlast))) {
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
			int cap = atlas_grown_cap(v->capterms, 8192);
			if (cap < 0 || atlas_resize(&v->df, (size_t)cap, sizeof(*v->df)) ||
			    atlas_resize(&v->acc, (size_t)cap, sizeof(*v->acc)) ||
			    atlas_resize(&v->best_surface, (size_t)cap, sizeof(*v->best_surface))) {
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
		if (atlas_grow(&v->touched, &v->captouched, v->ntouched, sizeof(*v->touched), 1024)) {
			v->oom = 1;
			return 1;
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
 * and clears them in v->acc, counting each term's document frequency. Returns 0, or ATLAS_ENOMEM
 * when out of memory (r then empty). */
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
		return ATLAS_ENOMEM;
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

static int cmp_scored_desc(const void *a, const void *b)
{
	const scored *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->doc - y->doc;
}

int cmp_scored_ctx(const void *a, const void *b, void *ctx)
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

/* Frees what v holds (not v), leaving it empty (its maps' arena kept): freeing it again does
 * nothing. */
static void vec_ctx_free(vec_ctx *v)
{
	strmap_free(&v->terms);
	strmap_free(&v->vocab);
	free(v->vdf);
	free(v->vcf);
	free(v->vlast);
	free(v->best_surface);
	free(v->df);
	free(v->acc);
	free(v->touched);
	v->vdf = v->vcf = v->vlast = v->best_surface = v->df = v->touched = NULL;
	v->acc = NULL;
	v->nterms = v->capterms = v->nvocab = v->capvocab = v->ntouched = v->captouched = 0;
}

/* Pass 1: reads every page of c into v (weighted term frequencies, document frequencies, the
 * vocabulary), keeping each page's raw vector in raw[page] and releasing the page's bodies once
 * read. Returns 0, or ATLAS_ENOMEM when out of memory (v->oom set). */
static int read_vectors(vec_ctx *v, corpus *c, atlas_analyzer *a, raw_vec *raw)
{
	for (int pi = 0; pi < c->npages && !v->oom; pi++) {
		const page *p = &c->pages[pi];
		v->ntouched = 0;
		v->doc = pi;
		v->field_weight = 3.0f;
		vec_text(v, a, p->title, (int)strlen(p->title));
		for (int k = 0; k < p->nkeywords; k++)
			vec_text(v, a, p->keywords[k], (int)strlen(p->keywords[k]));
		for (int s = 0; s < p->nsecs; s++) {
			v->field_weight = 2.0f;
			if (s)
				vec_text(v, a, p->secs[s].heading, (int)strlen(p->secs[s].heading));
			v->field_weight = s == 0 ? 1.5f : 1.0f;
			vec_text(v, a, p->secs[s].body, (int)p->secs[s].body_len);
		}
		corpus_release_bodies(c, pi);
		if (raw_vec_keep(&raw[pi], v)) {
			v->oom = 1;
			break;
		}
	}
	return v->oom ? ATLAS_ENOMEM : 0;
}

/* Pass 2: each of the n pages' tf-idf vector from its raw one (v: the document frequencies),
 * normalized and truncated to its strongest MLT_TERMS terms into vecs[page] (nvec[page] terms,
 * owned by the caller); each raw vector is freed as soon as its truncated one is made. Returns 0,
 * or ATLAS_ENOMEM when out of memory. */
static int weigh_vectors(const vec_ctx *v, int n, raw_vec *raw, term_w **vecs, int *nvec)
{
	term_w *scratch = NULL;
	int capscratch = 0, rc = 0;
	for (int pi = 0; pi < n && !rc; pi++) {
		int nr = raw[pi].n;
		if (nr > capscratch) {
			term_w *t = realloc(scratch, (size_t)nr * sizeof(term_w));
			if (!t) {
				rc = ATLAS_ENOMEM;
				break;
			}
			scratch = t;
			capscratch = nr;
		}
		double norm = 0;
		for (int k = 0; k < nr; k++) {
			term_w *tw = &scratch[k];
			*tw = raw_vec_get(&raw[pi], k);
			double idf = log((double)n / v->df[tw->term]);
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
			rc = ATLAS_ENOMEM;
			break;
		}
		memcpy(vecs[pi], scratch, (size_t)nvec[pi] * sizeof(term_w));
		free(raw[pi].entries);
		raw[pi].entries = NULL;
	}
	free(scratch);
	return rc;
}

/* The inverted lists over the truncated vectors: for each term, the pages holding it (site pages
 * left out: they are never suggested, so walking the lists reads nothing but the lists and the
 * accumulators; a page's record, looked up for every posting, was a cache miss each time and most
 * of this step at 100,000 pages). */
typedef struct mlt_lists {
	int nterms;
	int *plen;        /* term -> postings in its list */
	posting **plist;  /* term -> its list */
	posting *cut;     /* term -> the last posting its truncated list keeps (doc -1: a whole list) */
} mlt_lists;

/* Frees what m holds (not m). */
static void mlt_lists_free(mlt_lists *m)
{
	for (int t = 0; m->plist && t < m->nterms; t++)
		free(m->plist[t]);
	free(m->plist);
	free(m->plen);
	free(m->cut);
}

/* Makes m, the lists of the nterms terms over the vectors of c's pages (vecs, nvec), each
 * impact-ordered and truncated to its MLT_LIST strongest pages, so that the work per page is
 * bounded (MLT_TERMS x MLT_LIST) however large the corpus grows. Returns 0, or ATLAS_ENOMEM when
 * out of memory (m then holds what mlt_lists_free frees). */
static int mlt_lists_make(mlt_lists *m, const corpus *c, int nterms, term_w *const *vecs, const int *nvec)
{
	int n = c->npages;
	m->nterms = nterms;
	m->plen = calloc((size_t)nterms + 1, sizeof(int));
	m->plist = calloc((size_t)nterms + 1, sizeof(posting *));
	m->cut = malloc(((size_t)nterms + 1) * sizeof(posting));
	if (!m->plen || !m->plist || !m->cut)
		return ATLAS_ENOMEM;
	for (int pi = 0; pi < n; pi++)
		for (int k = 0; k < nvec[pi] && c->pages[pi].type != ATLAS_TYPE_PAGE; k++)
			m->plen[vecs[pi][k].term]++;
	for (int t = 0; t < nterms; t++) {
		m->plist[t] = malloc((size_t)(m->plen[t] ? m->plen[t] : 1) * sizeof(posting));
		if (!m->plist[t])
			return ATLAS_ENOMEM;
		m->plen[t] = 0;
	}
	for (int pi = 0; pi < n; pi++)
		for (int k = 0; k < nvec[pi] && c->pages[pi].type != ATLAS_TYPE_PAGE; k++) {
			int t = vecs[pi][k].term;
			m->plist[t][m->plen[t]++] = (posting){ pi, vecs[pi][k].w };
		}
	for (int t = 0; t < nterms; t++) {
		m->cut[t] = (posting){ -1, 0 };
		if (m->plen[t] > MLT_LIST) {
			qsort(m->plist[t], (size_t)m->plen[t], sizeof(posting), cmp_posting_desc);
			m->plen[t] = MLT_LIST;
			m->cut[t] = m->plist[t][MLT_LIST - 1];
		}
	}
	return 0;
}

/* What finding one page's similar pages uses, made once for all the pages. */
typedef struct mlt_work {
	int *at;             /* term -> 1 + its place in the page's vector; 0 when not in it */
	float *score;        /* page -> its score as a candidate of the page */
	unsigned char *seen; /* page -> scored yet for the page */
	int *hit;            /* the pages scored, in the order met */
	scored *top;         /* the candidates, the best first once sorted */
	const char **names;  /* term -> its readable form (surface_names) */
	int *name_id;        /* term -> its similar_terms id, -1 until that row is written */
	int names_used;      /* similar_terms rows written */
	strbuf detail;       /* a candidate's detail */
} mlt_work;

/* Frees what w holds (not w). */
static void mlt_work_free(mlt_work *w)
{
	free(w->at);
	free(w->score);
	free(w->seen);
	free(w->hit);
	free(w->top);
	free(w->names);
	free(w->name_id);
	strbuf_free(&w->detail);
}

/* Makes w for the n pages and the terms of v. Returns 0, or ATLAS_ENOMEM when out of memory (w then
 * holds what mlt_work_free frees). */
static int mlt_work_make(mlt_work *w, vec_ctx *v, int n)
{
	w->at = calloc((size_t)v->nterms + 1, sizeof(int));
	w->score = calloc((size_t)n, sizeof(float));
	w->seen = calloc((size_t)n, 1);
	w->hit = malloc((size_t)n * sizeof(int));
	w->top = malloc((size_t)n * sizeof(scored));
	w->names = surface_names(v);
	w->name_id = malloc(((size_t)v->nterms + 1) * sizeof(int));
	w->names_used = 0;
	w->detail = (strbuf)STRBUF_INIT;
	if (!w->at || !w->score || !w->seen || !w->hit || !w->top || !w->names || !w->name_id)
		return ATLAS_ENOMEM;
	for (int t = 0; t < v->nterms; t++)
		w->name_id[t] = -1;
	return 0;
}

/* Scores every page whose list entries share a term of page pi's vector with it: the sum, in the
 * order of the page's vector, of the products of their weights; a float a page (400 KB at 100,000
 * pages: it stays in cache). Fills w->top with those scoring above 0, in the order met, and
 * returns how many. */
static int score_candidates(mlt_work *w, const mlt_lists *m, term_w *const *vecs, const int *nvec, int pi)
{
	int nhit = 0;
	for (int k = 0; k < nvec[pi]; k++) {
		const posting *list = m->plist[vecs[pi][k].term];
		int nl = m->plen[vecs[pi][k].term];
		for (int j = 0; j < nl; j++) {
			int d = list[j].doc;
			if (d == pi)
				continue;
			if (!w->seen[d]) {
				w->seen[d] = 1;
				w->hit[nhit++] = d;
			}
			float contrib = vecs[pi][k].w * list[j].w;
			w->score[d] += contrib;
		}
	}
	int ntop = 0;
	for (int h = 0; h < nhit; h++) {
		int d = w->hit[h];
		if (w->score[d] > 0)
			w->top[ntop++] = (scored){ d, w->score[d], { -1, -1, -1 }, { 0, 0, 0 } };
		w->score[d] = 0;
		w->seen[d] = 0;
	}
	return ntop;
}

/* Finds the three terms (at most) of page pi's vector that contribute most to candidate s's score,
 * among those both pages weigh and whose list holds the candidate, into s->t and s->tw, ranked in
 * the order of the page's vector (w->at: the places of its terms). Only the dozen best candidates
 * get them: kept for every candidate as it was scored (36 bytes a page, a cache miss a posting),
 * they were most of this step at 100,000 pages. */
static void best_shared_terms(scored *s, const mlt_work *w, const mlt_lists *m, term_w *const *vecs,
			      const int *nvec, int pi)
{
	float contrib[MLT_TERMS];
	bool shared[MLT_TERMS] = { false };
	for (int e = 0; e < nvec[s->doc]; e++) {
		term_w tw = vecs[s->doc][e];
		int k = w->at[tw.term] - 1;
		if (k < 0 || !kept_in_list(&m->cut[tw.term], s->doc, tw.w))
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
}

/* Emits candidate s of page pi, its detail the shared terms by the ids of their similar_terms rows
 * (each row written the first time its term is named). On failure sets o->rc. */
static void emit_similar(out_ctx *o, mlt_work *w, const scored *s, int pi, const int *id_of)
{
	strbuf_reset(&w->detail);
	for (int r = 0; r < 3 && s->t[r] >= 0 && !o->rc; r++) {
		int t = s->t[r];
		if (w->name_id[t] < 0 && put_similar_term(o, w->names_used, w->names[t]) == 0)
			w->name_id[t] = w->names_used++;
		if (w->name_id[t] >= 0 && atlas_varint_put(&w->detail, (unsigned)w->name_id[t]))
			o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory for read-next candidates");
	}
	emit_bytes(o, id_of[pi], id_of[s->doc], NEXT_SIMILAR, s->score, w->detail.buf, (int)w->detail.len);
}

/* Emits the similar pages of page pi: every candidate scored, the SIMILAR_MAX best (of thousands)
 * sorted and emitted with their shared terms. On failure sets o->rc. */
static void similar_of_page(out_ctx *o, mlt_work *w, const mlt_lists *m, term_w *const *vecs,
			    const int *nvec, int pi, const int *id_of)
{
	int ntop = score_candidates(w, m, vecs, nvec, pi);
	atlas_best_first(w->top, (size_t)ntop, SIMILAR_MAX, sizeof(scored), cmp_scored_ctx, NULL);
	for (int k = 0; k < nvec[pi]; k++)
		w->at[vecs[pi][k].term] = k + 1;
	for (int i = 0; i < ntop && i < SIMILAR_MAX; i++) {
		best_shared_terms(&w->top[i], w, m, vecs, nvec, pi);
		emit_similar(o, w, &w->top[i], pi, id_of);
	}
	for (int k = 0; k < nvec[pi]; k++)
		w->at[vecs[pi][k].term] = 0;
}

void text_signals(out_ctx *o, corpus *c, const int *id_of, atlas_analyzer *a, ppr_job *job)
{
	int n = c->npages;
	vec_ctx v;
	memset(&v, 0, sizeof(v));
	mlt_lists m;
	memset(&m, 0, sizeof(m));
	mlt_work w;
	memset(&w, 0, sizeof(w));
	/* the words and stems in o's arena: the vocab and stems rows are made of them, and kept */
	v.terms.arena = v.vocab.arena = &o->words;
	raw_vec *raw = calloc((size_t)n, sizeof(raw_vec));
	term_w **vecs = calloc((size_t)n, sizeof(term_w *));
	int *nvec = calloc((size_t)n, sizeof(int));
	if (!raw || !vecs || !nvec || read_vectors(&v, c, a, raw)) {
		v.oom = 1;
		goto out;
	}
	ppr_start(job);
	if (weigh_vectors(&v, n, raw, vecs, nvec) || mlt_lists_make(&m, c, v.nterms, vecs, nvec) ||
	    mlt_work_make(&w, &v, n)) {
		v.oom = 1;
		goto out;
	}
	/* the terms' names taken, the maps are done with: their slots become the sorted rows */
	int rc = vocab_rows_take(&o->vocab, &o->nvocab, &v.vocab, v.vdf, v.vcf, "the vocabulary", o->err);
	if (rc)
		o->rc = rc;
	rc = vocab_rows_take(&o->stems, &o->nstems, &v.terms, v.df, NULL, "the stems", o->err);
	if (rc)
		o->rc = rc;
	/* the counts are in the rows and the names in w: nothing of v is read from here on */
	vec_ctx_free(&v);
	for (int pi = 0; pi < n && !o->rc; pi++)
		if (c->pages[pi].type != ATLAS_TYPE_PAGE)
			similar_of_page(o, &w, &m, vecs, nvec, pi, id_of);
out:
	mlt_work_free(&w);
	mlt_lists_free(&m);
	for (int pi = 0; vecs && pi < n; pi++)
		free(vecs[pi]);
	for (int pi = 0; raw && pi < n; pi++)
		free(raw[pi].entries);
	free(raw);
	free(vecs);
	free(nvec);
	vec_ctx_free(&v);
	if (v.oom && !o->rc)
		o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory computing similar pages");
}
