/* next.c - read next: the candidates stored by the indexer for a page, blended with the weights of
 * rank.h, the guide the reader follows put first, what was read left out, near-duplicates spread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "rank.h"

#define MAX_REASONS 4

typedef struct nx {
	int doc;
	double score;
	double parts[MAX_REASONS];
	char *reasons[MAX_REASONS];
	int nreasons;
	bool excluded;
} nx;

static void add_reason(nx *c, double w, const char *text)
{
	for (int k = 0; k < c->nreasons; k++)
		if (strcmp(c->reasons[k], text) == 0) {
			if (w > c->parts[k])
				c->parts[k] = w;
			return;
		}
	int slot = c->nreasons;
	if (slot == MAX_REASONS) {
		/* keep the strongest reasons */
		slot = 0;
		for (int k = 1; k < MAX_REASONS; k++)
			if (c->parts[k] < c->parts[slot])
				slot = k;
		if (c->parts[slot] >= w)
			return;
		free(c->reasons[slot]);
	} else
		c->nreasons++;
	c->reasons[slot] = strdup(text);
	c->parts[slot] = w;
}

static const char *topic_title(const atlas_engine *e, const char *topic, char *buf, size_t cap)
{
	snprintf(buf, cap, "/t/%s", topic);
	int t = atlas_engine_find(e, buf);
	snprintf(buf, cap, "%s", t >= 0 ? e->docs[t].title : topic);
	return buf;
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
	char text[600], tbuf[300];
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
		double add = 0;
		text[0] = '\0';
		if (strcmp(sig, "guide_next") == 0 || strcmp(sig, "guide_prev") == 0 ||
		    strcmp(sig, "guide_start") == 0) {
			int gid = 0, step = 0, off = 0;
			sscanf(detail, "%d|%d|%n", &gid, &step, &off);
			snprintf(text, sizeof(text), "Step %d of %s", step, detail + off);
			add = strcmp(sig, "guide_prev") == 0 ? NEXT_W_GUIDE_PREV
			      : strcmp(sig, "guide_next") == 0 ? NEXT_W_GUIDE_NEXT : NEXT_W_GUIDE_START;
		} else if (strcmp(sig, "link_out") == 0) {
			add = NEXT_W_LINK_OUT;
			snprintf(text, sizeof(text), "Linked from this page");
		} else if (strcmp(sig, "link_in") == 0) {
			add = NEXT_W_LINK_IN;
			snprintf(text, sizeof(text), "Links to this page");
		} else if (strcmp(sig, "builds_on") == 0) {
			add = NEXT_W_BUILDS_ON;
			snprintf(text, sizeof(text), "Builds on this page");
		} else if (strcmp(sig, "prereq") == 0) {
			add = NEXT_W_PREREQ;
			snprintf(text, sizeof(text), "Background for this page");
		} else if (strcmp(sig, "same_topic") == 0) {
			add = NEXT_W_TOPIC;
			snprintf(text, sizeof(text), "Also in %s", topic_title(e, detail, tbuf, sizeof(tbuf)));
		} else if (strcmp(sig, "topic_member") == 0) {
			add = NEXT_W_TOPIC_MEMBER * w;
			snprintf(text, sizeof(text), "In %s", topic_title(e, detail, tbuf, sizeof(tbuf)));
		} else if (strcmp(sig, "similar") == 0) {
			add = NEXT_W_SIMILAR * w;
			snprintf(text, sizeof(text), "Similar: %s", detail);
		} else if (strcmp(sig, "graph") == 0) {
			add = NEXT_W_GRAPH * w;
			snprintf(text, sizeof(text), "Near this page in the guides and links");
		}
		c->score += add;
		if (text[0])
			add_reason(c, add, text);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		free(all);
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
				snprintf(text, sizeof(text), "Step %d of %s", chosen + 1, e->docs[guide].title);
				c->score += NEXT_W_GUIDE_CHOSEN;
				add_reason(c, NEXT_W_GUIDE_CHOSEN, text);
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
			for (int s = r + 1; s < c->nreasons; s++)
				if (c->parts[s] > c->parts[r]) {
					double tp = c->parts[r];
					char *tr = c->reasons[r];
					c->parts[r] = c->parts[s];
					c->reasons[r] = c->reasons[s];
					c->parts[s] = tp;
					c->reasons[s] = tr;
				}
		for (int r = 0; r < c->nreasons && it->nreasons < 3; r++) {
			if (strncmp(c->reasons[r], "Near this page", 14) == 0 && c->nreasons > 1)
				continue;
			it->reasons[it->nreasons++] = strdup(c->reasons[r]);
		}
		const atlas_doc *cd = &e->docs[c->doc];
		for (int i = 0; i < n; i++) {
			const atlas_doc *od = &e->docs[all[i].doc];
			if (!all[i].excluded && cd->ntopics && od->ntopics && strcmp(cd->topics[0], od->topics[0]) == 0)
				all[i].score *= NEXT_DIVERSITY;
		}
	}
	for (int i = 0; i < n; i++)
		for (int r = 0; r < all[i].nreasons; r++)
			free(all[i].reasons[r]);
	free(all);
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
