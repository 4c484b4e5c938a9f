/* handler.c - routing and answers of atlas-serve: the JSON API, health, metrics, the page. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "api.h"
#include "assets.h"
#include "encode.h"
#include "fair.h"
#include "health.h"
#include "framing.h"
#include "json.h"
#include "params.h"
#include "utf8.h"
#include "server.h"
#include "strbuf.h"
#include "track.h"

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

static const struct {
	const char *path;
	int route;
} api_routes[] = {
	{ "/api/search", ROUTE_SEARCH },
	{ "/api/suggest", ROUTE_SUGGEST },
	{ "/api/next", ROUTE_NEXT },
	{ "/api/batch", ROUTE_BATCH },
	{ "/api/click", ROUTE_CLICK },
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

bool serve_stop(void *ctx)
{
	search_watch *w = ctx;
	if (w->deadline > 0 && serve_now() > w->deadline)
		w->late = true;
	else if (w->c && fair_client_gone(w->c))
		w->gone = true;
	return w->late || w->gone;
}

/* Empties the response cache after an index swap. Never fails. */
void serve_on_swap(void *cls)
{
	server *s = cls;
	cache_clear(s->cache);
}

/* Returns the ROUTE_* of url (origin form "/path", or absolute form "http://host/path"), with
 * *asset set for the page and its files. */
static int route_of(const server *s, const char *url, const atlas_asset **asset)
{
	*asset = NULL;
	if (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0) {
		const char *path = strchr(strstr(url, "//") + 2, '/');
		url = path ? path : "/";
	}
	for (size_t i = 0; i < sizeof(api_routes) / sizeof(api_routes[0]); i++)
		if (strcmp(url, api_routes[i].path) == 0)
			return api_routes[i].route;
	if (meili_route(s, url))
		return ROUTE_MEILI;
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

/* Makes json (malloc'd, may be NULL when serialization ran out of memory; taken over) the body
 * of rp with status, a newline appended as atlas-query --json prints it. Falls back to a static
 * 500. */
void reply_json(reply *rp, int status, char *json)
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
void reply_error(reply *rp, int status, const char *code, const char *fmt, ...)
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
		ok = ok && MHD_add_response_header(r, "Access-Control-Allow-Methods",
						   rp->methods ? rp->methods : METHODS);
		ok = ok && MHD_add_response_header(r, "Access-Control-Allow-Headers",
						   "Accept, Authorization, Content-Type, If-None-Match, "
						   "X-Meilisearch-Client");
		ok = ok && MHD_add_response_header(r, "Access-Control-Max-Age", "600");
	} else {
		ok = ok && MHD_add_response_header(r, "Access-Control-Expose-Headers", "ETag");
	}
	return ok;
}

_Thread_local bool serve_abandoned;

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
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW,
						   rp->methods ? rp->methods : METHODS);
	if (rp->negotiated)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	if (rp->encoding)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, rp->encoding);
	if (rp->www_authenticate)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
						   rp->www_authenticate);
	if (rp->retry_after)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, rp->retry_after);
	ok = ok && add_cors(s, c, r, rp);
	if (atomic_load(&s->closing) || rp->close)
		ok = ok && MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ret = ok ? MHD_queue_response(c, (unsigned int)rp->status, r) : MHD_NO;
	MHD_destroy_response(r);
	if (ret == MHD_YES)
		rq->status = rp->status;
	else if (ok)
		serve_abandoned = true; /* MHD takes no answer on a connection its client has closed */
	return ret;
}

/* Returns the encoding the request's Accept-Encoding asks for (ENC_*). */
static int wanted_encoding(struct MHD_Connection *c)
{
	return encode_choose(
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
}

/* Compresses rp's body with enc when it is long enough to gain from it, and marks it negotiated
 * (Vary: Accept-Encoding). Leaves the body as it is when compression fails. */
static void encode_reply(reply *rp, int enc)
{
	rp->negotiated = true;
	if (enc == ENC_IDENTITY || rp->len < ENCODE_MIN_BYTES || !rp->body)
		return;
	char *out;
	size_t n;
	if (encode_body(enc, rp->body, rp->len, &out, &n))
		return;
	free(rp->owned);
	rp->body = rp->owned = out;
	rp->len = n;
	rp->encoding = encode_name(enc);
}

void api_compute(server *s, struct MHD_Connection *c, const strbuf *norm, answer_fn fn, const void *args, reply *rp, long *count,
		 char build[64])
{
	build[0] = '\0';
	*count = -1;
	if (norm->oom) {
		reply_json(rp, 500, NULL);
		return;
	}
	atlas_engine *e = live_acquire(s->index);
	const char *b = atlas_engine_meta(e, ATLAS_META_BUILD_ID);
	snprintf(build, 64, "%s", b ? b : "");
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
		*count = v.count;
	} else {
		/* computed only for a client still there, and for a client that sent expensive
		 * requests lately, one at a time (fair.h) */
		fair_client k;
		memset(&k, 0, sizeof(k));
		if (c)
			fair_client_of(c, &k);
		if (c && fair_client_gone(c)) {
			live_release(s->index, e);
			strbuf_free(&key);
			rp->abandon = true;
			return;
		}
		if (c && !fair_enter(&k)) {
			live_release(s->index, e);
			strbuf_free(&key);
			reply_error(rp, 429, "too_many_requests",
				    "this client's expensive requests are answered one at a time: retry "
				    "after %s s", FAIR_RETRY_AFTER);
			rp->retry_after = FAIR_RETRY_AFTER;
			return;
		}
		double t0 = serve_now();
		fn(e, args, rp, count);
		live_release(s->index, e);
		if (c)
			fair_leave(&k, rp->heavy, serve_now() - t0);
		if ((rp->status == 200 || rp->status == 404) && rp->owned && !key.oom && !rp->no_store) {
			cache_value nv = { rp->status, *count, rp->owned, rp->len };
			cache_put(s->cache, key.buf, key.len, &nv);
		}
	}
	strbuf_free(&key);
}

/* Answers an API request whose normalized form (route + sorted parameters) is norm: api_compute,
 * in the encoding Accept-Encoding asks for (compressed once per cached body: the compressed body
 * is cached beside the plain one). A 200 gets a weak ETag of the build id and norm, the same in
 * every encoding, and becomes a 304 when If-None-Match names it. */
static void api_answer(server *s, struct MHD_Connection *c, request *rq, reply *rp,
		       const strbuf *norm, answer_fn fn, const void *args)
{
	char build[64];
	int enc = wanted_encoding(c);
	strbuf ekey = STRBUF_INIT;
	cache_value v;
	if (enc != ENC_IDENTITY && !norm->oom) {
		/* the compressed body under the plain one's key and the encoding */
		live_info li;
		live_info_get(s->index, &li);
		snprintf(build, sizeof(build), "%s", li.build_id);
		strbuf_printf(&ekey, "%s\n%s\n", build, encode_name(enc));
		strbuf_append(&ekey, norm->buf, norm->len);
		if (!ekey.oom && cache_get(s->cache, ekey.buf, ekey.len, &v) == 0) {
			rp->status = v.status;
			rp->body = rp->owned = v.body;
			rp->len = v.len;
			rp->type = JSON_TYPE;
			rp->encoding = encode_name(enc);
			rp->negotiated = true;
			rq->count = v.count;
			strbuf_free(&ekey);
			goto tag;
		}
	}
	api_compute(s, c, norm, fn, args, rp, &rq->count, build);
	encode_reply(rp, enc);
	if (rp->encoding && (rp->status == 200 || rp->status == 404) && !ekey.oom && ekey.len &&
	    !rp->no_store) {
		cache_value nv = { rp->status, rq->count, rp->owned, rp->len };
		cache_put(s->cache, ekey.buf, ekey.len, &nv);
	}
	strbuf_free(&ekey);
tag:
	if (rp->status != 200)
		return;
	snprintf(rp->etag, sizeof(rp->etag), "W/\"%s-%016llx\"", build,
		 (unsigned long long)cache_hash(norm->buf, norm->len));
	rp->cache_control = API_CACHE_CONTROL;
	if (if_none_match(c, rp->etag))
		reply_not_modified(rp);
}

/* answer_fn of /api/search; args is a search_request. */
void answer_search(atlas_engine *e, const void *args, reply *rp, long *count)
{
	const search_request *sr = args;
	atlas_results r;
	atlas_error err = { 0, "" };
	int rc = atlas_search_with(&r, e, &sr->p, &sr->more, &err);
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
	search_watch *w = sr->more.stop ? sr->more.stop_ctx : NULL;
	/* expensive: cut by the work budget; a deadline passed under load is not the client's doing */
	rp->heavy = r.partial && !(w && w->late);
	if (w) {
		w->computed = true;
		w->work = r.work;
		rp->no_store = w->late || w->gone;
		if (w->gone) {
			/* stopped because no one is left to read the answer */
			rp->abandon = true;
			atlas_results_free(&r);
			return;
		}
	}
	reply_json(rp, 200, track_answer(e, sr, &r, atlas_json_search(e, &r)));
	atlas_results_free(&r);
}

/* What /api/suggest asks the engine. */
typedef struct suggest_args {
	const char *q;
	int limit;
} suggest_args;

/* answer_fn of /api/suggest; args is a suggest_args. */
static void answer_suggest(atlas_engine *e, const void *args, reply *rp, long *count)
{
	const suggest_args *a = args;
	atlas_suggestion *sugg = malloc(ATLAS_SUGGEST_MAX * sizeof(*sugg));
	if (!sugg) {
		reply_json(rp, 500, NULL);
		return;
	}
	int n = atlas_suggest(sugg, a->limit, e, a->q);
	*count = n;
	reply_json(rp, 200, atlas_json_suggest(e, a->q, sugg, n));
	free(sugg);
}

/* answer_fn of /api/next; args is an atlas_next_params (atlas_next resolves its paths). */
void answer_next(atlas_engine *e, const void *args, reply *rp, long *count)
{
	atlas_next_params p = *(const atlas_next_params *)args;
	atlas_next_results r;
	atlas_error err = { 0, "" };
	int rc = atlas_next(&r, e, &p, &err);
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

/* Makes rp the 400 of pe. */
static void reply_param_error(reply *rp, const param_error *pe)
{
	reply_error(rp, pe->status, pe->code, "%s", pe->msg);
}

/* GET /api/search?q=&limit=&offset=&page=&hitsPerPage=&type=&topic=&sort=&correct= */
static void api_search(server *s, struct MHD_Connection *c, request *rq, reply *rp)
{
	params ps;
	search_request sr;
	param_error pe;
	params_from_connection(&ps, c);
	if (search_request_parse(&sr, &ps, &pe)) {
		reply_param_error(rp, &pe);
	} else {
		rq->watch.c = c;
		rq->watch.deadline = s->cfg->deadline_ms > 0 ? rq->t0 + s->cfg->deadline_ms / 1e3 : 0;
		sr.more.stop = serve_stop;
		sr.more.stop_ctx = &rq->watch;
		api_answer(s, c, rq, rp, &sr.norm, answer_search, &sr);
		track_search(s, &sr, rq, rp);
	}
	search_request_free(&sr);
}

/* GET /api/suggest?q=&limit= */
static void api_suggest(server *s, struct MHD_Connection *c, request *rq, reply *rp)
{
	static const char *const names[] = { "q", "limit", NULL };
	char q[SERVE_QUERY_MAX + 1];
	suggest_args a = { q, 10 };
	params ps;
	param_error pe;
	params_from_connection(&ps, c);
	if (params_check(&ps, "/api/suggest", names, &pe)) {
		reply_param_error(rp, &pe);
		return;
	}
	if (arg_text(c, "q", q, sizeof(q))) {
		reply_error(rp, 400, TOO_LONG, "q is longer than %d bytes", SERVE_QUERY_MAX);
		return;
	}
	params_normalize_query(q);
	if (params_int(&ps, "limit", 1, ATLAS_SUGGEST_MAX, &a.limit)) {
		reply_error(rp, 400, BAD, "limit must be a number from 1 to %d", ATLAS_SUGGEST_MAX);
		return;
	}
	strbuf norm = STRBUF_INIT;
	strbuf_printf(&norm, "/api/suggest?limit=%d&q=", a.limit);
	put_pct(&norm, q);
	api_answer(s, c, rq, rp, &norm, answer_suggest, &a);
	strbuf_free(&norm);
}

/* GET /api/next?path=&guide=&seen=&limit= (seen: comma-separated paths) */
static void api_next(server *s, struct MHD_Connection *c, request *rq, reply *rp)
{
	params ps;
	next_request nr;
	param_error pe;
	params_from_connection(&ps, c);
	if (next_request_parse(&nr, &ps, &pe))
		reply_param_error(rp, &pe);
	else
		api_answer(s, c, rq, rp, &nr.norm, answer_next, &nr.p);
	next_request_free(&nr);
}

/* GET /healthz: the served index and the server's state, never cached. */
static void healthz(server *s, reply *rp)
{
	live_info info;
	live_info_get(s->index, &info);
	long long age = (long long)time(NULL) - info.built_at_unix;
	bool stale = s->cfg->max_index_age > 0 && age > s->cfg->max_index_age;
	reindex_status rs;
	health_reindex(s->cfg->index, &rs);
	int kept = health_kept_pages(s);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", stale ? "stale" : kept || rs.failed ? "degraded" : "ok");
	cJSON_AddNumberToObject(o, "kept_pages", kept);
	if (rs.failed)
		cJSON_AddStringToObject(o, "last_reindex_error", rs.error);
	else
		cJSON_AddNullToObject(o, "last_reindex_error");
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
		.zero_results = atomic_load(&s->zero_results),
		.kept_pages = health_kept_pages(s),
	};
	reindex_status rs;
	health_reindex(s->cfg->index, &rs);
	g.reindex_known = rs.known;
	g.reindex_failed = rs.failed;
	g.reindex_at = rs.at;
	strbuf out = STRBUF_INIT;
	if (metrics_render(s->metrics, &g, &out) || analytics_render_metrics(s->analytics, &out)) {
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

/* Returns whether the request rq (method) is answered with the engine, by a search worker. */
static bool needs_engine(const request *rq, const char *method)
{
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
		   strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	switch (rq->route) {
	case ROUTE_SEARCH:
	case ROUTE_SUGGEST:
	case ROUTE_NEXT: return get;
	case ROUTE_BATCH: return strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	case ROUTE_MEILI: return strcmp(method, MHD_HTTP_METHOD_OPTIONS) != 0;
	default: return false;
	}
}

/* Puts together the answer of a request whose body (if any) was read into *out: checks the
 * method and routes. Never fails: errors are replies. */
static void compute_reply(server *s, struct MHD_Connection *c, request *rq, const char *method,
			  reply *out)
{
	reply rp;
	memset(&rp, 0, sizeof(rp));
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
		   strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	bool options = strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0;
	bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	if (rq->route == ROUTE_MEILI || rq->route == ROUTE_BATCH || rq->route == ROUTE_CLICK)
		rp.methods = rq->route == ROUTE_MEILI ? "GET, HEAD, POST, OPTIONS" : "POST, OPTIONS";
	if (rq->route == ROUTE_MEILI && !options) {
		meili_answer(s, c, rq, method, &rp);
		encode_reply(&rp, wanted_encoding(c));
	} else if ((rq->route == ROUTE_BATCH || rq->route == ROUTE_CLICK) && !options) {
		if (post && rq->route == ROUTE_CLICK) {
			track_click(s, rq, &rp);
		} else if (post) {
			api_batch(s, c, rq, &rp);
			encode_reply(&rp, wanted_encoding(c));
		} else {
			reply_error(&rp, 405, "method_not_allowed",
				    "method %s is not allowed on %s: use POST", rq->method,
				    metrics_route_name(rq->route));
			rp.allow = true;
		}
	} else if (!get && !options) {
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
	*out = rp;
}

void serve_work(pool_job *job, void *cls)
{
	server *s = cls;
	request *rq = (request *)((char *)job - offsetof(request, job));
	rq->taken = serve_now();
	compute_reply(s, rq->conn, rq, rq->method_arg, &rq->rp);
	MHD_resume_connection(rq->conn);
}

/* Answers a request whose body (if any) was read: an engine request is handed to the search
 * workers (its connection suspended until one has answered, so that this thread serves its other
 * connections meanwhile), any other answered here. Returns MHD's answer. */
static enum MHD_Result dispatch(server *s, struct MHD_Connection *c, request *rq,
			       const char *method)
{
	if (!rq->queued && needs_engine(rq, method)) {
		rq->conn = c;
		rq->method_arg = method;
		rq->queued = true;
		fair_client k;
		fair_client_of(c, &k);
		snprintf(rq->job.key, sizeof(rq->job.key), "%s", k.key);
		/* suspended first: the worker resumes it once the answer is in rq->rp */
		MHD_suspend_connection(c);
		pool_submit(s->workers, &rq->job);
		return MHD_YES;
	}
	reply rp;
	if (rq->queued)
		rp = rq->rp;
	else
		compute_reply(s, c, rq, method, &rp);
	memset(&rq->rp, 0, sizeof(rq->rp));
	if (rp.abandon) {
		free(rp.owned);
		serve_abandoned = true;
		return MHD_NO;
	}
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
	serve_abandoned = false;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		rq->t0 = serve_now();
		rq->count = -1;
		rq->route = route_of(s, url, &rq->asset);
		rq->url = url;
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
		/* the body of a POST route is kept (up to SERVE_BODY_MAX), any other dropped */
		if (rq->route == ROUTE_BATCH || rq->route == ROUTE_MEILI || rq->route == ROUTE_CLICK) {
			if (rq->body.len + *upload_data_size > SERVE_BODY_MAX)
				rq->body_too_large = true;
			else if (strbuf_append(&rq->body, upload_data, *upload_data_size))
				return MHD_NO;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	return dispatch(s, c, rq, method);
}

/* Writes the access log line of rq: ISO time, method, route, status, latency, the time it waited
 * for a search worker (queued=, when one took it), a search's work counters (postings, candidates,
 * expansions), result count. */
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
		k = snprintf(line + n, sizeof(line) - n, "- %.3fms", seconds * 1e3);
	n += k > 0 ? (size_t)k : 0;
	if (rq->queued && rq->taken > 0 && n < sizeof(line)) {
		k = snprintf(line + n, sizeof(line) - n, " queued=%.3fms", (rq->taken - rq->t0) * 1e3);
		n += k > 0 ? (size_t)k : 0;
	}
	if (!rq->status && n < sizeof(line)) {
		k = snprintf(line + n, sizeof(line) - n, " aborted");
		n += k > 0 ? (size_t)k : 0;
	}
	const search_watch *w = &rq->watch;
	if ((w->computed || !rq->status) && rq->route == ROUTE_SEARCH && n < sizeof(line)) {
		/* the engine's work counters, and why it stopped short when its stop hook did */
		k = snprintf(line + n, sizeof(line) - n, " work=%ld,%ld,%ld%s",
			     w->work.postings, w->work.candidates, w->work.expansions,
			     !w->computed ? " not computed" : w->gone ? " client gone" :
			     w->late ? " deadline" : "");
		n += k > 0 ? (size_t)k : 0;
	}
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
	strbuf_free(&rq->body);
	free(rq);
}
