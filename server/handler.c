/* handler.c - routing and answers of atlas-serve: the JSON API, health, metrics, the page. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "assets.h"
#include "fair.h"
#include "framing.h"
#include "json.h"
#include "utf8.h"
#include "server.h"
#include "strbuf.h"

#define JSON_TYPE "application/json; charset=utf-8"
#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define API_CACHE_CONTROL "public, max-age=60"
#define BAD "bad_parameter"
#define TOO_LONG "query_too_long"
#define METHODS "GET, HEAD, OPTIONS"
#define PAGE_CSP                                                                                   \
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "          \
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "             \
	"frame-ancestors 'none'"

static const char oom_body[] =
	"{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}\n";

/* One request, from the handler's first call to the completion callback (MHD's *con_cls). */
typedef struct request {
	double t0;                   /* serve_now() at the first call */
	int route;                   /* ROUTE_* */
	int status;                  /* 0 until a response is queued */
	long count;                  /* results in the answer, -1 when not known */
	const atlas_asset *asset;    /* for ROUTE_PAGE and ROUTE_ASSET */
	char method[16];             /* printable copies for the access log */
	char path[160];
} request;

/* A response being put together. */
typedef struct reply {
	int status;
	const char *body;            /* len bytes; owned (body == owned) or static */
	char *owned;                 /* malloc'd body handed to MHD, or NULL */
	size_t len;
	const char *type;            /* Content-Type, NULL for none */
	const char *cache_control;   /* NULL: no-store */
	char etag[128];              /* "" for none */
	const char *csp;             /* Content-Security-Policy, NULL for none */
	bool allow;                  /* add Allow (405, OPTIONS) */
	bool preflight;              /* add the CORS preflight answers */
	bool close;                  /* add Connection: close (a refused framing) */
	const char *retry_after;     /* Retry-After (a 429), NULL for none */
	bool heavy;                  /* the work budget cut the answer (fair.h) */
	bool abandon;                /* the client has gone: close without an answer */
} reply;

static const struct {
	const char *path;
	int route;
} api_routes[] = {
	{ "/api/search", ROUTE_SEARCH },
	{ "/api/suggest", ROUTE_SUGGEST },
	{ "/api/next", ROUTE_NEXT },
	{ "/healthz", ROUTE_HEALTHZ },
	{ "/metrics", ROUTE_METRICS },
};

/* Returns CLOCK_MONOTONIC in seconds. Never fails. */
double serve_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Empties the response cache after an index swap. Never fails. */
void serve_on_swap(void *cls)
{
	server *s = cls;
	cache_clear(s->cache);
}

/* Returns the ROUTE_* of url (origin form "/path", or absolute form "http://host/path"), with
 * *asset set for the page and its files. */
static int route_of(const char *url, const atlas_asset **asset)
{
	*asset = NULL;
	if (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0) {
		const char *path = strchr(strstr(url, "//") + 2, '/');
		url = path ? path : "/";
	}
	for (size_t i = 0; i < sizeof(api_routes) / sizeof(api_routes[0]); i++)
		if (strcmp(url, api_routes[i].path) == 0)
			return api_routes[i].route;
	for (int i = 0; i < atlas_nassets; i++)
		if (strcmp(url, atlas_assets[i].path) == 0) {
			*asset = &atlas_assets[i];
			return strcmp(url, "/") == 0 ? ROUTE_PAGE : ROUTE_ASSET;
		}
	return ROUTE_UNMATCHED;
}

/* Copies s into buf (cap bytes) for a log line: printable ASCII kept, the rest as %XX, cut
 * short. */
static void printable_copy(char *buf, size_t cap, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	for (; s && *s && n + 4 < cap; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch > 0x20 && ch < 0x7f && ch != '%' && ch != '"') {
			buf[n++] = (char)ch;
		} else {
			buf[n++] = '%';
			buf[n++] = hex[ch >> 4];
			buf[n++] = hex[ch & 15];
		}
	}
	buf[n] = '\0';
}

/* Appends s to sb percent-encoded (unreserved characters kept), for normalized request keys. */
static void put_pct(strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');
		if (alnum || ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '/') {
			strbuf_putc(sb, (char)ch);
		} else {
			strbuf_putc(sb, '%');
			strbuf_putc(sb, hex[ch >> 4]);
			strbuf_putc(sb, hex[ch & 15]);
		}
	}
}

/* Looks GET argument key up, embedded NUL bytes included. Returns true when present, with *val and
 * *len set ("" when given without a value); the value is owned by MHD. */
static bool arg_raw(struct MHD_Connection *c, const char *key, const char **val, size_t *len)
{
	const char *v = NULL;
	size_t n = 0;
	enum MHD_Result found =
		MHD_lookup_connection_value_n(c, MHD_GET_ARGUMENT_KIND, key, strlen(key), &v, &n);
	if (found != MHD_YES)
		return false;
	*val = v ? v : "";
	*len = v ? n : 0;
	return true;
}


/* Rewrites the query text q in place as the query parser reads it: every run of spaces, tabs and
 * control bytes becomes one space, none at the start, at most one at the end (which keeps its
 * meaning: no prefix word); a query of nothing but spaces is one space. Two spellings of one
 * query then share a cache key. */
static void normalize_query(char *q)
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

/* Copies GET argument key into buf ("" when absent), cleaned by clean_text. Returns 0, or
 * ATLAS_EINVAL when the value is longer than cap - 1 bytes. */
static int arg_text(struct MHD_Connection *c, const char *key, char *buf, size_t cap)
{
	const char *v;
	size_t n;
	buf[0] = '\0';
	if (!arg_raw(c, key, &v, &n))
		return 0;
	if (n > cap - 1)
		return ATLAS_EINVAL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	atlas_utf8_clean(buf, n);
	return 0;
}

/* Parses GET argument key as a decimal number in lo..hi into *out, left unchanged when the
 * argument is absent or empty. Returns 0, or ATLAS_EINVAL for anything but digits or a number out
 * of range. */
static int arg_int(struct MHD_Connection *c, const char *key, int lo, int hi, int *out)
{
	const char *v;
	size_t n;
	if (!arg_raw(c, key, &v, &n) || n == 0)
		return 0;
	if (n > 9)
		return ATLAS_EINVAL;
	long x = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return ATLAS_EINVAL;
		x = x * 10 + (v[i] - '0');
	}
	if (x < lo || x > hi)
		return ATLAS_EINVAL;
	*out = (int)x;
	return 0;
}

/* Makes json (malloc'd, may be NULL when serialization ran out of memory; taken over) the body
 * of rp with status, a newline appended as atlas-query --json prints it. Falls back to a static
 * 500. */
static void reply_json(reply *rp, int status, char *json)
{
	size_t n = json ? strlen(json) : 0;
	char *body = json ? realloc(json, n + 2) : NULL;
	rp->type = JSON_TYPE;
	if (!body) {
		free(json);
		rp->status = 500;
		rp->body = oom_body;
		rp->owned = NULL;
		rp->len = sizeof(oom_body) - 1;
		return;
	}
	body[n] = '\n';
	body[n + 1] = '\0';
	rp->status = status;
	rp->body = rp->owned = body;
	rp->len = n + 1;
}

/* Makes rp the JSON error {"error":{"code","message"}} with status and a printf-style message. */
static void reply_error(reply *rp, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void reply_error(reply *rp, int status, const char *code, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	reply_json(rp, status, atlas_json_error(code, msg));
}

/* Turns rp into a 304 Not Modified (keeping its ETag and Cache-Control), freeing its body. */
static void reply_not_modified(reply *rp)
{
	free(rp->owned);
	rp->owned = NULL;
	rp->body = NULL;
	rp->len = 0;
	rp->type = NULL;
	rp->status = 304;
}

/* Returns whether the request's If-None-Match lists etag (weak comparison) or is "*". */
static bool if_none_match(struct MHD_Connection *c, const char *etag)
{
	const char *h =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	if (!h)
		return false;
	const char *tag = strncmp(etag, "W/", 2) == 0 ? etag + 2 : etag;
	size_t tlen = strlen(tag);
	for (const char *p = h; *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return true;
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		if (*p != '"') {
			while (*p && *p != ',')
				p++;
			continue;
		}
		const char *end = strchr(p + 1, '"');
		if (!end)
			return false;
		if ((size_t)(end + 1 - p) == tlen && memcmp(p, tag, tlen) == 0)
			return true;
		p = end + 1;
	}
	return false;
}

/* Returns whether origin is one of the --cors origins. */
static bool origin_allowed(const server *s, const char *origin)
{
	for (int i = 0; i < s->cfg->ncors; i++)
		if (strcmp(s->cfg->cors[i], origin) == 0)
			return true;
	return false;
}

/* Adds the CORS headers that the configuration and the request's Origin call for. Returns false
 * when out of memory. */
static bool add_cors(const server *s, struct MHD_Connection *c, struct MHD_Response *r,
		     const reply *rp)
{
	if (s->cfg->ncors == 0)
		return true;
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *allow = NULL;
	if (s->cors_any)
		allow = "*";
	else if (origin && origin_allowed(s, origin))
		allow = origin;
	bool ok = true;
	if (!s->cors_any)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Origin");
	if (!allow)
		return ok;
	ok = ok && MHD_add_response_header(r, "Access-Control-Allow-Origin", allow);
	if (rp->preflight) {
		ok = ok && MHD_add_response_header(r, "Access-Control-Allow-Methods", METHODS);
		ok = ok && MHD_add_response_header(r, "Access-Control-Allow-Headers",
						   "Accept, Content-Type, If-None-Match");
		ok = ok && MHD_add_response_header(r, "Access-Control-Max-Age", "600");
	} else {
		ok = ok && MHD_add_response_header(r, "Access-Control-Expose-Headers", "ETag");
	}
	return ok;
}

/* Queues rp on c with the headers every response carries, and records the status in rq. The body
 * is handed to MHD (freed by it). Returns MHD's answer: MHD_NO closes the connection. */
static enum MHD_Result send_reply(server *s, struct MHD_Connection *c, request *rq, reply *rp)
{
	struct MHD_Response *r;
	if (rp->owned)
		r = MHD_create_response_from_buffer(rp->len, rp->owned, MHD_RESPMEM_MUST_FREE);
	else
		r = MHD_create_response_from_buffer(rp->len, (void *)rp->body,
						    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(rp->owned);
		return MHD_NO;
	}
	bool ok = MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (rp->type)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rp->type);
	ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
					   rp->cache_control ? rp->cache_control : "no-store");
	if (rp->etag[0])
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, rp->etag);
	if (rp->csp) {
		ok = ok && MHD_add_response_header(r, "Content-Security-Policy", rp->csp);
		ok = ok && MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
		ok = ok && MHD_add_response_header(r, "X-Frame-Options", "DENY");
	}
	if (rp->allow)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, METHODS);
	if (rp->retry_after)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, rp->retry_after);
	ok = ok && add_cors(s, c, r, rp);
	if (atomic_load(&s->closing) || rp->close)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ret = ok ? MHD_queue_response(c, (unsigned int)rp->status, r) : MHD_NO;
	MHD_destroy_response(r);
	if (ret == MHD_YES)
		rq->status = rp->status;
	return ret;
}

/* Computes an API answer with engine e into rp (status and body); sets *count when known. */
typedef void (*answer_fn)(atlas_engine *e, const void *args, reply *rp, long *count);

/* Answers an API request whose normalized form (route + sorted parameters) is norm: from the
 * cache when it holds the answer for the served build, else with fn on this thread's engine (and
 * then cached). A 200 gets an ETag of the build id and norm, and becomes a 304 when If-None-Match
 * names it. */
static void api_answer(server *s, struct MHD_Connection *c, request *rq, reply *rp,
		       const strbuf *norm, answer_fn fn, const void *args)
{
	if (norm->oom) {
		reply_json(rp, 500, NULL);
		return;
	}
	atlas_engine *e = live_acquire(s->index);
	const char *b = atlas_engine_meta(e, "build_id");
	char build[64];
	snprintf(build, sizeof(build), "%s", b ? b : "");
	strbuf key = STRBUF_INIT;
	strbuf_puts(&key, build);
	strbuf_putc(&key, '\n');
	strbuf_append(&key, norm->buf, norm->len);
	cache_value v;
	if (!key.oom && cache_get(s->cache, key.buf, key.len, &v) == 0) {
		live_release(s->index, e);
		rp->status = v.status;
		rp->body = rp->owned = v.body;
		rp->len = v.len;
		rp->type = JSON_TYPE;
		rq->count = v.count;
	} else {
		/* computed only for a client still there, and for a client that sent expensive
		 * requests lately, one at a time (fair.h) */
		fair_client k;
		fair_client_of(c, &k);
		if (fair_client_gone(c)) {
			live_release(s->index, e);
			strbuf_free(&key);
			rp->abandon = true;
			return;
		}
		if (!fair_enter(&k)) {
			live_release(s->index, e);
			strbuf_free(&key);
			reply_error(rp, 429, "too_many_requests",
				    "this client's expensive requests are answered one at a time: retry "
				    "after %s s", FAIR_RETRY_AFTER);
			rp->retry_after = FAIR_RETRY_AFTER;
			return;
		}
		long count = -1;
		fn(e, args, rp, &count);
		live_release(s->index, e);
		fair_leave(&k, rp->heavy);
		rq->count = count;
		if ((rp->status == 200 || rp->status == 404) && rp->owned && !key.oom) {
			cache_value nv = { rp->status, count, rp->owned, rp->len };
			cache_put(s->cache, key.buf, key.len, &nv);
		}
	}
	strbuf_free(&key);
	if (rp->status != 200)
		return;
	snprintf(rp->etag, sizeof(rp->etag), "W/\"%s-%016llx\"", build,
		 (unsigned long long)cache_hash(norm->buf, norm->len));
	rp->cache_control = API_CACHE_CONTROL;
	if (if_none_match(c, rp->etag))
		reply_not_modified(rp);
}

/* answer_fn of /api/search; args is an atlas_search_params. */
static void answer_search(atlas_engine *e, const void *args, reply *rp, long *count)
{
	atlas_results r;
	atlas_error err = { 0, "" };
	int rc = atlas_search(&r, e, args, &err);
	if (rc == ATLAS_EINVAL) {
		reply_error(rp, 400, "bad_parameter", "%s", err.msg);
		return;
	}
	if (rc) {
		fprintf(stderr, "atlas-serve: search failed: %s\n", err.msg);
		reply_error(rp, 500, "internal", "the index could not answer this query");
		return;
	}
	*count = r.total;
	rp->heavy = r.partial;
	reply_json(rp, 200, atlas_json_search(e, &r));
	atlas_results_free(&r);
}

/* answer_fn of /api/suggest; args is the prefix. */
static void answer_suggest(atlas_engine *e, const void *args, reply *rp, long *count)
{
	atlas_suggestion sugg[10];
	int n = atlas_suggest(sugg, 10, e, args);
	*count = n;
	reply_json(rp, 200, atlas_json_suggest(e, args, sugg, n));
}

/* answer_fn of /api/next; args is an atlas_next_params. */
static void answer_next(atlas_engine *e, const void *args, reply *rp, long *count)
{
	atlas_next_results r;
	atlas_error err = { 0, "" };
	int rc = atlas_next(&r, e, args, &err);
	if (rc == ATLAS_ENOTFOUND) {
		reply_error(rp, 404, "not_found", "%s", err.msg);
		return;
	}
	if (rc) {
		fprintf(stderr, "atlas-serve: read next failed: %s\n", err.msg);
		reply_error(rp, 500, "internal", "the index could not answer this request");
		return;
	}
	*count = r.nitems;
	reply_json(rp, 200, atlas_json_next(e, &r));
	atlas_next_results_free(&r);
}

/* Returns whether type is one of the page types the engine filters by. */
static bool known_type(const char *type)
{
	return strcmp(type, "explainer") == 0 || strcmp(type, "guide") == 0 ||
	       strcmp(type, "topic") == 0 || strcmp(type, "page") == 0;
}

/* GET /api/search?q=&limit=&offset=&type=&topic= */
static void api_search(server *s, struct MHD_Connection *c, request *rq, reply *rp)
{
	char q[SERVE_QUERY_MAX + 1], type[16], topic[SERVE_QUERY_MAX + 1];
	atlas_search_params p = { q, 10, 0, NULL, NULL, false };
	if (arg_text(c, "q", q, sizeof(q))) {
		reply_error(rp, 400, TOO_LONG, "q is longer than %d bytes", SERVE_QUERY_MAX);
		return;
	}
	normalize_query(q);
	if (arg_int(c, "limit", 1, ATLAS_LIMIT_MAX, &p.limit)) {
		reply_error(rp, 400, BAD, "limit must be a number from 1 to %d", ATLAS_LIMIT_MAX);
		return;
	}
	if (arg_int(c, "offset", 0, ATLAS_OFFSET_MAX, &p.offset)) {
		reply_error(rp, 400, BAD, "offset must be a number from 0 to %d", ATLAS_OFFSET_MAX);
		return;
	}
	if (arg_text(c, "type", type, sizeof(type)) || (type[0] && !known_type(type))) {
		reply_error(rp, 400, BAD, "type must be explainer, guide, topic or page");
		return;
	}
	if (arg_text(c, "topic", topic, sizeof(topic))) {
		reply_error(rp, 400, BAD, "topic is longer than %d bytes", SERVE_QUERY_MAX);
		return;
	}
	p.type = type[0] ? type : NULL;
	p.topic = topic[0] ? topic : NULL;
	strbuf norm = STRBUF_INIT;
	strbuf_printf(&norm, "/api/search?limit=%d&offset=%d&q=", p.limit, p.offset);
	put_pct(&norm, q);
	strbuf_puts(&norm, "&topic=");
	put_pct(&norm, topic);
	strbuf_puts(&norm, "&type=");
	put_pct(&norm, type);
	api_answer(s, c, rq, rp, &norm, answer_search, &p);
	strbuf_free(&norm);
}

/* GET /api/suggest?q= */
static void api_suggest(server *s, struct MHD_Connection *c, request *rq, reply *rp)
{
	char q[SERVE_QUERY_MAX + 1];
	if (arg_text(c, "q", q, sizeof(q))) {
		reply_error(rp, 400, TOO_LONG, "q is longer than %d bytes", SERVE_QUERY_MAX);
		return;
	}
	normalize_query(q);
	strbuf norm = STRBUF_INIT;
	strbuf_puts(&norm, "/api/suggest?q=");
	put_pct(&norm, q);
	api_answer(s, c, rq, rp, &norm, answer_suggest, q);
	strbuf_free(&norm);
}

/* GET /api/next?path=&guide=&seen=&limit= (seen: comma-separated paths) */
static void api_next(server *s, struct MHD_Connection *c, request *rq, reply *rp)
{
	char path[SERVE_PARAM_MAX + 1], guide[SERVE_PARAM_MAX + 1], seen[SERVE_SEEN_MAX + 1];
	const char *list[ATLAS_SEEN_MAX];
	atlas_next_params p = { path, NULL, list, 0, 5 };
	if (arg_text(c, "path", path, sizeof(path)) || arg_text(c, "guide", guide, sizeof(guide))) {
		reply_error(rp, 400, BAD, "path and guide must be at most %d bytes",
			    SERVE_PARAM_MAX);
		return;
	}
	if (!path[0]) {
		reply_error(rp, 400, BAD, "path is required: the page to suggest reading after");
		return;
	}
	if (arg_text(c, "seen", seen, sizeof(seen))) {
		reply_error(rp, 400, BAD, "seen must be at most %d bytes", SERVE_SEEN_MAX);
		return;
	}
	if (arg_int(c, "limit", 1, ATLAS_LIMIT_MAX, &p.limit)) {
		reply_error(rp, 400, BAD, "limit must be a number from 1 to %d", ATLAS_LIMIT_MAX);
		return;
	}
	p.guide = guide[0] ? guide : NULL;
	strbuf norm = STRBUF_INIT;
	strbuf_puts(&norm, "/api/next?guide=");
	put_pct(&norm, guide);
	strbuf_printf(&norm, "&limit=%d&path=", p.limit);
	put_pct(&norm, path);
	strbuf_puts(&norm, "&seen=");
	char *save = NULL;
	for (char *tok = strtok_r(seen, ",", &save); tok && p.nseen < ATLAS_SEEN_MAX;
	     tok = strtok_r(NULL, ",", &save)) {
		if (p.nseen)
			strbuf_putc(&norm, ',');
		put_pct(&norm, tok);
		list[p.nseen++] = tok;
	}
	api_answer(s, c, rq, rp, &norm, answer_next, &p);
	strbuf_free(&norm);
}

/* GET /healthz: the served index and the server's state, never cached. */
static void healthz(server *s, reply *rp)
{
	live_info info;
	live_info_get(s->index, &info);
	long long age = (long long)time(NULL) - info.built_at_unix;
	bool stale = s->cfg->max_index_age > 0 && age > s->cfg->max_index_age;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", stale ? "stale" : "ok");
	cJSON_AddNumberToObject(o, "pages", info.pages);
	cJSON_AddStringToObject(o, "build_id", info.build_id);
	cJSON_AddStringToObject(o, "built_at", info.built_at);
	cJSON_AddNumberToObject(o, "schema_version", info.schema_version);
	cJSON_AddNumberToObject(o, "index_age_s", (double)age);
	cJSON_AddNumberToObject(o, "uptime_s", (double)(long long)(serve_now() - s->started));
	cJSON_AddNumberToObject(o, "max_index_age_s", (double)s->cfg->max_index_age);
	cJSON_AddNumberToObject(o, "generation", (double)info.generation);
	cJSON_AddNumberToObject(o, "swaps", (double)info.swaps);
	cJSON_AddNumberToObject(o, "swaps_refused", (double)info.refused);
	if (info.last_swap_error[0])
		cJSON_AddStringToObject(o, "last_swap_error", info.last_swap_error);
	else
		cJSON_AddNullToObject(o, "last_swap_error");
	char *text = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	reply_json(rp, 200, text);
}

/* GET /metrics: Prometheus text. */
static void metrics_page(server *s, reply *rp)
{
	live_info info;
	cache_stats cs;
	live_info_get(s->index, &info);
	cache_get_stats(s->cache, &cs);
	metrics_gauges g = {
		.generation = info.generation,
		.swaps = info.swaps,
		.swaps_refused = info.refused,
		.index_age_s = (double)((long long)time(NULL) - info.built_at_unix),
		.uptime_s = serve_now() - s->started,
		.inflight = atomic_load(&s->inflight),
		.cache_entries = cs.entries,
		.cache_capacity = cs.capacity,
		.cache_hits = cs.hits,
		.cache_misses = cs.misses,
		.cache_evictions = cs.evictions,
		.cache_bytes = cs.bytes,
		.warm_misses = info.warm_misses,
		.cache_max_bytes = cs.max_bytes,
	};
	strbuf out = STRBUF_INIT;
	if (metrics_render(s->metrics, &g, &out)) {
		strbuf_free(&out);
		reply_json(rp, 500, NULL);
		return;
	}
	rp->status = 200;
	rp->len = out.len;
	rp->body = rp->owned = strbuf_detach(&out);
	rp->type = METRICS_TYPE;
}

/* GET / and the page's files: the embedded bytes, with a strong ETag and, on the page, the CSP. */
static void asset(struct MHD_Connection *c, const atlas_asset *a, reply *rp)
{
	rp->status = 200;
	rp->body = (const char *)a->data;
	rp->len = a->len;
	rp->type = a->type;
	snprintf(rp->etag, sizeof(rp->etag), "%s", a->etag);
	bool html = strncmp(a->type, "text/html", 9) == 0;
	rp->cache_control = html ? "no-cache" : "public, max-age=300";
	if (html)
		rp->csp = PAGE_CSP;
	if (if_none_match(c, rp->etag))
		reply_not_modified(rp);
}

/* Answers a request whose body (if any) was read: checks the method, routes, and queues the
 * response. Returns MHD's answer. */
static enum MHD_Result dispatch(server *s, struct MHD_Connection *c, request *rq,
			       const char *method)
{
	reply rp;
	memset(&rp, 0, sizeof(rp));
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
		   strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	bool options = strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0;
	if (!get && !options) {
		reply_error(&rp, 405, "method_not_allowed",
			    "method %s is not allowed: use GET, HEAD or OPTIONS", rq->method);
		rp.allow = true;
	} else if (rq->route == ROUTE_UNMATCHED) {
		reply_error(&rp, 404, "not_found", "no such page or endpoint: %s", rq->path);
	} else if (options) {
		rp.status = 204;
		rp.allow = true;
		rp.preflight = true;
		rp.cache_control = "max-age=600";
	} else {
		switch (rq->route) {
		case ROUTE_SEARCH: api_search(s, c, rq, &rp); break;
		case ROUTE_SUGGEST: api_suggest(s, c, rq, &rp); break;
		case ROUTE_NEXT: api_next(s, c, rq, &rp); break;
		case ROUTE_HEALTHZ: healthz(s, &rp); break;
		case ROUTE_METRICS: metrics_page(s, &rp); break;
		default: asset(c, rq->asset, &rp); break;
		}
	}
	if (rp.abandon)
		return MHD_NO;
	return send_reply(s, c, rq, &rp);
}

/* The access handler. The first call of a request only records it in *con_cls (responding there
 * would defeat keep-alive); upload data is read and dropped; the final call answers. Returns MHD_NO
 * (closing the connection) only when out of memory. */
enum MHD_Result serve_request(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	server *s = cls;
	request *rq = *con_cls;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		rq->t0 = serve_now();
		rq->count = -1;
		rq->route = route_of(url, &rq->asset);
		printable_copy(rq->method, sizeof(rq->method), method);
		printable_copy(rq->path, sizeof(rq->path), url);
		atomic_fetch_add(&s->inflight, 1);
		*con_cls = rq;
		const char *why;
		framing_verdict v = framing_take(c, &why);
		if (v != FRAMING_OK) {
			/* answered at once, before any body is read, and the connection closed */
			reply rp;
			memset(&rp, 0, sizeof(rp));
			if (v == FRAMING_UNSUPPORTED)
				reply_error(&rp, 501, "not_implemented", "%s", why);
			else
				reply_error(&rp, 400, "bad_request", "%s", why);
			rp.close = true;
			return send_reply(s, c, rq, &rp);
		}
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	return dispatch(s, c, rq, method);
}

/* Writes the access log line of rq: ISO time, method, route, status, latency, result count. */
static void log_request(server *s, const request *rq, double seconds)
{
	struct timespec ts;
	struct tm tm;
	char line[512];
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	int k = snprintf(line + n, sizeof(line) - n, ".%03ldZ %s %s ", ts.tv_nsec / 1000000,
			 rq->method, rq->path);
	n += k > 0 ? (size_t)k : 0;
	if (rq->status)
		k = snprintf(line + n, sizeof(line) - n, "%d %.3fms", rq->status, seconds * 1e3);
	else
		k = snprintf(line + n, sizeof(line) - n, "- %.3fms aborted", seconds * 1e3);
	n += k > 0 ? (size_t)k : 0;
	if (rq->count >= 0 && n < sizeof(line)) {
		k = snprintf(line + n, sizeof(line) - n, " results=%ld", rq->count);
		n += k > 0 ? (size_t)k : 0;
	}
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	fwrite(line, 1, n, s->log);
}

/* The completion callback: counts the request in the metrics, logs it and frees it. */
void serve_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		     enum MHD_RequestTerminationCode toe)
{
	server *s = cls;
	request *rq = *con_cls;
	if (!rq)
		return;
	*con_cls = NULL;
	double seconds = serve_now() - rq->t0;
	if (rq->status)
		metrics_observe(s->metrics, rq->route, rq->status, seconds);
	log_request(s, rq, seconds);
	atomic_fetch_sub(&s->inflight, 1);
	free(rq);
}
