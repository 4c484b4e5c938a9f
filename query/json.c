/* json.c - response bodies as JSON, through cJSON. */
#include "json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

static char *finish(cJSON *root)
{
	char *s = root ? cJSON_PrintUnformatted(root) : NULL;
	cJSON_Delete(root);
	return s;
}

static double round3(double x)
{
	return round(x * 1000.0) / 1000.0;
}

static cJSON *doc_fields(cJSON *o, const atlas_doc *d)
{
	cJSON_AddStringToObject(o, "path", d->path);
	cJSON_AddStringToObject(o, "url", d->url);
	cJSON_AddStringToObject(o, "title", d->title);
	cJSON_AddStringToObject(o, "type", d->type);
	return o;
}

char *atlas_json_search(const atlas_engine *e, const atlas_results *r)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "query", r->query ? r->query : "");
	cJSON_AddNumberToObject(root, "total", r->total);
	cJSON_AddNumberToObject(root, "took_ms", round3(r->took_ms));
	if (r->did_you_mean)
		cJSON_AddStringToObject(root, "did_you_mean", r->did_you_mean);
	else
		cJSON_AddNullToObject(root, "did_you_mean");
	cJSON *results = cJSON_AddArrayToObject(root, "results");
	for (int i = 0; i < r->nhits; i++) {
		const atlas_hit *h = &r->hits[i];
		const atlas_doc *d = atlas_engine_doc(e, h->doc);
		cJSON *o = doc_fields(cJSON_CreateObject(), d);
		cJSON_AddNumberToObject(o, "score", round3(h->score));
		cJSON_AddStringToObject(o, "snippet", h->snippet ? h->snippet : "");
		cJSON *topics = cJSON_AddArrayToObject(o, "topics");
		for (int k = 0; k < d->ntopics; k++)
			cJSON_AddItemToArray(topics, cJSON_CreateString(d->topics[k]));
		cJSON *secs = cJSON_AddArrayToObject(o, "sections");
		for (int k = 0; k < h->nsections; k++) {
			cJSON *s = cJSON_CreateObject();
			cJSON_AddStringToObject(s, "heading", h->sections[k].heading);
			cJSON_AddStringToObject(s, "anchor", h->sections[k].anchor);
			cJSON_AddStringToObject(s, "snippet", h->sections[k].snippet);
			cJSON_AddItemToArray(secs, s);
		}
		if (h->explain)
			cJSON_AddStringToObject(o, "explain", h->explain);
		cJSON_AddItemToArray(results, o);
	}
	cJSON *facets = cJSON_AddObjectToObject(root, "facets");
	cJSON *types = cJSON_AddObjectToObject(facets, "type");
	for (int k = 0; k < r->ntypes; k++)
		cJSON_AddNumberToObject(types, r->types[k].value, r->types[k].count);
	cJSON *topics = cJSON_AddArrayToObject(facets, "topic");
	for (int k = 0; k < r->ntopics; k++) {
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "path", r->topics[k].value);
		cJSON_AddStringToObject(t, "title", r->topics[k].label);
		cJSON_AddNumberToObject(t, "count", r->topics[k].count);
		cJSON_AddItemToArray(topics, t);
	}
	if (r->explain)
		cJSON_AddStringToObject(root, "explain", r->explain);
	return finish(root);
}

char *atlas_json_suggest(const atlas_engine *e, const char *query, const atlas_suggestion *s, int n)
{
	cJSON *root = cJSON_CreateObject();
	char *clean = strdup(query ? query : "");
	if (clean)
		atlas_utf8_clean(clean, strlen(clean)); /* JSON must be valid UTF-8 */
	cJSON_AddStringToObject(root, "query", clean ? clean : "");
	free(clean);
	cJSON *arr = cJSON_AddArrayToObject(root, "suggestions");
	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		if (s[i].doc >= 0) {
			const atlas_doc *d = atlas_engine_doc(e, s[i].doc);
			cJSON_AddStringToObject(o, "kind", "page");
			cJSON_AddStringToObject(o, "text", d->title);
			doc_fields(o, d);
		} else {
			cJSON_AddStringToObject(o, "kind", "term");
			cJSON_AddStringToObject(o, "text", s[i].term);
		}
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root);
}

char *atlas_json_next(const atlas_engine *e, const atlas_next_results *r)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "path", atlas_engine_doc(e, r->doc)->path);
	cJSON *arr = cJSON_AddArrayToObject(root, "suggestions");
	for (int i = 0; i < r->nitems; i++) {
		const atlas_next_item *it = &r->items[i];
		cJSON *o = doc_fields(cJSON_CreateObject(), atlas_engine_doc(e, it->doc));
		cJSON_AddNumberToObject(o, "score", round3(it->score));
		cJSON *reasons = cJSON_AddArrayToObject(o, "reasons");
		for (int k = 0; k < it->nreasons; k++)
			cJSON_AddItemToArray(reasons, cJSON_CreateString(it->reasons[k]));
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root);
}

char *atlas_json_error(const char *code, const char *message)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *err = cJSON_AddObjectToObject(root, "error");
	char *clean = strdup(message);
	if (clean)
		atlas_utf8_clean(clean, strlen(clean)); /* messages may quote a reader's input */
	cJSON_AddStringToObject(err, "code", code);
	cJSON_AddStringToObject(err, "message", clean ? clean : "");
	free(clean);
	return finish(root);
}
