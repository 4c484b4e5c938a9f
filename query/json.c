/* json.c - response bodies as JSON: trees of cJSON nodes, and the search response written as text
 * with cJSON's string escaping. */
#include "json.h"
#include "error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "strbuf.h"
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

void atlas_json_use_arena(atlas_arena *a)
{
	pthread_once(&json_hooks_once, json_install_hooks);
	json_arena = a;
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

static void add_num(cJSON *o, const char *key, double value)
{
	cJSON_AddItemToObjectCS(o, key, cJSON_CreateNumber(value));
}

/* Writes x rounded to 3 decimals into buf ("12.5", "0.042"; a count as an integer) and returns
 * where the text starts, or NULL when x is not finite or too large for that form (then cJSON
 * prints it). cJSON prints every number twice over (printf, then scanf to check it), the dearest
 * step of a response. */
static const char *num3_text(char buf[static 32], double x)
{
	double r = round(x * 1000.0);
	if (!isfinite(r) || fabs(r) > 9e15)
		return NULL;
	char *p = buf + 32;
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
	return p;
}

/* Adds x rounded to 3 decimals (num3_text). */
static void add_num3(cJSON *o, const char *key, double x)
{
	char buf[32];
	const char *text = num3_text(buf, x);
	if (!text) {
		add_num(o, key, isfinite(x) ? x : 0);
		return;
	}
	cJSON_AddItemToObjectCS(o, key, cJSON_CreateRaw(text)); /* copied into the arena */
}

static cJSON *array_in(cJSON *o, const char *key)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToObjectCS(o, key, a);
	return a;
}

/**************************************************************************************************
** A search response, written as text.
*/

/* A search response is a few hundred values, and as a tree of cJSON nodes (each key escaped as
 * it is printed, the whole printed once more into the body) the making of it cost a fifth of a
 * search: it is written as text instead, in the order the tree printed it, every string from the
 * index or the reader escaped by cJSON (or known to need no escape), the pre-escaped html as it
 * is (see put_html), the numbers by num3_text. */

/* Appends item as cJSON prints it, unformatted, in at most room bytes. Returns 0, or ATLAS_ENOMEM
 * when out of memory. */
static int put_item(strbuf *sb, cJSON *item, size_t room)
{
	/* cJSON asks for five bytes more than it prints */
	if (strbuf_reserve(sb, room + 5) ||
	    !cJSON_PrintPreallocated(item, sb->buf + sb->len, (int)(sb->cap - sb->len), 0))
		return ATLAS_ENOMEM;
	sb->len += strlen(sb->buf + sb->len);
	return 0;
}

/* Appends s[0..n) in quotes. Returns 0 or ATLAS_ENOMEM. */
static int put_quoted(strbuf *sb, const char *s, size_t n)
{
	if (strbuf_reserve(sb, n + 2))
		return ATLAS_ENOMEM;
	char *out = sb->buf + sb->len;
	out[0] = '"';
	memcpy(out + 1, s, n);
	out[n + 1] = '"';
	out[n + 2] = '\0';
	sb->len += n + 2;
	return 0;
}

/* Appends the JSON string literal of s, quotes included: as it is when nothing in it needs an
 * escape (known when plain, else looked for), else escaped by cJSON. Returns 0 or -1. */
static int put_string(strbuf *sb, const char *s, bool plain)
{
	size_t n = 0;
	if (plain)
		n = strlen(s);
	else
		while ((unsigned char)s[n] >= 0x20 && s[n] != '"' && s[n] != '\\')
			n++;
	if (plain || !s[n])
		return put_quoted(sb, s, n);
	cJSON item;
	memset(&item, 0, sizeof(item));
	item.type = cJSON_String | cJSON_IsReference;
	item.valuestring = (char *)s;
	return put_item(sb, &item, 6 * strlen(s) + 2); /* at most \u00XX a byte, and the quotes */
}

/* Appends html, text written by strbuf_append_html with literal tags and UTF-8 around it, which
 * holds nothing JSON escapes: in quotes, as it is, without a look at each byte for escapes.
 * Returns 0 or -1. */
static int put_html(strbuf *sb, const char *html)
{
	return put_quoted(sb, html, strlen(html));
}

/* Appends x as add_num3 adds it. Returns 0 or -1. */
static int put_num3(strbuf *sb, double x)
{
	char buf[32];
	const char *text = num3_text(buf, x);
	if (text)
		return strbuf_puts(sb, text) ? -1 : 0;
	cJSON item;
	memset(&item, 0, sizeof(item));
	item.type = cJSON_Number;
	item.valuedouble = isfinite(x) ? x : 0;
	return put_item(sb, &item, 64);
}

/* Appends the string literal lit, its length known when compiled. */
#define PUT(sb, lit) strbuf_append(sb, lit, sizeof(lit) - 1)

/* Returns the title of topic (a taxonomy path such as "systems/caching"): its topic page's
 * title, or the path itself when it has no page. Owned by the engine. */
static const char *topic_title(const atlas_engine *e, const char *topic)
{
	int i = atlas_engine_topic_page(e, topic);
	return i >= 0 ? atlas_engine_doc(e, i)->title : topic;
}

/* Appends the results of r as a JSON array: for each hit {"path", "url", "title", "type",
 * "title_highlighted", "description", "lastmod", "image", "score", "snippet", "topics",
 * "topics_titled": [{"path", "title"}], "sections": [{"heading", "anchor", "snippet"}], and
 * "explain" when asked for}. Returns 0, or -1 when out of memory (sb then holds part of it). */
static int put_results(strbuf *sb, const atlas_engine *e, const atlas_results *r)
{
	int bad = strbuf_putc(sb, '[');
	for (int i = 0; !bad && i < r->nhits; i++) {
		const atlas_hit *h = &r->hits[i];
		const atlas_doc *d = atlas_engine_doc(e, h->doc);
		bad = (i ? PUT(sb, ",{\"path\":") : PUT(sb, "{\"path\":")) ||
		      put_string(sb, d->path, d->json_plain) || PUT(sb, ",\"url\":") ||
		      put_string(sb, d->url, d->json_plain) || PUT(sb, ",\"title\":") ||
		      put_string(sb, d->title, d->json_plain) || PUT(sb, ",\"type\":") ||
		      put_string(sb, d->type, d->json_plain) || PUT(sb, ",\"title_highlighted\":") ||
		      put_html(sb, h->title_html ? h->title_html : "") || PUT(sb, ",\"description\":") ||
		      put_string(sb, d->description, false) || PUT(sb, ",\"lastmod\":") ||
		      put_string(sb, d->lastmod, false) || PUT(sb, ",\"image\":") ||
		      put_string(sb, d->image, false) || PUT(sb, ",\"score\":") ||
		      put_num3(sb, h->score) || PUT(sb, ",\"snippet\":") ||
		      put_html(sb, h->snippet ? h->snippet : "") || PUT(sb, ",\"topics\":[");
		for (int k = 0; !bad && k < d->ntopics; k++)
			bad = (k && strbuf_putc(sb, ',')) ||
			      put_string(sb, d->topics[k], d->json_plain);
		bad = bad || PUT(sb, "],\"topics_titled\":[");
		for (int k = 0; !bad && k < d->ntopics; k++) {
			const char *title = topic_title(e, d->topics[k]);
			bad = (k ? PUT(sb, ",{\"path\":") : PUT(sb, "{\"path\":")) ||
			      put_string(sb, d->topics[k], d->json_plain) || PUT(sb, ",\"title\":") ||
			      put_string(sb, title, false) || strbuf_putc(sb, '}');
		}
		bad = bad || PUT(sb, "],\"sections\":[");
		for (int k = 0; !bad && k < h->nsections; k++) {
			const atlas_section_hit *s = &h->sections[k];
			bad = (k ? PUT(sb, ",{\"heading\":") : PUT(sb, "{\"heading\":")) ||
			      put_html(sb, s->heading ? s->heading : "") ||
			      PUT(sb, ",\"anchor\":") ||
			      put_string(sb, s->anchor ? s->anchor : "", false) ||
			      PUT(sb, ",\"snippet\":") ||
			      put_html(sb, s->snippet ? s->snippet : "") || strbuf_putc(sb, '}');
		}
		bad = bad || strbuf_putc(sb, ']');
		if (!bad && h->explain)
			bad = PUT(sb, ",\"explain\":") || put_string(sb, h->explain, false);
		bad = bad || strbuf_putc(sb, '}');
	}
	return bad || strbuf_putc(sb, ']') ? -1 : 0;
}

/**************************************************************************************************
** Responses.
*/

static cJSON *doc_fields(cJSON *o, const atlas_doc *d)
{
	add_str(o, "path", d->path);
	add_str(o, "url", d->url);
	add_str(o, "title", d->title);
	add_str(o, "type", d->type);
	return o;
}

/* Returns how many pages of r->limit results r->total makes, as far as a reader can page (an
 * offset of at most ATLAS_OFFSET_MAX). */
static int total_pages(const atlas_results *r)
{
	if (r->limit < 1)
		return 0;
	int pages = (r->total + r->limit - 1) / r->limit;
	int reachable = ATLAS_OFFSET_MAX / r->limit + 1;
	return pages < reachable ? pages : reachable;
}

/* Appends the unquoted phrases of r as JSON strings, comma-separated. Returns non-zero when out
 * of memory. */
static int put_unquoted(strbuf *sb, const atlas_results *r)
{
	int bad = 0;
	for (int i = 0; !bad && i < r->nunquoted; i++)
		bad = (i && strbuf_putc(sb, ',')) || put_string(sb, r->unquoted[i], false);
	return bad;
}

char *atlas_json_search(const atlas_engine *e, const atlas_results *r)
{
	int limit = r->limit;
	strbuf sb = STRBUF_INIT;
	int bad = strbuf_reserve(&sb, 2048 + 1536 * (size_t)r->nhits) || PUT(&sb, "{\"query\":") ||
		  put_string(&sb, r->query ? r->query : "", false) || PUT(&sb, ",\"total\":") ||
		  put_num3(&sb, r->total) ||
		  (r->total_exact ? PUT(&sb, ",\"total_exact\":true")
				  : PUT(&sb, ",\"total_exact\":false")) ||
		  (r->partial ? PUT(&sb, ",\"partial\":true") : PUT(&sb, ",\"partial\":false")) ||
		  (r->facets_estimated ? PUT(&sb, ",\"facets_exact\":false") : PUT(&sb, ",\"facets_exact\":true")) ||
		  PUT(&sb, ",\"unquoted\":[") || put_unquoted(&sb, r) || PUT(&sb, "]") ||
		  PUT(&sb, ",\"took_ms\":") || put_num3(&sb, r->took_ms) ||
		  PUT(&sb, ",\"page\":") || put_num3(&sb, limit ? r->offset / limit + 1 : 1) ||
		  PUT(&sb, ",\"hitsPerPage\":") || put_num3(&sb, limit) ||
		  PUT(&sb, ",\"totalPages\":") || put_num3(&sb, total_pages(r)) ||
		  PUT(&sb, ",\"did_you_mean\":") ||
		  (r->did_you_mean ? put_string(&sb, r->did_you_mean, false) : PUT(&sb, "null")) ||
		  (r->corrected ? PUT(&sb, ",\"corrected\":true") : PUT(&sb, ",\"corrected\":false")) ||
		  PUT(&sb, ",\"results\":") || put_results(&sb, e, r) ||
		  PUT(&sb, ",\"facets\":{\"type\":{");
	for (int k = 0; !bad && k < r->ntypes; k++)
		bad = (k && strbuf_putc(&sb, ',')) || put_string(&sb, r->types[k].value, false) ||
		      strbuf_putc(&sb, ':') || put_num3(&sb, r->types[k].count);
	bad = bad || PUT(&sb, "},\"topic\":[");
	for (int k = 0; !bad && k < r->ntopics; k++)
		bad = (k ? PUT(&sb, ",{\"path\":") : PUT(&sb, "{\"path\":")) ||
		      put_string(&sb, r->topics[k].value, false) || PUT(&sb, ",\"title\":") ||
		      put_string(&sb, r->topics[k].label, false) || PUT(&sb, ",\"count\":") ||
		      put_num3(&sb, r->topics[k].count) || strbuf_putc(&sb, '}');
	bad = bad || PUT(&sb, "]}");
	if (!bad && r->explain)
		bad = PUT(&sb, ",\"explain\":") || put_string(&sb, r->explain, false) ||
		      strbuf_printf(&sb, ",\"work\":{\"postings\":%ld,\"candidates\":%ld,\"expansions\":%ld}",
				    r->work.postings, r->work.candidates, r->work.expansions) != 0;
	if (bad || strbuf_putc(&sb, '}')) {
		strbuf_free(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

#undef PUT

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
			add_str(o, "kind", "query");
			add_str(o, "text", s[i].text);
			cJSON_AddNumberToObject(o, "pages", s[i].pages);
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
