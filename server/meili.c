/* meili.c - a read-only Meilisearch-compatible subset of routes, so that Meilisearch clients
 * (meilisearch-js, instant-meilisearch) search the Atlas index unchanged: POST
 * /indexes/{uid}/search, POST /multi-search, GET /indexes/{uid}, GET /health, GET /version. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "api.h"
#include "arena.h"
#include "json.h"
#include "utf8.h"

#define MEILI_LINK "https://docs.meilisearch.com/errors#"
#define MEILI_API_VERSION "1.8.0" /* the Meilisearch API this subset follows */
#define MEILI_QUERIES_MAX 16      /* queries in one /multi-search */
#define FILTER_NODES_MAX 64       /* terms and operators in one filter */
#define FILTER_VALUE_MAX 256
#define FILTER_DEPTH_MAX 16       /* parentheses within parentheses */
#define CROP_DEFAULT 10           /* words, Meilisearch's default cropLength */

/* An error in Meilisearch's shape: {"message", "code", "type", "link"}. */
typedef struct meili_error {
	int status;
	const char *code;
	const char *type;            /* invalid_request, auth, internal */
	char message[480];
} meili_error;

/* Sets *me and returns -1. */
static int fail(meili_error *me, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(meili_error *me, int status, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(me->message, sizeof(me->message), fmt, ap);
	va_end(ap);
	me->status = status;
	me->code = code;
	me->type = status == 401 || status == 403 ? "auth" : status >= 500 ? "internal" : "invalid_request";
	return -1;
}

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

/**************************************************************************************************
** Filters: type = x, topic = y, with AND, OR, NOT and parentheses; arrays as Meilisearch reads
** them (the outer one AND, an inner one OR).
*/

enum { F_TYPE, F_TOPIC, F_AND, F_OR, F_NOT, F_TRUE };

typedef struct fnode {
	int op;
	int a, b;                    /* operands (node indexes) of AND, OR, NOT */
	char value[FILTER_VALUE_MAX + 1];
} fnode;

typedef struct filter {
	fnode n[FILTER_NODES_MAX];
	int count;
	int root;                    /* -1: no filter */
} filter;

/* A filter string being parsed. */
typedef struct lexer {
	const char *s, *start;
	filter *f;
	meili_error *me;
	int depth;                   /* parentheses open */
} lexer;

/* Moves lx past white space. */
static void skip_space(lexer *lx)
{
	while (*lx->s == ' ' || *lx->s == '\t' || *lx->s == '\n' || *lx->s == '\r')
		lx->s++;
}

/* Returns a new node of op (or -1 with the error set when the filter has too many). */
static int new_node(filter *f, meili_error *me, int op, int a, int b)
{
	if (f->count == FILTER_NODES_MAX)
		return fail(me, 400, "invalid_search_filter", "the filter has more than %d terms and operators",
			    FILTER_NODES_MAX);
	fnode *n = &f->n[f->count];
	n->op = op;
	n->a = a;
	n->b = b;
	n->value[0] = '\0';
	return f->count++;
}

/* Whether the keyword kw (AND, OR, NOT, any case) starts at lx->s, followed by a break. */
static bool keyword(lexer *lx, const char *kw)
{
	size_t n = strlen(kw);
	if (strncasecmp(lx->s, kw, n) != 0)
		return false;
	char c = lx->s[n];
	return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '(' || c == '"' || c == '\'';
}

/* Reads a word or a quoted string (with \-escapes) into buf. Returns 0, or -1 with the error set. */
static int read_token(lexer *lx, char *buf, size_t cap, const char *what)
{
	skip_space(lx);
	size_t n = 0;
	char q = *lx->s;
	if (q == '"' || q == '\'') {
		lx->s++;
		while (*lx->s && *lx->s != q) {
			if (*lx->s == '\\' && lx->s[1])
				lx->s++;
			if (n + 1 < cap)
				buf[n++] = *lx->s;
			lx->s++;
		}
		if (*lx->s != q)
			return fail(lx->me, 400, "invalid_search_filter", "the filter has an unclosed quote at %ld",
				    (long)(lx->s - lx->start));
		lx->s++;
	} else {
		while (*lx->s && !strchr(" \t\n\r()=!<>,[]", *lx->s)) {
			if (n + 1 < cap)
				buf[n++] = *lx->s;
			lx->s++;
		}
	}
	buf[n] = '\0';
	if (n == 0)
		return fail(lx->me, 400, "invalid_search_filter", "the filter needs %s at %ld", what,
			    (long)(lx->s - lx->start));
	return 0;
}

static int parse_or(lexer *lx);

/* condition := attribute "=" value | attribute IN [v, ...] | "(" or ")" | NOT condition */
static int parse_condition(lexer *lx)
{
	skip_space(lx);
	if (*lx->s == '(') {
		if (++lx->depth > FILTER_DEPTH_MAX)
			return fail(lx->me, 400, "invalid_search_filter",
				    "the filter nests parentheses more than %d deep", FILTER_DEPTH_MAX);
		lx->s++;
		int x = parse_or(lx);
		lx->depth--;
		skip_space(lx);
		if (x < 0)
			return -1;
		if (*lx->s != ')')
			return fail(lx->me, 400, "invalid_search_filter", "the filter misses a ')' at %ld",
				    (long)(lx->s - lx->start));
		lx->s++;
		return x;
	}
	if (keyword(lx, "NOT")) {
		lx->s += 3;
		int x = parse_condition(lx);
		return x < 0 ? -1 : new_node(lx->f, lx->me, F_NOT, x, -1);
	}
	char attr[64];
	if (read_token(lx, attr, sizeof(attr), "an attribute"))
		return -1;
	int op;
	if (strcmp(attr, "type") == 0)
		op = F_TYPE;
	else if (strcmp(attr, "topic") == 0 || strcmp(attr, "topics") == 0)
		op = F_TOPIC;
	else
		return fail(lx->me, 400, "invalid_search_filter",
			    "Attribute `%s` is not filterable. Available filterable attributes are: `topic, type`.",
			    attr);
	skip_space(lx);
	if (keyword(lx, "IN")) {
		lx->s += 2;
		skip_space(lx);
		if (*lx->s != '[')
			return fail(lx->me, 400, "invalid_search_filter", "IN takes a list [a, b] at %ld",
				    (long)(lx->s - lx->start));
		lx->s++;
		int x = -1;
		for (;;) {
			int v = new_node(lx->f, lx->me, op, -1, -1);
			if (v < 0 || read_token(lx, lx->f->n[v].value, sizeof(lx->f->n[v].value), "a value"))
				return -1;
			x = x < 0 ? v : new_node(lx->f, lx->me, F_OR, x, v);
			if (x < 0)
				return -1;
			skip_space(lx);
			if (*lx->s == ',') {
				lx->s++;
				continue;
			}
			if (*lx->s == ']') {
				lx->s++;
				return x;
			}
			return fail(lx->me, 400, "invalid_search_filter", "the list of IN misses a ']' at %ld",
				    (long)(lx->s - lx->start));
		}
	}
	bool negate = false;
	if (lx->s[0] == '!' && lx->s[1] == '=') {
		negate = true;
		lx->s += 2;
	} else if (lx->s[0] == '=') {
		lx->s++;
	} else {
		return fail(lx->me, 400, "invalid_search_filter",
			    "only `=`, `!=` and `IN [...]` are supported on %s (at %ld): the filter may compare "
			    "type and topic with values, joined by AND, OR, NOT and parentheses",
			    attr, (long)(lx->s - lx->start));
	}
	int v = new_node(lx->f, lx->me, op, -1, -1);
	if (v < 0 || read_token(lx, lx->f->n[v].value, sizeof(lx->f->n[v].value), "a value"))
		return -1;
	return negate ? new_node(lx->f, lx->me, F_NOT, v, -1) : v;
}

/* and := condition (AND condition)* */
static int parse_and(lexer *lx)
{
	int x = parse_condition(lx);
	for (;;) {
		if (x < 0)
			return -1;
		skip_space(lx);
		if (!keyword(lx, "AND"))
			return x;
		lx->s += 3;
		int y = parse_condition(lx);
		if (y < 0)
			return -1;
		x = new_node(lx->f, lx->me, F_AND, x, y);
	}
}

/* or := and (OR and)* */
static int parse_or(lexer *lx)
{
	int x = parse_and(lx);
	for (;;) {
		if (x < 0)
			return -1;
		skip_space(lx);
		if (!keyword(lx, "OR"))
			return x;
		lx->s += 2;
		int y = parse_and(lx);
		if (y < 0)
			return -1;
		x = new_node(lx->f, lx->me, F_OR, x, y);
	}
}

/* Parses the filter string s into f. Returns the root node, or -1 with the error set. */
static int parse_filter_string(filter *f, const char *s, meili_error *me)
{
	lexer lx = { s, s, f, me, 0 };
	skip_space(&lx);
	if (!*lx.s)
		return new_node(f, me, F_TRUE, -1, -1);
	int x = parse_or(&lx);
	if (x < 0)
		return -1;
	skip_space(&lx);
	if (*lx.s)
		return fail(me, 400, "invalid_search_filter", "the filter has unexpected `%.40s` at %ld", lx.s,
			    (long)(lx.s - s));
	return x;
}

/* Parses a filter value (a string, or an array whose elements are ANDed, each a string or an
 * array of strings ORed) into f. Returns the root node, or -1 with the error set. */
static int parse_filter(filter *f, const cJSON *v, int depth, meili_error *me)
{
	if (cJSON_IsString(v))
		return parse_filter_string(f, v->valuestring, me);
	if (!cJSON_IsArray(v) || depth > 1)
		return fail(me, 400, "invalid_search_filter",
			    "Invalid syntax for the filter parameter: expected a string or an array of strings "
			    "and arrays of strings");
	int x = -1;
	const cJSON *el;
	cJSON_ArrayForEach(el, v) {
		int y = parse_filter(f, el, depth + 1, me);
		if (y < 0)
			return -1;
		x = x < 0 ? y : new_node(f, me, depth == 0 ? F_AND : F_OR, x, y);
		if (x < 0)
			return -1;
	}
	return x < 0 ? new_node(f, me, F_TRUE, -1, -1) : x;
}

/* Whether page d has topic t or a topic below it. */
static bool has_topic(const atlas_doc *d, const char *t)
{
	size_t n = strlen(t);
	for (int k = 0; k < d->ntopics; k++)
		if (strncmp(d->topics[k], t, n) == 0 && (d->topics[k][n] == '\0' || d->topics[k][n] == '/'))
			return true;
	return false;
}

/* Evaluates node i of f on page d. */
static bool eval(const filter *f, int i, const atlas_doc *d)
{
	const fnode *n = &f->n[i];
	switch (n->op) {
	case F_TYPE: return strcmp(d->type, n->value) == 0;
	case F_TOPIC: return has_topic(d, n->value);
	case F_AND: return eval(f, n->a, d) && eval(f, n->b, d);
	case F_OR: return eval(f, n->a, d) || eval(f, n->b, d);
	case F_NOT: return !eval(f, n->a, d);
	default: return true;
	}
}

/* The atlas_search_more accept of a filter (ctx). */
static bool accept_filter(const atlas_doc *d, void *ctx)
{
	const filter *f = ctx;
	return f->root < 0 || eval(f, f->root, d);
}

/**************************************************************************************************
** One search.
*/

/* The attributes of a hit, in the order they are written. */
static const char *const attributes[] = { "id",   "path",    "url",   "title", "type",   "description",
					  "lastmod", "image", "topics", "topic", "content", NULL };

/* A search request's fields, as read from its JSON. */
typedef struct query {
	char q[SERVE_QUERY_MAX + 1];
	int offset, limit, page, hits_per_page;
	bool paged;                  /* page or hitsPerPage given: the response counts pages */
	bool facet_type, facet_topic;
	bool highlight[16], crop[16]; /* by index in attributes */
	bool retrieve[16];
	bool formatted;              /* _formatted wanted: some attribute highlighted or cropped */
	const char *pre, *post, *marker;
	int crop_length;
	int sort;
	filter f;
} query;

/* Returns the index of attribute name in attributes, or -1. */
static int attribute_index(const char *name)
{
	for (int i = 0; attributes[i]; i++)
		if (strcmp(attributes[i], name) == 0)
			return i;
	return -1;
}

/* Reads a list of attributes (array of strings, "*" for all) into set. Returns 0, or -1 with the
 * error set (code) for anything else; unknown attributes are left out, as Meilisearch does. */
static int attribute_list(const cJSON *v, bool *set, const char *field, const char *code, meili_error *me)
{
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsArray(v))
		return fail(me, 400, code, "Invalid value type at `.%s`: expected an array of strings", field);
	const cJSON *el;
	cJSON_ArrayForEach(el, v) {
		if (!cJSON_IsString(el))
			return fail(me, 400, code, "Invalid value type at `.%s`: expected an array of strings", field);
		if (strcmp(el->valuestring, "*") == 0) {
			for (int i = 0; attributes[i]; i++)
				set[i] = true;
		} else {
			int i = attribute_index(el->valuestring);
			if (i >= 0)
				set[i] = true;
		}
	}
	return 0;
}

/* Reads an integer field in lo..hi into *out. Returns 0 (absent or null: *out unchanged), or -1. */
static int int_field(const cJSON *o, const char *name, int lo, int hi, int *out, bool *given, const char *code,
		     meili_error *me)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (given)
		*given = false;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi)
		return fail(me, 400, code, "Invalid value at `.%s`: expected a whole number from %d to %d", name, lo,
			    hi);
	*out = (int)v->valuedouble;
	if (given)
		*given = true;
	return 0;
}

/* Reads a string field into *out (kept pointing into the tree). Returns 0 or -1. */
static int string_field(const cJSON *o, const char *name, const char **out, meili_error *me)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return fail(me, 400, "bad_request", "Invalid value type at `.%s`: expected a string", name);
	*out = v->valuestring;
	return 0;
}

static const char *const known_fields[] = {
	"q", "offset", "limit", "page", "hitsPerPage", "filter", "facets", "attributesToHighlight",
	"highlightPreTag", "highlightPostTag", "attributesToCrop", "cropLength", "cropMarker",
	"attributesToRetrieve", "sort", "matchingStrategy", "showRankingScore", "showMatchesPosition",
	"attributesToSearchOn", "indexUid", NULL,
};

/* Reads the search request o into *qr. Returns 0, or -1 with the error set. */
static int read_query(query *qr, const cJSON *o, meili_error *me)
{
	memset(qr, 0, sizeof(*qr));
	qr->limit = 20;
	qr->hits_per_page = 20;
	qr->page = 1;
	qr->pre = "<em>";
	qr->post = "</em>";
	qr->marker = "…";
	qr->crop_length = CROP_DEFAULT;
	qr->f.root = -1;
	if (!cJSON_IsObject(o))
		return fail(me, 400, "bad_request", "the search request must be a JSON object");
	for (const cJSON *it = o->child; it; it = it->next) {
		int k = 0;
		while (known_fields[k] && strcmp(known_fields[k], it->string))
			k++;
		if (!known_fields[k])
			return fail(me, 400, "bad_request",
				    "Unknown field `%.60s`: expected one of `q`, `offset`, `limit`, `page`, "
				    "`hitsPerPage`, `filter`, `facets`, `attributesToRetrieve`, "
				    "`attributesToHighlight`, `highlightPreTag`, `highlightPostTag`, "
				    "`attributesToCrop`, `cropLength`, `cropMarker`, `sort`",
				    it->string);
	}
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "q");
	if (q && !cJSON_IsNull(q)) {
		if (!cJSON_IsString(q))
			return fail(me, 400, "invalid_search_q", "Invalid value type at `.q`: expected a string");
		size_t n = strlen(q->valuestring);
		if (n > SERVE_QUERY_MAX)
			return fail(me, 400, "invalid_search_q", "`.q` is longer than %d bytes", SERVE_QUERY_MAX);
		memcpy(qr->q, q->valuestring, n + 1);
		atlas_utf8_clean(qr->q, n);
	}
	bool has_page, has_hpp;
	if (int_field(o, "offset", 0, ATLAS_OFFSET_MAX, &qr->offset, NULL, "invalid_search_offset", me) ||
	    int_field(o, "limit", 0, ATLAS_LIMIT_MAX, &qr->limit, NULL, "invalid_search_limit", me) ||
	    int_field(o, "hitsPerPage", 0, ATLAS_LIMIT_MAX, &qr->hits_per_page, &has_hpp,
		      "invalid_search_hits_per_page", me) ||
	    int_field(o, "page", 0, ATLAS_OFFSET_MAX + 1, &qr->page, &has_page, "invalid_search_page", me) ||
	    int_field(o, "cropLength", 1, 64, &qr->crop_length, NULL, "invalid_search_crop_length", me))
		return -1;
	qr->paged = has_page || has_hpp;
	if (qr->paged) {
		if (qr->page > 0 && (qr->page - 1) * qr->hits_per_page > ATLAS_OFFSET_MAX)
			return fail(me, 400, "invalid_search_page",
				    "`.page` reaches past the first %d results with hitsPerPage %d", ATLAS_OFFSET_MAX,
				    qr->hits_per_page);
		qr->offset = qr->page > 0 ? (qr->page - 1) * qr->hits_per_page : 0;
		qr->limit = qr->page > 0 ? qr->hits_per_page : 0;
	}
	const cJSON *filter_v = cJSON_GetObjectItemCaseSensitive(o, "filter");
	if (filter_v && !cJSON_IsNull(filter_v)) {
		qr->f.root = parse_filter(&qr->f, filter_v, 0, me);
		if (qr->f.root < 0)
			return -1;
	}
	const cJSON *facets = cJSON_GetObjectItemCaseSensitive(o, "facets");
	if (facets && !cJSON_IsNull(facets)) {
		if (!cJSON_IsArray(facets))
			return fail(me, 400, "invalid_search_facets",
				    "Invalid value type at `.facets`: expected an array of strings");
		const cJSON *el;
		cJSON_ArrayForEach(el, facets) {
			const char *name = cJSON_IsString(el) ? el->valuestring : "";
			if (strcmp(name, "*") == 0)
				qr->facet_type = qr->facet_topic = true;
			else if (strcmp(name, "type") == 0)
				qr->facet_type = true;
			else if (strcmp(name, "topic") == 0 || strcmp(name, "topics") == 0)
				qr->facet_topic = true;
			else
				return fail(me, 400, "invalid_search_facets",
					    "Invalid facet `%.60s`: the facets are `topic` and `type`", name);
		}
	}
	const cJSON *retrieve = cJSON_GetObjectItemCaseSensitive(o, "attributesToRetrieve");
	if (!retrieve || cJSON_IsNull(retrieve))
		for (int i = 0; attributes[i]; i++)
			qr->retrieve[i] = true;
	if (attribute_list(retrieve, qr->retrieve, "attributesToRetrieve", "invalid_search_attributes_to_retrieve",
			   me) ||
	    attribute_list(cJSON_GetObjectItemCaseSensitive(o, "attributesToHighlight"), qr->highlight,
			   "attributesToHighlight", "invalid_search_attributes_to_highlight", me) ||
	    attribute_list(cJSON_GetObjectItemCaseSensitive(o, "attributesToCrop"), qr->crop, "attributesToCrop",
			   "invalid_search_attributes_to_crop", me) ||
	    string_field(o, "highlightPreTag", &qr->pre, me) || string_field(o, "highlightPostTag", &qr->post, me) ||
	    string_field(o, "cropMarker", &qr->marker, me))
		return -1;
	/* attributesToCrop may say name:length */
	const cJSON *crop = cJSON_GetObjectItemCaseSensitive(o, "attributesToCrop");
	if (cJSON_IsArray(crop)) {
		const cJSON *el;
		cJSON_ArrayForEach(el, crop) {
			const char *colon = cJSON_IsString(el) ? strchr(el->valuestring, ':') : NULL;
			if (colon) {
				char name[64];
				snprintf(name, sizeof(name), "%.*s", (int)(colon - el->valuestring), el->valuestring);
				int i = attribute_index(name);
				if (i >= 0)
					qr->crop[i] = true;
				int n = atoi(colon + 1);
				if (n > 0 && n <= 64)
					qr->crop_length = n;
			}
		}
	}
	for (int i = 0; attributes[i]; i++)
		qr->formatted = qr->formatted || qr->highlight[i] || qr->crop[i];
	const cJSON *sort = cJSON_GetObjectItemCaseSensitive(o, "sort");
	if (sort && !cJSON_IsNull(sort)) {
		const cJSON *el;
		if (!cJSON_IsArray(sort))
			return fail(me, 400, "invalid_search_sort", "Invalid value type at `.sort`: expected an array");
		cJSON_ArrayForEach(el, sort) {
			if (cJSON_IsString(el) && strcmp(el->valuestring, "lastmod:desc") == 0)
				qr->sort = ATLAS_SORT_LASTMOD;
			else
				return fail(me, 400, "invalid_search_sort",
					    "the only sort is `lastmod:desc` (newest first); relevance is the default");
		}
	}
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "matchingStrategy");
	if (ms && !cJSON_IsNull(ms) && !(cJSON_IsString(ms) && strcmp(ms->valuestring, "last") == 0))
		return fail(me, 400, "invalid_search_matching_strategy",
			    "the only matchingStrategy is `last` (every word counts, pages with more first)");
	const cJSON *flags[] = { cJSON_GetObjectItemCaseSensitive(o, "showRankingScore"),
				 cJSON_GetObjectItemCaseSensitive(o, "showMatchesPosition") };
	for (int i = 0; i < 2; i++)
		if (flags[i] && !cJSON_IsNull(flags[i]) && !cJSON_IsFalse(flags[i]))
			return fail(me, 400, "bad_request", "%s is not supported", i ? "showMatchesPosition" : "showRankingScore");
	const cJSON *on = cJSON_GetObjectItemCaseSensitive(o, "attributesToSearchOn");
	if (on && !cJSON_IsNull(on) && !(cJSON_IsArray(on) && cJSON_GetArraySize(on) == 1 &&
					  cJSON_IsString(on->child) && strcmp(on->child->valuestring, "*") == 0))
		return fail(me, 400, "invalid_search_attributes_to_search_on",
			    "attributesToSearchOn: every page is searched in all its fields (`[\"*\"]`)");
	return 0;
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

/* Adds to o the value of attribute i of hit h (page d); formatted: the _formatted form (with
 * the query's highlight tags and crops). */
static void add_attribute(cJSON *o, int i, const atlas_engine *e, const atlas_hit *h, const atlas_doc *d,
			  const query *qr, bool formatted)
{
	const char *name = attributes[i];
	char idbuf[24];
	strbuf sb = STRBUF_INIT;
	const char *plain = NULL;
	const char *html = NULL; /* highlighted html, for title and content */
	switch (i) {
	case 0:
		snprintf(idbuf, sizeof(idbuf), "%d", d->id);
		plain = idbuf;
		break;
	case 1: plain = d->path; break;
	case 2: plain = d->url; break;
	case 3: plain = d->title; html = h->title_html; break;
	case 4: plain = d->type; break;
	case 5: plain = d->description; break;
	case 6: plain = d->lastmod; break;
	case 7: plain = d->image; break;
	case 8:
	case 9: {
		cJSON *a = cJSON_AddArrayToObject(o, name);
		for (int k = 0; k < d->ntopics; k++) {
			if (i == 8) {
				cJSON_AddItemToArray(a, cJSON_CreateString(d->topics[k]));
				continue;
			}
			/* topic: every level of the page's topics, so that a filter or facet on any
			 * level matches */
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
		return;
	}
	case 10: html = h->snippet ? h->snippet : ""; break;
	}
	(void)e;
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

/* Runs query qr on this thread's engine. Returns the response object (NULL with the error set). */
static cJSON *run_query(server *s, query *qr, meili_error *me, long *count)
{
	atlas_search_params p = { qr->q, qr->limit > 0 ? qr->limit : 1, qr->offset, NULL, NULL, false, false };
	atlas_search_more more;
	memset(&more, 0, sizeof(more));
	more.accept = qr->f.root >= 0 ? accept_filter : NULL;
	more.accept_ctx = &qr->f;
	more.sort = qr->sort;
	atlas_results r;
	atlas_error err = { 0, "" };
	atlas_engine *e = live_acquire(s->index);
	int rc = atlas_search_with(&r, e, &p, &more, &err);
	if (rc) {
		live_release(s->index, e);
		if (rc == ATLAS_EINVAL) {
			fail(me, 400, "bad_request", "%s", err.msg);
		} else {
			fprintf(stderr, "atlas-serve: search failed: %s\n", err.msg);
			fail(me, 500, "internal", "the index could not answer this query");
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
		for (int i = 0; attributes[i]; i++)
			if (qr->retrieve[i])
				add_attribute(hit, i, e, h, d, qr, false);
		if (qr->formatted) {
			cJSON *f = cJSON_AddObjectToObject(hit, "_formatted");
			for (int i = 0; attributes[i]; i++)
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
	live_release(s->index, e);
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
		return fail(me, 401, "missing_authorization_header",
			    "The Authorization header is missing. It must use the bearer authorization method.");
	if (strncasecmp(h, "Bearer ", 7) != 0)
		return fail(me, 401, "missing_authorization_header",
			    "The Authorization header must use the bearer authorization method.");
	const char *key = h + 7;
	while (*key == ' ')
		key++;
	if (!same_secret(key, s->cfg->api_key))
		return fail(me, 403, "invalid_api_key", "The provided API key is invalid.");
	return 0;
}

/* Parses the request body as JSON. Returns the tree (the caller deletes it), or NULL with the
 * error set. */
static cJSON *body_json(const request *rq, meili_error *me)
{
	if (rq->body_too_large) {
		fail(me, 413, "payload_too_large", "The provided payload reached the size limit of %d bytes.",
		     SERVE_BODY_MAX);
		return NULL;
	}
	if (rq->body.len == 0) {
		fail(me, 400, "missing_payload", "A json payload is missing.");
		return NULL;
	}
	cJSON *root = cJSON_ParseWithLength(rq->body.buf, rq->body.len);
	if (!root)
		fail(me, 400, "malformed_payload", "The json payload provided is malformed.");
	return root;
}

/* Answers POST /indexes/{uid}/search. */
static void search_route(server *s, request *rq, reply *rp, meili_error *me)
{
	cJSON *root = body_json(rq, me);
	query qr;
	if (!root || read_query(&qr, root, me)) {
		cJSON_Delete(root);
		reply_meili_error(rp, me);
		return;
	}
	cJSON *o = run_query(s, &qr, me, &rq->count);
	cJSON_Delete(root);
	if (!o) {
		reply_meili_error(rp, me);
		return;
	}
	reply_tree(rp, 200, o);
}

/* Answers POST /multi-search: {"queries": [{"indexUid", ...}]} into {"results": [...]}; the first
 * query that fails makes the whole answer its error, as Meilisearch does. */
static void multi_route(server *s, request *rq, reply *rp, meili_error *me)
{
	cJSON *root = body_json(rq, me);
	if (!root) {
		reply_meili_error(rp, me);
		return;
	}
	const cJSON *queries = cJSON_GetObjectItemCaseSensitive(root, "queries");
	int n = cJSON_IsArray(queries) ? cJSON_GetArraySize(queries) : -1;
	if (cJSON_GetObjectItemCaseSensitive(root, "federation")) {
		fail(me, 400, "bad_request", "federated multi-search is not supported");
	} else if (n < 0) {
		fail(me, 400, "bad_request", "Missing field `queries`: expected an array of search queries");
	} else if (n > MEILI_QUERIES_MAX) {
		fail(me, 400, "bad_request", "at most %d queries in one multi-search", MEILI_QUERIES_MAX);
	} else {
		me->status = 0;
	}
	cJSON *out = cJSON_CreateObject();
	cJSON *results = cJSON_AddArrayToObject(out, "results");
	const cJSON *q;
	long total = 0;
	int i = 0;
	const cJSON *list = me->status ? NULL : queries;
	cJSON_ArrayForEach(q, list) {
		const cJSON *uid = cJSON_GetObjectItemCaseSensitive(q, "indexUid");
		query qr;
		if (!cJSON_IsString(uid)) {
			fail(me, 400, "missing_index_uid", "Missing field `indexUid` in query %d", i);
			break;
		}
		if (strcmp(uid->valuestring, s->cfg->index_uid) != 0) {
			fail(me, 404, "index_not_found", "Inside `.queries[%d]`: Index `%.64s` not found.", i,
			     uid->valuestring);
			break;
		}
		if (read_query(&qr, q, me)) {
			char msg[sizeof(me->message) + 40];
			snprintf(msg, sizeof(msg), "Inside `.queries[%d]`: %.400s", i, me->message);
			snprintf(me->message, sizeof(me->message), "%.470s", msg);
			break;
		}
		long count = 0;
		cJSON *o = run_query(s, &qr, me, &count);
		if (!o)
			break;
		cJSON_AddItemToObject(o, "indexUid", cJSON_CreateString(uid->valuestring));
		cJSON_AddItemToArray(results, o);
		total += count;
		i++;
	}
	cJSON_Delete(root);
	if (me->status) {
		cJSON_Delete(out);
		reply_meili_error(rp, me);
		return;
	}
	rq->count = total;
	reply_tree(rp, 200, out);
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
		multi_route(s, rq, rp, &me);
	} else if (rest && !ours && (get || post)) {
		char name[80];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(rest, "/"), rest);
		fail(&me, 404, "index_not_found", "Index `%.64s` not found.", name);
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
		search_route(s, rq, rp, &me);
	} else {
		fail(&me, 405, "method_not_allowed",
		     "%s %s is not allowed: this Meilisearch-compatible subset is read-only (GET /health, "
		     "GET /version, GET /indexes/%s, POST /indexes/%s/search, POST /multi-search)",
		     rq->method, rq->path, uid, uid);
		rp->allow = true;
		reply_meili_error(rp, &me);
	}
}
