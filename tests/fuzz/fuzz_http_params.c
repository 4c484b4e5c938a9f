/* fuzz_http_params.c - arbitrary bytes as the query string of a request to atlas-serve, mapped onto
 * the engine as the server maps GET arguments:
 *
 *   input    = [ "/api/search?" | "/api/suggest?" | "/api/next?" ] query-string
 *   pairs    split on '&', key and value split at the first '='; '+' is a space, then %XX is
 *            decoded (a '%' not followed by two hex digits stays as it is), as libmicrohttpd does
 *   lookup   the first pair with the key wins; a key without '=' is present with an empty value
 *   text     NUL bytes in a value become spaces; q and topic longer than 256 bytes, path and guide
 *            longer than 1024, seen longer than 8192 are a 400 (no engine call)
 *   numbers  limit and offset: absent or empty keeps the default (search limit 10, next limit 5);
 *            anything but 1-9 digits is a 400; a number of digits is passed on as it is, so that
 *            the engine's own range checks are fuzzed too (out of range must be ATLAS_EINVAL;
 *            the engine takes limit 0 as its default, where the server answers 400)
 *   type     one of explainer|guide|topic|page, anything else a 400; empty is no filter
 *   correct  true or false (search), anything else a 400; empty is true
 *   limit    of suggest: 1-20 (default 10), anything else a 400
 *   seen     split on ',' (empty items dropped), at most ATLAS_SEEN_MAX paths
 *
 * Without a route prefix the input is sent to all three endpoints. The limits above are those of
 * server/server.h and server/handler.c (SERVE_QUERY_MAX, SERVE_PARAM_MAX, SERVE_SEEN_MAX) when this
 * target was written; it does not link the server, which is another area's code.
 *
 * Property: any answer but ATLAS_ESQL (a 500) is fine, and nothing crashes or leaks. Results and
 * error messages are serialized to JSON as the server does and checked to parse; result bodies must
 * be valid UTF-8, while invalid UTF-8 echoed from the request into suggest and error bodies is
 * counted as a soft finding (see fuzz.h) so that the run goes on. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz.h"
#include "json.h"

#define QUERY_MAX 256
#define PARAM_MAX 1024
#define SEEN_MAX 8192
#define MAX_PAIRS 64

typedef struct pair {
	char *key, *val;
	size_t klen, vlen;
} pair;

typedef struct request {
	pair pairs[MAX_PAIRS];
	int n;
} request;

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes s[0..n) ('+' to space, %XX to a byte) into a new NUL-terminated buffer; *out_len is
 * the decoded length, which may include NUL bytes. */
static char *pct_decode(const char *s, size_t n, size_t *out_len)
{
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '+')
			out[o++] = ' ';
		else if (s[i] == '%' && i + 2 < n && hexval((unsigned char)s[i + 1]) >= 0 &&
			 hexval((unsigned char)s[i + 2]) >= 0) {
			out[o++] = (char)(hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]));
			i += 2;
		} else
			out[o++] = s[i];
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

static void request_free(request *rq)
{
	for (int i = 0; i < rq->n; i++) {
		free(rq->pairs[i].key);
		free(rq->pairs[i].val);
	}
	rq->n = 0;
}

static void parse_query_string(request *rq, const char *s, size_t n)
{
	size_t i = 0;
	while (i <= n && rq->n < MAX_PAIRS) {
		size_t j = i;
		while (j < n && s[j] != '&')
			j++;
		if (j > i) {
			const char *eq = memchr(s + i, '=', j - i);
			size_t klen_raw = eq ? (size_t)(eq - (s + i)) : j - i;
			pair *p = &rq->pairs[rq->n];
			p->key = pct_decode(s + i, klen_raw, &p->klen);
			p->val = eq ? pct_decode(eq + 1, (size_t)(s + j - eq - 1), &p->vlen) : pct_decode("", 0, &p->vlen);
			if (!p->key || !p->val) {
				free(p->key);
				free(p->val);
			} else
				rq->n++;
		}
		i = j + 1;
	}
}

/* The first value of key, or NULL when absent. */
static const pair *arg(const request *rq, const char *key)
{
	size_t kl = strlen(key);
	for (int i = 0; i < rq->n; i++)
		if (rq->pairs[i].klen == kl && memcmp(rq->pairs[i].key, key, kl) == 0)
			return &rq->pairs[i];
	return NULL;
}

/* As the server's arg_text: "" when absent, NULs to spaces, -1 (a 400) when longer than max. */
static int arg_text(const request *rq, const char *key, char *buf, size_t max)
{
	const pair *p = arg(rq, key);
	buf[0] = '\0';
	if (!p)
		return 0;
	if (p->vlen > max)
		return -1;
	for (size_t i = 0; i < p->vlen; i++)
		buf[i] = p->val[i] ? p->val[i] : ' ';
	buf[p->vlen] = '\0';
	return 0;
}

/* Absent or empty: *out unchanged. Otherwise 1-9 digits into *out, or -1 (a 400). */
static int arg_number(const request *rq, const char *key, int *out)
{
	const pair *p = arg(rq, key);
	if (!p || p->vlen == 0)
		return 0;
	if (p->vlen > 9)
		return -1;
	int x = 0;
	for (size_t i = 0; i < p->vlen; i++) {
		if (p->val[i] < '0' || p->val[i] > '9')
			return -1;
		x = x * 10 + (p->val[i] - '0');
	}
	*out = x;
	return 0;
}

/* With ATLAS_FUZZ_VERBOSE set, prints what the server would answer (for reading saved inputs). */
static void outcome(const char *route, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outcome(const char *route, const char *fmt, ...)
{
	static int verbose = -1;
	if (verbose < 0)
		verbose = getenv("ATLAS_FUZZ_VERBOSE") != NULL;
	if (!verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "  %-7s ", route);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Checks that json parses and is valid UTF-8. soft_kind NULL: invalid UTF-8 is fatal; otherwise it
 * is a soft finding of that kind (described by why). */
static void check_json(const uint8_t *data, size_t size, const char *what, char *json, const char *soft_kind,
		       const char *why)
{
	if (!json)
		return; /* out of memory: the server answers 500 from a static body */
	cJSON *parsed = cJSON_Parse(json);
	if (!parsed)
		fuzz_fail(data, size, "%s JSON does not parse: %s", what, json);
	cJSON_Delete(parsed);
	if (fuzz_utf8_invalid_at(json, strlen(json)) >= 0) {
		if (!soft_kind)
			fuzz_fail(data, size, "%s JSON is not valid UTF-8", what);
		fuzz_soft(soft_kind, data, size, "%s JSON is not valid UTF-8: %s", what, why);
	}
	free(json);
}

/* The error body the server sends for an engine error (400 or 404). */
static void check_error_body(const uint8_t *data, size_t size, const char *code, const atlas_error *err)
{
	check_json(data, size, "error", atlas_json_error(code, err->msg), "error-json-invalid-utf8",
		   "the engine's message quotes the request's path or guide as given (query/next.c), cut at"
		   " 511 bytes by common/error.c, maybe inside a character; atlas_json_error copies it as is");
}

static void do_search(atlas_engine *e, const request *rq, const uint8_t *data, size_t size)
{
	static char q[QUERY_MAX + 1], topic[QUERY_MAX + 1], type[16], correct[8];
	atlas_search_params p = { q, 10, 0, NULL, NULL, false, false };
	if (arg_text(rq, "correct", correct, sizeof(correct) - 1) ||
	    (correct[0] && strcmp(correct, "true") && strcmp(correct, "false"))) {
		outcome("search", "400 (correct is neither true nor false)");
		return;
	}
	p.no_correct = strcmp(correct, "false") == 0;
	if (arg_text(rq, "q", q, QUERY_MAX) || arg_number(rq, "limit", &p.limit) ||
	    arg_number(rq, "offset", &p.offset) || arg_text(rq, "type", type, sizeof(type) - 1) ||
	    (type[0] && atlas_page_type_of(type) == ATLAS_TYPE_OTHER) ||
	    arg_text(rq, "topic", topic, QUERY_MAX)) {
		outcome("search", "400 (rejected by the server's argument checks)");
		return;
	}
	p.type = type[0] ? type : NULL;
	p.topic = topic[0] ? topic : NULL;
	atlas_results r;
	atlas_error err = { 0, "" };
	int rc = atlas_search(&r, e, &p, &err);
	if (rc == ATLAS_ESQL)
		fuzz_fail(data, size, "atlas_search returned ATLAS_ESQL (a 500): %s", err.msg);
	/* the engine reads limit 0 as its default (10); the server answers 400 to limit=0 */
	bool in_range = p.limit >= 0 && p.limit <= ATLAS_LIMIT_MAX && p.offset >= 0 &&
			p.offset <= ATLAS_OFFSET_MAX;
	if (!in_range && rc != ATLAS_EINVAL)
		fuzz_fail(data, size, "limit %d offset %d: atlas_search returned %d, not ATLAS_EINVAL", p.limit,
			  p.offset, rc);
	if (rc) {
		outcome("search", "%s (engine %d: %s)", rc == ATLAS_EINVAL ? "400" : "500", rc, err.msg);
		check_error_body(data, size, "bad_parameter", &err);
		return;
	}
	outcome("search", "200 total %d, %d hits (limit %d offset %d)", r.total, r.nhits, p.limit, p.offset);
	if (r.nhits > (p.limit ? p.limit : 10) || r.nhits > r.total)
		fuzz_fail(data, size, "%d hits of %d for limit %d", r.nhits, r.total, p.limit);
	for (int i = 0; i < r.nhits; i++) {
		const atlas_doc *d = atlas_engine_doc(e, r.hits[i].doc);
		if (!d)
			fuzz_fail(data, size, "hit %d names no document", i);
		if (p.type && strcmp(d->type, p.type) != 0)
			fuzz_fail(data, size, "hit %s of type %s passed the filter type=%s", d->path, d->type, p.type);
	}
	check_json(data, size, "search", atlas_json_search(e, &r), NULL, NULL);
	atlas_results_free(&r);
}

static void do_suggest(atlas_engine *e, const request *rq, const uint8_t *data, size_t size)
{
	static char q[QUERY_MAX + 1];
	static atlas_suggestion s[ATLAS_SUGGEST_MAX];
	int limit = 10;
	if (arg_text(rq, "q", q, QUERY_MAX) || arg_number(rq, "limit", &limit) || limit < 1 ||
	    limit > ATLAS_SUGGEST_MAX) {
		outcome("suggest", "400 (q too long, or limit not 1-%d)", ATLAS_SUGGEST_MAX);
		return;
	}
	int n = atlas_suggest(s, limit, e, q);
	outcome("suggest", "200 %d suggestions", n);
	if (n < 0 || n > limit)
		fuzz_fail(data, size, "atlas_suggest returned %d for max %d", n, limit);
	for (int i = 0; i < n; i++)
		if (s[i].doc < 0 && (!s[i].text[0] || s[i].pages < 1))
			fuzz_fail(data, size, "query suggestion %d is empty or finds no page", i);
	check_json(data, size, "suggest", atlas_json_suggest(e, q, s, n), "suggest-json-invalid-utf8",
		   "query/json.c atlas_json_suggest echoes the prefix as given");
}

static void do_next(atlas_engine *e, const request *rq, const uint8_t *data, size_t size)
{
	static char path[PARAM_MAX + 1], guide[PARAM_MAX + 1], seen[SEEN_MAX + 1];
	const char *list[ATLAS_SEEN_MAX];
	atlas_next_params p = { path, NULL, list, 0, 5 };
	if (arg_text(rq, "path", path, PARAM_MAX) || arg_text(rq, "guide", guide, PARAM_MAX) || !path[0] ||
	    arg_text(rq, "seen", seen, SEEN_MAX) || arg_number(rq, "limit", &p.limit)) {
		outcome("next", "400 (rejected by the server's argument checks)");
		return;
	}
	p.guide = guide[0] ? guide : NULL;
	char *save = NULL;
	for (char *tok = strtok_r(seen, ",", &save); tok && p.nseen < ATLAS_SEEN_MAX; tok = strtok_r(NULL, ",", &save))
		list[p.nseen++] = tok;
	atlas_next_results r;
	atlas_error err = { 0, "" };
	int rc = atlas_next(&r, e, &p, &err);
	if (rc == ATLAS_ESQL)
		fuzz_fail(data, size, "atlas_next returned ATLAS_ESQL (a 500): %s", err.msg);
	if (rc) {
		outcome("next", "%s (engine %d: %.80s)", rc == ATLAS_ENOTFOUND ? "404" : "500", rc, err.msg);
		check_error_body(data, size, "not_found", &err);
		return;
	}
	outcome("next", "200 %d suggestions (%d seen)", r.nitems, p.nseen);
	int limit = p.limit > ATLAS_LIMIT_MAX ? ATLAS_LIMIT_MAX : p.limit > 0 ? p.limit : 5;
	if (r.nitems < 0 || r.nitems > limit)
		fuzz_fail(data, size, "%d read-next items for limit %d", r.nitems, p.limit);
	for (int i = 0; i < r.nitems; i++) {
		if (!atlas_engine_doc(e, r.items[i].doc))
			fuzz_fail(data, size, "read-next item %d names no document", i);
		if (r.items[i].doc == r.doc)
			fuzz_fail(data, size, "read next suggests the page itself");
	}
	check_json(data, size, "next", atlas_json_next(e, &r), NULL, NULL);
	atlas_next_results_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		const char *prefix;
		int route; /* 1 search, 2 suggest, 4 next */
	} routes[] = { { "/api/search?", 1 }, { "/api/suggest?", 2 }, { "/api/next?", 4 } };
	const char *s = (const char *)data;
	size_t n = size;
	int which = 7;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		size_t pl = strlen(routes[i].prefix);
		if (n >= pl && memcmp(s, routes[i].prefix, pl) == 0) {
			which = routes[i].route;
			s += pl;
			n -= pl;
			break;
		}
	}
	request rq = { .n = 0 };
	parse_query_string(&rq, s, n);
	atlas_engine *e = fuzz_engine();
	if (which & 1)
		do_search(e, &rq, data, size);
	if (which & 2)
		do_suggest(e, &rq, data, size);
	if (which & 4)
		do_next(e, &rq, data, size);
	request_free(&rq);
	return 0;
}
