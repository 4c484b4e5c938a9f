/* json.c - response bodies as JSON, through cJSON. */
#include "json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "utf8.h"

/**************************************************************************************************
** The tree of one response, in an arena.
*/

/* While a response's tree is built, cJSON's allocations come from an arena of the calling
 * thread, freed whole once the tree is printed: a search response is a few hundred nodes, and
 * allocating and freeing each of them on the heap was over a quarter of building it. Outside a
 * response (json_arena NULL) the hooks are plain malloc and free, so cJSON used anywhere else in
 * the process is unaffected; a tree built in the arena is never passed to cJSON_Delete. */
#define JSON_ARENA_BLOCK (32 * 1024)

static _Thread_local atlas_arena *json_arena;
static pthread_once_t json_hooks_once = PTHREAD_ONCE_INIT;

static void *json_alloc(size_t n)
{
	return json_arena ? atlas_arena_alloc(json_arena, n) : malloc(n);
}

static void json_dealloc(void *p)
{
	if (!json_arena)
		free(p);
}

static void json_install_hooks(void)
{
	cJSON_Hooks hooks = { json_alloc, json_dealloc };
	cJSON_InitHooks(&hooks);
}

/* Starts a response's tree in arena a: returns its root object (NULL when out of memory). */
static cJSON *begin(atlas_arena *a)
{
	pthread_once(&json_hooks_once, json_install_hooks);
	json_arena = a;
	return cJSON_CreateObject();
}

/* Prints root unformatted into a heap buffer first sized at guess bytes, frees the arena holding
 * the tree, and returns the text (the caller frees it), or NULL when out of memory. */
static char *finish(atlas_arena *a, cJSON *root, int guess)
{
	json_arena = NULL;
	char *s = root ? cJSON_PrintBuffered(root, guess, 0) : NULL;
	atlas_arena_free(a);
	return s;
}

/* Members whose key is a literal and whose value outlives the tree: added without copies (the
 * tree is printed before the results it points into are freed). */
static void add_str(cJSON *o, const char *key, const char *value)
{
	cJSON_AddItemToObjectCS(o, key, cJSON_CreateStringReference(value));
}

/* Adds html, text written by strbuf_append_html with literal tags and UTF-8 around it, which
 * holds nothing JSON escapes: put in quotes and printed as it is, without cJSON looking at each
 * byte for escapes (on a search response, the longest step of printing it). */
static void add_html(cJSON *o, const char *key, const char *html)
{
	size_t n = strlen(html);
	char *quoted = json_alloc(n + 3);
	if (!quoted)
		return;
	quoted[0] = '"';
	memcpy(quoted + 1, html, n);
	quoted[n + 1] = '"';
	quoted[n + 2] = '\0';
	cJSON_AddItemToObjectCS(o, key, cJSON_CreateRaw(quoted));
}

static void add_num(cJSON *o, const char *key, double value)
{
	cJSON_AddItemToObjectCS(o, key, cJSON_CreateNumber(value));
}

/* Adds x rounded to 3 decimals, written here ("12.5", "0.042"; a count prints as an integer):
 * cJSON prints every number twice over (printf, then scanf to check it), the dearest step of a
 * response. */
static void add_num3(cJSON *o, const char *key, double x)
{
	double r = round(x * 1000.0);
	if (!isfinite(r) || fabs(r) > 9e15) {
		add_num(o, key, isfinite(x) ? x : 0);
		return;
	}
	char buf[32], *p = buf + sizeof(buf);
	long long v = (long long)r;
	bool neg = v < 0;
	unsigned long long u = neg ? (unsigned long long)(-v) : (unsigned long long)v;
	*--p = '\0';
	unsigned frac = (unsigned)(u % 1000);
	if (frac) {
		int digits = 3;
		while (frac % 10 == 0) {
			frac /= 10;
			digits--;
		}
		for (int i = 0; i < digits; i++, frac /= 10)
			*--p = (char)('0' + frac % 10);
		*--p = '.';
	}
	u /= 1000;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (neg)
		*--p = '-';
	cJSON_AddItemToObjectCS(o, key, cJSON_CreateRaw(p));
}

static cJSON *array_in(cJSON *o, const char *key)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToObjectCS(o, key, a);
	return a;
}

static cJSON *object_in(cJSON *o, const char *key)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddItemToObjectCS(o, key, a);
	return a;
}

static cJSON *doc_fields(cJSON *o, const atlas_doc *d)
{
	add_str(o, "path", d->path);
	add_str(o, "url", d->url);
	add_str(o, "title", d->title);
	add_str(o, "type", d->type);
	return o;
}

char *atlas_json_search(const atlas_engine *e, const atlas_results *r)
{
	atlas_arena a = ATLAS_ARENA_INIT(JSON_ARENA_BLOCK);
	cJSON *root = begin(&a);
	add_str(root, "query", r->query ? r->query : "");
	add_num3(root, "total", r->total);
	cJSON_AddItemToObjectCS(root, "total_exact", cJSON_CreateBool(r->total_exact));
	add_num3(root, "took_ms", r->took_ms);
	if (r->did_you_mean)
		add_str(root, "did_you_mean", r->did_you_mean);
	else
		cJSON_AddItemToObjectCS(root, "did_you_mean", cJSON_CreateNull());
	cJSON *results = array_in(root, "results");
	for (int i = 0; i < r->nhits; i++) {
		const atlas_hit *h = &r->hits[i];
		const atlas_doc *d = atlas_engine_doc(e, h->doc);
		cJSON *o = doc_fields(cJSON_CreateObject(), d);
		add_num3(o, "score", h->score);
		add_html(o, "snippet", h->snippet ? h->snippet : "");
		cJSON *topics = array_in(o, "topics");
		for (int k = 0; k < d->ntopics; k++)
			cJSON_AddItemToArray(topics, cJSON_CreateStringReference(d->topics[k]));
		cJSON *secs = array_in(o, "sections");
		for (int k = 0; k < h->nsections; k++) {
			cJSON *s = cJSON_CreateObject();
			add_html(s, "heading", h->sections[k].heading);
			add_str(s, "anchor", h->sections[k].anchor);
			add_html(s, "snippet", h->sections[k].snippet);
			cJSON_AddItemToArray(secs, s);
		}
		if (h->explain)
			add_str(o, "explain", h->explain);
		cJSON_AddItemToArray(results, o);
	}
	cJSON *facets = object_in(root, "facets");
	cJSON *types = object_in(facets, "type");
	for (int k = 0; k < r->ntypes; k++)
		add_num3(types, r->types[k].value, r->types[k].count);
	cJSON *topics = array_in(facets, "topic");
	for (int k = 0; k < r->ntopics; k++) {
		cJSON *t = cJSON_CreateObject();
		add_str(t, "path", r->topics[k].value);
		add_str(t, "title", r->topics[k].label);
		add_num3(t, "count", r->topics[k].count);
		cJSON_AddItemToArray(topics, t);
	}
	if (r->explain)
		add_str(root, "explain", r->explain);
	return finish(&a, root, 2048 + 1536 * r->nhits);
}

char *atlas_json_suggest(const atlas_engine *e, const char *query, const atlas_suggestion *s, int n)
{
	atlas_arena a = ATLAS_ARENA_INIT(JSON_ARENA_BLOCK);
	cJSON *root = begin(&a);
	char *clean = strdup(query ? query : "");
	if (clean)
		atlas_utf8_clean(clean, strlen(clean)); /* JSON must be valid UTF-8 */
	add_str(root, "query", clean ? clean : "");
	cJSON *arr = array_in(root, "suggestions");
	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		if (s[i].doc >= 0) {
			const atlas_doc *d = atlas_engine_doc(e, s[i].doc);
			add_str(o, "kind", "page");
			add_str(o, "text", d->title);
			doc_fields(o, d);
		} else {
			add_str(o, "kind", "term");
			add_str(o, "text", s[i].term);
		}
		cJSON_AddItemToArray(arr, o);
	}
	char *text = finish(&a, root, 256 + 256 * n);
	free(clean);
	return text;
}

char *atlas_json_next(const atlas_engine *e, const atlas_next_results *r)
{
	atlas_arena a = ATLAS_ARENA_INIT(JSON_ARENA_BLOCK);
	cJSON *root = begin(&a);
	add_str(root, "path", atlas_engine_doc(e, r->doc)->path);
	cJSON *arr = array_in(root, "suggestions");
	for (int i = 0; i < r->nitems; i++) {
		const atlas_next_item *it = &r->items[i];
		cJSON *o = doc_fields(cJSON_CreateObject(), atlas_engine_doc(e, it->doc));
		add_num3(o, "score", it->score);
		cJSON *reasons = array_in(o, "reasons");
		for (int k = 0; k < it->nreasons; k++)
			cJSON_AddItemToArray(reasons, cJSON_CreateStringReference(it->reasons[k]));
		cJSON_AddItemToArray(arr, o);
	}
	return finish(&a, root, 256 + 384 * r->nitems);
}

char *atlas_json_error(const char *code, const char *message)
{
	atlas_arena a = ATLAS_ARENA_INIT(1024);
	cJSON *root = begin(&a);
	cJSON *err = cJSON_AddObjectToObject(root, "error");
	char *clean = strdup(message);
	if (clean)
		atlas_utf8_clean(clean, strlen(clean)); /* messages may quote a reader's input */
	cJSON_AddStringToObject(err, "code", code);
	cJSON_AddStringToObject(err, "message", clean ? clean : "");
	free(clean);
	return finish(&a, root, 256);
}
