/* api.h - what the routes of atlas-serve share: a request, a reply being put together, the
 * cached answers of /api/search and /api/next, for handler.c, batch.c and meili.c. */
#ifndef ATLAS_API_H
#define ATLAS_API_H

#include <stdbool.h>
#include <stddef.h>

#include "assets.h"
#include "engine.h"
#include "pool.h"
#include "server.h"
#include "strbuf.h"

#define JSON_TYPE "application/json; charset=utf-8"
#define SERVE_BODY_MAX (64 * 1024) /* largest request body read (POST routes), in bytes */

/* What a search's stop hook (atlas_search_more.stop) watches: the client's connection and the
 * request's deadline; what it saw, and the engine's work counters of the search. */
typedef struct search_watch {
	struct MHD_Connection *c;    /* NULL: no client to watch */
	double deadline;             /* serve_now() seconds past which the search stops; 0: none */
	bool gone;                   /* the client had closed its side: the search was stopped */
	bool late;                   /* the deadline passed: the search was stopped */
	bool computed;               /* the engine ran (work holds its counters) */
	atlas_work work;
} search_watch;

/* The stop hook of searches (ctx: a search_watch): true once the client has gone or the
 * deadline passed, recorded in the watch. */
bool serve_stop(void *ctx);

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
	const char *methods;         /* the route's methods for Allow, NULL for GET, HEAD, OPTIONS */
	bool negotiated;             /* the body's encoding follows Accept-Encoding (adds Vary) */
	const char *encoding;        /* Content-Encoding of the body, NULL for identity */
	const char *www_authenticate; /* WWW-Authenticate of a 401, NULL for none */
	bool close;                  /* add Connection: close (a refused framing) */
	const char *retry_after;     /* Retry-After (a 429), NULL for none */
	bool heavy;                  /* the work budget cut the answer (fair.h) */
	bool abandon;                /* the client has gone: close without an answer */
	bool no_store;               /* not for the response cache (a deadline cut it) */
} reply;

/* One request, from the handler's first call to the completion callback (MHD's *con_cls). */
typedef struct request {
	pool_job job;                /* its place in the search workers' queue */
	struct MHD_Connection *conn; /* the connection, suspended while a worker answers */
	const char *method_arg;      /* the method as MHD gave it (owned by MHD) */
	bool queued;                 /* handed to the search workers; rp holds their answer */
	reply rp;                    /* the answer a worker put together */
	search_watch watch;          /* its search's stop hook state */
	double t0;                   /* serve_now() at the first call */
	double taken;                /* serve_now() when a search worker took it; 0 until then */
	int route;                   /* ROUTE_* */
	int status;                  /* 0 until a response is queued */
	long count;                  /* results in the answer, -1 when not known */
	const atlas_asset *asset;    /* for ROUTE_PAGE and ROUTE_ASSET */
	char method[16];             /* printable copies for the access log */
	char path[160];
	const char *url;             /* the request target, owned by MHD */
	strbuf body;                 /* the request body of a POST route, at most SERVE_BODY_MAX */
	bool body_too_large;         /* more was sent than SERVE_BODY_MAX (the rest dropped) */
} request;

/* Makes json (malloc'd, may be NULL when serialization ran out of memory; taken over) the body
 * of rp with status, a newline appended. Falls back to a static 500. */
void reply_json(reply *rp, int status, char *json);

/* Makes rp the JSON error {"error":{"code","message"}} with status and a printf-style message. */
void reply_error(reply *rp, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Computes an API answer with engine e into rp (status and body); sets *count when known. */
typedef void (*answer_fn)(atlas_engine *e, const void *args, reply *rp, long *count);

/* Answers the API request whose normalized form is norm into rp: from the cache when it holds the
 * answer for the served build, else with fn on this thread's engine (then cached). An answer to
 * compute is not computed when the client of connection c has gone (rp->abandon) or when it is
 * one of a client's expensive requests beyond those fair.h lets through (a 429). Sets *count
 * (results, -1 when not known) and build (the served build id). Never fails: errors are replies. */
void api_compute(server *s, struct MHD_Connection *c, const strbuf *norm, answer_fn fn, const void *args, reply *rp, long *count,
		 char build[64]);

/* The answer_fns of /api/search (args: a search_request of params.h) and /api/next (args: an
 * atlas_next_params, whose paths atlas_next resolves: atlas_engine_resolve). */
void answer_search(atlas_engine *e, const void *args, reply *rp, long *count);
void answer_next(atlas_engine *e, const void *args, reply *rp, long *count);

/* POST /api/batch (batch.c): the body of rq holds the requests; c is the client's connection. */
void api_batch(server *s, struct MHD_Connection *c, request *rq, reply *rp);

/* The Meilisearch-compatible routes (meili.c). meili_route returns whether url is one of them;
 * meili_answer answers rq (method, headers of c, body) into rp. */
bool meili_route(const server *s, const char *url);
void meili_answer(server *s, struct MHD_Connection *c, request *rq, const char *method, reply *rp);

#endif
