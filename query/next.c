/* next.c - read next: the candidates stored by the indexer for a page, blended with the weights of
 * rank.h, the guide the reader follows put first, what was read left out, near-duplicates spread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "error.h"
#include "grow.h"
#include "next.h"
#include "next_rows.h"
#include "rank.h"
#include "varint.h"

#define MAX_REASONS 4

/* Read-next candidates of a small index held in memory (at most this many rows; the index is then
 * read into memory too), with their reasons made, so that a request runs no statement. */
#define NEXT_CACHE_MAX_ROWS 200000
typedef struct next_cache next_cache;

/* Read next's state over one open index (next.h): what the engine handed it, and what it read. */
struct next_state {
	sqlite3 *db;
	const atlas_doc *docs;
	int ndocs;
	bool in_memory;
	atlas_arena strings;    /* similar_names, the cached reasons' details */
	sqlite3_stmt *st_next, *st_guide_steps;
	sqlite3_stmt *st_routes_through; /* the guides with ?2 then ?1 as consecutive steps */
	sqlite3_stmt *st_routes_of;      /* the guides with ?1 as a step */
	next_cache *next_cache; /* the candidates held in memory, or NULL */
	const char **similar_names; /* similar_terms: the words "similar" rows name, by id */
	int nsimilar_names;
	double next_w[NEXT_NWEIGHTS]; /* the blend's weights: the index's fitted ones, or rank.h's
				       * defaults (next_terms_load) */
};

/* Why a page is suggested. The text is written only for the suggestions chosen. */
typedef enum reason_kind {
	R_STEP,        /* a step of a guide: "Step N of <guide>" */
	R_LINK_OUT,
	R_LINK_IN,
	R_BUILDS_ON,
	R_PREREQ,
	R_TOPIC,       /* "Also in <topic>" */
	R_TOPIC_MEMBER, /* "In <topic>" */
	R_TOPIC_AFTER, /* "Next in <topic>" */
	R_SIMILAR,     /* "Similar: <shared terms>" */
	R_GRAPH,
	R_LIST,        /* "Next after this page in <page>" */
	R_NUMBER,      /* "Next after <this page's number>" */
	R_MENTION,     /* "Named after this page in <page>" */
	R_PAGE_NEXT,   /* "Next after this page": the site names it so (rel=next) */
} reason_kind;

typedef struct reason {
	reason_kind kind;
	int step;           /* R_STEP */
	const char *detail; /* R_STEP: the guide's title; R_TOPIC*: the topic path; R_SIMILAR: terms;
			     * R_LIST, R_MENTION: the listing page's title; R_NUMBER: this page's
			     * number */
	double w;
} reason;

typedef struct nx {
	int doc;
	double score;
	double kept;        /* score the page type's factor leaves whole: a tier's (below) */
	int tier;           /* ranked before every candidate of a lower tier, whatever the scores:
			     * 2 the next step of the guide the reader chose; 1 the page this one
			     * names next, or the next step of the route read when the page read
			     * last is its step before and not the page naming this one next;
			     * 0 the rest */
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
	char buf[700];
	switch (r->kind) {
	case R_STEP:
		snprintf(buf, sizeof(buf), "Step %d of %s", r->step, r->detail);
		break;
	case R_LINK_OUT: return strdup("Linked from this page");
	case R_LINK_IN: return strdup("Links to this page");
	case R_BUILDS_ON: return strdup("Builds on this page");
	case R_PREREQ: return strdup("Background for this page");
	case R_GRAPH: return strdup("Near this page in the links");
	case R_PAGE_NEXT: return strdup("Next after this page");
	case R_LIST:
		snprintf(buf, sizeof(buf), "Next after this page in %s", r->detail);
		break;
	case R_NUMBER:
		snprintf(buf, sizeof(buf), "Next after %s", r->detail);
		break;
	case R_MENTION:
		snprintf(buf, sizeof(buf), "Named after this page in %s", r->detail);
		break;
	case R_SIMILAR:
		snprintf(buf, sizeof(buf), "Similar: %s", r->detail);
		break;
	case R_TOPIC:
	case R_TOPIC_MEMBER:
	case R_TOPIC_AFTER: {
		int t = atlas_engine_topic_page(e, r->detail);
		snprintf(buf, sizeof(buf), "%s %s",
			 r->kind == R_TOPIC ? "Also in" : r->kind == R_TOPIC_AFTER ? "Next in" : "In",
			 t >= 0 ? atlas_engine_doc(e, t)->title : r->detail);
		break;
	}
	default: return strdup("");
	}
	return strdup(buf);
}

/* The candidate for page doc in all[0..*n), added (grown as needed) when absent. Returns NULL when
 * out of memory. */
static nx *slot_for(nx **all, int *n, int *cap, int doc)
{
	for (int i = 0; i < *n; i++)
		if ((*all)[i].doc == doc)
			return &(*all)[i];
	if (atlas_grow(all, cap, *n, sizeof(nx), 1))
		return NULL;
	nx *c = &(*all)[(*n)++];
	memset(c, 0, sizeof(*c));
	c->doc = doc;
	return c;
}

static int doc_of_id(const next_state *ns, int id)
{
	return id >= 1 && id <= ns->ndocs ? id - 1 : -1;
}

static int cmp_nx(const nx *x, const nx *y, const next_state *ns)
{
	if (x->tier != y->tier)
		return x->tier > y->tier ? -1 : 1;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return strcmp(ns->docs[x->doc].path, ns->docs[y->doc].path);
}

/* A small index's read-next candidates, read once when the engine opens, their reasons made:
 * page d's are rows[start[d] .. start[d + 1]), in the stored order. */
struct next_cache {
	int *start;
	struct cached_row {
		int doc;
		reason r;
	} *rows;
};

static int row_reason(reason *out, const next_state *ns, const next_row *row, atlas_arena *a);

/* The number the decimal digits at the start of s[0..n) make (0 when none; stops short of
 * overflow). */
static int atoi_n(const char *s, size_t n)
{
	int v = 0;
	for (size_t i = 0; i < n && s[i] >= '0' && s[i] <= '9' && v < 100000000; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

static void next_cache_free(next_cache *nc)
{
	if (!nc)
		return;
	free(nc->start);
	free(nc->rows);
	free(nc);
}

/* Appends the reasons of page s's packed rows (blob[0..n)) to nc (n_rows used of cap), counting
 * them into start[s + 1]. Returns 0; 1 when they would pass NEXT_CACHE_MAX_ROWS or the blob is
 * malformed (no cache then); or ATLAS_ENOMEM with err set. */
static int cache_page(next_cache *nc, int *n_rows, int *cap, const next_state *ns, int s,
		      const unsigned char *blob, int n, atlas_arena *strings, atlas_error *err)
{
	const unsigned char *p = blob, *end = blob + n;
	next_row row;
	int got;
	while ((got = next_rows_get(&p, end, &row)) == 1) {
		int d = doc_of_id(ns, row.dst);
		reason r;
		int made = d < 0 ? 0 : row_reason(&r, ns, &row, strings);
		if (made < 0)
			return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading read-next candidates");
		if (made == 0)
			continue;
		if (*n_rows == *cap) {
			if (*cap >= NEXT_CACHE_MAX_ROWS)
				return 1;
			int more = *cap * 2 < NEXT_CACHE_MAX_ROWS ? *cap * 2 : NEXT_CACHE_MAX_ROWS;
			if (atlas_resize(&nc->rows, (size_t)more, sizeof(*nc->rows)))
				return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading read-next candidates");
			*cap = more;
		}
		nc->rows[*n_rows].doc = d;
		nc->rows[*n_rows].r = r;
		(*n_rows)++;
		nc->start[s + 1]++;
	}
	return got < 0 ? 1 : 0;
}

/* Reads the fitted weights of table next_fit over ns->next_w (rank.h's defaults, set first, stay
 * for any it lacks). Returns 0, or ATLAS_ESQL with err set. */
static int next_weights_load(next_state *ns, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	next_weights_defaults(ns->next_w);
	if (sqlite3_prepare_v2(ns->db, "SELECT key, value FROM next_fit WHERE key LIKE 'w:%'", -1, &st, NULL) !=
	    SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read the read-next weights: %s", sqlite3_errmsg(ns->db));
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 0) + 2;
		double v = sqlite3_column_double(st, 1);
		int code = next_weight_code(key);
		if (code >= 0 && v >= 0 && v < 1e6)
			ns->next_w[code] = v; /* a weight this build does not know, or out of range: ignored */
	}
	sqlite3_finalize(st);
	return 0;
}

static int next_terms_load(next_state *ns, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (next_weights_load(ns, err))
		return err->code;
	if (sqlite3_prepare_v2(ns->db, "SELECT count(*) FROM similar_terms", -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read similar terms: %s", sqlite3_errmsg(ns->db));
	int n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (n <= 0)
		return 0;
	ns->similar_names = atlas_arena_alloc(&ns->strings, (size_t)n * sizeof(*ns->similar_names));
	if (!ns->similar_names)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading similar terms");
	for (int i = 0; i < n; i++)
		ns->similar_names[i] = NULL;
	ns->nsimilar_names = n;
	if (sqlite3_prepare_v2(ns->db, "SELECT id, name FROM similar_terms", -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read similar terms: %s", sqlite3_errmsg(ns->db));
	int rc = 0;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		if (id < 0 || id >= n || !name)
			continue; /* a row the ids do not reach: no reason names it */
		ns->similar_names[id] = atlas_arena_strndup(&ns->strings, name, (size_t)sqlite3_column_bytes(st, 1));
		if (!ns->similar_names[id])
			rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading similar terms");
	}
	sqlite3_finalize(st);
	return rc;
}

/* The shared terms of a "similar" row's detail (their similar_terms ids, varints), as the reader
 * reads them ("a, b, c"), in a. Unknown ids are left out. Returns the text, or NULL when out of
 * memory. */
static const char *similar_terms_text(const next_state *ns, const char *detail, size_t n, atlas_arena *a)
{
	char buf[600];
	size_t len = 0;
	const unsigned char *p = (const unsigned char *)detail, *end = p + n;
	unsigned id;
	buf[0] = '\0';
	while (p < end && atlas_varint_get(&p, end, &id) == 0) {
		const char *name = id < (unsigned)ns->nsimilar_names ? ns->similar_names[id] : NULL;
		if (!name)
			continue;
		int w = snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? ", " : "", name);
		if (w < 0 || (size_t)w >= sizeof(buf) - len)
			break;
		len += (size_t)w;
	}
	return atlas_arena_strndup(a, buf, len);
}

static int next_cache_load(next_state *ns, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (!ns->in_memory || sqlite3_prepare_v2(ns->db, "SELECT src, rows FROM next_candidates ORDER BY src", -1,
						&st, NULL) != SQLITE_OK)
		return 0;
	int cap = 1024, n = 0, rc = 0;
	next_cache *nc = calloc(1, sizeof(*nc));
	if (nc) {
		nc->start = calloc((size_t)ns->ndocs + 2, sizeof(int));
		nc->rows = malloc((size_t)cap * sizeof(*nc->rows));
	}
	if (!nc || !nc->start || !nc->rows)
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading read-next candidates");
	/* rows by source page, in the order stored: counted into start[src + 1], the counts then made
	 * offsets */
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		int s = doc_of_id(ns, sqlite3_column_int(st, 0));
		const unsigned char *blob = sqlite3_column_blob(st, 1);
		if (s >= 0 && blob)
			rc = cache_page(nc, &n, &cap, ns, s, blob, sqlite3_column_bytes(st, 1), &ns->strings, err);
	}
	sqlite3_finalize(st);
	if (rc) {
		next_cache_free(nc);
		return rc < 0 ? rc : 0; /* too many rows, or a malformed list: read per request */
	}
	for (int d = 0; d < ns->ndocs; d++)
		nc->start[d + 1] += nc->start[d];
	ns->next_cache = nc;
	return 0;
}

/* The reason a stored candidate row gives (its signal, weight and detail), with the detail's text
 * copied into a (a guide's title is the engine's). Returns 1, or 0 for a signal this build does not
 * know (no weight, no reason), or ATLAS_ENOMEM when out of memory. */
static int row_reason(reason *out, const next_state *ns, const next_row *row, atlas_arena *a)
{
	reason r = { R_GRAPH, 0, NULL, 0 };
	double w = row->weight;
	const char *detail = row->detail;
	size_t n = (size_t)row->ndetail;
	if (row->signal < 0 || row->signal >= NEXT_NSIGNALS)
		return 0; /* a signal this build does not know: no weight, no reason */
	r.w = ns->next_w[row->signal] * w;
	switch (row->signal) {
	case NEXT_GUIDE_PREV:
	case NEXT_GUIDE_NEXT:
	case NEXT_GUIDE_START:
	case NEXT_GUIDE_AFTER: {
		/* detail: guide id|step; the reason names the guide by its title */
		const char *bar = memchr(detail, '|', n);
		int guide = doc_of_id(ns, atoi_n(detail, n));
		r.kind = R_STEP;
		r.step = bar ? atoi_n(bar + 1, n - (size_t)(bar + 1 - detail)) : 0;
		r.detail = guide >= 0 ? ns->docs[guide].title : "";
		break;
	}
	case NEXT_LIST_NEXT: {
		/* detail: the listing page's id|position, "|m" after it when its prose names the two */
		int list = doc_of_id(ns, atoi_n(detail, n));
		r.kind = n >= 2 && detail[n - 2] == '|' && detail[n - 1] == 'm' ? R_MENTION : R_LIST;
		r.detail = list >= 0 ? ns->docs[list].title : "";
		break;
	}
	case NEXT_LINK_OUT:
		r.kind = R_LINK_OUT;
		break;
	case NEXT_PAGE_NEXT:
		r.kind = R_PAGE_NEXT;
		break;
	case NEXT_LINK_IN:
		r.kind = R_LINK_IN;
		break;
	case NEXT_BUILDS_ON:
		r.kind = R_BUILDS_ON;
		break;
	case NEXT_PREREQ:
		r.kind = R_PREREQ;
		break;
	case NEXT_TOPIC:
	case NEXT_TOPIC_NEXT:
	case NEXT_TOPIC_START:
	case NEXT_TOPIC_AFTER:
		r.kind = row->signal == NEXT_TOPIC_START ? R_TOPIC_MEMBER
			 : row->signal == NEXT_TOPIC_AFTER ? R_TOPIC_AFTER : R_TOPIC;
		if (n > 1 && detail[0] == '#') {
			/* the topic's page, by id */
			int t = doc_of_id(ns, atoi_n(detail + 1, n - 1));
			r.detail = t >= 0 && ns->docs[t].topic_of ? ns->docs[t].topic_of : "";
		} else
			r.detail = atlas_arena_strndup(a, detail, n);
		break;
	case NEXT_SIMILAR:
		r.kind = R_SIMILAR;
		r.detail = similar_terms_text(ns, detail, n, a);
		break;
	case NEXT_GRAPH:
		r.kind = R_GRAPH;
		break;
	case NEXT_NUMBER_NEXT:
		r.kind = R_NUMBER;
		r.detail = atlas_arena_strndup(a, detail, n);
		break;
	default:
		return 0;
	}
	if ((r.kind == R_STEP || r.kind == R_TOPIC || r.kind == R_TOPIC_MEMBER || r.kind == R_TOPIC_AFTER ||
	     r.kind == R_SIMILAR ||
	     r.kind == R_NUMBER) &&
	    !r.detail)
		return ATLAS_ENOMEM; /* out of memory for its detail */
	*out = r;
	return 1;
}

/* Adds the stored candidates of page src to all[0..*n) (grown as needed), each row's weight times
 * scale, with its reason when reasons is set (details copied into the arena); the page src names
 * next (its page_next row) is set into *named (-1: none) and, with reasons set, left for the
 * caller to weigh (atlas_next). Returns 0, ATLAS_ENOMEM, or ATLAS_ESQL when the index cannot be
 * read. */
static int page_rows(const next_state *ns, int src, double scale, bool reasons, nx **all, int *n, int *cap,
		     atlas_arena *details, int *named)
{
	*named = -1;
	if (ns->next_cache) {
		/* a small index's candidates, read at open with their reasons made */
		const next_cache *nc = ns->next_cache;
		for (int i = nc->start[src]; i < nc->start[src + 1]; i++) {
			nx *c = slot_for(all, n, cap, nc->rows[i].doc);
			if (!c)
				return ATLAS_ENOMEM;
			if (nc->rows[i].r.kind == R_PAGE_NEXT)
				*named = nc->rows[i].doc;
			if (!reasons || nc->rows[i].r.kind != R_PAGE_NEXT)
				c->score += scale * nc->rows[i].r.w;
			if (reasons)
				add_reason(c, &nc->rows[i].r);
		}
		return 0;
	}
	sqlite3_stmt *st = ns->st_next;
	sqlite3_bind_int(st, 1, ns->docs[src].id);
	int rc = sqlite3_step(st), out = 0;
	if (rc == SQLITE_ROW) {
		/* one row: the page's packed candidates, read until the end or a malformed one */
		const unsigned char *at = sqlite3_column_blob(st, 0);
		const unsigned char *end = at ? at + sqlite3_column_bytes(st, 0) : NULL;
		next_row row;
		while (at && next_rows_get(&at, end, &row) == 1) {
			int d = doc_of_id(ns, row.dst);
			reason r;
			if (d < 0 || row_reason(&r, ns, &row, details) <= 0)
				continue;
			nx *c = slot_for(all, n, cap, d);
			if (!c) {
				out = ATLAS_ENOMEM;
				break;
			}
			if (r.kind == R_PAGE_NEXT)
				*named = d;
			if (!reasons || r.kind != R_PAGE_NEXT)
				c->score += scale * r.w;
			if (reasons)
				add_reason(c, &r);
		}
	} else if (rc != SQLITE_DONE)
		out = ATLAS_ESQL;
	sqlite3_reset(st);
	return out;
}

/* Block size of read next's arena (similar_terms' names, the cached reasons' details). */
#define NEXT_ARENA_BLOCK (64 * 1024)

int next_state_open(next_state **out, const next_index *ix, atlas_error *err)
{
	*out = NULL;
	next_state *ns = calloc(1, sizeof(*ns));
	if (!ns)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	ns->db = ix->db;
	ns->docs = ix->docs;
	ns->ndocs = ix->ndocs;
	ns->in_memory = ix->in_memory;
	ns->strings = (atlas_arena)ATLAS_ARENA_INIT(NEXT_ARENA_BLOCK);
	int rc = 0;
	if (sqlite3_prepare_v3(ns->db, "SELECT rows FROM next_candidates WHERE src = ?1", -1,
			       SQLITE_PREPARE_PERSISTENT, &ns->st_next, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(ns->db, "SELECT step, doc_id FROM guide_steps WHERE guide_id = ?1 ORDER BY step", -1,
			       SQLITE_PREPARE_PERSISTENT, &ns->st_guide_steps, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(ns->db,
			       "SELECT s.guide_id FROM guide_steps s JOIN guide_steps p ON p.guide_id = s.guide_id"
			       " AND p.step = s.step - 1 WHERE s.doc_id = ?1 AND p.doc_id = ?2",
			       -1, SQLITE_PREPARE_PERSISTENT, &ns->st_routes_through, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(ns->db, "SELECT DISTINCT guide_id FROM guide_steps WHERE doc_id = ?1 LIMIT 2", -1,
			       SQLITE_PREPARE_PERSISTENT, &ns->st_routes_of, NULL) != SQLITE_OK)
		rc = atlas_error_set(err, ATLAS_ESQL, "prepare: %s", sqlite3_errmsg(ns->db));
	if (!rc)
		rc = next_terms_load(ns, err);
	if (!rc)
		rc = next_cache_load(ns, err);
	if (rc) {
		next_state_free(ns);
		return rc;
	}
	*out = ns;
	return 0;
}

void next_state_free(next_state *ns)
{
	if (!ns)
		return;
	sqlite3_finalize(ns->st_next);
	sqlite3_finalize(ns->st_guide_steps);
	sqlite3_finalize(ns->st_routes_through);
	sqlite3_finalize(ns->st_routes_of);
	next_cache_free(ns->next_cache);
	atlas_arena_free(&ns->strings);
	free(ns);
}

#define ROUTE_STEPS_MAX 1024

/* The steps of guide (a page of ns) in order into steps[0..ROUTE_STEPS_MAX) (a step the engine
 * does not know as -1), and where page src first is among them in *here (-1: not). Returns how
 * many. */
static int route_steps(const next_state *ns, int guide, int src, int *steps, int *here)
{
	sqlite3_stmt *gs = ns->st_guide_steps;
	sqlite3_bind_int(gs, 1, ns->docs[guide].id);
	int nsteps = 0;
	*here = -1;
	while (sqlite3_step(gs) == SQLITE_ROW && nsteps < ROUTE_STEPS_MAX) {
		int d = doc_of_id(ns, sqlite3_column_int(gs, 1));
		if (d == src && *here < 0)
			*here = nsteps;
		steps[nsteps++] = d;
	}
	sqlite3_reset(gs);
	return nsteps;
}

/* How many of guide's steps just before page src are the pages read last (seen[1..nseen), the
 * last read last), in order: 0 when the step before src is not the page read last. *before is
 * set to how many steps the guide has before src (-1 when src is not a step). */
static int route_agrees(const next_state *ns, int guide, int src, const int *seen, int nseen, int *before)
{
	int steps[ROUTE_STEPS_MAX], here;
	route_steps(ns, guide, src, steps, &here);
	int k = 0;
	while (here - k - 1 >= 0 && nseen - k - 1 >= 1 && steps[here - k - 1] == seen[nseen - k - 1])
		k++;
	*before = here;
	return k;
}

/* The reader follows guide (a page of ns) from page src, having read seen[0..nseen): its first
 * unread step after src (else its first unread step) becomes a candidate in all[0..*n) (grown as
 * slot_for does), w more, in tier at least (above 0: w whatever its type), with the step as its
 * reason. Returns whether it found one (out of memory leaves it out). */
static bool follow_guide(const next_state *ns, int guide, int src, const int *seen, int nseen, double w, int tier,
			 nx **all, int *n, int *cap)
{
	int steps[ROUTE_STEPS_MAX], here;
	int nsteps = route_steps(ns, guide, src, steps, &here);
	for (int pass = 0; pass < 2; pass++) {
		int chosen = -1;
		for (int i = pass == 0 ? here + 1 : 0; i < nsteps && chosen < 0; i++) {
			bool read = false;
			for (int k = 0; k < nseen; k++)
				read |= seen[k] == steps[i];
			if (!read && steps[i] >= 0)
				chosen = i;
		}
		nx *c = chosen >= 0 ? slot_for(all, n, cap, steps[chosen]) : NULL;
		if (c) {
			reason r = { R_STEP, chosen + 1, ns->docs[guide].title, w };
			if (tier > 0) /* ranked by tier: its page's type does not scale it */
				c->kept += r.w;
			else
				c->score += r.w;
			c->tier = c->tier > tier ? c->tier : tier;
			add_reason(c, &r);
			return true;
		}
	}
	return false;
}

/* No guide named: the route the reader is on, found from what was read (seen[0..nseen), seen[0]
 * being src), is followed as follow_guide does. With nothing read, the one guide page src alone is
 * a step of (NEXT_W_GUIDE_ALONE); else the guides whose step before src is the page read last, of
 * several those whose steps agree longest with what was read (NEXT_W_GUIDE_FOLLOWED, shared,
 * times the share of the pages read, or of the guide's steps before src when fewer, that agree),
 * their next steps in tier (atlas_next). Returns whether a route's next step was found. */
static bool follow_read_route(const next_state *ns, int src, const int *seen, int nseen, int tier, nx **all, int *n,
			      int *cap)
{
	if (nseen == 1) {
		sqlite3_stmt *ro = ns->st_routes_of;
		sqlite3_bind_int(ro, 1, ns->docs[src].id);
		int g = -1, count = 0;
		while (sqlite3_step(ro) == SQLITE_ROW)
			if (count++ == 0)
				g = doc_of_id(ns, sqlite3_column_int(ro, 0));
		sqlite3_reset(ro);
		return count == 1 && g >= 0 && follow_guide(ns, g, src, seen, nseen, NEXT_W_GUIDE_ALONE, 0, all, n, cap);
	}
	sqlite3_stmt *rt = ns->st_routes_through;
	sqlite3_bind_int(rt, 1, ns->docs[src].id);
	sqlite3_bind_int(rt, 2, ns->docs[seen[nseen - 1]].id);
	int routes[8], agree[8], before[8], nroutes = 0, most = 0, best = 0;
	while (sqlite3_step(rt) == SQLITE_ROW && nroutes < 8) {
		int g = doc_of_id(ns, sqlite3_column_int(rt, 0));
		if (g >= 0)
			routes[nroutes++] = g;
	}
	sqlite3_reset(rt);
	for (int i = 0; i < nroutes; i++) {
		agree[i] = route_agrees(ns, routes[i], src, seen, nseen, &before[i]);
		if (agree[i] > most) {
			most = agree[i];
			best = 0;
		}
		best += agree[i] == most;
	}
	bool found = false;
	for (int i = 0; i < nroutes && most > 0; i++)
		if (agree[i] == most) {
			int could = before[i] < nseen - 1 ? before[i] : nseen - 1;
			double share = could > 0 ? (double)agree[i] / could : 1.0;
			found |= follow_guide(ns, routes[i], src, seen, nseen, NEXT_W_GUIDE_FOLLOWED * share / best, tier,
					      all, n, cap);
		}
	return found;
}

int atlas_next_seen_split(const char **out, char *text)
{
	const char *ring[ATLAS_SEEN_MAX];
	int ntok = 0, n = 0;
	char *save = NULL;
	for (char *tok = text ? strtok_r(text, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save))
		ring[ntok++ % ATLAS_SEEN_MAX] = tok;
	for (int i = ntok > ATLAS_SEEN_MAX ? ntok - ATLAS_SEEN_MAX : 0; i < ntok; i++)
		out[n++] = ring[i % ATLAS_SEEN_MAX];
	return n;
}

int atlas_next(atlas_next_results *res, atlas_engine *e, const atlas_next_params *p, atlas_error *err)
{
	const next_state *ns = engine_next(e);
	memset(res, 0, sizeof(*res));
	/* paths as a reader or a page gives them: resolved to the sitemap's (atlas_engine_resolve) */
	char buf[512];
	int src = atlas_engine_find(e, atlas_engine_resolve(e, p->path, buf, sizeof(buf)));
	if (src < 0)
		return atlas_error_set(err, ATLAS_ENOTFOUND, "no page at path '%s'", p->path ? p->path : "");
	int guide = -1;
	if (p->guide && p->guide[0]) {
		guide = atlas_engine_find(e, atlas_engine_resolve(e, p->guide, buf, sizeof(buf)));
		if (guide < 0 || ns->docs[guide].type_id != ATLAS_TYPE_GUIDE)
			return atlas_error_set(err, ATLAS_ENOTFOUND, "no guide '%s'", p->guide);
	}
	int limit = p->limit > 0 ? p->limit : 5;
	if (limit > ATLAS_LIMIT_MAX)
		limit = ATLAS_LIMIT_MAX;
	res->doc = src;
	/* read pages: the current one and the last ATLAS_SEEN_MAX listed (read most recently) */
	int seen[ATLAS_SEEN_MAX + 1];
	int nseen = 0;
	seen[nseen++] = src;
	for (int i = p->nseen > ATLAS_SEEN_MAX ? p->nseen - ATLAS_SEEN_MAX : 0; i < p->nseen; i++) {
		int d = atlas_engine_find(e, atlas_engine_resolve(e, p->seen[i], buf, sizeof(buf)));
		if (d >= 0)
			seen[nseen++] = d;
	}
	int cap = 256, n = 0;
	nx *all = malloc((size_t)cap * sizeof(nx)); /* slot_for clears each slot it hands out */
	if (!all)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	atlas_arena details = ATLAS_ARENA_INIT(4096); /* copies of the rows' details */
	int src_next, last_next = -1, named;
	int rc = page_rows(ns, src, 1.0, true, &all, &n, &cap, &details, &src_next);
	/* the pages read just before lend their candidates, without reasons: the last listed first
	 * (read at no weight when the context has none: the page it names next is wanted below) */
	double scale = ns->next_w[NEXT_W_CONTEXT_INDEX];
	for (int k = nseen - 1; rc == 0 && k >= 1 && k >= nseen - NEXT_CONTEXT_PAGES && (scale > 0 || k == nseen - 1);
	     k--) {
		rc = page_rows(ns, seen[k], scale, false, &all, &n, &cap, &details, &named);
		if (k == nseen - 1)
			last_next = named;
		scale *= 0.5;
	}
	if (rc) {
		free(all);
		atlas_arena_free(&details);
		return rc == ATLAS_ENOMEM ? atlas_error_set(err, ATLAS_ENOMEM, "out of memory")
					  : atlas_error_set(err, ATLAS_ESQL, "read next: %s", sqlite3_errmsg(ns->db));
	}
	/* the guide the reader follows: its first unread step after this page comes first. Else the
	 * page this one names next (rel=next), the site's own order, comes first, unless the reader
	 * came here by a route (the page read last its step before this one) and not by that order
	 * (the page read last does not name this one next): a reader going from chapter to chapter
	 * is shown the next chapter before this one's first section. */
	bool by_order = src_next < 0 || nseen == 1 || last_next == src, routed = false;
	if (guide >= 0)
		follow_guide(ns, guide, src, seen, nseen, NEXT_W_GUIDE_CHOSEN, 2, &all, &n, &cap);
	else
		routed = follow_read_route(ns, src, seen, nseen, by_order ? 0 : 1, &all, &n, &cap) && !by_order;
	nx *named_next = src_next >= 0 ? slot_for(&all, &n, &cap, src_next) : NULL;
	if (named_next) {
		named_next->kept += ns->next_w[NEXT_PAGE_NEXT];
		named_next->tier = named_next->tier > (routed ? 0 : 1) ? named_next->tier : (routed ? 0 : 1);
	}
	/* leave out what was read and site pages; weigh page types */
	for (int i = 0; i < n; i++) {
		nx *c = &all[i];
		for (int k = 0; k < nseen; k++)
			c->excluded |= seen[k] == c->doc;
		int type = ns->docs[c->doc].type_id;
		if (type == ATLAS_TYPE_PAGE)
			c->excluded = true;
		else if (type == ATLAS_TYPE_TOPIC)
			c->score *= ns->next_w[NEXT_W_TYPE_TOPIC_INDEX];
		else if (type == ATLAS_TYPE_GUIDE)
			c->score *= ns->next_w[NEXT_W_TYPE_GUIDE_INDEX];
		c->score += c->kept; /* the route's and the site's own next, whatever the page's type */
	}
	/* greedy selection with a penalty for repeating a topic already chosen */
	res->items = calloc((size_t)limit, sizeof(atlas_next_item));
	for (int pick = 0; res->items && pick < limit; pick++) {
		int best = -1;
		for (int i = 0; i < n; i++)
			if (!all[i].excluded && all[i].score > 0 &&
			    (best < 0 || cmp_nx(&all[i], &all[best], ns) < 0))
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
		/* suggested by the pages read before this one alone */
		if (c->nreasons == 0 && (it->reasons[0] = strdup("Near the pages you have read")))
			it->nreasons = 1;
		const atlas_doc *cd = &ns->docs[c->doc];
		for (int i = 0; i < n; i++) {
			const atlas_doc *od = &ns->docs[all[i].doc];
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
