/* next.c - read next: the candidates stored by the indexer for a page, blended with the weights of
 * rank.h, the guide the reader follows put first, what was read left out, near-duplicates spread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "rank.h"

#define MAX_REASONS 4

/* Why a page is suggested. The text is written only for the suggestions chosen. */
typedef enum reason_kind {
	R_STEP,        /* a step of a guide: "Step N of <guide>" */
	R_LINK_OUT,
	R_LINK_IN,
	R_BUILDS_ON,
	R_PREREQ,
	R_TOPIC,       /* "Also in <topic>" */
	R_TOPIC_MEMBER, /* "In <topic>" */
	R_SIMILAR,     /* "Similar: <shared terms>" */
	R_GRAPH,
} reason_kind;

typedef struct reason {
	reason_kind kind;
	int step;           /* R_STEP */
	const char *detail; /* R_STEP: the guide's title; R_TOPIC*: the topic path; R_SIMILAR: terms */
	double w;
} reason;

typedef struct nx {
	int doc;
	double score;
	reason reasons[MAX_REASONS];
	int nreasons;
	bool excluded;
} nx;

static bool same_reason(const reason *a, const reason *b)
{
	if (a->kind != b->kind || a->step != b->step)
		return false;
	return a->detail == b->detail || (a->detail && b->detail && strcmp(a->detail, b->detail) == 0);
}

/* Adds a reason to c (the same reason twice keeps its stronger weight; past MAX_REASONS, the
 * strongest are kept). */
static void add_reason(nx *c, const reason *r)
{
	for (int k = 0; k < c->nreasons; k++)
		if (same_reason(&c->reasons[k], r)) {
			if (r->w > c->reasons[k].w)
				c->reasons[k].w = r->w;
			return;
		}
	int slot = c->nreasons;
	if (slot == MAX_REASONS) {
		slot = 0;
		for (int k = 1; k < MAX_REASONS; k++)
			if (c->reasons[k].w < c->reasons[slot].w)
				slot = k;
		if (c->reasons[slot].w >= r->w)
			return;
	} else
		c->nreasons++;
	c->reasons[slot] = *r;
}

/* The reader's text of a reason, in a new string (NULL when out of memory). */
static char *reason_text(const atlas_engine *e, const reason *r)
{
	char buf[700], path[300];
	switch (r->kind) {
	case R_STEP:
		snprintf(buf, sizeof(buf), "Step %d of %s", r->step, r->detail);
		break;
	case R_LINK_OUT: return strdup("Linked from this page");
	case R_LINK_IN: return strdup("Links to this page");
	case R_BUILDS_ON: return strdup("Builds on this page");
	case R_PREREQ: return strdup("Background for this page");
	case R_GRAPH: return strdup("Near this page in the guides and links");
	case R_SIMILAR:
		snprintf(buf, sizeof(buf), "Similar: %s", r->detail);
		break;
	case R_TOPIC:
	case R_TOPIC_MEMBER: {
		snprintf(path, sizeof(path), "/t/%s", r->detail);
		int t = atlas_engine_find(e, path);
		snprintf(buf, sizeof(buf), "%s %s", r->kind == R_TOPIC ? "Also in" : "In",
			 t >= 0 ? e->docs[t].title : r->detail);
		break;
	}
	default: return strdup("");
	}
	return strdup(buf);
}

static nx *slot_for(nx *all, int *n, atlas_engine *e, int doc)
{
	(void)e;
	for (int i = 0; i < *n; i++)
		if (all[i].doc == doc)
			return &all[i];
	nx *c = &all[(*n)++];
	memset(c, 0, sizeof(*c));
	c->doc = doc;
	return c;
}

static int doc_of_id(const atlas_engine *e, int id)
{
	return id >= 1 && id <= e->ndocs ? id - 1 : -1;
}

static int cmp_nx(const nx *x, const nx *y, const atlas_engine *e)
{
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return strcmp(e->docs[x->doc].path, e->docs[y->doc].path);
}

int atlas_next(atlas_next_results *res, atlas_engine *e, const atlas_next_params *p, atlas_error *err)
{
	memset(res, 0, sizeof(*res));
	int src = atlas_engine_find(e, p->path);
	if (src < 0)
		return atlas_error_set(err, ATLAS_ENOTFOUND, "no page at path '%s'", p->path ? p->path : "");
	int guide = -1;
	if (p->guide && p->guide[0]) {
		char gp[512];
		snprintf(gp, sizeof(gp), "%s%s", p->guide[0] == '/' ? "" : "/", p->guide);
		guide = atlas_engine_find(e, gp);
		if (guide < 0 || strcmp(e->docs[guide].type, "guide") != 0)
			return atlas_error_set(err, ATLAS_ENOTFOUND, "no guide '%s'", p->guide);
	}
	int limit = p->limit > 0 ? p->limit : 5;
	if (limit > ATLAS_LIMIT_MAX)
		limit = ATLAS_LIMIT_MAX;
	res->doc = src;
	/* read pages: the current one and up to ATLAS_SEEN_MAX more */
	int seen[ATLAS_SEEN_MAX + 1];
	int nseen = 0;
	seen[nseen++] = src;
	for (int i = 0; i < p->nseen && nseen <= ATLAS_SEEN_MAX; i++) {
		int d = atlas_engine_find(e, p->seen[i]);
		if (d >= 0)
			seen[nseen++] = d;
	}
	int cap = 256, n = 0;
	nx *all = malloc((size_t)cap * sizeof(nx)); /* slot_for clears each slot it hands out */
	if (!all)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	atlas_arena details = ATLAS_ARENA_INIT(4096); /* copies of the rows' details */
	sqlite3_stmt *st = e->st_next;
	sqlite3_bind_int(st, 1, e->docs[src].id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int d = doc_of_id(e, sqlite3_column_int(st, 0));
		if (d < 0)
			continue;
		if (n == cap) {
			nx *more = realloc(all, (size_t)cap * 2 * sizeof(nx));
			if (!more)
				break;
			all = more;
			cap *= 2;
		}
		nx *c = slot_for(all, &n, e, d);
		const char *sig = (const char *)sqlite3_column_text(st, 1);
		double w = sqlite3_column_double(st, 2);
		const char *detail = (const char *)sqlite3_column_text(st, 3);
		if (!sig || !detail)
			continue;
		reason r = { R_GRAPH, 0, NULL, 0 };
		bool text = true;
		if (strncmp(sig, "guide_", 6) == 0) {
			/* detail: guide id|step|guide title */
			const char *bar1 = strchr(detail, '|'), *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
			r.kind = R_STEP;
			r.step = bar1 ? atoi(bar1 + 1) : 0;
			r.w = strcmp(sig + 6, "prev") == 0 ? NEXT_W_GUIDE_PREV
			      : strcmp(sig + 6, "next") == 0 ? NEXT_W_GUIDE_NEXT : NEXT_W_GUIDE_START;
			const char *title = bar2 ? bar2 + 1 : "";
			r.detail = atlas_arena_strndup(&details, title, strlen(title));
		} else if (strcmp(sig, "link_out") == 0) {
			r.kind = R_LINK_OUT;
			r.w = NEXT_W_LINK_OUT;
		} else if (strcmp(sig, "link_in") == 0) {
			r.kind = R_LINK_IN;
			r.w = NEXT_W_LINK_IN;
		} else if (strcmp(sig, "builds_on") == 0) {
			r.kind = R_BUILDS_ON;
			r.w = NEXT_W_BUILDS_ON;
		} else if (strcmp(sig, "prereq") == 0) {
			r.kind = R_PREREQ;
			r.w = NEXT_W_PREREQ;
		} else if (strcmp(sig, "same_topic") == 0 || strcmp(sig, "topic_member") == 0) {
			r.kind = sig[0] == 's' ? R_TOPIC : R_TOPIC_MEMBER;
			r.w = r.kind == R_TOPIC ? NEXT_W_TOPIC : NEXT_W_TOPIC_MEMBER * w;
			r.detail = atlas_arena_strndup(&details, detail, strlen(detail));
		} else if (strcmp(sig, "similar") == 0) {
			r.kind = R_SIMILAR;
			r.w = NEXT_W_SIMILAR * w;
			r.detail = atlas_arena_strndup(&details, detail, strlen(detail));
		} else if (strcmp(sig, "graph") == 0) {
			r.kind = R_GRAPH;
			r.w = NEXT_W_GRAPH * w;
		} else
			text = false; /* a signal this build does not know: no weight, no reason */
		if ((r.kind == R_STEP || r.kind == R_TOPIC || r.kind == R_TOPIC_MEMBER || r.kind == R_SIMILAR) &&
		    !r.detail)
			text = false; /* out of memory for its detail */
		if (!text)
			continue;
		c->score += r.w;
		add_reason(c, &r);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		free(all);
		atlas_arena_free(&details);
		return atlas_error_set(err, ATLAS_ESQL, "read next: %s", sqlite3_errmsg(e->db));
	}
	/* the guide the reader follows: its first unread step after this page comes first */
	if (guide >= 0) {
		sqlite3_stmt *gs = e->st_guide_steps;
		sqlite3_bind_int(gs, 1, e->docs[guide].id);
		int steps[1024], nsteps = 0, here = -1;
		while (sqlite3_step(gs) == SQLITE_ROW && nsteps < 1024) {
			int d = doc_of_id(e, sqlite3_column_int(gs, 1));
			if (d == src && here < 0)
				here = nsteps;
			steps[nsteps++] = d;
		}
		sqlite3_reset(gs);
		for (int pass = 0; pass < 2; pass++) {
			int chosen = -1;
			for (int i = pass == 0 ? here + 1 : 0; i < nsteps && chosen < 0; i++) {
				bool read = false;
				for (int k = 0; k < nseen; k++)
					read |= seen[k] == steps[i];
				if (!read && steps[i] >= 0)
					chosen = i;
			}
			if (chosen >= 0 && n < cap) {
				nx *c = slot_for(all, &n, e, steps[chosen]);
				reason r = { R_STEP, chosen + 1, e->docs[guide].title, NEXT_W_GUIDE_CHOSEN };
				c->score += r.w;
				add_reason(c, &r);
				break;
			}
		}
	}
	/* leave out what was read and site pages; weigh page types */
	for (int i = 0; i < n; i++) {
		nx *c = &all[i];
		for (int k = 0; k < nseen; k++)
			c->excluded |= seen[k] == c->doc;
		const char *type = e->docs[c->doc].type;
		if (strcmp(type, "page") == 0)
			c->excluded = true;
		else if (strcmp(type, "topic") == 0)
			c->score *= NEXT_TYPE_TOPIC;
		else if (strcmp(type, "guide") == 0)
			c->score *= NEXT_TYPE_GUIDE;
	}
	/* greedy selection with a penalty for repeating a topic already chosen */
	res->items = calloc((size_t)limit, sizeof(atlas_next_item));
	for (int pick = 0; res->items && pick < limit; pick++) {
		int best = -1;
		for (int i = 0; i < n; i++)
			if (!all[i].excluded && all[i].score > 0 &&
			    (best < 0 || cmp_nx(&all[i], &all[best], e) < 0))
				best = i;
		if (best < 0)
			break;
		nx *c = &all[best];
		c->excluded = true;
		atlas_next_item *it = &res->items[res->nitems++];
		it->doc = c->doc;
		it->score = c->score;
		/* reasons, strongest first; the graph reason only when nothing else explains it */
		for (int r = 0; r < c->nreasons; r++)
			for (int q = r + 1; q < c->nreasons; q++)
				if (c->reasons[q].w > c->reasons[r].w) {
					reason t = c->reasons[r];
					c->reasons[r] = c->reasons[q];
					c->reasons[q] = t;
				}
		for (int r = 0; r < c->nreasons && it->nreasons < 3; r++) {
			if (c->reasons[r].kind == R_GRAPH && c->nreasons > 1)
				continue;
			char *t = reason_text(e, &c->reasons[r]);
			if (t)
				it->reasons[it->nreasons++] = t;
		}
		const atlas_doc *cd = &e->docs[c->doc];
		for (int i = 0; i < n; i++) {
			const atlas_doc *od = &e->docs[all[i].doc];
			if (!all[i].excluded && cd->ntopics && od->ntopics && strcmp(cd->topics[0], od->topics[0]) == 0)
				all[i].score *= NEXT_DIVERSITY;
		}
	}
	free(all);
	atlas_arena_free(&details);
	return 0;
}

void atlas_next_results_free(atlas_next_results *res)
{
	if (!res)
		return;
	for (int i = 0; i < res->nitems; i++)
		for (int r = 0; r < res->items[i].nreasons; r++)
			free(res->items[i].reasons[r]);
	free(res->items);
	memset(res, 0, sizeof(*res));
}
