/* meili.c - a read-only Meilisearch-compatible subset of routes, so that Meilisearch clients
 * (meilisearch-js, instant-meilisearch, meilisearch-docsearch) search the Atlas index unchanged:
 * POST /indexes/{uid}/search, POST /multi-search, GET /indexes/{uid}, GET /health, GET /version.
 * The requests are read by meili_query.c; this file answers them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "api.h"
#include "arena.h"
#include "json.h"
#include "meili.h"
#include "utf8.h"

/* Returns the cJSON object of me (NULL when out of memory). */
static cJSON *error_object(const meili_error *me)
{
	char link[128];
	snprintf(link, sizeof(link), MEILI_LINK "%s", me->code);
	char *msg = strdup(me->message);
	if (msg)
		atlas_utf8_clean(msg, strlen(msg));
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "message", msg ? msg : "");
	cJSON_AddStringToObject(o, "code", me->code);
	cJSON_AddStringToObject(o, "type", me->type);
	cJSON_AddStringToObject(o, "link", link);
	free(msg);
	return o;
}

/* The arena this thread's trees are built in while meili_answer runs (see atlas_json_use_arena). */
static _Thread_local atlas_arena *tree_arena;

/* Makes rp the JSON of o (a tree in tree_arena, freed with it) with status. */
static void reply_tree(reply *rp, int status, cJSON *o)
{
	atlas_json_use_arena(NULL); /* the text on the heap */
	char *text = o ? cJSON_PrintBuffered(o, 16384, 0) : NULL;
	atlas_json_use_arena(tree_arena);
	reply_json(rp, status, text);
}

/* Makes rp the error me in Meilisearch's shape. */
static void reply_meili_error(reply *rp, const meili_error *me)
{
	reply_tree(rp, me->status, error_object(me));
}


/* Appends html (text written by strbuf_append_html, with <mark> highlights) to sb as plain text:
 * entities decoded, <mark> and </mark> as pre and post (or left out when pre is NULL). */
static void put_unhtml(strbuf *sb, const char *html, const char *pre, const char *post)
{
	static const struct {
		const char *entity, *text;
	} ents[] = { { "&amp;", "&" }, { "&lt;", "<" },   { "&gt;", ">" },   { "&quot;", "\"" },
		     { "&#39;", "'" }, { "&#x27;", "'" }, { "&#92;", "\\" }, { "&#x5c;", "\\" } };
	for (const char *p = html; *p;) {
		size_t plain = strcspn(p, "<&");
		if (plain) {
			strbuf_append(sb, p, plain);
			p += plain;
			continue;
		}
		if (strncmp(p, "<mark>", 6) == 0) {
			if (pre)
				strbuf_puts(sb, pre);
			p += 6;
			continue;
		}
		if (strncmp(p, "</mark>", 7) == 0) {
			if (post)
				strbuf_puts(sb, post);
			p += 7;
			continue;
		}
		if (*p == '&') {
			size_t k = 0;
			while (k < sizeof(ents) / sizeof(ents[0]) && strncmp(p, ents[k].entity, strlen(ents[k].entity)))
				k++;
			if (k < sizeof(ents) / sizeof(ents[0])) {
				strbuf_puts(sb, ents[k].text);
				p += strlen(ents[k].entity);
				continue;
			}
		}
		strbuf_putc(sb, *p++);
	}
}

/* Crops text (plain, with pre/post around matches) to about words words around its first match
 * (from its start when it has none), marker where it was cut, into out. */
static void crop_text(strbuf *out, const char *text, int words, const char *pre, const char *marker)
{
	/* word starts */
	int starts[1024], n = 0;
	for (int i = 0; text[i] && n < 1024; i++)
		if (text[i] != ' ' && (i == 0 || text[i - 1] == ' '))
			starts[n++] = i;
	if (n <= words) {
		strbuf_puts(out, text);
		return;
	}
	const char *hit = pre && *pre ? strstr(text, pre) : NULL;
	int first = 0;
	if (hit)
		for (int k = 0; k < n && starts[k] <= hit - text; k++)
			first = k;
	int from = first - words / 3;
	if (from < 0)
		from = 0;
	if (from + words > n)
		from = n - words;
	int to = from + words; /* word index past the end */
	const char *b = text + starts[from];
	const char *e = to < n ? text + starts[to] : text + strlen(text);
	while (e > b && e[-1] == ' ')
		e--;
	/* text starting with the marker already (an Atlas snippet cut there) keeps its own */
	bool begins_cut = strncmp(b, "…", strlen("…")) == 0;
	if (from > 0 && !begins_cut)
		strbuf_puts(out, marker);
	strbuf_append(out, b, (size_t)(e - b));
	if (to < n)
		strbuf_puts(out, marker);
}

/* Returns the category of page d as DocSearch shows it (hierarchy_lvl0): the title of its first
 * topic's topic page, the topic itself when it has no page, its type when it has no topic. Owned
 * by the engine. */
static const char *category(const atlas_engine *e, const atlas_doc *d)
{
	if (d->ntopics < 1)
		return d->type;
	int i = atlas_engine_topic_page(e, d->topics[0]);
	return i >= 0 ? atlas_engine_doc(e, i)->title : d->topics[0];
}

/* Adds to o the topics of page d as attribute name: as they are (topics) or, for topic, every
 * level of each, so that a filter or facet on any level matches. */
static void add_topics(cJSON *o, const char *name, const atlas_doc *d, bool levels)
{
	cJSON *a = cJSON_AddArrayToObject(o, name);
	for (int k = 0; k < d->ntopics; k++) {
		if (!levels) {
			cJSON_AddItemToArray(a, cJSON_CreateString(d->topics[k]));
			continue;
		}
		const char *t = d->topics[k];
		for (const char *p = t;; p++) {
			if (*p == '/' || *p == '\0') {
				char level[FILTER_VALUE_MAX + 1];
				snprintf(level, sizeof(level), "%.*s", (int)(p - t), t);
				bool dup = false;
				const cJSON *it;
				cJSON_ArrayForEach(it, a) dup = dup || strcmp(it->valuestring, level) == 0;
				if (!dup)
					cJSON_AddItemToArray(a, cJSON_CreateString(level));
			}
			if (!*p)
				break;
		}
	}
}

/* Adds to o the value of attribute i (MEILI_A_*) of hit h (page d); formatted: the _formatted
 * form (with the query's highlight tags and crops). The DocSearch attributes describe a page as
 * docs-scraper does: hierarchy_lvl0 its category, hierarchy_lvl1 its title, hierarchy_lvl2 and
 * anchor its best section (null without one), content its snippet. */
static void add_attribute(cJSON *o, int i, const atlas_engine *e, const atlas_hit *h, const atlas_doc *d,
			  const query *qr, bool formatted)
{
	const char *name = meili_attributes[i];
	char idbuf[24];
	strbuf sb = STRBUF_INIT;
	const char *plain = NULL;
	const char *html = NULL; /* highlighted html, for title and content */
	const atlas_section_hit *sec = h->nsections > 0 ? &h->sections[0] : NULL;
	switch (i) {
	case MEILI_A_ID:
		snprintf(idbuf, sizeof(idbuf), "%d", d->id);
		plain = idbuf;
		break;
	case MEILI_A_PATH: plain = d->path; break;
	case MEILI_A_URL: plain = d->url; break;
	case MEILI_A_TITLE:
	case MEILI_A_LVL1: plain = d->title; html = h->title_html; break;
	case MEILI_A_TYPE: plain = d->type; break;
	case MEILI_A_DESCRIPTION: plain = d->description; break;
	case MEILI_A_LASTMOD: plain = d->lastmod; break;
	case MEILI_A_IMAGE: plain = d->image; break;
	case MEILI_A_TOPICS:
	case MEILI_A_TOPIC: add_topics(o, name, d, i == MEILI_A_TOPIC); return;
	case MEILI_A_LVL0: plain = category(e, d); break;
	case MEILI_A_LVL2:
	case MEILI_A_ANCHOR:
		if (!sec || !(i == MEILI_A_LVL2 ? sec->heading : sec->anchor)) {
			cJSON_AddNullToObject(o, name);
			return;
		}
		if (i == MEILI_A_LVL2)
			html = sec->heading;
		else
			plain = sec->anchor;
		break;
	case MEILI_A_CONTENT: html = h->snippet ? h->snippet : ""; break;
	}
	if (!html && !(formatted && qr->crop[i])) {
		/* the index's text is valid UTF-8 already */
		cJSON_AddStringToObject(o, name, plain ? plain : "");
		return;
	}
	if (html) {
		put_unhtml(&sb, html, formatted && qr->highlight[i] ? qr->pre : NULL,
			   formatted && qr->highlight[i] ? qr->post : NULL);
	} else {
		strbuf_puts(&sb, plain ? plain : "");
	}
	if (formatted && qr->crop[i]) {
		strbuf c = STRBUF_INIT;
		crop_text(&c, strbuf_str(&sb), qr->crop_length, qr->highlight[i] ? qr->pre : NULL, qr->marker);
		strbuf_free(&sb);
		sb = c;
	}
	/* a crop marker is the client's text: made valid UTF-8 */
	if (formatted && qr->crop[i] && sb.buf)
		atlas_utf8_clean(sb.buf, sb.len);
	cJSON_AddStringToObject(o, name, strbuf_str(&sb));
	strbuf_free(&sb);
}

/* See meili.h. */
cJSON *meili_results(atlas_engine *e, const query *qr, meili_error *me, long *count)
{
	atlas_search_params p = { qr->q, qr->limit > 0 ? qr->limit : 1, qr->offset, NULL, NULL, false, false };
	atlas_search_more more;
	memset(&more, 0, sizeof(more));
	more.accept = qr->f.root >= 0 ? meili_accept_filter : NULL;
	more.accept_ctx = (void *)&qr->f;
	more.sort = qr->sort;
	atlas_results r;
	atlas_error err = { 0, "" };
	int rc = atlas_search_with(&r, e, &p, &more, &err);
	if (rc) {
		if (rc == ATLAS_EINVAL) {
			meili_fail(me, 400, "bad_request", "%s", err.msg);
		} else {
			fprintf(stderr, "atlas-serve: search failed: %s\n", err.msg);
			meili_fail(me, 500, "internal", "the index could not answer this query");
		}
		return NULL;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON *hits = cJSON_AddArrayToObject(o, "hits");
	int nhits = qr->limit > 0 ? r.nhits : 0;
	for (int k = 0; k < nhits; k++) {
		const atlas_hit *h = &r.hits[k];
		const atlas_doc *d = atlas_engine_doc(e, h->doc);
		cJSON *hit = cJSON_CreateObject();
		for (int i = 0; meili_attributes[i]; i++)
			if (qr->retrieve[i])
				add_attribute(hit, i, e, h, d, qr, false);
		if (qr->formatted) {
			cJSON *f = cJSON_AddObjectToObject(hit, "_formatted");
			for (int i = 0; meili_attributes[i]; i++)
				if (qr->retrieve[i])
					add_attribute(f, i, e, h, d, qr, true);
		}
		cJSON_AddItemToArray(hits, hit);
	}
	char *clean = strdup(qr->q);
	cJSON_AddStringToObject(o, "query", clean ? clean : "");
	free(clean);
	cJSON_AddNumberToObject(o, "processingTimeMs", (double)(long)(r.took_ms + 0.5));
	if (qr->paged) {
		int hpp = qr->hits_per_page;
		cJSON_AddNumberToObject(o, "hitsPerPage", hpp);
		cJSON_AddNumberToObject(o, "page", qr->page);
		cJSON_AddNumberToObject(o, "totalPages", hpp > 0 ? (r.total + hpp - 1) / hpp : 0);
		cJSON_AddNumberToObject(o, "totalHits", r.total);
	} else {
		cJSON_AddNumberToObject(o, "limit", qr->limit);
		cJSON_AddNumberToObject(o, "offset", qr->offset);
		cJSON_AddNumberToObject(o, "estimatedTotalHits", r.total);
	}
	if (qr->facet_type || qr->facet_topic) {
		cJSON *fd = cJSON_AddObjectToObject(o, "facetDistribution");
		if (qr->facet_type) {
			cJSON *t = cJSON_AddObjectToObject(fd, "type");
			for (int k = 0; k < r.ntypes; k++)
				cJSON_AddNumberToObject(t, r.types[k].value, r.types[k].count);
		}
		if (qr->facet_topic) {
			cJSON *t = cJSON_AddObjectToObject(fd, "topic");
			for (int k = 0; k < r.ntopics; k++)
				cJSON_AddNumberToObject(t, r.topics[k].value, r.topics[k].count);
		}
		cJSON_AddObjectToObject(o, "facetStats");
	}
	*count = nhits;
	atlas_results_free(&r);
	return o;
}

/**************************************************************************************************
** Routes.
*/

/* Returns whether url (origin or absolute form) is one of the subset's paths: /indexes and what is
 * below it, /multi-search, /health, /version, /keys, /stats, /tasks. Never fails. */
bool meili_route(const server *s, const char *url)
{
	if (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0) {
		const char *path = strchr(strstr(url, "//") + 2, '/');
		url = path ? path : "/";
	}
	return strcmp(url, "/multi-search") == 0 || strcmp(url, "/health") == 0 || strcmp(url, "/version") == 0 ||
	       strcmp(url, "/indexes") == 0 || strncmp(url, "/indexes/", 9) == 0 || strcmp(url, "/keys") == 0 ||
	       strcmp(url, "/stats") == 0 || strcmp(url, "/tasks") == 0 || strncmp(url, "/tasks/", 7) == 0;
}

/* Returns whether a and b hold the same bytes, in a time that depends on their lengths only. */
static bool same_secret(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	unsigned char diff = na != nb;
	for (size_t i = 0; i < nb; i++)
		diff |= (unsigned char)(b[i] ^ (i < na ? a[i] : 0));
	return diff == 0;
}

/* Checks the API key: Authorization: Bearer KEY when --api-key-file gave one. Returns 0, or -1
 * with the error set (401 without the header, 403 with a wrong key). */
static int check_key(const server *s, struct MHD_Connection *c, meili_error *me)
{
	if (!s->cfg->api_key)
		return 0;
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || !*h)
		return meili_fail(me, 401, "missing_authorization_header",
			    "The Authorization header is missing. It must use the bearer authorization method.");
	if (strncasecmp(h, "Bearer ", 7) != 0)
		return meili_fail(me, 401, "missing_authorization_header",
			    "The Authorization header must use the bearer authorization method.");
	const char *key = h + 7;
	while (*key == ' ')
		key++;
	if (!same_secret(key, s->cfg->api_key))
		return meili_fail(me, 403, "invalid_api_key", "The provided API key is invalid.");
	return 0;
}

/* Parses the request body as JSON. Returns the tree (the caller deletes it), or NULL with the
 * error set. */
static cJSON *body_json(const request *rq, meili_error *me)
{
	if (rq->body_too_large) {
		meili_fail(me, 413, "payload_too_large", "The provided payload reached the size limit of %d bytes.",
		     SERVE_BODY_MAX);
		return NULL;
	}
	if (rq->body.len == 0) {
		meili_fail(me, 400, "missing_payload", "A json payload is missing.");
		return NULL;
	}
	cJSON *root = cJSON_ParseWithLength(rq->body.buf, rq->body.len);
	if (!root)
		meili_fail(me, 400, "malformed_payload", "The json payload provided is malformed.");
	return root;
}

/* What answer_meili computes: one search, and where its failure goes. */
typedef struct meili_args {
	const query *qr;
	const char *uid;             /* added to the answer as indexUid (multi-search), or NULL */
	meili_error *me;             /* set when the answer is an error */
} meili_args;

/* The answer_fn of a Meilisearch search (args: a meili_args): the response object's JSON, or the
 * error in Meilisearch's shape (then also in args->me). */
static void answer_meili(atlas_engine *e, const void *args, reply *rp, long *count)
{
	const meili_args *a = args;
	cJSON *o = meili_results(e, a->qr, a->me, count);
	if (!o) {
		reply_meili_error(rp, a->me);
		return;
	}
	if (a->uid)
		cJSON_AddItemToObject(o, "indexUid", cJSON_CreateString(a->uid));
	reply_tree(rp, 200, o);
}

/* Answers the search qr (the JSON object o, a query of index uid) into rp through the response
 * cache (api_compute), keyed by o's text; tagged: the answer carries indexUid. Returns 0 (also
 * when the client left: rp->abandon), or meili_status_code(me->status) with *me set (rp then
 * empty) when the answer is an error. */
static int cached_search(server *s, struct MHD_Connection *c, const cJSON *o, const query *qr, const char *uid,
			 bool tagged, reply *rp, long *count, meili_error *me)
{
	strbuf norm = STRBUF_INIT;
	strbuf_printf(&norm, "POST /indexes/%s/search%s\n", uid, tagged ? " (multi)" : "");
	char *text = cJSON_PrintUnformatted(o); /* in the request's arena */
	if (text)
		strbuf_puts(&norm, text);
	else
		norm.oom = true;
	meili_args args = { qr, tagged ? uid : NULL, me };
	char build[64];
	me->status = 0;
	api_compute(s, c, &norm, answer_meili, &args, rp, count, build);
	strbuf_free(&norm);
	if (rp->abandon || rp->status == 200)
		return 0;
	if (!me->status) {
		/* refused before the search: too many expensive requests (429), or out of memory */
		if (rp->status == 429)
			meili_fail(me, 429, "too_many_search_requests",
				   "this client's expensive searches are answered one at a time: retry after %s s",
				   rp->retry_after ? rp->retry_after : "1");
		else
			meili_fail(me, 500, "internal", "the index could not answer this query");
	}
	free(rp->owned);
	rp->owned = NULL;
	rp->body = NULL;
	rp->len = 0;
	return meili_status_code(me->status);
}

/* Answers POST /indexes/{uid}/search. */
static void search_route(server *s, struct MHD_Connection *c, request *rq, reply *rp, meili_error *me)
{
	cJSON *root = body_json(rq, me);
	query qr;
	if (!root || meili_read_query(&qr, root, me) ||
	    cached_search(s, c, root, &qr, s->cfg->index_uid, false, rp, &rq->count, me)) {
		cJSON_Delete(root);
		if (!rp->abandon)
			reply_meili_error(rp, me);
		return;
	}
	cJSON_Delete(root);
}

/* Checks the request of a multi-search: its queries array (n of them, at most
 * MEILI_QUERIES_MAX). Returns the array, or NULL with *me set. */
static const cJSON *multi_queries(const cJSON *root, meili_error *me)
{
	const cJSON *queries = cJSON_GetObjectItemCaseSensitive(root, "queries");
	int n = cJSON_IsArray(queries) ? cJSON_GetArraySize(queries) : -1;
	if (cJSON_GetObjectItemCaseSensitive(root, "federation"))
		meili_fail(me, 400, "bad_request", "federated multi-search is not supported");
	else if (n < 0)
		meili_fail(me, 400, "bad_request", "Missing field `queries`: expected an array of search queries");
	else if (n > MEILI_QUERIES_MAX)
		meili_fail(me, 400, "bad_request", "at most %d queries in one multi-search", MEILI_QUERIES_MAX);
	else
		return queries;
	return NULL;
}

/* Answers POST /multi-search: {"queries": [{"indexUid", ...}]} into {"results": [...]}, each
 * query answered through the response cache on its own; the first query that fails makes the
 * whole answer its error, as Meilisearch does. */
static void multi_route(server *s, struct MHD_Connection *c, request *rq, reply *rp, meili_error *me)
{
	cJSON *root = body_json(rq, me);
	const cJSON *queries = root ? multi_queries(root, me) : NULL;
	if (!queries) {
		cJSON_Delete(root);
		reply_meili_error(rp, me);
		return;
	}
	strbuf out = STRBUF_INIT;
	strbuf_puts(&out, "{\"results\":[");
	const cJSON *q;
	long total = 0;
	int i = 0;
	bool failed = false;
	cJSON_ArrayForEach(q, queries) {
		const cJSON *uid = cJSON_GetObjectItemCaseSensitive(q, "indexUid");
		query qr;
		reply one;
		long count = 0;
		memset(&one, 0, sizeof(one));
		if (!cJSON_IsString(uid)) {
			failed = meili_fail(me, 400, "missing_index_uid", "Missing field `indexUid` in query %d", i);
		} else if (strcmp(uid->valuestring, s->cfg->index_uid) != 0) {
			failed = meili_fail(me, 404, "index_not_found", "Inside `.queries[%d]`: Index `%.64s` not found.",
					    i, uid->valuestring);
		} else if (meili_read_query(&qr, q, me) ||
			   cached_search(s, c, q, &qr, s->cfg->index_uid, true, &one, &count, me)) {
			failed = true;
			if (!one.abandon) {
				char msg[sizeof(me->message) + 40];
				snprintf(msg, sizeof(msg), "Inside `.queries[%d]`: %.400s", i, me->message);
				snprintf(me->message, sizeof(me->message), "%.470s", msg);
			}
		}
		if (one.abandon) {
			free(one.owned);
			rp->abandon = true;
			break;
		}
		if (failed) {
			rp->retry_after = one.retry_after;
			break;
		}
		size_t n = one.len;
		while (n && one.body[n - 1] == '\n')
			n--;
		if (i++)
			strbuf_putc(&out, ',');
		strbuf_append(&out, one.body, n);
		free(one.owned);
		total += count;
	}
	cJSON_Delete(root);
	if (rp->abandon || failed) {
		strbuf_free(&out);
		if (!rp->abandon)
			reply_meili_error(rp, me);
		return;
	}
	strbuf_puts(&out, "]}");
	rq->count = total;
	if (out.oom) {
		strbuf_free(&out);
		reply_json(rp, 500, NULL);
		return;
	}
	reply_json(rp, 200, strbuf_detach(&out));
}

/* Returns the ISO 8601 time of the served build, into buf. */
static const char *built_at(server *s, char *buf, size_t cap)
{
	live_info li;
	live_info_get(s->index, &li);
	snprintf(buf, cap, "%s", li.built_at[0] ? li.built_at : "1970-01-01T00:00:00Z");
	return buf;
}

static void answer(server *s, struct MHD_Connection *c, request *rq, const char *method, reply *rp);

/* Answers rq (see api.h), with every cJSON tree of the answer in one arena, freed at the end.
 * Never fails: errors are replies in Meilisearch's shape. */
void meili_answer(server *s, struct MHD_Connection *c, request *rq, const char *method, reply *rp)
{
	atlas_arena a = ATLAS_ARENA_INIT(32 * 1024);
	tree_arena = &a;
	atlas_json_use_arena(&a);
	answer(s, c, rq, method, rp);
	atlas_json_use_arena(NULL);
	tree_arena = NULL;
	atlas_arena_free(&a);
}

/* Answers one request of the subset into rp. */
static void answer(server *s, struct MHD_Connection *c, request *rq, const char *method, reply *rp)
{
	meili_error me;
	memset(&me, 0, sizeof(me));
	const char *url = rq->url;
	if (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0) {
		const char *path = strchr(strstr(url, "//") + 2, '/');
		url = path ? path : "/";
	}
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	bool post = strcmp(method, "POST") == 0;
	rp->methods = "GET, HEAD, POST, OPTIONS";
	if (strcmp(url, "/health") == 0 && get) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "status", "available");
		reply_tree(rp, 200, o);
		return;
	}
	if (check_key(s, c, &me)) {
		if (me.status == 401)
			rp->www_authenticate = "Bearer";
		reply_meili_error(rp, &me);
		return;
	}
	char when[64];
	const char *uid = s->cfg->index_uid;
	size_t ulen = strlen(uid);
	const char *rest = strncmp(url, "/indexes/", 9) == 0 ? url + 9 : NULL;
	bool ours = rest && strncmp(rest, uid, ulen) == 0 && (rest[ulen] == '\0' || rest[ulen] == '/');
	if (strcmp(url, "/version") == 0 && get) {
		live_info li;
		live_info_get(s->index, &li);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "commitSha", li.build_id);
		cJSON_AddStringToObject(o, "commitDate", built_at(s, when, sizeof(when)));
		cJSON_AddStringToObject(o, "pkgVersion", MEILI_API_VERSION);
		reply_tree(rp, 200, o);
	} else if (strcmp(url, "/multi-search") == 0 && post) {
		multi_route(s, c, rq, rp, &me);
	} else if (rest && !ours && (get || post)) {
		char name[80];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(rest, "/"), rest);
		meili_fail(&me, 404, "index_not_found", "Index `%.64s` not found.", name);
		reply_meili_error(rp, &me);
	} else if (ours && rest[ulen] == '\0' && get) {
		live_info li;
		live_info_get(s->index, &li);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "uid", uid);
		cJSON_AddStringToObject(o, "createdAt", built_at(s, when, sizeof(when)));
		cJSON_AddStringToObject(o, "updatedAt", when);
		cJSON_AddStringToObject(o, "primaryKey", "id");
		reply_tree(rp, 200, o);
	} else if (ours && strcmp(rest + ulen, "/search") == 0 && post) {
		search_route(s, c, rq, rp, &me);
	} else {
		meili_fail(&me, 405, "method_not_allowed",
		     "%s %s is not allowed: this Meilisearch-compatible subset is read-only (GET /health, "
		     "GET /version, GET /indexes/%s, POST /indexes/%s/search, POST /multi-search)",
		     rq->method, rq->path, uid, uid);
		rp->allow = true;
		reply_meili_error(rp, &me);
	}
}
