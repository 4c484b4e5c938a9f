/* next_fit.c - the read-next blend's weights fitted on the site's guides: coordinate ascent on the
 * mean reciprocal rank of each guide step's next step, that guide's own rows left out. */
#include "next_fit.h"
#include "grow.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../query/rank.h"

#define FIT_DEPTH 50 /* a next step ranked lower counts as a miss, as in the evaluation */

typedef struct fit_row {
	int src, dst, guide;
	int signal;
	float w;
} fit_row;

typedef struct route {
	int guide;   /* the guide's doc id */
	int *steps;  /* doc ids, in reading order */
	int nsteps;
} route;

/* One contribution to a case's candidate: weight[signal] x w (x the context weight when ctx). */
typedef struct entry {
	int cand;    /* the case's own candidate number */
	int signal;
	float w;
	bool ctx;
} entry;

typedef struct fit_case {
	int first, n;     /* entries[first .. first + n) */
	int cfirst, m;    /* its candidates' kinds: kind[cfirst .. cfirst + m) */
	int target;       /* the next step's candidate number, or -1 when no row reaches it */
	bool link;        /* a link's case (its target the link's), not a guide step's */
} fit_case;

struct next_fit {
	int maxid;
	unsigned char *wanted;   /* by doc id: a guide's step */
	unsigned char *type;     /* by doc id: enum atlas_page_type */
	route *routes;
	int nroutes;
	fit_row *rows;
	int nrows, caprows;
	int (*links)[2];         /* the links learned from too: (source, target) doc ids */
	int nlinks;
};

/* Appends to a growing array *a of *n of cap *cap elements of size sz; returns the new slot or
 * NULL when out of memory. */
static void *grow(void *a, int *n, int *cap, size_t sz)
{
	if (atlas_grow(a, cap, *n, sz, 1024))
		return NULL;
	char *p;
	memcpy(&p, a, sizeof(p));
	return p + (size_t)(*n)++ * sz;
}

next_fit *next_fit_new(const corpus *c, const int *id_of)
{
	next_fit *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	for (int i = 0; i < c->npages; i++)
		if (id_of[i] > f->maxid)
			f->maxid = id_of[i];
	f->wanted = calloc((size_t)f->maxid + 1, 1);
	f->type = calloc((size_t)f->maxid + 1, 1);
	f->routes = calloc((size_t)c->npages + 1, sizeof(route));
	if (!f->wanted || !f->type || !f->routes)
		goto oom;
	char path[1100];
	for (int i = 0; i < c->npages; i++) {
		const page *g = &c->pages[i];
		f->type[id_of[i]] = (unsigned char)g->type;
		if (g->type != ATLAS_TYPE_GUIDE)
			continue;
		int total = 0;
		for (int s = 0; s < g->ngsecs; s++)
			total += g->gsecs[s].nsteps;
		route *r = &f->routes[f->nroutes];
		r->guide = id_of[i];
		r->steps = malloc((size_t)(total ? total : 1) * sizeof(int));
		if (!r->steps)
			goto oom;
		f->nroutes++;
		for (int s = 0; s < g->ngsecs; s++)
			for (int k = 0; k < g->gsecs[s].nsteps; k++) {
				snprintf(path, sizeof(path), "/%s", g->gsecs[s].steps[k]);
				int *at = strmap_get(&c->page_index, path);
				if (!at)
					continue;
				r->steps[r->nsteps++] = id_of[*at];
				f->wanted[id_of[*at]] = 1;
			}
	}
	/* every k-th link between explainers, up to NEXT_FIT_MAX_LINKS */
	long total = 0;
	for (int i = 0; i < c->npages; i++)
		if (c->pages[i].type == ATLAS_TYPE_EXPLAINER)
			total += c->pages[i].nlinks;
	long stride = total > NEXT_FIT_MAX_LINKS ? (total + NEXT_FIT_MAX_LINKS - 1) / NEXT_FIT_MAX_LINKS : 1, at = 0;
	f->links = malloc((size_t)(total < NEXT_FIT_MAX_LINKS ? total + 1 : NEXT_FIT_MAX_LINKS + 1) * sizeof(*f->links));
	if (!f->links)
		goto oom;
	for (int i = 0; i < c->npages; i++) {
		const page *p = &c->pages[i];
		for (int k = 0; p->type == ATLAS_TYPE_EXPLAINER && k < p->nlinks; k++, at++) {
			int *t = strmap_get(&c->page_index, p->links[k].target);
			if (at % stride || !t || *t == i || c->pages[*t].type != ATLAS_TYPE_EXPLAINER ||
			    f->nlinks >= NEXT_FIT_MAX_LINKS)
				continue;
			f->links[f->nlinks][0] = id_of[i];
			f->links[f->nlinks][1] = id_of[*t];
			f->nlinks++;
			f->wanted[id_of[i]] = 1;
		}
	}
	return f;
oom:
	next_fit_free(f);
	return NULL;
}

bool next_fit_wants(const next_fit *f, int src)
{
	return f && src > 0 && src <= f->maxid && f->wanted[src];
}

int next_fit_add(next_fit *f, int src, int dst, int signal, double weight, int guide)
{
	if (!next_fit_wants(f, src) || dst <= 0 || dst > f->maxid)
		return 0;
	fit_row *r = grow(&f->rows, &f->nrows, &f->caprows, sizeof(fit_row));
	if (!r)
		return ATLAS_ENOMEM;
	*r = (fit_row){ src, dst, guide, signal, (float)weight };
	return 0;
}

static int cmp_row_src(const void *a, const void *b)
{
	const fit_row *x = a, *y = b;
	return x->src != y->src ? (x->src < y->src ? -1 : 1) : (x < y ? -1 : x > y);
}

/* Whether rows of signal s name the page whose order they come from (a guide, a list's page),
 * which a case of that guide does not see. */
static bool guide_signal(int s)
{
	return s == NEXT_GUIDE_NEXT || s == NEXT_GUIDE_PREV || s == NEXT_GUIDE_START || s == NEXT_GUIDE_AFTER ||
	       s == NEXT_LIST_NEXT;
}

/* The training set made flat: every case's entries, candidates and target. */
typedef struct fit_set {
	fit_case *cases;
	int ncases, capcases;
	entry *entries;
	int nentries, capentries;
	unsigned char *kind; /* a candidate's type: KIND_PAGE, KIND_TOPIC or KIND_GUIDE */
	int nkind, capkind;
	int guides, links;
} fit_set;

/* How a set of weights does: on the guides' next steps, and on the links. */
typedef struct fit_score {
	double mrr, hit3;        /* the guides' */
	double links_mrr;
} fit_score;

/* A candidate's kind in the fit: its type factor's index (explainers 1, topic pages and guides
 * their fitted factors). */
enum { KIND_PAGE, KIND_TOPIC, KIND_GUIDE };

static unsigned char kind_of(int type)
{
	return type == ATLAS_TYPE_TOPIC ? KIND_TOPIC : type == ATLAS_TYPE_GUIDE ? KIND_GUIDE : KIND_PAGE;
}

/* Whether page b follows page a in route g. */
static bool consecutive(const route *g, int a, int b)
{
	for (int i = 0; i + 1 < g->nsteps; i++)
		if (g->steps[i] == a)
			return g->steps[i + 1] == b;
	return false;
}

/* Adds the rows of page src (rows[start[src] .. start[src + 1])) to the case being made, scaled by
 * scale, leaving out route g's own rows, the lists that are its table of contents (toc[page] set:
 * a listing page whose list repeats at least half of the route's order, which a route not yet
 * known to the index would not have; where a route is known, its guide rows say the same), and
 * the excluded pages (local[dst] == -2). A list that agrees with the route only in part (a
 * topic's list, a table of some of its pages) stays: such a list is what places a route's next
 * step. local maps a doc id to the case's candidate number (-1: none yet), touched lists those
 * set. Returns 0 or ATLAS_ENOMEM. */
static int case_rows(fit_set *s, const next_fit *f, const int *start, int src, const route *g, float scale,
		     bool ctx, const unsigned char *toc, int *local, int *touched, int *nt)
{
	fit_case *c = &s->cases[s->ncases - 1];
	for (int k = start[src]; k < start[src + 1]; k++) {
		const fit_row *r = &f->rows[k];
		/* the route's own rows; and its pages' rel=next rows (every source here is one of its
		 * steps): the links the route is made of, gone where the route is not known */
		if ((guide_signal(r->signal) && r->guide == g->guide) || r->signal == NEXT_PAGE_NEXT ||
		    local[r->dst] == -2)
			continue;
		if (r->signal == NEXT_LIST_NEXT && r->guide > 0 && r->guide <= f->maxid && toc[r->guide] &&
		    consecutive(g, src, r->dst))
			continue;
		int t = f->type[r->dst];
		if (t == ATLAS_TYPE_PAGE)
			continue;
		if (local[r->dst] < 0) {
			unsigned char *m = grow(&s->kind, &s->nkind, &s->capkind, 1);
			if (!m)
				return ATLAS_ENOMEM;
			*m = kind_of(t);
			local[r->dst] = c->m++;
			touched[(*nt)++] = r->dst;
		}
		entry *e = grow(&s->entries, &s->nentries, &s->capentries, sizeof(entry));
		if (!e)
			return ATLAS_ENOMEM;
		*e = (entry){ local[r->dst], r->signal, r->w * scale, ctx };
		c->n++;
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->cand != y->cand)
		return x->cand < y->cand ? -1 : 1;
	if (x->ctx != y->ctx)
		return x->ctx ? 1 : -1;
	return x->signal < y->signal ? -1 : x->signal > y->signal;
}

/* Merges the entries of the last case of s that add to the same candidate by the same signal (and
 * both of the context or not), their strengths summed: the same scores, read in fewer steps. */
static void merge_entries(fit_set *s)
{
	fit_case *c = &s->cases[s->ncases - 1];
	if (c->n == 0)
		return; /* nothing to merge, and entries may be NULL */
	entry *e = s->entries + c->first;
	qsort(e, (size_t)c->n, sizeof(entry), cmp_entry);
	int out = 0;
	for (int k = 0; k < c->n; k++) {
		if (out && e[out - 1].cand == e[k].cand && e[out - 1].ctx == e[k].ctx &&
		    e[out - 1].signal == e[k].signal)
			e[out - 1].w += e[k].w;
		else
			e[out++] = e[k];
	}
	s->nentries -= c->n - out;
	c->n = out;
}

/* Makes the training set of f (its rows sorted by source). Returns 0 or ATLAS_ENOMEM. Longer than
 * 120 lines: one pass over the routes that finds each route's listing pages and fills its cases,
 * sharing six scratch arrays by page and one cleanup label. */
static int make_set(fit_set *s, next_fit *f)
{
	int n = f->maxid + 2;
	int *start = calloc((size_t)n, sizeof(int));
	int *local = malloc((size_t)n * sizeof(int));
	int *touched = malloc((size_t)n * sizeof(int));
	int *agree = calloc((size_t)n, sizeof(int));         /* by listing page: the route's pairs it lists */
	unsigned char *toc = calloc((size_t)n, 1);          /* by listing page: the route's table of contents */
	int *listers = malloc((size_t)n * sizeof(int)), nlisters = 0;
	int rc = ATLAS_ENOMEM;
	if (!start || !local || !touched || !agree || !toc || !listers)
		goto out;
	if (f->nrows) /* rows is NULL when there are none */
		qsort(f->rows, (size_t)f->nrows, sizeof(fit_row), cmp_row_src);
	for (int k = 0; k < f->nrows; k++)
		start[f->rows[k].src + 1]++;
	for (int i = 1; i < n; i++)
		start[i] += start[i - 1];
	for (int i = 0; i < n; i++)
		local[i] = -1;
	/* every k-th guide when all of them would pass NEXT_FIT_MAX_CASES */
	long total = 0;
	for (int g = 0; g < f->nroutes; g++)
		total += f->routes[g].nsteps > 1 ? f->routes[g].nsteps - 1 : 0;
	int stride = total > NEXT_FIT_MAX_CASES ? (int)((total + NEXT_FIT_MAX_CASES - 1) / NEXT_FIT_MAX_CASES) : 1;
	for (int g = 0; g < f->nroutes; g += stride) {
		const route *r = &f->routes[g];
		bool used = false;
		/* the listing pages whose lists repeat at least half of the route's order */
		nlisters = 0;
		for (int i = 0; i + 1 < r->nsteps; i++)
			for (int k = start[r->steps[i]]; k < start[r->steps[i] + 1]; k++) {
				const fit_row *w = &f->rows[k];
				if (w->signal != NEXT_LIST_NEXT || w->dst != r->steps[i + 1] || w->guide <= 0 ||
				    w->guide > f->maxid)
					continue;
				if (agree[w->guide]++ == 0)
					listers[nlisters++] = w->guide;
			}
		for (int k = 0; k < nlisters; k++)
			toc[listers[k]] = 2 * agree[listers[k]] >= r->nsteps - 1;
		for (int i = 0; i + 1 < r->nsteps; i++) {
			int src = r->steps[i], tgt = r->steps[i + 1];
			bool again = tgt == src;
			for (int k = 0; k < i && !again; k++)
				again = r->steps[k] == tgt;
			if (again)
				continue;
			fit_case *c = grow(&s->cases, &s->ncases, &s->capcases, sizeof(fit_case));
			if (!c)
				goto out;
			*c = (fit_case){ s->nentries, 0, s->nkind, 0, -1, false };
			int nt = 0;
			/* read: the steps before, and this one */
			for (int k = 0; k <= i; k++) {
				local[r->steps[k]] = -2;
				touched[nt++] = r->steps[k];
			}
			if (case_rows(s, f, start, src, r, 1.0f, false, toc, local, touched, &nt))
				goto out;
			float scale = 1.0f;
			for (int d = 1; d <= NEXT_CONTEXT_PAGES && i - d >= 0; d++) {
				if (case_rows(s, f, start, r->steps[i - d], r, scale, true, toc, local, touched, &nt))
					goto out;
				scale *= 0.5f;
			}
			merge_entries(s);
			c = &s->cases[s->ncases - 1];
			c->target = local[tgt] >= 0 ? local[tgt] : -1;
			for (int k = 0; k < nt; k++)
				local[touched[k]] = -1;
			used = true;
		}
		for (int k = 0; k < nlisters; k++)
			agree[listers[k]] = toc[listers[k]] = 0;
		s->guides += used;
	}
	/* the links, for the figures: each target ranked among its source's candidates but its own
	 * (the link, the graph it makes, its place in the source's list) */
	for (int l = 0; l < f->nlinks; l++) {
		int src = f->links[l][0], tgt = f->links[l][1];
		fit_case *c = grow(&s->cases, &s->ncases, &s->capcases, sizeof(fit_case));
		if (!c)
			goto out;
		*c = (fit_case){ s->nentries, 0, s->nkind, 0, -1, true };
		int nt = 0;
		local[src] = -2;
		touched[nt++] = src;
		for (int k = start[src]; k < start[src + 1]; k++) {
			const fit_row *r = &f->rows[k];
			if (local[r->dst] == -2 || f->type[r->dst] == ATLAS_TYPE_PAGE)
				continue;
			if (r->dst == tgt && (r->signal == NEXT_LINK_OUT || r->signal == NEXT_GRAPH ||
					      (r->signal == NEXT_LIST_NEXT && r->guide == src)))
				continue;
			if (local[r->dst] < 0) {
				unsigned char *m = grow(&s->kind, &s->nkind, &s->capkind, 1);
				if (!m)
					goto out;
				*m = kind_of(f->type[r->dst]);
				c = &s->cases[s->ncases - 1];
				local[r->dst] = c->m++;
				touched[nt++] = r->dst;
			}
			entry *e = grow(&s->entries, &s->nentries, &s->capentries, sizeof(entry));
			if (!e)
				goto out;
			*e = (entry){ local[r->dst], r->signal, r->w, false };
			s->cases[s->ncases - 1].n++;
		}
		merge_entries(s);
		c = &s->cases[s->ncases - 1];
		c->target = local[tgt] >= 0 ? local[tgt] : -1;
		for (int k = 0; k < nt; k++)
			local[touched[k]] = -1;
		s->links++;
	}
	rc = 0;
out:
	free(start);
	free(local);
	free(touched);
	free(agree);
	free(toc);
	free(listers);
	return rc;
}

/* How weights w do on the cases of s (the links' too when links is set, else their MRR is 0); acc
 * has room for the most candidates of a case. */
static fit_score evaluate(const fit_set *s, const double *w, float *acc, bool links)
{
	double rr[2] = { 0, 0 };
	int h3 = 0, n[2] = { 0, 0 };
	float ws[2][NEXT_NWEIGHTS]; /* a signal's weight, in the context or not */
	for (int k = 0; k < NEXT_NWEIGHTS; k++) {
		ws[0][k] = (float)w[k];
		ws[1][k] = (float)(w[k] * w[NEXT_W_CONTEXT_INDEX]);
	}
	const float factor[3] = { 1.0f, (float)w[NEXT_W_TYPE_TOPIC_INDEX], (float)w[NEXT_W_TYPE_GUIDE_INDEX] };
	for (int ci = 0; ci < s->ncases; ci++) {
		const fit_case *c = &s->cases[ci];
		if (c->link && !links)
			continue;
		n[c->link]++;
		if (c->target < 0)
			continue;
		for (int k = 0; k < c->m; k++)
			acc[k] = 0;
		const entry *e = s->entries + c->first;
		for (int k = 0; k < c->n; k++)
			acc[e[k].cand] += ws[e[k].ctx][e[k].signal] * e[k].w;
		const unsigned char *kind = s->kind + c->cfirst;
		float t = acc[c->target] * factor[kind[c->target]];
		if (t <= 0)
			continue;
		int above = 0, ties = 0;
		for (int k = 0; k < c->m; k++) {
			float v = acc[k] * factor[kind[k]];
			above += v > t;
			ties += v == t && k != c->target;
		}
		double rank = 1 + above + ties / 2.0;
		if (rank <= FIT_DEPTH)
			rr[c->link] += 1 / rank;
		h3 += !c->link && rank <= 3;
	}
	fit_score sc;
	sc.mrr = n[0] ? rr[0] / n[0] : 0;
	sc.hit3 = n[0] ? (double)h3 / n[0] : 0;
	sc.links_mrr = n[1] ? rr[1] / n[1] : 0;
	return sc;
}

int next_fit_run(next_fit *f, next_fit_result *out, atlas_error *err)
{
	static const double grid[] = NEXT_FIT_GRID;
	static const int fitted[] = { NEXT_LINK_OUT, NEXT_LINK_IN, NEXT_BUILDS_ON, NEXT_PREREQ, NEXT_TOPIC,
				      NEXT_SIMILAR, NEXT_GRAPH, NEXT_GUIDE_NEXT, NEXT_GUIDE_PREV,
				      NEXT_GUIDE_AFTER, NEXT_LIST_NEXT, NEXT_TOPIC_NEXT, NEXT_NUMBER_NEXT, NEXT_TOPIC_AFTER,
				      NEXT_W_CONTEXT_INDEX, NEXT_W_TYPE_TOPIC_INDEX, NEXT_W_TYPE_GUIDE_INDEX };
	memset(out, 0, sizeof(*out));
	next_weights_defaults(out->w);
	fit_set s;
	memset(&s, 0, sizeof(s));
	float *acc = NULL;
	int rc = make_set(&s, f);
	if (!rc) {
		int most = 1;
		for (int i = 0; i < s.ncases; i++)
			most = s.cases[i].m > most ? s.cases[i].m : most;
		acc = malloc((size_t)most * sizeof(float));
		rc = acc ? 0 : ATLAS_ENOMEM;
	}
	if (rc) {
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory fitting the read-next weights");
		goto out;
	}
	out->guides = s.guides;
	out->cases = s.ncases - s.links;
	out->links = s.links;
	fit_score best = evaluate(&s, out->w, acc, false), dflt = evaluate(&s, out->w, acc, true);
	if (s.guides < NEXT_FIT_MIN_GUIDES || out->cases < NEXT_FIT_MIN_CASES)
		goto figures;
	double w[NEXT_NWEIGHTS];
	memcpy(w, out->w, sizeof(w));
	/* the file names' order is taken up only where the site's own routes show it: the ascent
	 * starts without it (a site too small to fit gets the default, the fitted sites' median) */
	w[NEXT_TOPIC_AFTER] = NEXT_FIT_START_TOPIC_AFTER;
	best = evaluate(&s, w, acc, false);
	for (int round = 0; round < NEXT_FIT_ROUNDS; round++) {
		bool moved = false;
		for (size_t p = 0; p < sizeof(fitted) / sizeof(fitted[0]); p++) {
			double keep = w[fitted[p]];
			for (size_t g = 0; g < sizeof(grid) / sizeof(grid[0]); g++) {
				if (grid[g] == keep)
					continue;
				w[fitted[p]] = grid[g];
				fit_score sc = evaluate(&s, w, acc, false);
				/* a strict gain only: of equal fits the earlier (the defaults first) stays */
				if (sc.mrr > best.mrr + 1e-9) {
					best = sc;
					keep = grid[g];
					moved = true;
				}
			}
			w[fitted[p]] = keep;
		}
		if (!moved)
			break;
	}
	if (best.mrr > dflt.mrr) {
		memcpy(out->w, w, sizeof(w));
		out->fitted = true;
		best = evaluate(&s, w, acc, true);
	}
figures:
	out->mrr_default = dflt.mrr;
	out->hit3_default = dflt.hit3;
	out->links_mrr_default = dflt.links_mrr;
	out->mrr_fitted = best.mrr;
	out->hit3_fitted = best.hit3;
	out->links_mrr_fitted = best.links_mrr;
out:
	free(acc);
	free(s.cases);
	free(s.entries);
	free(s.kind);
	return rc;
}

/* Writes one key/value row. Returns 0 or ATLAS_ESQL with err set. */
static int put(sqlite3 *db, sqlite3_stmt *st, const char *path, const char *key, const char *value,
	       atlas_error *err)
{
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0
		 : atlas_error_set(err, ATLAS_ESQL, "%s: insert read-next weights: %s", path, sqlite3_errmsg(db));
	sqlite3_reset(st);
	return rc;
}

int next_fit_store(const next_fit_result *r, sqlite3 *db, const char *path, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "INSERT INTO next_fit VALUES(?,?)", -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "%s: prepare: %s", path, sqlite3_errmsg(db));
	char key[64], value[64];
	int rc = 0;
	for (int k = 0; !rc && k < NEXT_NWEIGHTS; k++) {
		const char *name = next_weight_name(k);
		snprintf(key, sizeof(key), "w:%s", name);
		snprintf(value, sizeof(value), "%.17g", r->w[k]);
		rc = put(db, st, path, key, value, err);
	}
	struct { const char *key; double v; bool integer; } figs[] = {
		{ "guides", r->guides, true }, { "cases", r->cases, true }, { "links", r->links, true },
		{ "links_mrr_default", r->links_mrr_default, false },
		{ "links_mrr_fitted", r->links_mrr_fitted, false },
		{ "mrr_default", r->mrr_default, false }, { "hit3_default", r->hit3_default, false },
		{ "mrr_fitted", r->mrr_fitted, false }, { "hit3_fitted", r->hit3_fitted, false },
	};
	for (size_t k = 0; !rc && k < sizeof(figs) / sizeof(figs[0]); k++) {
		snprintf(value, sizeof(value), figs[k].integer ? "%.0f" : "%.4f", figs[k].v);
		rc = put(db, st, path, figs[k].key, value, err);
	}
	if (!rc)
		rc = put(db, st, path, "weights", r->fitted ? "fitted" : "defaults", err);
	sqlite3_finalize(st);
	return rc;
}

void next_fit_free(next_fit *f)
{
	if (!f)
		return;
	for (int i = 0; f->routes && i < f->nroutes; i++)
		free(f->routes[i].steps);
	free(f->routes);
	free(f->wanted);
	free(f->type);
	free(f->rows);
	free(f->links);
	free(f);
}
