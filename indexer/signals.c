/* signals.c - "read next" candidates: the read-next thread, the rows file it writes, and the
 * signals of guide order, links and prerequisites, shared topics and personalized PageRank over
 * the page graph (the text's, more-like-this, are similar.c's). */
#include "signals.h"
#include "signals_internal.h"

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
#include "grow.h"
#include "next_fit.h"
#include "schema.h"
#include "stopwords.h"
#include "strbuf.h"
#include "strmap.h"
#include "topk.h"
#include "varint.h"
#include "vocab_tables.h"
#include "../query/rank.h"

/* Candidates kept per page for the signals that could otherwise grow with the corpus. */
#define TOPIC_MATES_MAX 12
#define TOPIC_ALL_MAX 40      /* a topic this small: every member is a mate of every other */
#define GRAPH_MAX 10
#define PPR_ALPHA 0.15        /* restart probability */
#define PPR_EPSILON 1e-4      /* push threshold, relative to out-degree */
#define WORDS_BLOCK (64 << 10) /* the vocabulary's words are kept in blocks of this many bytes */

/**************************************************************************************************
** Output rows.
*/


/* Sets o->rc from the rows file's last error, with what was being done. Returns o->rc. */
static int rows_failed(out_ctx *o, const char *what)
{
	o->rc = atlas_sql_error(o->err, o->db, o->path, what, NULL);
	return o->rc;
}

/* Runs sql on the rows file; returns 0 or o->rc, set. */
static int rows_exec(out_ctx *o, const char *sql)
{
	return sqlite3_exec(o->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : rows_failed(o, "write");
}

/* Records one candidate (self and unknown pages dropped) with a detail of n bytes; signal is a
 * NEXT_* code. On failure sets o->rc. */
void emit_bytes(out_ctx *o, int src, int dst, int signal, double weight, const void *detail, int n)
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
int put_similar_term(out_ctx *o, int id, const char *name)
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
	return p->type == ATLAS_TYPE_EXPLAINER || p->type == ATLAS_TYPE_GUIDE;
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
		if (g->type != ATLAS_TYPE_GUIDE)
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
		for (int k = 0; p->type != ATLAS_TYPE_TOPIC && k < p->nlinks; k++) {
			int t = page_of(c, p->links[k].target);
			if (t < 0 || t == pi || seen[t] == pi + 1)
				continue;
			seen[t] = pi + 1; /* once per target */
			/* no reason shows its text */
			emit(o, id_of[pi], id_of[t], NEXT_LINK_OUT, link_in[t], "");
			if (p->type != ATLAS_TYPE_PAGE)
				emit(o, id_of[t], id_of[pi], NEXT_LINK_IN, link_out[pi], "");
		}
		/* the order of a page's links: a table of contents, a topic's list, a guide's
		 * introduction, the pages a text names one after another (those marked "|m": not
		 * both in a list, named in that order by the prose) */
		int last = -1, pos = 0;
		bool last_listed = false;
		for (int k = 0; p->type != ATLAS_TYPE_PAGE && k < p->nlinks; k++) {
			int t = page_of(c, p->links[k].target);
			if (t < 0 || t == pi || t == last || c->pages[t].type == ATLAS_TYPE_PAGE ||
			    c->pages[t].type == ATLAS_TYPE_TOPIC)
				continue;
			pos++;
			if (last >= 0) {
				snprintf(detail, sizeof(detail), "%d|%d%s", id_of[pi], pos,
					 last_listed && p->links[k].listed ? "" : "|m");
				emit(o, id_of[last], id_of[t], NEXT_LIST_NEXT, 1.0, detail);
			}
			last = t;
			last_listed = p->links[k].listed;
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

/* The folder of path p ("/a/b.html" -> "/a/", "/b.html" -> "/") into out. */
static void folder_of(const char *p, char *out, size_t n)
{
	const char *slash = strrchr(p, '/');
	size_t l = slash ? (size_t)(slash - p) + 1 : 0;
	snprintf(out, n, "%.*s", (int)l, p);
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(g_c->pages[*(const int *)a].path, g_c->pages[*(const int *)b].path);
}

/* Explainers in no topic (a built site's pages right below its top page) are ordered by path
 * within their folder: the page after each is its topic_after row (a book whose file names follow
 * its chapters: ch01, ch02), named by the title of the folder's page (else the folder). */
static void folder_order(out_ctx *o, const corpus *c, const int *id_of)
{
	int *members = malloc((size_t)(c->npages + 1) * sizeof(int));
	if (!members)
		return;
	int n = 0;
	for (int pi = 0; pi < c->npages; pi++)
		if (c->pages[pi].type == ATLAS_TYPE_EXPLAINER && c->pages[pi].ntopics == 0)
			members[n++] = pi;
	g_c = c;
	qsort(members, (size_t)n, sizeof(int), cmp_path);
	char fa[1100], fb[1200], named[1100];
	for (int i = 0; i + 1 < n && !o->rc; i++) {
		folder_of(c->pages[members[i]].path, fa, sizeof(fa));
		folder_of(c->pages[members[i + 1]].path, fb, sizeof(fb));
		if (strcmp(fa, fb) != 0)
			continue;
		int fp = page_of(c, fa);
		if (fp < 0) {
			snprintf(fb, sizeof(fb), "%.1100sindex.html", fa);
			fp = page_of(c, fb);
		}
		snprintf(named, sizeof(named), "%s", fp >= 0 ? c->pages[fp].title : fa);
		emit(o, id_of[members[i]], id_of[members[i + 1]], NEXT_TOPIC_AFTER, 1.0, named);
	}
	free(members);
}

/* A built site's own reading order: each page's rel=next page, when it is one read next may
 * suggest (an explainer, a guide or a topic page, not a site page). */
static void page_next_signals(out_ctx *o, const corpus *c, const int *id_of)
{
	for (int pi = 0; c->page_next && pi < c->npages && !o->rc; pi++) {
		int nx = c->page_next[pi];
		if (nx >= 0 && nx != pi && c->pages[nx].type != ATLAS_TYPE_PAGE)
			emit(o, id_of[pi], id_of[nx], NEXT_PAGE_NEXT, 1.0, NULL);
	}
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
			if (p->type != ATLAS_TYPE_EXPLAINER)
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
		/* on a built site, the mate after it by path alone: the order of the file names, one
		 * way (a corpus's paths are slugs, in no reading order) */
		if (c->site)
			qsort(members, (size_t)n, sizeof(int), cmp_path);
		for (int i = 0; c->site && i + 1 < n; i++)
			emit(o, id_of[members[i]], id_of[members[i + 1]], NEXT_TOPIC_AFTER, 1.0, named);
	}
	free(members);
	if (c->site)
		folder_order(o, c, id_of);
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
		int cap = atlas_grown_cap(j->cap, 65536);
		if (cap < 0 || atlas_resize(&j->src, (size_t)cap, sizeof(*j->src)) ||
		    atlas_resize(&j->dst, (size_t)cap, sizeof(*j->dst)) || atlas_resize(&j->w, (size_t)cap, sizeof(*j->w))) {
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
		if (c->pages[src].type == ATLAS_TYPE_PAGE || nodes[src].deg == 0)
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
			if (d != src && nodes[d].p > 0 && c->pages[d].type != ATLAS_TYPE_PAGE)
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
void ppr_start(ppr_job *j)
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
	/* appends only: a small cache (1 MiB: the last pages of the rows appended to, and the
	 * fields and titles tables' segments as they are written), no journal (the file is thrown away
	 * on failure) */
	if (atlas_analyzer_register(o->db, o->err)) {
		o->rc = o->err->code;
		return o->rc;
	}
	if (rows_exec(o, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096;"
			 " PRAGMA cache_size=-1024; BEGIN") ||
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
	sqlite3_stmt *sel = NULL, *ins = NULL;
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
	o->rc = vocab_rows_write(o->db, o->path, o->vocab, o->nvocab, o->stems, o->nstems, o->err);
	if (!o->rc)
		rows_exec(o, "COMMIT");
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	strbuf_free(&blob);
	return o->rc;
}

/* Closes the rows file and frees the vocabulary and the stems (kept: their counts) with their
 * words (o->words). On a close that fails sets o->rc unless already set. */
static void rows_close(out_ctx *o)
{
	sqlite3_finalize(o->row);
	sqlite3_finalize(o->term);
	o->row = o->term = NULL;
	if (o->db && sqlite3_close(o->db) != SQLITE_OK && !o->rc)
		o->rc = atlas_error_set(o->err, ATLAS_EIO, "%s: cannot close", o->path);
	o->db = NULL;
	vocab_rows_free(o->vocab);
	o->vocab = NULL;
	vocab_rows_free(o->stems);
	o->stems = NULL;
	atlas_arena_free(&o->words);
}

/* The read-next thread (arg: its signals): every signal's candidates into the rows file, the
 * blend's weights fitted on the guides, the fields and titles tables indexed, the rows file
 * completed. Returns NULL; the outcome is s->o.rc, with the message in s->err. */
static void *compute_signals(void *arg)
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
		page_next_signals(o, s->c, s->id_of);
	if (!o->rc)
		numbering_signals(o, s->c, s->id_of);
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
	s->o.words = (atlas_arena)ATLAS_ARENA_INIT(WORDS_BLOCK);
	s->ppr.c = c;
	int rc = atlas_analyzer_new(&s->a, db, err);
	if (rc)
		goto fail_free;
	if (pthread_create(&s->thread, NULL, compute_signals, s)) {
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
