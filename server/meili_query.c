/* meili_query.c - the request side of the Meilisearch-compatible subset: a search request's
 * JSON read into a query (fields, pages, attributes, sort), and its filter string or array parsed
 * into a tree and evaluated on pages. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "meili.h"
#include "utf8.h"

/* The attributes of a hit, in the order they are written (the MEILI_A_* of meili.h). */
const char *const meili_attributes[] = {
	"id",      "path",  "url",    "title", "type",    "description",    "lastmod",        "image",
	"topics",  "topic", "content", "hierarchy_lvl0", "hierarchy_lvl1", "hierarchy_lvl2", "anchor", NULL,
};

int meili_status_code(int status)
{
	return status == 404 ? ATLAS_ENOTFOUND : status >= 500 ? ATLAS_EIO : ATLAS_EINVAL;
}

int meili_fail(meili_error *me, int status, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(me->message, sizeof(me->message), fmt, ap);
	va_end(ap);
	me->status = status;
	me->code = code;
	me->type = status == 401 || status == 403 ? "auth" : status >= 500 ? "internal" : "invalid_request";
	return meili_status_code(status);
}


/**************************************************************************************************
** Filters: type = x, topic = y, with AND, OR, NOT and parentheses; arrays as Meilisearch reads
** them (the outer one AND, an inner one OR).
*/


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

/* Returns a new node of op (its index), or a negative value with the error set when the filter has
 * too many: a node index, not an error code, as every parse_* below returns. */
static int new_node(filter *f, meili_error *me, int op, int a, int b)
{
	if (f->count == FILTER_NODES_MAX)
		return meili_fail(me, 400, "invalid_search_filter", "the filter has more than %d terms and operators",
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

/* Reads a word or a quoted string (with \-escapes) into buf. Returns 0, or ATLAS_EINVAL with the
 * error set (a 400). */
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
			return meili_fail(lx->me, 400, "invalid_search_filter", "the filter has an unclosed quote at %ld",
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
		return meili_fail(lx->me, 400, "invalid_search_filter", "the filter needs %s at %ld", what,
			    (long)(lx->s - lx->start));
	return 0;
}

static int parse_or(lexer *lx);

/* condition := attribute "=" value | attribute IN [v, ...] | "(" or ")" | NOT condition
 * Returns the condition's node, or a negative value with lx->me set (a node index, not an error
 * code). */
static int parse_condition(lexer *lx)
{
	skip_space(lx);
	if (*lx->s == '(') {
		if (++lx->depth > FILTER_DEPTH_MAX)
			return meili_fail(lx->me, 400, "invalid_search_filter",
				    "the filter nests parentheses more than %d deep", FILTER_DEPTH_MAX);
		lx->s++;
		int x = parse_or(lx);
		lx->depth--;
		skip_space(lx);
		if (x < 0)
			return -1;
		if (*lx->s != ')')
			return meili_fail(lx->me, 400, "invalid_search_filter", "the filter misses a ')' at %ld",
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
		return meili_fail(lx->me, 400, "invalid_search_filter",
			    "Attribute `%s` is not filterable. Available filterable attributes are: `topic, type`.",
			    attr);
	skip_space(lx);
	if (keyword(lx, "IN")) {
		lx->s += 2;
		skip_space(lx);
		if (*lx->s != '[')
			return meili_fail(lx->me, 400, "invalid_search_filter", "IN takes a list [a, b] at %ld",
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
			return meili_fail(lx->me, 400, "invalid_search_filter", "the list of IN misses a ']' at %ld",
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
		return meili_fail(lx->me, 400, "invalid_search_filter",
			    "only `=`, `!=` and `IN [...]` are supported on %s (at %ld): the filter may compare "
			    "type and topic with values, joined by AND, OR, NOT and parentheses",
			    attr, (long)(lx->s - lx->start));
	}
	int v = new_node(lx->f, lx->me, op, -1, -1);
	if (v < 0 || read_token(lx, lx->f->n[v].value, sizeof(lx->f->n[v].value), "a value"))
		return -1;
	return negate ? new_node(lx->f, lx->me, F_NOT, v, -1) : v;
}

/* operand (word operand)*, the operands joined left to right by nodes of op. Returns the node,
 * or a negative value with lx->me set (a node index, not an error code: as every parse_* here). */
static int parse_chain(lexer *lx, int (*operand)(lexer *), const char *word, int op)
{
	int x = operand(lx);
	for (;;) {
		if (x < 0)
			return -1;
		skip_space(lx);
		if (!keyword(lx, word))
			return x;
		lx->s += strlen(word);
		int y = operand(lx);
		if (y < 0)
			return -1;
		x = new_node(lx->f, lx->me, op, x, y);
	}
}

/* and := condition (AND condition)* */
static int parse_and(lexer *lx)
{
	return parse_chain(lx, parse_condition, "AND", F_AND);
}

/* or := and (OR and)* */
static int parse_or(lexer *lx)
{
	return parse_chain(lx, parse_and, "OR", F_OR);
}

/* Parses the filter string s into f. Returns the root node, or a negative value with the error set
 * (a node index, not an error code). */
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
		return meili_fail(me, 400, "invalid_search_filter", "the filter has unexpected `%.40s` at %ld", lx.s,
			    (long)(lx.s - s));
	return x;
}

/* Parses a filter value (a string, or an array whose elements are ANDed, each a string or an
 * array of strings ORed) into f. Returns the root node, or a negative value with the error set (a
 * node index, not an error code). */
static int parse_filter(filter *f, const cJSON *v, int depth, meili_error *me)
{
	if (cJSON_IsString(v))
		return parse_filter_string(f, v->valuestring, me);
	if (!cJSON_IsArray(v) || depth > 1)
		return meili_fail(me, 400, "invalid_search_filter",
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
bool meili_accept_filter(const atlas_doc *d, void *ctx)
{
	const filter *f = ctx;
	return f->root < 0 || eval(f, f->root, d);
}

/* Returns the index of attribute name in attributes, or -1 when it is not one: a lookup, not an
 * error code. */
static int attribute_index(const char *name)
{
	for (int i = 0; meili_attributes[i]; i++)
		if (strcmp(meili_attributes[i], name) == 0)
			return i;
	return -1;
}

/* Reads a list of attributes (array of strings, "*" for all) into set. Returns 0, or ATLAS_EINVAL
 * with the error set (code) for anything else; unknown attributes are left out, as Meilisearch
 * does. */
static int attribute_list(const cJSON *v, bool *set, const char *field, const char *code, meili_error *me)
{
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsArray(v))
		return meili_fail(me, 400, code, "Invalid value type at `.%s`: expected an array of strings", field);
	const cJSON *el;
	cJSON_ArrayForEach(el, v) {
		if (!cJSON_IsString(el))
			return meili_fail(me, 400, code, "Invalid value type at `.%s`: expected an array of strings", field);
		if (strcmp(el->valuestring, "*") == 0) {
			for (int i = 0; meili_attributes[i]; i++)
				set[i] = true;
		} else {
			int i = attribute_index(el->valuestring);
			if (i >= 0)
				set[i] = true;
		}
	}
	return 0;
}

/* Reads an integer field in lo..hi into *out. Returns 0 (absent or null: *out unchanged), or
 * ATLAS_EINVAL with the error set (code). */
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
		return meili_fail(me, 400, code, "Invalid value at `.%s`: expected a whole number from %d to %d", name, lo,
			    hi);
	*out = (int)v->valuedouble;
	if (given)
		*given = true;
	return 0;
}

/* Reads a string field into *out (kept pointing into the tree). Returns 0, or ATLAS_EINVAL with the
 * error set. */
static int string_field(const cJSON *o, const char *name, const char **out, meili_error *me)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return meili_fail(me, 400, "bad_request", "Invalid value type at `.%s`: expected a string", name);
	*out = v->valuestring;
	return 0;
}

static const char *const known_fields[] = {
	"q", "offset", "limit", "page", "hitsPerPage", "filter", "facets", "attributesToHighlight",
	"highlightPreTag", "highlightPostTag", "attributesToCrop", "cropLength", "cropMarker",
	"attributesToRetrieve", "sort", "matchingStrategy", "showRankingScore", "showMatchesPosition",
	"attributesToSearchOn", "indexUid", NULL,
};

/* Reads what the answer shows of the request o into *qr: attributes retrieved, highlighted and
 * cropped, the tags and the marker, the sort, and the flags that may take one value only.
 * Returns 0, or ATLAS_EINVAL with the error set (a 400). */
static int read_output(query *qr, const cJSON *o, meili_error *me)
{
	const cJSON *retrieve = cJSON_GetObjectItemCaseSensitive(o, "attributesToRetrieve");
	if (!retrieve || cJSON_IsNull(retrieve))
		for (int i = 0; meili_attributes[i]; i++)
			qr->retrieve[i] = true;
	if (attribute_list(retrieve, qr->retrieve, "attributesToRetrieve", "invalid_search_attributes_to_retrieve",
			   me) ||
	    attribute_list(cJSON_GetObjectItemCaseSensitive(o, "attributesToHighlight"), qr->highlight,
			   "attributesToHighlight", "invalid_search_attributes_to_highlight", me) ||
	    attribute_list(cJSON_GetObjectItemCaseSensitive(o, "attributesToCrop"), qr->crop, "attributesToCrop",
			   "invalid_search_attributes_to_crop", me) ||
	    string_field(o, "highlightPreTag", &qr->pre, me) || string_field(o, "highlightPostTag", &qr->post, me) ||
	    string_field(o, "cropMarker", &qr->marker, me))
		return ATLAS_EINVAL;
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
	for (int i = 0; meili_attributes[i]; i++)
		qr->formatted = qr->formatted || qr->highlight[i] || qr->crop[i];
	const cJSON *sort = cJSON_GetObjectItemCaseSensitive(o, "sort");
	if (sort && !cJSON_IsNull(sort)) {
		const cJSON *el;
		if (!cJSON_IsArray(sort))
			return meili_fail(me, 400, "invalid_search_sort", "Invalid value type at `.sort`: expected an array");
		cJSON_ArrayForEach(el, sort) {
			if (cJSON_IsString(el) && strcmp(el->valuestring, "lastmod:desc") == 0)
				qr->sort = ATLAS_SORT_LASTMOD;
			else
				return meili_fail(me, 400, "invalid_search_sort",
					    "the only sort is `lastmod:desc` (newest first); relevance is the default");
		}
	}
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "matchingStrategy");
	if (ms && !cJSON_IsNull(ms) && !(cJSON_IsString(ms) && strcmp(ms->valuestring, "last") == 0))
		return meili_fail(me, 400, "invalid_search_matching_strategy",
			    "the only matchingStrategy is `last` (every word counts, pages with more first)");
	const cJSON *flags[] = { cJSON_GetObjectItemCaseSensitive(o, "showRankingScore"),
				 cJSON_GetObjectItemCaseSensitive(o, "showMatchesPosition") };
	for (int i = 0; i < 2; i++)
		if (flags[i] && !cJSON_IsNull(flags[i]) && !cJSON_IsFalse(flags[i]))
			return meili_fail(me, 400, "bad_request", "%s is not supported", i ? "showMatchesPosition" : "showRankingScore");
	const cJSON *on = cJSON_GetObjectItemCaseSensitive(o, "attributesToSearchOn");
	if (on && !cJSON_IsNull(on) && !(cJSON_IsArray(on) && cJSON_GetArraySize(on) == 1 &&
					  cJSON_IsString(on->child) && strcmp(on->child->valuestring, "*") == 0))
		return meili_fail(me, 400, "invalid_search_attributes_to_search_on",
			    "attributesToSearchOn: every page is searched in all its fields (`[\"*\"]`)");
	return 0;
}

/* Reads the search request o into *qr. Returns 0, or ATLAS_EINVAL with the error set (a 400). */
int meili_read_query(query *qr, const void *object, meili_error *me)
{
	const cJSON *o = object;
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
		return meili_fail(me, 400, "bad_request", "the search request must be a JSON object");
	for (const cJSON *it = o->child; it; it = it->next) {
		int k = 0;
		while (known_fields[k] && strcmp(known_fields[k], it->string))
			k++;
		if (!known_fields[k])
			return meili_fail(me, 400, "bad_request",
				    "Unknown field `%.60s`: expected one of `q`, `offset`, `limit`, `page`, "
				    "`hitsPerPage`, `filter`, `facets`, `attributesToRetrieve`, "
				    "`attributesToHighlight`, `highlightPreTag`, `highlightPostTag`, "
				    "`attributesToCrop`, `cropLength`, `cropMarker`, `sort`",
				    it->string);
	}
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "q");
	if (q && !cJSON_IsNull(q)) {
		if (!cJSON_IsString(q))
			return meili_fail(me, 400, "invalid_search_q", "Invalid value type at `.q`: expected a string");
		size_t n = strlen(q->valuestring);
		if (n > SERVE_QUERY_MAX)
			return meili_fail(me, 400, "invalid_search_q", "`.q` is longer than %d bytes", SERVE_QUERY_MAX);
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
		return ATLAS_EINVAL;
	qr->paged = has_page || has_hpp;
	if (qr->paged) {
		if (qr->page > 0 && (qr->page - 1) * qr->hits_per_page > ATLAS_OFFSET_MAX)
			return meili_fail(me, 400, "invalid_search_page",
				    "`.page` reaches past the first %d results with hitsPerPage %d", ATLAS_OFFSET_MAX,
				    qr->hits_per_page);
		qr->offset = qr->page > 0 ? (qr->page - 1) * qr->hits_per_page : 0;
		qr->limit = qr->page > 0 ? qr->hits_per_page : 0;
	}
	const cJSON *filter_v = cJSON_GetObjectItemCaseSensitive(o, "filter");
	if (filter_v && !cJSON_IsNull(filter_v)) {
		qr->f.root = parse_filter(&qr->f, filter_v, 0, me);
		if (qr->f.root < 0)
			return ATLAS_EINVAL;
	}
	const cJSON *facets = cJSON_GetObjectItemCaseSensitive(o, "facets");
	if (facets && !cJSON_IsNull(facets)) {
		if (!cJSON_IsArray(facets))
			return meili_fail(me, 400, "invalid_search_facets",
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
				return meili_fail(me, 400, "invalid_search_facets",
					    "Invalid facet `%.60s`: the facets are `topic` and `type`", name);
		}
	}
	return read_output(qr, o, me);
}

