/* params.c - the parameters of /api/search and /api/next: read, checked, normalized. */
#include "params.h"
#include "error.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "utf8.h"

static const char *const search_names[] = { "q", "limit", "offset", "page", "hitsPerPage", "type",
					    "topic", "sort", "correct", NULL };
static const char *const next_names[] = { "path", "guide", "seen", "limit", NULL };

/* Sets *pe to a 400 with code and a printf-style message. Returns ATLAS_EINVAL. */
static int refuse(param_error *pe, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(param_error *pe, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pe->msg, sizeof(pe->msg), fmt, ap);
	va_end(ap);
	pe->status = 400;
	pe->code = code;
	return ATLAS_EINVAL;
}

/* Appends s to sb percent-encoded (unreserved characters and '/' kept), for cache keys. */
static void put_pct(strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '/') {
			strbuf_putc(sb, (char)ch);
		} else {
			strbuf_putc(sb, '%');
			strbuf_putc(sb, hex[ch >> 4]);
			strbuf_putc(sb, hex[ch & 15]);
		}
	}
}

/* MHD_KeyValueIteratorN collecting the GET arguments into the params (cls). */
static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
			       const char *value, size_t value_size)
{
	params *ps = cls;
	if (ps->n == PARAMS_MAX) {
		ps->too_many = true;
		return MHD_NO;
	}
	ps->v[ps->n++] = (param){ key ? key : "", value ? value : "", value ? value_size : 0, false };
	return MHD_YES;
}

/* See params.h. */
void params_from_connection(params *ps, struct MHD_Connection *c)
{
	ps->n = 0;
	ps->too_many = false;
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect, ps);
}

/* Adds one JSON value (string or number) as key. Returns 0, or ATLAS_EINVAL with *pe set. */
static int add_json_value(params *ps, const char *key, const cJSON *v, param_error *pe)
{
	if (ps->n == PARAMS_MAX) {
		ps->too_many = true;
		return 0;
	}
	param *p = &ps->v[ps->n];
	if (cJSON_IsString(v)) {
		*p = (param){ key, v->valuestring, strlen(v->valuestring), false };
	} else if (cJSON_IsNumber(v)) {
		char *text = ps->numbers[ps->n];
		double d = v->valuedouble;
		if (d == (double)(long long)d && d > -1e15 && d < 1e15)
			snprintf(text, sizeof(ps->numbers[0]), "%lld", (long long)d);
		else
			snprintf(text, sizeof(ps->numbers[0]), "%g", d);
		*p = (param){ key, text, strlen(text), true };
	} else {
		return refuse(pe, "bad_parameter", "%s must be a string, a number or a list of them", key);
	}
	ps->n++;
	return 0;
}

/* See params.h. */
int params_from_json(params *ps, const void *object, param_error *pe)
{
	const cJSON *o = object, *it;
	ps->n = 0;
	ps->too_many = false;
	if (!cJSON_IsObject(o))
		return refuse(pe, "bad_parameter", "params must be a JSON object");
	cJSON_ArrayForEach(it, o) {
		const char *key = it->string ? it->string : "";
		if (cJSON_IsArray(it)) {
			const cJSON *el;
			cJSON_ArrayForEach(el, it) {
				if (cJSON_IsArray(el) || add_json_value(ps, key, el, pe))
					return refuse(pe, "bad_parameter",
						      "%s must be a string, a number or a list of them", key);
			}
		} else if (add_json_value(ps, key, it, pe)) {
			return ATLAS_EINVAL;
		}
	}
	return 0;
}

/* See params.h. Returns 0 or ATLAS_EINVAL with *pe set. */
int params_check(const params *ps, const char *route, const char *const *names, param_error *pe)
{
	if (ps->too_many)
		return refuse(pe, "bad_parameter", "%s takes at most %d parameters", route, PARAMS_MAX);
	for (int i = 0; i < ps->n; i++) {
		const param *p = &ps->v[i];
		bool known = false;
		for (int k = 0; names[k] && !known; k++)
			known = strcmp(p->key, names[k]) == 0;
		if (!known) {
			char name[64], list[256] = "";
			snprintf(name, sizeof(name), "%s", p->key);
			atlas_utf8_clean(name, strlen(name));
			for (int k = 0; names[k]; k++) {
				size_t n = strlen(list);
				snprintf(list + n, sizeof(list) - n, "%s%s", k ? ", " : "", names[k]);
			}
			return refuse(pe, "unknown_parameter", "unknown parameter '%s': %s takes %s", name,
				      route, list);
		}
		long at = atlas_utf8_invalid_at(p->value, p->len);
		if (at >= 0)
			return refuse(pe, "bad_encoding",
				      "parameter %s is not valid UTF-8 once percent-decoded (byte %ld, 0x%02x)",
				      p->key, at + 1, (unsigned)(unsigned char)p->value[at]);
	}
	return 0;
}

/* Returns the first parameter named key, or NULL. */
static const param *first(const params *ps, const char *key)
{
	for (int i = 0; i < ps->n; i++)
		if (strcmp(ps->v[i].key, key) == 0)
			return &ps->v[i];
	return NULL;
}

/* Copies parameter key (the first given) into buf (cap bytes; "" when absent) with control bytes
 * made spaces. Returns 0, or ATLAS_EINVAL when it is longer than cap - 1 bytes. */
static int text_of(const params *ps, const char *key, char *buf, size_t cap)
{
	const param *p = first(ps, key);
	buf[0] = '\0';
	if (!p)
		return 0;
	if (p->len > cap - 1)
		return ATLAS_EINVAL;
	memcpy(buf, p->value, p->len);
	buf[p->len] = '\0';
	atlas_utf8_clean(buf, p->len);
	return 0;
}

/* Parses parameter key (the first given) as a decimal number in lo..hi into *out, left as it is
 * when absent or empty; *given says whether it was there. Returns 0, or ATLAS_EINVAL for anything
 * but digits, or a number out of range. */
static int int_of(const params *ps, const char *key, int lo, int hi, int *out, bool *given)
{
	const param *p = first(ps, key);
	if (given)
		*given = false;
	if (!p || p->len == 0)
		return 0;
	if (p->len > 9)
		return ATLAS_EINVAL;
	long x = 0;
	for (size_t i = 0; i < p->len; i++) {
		if (p->value[i] < '0' || p->value[i] > '9')
			return ATLAS_EINVAL;
		x = x * 10 + (p->value[i] - '0');
	}
	if (x < lo || x > hi)
		return ATLAS_EINVAL;
	*out = (int)x;
	if (given)
		*given = true;
	return 0;
}

/* Rewrites the query text q in place as the query parser reads it: every run of spaces, tabs and
 * control bytes becomes one space, none at the start, at most one at the end (which keeps its
 * meaning: no prefix word); a query of nothing but spaces is one space. Two spellings of one
 * query then share a cache key. */
void params_normalize_query(char *q)
{
	size_t o = 0;
	bool space = false;
	for (const unsigned char *p = (const unsigned char *)q; *p; p++) {
		if (*p <= 0x20 || *p == 0x7f) {
			space = true;
			continue;
		}
		if (o == 0)
			space = false;
		if (space)
			q[o++] = ' ';
		space = false;
		q[o++] = (char)*p;
	}
	if (space)
		q[o++] = ' ';
	q[o] = '\0';
}

/* See params.h: int_of for a route's own parameters. Returns 0 or ATLAS_EINVAL. */
int params_int(const params *ps, const char *key, int lo, int hi, int *out)
{
	return int_of(ps, key, lo, hi, out, NULL);
}

/* qsort order of strings (const char *), by bytes. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reads every type value (repeated parameters, each a comma-separated list) into sr. Returns 0,
 * or ATLAS_EINVAL with *pe set for an unknown type. */
static int parse_types(search_request *sr, const params *ps, param_error *pe)
{
	bool want[SEARCH_TYPES_MAX] = { false };
	for (int i = 0; i < ps->n; i++) {
		if (strcmp(ps->v[i].key, "type") != 0)
			continue;
		const char *s = ps->v[i].value, *end = s + ps->v[i].len;
		while (s < end) {
			const char *comma = memchr(s, ',', (size_t)(end - s));
			size_t n = (size_t)((comma ? comma : end) - s);
			int k = 0;
			while (k < SEARCH_TYPES_MAX && (strlen(atlas_page_type_names[k]) != n || memcmp(atlas_page_type_names[k], s, n)))
				k++;
			if (n && k == SEARCH_TYPES_MAX)
				return refuse(pe, "bad_parameter",
					      "type must be explainer, guide, topic or page (or a comma-separated list "
					      "of them)");
			if (n)
				want[k] = true;
			s += n + 1;
		}
	}
	for (int k = 0; k < SEARCH_TYPES_MAX; k++)
		if (want[k])
			sr->types[sr->ntypes++] = atlas_page_type_names[k];
	return 0;
}

/* Reads every topic value (repeated parameters, each a comma-separated list) into sr, sorted and
 * without repeats. Returns 0, or ATLAS_EINVAL with *pe set. */
static int parse_topics(search_request *sr, const params *ps, param_error *pe)
{
	for (int i = 0; i < ps->n; i++) {
		if (strcmp(ps->v[i].key, "topic") != 0)
			continue;
		const char *s = ps->v[i].value, *end = s + ps->v[i].len;
		while (s < end) {
			const char *comma = memchr(s, ',', (size_t)(end - s));
			size_t n = (size_t)((comma ? comma : end) - s);
			if (n > SERVE_QUERY_MAX)
				return refuse(pe, "bad_parameter", "topic is longer than %d bytes", SERVE_QUERY_MAX);
			/* a topic page's path names its topic too */
			if (n > 3 && memcmp(s, "/t/", 3) == 0)
				s += 3, n -= 3;
			while (n && s[n - 1] == '/')
				n--;
			if (n) {
				if (sr->ntopics == SEARCH_TOPICS_MAX)
					return refuse(pe, "bad_parameter", "at most %d topics", SEARCH_TOPICS_MAX);
				char *t = sr->topic_text[sr->ntopics];
				memcpy(t, s, n);
				t[n] = '\0';
				atlas_utf8_clean(t, n);
				sr->topics[sr->ntopics++] = t;
			}
			s = (comma ? comma : end) + 1;
		}
	}
	qsort(sr->topics, (size_t)sr->ntopics, sizeof(sr->topics[0]), cmp_str);
	int n = 0;
	for (int i = 0; i < sr->ntopics; i++)
		if (n == 0 || strcmp(sr->topics[n - 1], sr->topics[i]) != 0)
			sr->topics[n++] = sr->topics[i];
	sr->ntopics = n;
	return 0;
}

/* See params.h. Returns 0 or ATLAS_EINVAL with *pe set. */
int search_request_parse(search_request *sr, const params *ps, param_error *pe)
{
	memset(sr, 0, sizeof(*sr));
	sr->p = (atlas_search_params){ sr->q, 10, 0, NULL, NULL, false, false };
	if (params_check(ps, "/api/search", search_names, pe))
		return ATLAS_EINVAL;
	if (text_of(ps, "q", sr->q, sizeof(sr->q)))
		return refuse(pe, "query_too_long", "q is longer than %d bytes", SERVE_QUERY_MAX);
	params_normalize_query(sr->q);
	bool has_limit, has_hpp, has_offset, has_page;
	int hpp = 10, page = 1;
	if (int_of(ps, "limit", 1, ATLAS_LIMIT_MAX, &sr->p.limit, &has_limit))
		return refuse(pe, "bad_parameter", "limit must be a number from 1 to %d", ATLAS_LIMIT_MAX);
	if (int_of(ps, "hitsPerPage", 1, ATLAS_LIMIT_MAX, &hpp, &has_hpp))
		return refuse(pe, "bad_parameter", "hitsPerPage must be a number from 1 to %d", ATLAS_LIMIT_MAX);
	if (has_limit && has_hpp && hpp != sr->p.limit)
		return refuse(pe, "bad_parameter", "limit and hitsPerPage are the same thing: give one");
	if (has_hpp)
		sr->p.limit = hpp;
	if (int_of(ps, "offset", 0, ATLAS_OFFSET_MAX, &sr->p.offset, &has_offset))
		return refuse(pe, "bad_parameter", "offset must be a number from 0 to %d", ATLAS_OFFSET_MAX);
	int last = ATLAS_OFFSET_MAX / sr->p.limit + 1;
	if (int_of(ps, "page", 1, last, &page, &has_page))
		return refuse(pe, "bad_parameter", "page must be a number from 1 to %d with %d results a page",
			      last, sr->p.limit);
	if (has_page && has_offset)
		return refuse(pe, "bad_parameter", "page and offset both say where to start: give one");
	if (has_page)
		sr->p.offset = (page - 1) * sr->p.limit;
	if (parse_types(sr, ps, pe) || parse_topics(sr, ps, pe))
		return ATLAS_EINVAL;
	const param *sort = first(ps, "sort");
	if (sort && sort->len && strcmp(sort->value, "lastmod") == 0)
		sr->more.sort = ATLAS_SORT_LASTMOD;
	else if (sort && sort->len && strcmp(sort->value, "relevance") != 0)
		return refuse(pe, "bad_parameter", "sort must be relevance or lastmod");
	const param *correct = first(ps, "correct");
	if (correct && correct->len && strcmp(correct->value, "true") && strcmp(correct->value, "false"))
		return refuse(pe, "bad_parameter", "correct must be true or false");
	sr->p.no_correct = correct && strcmp(correct->value, "false") == 0;
	sr->more.types = sr->types;
	sr->more.ntypes = sr->ntypes;
	sr->more.topics = sr->topics;
	sr->more.ntopics = sr->ntopics;
	strbuf *k = &sr->norm;
	strbuf_printf(k, "/api/search?correct=%s&limit=%d&offset=%d&q=", sr->p.no_correct ? "false" : "true",
		      sr->p.limit, sr->p.offset);
	put_pct(k, sr->q);
	strbuf_puts(k, sr->more.sort == ATLAS_SORT_LASTMOD ? "&sort=lastmod&topic=" : "&sort=&topic=");
	for (int i = 0; i < sr->ntopics; i++) {
		if (i)
			strbuf_putc(k, ',');
		put_pct(k, sr->topics[i]);
	}
	strbuf_puts(k, "&type=");
	for (int i = 0; i < sr->ntypes; i++)
		strbuf_printf(k, "%s%s", i ? "," : "", sr->types[i]);
	return 0;
}

/* Frees what search_request_parse allocated. Never fails. */
void search_request_free(search_request *sr)
{
	strbuf_free(&sr->norm);
}

/* See params.h. Returns 0 or ATLAS_EINVAL with *pe set. */
int next_request_parse(next_request *nr, const params *ps, param_error *pe)
{
	memset(nr, 0, sizeof(*nr));
	nr->p = (atlas_next_params){ nr->path, NULL, nr->list, 0, 5 };
	if (params_check(ps, "/api/next", next_names, pe))
		return ATLAS_EINVAL;
	if (text_of(ps, "path", nr->path, sizeof(nr->path)) || text_of(ps, "guide", nr->guide, sizeof(nr->guide)))
		return refuse(pe, "bad_parameter", "path and guide must be at most %d bytes", SERVE_PARAM_MAX);
	if (!nr->path[0])
		return refuse(pe, "bad_parameter", "path is required: the page to suggest reading after");
	if (text_of(ps, "seen", nr->seen, sizeof(nr->seen)))
		return refuse(pe, "bad_parameter", "seen must be at most %d bytes", SERVE_SEEN_MAX);
	if (int_of(ps, "limit", 1, ATLAS_LIMIT_MAX, &nr->p.limit, NULL))
		return refuse(pe, "bad_parameter", "limit must be a number from 1 to %d", ATLAS_LIMIT_MAX);
	nr->p.guide = nr->guide[0] ? nr->guide : NULL;
	strbuf *k = &nr->norm;
	strbuf_puts(k, "/api/next?guide=");
	put_pct(k, nr->guide);
	strbuf_printf(k, "&limit=%d&path=", nr->p.limit);
	put_pct(k, nr->path);
	strbuf_puts(k, "&seen=");
	nr->p.nseen = atlas_next_seen_split(nr->list, nr->seen);
	for (int i = 0; i < nr->p.nseen; i++) {
		if (i)
			strbuf_putc(k, ',');
		put_pct(k, nr->list[i]);
	}
	return 0;
}

/* Frees what next_request_parse allocated. Never fails. */
void next_request_free(next_request *nr)
{
	strbuf_free(&nr->norm);
}

